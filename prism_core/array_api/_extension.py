"""What the standard's extensions (``prism_core.array_api.linalg``, ``.fft``) share: their
functions, the Prism ops of the tables' rows, found by name on first use."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from prism_core._knowledge.families import TABLE_OPS

__all__ = ["extension"]


def extension(
    name: str, older: Iterable[str], repeated: Iterable[str], namespace: dict[str, Any]
) -> tuple[dict[str, str], Callable[[str], Any]]:
    """``(ops, __getattr__)`` of the extension ``name``: its function names -> the Prism ops
    that are they (the tables' ``name.*`` rows, the ``older`` ops declared before the tables,
    and the main namespace's functions the extension ``repeated``, as ``linalg.matmul``), and
    the module's ``__getattr__``, which makes an op's function on first use and keeps it in
    ``namespace`` (the module's globals)."""
    ops: dict[str, str] = {
        **{
            row.name.partition(".")[2]: row.name
            for row in TABLE_OPS
            if row.standard and row.name.startswith(f"{name}.")
        },
        **{function: f"{name}.{function}" for function in older},
        **{function: function for function in repeated},
    }

    def __getattr__(attribute: str) -> Any:
        op = ops.get(attribute)
        if op is None:
            raise AttributeError(
                f"module 'prism_core.array_api.{name}' has no attribute {attribute!r}: it has "
                f"{', '.join(sorted(ops))}"
            )
        from prism_core._dispatch.ops import get_op

        value = get_op(op).function
        namespace[attribute] = value
        return value

    return ops, __getattr__
