"""The ops of the Array API families declared as tables in prism-core (issue 12) that this plugin
has variants for, and where each implementation is.

One dict per family: op -> ``"<module>:<attribute>"``, a function of
``prism_plugin_torch.<module>``.  ``variants.py`` makes two variants of each, as of every op:
``torch.<op>`` runs ``<module>.<attribute>`` on the host CPU, and ``torch.cuda.<op>`` runs
``<module>.gpu.<attribute>`` on the GPU (each family module has a ``gpu`` namespace of the same
functions on the GPU).  Torch-free: building the variants imports nothing.
"""

from __future__ import annotations

__all__ = ["FAMILY_FUNCTIONS"]

#: Creation and data-type functions (``prism_plugin_torch.creation``).
CREATION: dict[str, str] = {
    "arange": "creation:arange",
    "linspace": "creation:linspace",
    "eye": "creation:eye",
    "empty": "creation:empty",
    "empty_like": "creation:empty_like",
    "zeros_like": "creation:zeros_like",
    "ones_like": "creation:ones_like",
    "full_like": "creation:full_like",
    "meshgrid": "creation:meshgrid",
    "tril": "creation:tril",
    "triu": "creation:triu",
    "astype": "creation:astype",
}
#: Manipulation and indexing functions (``prism_plugin_torch.manipulation``).
MANIPULATION: dict[str, str] = {
    op: f"manipulation:{op}"
    for op in (
        "broadcast_arrays", "broadcast_to", "flip", "permute_dims", "repeat", "roll", "squeeze",
        "tile", "unstack", "take", "take_along_axis",
    )
}  # fmt: skip
#: Searching, set and sorting functions (``prism_plugin_torch.searching``).
SEARCHING: dict[str, str] = {
    "argsort": "searching:argsort",
    "nonzero": "searching:nonzero",
    "searchsorted": "searching:searchsorted",
    "count_nonzero": "searching:count_nonzero",
    "unique_all": "searching:unique_all",
    "unique_counts": "searching:unique_counts",
    "unique_inverse": "searching:unique_inverse",
    "unique_values": "searching:unique_values",
}
#: Statistical and utility functions (``prism_plugin_torch.statistics``).
STATISTICS: dict[str, str] = {
    "prod": "statistics:prod",
    "var": "statistics:var",
    "all": "statistics:all_",
    "any": "statistics:any_",
    "cumulative_prod": "statistics:cumulative_prod",
    "diff": "statistics:diff",
}
#: Linear algebra functions and the ``linalg`` extension (``prism_plugin_torch.linalg``).
LINALG: dict[str, str] = {
    "matrix_transpose": "linalg:matrix_transpose",
    "tensordot": "linalg:tensordot",
    "vecdot": "linalg:vecdot",
    **{
        f"linalg.{name}": f"linalg:{name}"
        for name in (
            "cross", "det", "diagonal", "eigvalsh", "matrix_power", "matrix_rank", "outer",
            "pinv", "slogdet", "svdvals", "trace",
        )
    },
}  # fmt: skip
#: The ``fft`` extension (``prism_plugin_torch.fft``).
FFT: dict[str, str] = {
    f"fft.{name}": f"fft:{name}"
    for name in (
        "fftn", "ifftn", "rfftn", "irfftn", "irfft", "hfft", "ihfft",
        "fftfreq", "rfftfreq", "fftshift", "ifftshift",
    )
}  # fmt: skip

#: Every family's ops: op -> ``"<module>:<attribute>"``.
FAMILY_FUNCTIONS: dict[str, str] = {
    **CREATION,
    **MANIPULATION,
    **SEARCHING,
    **STATISTICS,
    **LINALG,
    **FFT,
}
