"""Which Prism ops are functions of the Python Array API standard (2024.12), and by what name.

:data:`STANDARD_OPS` maps each function of the standard, by its name in the standard's namespace
(``"pow"``, ``"linalg.solve"``, ``"fft.rfft"``), to the Prism op that is it (``"power"``,
``"linalg.solve"``).  The namespace backends of ``prism_core.backend_kit`` read it to know which
ops a standard namespace computes; the rest of Prism's ops (``dot``, ``einsum``,
``random.normal``, ...) are NumPy's or Prism's own.  A pure module: it reads the op tables.
"""

from __future__ import annotations

from prism_core._knowledge.elementwise import STANDARD_ELEMENTWISE
from prism_core._knowledge.families import TABLE_OPS

__all__ = ["STANDARD_OPS"]

#: The standard's functions the catalogue declares itself (the others are the tables' rows).
_DECLARED = (
    "asarray", "zeros", "ones", "full", "from_dlpack", "where", "argmax", "argmin", "sort",
    "sum", "mean", "std", "min", "max", "cumulative_sum", "reshape", "moveaxis",
    "expand_dims", "stack", "concat", "matmul",
    "linalg.cholesky", "linalg.eigh", "linalg.inv", "linalg.matrix_norm", "linalg.qr",
    "linalg.solve", "linalg.svd", "linalg.vector_norm",
    "fft.fft", "fft.ifft", "fft.rfft",
)  # fmt: skip

#: The standard's function name (extensions' with their prefix) -> the Prism op.
STANDARD_OPS: dict[str, str] = {
    **STANDARD_ELEMENTWISE,
    **{name: name for name in _DECLARED},
    **{row.name: row.name for row in TABLE_OPS if row.standard},
}
