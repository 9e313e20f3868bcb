"""`prism_core.random`: the random operations, dispatched like every op."""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    from prism_core.kernel.dispatch.ops import OperationError, get_op

    if name.startswith("_"):
        raise AttributeError(name)
    try:
        op = get_op(f"random.{name}").function
    except OperationError as exc:
        raise AttributeError(str(exc)) from None
    globals()[name] = op
    return op


def __dir__() -> list[str]:
    from prism_core.kernel.dispatch.ops import all_ops

    return sorted(n.split(".", 1)[1] for n in all_ops() if n.startswith("random."))
