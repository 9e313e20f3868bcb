"""The variants the ``cuda`` plugin contributes (its ``prism_variants`` hook), and their
per-call checks.

Each variant runs a function of ``prism_plugin_cuda.ops`` on the backend's framework (CuPy, or
torch with CUDA), named in the lazy ``"module:attribute"`` form: building this list imports
neither ``ops`` nor a framework, so plugin discovery (``prism plugins``) stays cheap.

Which variant runs is decided by the dispatcher (docs/dispatch.md):

* the ``cuda`` backend must be available (in automatic mode; a simulated device skips this) and
  drive the device (``vendor: nvidia``, ``kind: gpu``);
* the variant's requirements must hold on the device, and for ``cuda.tensor_core_matmul`` a
  device feature must accelerate matmul in the arrays' data type (``dtype_support``);
* per call, ``can_run`` keeps arrays on the host when they are too small to be worth a transfer
  to the GPU (fewer than :data:`MIN_ELEMENTS` elements in the largest array argument), and
  data types the GPU path does not take; NumPy runs those calls.  Arguments already on the GPU
  are always accepted: there is no transfer to save, and NumPy could not read them.

Results stay on the GPU (CuPy arrays or CUDA tensors); see ``prism_plugin_cuda.ops``.
"""

from __future__ import annotations

import math
from typing import Any

import prism_core
from prism_core import Variant

__all__ = [
    "MIN_ELEMENTS",
    "PRIORITY",
    "TENSOR_CORE_PRIORITY",
    "can_run_linalg",
    "can_run_matmul",
    "variants",
    "worth_a_gpu",
]

#: Arrays with fewer elements than this (the largest array argument counts) stay on NumPy: the
#: copy to the GPU and back costs more than the GPU saves.
MIN_ELEMENTS = 4096
#: Priority of the plugin's variants (NumPy's reference variants have 0).
PRIORITY = 10
#: Priority of ``cuda.tensor_core_matmul``: preferred to ``cuda.matmul`` where it is eligible.
TENSOR_CORE_PRIORITY = 20

#: DLPack device types of GPU memory (kDLCUDA, kDLCUDAManaged).
_DLPACK_GPU_DEVICES = frozenset({2, 13})
#: The data types the GPU's dense linear algebra (cuSOLVER) takes.
_LINALG_DTYPES = frozenset({"float32", "float64", "complex64", "complex128"})

_OPS = "prism_plugin_cuda.ops"


def _on_gpu(value: Any) -> bool:
    device = getattr(value, "__dlpack_device__", None)
    if device is None:
        return False
    try:
        return int(device()[0]) in _DLPACK_GPU_DEVICES
    except Exception:  # not a DLPack exporter after all: treat it as a host object
        return False


def _arrays(args: tuple[Any, ...]) -> list[Any]:
    """The array arguments (real arrays, or :class:`prism_core.ArraySpec` for explain)."""
    return [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]


def _size_verdict(arrays: list[Any]) -> bool | str:
    """``True`` when the call is worth the GPU (or its arrays are there already), else why
    not."""
    if any(_on_gpu(a) for a in arrays):
        return True
    largest = max((math.prod(int(s) for s in a.shape) for a in arrays), default=0)
    if largest < MIN_ELEMENTS:
        return (
            f"too small to be worth a GPU transfer ({largest} elements, fewer than {MIN_ELEMENTS})"
        )
    return True


def _dtype(value: Any) -> tuple[str, str]:
    """``(Prism name, kind letter)`` of an array's dtype; an unknown dtype has kind ``"?"``."""
    try:
        found = prism_core.dtype(value.dtype)
    except (TypeError, ValueError):
        return str(value.dtype), "?"
    return found.name, found.kind


def worth_a_gpu(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of the elementwise ops, ``sum`` and ``fft.fft``: large enough, any dtype."""
    return _size_verdict(_arrays(args))


def can_run_matmul(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of both matmul variants: large enough, floating-point or complex."""
    arrays = _arrays(args)
    verdict = _size_verdict(arrays)
    if verdict is not True or any(_on_gpu(a) for a in arrays):
        return verdict
    for a in arrays:
        name, kind = _dtype(a)
        if kind not in ("f", "c"):
            return f"matmul on the GPU takes floating-point or complex arrays, not {name}"
    return True


def can_run_linalg(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``linalg.solve`` and ``linalg.svd``: large enough, and a data type
    cuSOLVER takes (float32, float64, complex64, complex128)."""
    arrays = _arrays(args)
    verdict = _size_verdict(arrays)
    if verdict is not True or any(_on_gpu(a) for a in arrays):
        return verdict
    for a in arrays:
        name, _ = _dtype(a)
        if name not in _LINALG_DTYPES:
            return (
                f"linear algebra on the GPU takes float32, float64, complex64 or complex128 "
                f"arrays, not {name}"
            )
    return True


def variants() -> list[Variant]:
    """The variants of the ``prism_variants`` hook, all on the ``cuda`` backend."""
    gpu = {"vendor": "nvidia", "kind": "gpu"}

    def on_gpu(op: str, function: str, can_run: Any) -> Variant:
        return Variant(
            op,
            f"{_OPS}:{function}",
            backend="cuda",
            requires=gpu,
            priority=PRIORITY,
            can_run=can_run,
            name=f"cuda.{op}",
        )

    return [
        on_gpu("matmul", "matmul", can_run_matmul),
        # The same framework matmul as cuda.matmul: on a real device cuBLAS picks tensor-core
        # kernels by itself for the data types the tensor cores take (fp16 and bf16 from the third
        # generation on, fp64 on the data-center GPUs from Ampere on; fp32 only as TF32, when
        # the framework allows it).  What this variant adds is the selection: it is preferred
        # (priority 20) only on devices with third-generation tensor cores or newer whose
        # descriptions say a feature accelerates matmul in the call's dtype (dtype_support),
        # so that `prism explain` shows where the tensor cores do the work and where not.
        Variant(
            "matmul",
            f"{_OPS}:matmul",
            backend="cuda",
            requires={"vendor": "nvidia", "tensor_cores": ">=3"},
            dtype_support=True,
            priority=TENSOR_CORE_PRIORITY,
            can_run=can_run_matmul,
            name="cuda.tensor_core_matmul",
        ),
        on_gpu("add", "add", worth_a_gpu),
        on_gpu("multiply", "multiply", worth_a_gpu),
        on_gpu("sum", "sum_", worth_a_gpu),
        on_gpu("linalg.solve", "linalg_solve", can_run_linalg),
        on_gpu("linalg.svd", "linalg_svd", can_run_linalg),
        on_gpu("fft.fft", "fft_fft", worth_a_gpu),
    ]
