"""Where a distributed index's batches and checkpoints are kept (SCALEOUT §5, §9; issue #34,
item 2): a store, reached through ``pyarrow.fs`` so that a local path and a URI (``s3://…``,
``gs://…``, an NFS mount's path) go through the same code.

A **shared** store (``DistributedIndex(store=…)``) is reachable from every node: the workers
write the batch's signatures (S1) and logs (S4) there, the partition actors read their logs from
it (S5) and upload their checkpoints to it (S6), and a partition whose node is lost is restored
from it onto another node. Its layout::

    store.json                                   {"version": 1, "id": <the index's store_id>, "root", ...}
    batches/batch=<n>/manifest.json, report.json the batch's inputs and report
    batches/batch=<n>/s1/part-<i>.parquet, _DONE S1's signatures, written by the workers
    batches/batch=<n>/logs/<role>-<p>.ndlog      S4's batch log cut by partition, written by a worker
    batches/batch=<n>/logs/counts.json, _DONE    S1–S4's counts; the marker S5 starts from
    checkpoints/<role>-<p>/batch=<n>.json        a checkpoint's manifest: each file's name, size, sha256
    checkpoints/<role>-<p>/files/<sha256>        the files' bytes, shared by the checkpoints naming them

Without one, the root's ``batches/`` on the driver's disk is the store (not **shared**): the
tasks that write to it run on the driver's node, the logs reach the actors as Ray objects, and
checkpoints stay on the nodes' disks (``merge(checkpoint=True)``), as before stores existed.

On a local file system a file is written whole (a temporary file renamed over it) and made
durable; on an object store a written object is whole once its upload ends.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import uuid
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

import neardup

from . import _files

#: The file that identifies a shared store as the one of its index.
STORE_FILE = "store.json"
#: Bytes read or written at once when a file is streamed to or from the store.
BLOCK = 8 << 20


class StoreError(neardup.Error):
    """A distributed index's shared store cannot be used: missing, not writable, or the store
    of another index. Raised before anything of a merge is applied (or, when the store fails
    after the commit, before the batch's checkpoints are written, which a re-run of the merge
    writes). Attributes: ``store`` (its path or URI) and ``reason``."""

    def __init__(self, store: str, reason: str) -> None:
        self.store = store
        self.reason = reason
        super().__init__(f"the index's store {store} {reason}")


def _is_uri(spec: str) -> bool:
    return "://" in spec


class Store:
    """A directory of a file system of ``pyarrow.fs`` (a local path or a URI), as the merge
    uses it: relative paths with ``/``, files read and written whole. ``shared``: whether every
    node reaches it (a store given to the index), or only the driver's (the root's
    ``batches/``). Picklable: a worker opens the file system again."""

    def __init__(self, spec: str, shared: bool) -> None:
        self.spec = spec if _is_uri(spec) else str(Path(spec).absolute())
        self.shared = shared
        self._fs: Any = None
        self._base = ""

    def __reduce__(self) -> Any:
        return (Store, (self.spec, self.shared))

    def __repr__(self) -> str:
        return f"Store({self.spec!r}, shared={self.shared})"

    # ----- the file system -----

    @property
    def fs(self) -> Any:
        """The ``pyarrow.fs`` file system, opened on first use (``StoreError`` when it cannot
        be)."""
        if self._fs is None:
            import pyarrow.fs as pafs

            try:
                self._fs, self._base = pafs.FileSystem.from_uri(self.spec)
            except (OSError, ValueError, TypeError) as e:
                raise StoreError(self.spec, f"cannot be opened: {e}") from None
            self._base = self._base.rstrip("/")
        return self._fs

    @property
    def local(self) -> bool:
        """Whether the store is a directory of this machine's file system (or a mount)."""
        import pyarrow.fs as pafs

        return isinstance(self.fs, pafs.LocalFileSystem)

    def path(self, rel: str = "") -> str:
        """The file system's path of ``rel`` (relative to the store)."""
        self.fs
        return f"{self._base}/{rel}" if rel else self._base

    # ----- files -----

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` (a file or a directory) is there."""
        import pyarrow.fs as pafs

        return self.fs.get_file_info(self.path(rel)).type != pafs.FileType.NotFound

    def read(self, rel: str) -> bytes:
        """The bytes of file ``rel``."""
        with self.fs.open_input_stream(self.path(rel)) as f:
            return f.read()

    def read_json(self, rel: str) -> Any:
        """File ``rel`` read as JSON."""
        return json.loads(self.read(rel))

    def write(self, rel: str, data: bytes) -> None:
        """Writes ``rel`` whole or not at all (its directories made first)."""
        if self.local:
            p = Path(self.path(rel))
            _files.make_dirs(p.parent)
            _files.write_atomic(p, data)
            return
        parent = self.path(rel).rsplit("/", 1)[0]
        self.fs.create_dir(parent, recursive=True)
        with self.fs.open_output_stream(self.path(rel)) as f:
            f.write(data)

    def put_file(self, local: str, rel: str) -> int:
        """Copies the local file ``local`` to ``rel``, whole or not at all (as ``write``); the
        bytes copied."""
        parent = self.path(rel).rsplit("/", 1)[0]
        self.fs.create_dir(parent, recursive=True)
        # On a local file system a temporary file renamed over ``rel``: a copy that stops never
        # leaves part of a file under a name a checkpoint's manifest may already hold.
        dest = self._temporary(rel) if self.local else self.path(rel)
        n = 0
        with open(local, "rb") as src, self.fs.open_output_stream(dest) as dst:
            for block in iter(lambda: src.read(BLOCK), b""):
                dst.write(block)
                n += len(block)
        if self.local:
            self._install(dest, rel)
        return n

    @contextlib.contextmanager
    def writing(self, rel: str) -> Iterator[str]:
        """A local path for the caller to write ``rel`` into, which becomes ``rel`` whole when
        the block ends without an exception (and is removed when it raises). On a local store the
        path is a temporary name beside ``rel``, renamed into place: the file is written once, not
        written then copied (a doc partition's log of a 10⁶-page day is 1.2 GB); on an object
        store it is a local temporary file, uploaded then removed."""
        if not self.local:
            with tempfile.TemporaryDirectory(prefix="neardup-store-") as d:
                tmp = str(Path(d) / rel.rsplit("/", 1)[-1])
                yield tmp
                self.put_file(tmp, rel)
            return
        _files.make_dirs(Path(self.path(rel)).parent)
        tmp = self._temporary(rel)
        try:
            yield tmp
            self._install(tmp, rel)
        finally:
            Path(tmp).unlink(missing_ok=True)

    @contextlib.contextmanager
    def scratch_dir(self, rel: str) -> Iterator[str]:
        """A local directory, removed when the block ends, whose files ``move_in`` puts into the
        store: on a local store a temporary directory under ``rel`` (the store's file system, so
        that a move is a rename), else a local temporary directory."""
        if not self.local:
            with tempfile.TemporaryDirectory(prefix="neardup-store-") as d:
                yield d
            return
        _files.make_dirs(Path(self.path(rel)))
        d = tempfile.mkdtemp(prefix=".tmp-", dir=self.path(rel))
        try:
            yield d
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def move_in(self, local: str, rel: str) -> int:
        """Puts the local file ``local`` (one of a ``scratch_dir``) at ``rel``, whole or not at
        all, and removes it: a rename on a local store, an upload else. Its bytes."""
        if not self.local:
            n = self.put_file(local, rel)
            Path(local).unlink(missing_ok=True)
            return n
        n = Path(local).stat().st_size
        _files.make_dirs(Path(self.path(rel)).parent)
        self._install(local, rel)
        return n

    def _temporary(self, rel: str) -> str:
        """A new temporary name beside ``rel`` (a local store's)."""
        return f"{self.path(rel)}.tmp-{uuid.uuid4().hex}"

    def _install(self, tmp: str, rel: str) -> None:
        """Makes the local file ``tmp`` durable and renames it to ``rel`` (a local store's), the
        rename made durable too."""
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        final = Path(self.path(rel))
        os.replace(tmp, final)
        _files.fsync_dir(final.parent)

    def get_file(self, rel: str, local: str) -> Tuple[int, str]:
        """Copies ``rel`` to the local file ``local`` (made durable); its size and sha256."""
        import hashlib

        h = hashlib.sha256()
        n = 0
        with self.fs.open_input_stream(self.path(rel)) as src, open(local, "wb") as dst:
            while True:
                block = src.read(BLOCK)
                if not block:
                    break
                h.update(block)
                dst.write(block)
                n += len(block)
            dst.flush()
            os.fsync(dst.fileno())
        return n, h.hexdigest()

    def list(self, rel: str) -> List[str]:
        """The names in directory ``rel`` (none when it does not exist)."""
        import pyarrow.fs as pafs

        sel = pafs.FileSelector(self.path(rel), allow_not_found=True, recursive=False)
        return sorted(i.base_name for i in self.fs.get_file_info(sel))

    def size(self, rel: str) -> int:
        """The bytes under ``rel`` (a file, or a directory's files)."""
        import pyarrow.fs as pafs

        info = self.fs.get_file_info(self.path(rel))
        if info.type == pafs.FileType.File:
            return int(info.size or 0)
        if info.type != pafs.FileType.Directory:
            return 0
        sel = pafs.FileSelector(self.path(rel), allow_not_found=True, recursive=True)
        return sum(int(i.size or 0) for i in self.fs.get_file_info(sel) if i.type == pafs.FileType.File)

    def delete(self, rel: str) -> int:
        """Deletes a file or a directory tree, if there; the bytes it held."""
        import pyarrow.fs as pafs

        info = self.fs.get_file_info(self.path(rel))
        if info.type == pafs.FileType.NotFound:
            return 0
        size = self.size(rel)
        if info.type == pafs.FileType.Directory:
            self.fs.delete_dir(self.path(rel))
        else:
            self.fs.delete_file(self.path(rel))
        return size

    # ----- the store of an index -----

    def probe(self) -> None:
        """Raises ``StoreError`` unless the store is there and takes a file (written, read back
        and deleted)."""
        import pyarrow.fs as pafs

        try:
            info = self.fs.get_file_info(self.path())
            if self.local and info.type != pafs.FileType.Directory:
                what = "does not exist" if info.type == pafs.FileType.NotFound else "is not a directory"
                raise StoreError(self.spec, f"{what} (a store is made by its owner: a directory, a mount or a bucket)")
            rel = f".probe-{uuid.uuid4().hex}"
            self.write(rel, b"neardup")
            if self.read(rel) != b"neardup":
                raise StoreError(self.spec, "did not give back what was written to it")
            self.delete(rel)
        except StoreError:
            raise
        except (OSError, ValueError) as e:
            raise StoreError(self.spec, f"is not writable: {e}") from None

    def create(self, store_id: str, layout: Dict[str, Any]) -> None:
        """Makes a new index's store: probed, then ``store.json`` written with ``layout`` (which
        names the index's ``root``). An existing one of another index refuses it: one of
        another root, or one that holds more than its ``store.json``."""
        self.probe()
        if self.exists(STORE_FILE):
            found = self.read_json(STORE_FILE)
            if found.get("id") == store_id:
                return
            if found.get("root") != layout.get("root") or set(self.list("")) - {STORE_FILE}:
                raise StoreError(
                    self.spec,
                    f"holds the store of another index ({STORE_FILE}: id {found.get('id')}, root {found.get('root')})",
                )
            # Only the file of this root's new index whose creation stopped before its layout
            # was written (a new store id each time).
        self.write(STORE_FILE, json.dumps(dict(layout, version=1, id=store_id), indent=1, sort_keys=True).encode())

    def open(self, store_id: str) -> None:
        """Checks an existing index's store: there, writable and its own."""
        try:
            found = self.read_json(STORE_FILE) if self.exists(STORE_FILE) else None
        except (OSError, ValueError) as e:
            raise StoreError(self.spec, f"cannot be read: {e}") from None
        if found is None:
            raise StoreError(self.spec, f"is missing or empty (no {STORE_FILE}): mount or restore it, or give its location")
        if found.get("id") != store_id:
            raise StoreError(self.spec, f"is the store of another index ({STORE_FILE}: id {found.get('id')}, this index's {store_id})")
        self.probe()


def new_store_id() -> str:
    """A new index's store id (``layout.json`` and the store's ``store.json`` hold it)."""
    return uuid.uuid4().hex


def open_store(spec: Optional[str], root: Path) -> Store:
    """The store of an index: the shared one given, else the root's ``batches/`` parent (the
    root itself, local to the driver)."""
    if spec is None:
        return Store(str(root), shared=False)
    return Store(str(spec), shared=True)


def task(fn: Any, store: Store, num_cpus: float = 0, retries: int = 3, **options: Any) -> Any:
    """``fn`` as a Ray task that reads or writes ``store``: anywhere for a shared store, on this
    driver's node for the root's (the only node that reaches it)."""
    from ._runtime import require_ray

    ray = require_ray()
    remote = ray.remote(num_cpus=num_cpus, max_retries=retries, **options)(fn)
    if store.shared:
        return remote
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    return remote.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False))
