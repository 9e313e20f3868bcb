"""The variants the ``parasail`` plugin contributes, their requirements and per-call checks.

One variant per instruction set parasail is built for, for each of the two ops, each requiring
the CPU flag of the instructions it runs, as the device description lists it
(``detection.cpu.features``, named as ``/proc/cpuinfo`` names them):

=============================================  ======================================  ========
variant                                        requires                                priority
=============================================  ======================================  ========
``parasail.sw_align.avx2``                     ``{kind: cpu, flag:avx2: true}``        20
``parasail.sw_align.sse41``                    ``{kind: cpu, flag:sse4_1: true}``      15
``parasail.sw_align.neon``                     ``{kind: cpu, flag:asimd: true}``       20
``parasail.sw_align_batch.<isa>``              the same, one thread                    20 / 15
``parasail.sw_align_batch.<isa>.threads``      the same, every usable CPU              21 / 16
``parasail.sw_align.<isa>.<family>``           the same, one kernel family             19 / 14
``parasail.sw_align_batch.<isa>.<family>``     the same, one thread, one family        19 / 14
=============================================  ======================================  ========

NEON is what Linux (and so archspec and the aarch64 descriptions) calls ``asimd``.  A
description without the flag rejects the variant with the flag named: on the baseline
``generic.x86-64`` (SSE2 only) ``prism explain`` says ``generic.x86-64 does not list the CPU
flag 'avx2' (required True)``.  SSE2-only kernels exist in parasail too, but a CPU without
SSE4.1 is older than 2008; the reference serves it.

The checks (``can_run``) decline, with the reason, what parasail does not compute exactly or
at all: a traceback (these variants give score and end positions; the reference traces back),
``gap_extend > gap_open`` (parasail issue #64), matrices of more than 255 letters, and
sequences that are not ``uint8`` codes.  The threaded batch declines a batch of fewer than two
targets, fewer than :data:`PARALLEL_MIN_CELLS` cell updates or targets of fewer than
:data:`PARALLEL_MIN_CELLS_PER_TARGET` cells on average, where a second thread costs more than
it saves, and a process that may run on one CPU only.

The automatic variants choose the kernel family (striped, scan or diagonal) and lane width per
call by a rule measured on this hardware (``prism_plugin_parasail.rule.choose``).  The
``<family>`` variants (``striped``, ``scan``, ``diag``) run one family, in the lanes the rule
would pick for it, and take a call only where the rule is unsure between that family and its
own pick (near a boundary of its measurements), so that ``prism tune`` and ``prism bench
genomics.align`` measure the families there and dispatch takes the fastest; elsewhere their
``can_run`` declines with the rule's choice in words: which family and lane width the
automatic variant runs, and why (what ``prism explain`` shows).  Below the automatic variant,
they run only when a tuning record puts them first.

Building this list imports neither parasail nor NumPy: the functions are named
``"prism_plugin_parasail.ops:sw_align_avx2"``, imported when dispatch first chooses one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection
from typing import Any

from prism_core.backend_kit import usable_cpus
from prism_core.extending import Variant

# The rule imports neither parasail nor NumPy: its kernel families (one variant each) are free.
from .rule import FAMILIES

__all__ = [
    "ISA_REQUIREMENTS",
    "PARALLEL_MIN_CELLS",
    "PARALLEL_MIN_CELLS_PER_TARGET",
    "PRIORITIES",
    "takes_batch",
    "takes_family",
    "takes_pair",
    "takes_threaded_batch",
    "variants",
]

#: The CPU flag each instruction set needs, as device descriptions list it.
ISA_REQUIREMENTS: dict[str, dict[str, Any]] = {
    "avx2": {"kind": "cpu", "flag:avx2": True},
    "sse41": {"kind": "cpu", "flag:sse4_1": True},
    "neon": {"kind": "cpu", "flag:asimd": True},
}
#: Priorities: the widest vectors first, above the Numba variants (10) and the NumPy
#: reference (-1); the threaded batch one above its one-thread sibling, where it takes the call.
PRIORITIES: dict[str, int] = {"avx2": 20, "sse41": 15, "neon": 20}
#: The threaded batch takes a batch of at least this many cell updates (query length times
#: the targets' total length) ...  Below, one thread finishes before a second has paid for
#: itself: measured on the 2-core development host (benchmarks/bench_genomics.py), two threads
#: were 0.6x of one at 2**19 cells (100 x 64 targets of 100), 0.9-1.6x at 2**24 (1000 x 16-32
#: targets of 1000), 1.5-1.8x from 2**26 (1000 x 64-256 targets of 1000).
PARALLEL_MIN_CELLS = 1 << 24
#: ... and at least this many per target on average.  Each target costs a few microseconds of
#: Python (the ctypes call, reading and freeing parasail's result) with the GIL held; a target
#: of 2**17 cells takes about 8 us in parasail.  Shorter targets leave the threads waiting for
#: the GIL: 1000 targets of 200 against 200 letters (40,000 cells each) ran 1.0x on two threads.
PARALLEL_MIN_CELLS_PER_TARGET = 1 << 17

_OPS = "prism_plugin_parasail.ops"
_PAIR = ("query", "target", "matrix", "gap_open", "gap_extend", "traceback")
_BATCH = ("query", "targets", "offsets", "matrix", "gap_open", "gap_extend")


def _named(args: tuple[Any, ...], kwargs: dict[str, Any], names: tuple[str, ...]) -> list[Any]:
    """The call's arguments in the op's order (``None`` where not given)."""
    if not kwargs and len(args) == len(names):
        return list(args)  # the common case, checked on every call: no lookups
    return [args[i] if i < len(args) else kwargs.get(name) for i, name in enumerate(names)]


def _common(
    seqs: tuple[tuple[str, Any], ...], matrix: Any, gap_open: Any, gap_extend: Any
) -> str | None:
    """The reasons shared by both ops, or ``None``.  Cheap: it runs before every call (uint8
    is NumPy's type character ``B``; ``str(dtype)`` would cost microseconds)."""
    for name, seq in seqs:
        dtype = getattr(seq, "dtype", None)
        if getattr(dtype, "char", None) != "B" or len(getattr(seq, "shape", ())) != 1:
            return f"{name}: parasail aligns 1-D uint8 codes, not {dtype} {type(seq).__name__}"
    shape: tuple[int, ...] = tuple(getattr(matrix, "shape", ()))
    if len(shape) != 2 or shape[0] != shape[1] or not 1 <= shape[0] <= 255:
        return f"matrix: parasail takes a square matrix of 1 to 255 letters, not shape {shape}"
    if gap_open is None or gap_extend is None:
        return None  # explained from array specs alone (`prism explain OP --shape ...`)
    try:
        if gap_open < gap_extend:
            return (
                f"gap_extend ({gap_extend}) > gap_open ({gap_open}): parasail's vectorised "
                "kernels are not exact there (parasail issue #64)"
            )
    except TypeError:
        return f"gap_open, gap_extend: integers expected, not {gap_open!r}, {gap_extend!r}"
    return None


def _usual(first: Any, second: Any, matrix: Any, gap_open: Any, gap_extend: Any) -> bool:
    """Whether a call passes every check of :func:`_common`, tested in one expression: the
    check runs before every call, and most calls pass it (0.4 us, where :func:`_common` takes
    0.8; it gives the reasons)."""
    try:
        shape = matrix.shape
        return bool(
            first.dtype.char == "B"
            and second.dtype.char == "B"
            and first.ndim == 1
            and second.ndim == 1
            and len(shape) == 2
            and shape[0] == shape[1]
            and 0 < shape[0] < 256
            and gap_open >= gap_extend
        )
    except (AttributeError, TypeError):
        return False


def takes_pair(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``parasail.sw_align.<isa>``: uint8 codes, a matrix of at most 255
    letters, ``gap_open >= gap_extend``, no traceback."""
    if not kwargs and len(args) == 6:
        query, target, matrix, gap_open, gap_extend, traceback = args
        if not traceback and _usual(query, target, matrix, gap_open, gap_extend):
            return True
    query, target, matrix, gap_open, gap_extend, traceback = _named(args, kwargs, _PAIR)
    if traceback:
        return "traceback: parasail's variants give the score and end positions only"
    why = _common((("query", query), ("target", target)), matrix, gap_open, gap_extend)
    return True if why is None else why


def takes_batch(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``parasail.sw_align_batch.<isa>``: as :func:`takes_pair`."""
    if not kwargs and len(args) == 6:
        query, targets, _, matrix, gap_open, gap_extend = args
        if _usual(query, targets, matrix, gap_open, gap_extend):
            return True
    query, targets, _, matrix, gap_open, gap_extend = _named(args, kwargs, _BATCH)
    why = _common((("query", query), ("targets", targets)), matrix, gap_open, gap_extend)
    return True if why is None else why


def takes_threaded_batch(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``parasail.sw_align_batch.<isa>.threads``: as :func:`takes_batch`, for
    at least two targets and :data:`PARALLEL_MIN_CELLS` cell updates, on more than one CPU."""
    query, targets, offsets, matrix, gap_open, gap_extend = _named(args, kwargs, _BATCH)
    why = _common((("query", query), ("targets", targets)), matrix, gap_open, gap_extend)
    if why:
        return why
    count = int(offsets.shape[0]) - 1 if len(getattr(offsets, "shape", ())) == 1 else 0
    cells = int(query.shape[0]) * int(targets.shape[0])
    if count < 2 or cells < PARALLEL_MIN_CELLS or cells < count * PARALLEL_MIN_CELLS_PER_TARGET:
        return (
            f"{count} target(s), {cells} cell updates: too few to share between threads "
            f"(it takes 2 targets, {PARALLEL_MIN_CELLS} cells and "
            f"{PARALLEL_MIN_CELLS_PER_TARGET} per target)"
        )
    if usable_cpus() < 2:
        return "this process may run on one CPU only"
    return True


def takes_family(isa: str, family: str, batch: bool) -> Callable[..., bool | str]:
    """``can_run`` of ``parasail.sw_align[_batch].<isa>.<family>``: as :func:`takes_pair` (or
    :func:`takes_batch`), and only where the rule is unsure between ``family`` and its own
    pick (``why.judge``); else why not: the rule's choice, in words.  For a batch, as for
    its first non-empty target."""

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        if batch:
            query, targets, offsets, matrix, gap_open, gap_extend = _named(args, kwargs, _BATCH)
            seqs: tuple[tuple[str, Any], ...] = (("query", query), ("targets", targets))
        else:
            query, target, matrix, gap_open, gap_extend, traceback = _named(args, kwargs, _PAIR)
            if traceback:
                return "traceback: parasail's variants give the score and end positions only"
            seqs = (("query", query), ("target", target))
        why = _common(seqs, matrix, gap_open, gap_extend)
        if why:
            return why
        if gap_open is None or gap_extend is None or not hasattr(matrix, "__array_interface__"):
            return (
                f"the {family} family is taken only where the rule is unsure, which the "
                "matrix's values and the penalties decide: explain a call with them"
            )
        if batch:
            for lo, hi in itertools.pairwise(int(x) for x in offsets):
                if hi > lo:
                    target = targets[lo:hi]
                    break
            else:
                return "no non-empty target: scores 0, no kernel runs"
        from .why import judge

        try:
            ok, text = judge(
                isa, family, query, target, int(target.shape[0]), matrix, gap_open, gap_extend
            )
        except (TypeError, ValueError) as exc:
            return str(exc)
        return True if ok else text

    return can_run


def variants(ops: Collection[str] | None = None) -> list[Variant]:
    """The variants of the ``prism_variants`` hook (only for the ops in ``ops`` when given)."""
    out: list[Variant] = []

    def add(
        op: str, function: str, isa: str, can_run: Callable[..., bool | str], name: str, bump: int
    ) -> None:
        if ops is not None and op not in ops:
            return
        out.append(
            Variant(
                op,
                f"{_OPS}:{function}",
                backend="parasail",
                requires=ISA_REQUIREMENTS[isa],
                priority=PRIORITIES[isa] + bump,
                can_run=can_run,
                name=name,
            )
        )

    for isa in ISA_REQUIREMENTS:
        add("genomics.sw_align", f"sw_align_{isa}", isa, takes_pair, f"parasail.sw_align.{isa}", 0)
        for family in FAMILIES:
            for op, function, batch in (
                ("genomics.sw_align", f"sw_align_{isa}_{family}", False),
                ("genomics.sw_align_batch", f"sw_align_batch_{isa}_{family}", True),
            ):
                name = f"parasail.{op.removeprefix('genomics.')}.{isa}.{family}"
                add(op, function, isa, takes_family(isa, family, batch), name, -1)
        add(
            "genomics.sw_align_batch",
            f"sw_align_batch_{isa}",
            isa,
            takes_batch,
            f"parasail.sw_align_batch.{isa}",
            0,
        )
        add(
            "genomics.sw_align_batch",
            f"sw_align_batch_{isa}_threads",
            isa,
            takes_threaded_batch,
            f"parasail.sw_align_batch.{isa}.threads",
            1,
        )
    return out
