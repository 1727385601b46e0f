"""Durable state off the nodes (SCALEOUT §9; issue #34, item 2): each partition's checkpoints in
the shared store, and a lost partition restored from them.

**Checkpoints.** After each committed batch every partition actor makes a RocksDB checkpoint
beside its database (hard links of its SST files), and uploads it to
``checkpoints/<role>-<p>/`` of the store: each file's bytes once, as ``files/<sha256>``, and a
manifest ``batch=<n>.json``::

    {"version": 1, "partition": "doc-001", "batch": 2, "applied_batch": 2,
     "files": [{"name": "000012.sst", "size": 80123, "sha256": "…"}, ...],
     "bytes": 123456, "uploaded": 80123}

written last, so a manifest names only files that are whole in the store. An upload is
incremental: a file whose sha256 a kept manifest already names is not copied again (SST files
are immutable: an unchanged one is a hard link of the same inode, whose sha256 the actor
remembers by name, size, inode and modification time, so it is not read again either). Then the
partition's manifests but the last ``keep`` are deleted, and the files no kept manifest names.

**Restore.** A partition whose node is not alive (or whose database is missing on its node) is
restored on an alive node: the files of its last manifest are copied from the store by a task on
that node into ``<role>-<p>.r<g>`` under the node's local root (each checked by size and
sha256, then the directory renamed into place), ``placement.json`` is rewritten to name that
node, and once its actor runs it replays the batch logs since its checkpoint, read from the
store, up to the last batch any partition applied. The node chosen is the alive node holding
the fewest partitions (ties: by name), among the nodes the index was placed on
(``nodes=[...]``) when any of them is alive. A checkpoint that cannot be read whole (a file
missing or damaged) falls back to the next older one kept. The batch logs a restore needs stay
in the store: a batch's logs are retired only once every partition's oldest kept checkpoint is
at or after it.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

import neardup

from . import _files
from ._store import Store, StoreError

if TYPE_CHECKING:
    from ._driver import DistributedIndex

#: Files of a RocksDB database that never change once written (their name is never reused).
IMMUTABLE = (".sst", ".blob")


def _manifest_rel(name: str, batch: int) -> str:
    return f"checkpoints/{name}/batch={batch}.json"


def checkpoint_batches(store: Store, name: str) -> List[int]:
    """The batches of partition ``name``'s checkpoints in the store, ascending."""
    out = []
    for f in store.list(f"checkpoints/{name}"):
        if f.startswith("batch=") and f.endswith(".json") and f[6:-5].isdigit():
            out.append(int(f[6:-5]))
    return sorted(out)


def last_checkpoint(store: Store, name: str) -> Optional[int]:
    """The batch of partition ``name``'s last checkpoint in the store (``None``: none)."""
    found = checkpoint_batches(store, name)
    return found[-1] if found else None


# ----- on a partition's node -----


def upload_checkpoint(
    ix: Any, hashes: Dict[Tuple[str, int, int, int], str], store: Store, name: str, batch: int, shot: str, keep: int
) -> Dict[str, Any]:
    """In a partition actor: a checkpoint of ``ix`` made at ``shot`` (beside its database),
    uploaded to the store as the checkpoint of ``batch`` (files not in the store yet, then the
    manifest), the partition's older checkpoints but the last ``keep`` deleted with the files
    only they named, and ``shot`` removed. Returns ``{"partition", "batch", "files", "bytes",
    "uploaded"}``."""
    shutil.rmtree(shot, ignore_errors=True)
    ix.checkpoint(shot)
    base = f"checkpoints/{name}"
    try:
        files = []
        for dirpath, _, names in os.walk(shot):
            for f in sorted(names):
                p = os.path.join(dirpath, f)
                rel = os.path.relpath(p, shot)
                st = os.stat(p)
                key = (rel, st.st_size, st.st_ino, st.st_mtime_ns)
                digest = hashes.get(key) if rel.endswith(IMMUTABLE) else None
                if digest is None:
                    digest = _files.sha256_file(p)
                    if rel.endswith(IMMUTABLE):
                        hashes[key] = digest
                files.append({"name": rel, "size": st.st_size, "sha256": digest})
        files.sort(key=lambda f: f["name"])
        older = [b for b in checkpoint_batches(store, name) if b != batch]
        manifests = {b: store.read_json(_manifest_rel(name, b)) for b in older}
        known = {f["sha256"] for m in manifests.values() for f in m["files"]}
        uploaded = 0
        for f in files:
            if f["sha256"] not in known:
                uploaded += store.put_file(os.path.join(shot, f["name"]), f"{base}/files/{f['sha256']}")
                known.add(f["sha256"])
        manifest = {
            "version": 1,
            "partition": name,
            "batch": batch,
            "applied_batch": ix.applied_batch(),
            "files": files,
            "bytes": sum(f["size"] for f in files),
            "uploaded": uploaded,
        }
        store.write(_manifest_rel(name, batch), _json(manifest))
        # Retired: the checkpoints before the last `keep`, then the files no kept one names.
        kept = sorted(older + [batch])[-max(1, keep) :]
        for b in older:
            if b not in kept:
                store.delete(_manifest_rel(name, b))
        named = {f["sha256"] for f in files}
        named.update(f["sha256"] for b, m in manifests.items() if b in kept for f in m["files"])
        for blob in store.list(f"{base}/files"):
            if blob not in named:
                store.delete(f"{base}/files/{blob}")
    finally:
        shutil.rmtree(shot, ignore_errors=True)
    # A restarted actor's hash cache forgets the files gone from its database.
    live = {(f["name"], f["size"]) for f in files}
    for key in [k for k in hashes if (k[0], k[1]) not in live]:
        del hashes[key]
    return {"partition": name, "batch": batch, "files": len(files), "bytes": manifest["bytes"], "uploaded": uploaded}


def _download(store: Store, name: str, batch: int, incoming: str, final: str) -> Dict[str, Any]:
    """In a task on the target node: the files of partition ``name``'s checkpoint of ``batch``
    copied from the store into ``incoming``, each checked by size and sha256, made durable, then
    the directory renamed to ``final``. Returns ``{"files", "bytes"}``."""
    manifest = store.read_json(_manifest_rel(name, batch))
    shutil.rmtree(incoming, ignore_errors=True)
    os.makedirs(incoming)
    total = 0
    for f in manifest["files"]:
        dest = os.path.join(incoming, f["name"])
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        size, digest = store.get_file(f"checkpoints/{name}/files/{f['sha256']}", dest)
        if size != f["size"] or digest != f["sha256"]:
            raise neardup.CorruptionError(
                f"{store.spec}: file {f['name']} of the checkpoint of {name} at batch {batch} is "
                f"damaged: {size} bytes, sha256 {digest}; expected {f['size']}, {f['sha256']}"
            )
        total += size
    _files.install_dir(Path(incoming), Path(final))
    return {"files": len(manifest["files"]), "bytes": total}


def _json(value: Any) -> bytes:
    import json

    return json.dumps(value, indent=1, sort_keys=True).encode()


# ----- on the driver -----


def store_checkpoints(dx: DistributedIndex, n: int, keep: int, only: Optional[List[str]] = None) -> Dict[str, Any]:
    """S6 with a shared store: every partition (or those named in ``only``) uploads its
    checkpoint of batch ``n``, on its node, at once. Returns the totals ``{"partitions",
    "files", "bytes", "uploaded"}``."""
    from ._place import partition_names
    from ._runtime import require_ray

    ray = require_ray()
    names = partition_names(dx.layout)
    refs = [
        a.store_checkpoint.remote(dx.store, n, keep)
        for name, a in zip(names, dx.partitions())
        if only is None or name in only
    ]
    try:
        done = ray.get(refs)
    except ray.exceptions.RayTaskError as e:
        cause = e.as_instanceof_cause()
        if isinstance(cause, (OSError, neardup.StorageError)):
            raise StoreError(dx.store.spec, f"did not take the checkpoints of batch {n}: {cause}") from None
        raise
    return {
        "partitions": len(done),
        "files": sum(d["files"] for d in done),
        "bytes": sum(d["bytes"] for d in done),
        "uploaded": sum(d["uploaded"] for d in done),
    }


def choose_targets(assignment: Dict[str, Any], lost: List[str], alive: Dict[str, List[str]]) -> Dict[str, str]:
    """The node each lost partition is restored on: the alive node holding the fewest
    partitions, ties by name, among the nodes the index was placed on (``nodes=[...]``) when
    any of them is alive, else among all alive nodes."""
    names = sorted(alive)
    if assignment.get("placement") == "nodes":
        listed = [n for n in assignment.get("nodes") or [] if n in alive]
        names = sorted(listed) or names
    if not names:
        raise neardup.StorageError("no node is alive to restore partitions on")
    load = {n: 0 for n in names}
    for part, entry in assignment["partitions"].items():
        if part not in lost and entry["node"] in load:
            load[entry["node"]] += 1
    out = {}
    for part in lost:
        target = min(names, key=lambda n: (load[n], n))
        load[target] += 1
        out[part] = target
    return out


def restore(root: Path, store: Store, assignment: Dict[str, Any], lost: Dict[str, Optional[str]], in_place: bool) -> List[Dict[str, Any]]:
    """Restores the partitions of ``lost`` (name → the node that held them) from their last
    checkpoints in the store: on other alive nodes (``choose_targets``), or, ``in_place``, on
    the node that lost the database. A checkpoint with a damaged or missing file falls back to
    the next older one kept (``keep_checkpoints`` > 1) whose batch logs since are all in the
    store (the catch-up replays them). ``placement.json`` is rewritten after each. Returns what
    was done, one dict per partition: ``{"partition", "from", "to", "dir", "checkpoint_batch",
    "files", "bytes", "seconds", "reason", "skipped"}`` (``skipped``: the newer checkpoints
    passed over, ``{"batch", "reason"}``). Raises ``StoreError`` when a partition has no usable
    checkpoint in the store (the partitions before it restored)."""
    from . import _place
    from ._runtime import require_ray

    ray = require_ray()
    alive = _place.alive_nodes()
    order = _place.layout_order(lost)
    batches = {}
    for name in order:
        found = checkpoint_batches(store, name)
        if not found:
            raise StoreError(store.spec, f"holds no checkpoint of partition {name}, which cannot be restored")
        batches[name] = found
    targets = {n: lost[n] for n in order} if in_place else choose_targets(assignment, order, alive)
    done = []
    for name in order:
        t = time.monotonic()
        entry = assignment["partitions"][name]
        target = targets[name]
        new_dir = _place.next_dir(name, entry["dir"], "r")
        base = _place.local_base(root, assignment, target)
        node_id = None if target is None else _place._unique(alive, target)
        download = _place._on(_download, node_id)
        # The last checkpoint, or else an older one kept (``keep_checkpoints``) whose batch logs
        # since are all in the store: a damaged or missing file falls back to it.
        skipped: List[Dict[str, Any]] = []
        got = None
        for b in reversed(batches[name]):
            missing = [m for m in range(b + 1, batches[name][-1] + 1) if not store.exists(f"batches/batch={m}/logs/_DONE")]
            if missing:
                skipped.append({"batch": b, "reason": f"the logs of batch {missing[0]} are not in the store"})
                continue
            try:
                got = ray.get(download.remote(store, name, b, str(base / f".{new_dir}.incoming"), str(base / new_dir)))
            except ray.exceptions.RayTaskError as e:
                cause = e.as_instanceof_cause()
                if not isinstance(cause, (OSError, neardup.CorruptionError)):
                    raise
                reason = str(cause)
                if isinstance(cause, (FileNotFoundError, neardup.CorruptionError)):
                    # A manifest naming a damaged or missing file goes: a later upload must not
                    # take that file as held (it would name it again), and no restore tries it.
                    store.delete(_manifest_rel(name, b))
                    reason += " (the manifest was removed)"
                skipped.append({"batch": b, "reason": reason})
                continue
            got["batch"] = b
            break
        if got is None:
            raise StoreError(
                store.spec,
                f"holds no usable checkpoint of partition {name}: "
                + "; ".join(f"batch {s['batch']}: {s['reason']}" for s in skipped),
            )
        entry["node"], entry["dir"] = target, new_dir
        _place.store(root, assignment)
        done.append(
            {
                "partition": name,
                "from": lost[name],
                "to": target if target is not None else _place.driver_node_name(),
                "dir": new_dir,
                "checkpoint_batch": got["batch"],
                "files": got["files"],
                "bytes": got["bytes"],
                "seconds": round(time.monotonic() - t, 3),
                "reason": "database missing on its node" if in_place else "node not alive",
                "skipped": skipped,
            }
        )
    return done


def catch_up(dx: DistributedIndex, restored: List[Dict[str, Any]]) -> None:
    """Brings every partition restored now, and every partition more than one batch behind the
    others (a catch-up that stopped), to the last batch any partition applied, replaying the
    batch logs from the store on its actor. Adds ``replayed`` (the batches) to each restore's
    dict."""
    from ._place import partition_names
    from ._runtime import require_ray

    ray = require_ray()
    names = partition_names(dx.layout)
    applied = [a or 0 for a in dx.applied_batches()]
    high = max(applied, default=0)
    by_name = {r["partition"]: r for r in restored}
    for name, actor, a in zip(names, dx.partitions(), applied):
        if name not in by_name and a >= high - 1:
            continue
        replayed = []
        for m in range(a + 1, high + 1):
            rel = f"batches/batch={m}/logs"
            if not dx.store.exists(f"{rel}/_DONE"):
                raise StoreError(
                    dx.store.spec,
                    f"lacks the logs of batch {m} ({rel}), which partition {name}, at batch {a}, needs "
                    f"to catch up with the others (at {high})",
                )
            ray.get(actor.apply_stored.remote(m, dx.store, f"{rel}/{name}.ndlog"))
            replayed.append(m)
        if name in by_name:
            by_name[name]["replayed"] = replayed
