"""`prism_core.array_api.linalg`: the Array API's ``linalg`` extension, each function the Prism op
of its name (``linalg.<name>``, or the main namespace's op where the extension repeats a function
of it, as ``linalg.matmul`` does), made on first use."""

from __future__ import annotations

from typing import Any

from prism_core._knowledge.families import TABLE_OPS

#: This extension's function name -> the Prism op that is it.
_OPS: dict[str, str] = {
    **{
        row.name.partition(".")[2]: row.name
        for row in TABLE_OPS
        if row.standard and row.name.startswith("linalg.")
    },
    **{name: name for name in ("matmul", "matrix_transpose", "tensordot", "vecdot")},
    **{
        name: f"linalg.{name}"
        for name in ("cholesky", "eigh", "inv", "matrix_norm", "qr", "solve", "svd", "vector_norm")
    },
}

__all__ = sorted(_OPS)


def __getattr__(name: str) -> Any:
    op = _OPS.get(name)
    if op is None:
        raise AttributeError(
            f"module 'prism_core.array_api.linalg' has no attribute {name!r}: it has "
            f"{', '.join(sorted(_OPS))}"
        )
    from prism_core._dispatch.ops import get_op

    value = get_op(op).function
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
