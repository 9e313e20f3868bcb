"""The variants the ``cuda`` plugin contributes (its ``prism_variants`` hook), and their
per-call checks.

One variant per op of Prism's catalogue (:data:`FUNCTIONS`), each running a
function of ``prism_plugin_cuda.ops`` on CuPy, named in the lazy ``"module:attribute"`` form:
building this list imports neither ``ops`` nor CuPy, so plugin discovery (``prism plugins``)
stays cheap.  Plus ``cuda.tensor_core_matmul``.

Which variant runs is decided by the dispatcher (docs/dispatch.md):

* the ``cuda`` backend must be available (in automatic mode; a simulated device skips this) and
  drive the device (``vendor: nvidia``, ``kind: gpu``);
* the variant's requirements must hold on the device, and for ``cuda.tensor_core_matmul`` a
  device feature must accelerate matmul in the arrays' data type (``dtype_support``);
* per call, ``can_run`` keeps arrays on the host when they are too small to be worth a transfer
  to the GPU (fewer than :data:`MIN_ELEMENTS` elements in the largest array argument), and
  data types the GPU path does not take; NumPy runs those calls.  Arguments already on the GPU
  are always accepted: there is no transfer to save.  Ops without array arguments (creation:
  ``zeros``, ``random.normal``, ...) and the conversions (``asarray``, ``to_numpy``,
  ``from_dlpack``, ``requires_grad``, ``detach``) have no ``can_run``: they run on the GPU
  whenever the dispatcher chooses the backend (``use_backend("cuda")``).

Results are CuPy arrays on the GPU; see ``prism_plugin_cuda.ops``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import prism_core
from prism_core import Variant
from prism_core.backend_kit import dtype_name, size_check

from .elementwise import ELEMENTWISE
from .families import FAMILY_FUNCTIONS, FAMILY_NO_CAN_RUN, attribute

__all__ = [
    "FUNCTIONS",
    "GPU_REQUIRES",
    "LINALG_DTYPES",
    "MIN_ELEMENTS",
    "NO_CAN_RUN",
    "PRIORITY",
    "TENSOR_CORE_PRIORITY",
    "can_run_linalg",
    "can_run_matmul",
    "on_gpu",
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
#: The requirement of every variant but ``cuda.tensor_core_matmul``.
GPU_REQUIRES = {"vendor": "nvidia", "kind": "gpu"}
#: The data types the GPU's dense linear algebra (cuSOLVER) takes.
LINALG_DTYPES = frozenset({"float32", "float64", "complex64", "complex128"})
#: Ops whose variant has no ``can_run``: no array arguments, or conversions.
NO_CAN_RUN = frozenset(
    {
        "asarray",
        "zeros",
        "ones",
        "full",
        "triu_indices",
        "random.normal",
        "to_numpy",
        "from_dlpack",
        "requires_grad",
        "detach",
    }
) | FAMILY_NO_CAN_RUN  # the creation ops of the Array API's families (issue 12)
#: Ops whose variant takes only the data types cuSOLVER takes.
_LINALG = frozenset(
    {
        "linalg.inv",
        "linalg.solve",
        "linalg.svd",
        "linalg.eig",
        "linalg.eigh",
        "linalg.qr",
        "linalg.cholesky",
        # The Array API's (issue 12): factorisations in cuSOLVER too.
        "linalg.det",
        "linalg.slogdet",
        "linalg.eigvalsh",
        "linalg.svdvals",
        "linalg.matrix_rank",
        "linalg.pinv",
        "linalg.matrix_power",
    }
)
#: DLPack device types of GPU memory (kDLCUDA, kDLCUDAManaged).
_DLPACK_GPU_DEVICES = frozenset({2, 13})

_OPS = "prism_plugin_cuda.ops"

#: Op name -> the attribute of ``prism_plugin_cuda.ops`` implementing it: a function defined
#: there, or a name of ``ops.PASSTHROUGH`` (CuPy's own function).  Data, so that discovery
#: imports neither ``ops`` nor CuPy.
FUNCTIONS: dict[str, str] = {
    "asarray": "asarray",
    "zeros": "zeros",
    "ones": "ones",
    "full": "full",
    "to_numpy": "to_numpy",
    "from_dlpack": "from_dlpack",
    "requires_grad": "requires_grad",
    "detach": "detach",
    "triu_indices": "triu_indices",
    "random.normal": "random_normal",
    "add": "add",
    "subtract": "subtract",
    "multiply": "multiply",
    "divide": "divide",
    "power": "power",
    "square": "square",
    "sqrt": "sqrt",
    "exp": "exp",
    "log": "log",
    "abs": "abs",
    "real": "real",
    "conj": "conj",
    "maximum": "maximum",
    "minimum": "minimum",
    "where": "where",
    "clip": "clip",
    "sum": "sum_",
    "mean": "mean",
    "std": "std",
    "min": "min_",
    "max": "max_",
    "argmax": "argmax",
    "argmin": "argmin",
    "cumulative_sum": "cumulative_sum",
    "sort": "sort",
    "reshape": "reshape",
    "transpose": "transpose",
    "moveaxis": "moveaxis",
    "expand_dims": "expand_dims",
    "stack": "stack",
    "concat": "concat",
    "matmul": "matmul",
    "dot": "dot",
    "einsum": "einsum",
    "linalg.inv": "linalg_inv",
    "linalg.solve": "linalg_solve",
    "linalg.svd": "linalg_svd",
    "linalg.eig": "linalg_eig",
    "linalg.eigh": "linalg_eigh",
    "linalg.qr": "linalg_qr",
    "linalg.cholesky": "linalg_cholesky",
    "linalg.norm": "linalg_norm",
    "linalg.vector_norm": "linalg_vector_norm",
    "linalg.matrix_norm": "linalg_matrix_norm",
    "fft.fft": "fft_fft",
    "fft.ifft": "fft_ifft",
    "fft.rfft": "fft_rfft",
    "convolve": "convolve",
}
# The Array API's other elementwise functions (issue 12): ``ops`` passes CuPy's own through.
FUNCTIONS.update({op: op for op in ELEMENTWISE})
# The Array API's other families (issue 12): ``families.py``, by the op's attribute in ``ops``.
FUNCTIONS.update({op: attribute(op) for op in FAMILY_FUNCTIONS})


def on_gpu(value: Any) -> bool:
    """Whether ``value`` is already in GPU memory: a CuPy array, or any DLPack exporter on a
    CUDA device (a torch CUDA tensor).  Reads attributes only."""
    if type(value).__module__.partition(".")[0] == "cupy":
        return True
    device = getattr(value, "__dlpack_device__", None)
    if device is None:
        return False
    try:
        return int(device()[0]) in _DLPACK_GPU_DEVICES
    except Exception:  # not a DLPack exporter after all: treat it as a host object
        return False


#: ``can_run`` of the ops that take any data type: large enough, or already on the GPU.
worth_a_gpu = size_check(MIN_ELEMENTS, on_device=on_gpu)


def _arrays(args: tuple[Any, ...]) -> list[Any]:
    """The array arguments (real arrays, or :class:`prism_core.ArraySpec` for explain)."""
    return [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]


def _kind(value: Any) -> tuple[str, str]:
    """``(Prism name, kind letter)`` of an array's dtype; an unknown dtype has kind ``"?"``."""
    try:
        found = prism_core.dtype(value.dtype)
    except (TypeError, ValueError):
        return dtype_name(value.dtype), "?"
    return found.name, found.kind


def can_run_matmul(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of both matmul variants: large enough, floating-point or complex."""
    arrays = _arrays(args)
    if any(on_gpu(a) for a in arrays):
        return True  # data on the GPU stays there, whatever its size (the common case first)
    verdict = worth_a_gpu(*args, **kwargs)
    if verdict is not True:
        return verdict
    for a in arrays:
        name, kind = _kind(a)
        if kind not in ("f", "c"):
            return f"matmul on the GPU takes floating-point or complex arrays, not {name}"
    return True


def can_run_linalg(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of the decompositions and solvers: large enough, and a data type cuSOLVER
    takes (float32, float64, complex64, complex128)."""
    arrays = _arrays(args)
    if any(on_gpu(a) for a in arrays):
        return True
    verdict = worth_a_gpu(*args, **kwargs)
    if verdict is not True:
        return verdict
    for a in arrays:
        name, _ = _kind(a)
        if name not in LINALG_DTYPES:
            return (
                f"linear algebra on the GPU takes float32, float64, complex64 or complex128 "
                f"arrays, not {name}"
            )
    return True


def _can_run(op: str) -> Callable[..., bool | str] | None:
    if op in NO_CAN_RUN:
        return None
    if op == "matmul":
        return can_run_matmul
    if op in _LINALG:
        return can_run_linalg
    return worth_a_gpu


def variants() -> list[Variant]:
    """The variants of the ``prism_variants`` hook, all on the ``cuda`` backend: one per op
    of :data:`FUNCTIONS`, and ``cuda.tensor_core_matmul``."""
    found = [
        Variant(
            op,
            f"{_OPS}:{function}",
            backend="cuda",
            requires=GPU_REQUIRES,
            priority=PRIORITY,
            can_run=_can_run(op),
            name=f"cuda.{op}",
        )
        for op, function in FUNCTIONS.items()
    ]
    # The same CuPy matmul as cuda.matmul: on a real device cuBLAS picks tensor-core kernels by
    # itself for the data types the tensor cores take (fp16 and bf16 from the third generation
    # on, fp64 on the data-center GPUs from Ampere on; fp32 only as TF32, when allowed).  What
    # this variant adds is the selection: it is preferred (priority 20) only on devices with
    # third-generation tensor cores or newer whose descriptions say a feature accelerates
    # matmul in the call's dtype (dtype_support), so that `prism explain` shows where the
    # tensor cores do the work and where not.
    found.append(
        Variant(
            "matmul",
            f"{_OPS}:{FUNCTIONS['matmul']}",
            backend="cuda",
            requires={"vendor": "nvidia", "tensor_cores": ">=3"},
            dtype_support=True,
            priority=TENSOR_CORE_PRIORITY,
            can_run=can_run_matmul,
            name="cuda.tensor_core_matmul",
        )
    )
    return found
