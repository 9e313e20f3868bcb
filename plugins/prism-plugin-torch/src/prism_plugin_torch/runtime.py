"""Whether torch can use an accelerator here, at run time: the probes behind the backend's
``can_drive`` once the build has the device's backend (``prism_plugin_torch.build``).  Each
imports torch (and torch_npu for the NPU), so it is asked only where a device of that kind is
present or named, and once per process: no runtime appears while Python runs.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

import prism_core.backend_kit as backend_kit

from . import build as _build

__all__ = ["cuda_unavailable", "import_torch_npu", "target_unavailable"]


@functools.lru_cache(maxsize=1)
def cuda_unavailable() -> str | None:
    """``None`` when torch can use a CUDA GPU here, else why not, in torch's words where it has
    them (``"torch 2.13.0+cpu is a CPU-only build (torch.version.cuda is None)"``).  Asked once
    per process: a CUDA runtime does not appear while Python runs."""
    torch, why = backend_kit.import_framework("torch")
    if torch is None:
        return f"torch {why}"
    version = getattr(torch, "__version__", "(unknown version)")
    try:
        built = getattr(torch, "version", None)
        if getattr(built, "cuda", None) is None and getattr(built, "hip", None) is None:
            return (
                f"torch {version} is a CPU-only build (torch.version.cuda and "
                "torch.version.hip are None)"
            )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            available = bool(torch.cuda.is_available())
        if available:
            return None
        if caught:  # "CUDA initialization: The NVIDIA driver on your system is too old ..."
            return f"torch {version}: {backend_kit.first_line(RuntimeWarning(caught[0].message))}"
        try:
            torch.cuda.init()
        except Exception as exc:  # "Found no NVIDIA driver on your system. ..."
            return f"torch {version}: {backend_kit.first_line(exc)}"
        return f"torch {version} finds no CUDA device (torch.cuda.device_count() is 0)"
    except Exception as exc:
        return f"torch {version}: {type(exc).__name__}: {backend_kit.first_line(exc)}"


def _runtime(name: str, probe: Callable[[Any], str | None]) -> str | None:
    """``probe(torch)``, with torch imported here: why ``name`` cannot be used, or ``None``;
    an import failure or an exception of torch's is the reason."""
    torch, why = backend_kit.import_framework("torch")
    if torch is None:
        return f"torch {why}"
    version = getattr(torch, "__version__", "(unknown version)")
    try:
        found = probe(torch)
    except Exception as exc:
        return f"torch {version}: {type(exc).__name__}: {backend_kit.first_line(exc)}"
    return None if found is None else f"torch {version} {found}"


def _xpu(torch: Any) -> str | None:
    if getattr(getattr(torch, "version", None), "xpu", None) is None:
        return "is not an XPU build (torch.version.xpu is None)"
    if not torch.xpu.is_available():
        return "finds no Intel GPU (torch.xpu.is_available() is False: no device, or no driver)"
    return None


def _mps(torch: Any) -> str | None:
    if not torch.backends.mps.is_built():
        return "is not built with MPS (torch.backends.mps.is_built() is False)"
    if not torch.backends.mps.is_available():
        return "cannot use MPS (torch.backends.mps.is_available() is False: macOS 12.3 or later)"
    return None


def import_torch_npu() -> Any:
    """torch_npu, imported: it registers ``torch.npu`` and the device type ``"npu"`` with
    torch.  Its absence is an ``ImportError`` naming what to install."""
    import importlib

    try:
        return importlib.import_module("torch_npu")
    except ImportError as exc:
        raise ImportError(
            f"torch's npu device needs torch_npu ({backend_kit.first_line(exc)}); install "
            f"{_build.INSTALL['huawei']}"
        ) from exc


def _npu(torch: Any) -> str | None:
    try:
        import_torch_npu()
    except ImportError as exc:
        return f"has no torch_npu ({backend_kit.first_line(exc.__cause__ or exc)})"
    npu = getattr(torch, "npu", None)
    if npu is None or not npu.is_available():
        return "finds no Ascend NPU (torch.npu.is_available() is False: no device, or no driver)"
    return None


_PROBES: Mapping[str, Callable[[Any], str | None]] = MappingProxyType(
    {"xpu": _xpu, "mps": _mps, "npu": _npu}
)


def target_unavailable(name: str) -> str | None:
    """``None`` when torch can use target ``name`` (``"cuda"``, ``"xpu"``, ``"mps"``,
    ``"npu"``) here, else why not; imports torch (and torch_npu for ``"npu"``).  Asked once
    per process and target: :func:`cuda_unavailable` for ``"cuda"`` (CUDA or ROCm), the
    others cached alike, as no runtime appears while Python runs."""
    if name == "cuda":
        return cuda_unavailable()
    return _other_unavailable(name)


@functools.cache
def _other_unavailable(name: str) -> str | None:
    probe = _PROBES.get(name)
    if probe is None:
        return f"torch has no device type {name!r} here"
    return _runtime(name, probe)
