"""Ray itself, imported when a merge first needs it: ``import neardup.ray`` works without Ray
(``read_pages``, the documentation), and a missing Ray says how to install it."""

from __future__ import annotations

from typing import Any


def require_ray() -> Any:
    """The ``ray`` module, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - exercised without ray only
        raise ImportError("neardup.ray needs Ray: pip install 'neardup[ray]'") from e
    return ray
