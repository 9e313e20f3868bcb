"""Prism plugin for PyTorch: one backend, ``torch``, on the host CPU and on the accelerators
torch has a backend for (NVIDIA and AMD GPUs through CUDA or ROCm, Intel GPUs through XPU, Apple
GPUs through MPS, Huawei Ascend NPUs through torch_npu).

* ``prism_plugin_torch.plugin``: the hook implementations (entry point ``torch`` in the group
  ``prism.plugins``), detection included (every vendor's detection module of prism-core);
* ``prism_plugin_torch.backend``: :class:`~prism_plugin_torch.backend.TorchBackend` (torch is
  imported by its methods, never when the plugin is discovered);
* ``prism_plugin_torch.build``: what the installed torch was built for (CUDA, ROCm, XPU, MPS,
  torch_npu), read from its files without importing it, and what each vendor's devices need;
* ``prism_plugin_torch.runtime``: whether torch can use an accelerator here, at run time;
* ``prism_plugin_torch.variants``: the variants, ``torch.<op>`` on the CPU and
  ``torch.cuda.<op>``, ``torch.xpu.<op>``, ``torch.mps.<op>``, ``torch.npu.<op>`` on the
  accelerators, and their per-call checks;
* ``prism_plugin_torch.overrides``: where ``array_api_compat.torch`` is not NumPy's semantics,
  and the ops beyond the standard (imported when a variant first runs);
* ``prism_plugin_torch.numerics`` (autograd, vmap) and ``prism_plugin_torch.genomics``.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
