"""Checks of the arguments the Python layer takes itself (batch sizes, orders, page rows), with
neardup's exceptions: ``InvalidTypeError`` (also a ``TypeError``) for a value of the wrong type,
``InvalidArgumentError`` (also a ``ValueError``) for a value out of range; the message names the
argument. The extension checks its own arguments the same way (``neardup-py/src/args.rs``)."""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence

from ._errors import InvalidArgumentError, InvalidTypeError


def integer(value: Any, name: str, minimum: Optional[int] = None) -> int:
    """``value`` as an int (anything with ``__index__``, not a bool), at least ``minimum``."""
    if isinstance(value, bool):
        raise InvalidTypeError(f"{name} must be an int, not bool")
    try:
        n = operator.index(value)
    except TypeError:
        raise InvalidTypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if minimum is not None and n < minimum:
        raise InvalidArgumentError(f"{name} must be at least {minimum}, not {n}")
    return n


def choice(value: Any, name: str, choices: Sequence[str]) -> str:
    """``value``, one of the strings ``choices``."""
    shown = " or ".join(f'"{c}"' for c in choices)
    if not isinstance(value, str):
        raise InvalidTypeError(f"{name} must be {shown}, not {type(value).__name__}")
    if value not in choices:
        raise InvalidArgumentError(f"{name} must be {shown}, not {value!r}")
    return value


def batch_order(order: Any, order_scope: Any) -> None:
    """Checks ``insert_many``'s ``order`` (``"input"``, the default, or ``"fingerprints"``) and
    ``order_scope`` (``"window"`` or ``"batch"``): ``"batch"`` names a sort of each whole batch
    by fingerprint count, so it is refused with input order rather than ignored."""
    choice(order, "order", ("input", "fingerprints"))
    choice(order_scope, "order_scope", ("window", "batch"))
    if order == "input" and order_scope == "batch":
        raise InvalidArgumentError(
            'order_scope="batch" sorts each whole batch by fingerprint count: give it with '
            'order="fingerprints" (the default order, "input", is not sorted)'
        )
