"""S5 and S6's checkpoint of the daily merge (SCALEOUT §5, §9).

S5: every partition applies its part of the batch log, read from the batch's ``logs/``, once in
effect (``Index.apply_log`` records the batch in its last write, and a partition that applied it
skips it): a re-run after a crash, of the driver or of an actor, applies it again harmlessly.
S6: a checkpoint of every partition under ``checkpoints/batch=<n>/``, on the partition's node.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ._faults import kill_armed, kill_point
from ._runtime import require_ray

if TYPE_CHECKING:
    from ._driver import DistributedIndex, MergeReport


def commit(dx: DistributedIndex, n: int, bdir: Path, report: MergeReport) -> None:
    """S5: every partition applies its log (once in effect)."""
    ray = require_ray()
    logs_dir = bdir / "logs"
    calls = [
        (a, logs_dir / f"{role}-{p:03}.ndlog")
        for role, actors in (("key", dx.keys), ("doc", dx.docs))
        for p, a in enumerate(actors)
    ]
    if kill_armed("S5"):
        # Crash tests: the first partition commits, then the driver dies.
        a, path = calls.pop(0)
        ray.get(a.apply.remote(n, path.read_bytes()))
        kill_point("S5")
    refs = [a.apply.remote(n, path.read_bytes()) for a, path in calls]
    report["partitions_applied"] = sum(bool(x) for x in ray.get(refs))


def checkpoint(dx: DistributedIndex, n: int) -> None:
    """A checkpoint of every partition under ``checkpoints/batch=<n>/``; older ones but the
    last are removed."""
    ray = require_ray()
    base = dx.root / "checkpoints"
    dest = base / f"batch={n}"
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    refs = []
    for role, actors in (("key", dx.keys), ("doc", dx.docs)):
        for p, a in enumerate(actors):
            # On the partition's node: its checkpoint goes to that node's disk.
            refs.append(a.checkpoint.remote(str(dest / f"{role}-{p:03}")))
    ray.get(refs)
    for old in base.iterdir():
        if old != dest and old.name.startswith("batch=") and int(old.name[6:]) < n - 1:
            # Each partition's old checkpoint on its node, then what is left on this one.
            ray.get([
                a.remove_tree.remote(str(old / f"{role}-{p:03}"))
                for role, actors in (("key", dx.keys), ("doc", dx.docs))
                for p, a in enumerate(actors)
            ])
            shutil.rmtree(old, ignore_errors=True)
