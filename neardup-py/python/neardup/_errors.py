"""neardup's exceptions: ``neardup.Error`` and one subclass per error of the Rust library.

The Rust extension raises these (``neardup._neardup`` imports this module); each carries the
fields of its Rust variant as attributes. Where a built-in exception says the same thing, the
class derives from it too, so ``except KeyError`` or ``except ValueError`` works as a Python caller
expects.
"""

from __future__ import annotations

__all__ = [
    "Error",
    "InvalidArgumentError",
    "InvalidTypeError",
    "PageTooLargeError",
    "BinaryPageError",
    "StorageError",
    "CorruptionError",
    "IncompatibleFormatError",
    "IncompatibleConfigError",
    "CheckFailedError",
    "PoisonedError",
    "NotFoundError",
    "FullError",
    "TextUnavailableError",
    "ReadOnlyError",
    "AlreadyOpenError",
    "WrongProcessError",
    "ChangesTrimmedError",
    "IoError",
]


class Error(Exception):
    """Base class of every error neardup raises."""


class InvalidArgumentError(Error, ValueError):
    """The caller passed something neardup cannot use (an empty key, a bad option value, a
    closed index...). Also a ``ValueError``. The message names the argument."""


class InvalidTypeError(InvalidArgumentError, TypeError):
    """An argument of the wrong type (``key=5``, ``html=5``, ``time="noon"``), an unknown option,
    or a combination of arguments a call does not take (``html`` and ``text`` together). An
    ``InvalidArgumentError`` and a ``TypeError``, so ``except TypeError`` and ``except
    neardup.InvalidArgumentError`` both catch it. The message names the argument.

    A call that does not fit the method's signature at all (a missing required argument, an
    unknown keyword) raises Python's own ``TypeError``, as any function does."""


class PageTooLargeError(Error, ValueError):
    """The page is larger than the ``max_page_bytes`` signature option.

    Attributes: ``size`` (bytes), ``limit`` (bytes)."""

    size: int
    limit: int


class BinaryPageError(Error, ValueError):
    """The page is binary data (an image, an archive...), not HTML or text.

    Attributes: ``control_share`` (percent of control bytes), ``sampled`` (bytes sampled)."""

    control_share: float
    sampled: int


class StorageError(Error):
    """RocksDB reported an error. Attribute: ``context`` (what neardup was doing)."""

    context: str


class CorruptionError(Error):
    """A stored value failed its checksum or could not be decoded.

    Attributes: ``cf`` (column family), ``key`` (hex), ``reason``."""

    cf: str
    key: str
    reason: str


class IncompatibleFormatError(Error):
    """The index on disk was written in another format version.

    Attributes: ``found``, ``supported``."""

    found: int
    supported: int


class IncompatibleConfigError(Error):
    """The index was created with signature options that differ from the ones given: open it
    with no options (its stored configuration), or build a new index.

    Attributes: ``field``, ``stored``, ``requested``."""

    field: str
    stored: str
    requested: str


class CheckFailedError(Error):
    """An index neardup built (a compacted snapshot) failed its invariant check.

    Attributes: ``problems`` (count), ``first`` (the first, in words)."""

    problems: int
    first: str


class PoisonedError(Error):
    """An earlier write failed: the index refuses writes until it is reopened."""


class NotFoundError(Error, KeyError):
    """No page with this key is in the index (``Index.delete``). Attribute: ``key``."""

    key: str

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; the message reads better.
        return str(self.args[0]) if self.args else ""


class FullError(Error):
    """The index holds the most pages it can (ids are 32-bit)."""


class TextUnavailableError(Error):
    """The index does not store texts and the text of a page it had to verify against could not
    be had. Attributes: ``key``, ``reason``."""

    key: str
    reason: str


class ReadOnlyError(Error):
    """The index was opened read-only and refuses writes.

    Attributes: ``path``, ``operation``."""

    path: str
    operation: str


class ChangesTrimmedError(Error):
    """The change feed no longer holds every change after the sequence number asked for
    (``Index.changes_since``): the ones up to ``trimmed`` were dropped past the
    ``change_retention`` option. The follower missed changes: copy the index again (a
    checkpoint) and follow the copy from its ``last_change()``.

    Attributes: ``since`` (the number asked for), ``trimmed`` (every change up to it is gone)."""

    since: int
    trimmed: int


class AlreadyOpenError(Error):
    """This process has the index open already (one handle per index per process): use that
    handle, or close it first. Attributes: ``path``, ``open_as``."""

    path: str
    open_as: str


class WrongProcessError(Error):
    """The handle was opened by another process (this one is a child after ``fork``): open the
    index again here. Also raised by any open in a child after ``fork`` of a process that had
    opened an index (RocksDB's process-wide state is the parent's): fork before opening, or use
    the ``spawn`` start method. Attributes: ``opened_by``, ``current`` (process ids)."""

    opened_by: int
    current: int


class IoError(Error, OSError):
    """A file-system error. Attributes: ``path``, ``errno`` (may be None)."""

    path: str
