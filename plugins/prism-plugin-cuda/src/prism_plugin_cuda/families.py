"""The ops of the Array API families declared as tables in prism-core (issue 12), and how this
plugin runs each on CuPy.

One dict per family: op -> either the CuPy function it passes through, as a path under ``cupy``
(``"flip"``, ``"linalg.det"``: CuPy's semantics are the standard's there), or
``"prism_plugin_cuda.<module>:<function>"``, a function of this plugin where CuPy's differ or
are missing.  ``ops.py`` finds both by the op's attribute name (``linalg.det`` ->
``linalg_det``); ``variants.py`` makes ``cuda.<op>`` of each.  CuPy-free.
"""

from __future__ import annotations

__all__ = ["FAMILY_FUNCTIONS", "FAMILY_NO_CAN_RUN", "attribute"]

#: Creation and data-type functions.
CREATION: dict[str, str] = {}
#: Manipulation and indexing functions.
MANIPULATION: dict[str, str] = {}
#: Searching, set and sorting functions.
SEARCHING: dict[str, str] = {}
#: Statistical and utility functions.
STATISTICS: dict[str, str] = {}
#: Linear algebra functions and the ``linalg`` extension.
LINALG: dict[str, str] = {}
#: The ``fft`` extension.
FFT: dict[str, str] = {}

#: Every family's ops: op -> CuPy's function (a path under ``cupy``) or ``"module:function"``.
FAMILY_FUNCTIONS: dict[str, str] = {
    **CREATION,
    **MANIPULATION,
    **SEARCHING,
    **STATISTICS,
    **LINALG,
    **FFT,
}

#: The family ops that take no array (creation): they run on the GPU whenever the dispatcher
#: chooses the backend, with no size check (as ``zeros``).
FAMILY_NO_CAN_RUN: frozenset[str] = frozenset()


def attribute(op: str) -> str:
    """The name of ``op``'s function in ``prism_plugin_cuda.ops`` (``linalg.det`` ->
    ``linalg_det``)."""
    return op.replace(".", "_")
