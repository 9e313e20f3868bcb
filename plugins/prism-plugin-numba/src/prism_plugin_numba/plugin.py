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
    from prism_core import Backend, Variant

__all__ = ["genomics_ops", "prism_backends", "prism_plugin_info", "prism_variants"]


@prism_core.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "Numba on the host CPU: a JIT-compiled Smith-Waterman (Gotoh) kernel, "
        "cached on disk, batches on every core",
        "url": "https://numba.pydata.org",
        "requires": [f"numba>={MIN_NUMBA}"],
    }


@prism_core.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [NumbaBackend()]


def genomics_ops() -> set[str]:
    """The genomics ops the installed prism-core declares (older ones had none: their builtin
    ``genomics`` plugin declares them at discovery, before any entry point loads): a variant of
    an op that does not exist would fail the whole plugin."""
    return {op for op in prism_core.all_ops() if op.startswith("genomics.")}


@prism_core.hookimpl
def prism_variants() -> Sequence[Variant]:
    """``genomics.sw_align`` and ``genomics.sw_align_batch``; see
    ``prism_plugin_numba.variants``."""
    from .variants import variants

    return variants(genomics_ops())
