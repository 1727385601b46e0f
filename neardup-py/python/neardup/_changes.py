"""The change feed's face in Python: ``Index.changes_since`` streams the library's feed a chunk
at a time (``Index._changes_chunk``: each chunk read at one snapshot, resumed after the last
sequence number read), up to the last change committed when the iteration started, so an
iterator left half-way holds no snapshot and does not keep a closed index open. A chunk that
meets a trim (a follower slower than the ``change_retention`` option) raises
``ChangesTrimmedError``; the changes before it were yielded.
"""

from __future__ import annotations

from typing import Any, Iterator, List

#: Changes read per chunk (a change of a page holds its text).
CHUNK = 256


def follow(ix: Any, changes: List[Any], last: int, chunk: int = CHUNK) -> Iterator[Any]:
    """The changes of a first chunk, then of the next ones, up to change ``last``."""
    while True:
        yield from changes
        if not changes or changes[-1].seq >= last:
            return
        changes, _ = ix._changes_chunk(changes[-1].seq, chunk)
