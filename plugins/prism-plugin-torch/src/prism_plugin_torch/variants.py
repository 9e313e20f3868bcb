"""The variants of the ``torch`` plugin (its ``prism_variants`` hook) and their per-call checks.

The backend makes ``torch.<op>`` (``{"kind": "cpu"}``, priority 0; :func:`host_check` declines
tensors on a GPU) and ``torch.cuda.<op>`` (``{"vendor": "nvidia", "kind": "gpu"}``, priority
10; :func:`gpu_check` takes tensors on the GPU, and any call while a device is named in scope:
data in host memory, and creation without a named device, stay with ``torch.<op>``, so that
data never moves unasked).  Both checks are the variants' ``placement``: plans are keyed by
where tensors live (the backend's ``where``), so dispatch asks them once per plan.
:func:`variants` adds ``torch.cuda.tensor_core_matmul`` (priority 20,
where the device description says a feature accelerates matmul in the call's dtype: cuBLAS
takes the tensor cores for fp16, bf16, fp64 from Ampere on, and fp32 only as TF32 where
``torch.backends.cuda.matmul.allow_tf32`` is set, a setting this plugin never changes) and
``torch.cuda.genomics.sw_align_batch``.  Building them imports neither torch nor the overrides.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import prism_core
from prism_core.backend_kit import array_arguments
from prism_core.extending import Variant

__all__ = ["gpu_check", "host_check", "tensor_core_check", "variants"]


def _on_gpu(array: Any) -> bool:
    # Only tensors have is_cuda: NumPy arrays and ArraySpecs are in host memory (or nowhere).
    return getattr(array, "is_cuda", False) is True


def host_check(op: str) -> Callable[..., bool | str]:
    """``placement`` of ``torch.<op>``: every call but those with tensors on a GPU."""
    reason = f"the data is on the GPU; torch.cuda.{op} runs it there"

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        for a in args:
            if getattr(a, "is_cuda", False) is True:
                return reason
            if type(a) in (list, tuple) and any(_on_gpu(x) for x in a):
                return reason
        if kwargs and any(_on_gpu(a) for a in kwargs.values()):
            return reason
        return True

    can_run.__qualname__ = can_run.__name__ = f"on_host[{op}]"
    return can_run


def gpu_check(op: str) -> Callable[..., bool | str]:
    """``placement`` of ``torch.cuda.<op>``: tensors on the GPU, or a device named in scope; data
    in host memory, and creation without a named device, stay with ``torch.<op>``."""
    in_host_memory = f"the data is in host memory; torch.{op} runs it there"
    no_device = (
        f"no device is named: torch.{op} makes its tensors on the CPU, torch's default device "
        "(name the GPU with prism.device(...) to make them there)"
    )

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        arrays = array_arguments(args, kwargs)
        if any(_on_gpu(a) for a in arrays):
            return True
        if prism_core.current_scope().device is not None:
            return True  # the caller named the device: host data goes there
        if arrays:
            return in_host_memory
        from . import backend

        why = backend.cuda_unavailable()
        return f"CUDA is not available: {why}" if why is not None else no_device

    can_run.__qualname__ = can_run.__name__ = f"on_gpu[{op}]"
    return can_run


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

    return out + genomics_variants(ops)
