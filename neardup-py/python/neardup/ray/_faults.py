"""The driver's kill points, for the crash tests of the daily merge (SCALEOUT §9, §12.6).

``NEARDUP_RAY_KILL_AT=<point>`` in the driver's environment kills it with SIGKILL at that point
of the merge: ``after-S1``, ``S4`` (once the first work unit has decided, the others still
running), ``after-S4``, ``S5`` (after the first partition applied its log) or ``after-S5``. A re-run of the merge must then complete the batch as if nothing had happened.
Unset, every point is a no-op.
"""

from __future__ import annotations

import os
import signal


def kill_armed(at: str) -> bool:
    """Whether the crash tests armed the kill point ``at``."""
    return os.environ.get("NEARDUP_RAY_KILL_AT") == at


def kill_point(at: str) -> None:
    """Crash tests: ``NEARDUP_RAY_KILL_AT=<point>`` kills the driver with SIGKILL there
    (``after-S1``, ``S4``: while the units decide, ``after-S4``, ``S5``: after the first partition
    applied its log, or ``after-S5``)."""
    if kill_armed(at):
        os.kill(os.getpid(), signal.SIGKILL)
