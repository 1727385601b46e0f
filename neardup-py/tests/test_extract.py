"""`neardup.extract`: a page's main text as a reader sees it, the same as `neardup extract`."""

from __future__ import annotations

import json
import subprocess

import neardup
import pytest

from conftest import page

ARTICLE = (
    "<html><head><title>時刻表</title></head><body><nav><a href='/'>首頁</a></nav><article>"
    "<h1>新的時刻表</h1><p>委員會於週二開會討論新的鐵路時刻表，這將改變沿河谷三個村莊的早班火車時間安排。</p>"
    "<p>委員會表示，新的時刻表將於下個月生效，屆時早班火車將提前十五分鐘發車。</p></article></body></html>"
)


def test_extract_returns_the_text_before_normalization():
    e = neardup.extract(html=ARTICLE)
    assert set(e) == {"title", "heading", "text", "lang"}
    assert e["title"] == "時刻表" and e["heading"] == "新的時刻表"
    # Traditional characters and full-width punctuation kept; the navigation left out.
    assert "委員會於週二開會" in e["text"] and "，" in e["text"] and "首頁" not in e["text"]
    assert e["lang"] == "cmn"
    # Bytes in another encoding are decoded first.
    assert neardup.extract(html=ARTICLE.encode("big5"))["text"] == e["text"]
    assert neardup.extract(text="The committee met on Tuesday to discuss the timetable of the "
                           "morning trains for the three villages along the river.")["lang"] == "eng"


def test_extract_errors_are_typed():
    with pytest.raises(neardup.BinaryPageError):
        neardup.extract(html=bytes(range(9)) * 400)
    with pytest.raises(neardup.InvalidArgumentError):
        neardup.extract()
    with pytest.raises(neardup.PageTooLargeError):
        neardup.extract(html=page(), max_page_bytes=100)


def test_extract_matches_the_command_line(tmp_path, cli):
    pages = tmp_path / "pages.jsonl"
    pages.write_text(
        json.dumps({"id": "a", "html": ARTICLE}, ensure_ascii=False) + "\n"
        + json.dumps({"id": "b", "html": page().decode()}) + "\n",
        encoding="utf-8",
    )
    out = subprocess.run([str(cli), "extract", str(pages)], check=True, capture_output=True)
    rows = [json.loads(line) for line in out.stdout.decode().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    for row, html in zip(rows, [ARTICLE, page()]):
        assert {k: row[k] for k in ("title", "heading", "text", "lang")} == neardup.extract(html=html)
