#!/usr/bin/env python3
"""Main-text extraction bench: neardup against trafilatura on trafilatura's evaluation set.

Issue #35 item 3's measuring stick. The evaluation set is not in this repository and must never
be committed to it: fetch `adbar/trafilatura` and unpack `tests/evaldata.json`, `tests/cache/` and
`tests/eval/` into a scratch directory, e.g.

    G=<bare git dir of adbar/trafilatura>; mkdir -p /work/trafilatura-eval && cd /work/trafilatura-eval
    git --git-dir=$G archive HEAD tests/evaldata.json tests/cache tests/eval | tar x --strip-components=1

Use (stdlib only; trafilatura is measured too when importable, e.g. from a scratch
`pip install --target /work/traf-py trafilatura`):

    PYTHONPATH=/work/traf-py python3 bench/extract_eval.py /work/trafilatura-eval \
        --neardup target/release/neardup --worst 20 [--modes] [--no-trafilatura]

Scoring reproduces trafilatura's `tests/eval_common.py`: per page, a `with` snippet found in the
whitespace-normalized output is a true positive (else a false negative), a `without` snippet found is
a false positive (else a true negative); precision, recall, accuracy and F1 come from the summed
counts. A page whose extraction fails counts as a full miss. The eval data has no language field,
so the per-language table groups pages by neardup's own `lang` output.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict


def norm(text):
    """Collapse whitespace runs to one space, as trafilatura's scorer does."""
    return re.sub(r"\s+", " ", text).strip()


def counts(item, result):
    """(tp, fp, fn, tn) of one page's output against its with/without snippets."""
    if isinstance(result, str):
        res = norm(result)
        tp = sum(norm(w) in res for w in item["with"])
        fp = sum(norm(w) in res for w in item["without"])
    else:
        tp = fp = 0
    return tp, fp, len(item["with"]) - tp, len(item["without"]) - fp


def scores(c):
    """precision, recall, accuracy, F1 of summed (tp, fp, fn, tn) counts (0.0 on empty denominators)."""
    tp, fp, fn, tn = c
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    a = (tp + tn) / (tp + fp + fn + tn) if tp + fp + fn + tn else 0.0
    f = 2 * tp / (2 * tp + fp + fn) if 2 * tp + fp + fn else 0.0
    return p, r, a, f


def add(a, b):
    """Element-wise sum of two count tuples."""
    return tuple(x + y for x, y in zip(a, b))


def read_pages(root):
    """{url: (item, file name, html bytes)} for every evaldata entry whose file exists."""
    with open(os.path.join(root, "evaldata.json"), encoding="utf-8") as f:
        data = json.load(f)
    pages = {}
    for url in sorted(data):
        item = data[url]
        for sub in ("cache", "eval"):
            path = os.path.join(root, sub, item["file"])
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    raw = f.read()
                if raw[:2] == b"\x1f\x8b":
                    raw = gzip.decompress(raw)
                pages[url] = (item, item["file"], raw)
                break
        else:
            print(f"missing file: {item['file']}", file=sys.stderr)
    return pages


def decode(raw):
    """HTML bytes to text: UTF-8, else the declared charset, else cp1252."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    m = re.search(rb"charset=[\"']?([A-Za-z0-9_-]+)", raw[:4096])
    for enc in ([m.group(1).decode()] if m else []) + ["cp1252"]:
        try:
            return raw.decode(enc, errors="replace")
        except LookupError:
            continue
    return raw.decode("latin-1")


def run_neardup(binary, pages, threads):
    """{url: record} of `neardup extract` over all pages at once, and the seconds it took."""
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "pages.jsonl")
        with open(src, "w", encoding="utf-8") as f:
            for url, (_, _, raw) in pages.items():
                f.write(json.dumps({"id": url, "url": url, "html": decode(raw)}) + "\n")
        t0 = time.perf_counter()
        out = subprocess.run([binary, "extract", "--threads", str(threads), src],
                             check=True, capture_output=True, text=True).stdout
        secs = time.perf_counter() - t0
    recs = {}
    for line in out.splitlines():
        rec = json.loads(line)
        if "id" in rec:
            recs[rec["id"]] = rec
    return recs, secs


def run_trafilatura(pages, **kw):
    """{url: text or None} of trafilatura.extract(html, **kw), and the seconds it took."""
    import trafilatura
    res = {}
    t0 = time.perf_counter()
    for url, (_, _, raw) in pages.items():
        try:
            res[url] = trafilatura.extract(raw, **kw)
        except Exception:  # a crash is a full miss, as in trafilatura's scorer
            res[url] = None
    return res, time.perf_counter() - t0


def row(name, c, n, secs):
    """One Markdown table row of a system's scores and speed."""
    p, r, a, f = scores(c)
    return f"| {name} | {p:.3f} | {r:.3f} | {f:.3f} | {a:.3f} | {n} | {secs:.1f} | {n / secs:.1f} |"


def main():
    """Score the systems and print Markdown tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("evaldir", help="directory holding evaldata.json, cache/ and eval/")
    ap.add_argument("--neardup", default="target/release/neardup")
    ap.add_argument("--threads", type=int, default=1, help="neardup threads (1: fair against trafilatura)")
    ap.add_argument("--worst", type=int, default=20, help="list our N worst pages")
    ap.add_argument("--modes", action="store_true", help="also trafilatura favor_precision / favor_recall")
    ap.add_argument("--no-trafilatura", action="store_true")
    args = ap.parse_args()

    pages = read_pages(args.evaldir)
    n = len(pages)
    recs, secs = run_neardup(args.neardup, pages, args.threads)
    ours = {u: (recs[u].get("text") if u in recs and "error" not in recs[u] else None) for u in pages}
    per_page = {u: counts(pages[u][0], ours[u]) for u in pages}
    total = (0, 0, 0, 0)
    for c in per_page.values():
        total = add(total, c)

    systems = [("neardup", total, secs)]
    traf_by_lang = None
    if not args.no_trafilatura:
        try:
            import trafilatura  # noqa: F401
            modes = [("trafilatura", {})]
            if args.modes:
                modes += [("trafilatura precision", {"favor_precision": True}),
                          ("trafilatura recall", {"favor_recall": True})]
            for name, kw in modes:
                res, tsecs = run_trafilatura(pages, **kw)
                tc = (0, 0, 0, 0)
                byl = defaultdict(lambda: (0, 0, 0, 0))
                for u in pages:
                    c = counts(pages[u][0], res[u])
                    tc = add(tc, c)
                    byl[(recs.get(u) or {}).get("lang") or "?"] = add(byl[(recs.get(u) or {}).get("lang") or "?"], c)
                systems.append((name, tc, tsecs))
                if traf_by_lang is None:
                    traf_by_lang = byl
        except ImportError:
            print("trafilatura not importable: measuring neardup only", file=sys.stderr)

    print(f"## Whole set ({n} pages; neardup threads={args.threads})\n")
    print("| system | precision | recall | F1 | accuracy | pages | seconds | pages/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, c, s in systems:
        print(row(name, c, n, s))
    if len(systems) > 1:
        print(f"\nspeed ratio neardup / trafilatura: {systems[1][2] / secs:.1f}x")

    byl = defaultdict(lambda: (0, 0, 0, 0))
    npl = defaultdict(int)
    for u, c in per_page.items():
        lang = (recs.get(u) or {}).get("lang") or "?"
        byl[lang] = add(byl[lang], c)
        npl[lang] += 1
    print("\n## By language (neardup's `lang` output; the eval data has no language field)\n")
    print("| lang | pages | neardup F1 | neardup acc | trafilatura F1 | trafilatura acc |")
    print("|---|---|---|---|---|---|")
    for lang in sorted(npl, key=lambda x: -npl[x]):
        _, _, a, f = scores(byl[lang])
        t = f"{scores(traf_by_lang[lang])[3]:.3f} | {scores(traf_by_lang[lang])[2]:.3f}" if traf_by_lang else "- | -"
        print(f"| {lang} | {npl[lang]} | {f:.3f} | {a:.3f} | {t} |")

    if args.worst:
        print(f"\n## neardup's {args.worst} worst pages (missed `with` + kept `without`)\n")
        worst = sorted(pages, key=lambda u: (-(per_page[u][1] + per_page[u][2]), u))[: args.worst]
        for u in worst:
            item, fname, _ = pages[u]
            res = norm(ours[u]) if ours[u] else ""
            missed = [w for w in item["with"] if norm(w) not in res]
            kept = [w for w in item["without"] if norm(w) in res]
            err = (recs.get(u) or {}).get("error")
            print(f"- {fname} ({u}) lang={(recs.get(u) or {}).get('lang')} chars={len(res)}"
                  + (f" error={err}" if err else ""))
            for w in missed:
                print(f"    missed: {w[:100]!r}")
            for w in kept:
                print(f"    kept:   {w[:100]!r}")


if __name__ == "__main__":
    main()
