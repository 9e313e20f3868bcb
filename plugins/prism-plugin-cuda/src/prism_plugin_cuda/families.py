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
CREATION: dict[str, str] = {
    "arange": "prism_plugin_cuda.creation:arange",
    "linspace": "prism_plugin_cuda.creation:linspace",
    "eye": "prism_plugin_cuda.creation:eye",
    "empty": "prism_plugin_cuda.creation:empty",
    "empty_like": "prism_plugin_cuda.creation:empty_like",
    "zeros_like": "prism_plugin_cuda.creation:zeros_like",
    "ones_like": "prism_plugin_cuda.creation:ones_like",
    "full_like": "prism_plugin_cuda.creation:full_like",
    "meshgrid": "prism_plugin_cuda.creation:meshgrid",
    "tril": "prism_plugin_cuda.creation:tril",
    "triu": "prism_plugin_cuda.creation:triu",
    "astype": "prism_plugin_cuda.creation:astype",
}
#: Manipulation and indexing functions.
MANIPULATION: dict[str, str] = {
    "broadcast_to": "broadcast_to",
    "flip": "flip",
    "roll": "roll",
    "tile": "tile",
    # CuPy's differ: a list, no array of counts, indices out of range wrapped, missing.
    **{
        op: f"prism_plugin_cuda.manipulation:{op}"
        for op in (
            "broadcast_arrays", "permute_dims", "repeat", "squeeze", "unstack", "take",
            "take_along_axis",
        )
    },
}  # fmt: skip
#: Searching, set and sorting functions.
SEARCHING: dict[str, str] = {
    "argsort": "prism_plugin_cuda.searching:argsort",
    "nonzero": "prism_plugin_cuda.searching:nonzero",
    "searchsorted": "prism_plugin_cuda.searching:searchsorted",
    "count_nonzero": "prism_plugin_cuda.searching:count_nonzero",
    "unique_all": "prism_plugin_cuda.searching:unique_all",
    "unique_counts": "prism_plugin_cuda.searching:unique_counts",
    "unique_inverse": "prism_plugin_cuda.searching:unique_inverse",
    "unique_values": "prism_plugin_cuda.searching:unique_values",
}
#: Statistical and utility functions.
STATISTICS: dict[str, str] = {
    "prod": "prism_plugin_cuda.statistics:prod",
    "var": "prism_plugin_cuda.statistics:var",
    "all": "all",
    "any": "any",
    "cumulative_prod": "prism_plugin_cuda.statistics:cumulative_prod",
    "diff": "prism_plugin_cuda.statistics:diff",
}
#: Linear algebra functions and the ``linalg`` extension.
LINALG: dict[str, str] = {
    "linalg.det": "linalg.det",
    "linalg.eigvalsh": "linalg.eigvalsh",
    **{
        op: f"prism_plugin_cuda.linalg:{op.rpartition('.')[2]}"
        for op in (
            "matrix_transpose", "tensordot", "vecdot", "linalg.cross", "linalg.diagonal",
            "linalg.matrix_power", "linalg.matrix_rank", "linalg.outer", "linalg.pinv",
            "linalg.slogdet", "linalg.svdvals", "linalg.trace",
        )
    },
}  # fmt: skip
#: The ``fft`` extension.
FFT: dict[str, str] = {
    "fft.irfft": "fft.irfft",
    "fft.hfft": "fft.hfft",
    # CuPy's would read s without axes, drop complex input's imaginary part, take no dtype,
    # fail on a 0-d array.
    **{
        f"fft.{name}": f"prism_plugin_cuda.fft:fft_{name}"
        for name in (
            "fftn", "ifftn", "rfftn", "irfftn", "ihfft", "fftfreq", "rfftfreq", "fftshift",
            "ifftshift",
        )
    },
}  # fmt: skip

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
FAMILY_NO_CAN_RUN: frozenset[str] = frozenset(
    {"arange", "linspace", "eye", "empty"}  # creation
    | {"fft.fftfreq", "fft.rfftfreq"}  # fft
)


def attribute(op: str) -> str:
    """The name of ``op``'s function in ``prism_plugin_cuda.ops`` (``linalg.det`` ->
    ``linalg_det``)."""
    return op.replace(".", "_")
