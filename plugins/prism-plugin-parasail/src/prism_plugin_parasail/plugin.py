"""The hook implementations of the ``parasail`` plugin (entry point ``parasail`` in
``prism.plugins``).

Every hook is cheap: importing this module imports neither parasail nor NumPy, nor does any
hook (the backend imports parasail in ``availability()``; the variants name their functions as
``"prism_plugin_parasail.ops:sw_align_avx2"``, imported when dispatch first chooses one).  The
plugin ships no device descriptions and detects no devices: it computes on the host CPU, which
Prism describes itself, and its variants read that description's CPU flags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import prism_core

from .backend import MIN_PARASAIL, ParasailBackend

if TYPE_CHECKING:
    from prism_core.extending import Backend, Variant

__all__ = ["prism_backends", "prism_plugin_info", "prism_variants"]


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "parasail on the host CPU: Smith-Waterman per instruction set "
        "(AVX2, SSE4.1, NEON), batches on every core",
        "url": "https://github.com/jeffdaily/parasail-python",
        "requires": [f"parasail>={MIN_PARASAIL}"],
    }


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [ParasailBackend()]


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """``genomics.sw_align`` and ``genomics.sw_align_batch`` per instruction set; see
    ``prism_plugin_parasail.variants``.  The ops are prism-plugin-genomics' (a dependency):
    importing ``prism_genomics.ops`` declares them if the genomics plugin has not loaded yet, so
    that these variants find them whatever the order in which plugins load."""
    import prism_genomics.ops  # noqa: F401  (declares the ops)

    from .variants import variants

    return variants()
