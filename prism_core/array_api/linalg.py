"""`prism_core.array_api.linalg`: the Array API's ``linalg`` extension, each function the Prism
op of its name (``linalg.<name>``, or the main namespace's op where the extension repeats a
function of it, as ``linalg.matmul`` does), made on first use."""

from __future__ import annotations

from prism_core.array_api._extension import extension

#: This extension's function name -> the Prism op that is it.
_OPS, __getattr__ = extension(
    "linalg", ("matmul", "matrix_transpose", "tensordot", "vecdot"), globals()
)

__all__ = sorted(_OPS)


def __dir__() -> list[str]:
    return list(__all__)
