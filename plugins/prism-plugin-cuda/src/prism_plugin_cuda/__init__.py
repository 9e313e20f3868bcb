"""Prism plugin for NVIDIA GPUs.

* ``prism_plugin_cuda.plugin``: the hook implementations (entry point ``cuda`` in the group
  ``prism.plugins``);
* ``prism_plugin_cuda.backend``: :class:`CudaBackend` (``cuda``, alias ``cupy``), a namespace
  backend on CuPy (not imported until the backend is used): a variant of every op of Prism's
  catalogue, and ``can_run``'s policy;
* ``prism_plugin_cuda.ops``: the functions where CuPy's own differs from the NumPy reference;
* ``prism_plugin_cuda.detect``: detection of the GPUs of this host through ``nvidia-smi``;
* ``prism_plugin_cuda/hardware/``: device descriptions of NVIDIA boards that Prism does not ship.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
