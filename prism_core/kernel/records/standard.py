"""Which Prism ops are functions of the Python Array API standard (2024.12), and by what name.

:data:`STANDARD_OPS` maps each function of the standard, by its name in the standard's namespace
(``"pow"``, ``"linalg.solve"``, ``"fft.rfft"``), to the Prism op that is it (``"power"``,
``"linalg.solve"``).  The namespace backends of ``prism_core.backend_kit`` read it to know which
ops a standard namespace computes; the rest of Prism's ops (``dot``, ``einsum``,
``random.normal``, ...) are NumPy's or Prism's own.  A pure module: it reads the op records.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from prism_core.kernel.records.families import RECORDS

__all__ = ["STANDARD_OPS"]

#: The standard's function name (extensions' with their prefix) -> the Prism op.
STANDARD_OPS: Mapping[str, str] = MappingProxyType(
    {r.standard_name: r.name for r in RECORDS if r.standard_name is not None}
)
