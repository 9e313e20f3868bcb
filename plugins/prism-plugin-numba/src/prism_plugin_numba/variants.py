"""The variants the ``numba`` plugin contributes and their per-call checks.

==================================  ==================  ========
variant                             requires            priority
==================================  ==================  ========
``numba.sw_align``                  ``{kind: cpu}``     10
``numba.sw_align_batch``            ``{kind: cpu}``     10
``numba.sw_align_batch.threads``    ``{kind: cpu}``     11
==================================  ==================  ========

The kernel is scalar code that LLVM compiles for the host (``-march=native`` in effect): it
needs no particular instruction set, so it requires only a CPU.  It ranks below parasail's SIMD
variants (15-21) and above the NumPy reference (-1): it is what runs on a CPU parasail has no
kernels for, and for penalties parasail declines (``gap_extend > gap_open``).

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
    "PARALLEL_MIN_CELLS",
    "PRIORITY",
    "takes_batch",
    "takes_pair",
    "takes_threaded_batch",
    "variants",
]

#: Above the NumPy reference (-1), below parasail's SIMD variants (15 and more).
PRIORITY = 10
#: The threaded batch takes at least this many cell updates: about 1 ms of the scalar kernel
#: (about 0.3-0.5 GCUPS here), well above the 20-50 us of handing work to pool threads.
PARALLEL_MIN_CELLS = 1 << 18

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


def variants(ops: Collection[str] | None = None) -> list[Variant]:
    """The variants of the ``prism_variants`` hook (only for the ops in ``ops`` when given)."""
    out: list[Variant] = []

    def add(
        op: str, function: str, can_run: Callable[..., bool | str], name: str, bump: int
    ) -> None:
        if ops is not None and op not in ops:
            return
        out.append(
            Variant(
                op,
                f"{_OPS}:{function}",
                backend="numba",
                requires={"kind": "cpu"},
                priority=PRIORITY + bump,
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
    return out
