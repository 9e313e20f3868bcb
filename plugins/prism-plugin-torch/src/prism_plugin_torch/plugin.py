"""The hook implementations of the ``torch`` plugin (entry point ``torch`` in ``prism.plugins``).

Every hook is cheap: nothing here imports torch; each variant makes its function on its first
call, importing torch and ``array_api_compat.torch`` then.
"""

from __future__ import annotations

import sys
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
        "description": (
            "PyTorch on the host CPU, NVIDIA and AMD GPUs (CUDA, ROCm), Intel GPUs (XPU), Apple "
            "GPUs (MPS) and Huawei Ascend NPUs (torch_npu): every Prism op"
        ),
        "url": "https://pytorch.org",
        "requires": ["torch>=2.1", "array-api-compat>=1.16"],
    }


#: The one backend: dispatch's (``prism_backends``) and the variants' (``prism_variants``),
#: whose functions it makes and keeps.
_BACKEND = TorchBackend()


@prism_core.extending.hookimpl
def prism_backends() -> Sequence[Backend]:
    return [_BACKEND]


#: The detection modules of prism-core this plugin asks, one per vendor whose accelerators
#: torch drives: each has ``detect(library) -> Detection`` and never raises.
DETECTORS = ("nvidia_smi", "amd_smi", "intel_xpu", "apple_silicon", "npu_smi")
#: The tools some of them run: such a module is imported (a few milliseconds of a process's
#: first call) only where one of its tools is on ``PATH`` (Apple's only on macOS, or where
#: it is imported already: a test that sets its platform).
_TOOLS = {"amd_smi": ("amd-smi", "rocm-smi"), "intel_xpu": ("xpu-smi", "sycl-ls")} | {
    "npu_smi": ("npu-smi",)
}


@prism_core.extending.hookimpl
def prism_detect_devices(library: DeviceLibrary) -> Detection:
    """The accelerators of this host that torch has a backend for: NVIDIA GPUs
    (``prism_core.nvidia_smi``), AMD GPUs (``amd_smi``), Intel GPUs (``intel_xpu``), Apple
    GPUs (``apple_silicon``) and Huawei Ascend NPUs (``npu_smi``), each found by its vendor's
    tool, with no torch import and no device context, so that the ``torch.<target>.<op>``
    variants find their devices with this plugin alone (with another plugin asking the same
    tool, each device is present once: ``present_devices`` keeps one per UUID).  The devices
    are concatenated, and the reasons of the modules that found none joined.  A module this
    prism-core lacks is left out (it is imported here, when detection runs, not when the
    plugin loads)."""
    import importlib

    from prism_core.extending import Detection
    from prism_core.host_tools import which

    devices: list[Any] = []
    reasons: list[str] = []
    for name in DETECTORS:
        module_name = f"prism_core.{name}"
        tools = _TOOLS.get(name, ())
        if tools and not any(which(tool) for tool in tools):
            reasons.append(f"{' and '.join(tools)}: not found on PATH")
            continue
        if name == "apple_silicon" and sys.platform != "darwin" and module_name not in sys.modules:
            reasons.append(f"no Apple GPU: not macOS (the platform is {sys.platform!r})")
            continue
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # an older prism-core, without this vendor's detection
            reasons.append(f"{module_name} could not be imported: {exc}")
            continue
        except ImportError as exc:
            reasons.append(f"{module_name} could not be imported: {exc}")
            continue
        try:
            found = module.detect(library)
        except Exception as exc:  # the contract says never raise; one vendor's bug is not all's
            reasons.append(f"{module_name}.detect raised {type(exc).__name__}: {exc}")
            continue
        devices.extend(found.devices)
        if found.reason:
            reasons.append(found.reason)
    return Detection(tuple(devices), "; ".join(reasons))


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[Variant]:
    """``torch.<op>`` on the CPU and ``torch.cuda.<op>`` (NVIDIA and AMD GPUs),
    ``torch.xpu.<op>``, ``torch.mps.<op>`` and ``torch.npu.<op>`` for every op of the standard
    and of the overrides, ``torch.cuda.tensor_core_matmul`` and
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
