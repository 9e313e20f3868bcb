"""The variants of the ``torch`` plugin (its ``prism_variants`` hook) and their per-call checks.

The backend makes ``torch.<op>`` (``{"kind": "cpu"}``, priority 0; :func:`host_check` declines
tensors on an accelerator) and, priority 10, one variant per accelerator target with the
device type torch gives it: ``torch.cuda.<op>`` (``{"vendor": ["nvidia", "amd"], "kind":
"gpu"}``: an NVIDIA GPU on a CUDA build, an AMD GPU on a ROCm build, where HIP keeps CUDA's
names; the backend's ``can_drive`` tells which the installed build has), ``torch.xpu.<op>``
(``{"vendor": "intel", "kind": "gpu"}``), ``torch.mps.<op>`` (``{"vendor": "apple", "kind":
"gpu"}``; the backend holds no float64 or complex128 there) and ``torch.npu.<op>``
(``{"vendor": "huawei", "kind": "npu"}``, with torch_npu).  :func:`accelerator_check` takes
tensors on its device type, and any call while a device is named in scope: data in host
memory, and creation without a named device, stay with ``torch.<op>``, so that data never
moves unasked.  Both checks are the variants' ``placement``: plans are keyed by where tensors
live (the backend's ``where``), so dispatch asks them once per plan.  :func:`variants` adds
``torch.cuda.tensor_core_matmul`` (priority 20, NVIDIA only, where the device description says
a feature accelerates matmul in the call's dtype: cuBLAS takes the tensor cores for fp16, bf16,
fp64 from Ampere on, and fp32 only as TF32 where ``torch.backends.cuda.matmul.allow_tf32`` is
set, a setting this plugin never changes) and ``torch.cuda.genomics.sw_align_batch``.  Building
them imports neither torch nor the overrides.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection
from typing import Any

import prism_core
from prism_core.backend_kit import array_arguments
from prism_core.extending import Variant

__all__ = ["accelerator_check", "gpu_check", "host_check", "tensor_core_check", "variants"]

#: How the reasons name each target's device.
_LABELS = {"cuda": "the GPU", "xpu": "the XPU", "mps": "the MPS device", "npu": "the NPU"}
_RUNTIMES = {"cuda": "CUDA", "xpu": "XPU", "mps": "MPS", "npu": "torch_npu"}
#: The vendor of each target's devices (``cuda``'s is AMD on a ROCm build).
_VENDORS = {"cuda": "nvidia", "xpu": "intel", "mps": "apple", "npu": "huawei"}


def _on(array: Any) -> str | None:
    """The accelerator device type (``"cuda"``, ``"xpu"``, ...) a tensor lives on; ``None`` for
    a tensor on the CPU and for what is no tensor (NumPy arrays and ArraySpecs are in host
    memory, or nowhere).  ``is_cuda`` first: the common case, read without torch's module."""
    if getattr(array, "is_cuda", False) is True:
        return "cuda"
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(array, torch.Tensor):
        return None
    kind = str(array.device.type)
    return kind if kind in _LABELS else None  # the CPU, or "meta": no device of ours


def _where(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The first accelerator a tensor of the call (or of a list or tuple argument) is on."""
    for a in (*args, *kwargs.values()):
        found = _on(a)
        if found is None and type(a) in (list, tuple):
            found = next((k for k in map(_on, a) if k is not None), None)
        if found is not None:
            return found
    return None


def host_check(op: str) -> Callable[..., bool | str]:
    """``placement`` of ``torch.<op>``: every call but those with tensors on an accelerator."""

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        found = _where(args, kwargs)
        if found is None:
            return True
        return f"the data is on {_LABELS.get(found, found)}; torch.{found}.{op} runs it there"

    can_run.__qualname__ = can_run.__name__ = f"on_host[{op}]"
    return can_run


def accelerator_check(op: str, target: str = "cuda") -> Callable[..., bool | str]:
    """``placement`` of ``torch.<target>.<op>``: tensors on that device type, or a device named
    in scope; data in host memory, and creation without a named device, stay with
    ``torch.<op>``, and tensors on another accelerator with that one's variant."""
    in_host_memory = f"the data is in host memory; torch.{op} runs it there"
    no_device = (
        f"no device is named: torch.{op} makes its tensors on the CPU, torch's default device "
        f"(name {_LABELS.get(target, target)} with prism.device(...) to make them there)"
    )

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        arrays = array_arguments(args, kwargs)
        found = _where(tuple(arrays), {})
        if found == target:
            return True
        if found is not None:
            return f"the data is on {_LABELS.get(found, found)}; torch.{found}.{op} runs it there"
        if prism_core.current_scope().device is not None:
            return True  # the caller named the device: host data goes there
        if arrays:
            return in_host_memory
        from . import backend, build

        # What the backend's can_drive would say of this target's devices: the build first
        # (read from torch's files), then the run time.
        vendor = _VENDORS.get(target, "")
        if target == "cuda" and build.torch_build().hip is not None:
            vendor = "amd"
        why = build.lacks(vendor)
        if why is not None:
            return why
        why = backend.target_unavailable(target)
        runtime = "ROCm" if vendor == "amd" else _RUNTIMES.get(target, target)
        return f"{runtime} is not available: {why}" if why is not None else no_device

    can_run.__qualname__ = can_run.__name__ = f"on_{target}[{op}]"
    return can_run


def gpu_check(op: str) -> Callable[..., bool | str]:
    """``placement`` of ``torch.cuda.<op>`` (:func:`accelerator_check` of the cuda target)."""
    return accelerator_check(op, "cuda")


def tensor_core_check() -> Callable[..., bool | str]:
    """``can_run`` of ``torch.cuda.tensor_core_matmul`` (whose placement is
    ``gpu_check("matmul")``): floating-point arrays only.  The tensor cores also multiply int8,
    but ``torch.matmul`` has no integer product on the GPU (``torch.cuda.matmul`` computes it on
    the CPU), so an integer call is not shown as running on them."""

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        for a in array_arguments(args, kwargs):
            try:
                found = prism_core.dtype(a.dtype)
            except (TypeError, ValueError):
                continue
            if found.kind not in "fc":
                return (
                    f"torch.matmul runs no {found.name} product on the tensor cores; "
                    "torch.cuda.matmul computes it"
                )
        return True

    can_run.__qualname__ = can_run.__name__ = "on_tensor_cores[matmul]"
    return can_run


def variants(backend: Any, ops: Collection[str] | None = None) -> list[Variant]:
    """``backend``'s variants (``torch.<op>``, ``torch.cuda.<op>``) of the ops in ``ops``,
    ``torch.cuda.tensor_core_matmul`` and ``torch.cuda.genomics.sw_align_batch``."""
    out = backend.variants(ops)
    if ops is None or "matmul" in ops:
        cuda = next(v for v in out if v.name == "torch.cuda.matmul")
        out.append(
            Variant(
                "matmul",
                cuda.fn,
                backend="torch",
                requires={"vendor": "nvidia", "tensor_cores": ">=3"},
                dtype_support=True,
                priority=20,
                can_run=tensor_core_check(),
                placement=gpu_check("matmul"),
                name="torch.cuda.tensor_core_matmul",
            )
        )
    from .genomics import variants as genomics_variants

    found: list[Variant] = out + genomics_variants(ops)
    return found
