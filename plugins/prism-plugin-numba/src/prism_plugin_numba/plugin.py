"""The hook implementations of the ``numba`` plugin (entry point ``numba`` in
``prism.plugins``).

Every hook is cheap: importing this module imports neither Numba nor NumPy, nor does any hook
(the backend imports Numba in ``availability()``; the variants name their functions as
``"prism_plugin_numba.ops:sw_align"``, imported when dispatch first chooses one).  The plugin
ships no device descriptions and detects no devices: it computes on the host CPU.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import prism_core

from .backend import MIN_NUMBA, NumbaBackend

if TYPE_CHECKING:
    from prism_core.extending import Backend, Variant

__all__ = ["prism_backends", "prism_plugin_info", "prism_variants"]


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "Numba on the host CPU: a JIT-compiled Smith-Waterman (Gotoh) kernel, "
        "cached on disk, batches on every core",
        "url": "https://numba.pydata.org",
        "requires": [f"numba>={MIN_NUMBA}"],
    }


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [NumbaBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """``genomics.sw_align`` and ``genomics.sw_align_batch``; see
    ``prism_plugin_numba.variants``.  The ops are prism-plugin-genomics' (a dependency):
    importing ``prism_genomics.ops`` declares them if the genomics plugin has not loaded yet, so
    that these variants find them whatever the order in which plugins load."""
    import prism_genomics.ops  # noqa: F401  (declares the ops)

    from .variants import variants

    return variants()
