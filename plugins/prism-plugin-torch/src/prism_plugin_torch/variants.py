"""The variants the ``torch`` plugin contributes (its ``prism_variants`` hook), and their
per-call checks.

Two variants of every op of Prism's catalogue (of the Array API families declared as tables in
prism-core, those ``families.py`` lists), both on the ``torch`` backend:

* ``torch.<op>`` (``requires={"kind": "cpu"}``, priority 0) runs ``prism_plugin_torch.ops`` on
  the host CPU; its ``can_run`` declines tensors that live on a GPU, whose op is
  ``torch.cuda.<op>``.
* ``torch.cuda.<op>`` (``requires={"vendor": "nvidia", "kind": "gpu"}``, priority 10) runs
  ``prism_plugin_torch.cuda_ops`` on the GPU.  Its ``can_run`` accepts a call whose tensors
  are on the GPU and any call while a device is named in scope (``prism_core.device(...)``:
  the caller asked for it; host arrays are then moved); it declines data in host memory, which
  ``torch.<op>`` computes where it is, so data never moves unasked, and a call without arrays
  (a creation op) when no device is named: like ``torch.zeros``, it makes CPU tensors then.

And ``torch.cuda.genomics.sw_align_batch`` (``prism_plugin_torch.genomics``), the
Smith-Waterman batch kernel on NVIDIA GPUs, where the installed prism-core declares the op.

And ``torch.cuda.tensor_core_matmul`` (``requires={"vendor": "nvidia", "tensor_cores": ">=3"}``,
``dtype_support=True``, priority 20): the same cuBLAS product as ``torch.cuda.matmul``, chosen
where the device description says a feature accelerates matmul in the call's dtype, so that
``prism explain`` shows where the tensor cores do the work.  cuBLAS picks tensor-core kernels
by itself for fp16 and bf16 (and fp64 on the data-center GPUs from Ampere on), and for fp32 only
as TF32, when ``torch.backends.cuda.matmul.allow_tf32`` is set: a global torch setting that
this plugin never changes (it trades precision for speed, and is the caller's decision).

Which backend drives which device is ``TorchBackend.can_drive``'s: CPUs, and NVIDIA GPUs where
torch has CUDA (on a simulated device the description alone).  The implementations are named
lazily (``"prism_plugin_torch.ops:matmul"``): building this list imports neither torch nor the
implementations.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

import prism_core
from prism_core import Variant

__all__ = [
    "CPU_PRIORITY",
    "CUDA_PRIORITY",
    "FUNCTIONS",
    "TENSOR_CORE_PRIORITY",
    "gpu_check",
    "host_check",
    "tensor_core_check",
    "variants",
]

#: Priority of ``torch.<op>`` (NumPy's reference variants have 0 too: where the data lives
#: decides between them, then the names).
CPU_PRIORITY = 0
#: Priority of ``torch.cuda.<op>``: preferred to the CPU where it accepts the call.
CUDA_PRIORITY = 10
#: Priority of ``torch.cuda.tensor_core_matmul``: preferred to ``torch.cuda.matmul`` where the
#: device accelerates the call's dtype.
TENSOR_CORE_PRIORITY = 20

#: Op -> the name of its function in ``ops`` and ``cuda_ops``.
FUNCTIONS: dict[str, str] = {
    "asarray": "asarray",
    "zeros": "zeros",
    "ones": "ones",
    "full": "full",
    "to_numpy": "to_numpy",
    "add": "add",
    "subtract": "subtract",
    "multiply": "multiply",
    "divide": "divide",
    "power": "power",
    "square": "square",
    "sqrt": "sqrt",
    "exp": "exp",
    "log": "log",
    "abs": "abs_",
    "real": "real",
    "conj": "conj",
    "sum": "sum_",
    "mean": "mean",
    "std": "std",
    "min": "min_",
    "max": "max_",
    "reshape": "reshape",
    "transpose": "transpose",
    "moveaxis": "moveaxis",
    "expand_dims": "expand_dims",
    "matmul": "matmul",
    "dot": "dot",
    "einsum": "einsum",
    "linalg.inv": "linalg_inv",
    "linalg.solve": "linalg_solve",
    "linalg.svd": "linalg_svd",
    "linalg.eig": "linalg_eig",
    "linalg.eigh": "linalg_eigh",
    "fft.fft": "fft_fft",
    "fft.ifft": "fft_ifft",
    "fft.rfft": "fft_rfft",
    "convolve": "convolve",
    "random.normal": "random_normal",
    "stack": "stack",
    "concat": "concat",
    "where": "where",
    "clip": "clip",
    "maximum": "maximum",
    "minimum": "minimum",
    "argmax": "argmax",
    "argmin": "argmin",
    "sort": "sort",
    "cumulative_sum": "cumulative_sum",
    "linalg.norm": "linalg_norm",
    "linalg.vector_norm": "linalg_vector_norm",
    "linalg.matrix_norm": "linalg_matrix_norm",
    "linalg.qr": "linalg_qr",
    "linalg.cholesky": "linalg_cholesky",
    "triu_indices": "triu_indices",
    "requires_grad": "requires_grad",
    "detach": "detach",
    "from_dlpack": "from_dlpack",
    # The Array API's other elementwise functions (issue 12): ``ops.ELEMENTWISE``, by name.
    **{
        op: op
        for op in (
            "acos",
            "acosh",
            "asin",
            "asinh",
            "atan",
            "atan2",
            "atanh",
            "cos",
            "cosh",
            "sin",
            "sinh",
            "tan",
            "tanh",
            "expm1",
            "log1p",
            "log2",
            "log10",
            "logaddexp",
            "hypot",
            "ceil",
            "floor",
            "trunc",
            "round",
            "sign",
            "signbit",
            "copysign",
            "nextafter",
            "negative",
            "positive",
            "reciprocal",
            "imag",
            "floor_divide",
            "remainder",
            "isfinite",
            "isinf",
            "isnan",
            "equal",
            "not_equal",
            "greater",
            "greater_equal",
            "less",
            "less_equal",
            "logical_and",
            "logical_or",
            "logical_xor",
            "logical_not",
            "bitwise_and",
            "bitwise_or",
            "bitwise_xor",
            "bitwise_invert",
            "bitwise_left_shift",
            "bitwise_right_shift",
        )
    },
}


def _arrays(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The array arguments of a call (real arrays, or ``prism_core.ArraySpec`` for explain),
    the arrays in a sequence argument (``stack([a, b])``) and those given by keyword
    (``clip(x, min=lo)``)."""
    found = []
    for a in (*args, *kwargs.values()):
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            found.append(a)
        elif type(a) in (list, tuple):
            found.extend(x for x in a if hasattr(x, "shape") and hasattr(x, "dtype"))
    return found


def _on_gpu(array: Any) -> bool:
    # Only tensors have is_cuda: NumPy arrays and ArraySpecs are in host memory (or nowhere).
    return getattr(array, "is_cuda", False) is True


def host_check(op: str) -> Callable[..., bool | str]:
    """``can_run`` of ``torch.<op>``: every call but those with tensors on a GPU."""
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
    """``can_run`` of ``torch.cuda.<op>``: tensors on the GPU, or a device named in scope; data
    in host memory, and creation without a named device, stay with ``torch.<op>``."""
    in_host_memory = f"the data is in host memory; torch.{op} runs it there"
    # As torch.zeros makes CPU tensors unless a device is given: creation follows the data,
    # which stays in host memory unless the caller names the GPU.
    no_device = (
        f"no device is named: torch.{op} makes its tensors on the CPU, torch's default device "
        "(name the GPU with prism.device(...) to make them there)"
    )

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        arrays = _arrays(args, kwargs)
        if any(_on_gpu(a) for a in arrays):
            return True
        from prism_core import current_scope

        if current_scope().device is not None:
            return True  # the caller named the device: host data goes there
        if arrays:
            return in_host_memory
        from .backend import cuda_unavailable

        why = cuda_unavailable()
        return f"CUDA is not available: {why}" if why is not None else no_device

    can_run.__qualname__ = can_run.__name__ = f"on_gpu[{op}]"
    return can_run


def tensor_core_check() -> Callable[..., bool | str]:
    """``can_run`` of ``torch.cuda.tensor_core_matmul``: ``gpu_check("matmul")``, for
    floating-point arrays only.  The tensor cores also multiply int8, but ``torch.matmul`` has
    no integer product on the GPU (``torch.cuda.matmul`` computes it on the CPU), so an integer
    call is not shown as running on them."""
    on_gpu = gpu_check("matmul")

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        for a in _arrays(args, kwargs):
            try:
                kind = prism_core.dtype(a.dtype).kind
            except (TypeError, ValueError):
                continue
            if kind not in "fc":
                name = prism_core.dtype(a.dtype).name
                return (
                    f"torch.matmul runs no {name} product on the tensor cores; "
                    "torch.cuda.matmul computes it"
                )
        return on_gpu(*args, **kwargs)

    can_run.__qualname__ = can_run.__name__ = "on_tensor_cores[matmul]"
    return can_run


def variants(ops: Collection[str] | None = None) -> list[Variant]:
    """``torch.<op>`` and ``torch.cuda.<op>`` for every op of :data:`FUNCTIONS` (or of those
    among them in ``ops``), and ``torch.cuda.tensor_core_matmul``."""
    from .families import FAMILY_FUNCTIONS  # the Array API's other families (issue 12)

    # Op -> (host function, GPU function), both "module:attribute" under prism_plugin_torch.
    targets = {op: (f"ops:{fn}", f"cuda_ops:{fn}") for op, fn in FUNCTIONS.items()}
    for op, target in FAMILY_FUNCTIONS.items():
        module, _, attribute = target.partition(":")
        targets[op] = (target, f"{module}:gpu.{attribute}")
    out: list[Variant] = []
    for op, (host, gpu) in targets.items():
        if ops is not None and op not in ops:
            continue
        out.append(
            Variant(
                op,
                f"prism_plugin_torch.{host}",
                backend="torch",
                requires={"kind": "cpu"},
                priority=CPU_PRIORITY,
                can_run=host_check(op),
                name=f"torch.{op}",
            )
        )
        out.append(
            Variant(
                op,
                f"prism_plugin_torch.{gpu}",
                backend="torch",
                requires={"vendor": "nvidia", "kind": "gpu"},
                priority=CUDA_PRIORITY,
                can_run=gpu_check(op),
                name=f"torch.cuda.{op}",
            )
        )
    if ops is None or "matmul" in ops:
        out.append(
            Variant(
                "matmul",
                "prism_plugin_torch.cuda_ops:matmul",
                backend="torch",
                requires={"vendor": "nvidia", "tensor_cores": ">=3"},
                dtype_support=True,
                priority=TENSOR_CORE_PRIORITY,
                can_run=tensor_core_check(),
                name="torch.cuda.tensor_core_matmul",
            )
        )
    from .genomics import variants as genomics_variants  # issue 11: the GPU batch aligner

    out.extend(genomics_variants(ops))
    return out
