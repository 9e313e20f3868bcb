"""Prism plugin for Smith-Waterman local alignment on the host CPU with Numba.

* ``prism_plugin_numba.plugin``: the hook implementations (entry point ``numba`` in the group
  ``prism.plugins``);
* ``prism_plugin_numba.backend``: :class:`~prism_plugin_numba.backend.NumbaBackend`, the
  ``numba`` backend (NumPy arrays on the host CPU; Numba is imported only when it is used);
* ``prism_plugin_numba.variants``: the variants of ``genomics.sw_align`` and
  ``genomics.sw_align_batch`` and their per-call checks;
* ``prism_plugin_numba.kernels``: the JIT-compiled Gotoh kernels (compiled once, cached on
  disk) and the batch threads;
* ``prism_plugin_numba.ops``: the variants' functions, returning Prism's result types.

Importing this package, or any module of it but ``kernels`` and ``ops``, imports neither Numba
nor NumPy.
"""

from __future__ import annotations

from prism_core import PrismWarning

__version__ = "0.1.0"

__all__ = ["NumbaCacheWarning", "__version__"]


class NumbaCacheWarning(PrismWarning):
    """The kernels' compiled cache under Prism's cache directory could not be used: what is
    wrong (a damaged file, a directory that cannot be written) and what the plugin did instead
    (moved the damaged files aside, compiled without the cache).  The computation goes on."""
