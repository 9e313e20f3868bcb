"""The hook implementations of the ``torch`` plugin (entry point ``torch`` in ``prism.plugins``).

Every hook is cheap: nothing here imports torch; each variant makes its function on its first
call, importing torch and ``array_api_compat.torch`` then.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import prism_core

from .backend import TorchBackend

if TYPE_CHECKING:
    from prism_core.extending import Backend, Detection, Variant
    from prism_core.hardware import DeviceLibrary

__all__ = ["prism_backends", "prism_detect_devices", "prism_plugin_info", "prism_variants"]


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "PyTorch on the host CPU and on NVIDIA GPUs (CUDA): every Prism op",
        "url": "https://pytorch.org",
        "requires": ["torch>=2.1", "array-api-compat>=1.16"],
    }


#: The one backend: dispatch's (``prism_backends``) and the variants' (``prism_variants``),
#: whose functions it makes and keeps.
_BACKEND = TorchBackend()


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [_BACKEND]


@prism_core.extending.hookimpl
def prism_detect_devices(library: DeviceLibrary) -> Detection:
    """The NVIDIA GPUs of this host (``nvidia-smi``, no torch import, no CUDA context), so that
    ``torch.cuda.<op>`` finds its devices with this plugin alone; with the cuda plugin as well,
    each GPU is present once (``present_devices`` keeps one per UUID)."""
    from prism_core.nvidia_smi import detect

    return detect(library)


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """``torch.<op>`` on the CPU and ``torch.cuda.<op>`` on NVIDIA GPUs for every op of the
    standard and of the overrides, ``torch.cuda.tensor_core_matmul`` and
    ``torch.cuda.genomics.sw_align_batch``; see ``prism_plugin_torch.variants``.

    Only for the ops declared: a variant of an op that is not would fail the whole plugin.  The
    alignment op is prism-plugin-genomics', where that is installed: importing
    ``prism_genomics.ops`` declares it if the genomics plugin has not loaded yet, whatever the
    order in which plugins load; without it, the GPU batch kernel has no op to serve.
    """
    import contextlib

    with contextlib.suppress(ImportError):
        import prism_genomics.ops  # noqa: F401  (declares genomics.sw_align_batch)

    from .variants import variants

    return variants(_BACKEND, set(prism_core.all_ops()))
