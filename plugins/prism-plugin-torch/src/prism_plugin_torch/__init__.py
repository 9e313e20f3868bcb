"""Prism plugin for PyTorch: one backend, ``torch``, on the host CPU and on NVIDIA GPUs.

* ``prism_plugin_torch.plugin``: the hook implementations (entry point ``torch`` in the group
  ``prism.plugins``);
* ``prism_plugin_torch.backend``: :class:`~prism_plugin_torch.backend.TorchBackend` (torch is
  imported by its methods, never when the plugin is discovered);
* ``prism_plugin_torch.variants``: the variants, ``torch.<op>`` on the CPU and
  ``torch.cuda.<op>`` on NVIDIA GPUs, and their per-call checks;
* ``prism_plugin_torch.overrides``: where ``array_api_compat.torch`` is not NumPy's semantics,
  and the ops beyond the standard (imported when a variant first runs);
* ``prism_plugin_torch.numerics`` (autograd, vmap) and ``prism_plugin_torch.genomics``.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
