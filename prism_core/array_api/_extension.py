"""What the standard's extensions (``prism_core.array_api.linalg``, ``.fft``) share: their
functions, the Prism ops of the standard's functions, found by name on first use."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prism_core.kernel.records.standard import STANDARD_OPS

__all__ = ["extension"]


def extension(
    name: str, repeated: Iterable[str], namespace: dict[str, Any]
) -> tuple[dict[str, str], Callable[[str], Any]]:
    """``(ops, __getattr__)`` of the extension ``name``: its function names -> the Prism ops
    that are they (the standard's ``name.*`` functions, and the main namespace's functions the
    extension ``repeated``, as ``linalg.matmul``), and the module's ``__getattr__``, which makes
    an op's function on first use and keeps it in ``namespace`` (the module's globals)."""
    ops: dict[str, str] = {
        **{
            function.partition(".")[2]: op
            for function, op in STANDARD_OPS.items()
            if function.startswith(f"{name}.")
        },
        **{function: function for function in repeated},
    }

    def __getattr__(attribute: str) -> Any:
        op = ops.get(attribute)
        if op is None:
            raise AttributeError(
                f"module 'prism_core.array_api.{name}' has no attribute {attribute!r}: it has "
                f"{', '.join(sorted(ops))}"
            )
        from prism_core.kernel.dispatch.ops import get_op

        value = get_op(op).function
        namespace[attribute] = value
        return value

    return ops, __getattr__
