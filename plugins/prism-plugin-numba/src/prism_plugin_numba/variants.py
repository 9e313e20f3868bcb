"""The variants the ``numba`` plugin contributes and their per-call checks.

==================================  ==================  ========
variant                             requires            priority
==================================  ==================  ========
``numba.sw_align``                  ``{kind: cpu}``     10
``numba.sw_align_batch``            ``{kind: cpu}``     10
``numba.sw_align_batch.threads``    ``{kind: cpu}``     11
``numba.cuda.sw_align_batch``       :data:`GPU_REQUIRES` 40
``numba.cuda.sw_align_batch.dpx``   :data:`DPX_REQUIRES` 41
==================================  ==================  ========

The kernel is scalar code that LLVM compiles for the host (``-march=native`` in effect): it
needs no particular instruction set, so it requires only a CPU.  It ranks below parasail's SIMD
variants (15-21) and above the NumPy reference (-1): it is what runs on a CPU parasail has no
kernels for, and for penalties parasail declines (``gap_extend > gap_open``).

The GPU variants (backend ``numba-cuda``, ``prism_plugin_numba.cuda_batch``) take NumPy
arrays in host memory and copy them to the GPU: they rank above the torch wavefront (30) and
the CPU variants, and :func:`takes_gpu_batch` keeps batches below :data:`GPU_MIN_CELLS` on the
CPU.  The ``.dpx`` one needs the ``dpx`` feature of the described device (Hopper and later).

The checks decline a traceback (the kernel gives the score and the end positions) and
sequences that are not 1-D uint8 codes; the threaded batch also declines fewer than two targets,
fewer than :data:`PARALLEL_MIN_CELLS` cell updates, and a process that may run on one CPU.

Building this list imports neither Numba nor NumPy.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

from prism_core.backend_kit import usable_cpus
from prism_core.extending import Variant

__all__ = [
    "DPX_REQUIRES",
    "GPU_MIN_CELLS",
    "GPU_PRIORITY",
    "GPU_REQUIRES",
    "PARALLEL_MIN_CELLS",
    "PRIORITY",
    "takes_batch",
    "takes_gpu_batch",
    "takes_pair",
    "takes_threaded_batch",
    "variants",
]

#: Above the NumPy reference (-1), below parasail's SIMD variants (15 and more).
PRIORITY = 10
#: The threaded batch takes at least this many cell updates: about 1 ms of the scalar kernel
#: (about 0.3-0.5 GCUPS here), well above the 20-50 us of handing work to pool threads.
PARALLEL_MIN_CELLS = 1 << 18

#: The GPU kernel's needs: an NVIDIA GPU that CUDA 13 compiles for (Turing, 7.5, and later);
#: int32 arithmetic and shared memory only.
GPU_REQUIRES = {"vendor": "nvidia", "kind": "gpu", "compute_capability": ">=7.5"}
#: The DPX kernel's: PTX has ``max.s32.relu`` from compute capability 9.0 (hardware/nvidia
#: gives Hopper and Blackwell the feature ``dpx``).
DPX_REQUIRES = {"vendor": "nvidia", "kind": "gpu", "dpx": ">=1"}
#: Above the torch wavefront (30) and every CPU variant.
GPU_PRIORITY = 40
#: From this many cell updates a batch in host memory goes to the GPU: below, the copies,
#: the sort and the launches (about 1-2 ms) cost more than parasail's threads on a CPU save
#: (about 100 GCUPS on 16 cores against several hundred on an H100: an estimate until
#: benchmarks/gpu/sw_check.py measures the crossover).  About 1,100 protein targets of 300
#: against a query of 400; ``prism_genomics.search`` aligns groups of 2**22 letters.
GPU_MIN_CELLS = 1 << 27

_OPS = "prism_plugin_numba.ops"
_PAIR = ("query", "target", "matrix", "gap_open", "gap_extend", "traceback")
_BATCH = ("query", "targets", "offsets", "matrix", "gap_open", "gap_extend")


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...], name: str) -> Any:
    i = names.index(name)
    return args[i] if i < len(args) else kwargs.get(name)


def _codes(
    args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...], seqs: tuple[str, ...]
) -> str | None:
    for name in seqs:
        seq = _arg(args, kwargs, names, name)
        dtype = getattr(seq, "dtype", None)
        # uint8 is NumPy's type character "B" (str(dtype) would cost microseconds per call).
        if getattr(dtype, "char", None) != "B" or len(getattr(seq, "shape", ())) != 1:
            return f"{name}: Numba aligns 1-D uint8 codes, not {dtype} {type(seq).__name__}"
    return None


def takes_pair(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``numba.sw_align``: uint8 codes, no traceback."""
    if _arg(args, kwargs, _PAIR, "traceback"):
        return "traceback: the Numba kernel gives the score and end positions only"
    return _codes(args, kwargs, _PAIR, ("query", "target")) or True


def takes_batch(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``numba.sw_align_batch``: uint8 codes."""
    return _codes(args, kwargs, _BATCH, ("query", "targets")) or True


def takes_threaded_batch(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``numba.sw_align_batch.threads``: as :func:`takes_batch`, for at least
    two targets and :data:`PARALLEL_MIN_CELLS` cell updates, on more than one CPU."""
    why = _codes(args, kwargs, _BATCH, ("query", "targets"))
    if why:
        return why
    query = _arg(args, kwargs, _BATCH, "query")
    targets = _arg(args, kwargs, _BATCH, "targets")
    offsets = _arg(args, kwargs, _BATCH, "offsets")
    count = int(offsets.shape[0]) - 1 if len(getattr(offsets, "shape", ())) == 1 else 0
    cells = int(query.shape[0]) * int(targets.shape[0])
    if count < 2 or cells < PARALLEL_MIN_CELLS:
        return (
            f"{count} target(s), {cells} cell updates: too few to share between threads "
            f"(it takes 2 targets and {PARALLEL_MIN_CELLS} cells)"
        )
    if usable_cpus() < 2:
        return "this process may run on one CPU only"
    return True


def takes_gpu_batch(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of the GPU variants: uint8 codes, a matrix within int16 whose scores stay
    within int32, and at least :data:`GPU_MIN_CELLS` cell updates unless a device is named in
    scope (``prism.device(...)``: the caller asked for it)."""
    import prism_core

    why = _codes(args, kwargs, _BATCH, ("query", "targets"))
    if why:
        return why
    query = _arg(args, kwargs, _BATCH, "query")
    targets = _arg(args, kwargs, _BATCH, "targets")
    matrix = _arg(args, kwargs, _BATCH, "matrix")
    if len(getattr(matrix, "shape", ())) != 2 or getattr(matrix.dtype, "kind", "") not in "iu":
        return "matrix: the GPU kernel takes a 2-D integer matrix"
    low, high = (int(matrix.min()), int(matrix.max())) if matrix.size else (0, 0)
    if high > 32767 or low < -32768:
        return f"matrix: entries from {low} to {high}; the GPU kernel's profile is int16"
    n = int(query.shape[0])
    if n * max(high, 0) >= 1 << 30:
        return f"a query of {n} with scores up to {high} may exceed the GPU kernel's int32"
    cells = n * int(targets.shape[0])
    if cells < GPU_MIN_CELLS and prism_core.current_scope().device is None:
        return (
            f"{cells} cell updates: below the crossover with the CPU variants ({GPU_MIN_CELLS}; "
            "the copies and launches cost more than the GPU saves; name the device to force it)"
        )
    return True


def variants(ops: Collection[str] | None = None) -> list[Variant]:
    """The variants of the ``prism_variants`` hook (only for the ops in ``ops`` when given)."""
    out: list[Variant] = []

    def add(
        op: str,
        function: str,
        can_run: Callable[..., bool | str],
        name: str,
        bump: int,
        gpu: dict[str, str] | None = None,
    ) -> None:
        if ops is not None and op not in ops:
            return
        out.append(
            Variant(
                op,
                f"{_OPS}:{function}",
                backend="numba" if gpu is None else "numba-cuda",
                requires={"kind": "cpu"} if gpu is None else gpu,
                priority=(PRIORITY if gpu is None else GPU_PRIORITY) + bump,
                can_run=can_run,
                name=name,
            )
        )

    add("genomics.sw_align", "sw_align", takes_pair, "numba.sw_align", 0)
    add("genomics.sw_align_batch", "sw_align_batch", takes_batch, "numba.sw_align_batch", 0)
    add(
        "genomics.sw_align_batch",
        "sw_align_batch_threads",
        takes_threaded_batch,
        "numba.sw_align_batch.threads",
        1,
    )
    batch, cuda = "genomics.sw_align_batch", "numba.cuda.sw_align_batch"
    add(batch, "sw_align_batch_cuda", takes_gpu_batch, cuda, 0, GPU_REQUIRES)
    add(batch, "sw_align_batch_dpx", takes_gpu_batch, f"{cuda}.dpx", 1, DPX_REQUIRES)
    return out
