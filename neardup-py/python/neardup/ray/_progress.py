"""Progress of a merge's long stages, told by the workers (issue #34, item 8: "progress per stage").

S1's readers and S4's work units run for minutes on a large day (a million pages: about 20
minutes of S1 and 40 of S4 on two cores) with the driver waiting on their results. Each worker
sets its own count on a ``Board`` (a Ray actor holding a few integers, no CPU reserved): a reader
the rows of its file it has read, a work unit the rows it has decided. A count is *set*, not
added to, so that a task Ray retries (its node lost) starts its count again instead of counting
its rows twice. The coordinator also posts which step of S4 it is in (the units' logs routed,
joined). The driver, waiting, asks the board every ``EVERY`` seconds and prints a line when
something changed (``wait``).

A board is best effort: a worker that cannot reach it (the driver gone) goes on; what a merge
does never depends on it.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Dict, List, Optional

from ._runtime import require_ray

#: Seconds between two looks at the board while the driver waits.
EVERY = 15.0


class Board:
    """Counts set by the workers of one merge: ``counts[stage][worker]``, and the coordinator's
    last posted step."""

    def __init__(self) -> None:
        self.counts: Dict[str, Dict[int, int]] = {}
        self.step: Optional[str] = None

    def set(self, stage: str, worker: int, n: int) -> None:
        """Worker ``worker`` of ``stage`` has done ``n`` (its total so far)."""
        self.counts.setdefault(stage, {})[worker] = n

    def post(self, step: str) -> None:
        """The step the coordinator is in."""
        self.step = step

    def look(self, stage: str) -> Dict[str, Any]:
        """The sum of ``stage``'s counts and the last posted step."""
        return {"done": sum(self.counts.get(stage, {}).values()), "step": self.step}


def board() -> Any:
    """A new ``Board`` actor on the driver's node (its loss ends the merge anyway)."""
    ray = require_ray()
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    here = ray.get_runtime_context().get_node_id()
    actor = ray.remote(num_cpus=0, max_restarts=0)(Board)
    return actor.options(scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False)).remote()


def tell(handle: Optional[Any], stage: str, worker: int, n: int) -> None:
    """Sets a worker's count on the board ``handle`` (None: no board), without waiting."""
    if handle is not None:
        try:
            handle.set.remote(stage, worker, n)
        except Exception:  # noqa: BLE001 - progress never fails the work
            pass


def post(handle: Optional[Any], step: str) -> None:
    """Posts the coordinator's step on the board ``handle`` (None: no board), without waiting."""
    if handle is not None:
        try:
            handle.post.remote(step)
        except Exception:  # noqa: BLE001 - progress never fails the work
            pass


def wait(
    refs: List[Any],
    handle: Any,
    stage: str,
    label: str,
    total: Optional[int],
    what: str,
    say: Callable[[str], Any],
    every: Optional[float] = None,
) -> List[Any]:
    """``ray.get(refs)``, saying meanwhile, every ``every`` seconds (default ``EVERY``) when it
    changed, ``<label>: <n> [of <total>] <what>``: how many the workers of ``stage`` have done,
    then the coordinator's step, if any, and the seconds waited."""
    ray = require_ray()
    every = EVERY if every is None else every
    shown = None
    start = time.monotonic()
    while True:
        _, left = ray.wait(refs, num_returns=len(refs), timeout=every)
        if not left:
            return ray.get(refs)
        try:
            seen = ray.get(handle.look.remote(stage), timeout=every)
        except Exception:  # noqa: BLE001 - the board's loss is not the merge's
            continue
        line = f"{label}: {seen['done']}" + (f" of {total}" if total is not None else "") + f" {what}"
        if seen["step"]:
            line += f"; {seen['step']}"
        if line != shown:
            shown = line
            say(f"{line} ({time.monotonic() - start:.0f} s)")
