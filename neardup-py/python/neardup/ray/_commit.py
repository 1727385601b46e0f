"""S5 and S6's checkpoint of the daily merge (SCALEOUT §5, §9).

S5: every partition applies its part of the batch log, read from the batch's ``logs/`` in the
store, once in effect (``Index.apply_log_file`` records the batch in its last write, and a
partition that applied it skips it): a re-run after a crash, of the driver or of an actor,
applies it again harmlessly. With a shared store each actor reads its log from the store itself,
from its file (copied beside its database first when the store is not a file system of its
node); with the root's, which only the driver's node reaches, an actor on that node reads it in
place and, for one elsewhere, a task on the driver's node reads it and sends it in chunks of
``LOG_CHUNK_BYTES``, which the actor writes to a file beside its database and applies from there
(the driver holds no log, and no process holds one whole: issue #34, item 3). A log read from a
file is never held whole in memory.
S6: a checkpoint of every partition: uploaded to the shared store (``_durable``), or, without
one and when asked, under ``checkpoints/batch=<n>/`` on the partition's node.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _place
from ._faults import kill_armed, kill_point
from ._runtime import require_ray
from ._store import Store, StoreError, task

if TYPE_CHECKING:
    from ._driver import DistributedIndex, MergeReport

#: Bytes of a partition's log sent at a time to a partition on another node than the root's store
#: (no shared store): the sending task and the actor hold a chunk each, never the whole log.
LOG_CHUNK_BYTES = 8 << 20


def commit(dx: DistributedIndex, n: int, brel: str, report: MergeReport) -> None:
    """S5: every partition applies its log (once in effect). ``StoreError`` when a shared store
    does not give a partition its log (a re-run finishes the batch once it does)."""
    ray = require_ray()
    store = dx.store

    # The root's store is on the driver's node: a partition there reads its log in place.
    here = ray.get_runtime_context().get_node_id()
    actors = dx.partitions()
    near = set() if store.shared else {i for i, node in enumerate(ray.get([a.node_id.remote() for a in actors])) if node == here}

    def apply(i, name):  # type: ignore[no-untyped-def]
        rel = f"{brel}/logs/{name}.ndlog"
        if store.shared or i in near:
            return actors[i].apply_stored.remote(n, store, rel)
        return send.remote(actors[i], n, store, rel, LOG_CHUNK_BYTES)

    send = task(_send_log, store)

    def wait(refs):  # type: ignore[no-untyped-def]
        # A log the store cannot give (unreachable, a file gone) is the store's failure: the
        # partitions that read theirs applied them, the others apply them on a re-run.
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as e:
            cause = e.as_instanceof_cause()
            if isinstance(cause, OSError) and store.shared:
                raise StoreError(
                    store.spec, f"did not give the logs of batch {n} ({brel}/logs): {cause}; run the merge again once it does"
                ) from None
            raise

    calls = list(enumerate(_place.partition_names(dx.layout)))
    if kill_armed("S5"):
        # Crash tests: the first partition commits, then the driver dies.
        i, name = calls.pop(0)
        wait(apply(i, name))
        kill_point("S5")
    refs = [apply(i, name) for i, name in calls]
    report["partitions_applied"] = sum(bool(x) for x in wait(refs))


def _send_log(actor: Any, n: int, store: Store, rel: str, chunk_bytes: int) -> bool:
    """In a task on the driver's node: a partition's log of batch ``n`` read from the root's
    store ``chunk_bytes`` at a time, each chunk written by its actor to a file beside its
    database (``receive_log``, one chunk in flight), then applied by it from that file
    (``apply_received``); what that returned. A retried task sends the log again from its
    start."""
    ray = require_ray()
    sent = 0
    with store.fs.open_input_stream(store.path(rel)) as f:
        while True:
            chunk = f.read(max(1, chunk_bytes))
            if not chunk and sent:
                break
            sent = ray.get(actor.receive_log.remote(n, sent, chunk))
            if not chunk:
                break
    return bool(ray.get(actor.apply_received.remote(n, sent)))


def checkpoint(dx: DistributedIndex, n: int) -> None:
    """Without a shared store: a checkpoint of every partition under
    ``checkpoints/batch=<n>/<role>-<p>`` of its node's local root; older ones but the last are
    removed."""
    ray = require_ray()
    assignment = _place.load(dx.root, dx.layout)
    refs = []
    for name, a in zip(_place.partition_names(dx.layout), dx.partitions()):
        # On the partition's node: its checkpoint goes to that node's disk.
        top = _place.local_base(dx.root, assignment, assignment["partitions"][name]["node"]) / "checkpoints"
        refs.append(a.checkpoint_local.remote(str(top), n))
    ray.get(refs)
