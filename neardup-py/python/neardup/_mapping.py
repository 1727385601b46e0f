"""The mapping face of ``neardup.Index``: key → ``PageInfo``.

Iteration streams through the library's key and page cursors a chunk at a time
(``Index._keys_chunk`` / ``_pages_chunk``: each chunk read at one snapshot, resumed after the
last page id seen), so nothing holds the whole index in memory and an iterator left half-way
holds no snapshot and does not keep a closed index open. Like Redis's ``SCAN``, a page held
from the start of an iteration to its end, and not replaced meanwhile, is met exactly once;
a page inserted, replaced or deleted during it may be met or not (a replaced one may be met
twice). Closing the index ends an iteration with ``InvalidArgumentError``.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, ValuesView
from typing import Any, Iterator, Tuple

#: Keys or pages read per chunk.
CHUNK = 1024


def iter_keys(ix: Any, chunk: int = CHUNK) -> Iterator[str]:
    """Every key, in page-id order."""
    first = 0
    while first is not None:
        keys, first = ix._keys_chunk(first, chunk)
        yield from keys


def iter_pages(ix: Any, chunk: int = CHUNK) -> Iterator[Any]:
    """Every page's ``PageInfo``, in page-id order."""
    first = 0
    while first is not None:
        pages, first = ix._pages_chunk(first, chunk)
        yield from pages


class IndexKeys(KeysView):
    """``Index.keys()``: a view of the keys, streamed in page-id order."""

    def __iter__(self) -> Iterator[str]:
        return iter_keys(self._mapping)


class IndexValues(ValuesView):
    """``Index.values()``: a view of the pages' ``PageInfo``, streamed in page-id order."""

    def __iter__(self) -> Iterator[Any]:
        return iter_pages(self._mapping)


class IndexItems(ItemsView):
    """``Index.items()``: a view of ``(key, PageInfo)`` pairs, streamed in page-id order."""

    def __iter__(self) -> Iterator[Tuple[str, Any]]:
        return ((p.key, p) for p in iter_pages(self._mapping))
