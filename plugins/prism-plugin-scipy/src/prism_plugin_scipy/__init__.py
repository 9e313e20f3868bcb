"""Prism plugin for the host CPU through SciPy.

* ``prism_plugin_scipy.plugin``: the hook implementations (entry point ``scipy`` in the group
  ``prism.plugins``);
* ``prism_plugin_scipy.backend``: :class:`~prism_plugin_scipy.backend.ScipyBackend`, the
  ``scipy`` backend (NumPy arrays on the host CPU; SciPy is imported only when it is used);
* ``prism_plugin_scipy.variants``: which ops the plugin implements and, per call, which calls
  it takes (``can_run``), with the measured thresholds;
* ``prism_plugin_scipy.ops``: the implementations, on SciPy's LAPACK, BLAS, FFT and signal
  modules.

Importing this package, or any module of it but ``ops``, imports neither SciPy nor NumPy.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
