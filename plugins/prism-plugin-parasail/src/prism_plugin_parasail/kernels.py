"""parasail's Smith-Waterman kernels, called per instruction set, on Prism's encoded sequences.

What the kernels receive is what every variant of ``genomics.sw_align`` and
``genomics.sw_align_batch`` receives (``docs/genomics.md``): sequences as ``uint8`` codes
``0..k-1``, a ``k x k`` int32 substitution matrix, and positive gap penalties (a gap of length
``L`` costs ``gap_open + (L - 1) * gap_extend``, parasail's and Biopython's convention).  What
they return is the score and the 0-based inclusive end positions, ``-1``/``-1`` for a score of
0.

How the codes reach parasail.  parasail maps each *byte* of a sequence to a row of its matrix
through a 256-entry table built from an alphabet string.  The alphabet here is the bytes
``1..k`` (a C string cannot hold byte 0), so a sequence is passed as ``codes + 1``, and the
matrix is parasail's own (``parasail.matrix_create``, case-sensitive) with the caller's ``k x k``
values set into it, *transposed*: Prism's ``matrix[a, b]`` scores query letter ``a`` against
target letter ``b``, and parasail's vectorised kernels build their query profile from the
matrix's columns, scoring a pair as ``matrix[target][query]`` (its scalar kernels read it the
other way round; found with asymmetric matrices, which no symmetric test matrix would show).
It is built once per distinct matrix and kept (:func:`parasail_matrix`).
Sequences are passed by address, never copied again.

Which kernels.  parasail's Python module binds only its run-time dispatchers
(``sw_striped_sat`` picks the widest instruction set the CPU has); this module binds the
functions of one instruction set by their C names (``parasail_sw_striped_avx2_256_sat``), so
that each Prism variant runs exactly the instructions its requirements name, and ``prism
explain`` tells the truth about it.  Per call:

* ``gap_open > gap_extend``: the striped kernel (Farrar's), parasail's fastest;
* ``gap_open == gap_extend``: the prefix-scan kernel.  The striped kernels give wrong scores
  there (measured: 50 of 1,764 random DNA pairs with equal penalties scored 1-3 below the
  exact optimum, never with ``gap_open > gap_extend``; the scan kernels were exact in all);
* ``gap_open < gap_extend``: neither is exact (parasail issue #64); the variants decline it
  (:func:`unsupported`) and the reference computes it.

Lanes: the ``_sat`` kernels compute in 8-bit lanes and redo the alignment in 16-bit lanes when a
score saturates; when the 16-bit result saturates too (scores beyond 32,767) this module redoes
it in 32-bit lanes, then 64-bit.  So every score is exact whatever its size.

Tie-breaking of the end positions, measured against an exhaustive reference on 3,000 random
pairs, ties included: parasail reports the first cell holding the maximum in target-major
order, that is the smallest ``target_end``, then the smallest ``query_end``; Prism's reference
follows the same rule.

Threads: ctypes releases the GIL around every foreign call, so :func:`align_batch` runs the
targets of a batch on several threads, each with its own share of the targets and the query
profile built once (parasail only reads it).

This module imports parasail (and NumPy); dispatch imports it when it first runs a parasail
variant, never at plugin discovery.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import parasail  # type: ignore[import-untyped, unused-ignore]

from prism_core.backend_kit import balanced_chunks, thread_pool, usable_cpus

__all__ = [
    "ISAS",
    "Isa",
    "align",
    "align_batch",
    "batch_threads",
    "isa_usable",
    "parasail_matrix",
    "unsupported",
]

#: The widest lane first; a lane that saturates hands the alignment to the next.
_LANES = ("sat", "32", "64")


@dataclass(frozen=True)
class Isa:
    """One instruction set parasail is built for: its tag in the C names and its run-time
    check."""

    name: str
    #: In the kernel names: ``parasail_sw_striped_<tag>_sat``.
    tag: str
    #: In the profile constructors' names: ``parasail_profile_create_<profile_tag>_sat``.
    profile_tag: str
    #: parasail's own check that this CPU executes it (``parasail.can_use_avx2``).
    check: str


ISAS: dict[str, Isa] = {
    "avx2": Isa("avx2", "avx2_256", "avx_256", "can_use_avx2"),
    "sse41": Isa("sse41", "sse41_128", "sse_128", "can_use_sse41"),
    "neon": Isa("neon", "neon_128", "neon_128", "can_use_neon"),
}


class _Result(ctypes.Structure):
    """parasail's ``parasail_result_t`` (its leading fields)."""

    _fields_ = [
        ("score", ctypes.c_int),
        ("end_query", ctypes.c_int),
        ("end_ref", ctypes.c_int),
        ("flag", ctypes.c_int),
        ("extra", ctypes.c_void_p),
    ]


_ResultP = ctypes.POINTER(_Result)
_lib: Any = parasail._lib
_FuncPtr: Any = type(_lib.parasail_result_free)


def _bind(name: str, argtypes: list[Any], restype: Any) -> Any:
    """A ctypes function of our own for the C symbol ``name`` (parasail's module keeps its own
    objects, with its own argument types, untouched)."""
    fn = _FuncPtr((name, _lib))
    fn.argtypes = argtypes
    fn.restype = restype
    return fn


_free = _bind("parasail_result_free", [_ResultP], None)
_profile_free = _bind("parasail_profile_free", [ctypes.c_void_p], None)
_PAIR_ARGS = [
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_char_p,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_void_p,
]
_PROFILE_ARGS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]


@dataclass(frozen=True)
class _Kernels:
    """The C functions of one instruction set: per method and lane width."""

    pair: dict[tuple[str, str], Any]
    profile: dict[tuple[str, str], Any]
    create: dict[str, Any]


_kernels: dict[str, _Kernels] = {}
_kernels_lock = threading.Lock()


def _kernels_of(isa: Isa) -> _Kernels:
    found = _kernels.get(isa.name)
    if found is None:
        with _kernels_lock:
            found = _kernels.get(isa.name)
            if found is None:
                pair, profile, create = {}, {}, {}
                for method in ("striped", "scan"):
                    for lane in _LANES:
                        pair[method, lane] = _bind(
                            f"parasail_sw_{method}_{isa.tag}_{lane}", _PAIR_ARGS, _ResultP
                        )
                        profile[method, lane] = _bind(
                            f"parasail_sw_{method}_profile_{isa.tag}_{lane}",
                            _PROFILE_ARGS,
                            _ResultP,
                        )
                for lane in _LANES:
                    create[lane] = _bind(
                        f"parasail_profile_create_{isa.profile_tag}_{lane}",
                        [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p],
                        ctypes.c_void_p,
                    )
                found = _Kernels(pair, profile, create)
                _kernels[isa.name] = found
    return found


@functools.cache
def isa_usable(name: str) -> bool:
    """Whether this CPU executes the instruction set ``name`` (parasail's own run-time check).

    Dispatch never chooses a variant whose CPU flag the device description lacks; this is the
    second line of defence, for a description that claims a flag the CPU does not have (a
    user's file, a virtual machine that hides AVX2): the kernel raises instead of dying of an
    illegal instruction.  Asked once per instruction set and process."""
    isa = ISAS[name]
    return bool(getattr(parasail, isa.check)())


def unsupported(gap_open: int, gap_extend: int) -> str | None:
    """Why parasail's vectorised kernels cannot compute these penalties exactly, or ``None``."""
    if gap_open < gap_extend:
        return (
            f"gap_extend ({gap_extend}) > gap_open ({gap_open}): parasail's vectorised kernels "
            "are not exact there (parasail issue #64)"
        )
    return None


# -- matrices -----------------------------------------------------------------------------------

_MATRICES: OrderedDict[tuple[int, bytes], tuple[Any, int]] = OrderedDict()
_MATRICES_KEPT = 32
_matrices_lock = threading.Lock()


def parasail_matrix(matrix: np.ndarray[Any, Any]) -> Any:
    """parasail's matrix for a ``k x k`` integer substitution matrix over the bytes ``1..k``
    (kept for the last 32 distinct matrices: building one sets ``k * k`` values one by one)."""
    return _matrix(matrix)[0]


def _matrix(matrix: np.ndarray[Any, Any]) -> tuple[Any, int]:
    """:func:`parasail_matrix` and the C address of its ``parasail_matrix_t``."""
    values = np.ascontiguousarray(matrix, dtype=np.int32)
    k = int(values.shape[0])
    key = (k, values.tobytes())
    with _matrices_lock:
        found = _MATRICES.get(key)
        if found is not None:
            _MATRICES.move_to_end(key)
            return found
    alphabet = "".join(chr(code + 1) for code in range(k))
    made = parasail.matrix_create(alphabet, 0, 0, case_sensitive=True)
    for row in range(k):
        for col in range(k):
            # Transposed: the vectorised kernels score a pair as matrix[target][query].
            made.set_value(row, col, int(values[col, row]))
    entry = (made, _address(made))
    with _matrices_lock:
        _MATRICES[key] = entry
        while len(_MATRICES) > _MATRICES_KEPT:
            _MATRICES.popitem(last=False)
    return entry


@functools.cache
def _table(k: int) -> bytes:
    """``bytes.translate`` table: code ``c < k`` to parasail's byte ``c + 1``, any other to 0."""
    return bytes(c + 1 if c < k else 0 for c in range(256))


def _to_parasail(name: str, codes: np.ndarray[Any, Any], k: int) -> bytes:
    """The codes as parasail's bytes (``code + 1``), checked in one pass of C: a code outside
    the matrix becomes byte 0, which ``in`` finds (``memchr``)."""
    if codes.dtype.char != "B" or codes.ndim != 1:
        raise TypeError(f"{name}: expected 1-D uint8 codes; got {codes.dtype} {codes.shape}")
    raw = codes.tobytes()
    out = raw.translate(_table(k))
    if b"\0" in out:
        at = out.index(b"\0")
        raise ValueError(
            f"{name}: code {raw[at]} at position {at} is outside the matrix's alphabet (codes 0 "
            f"to {k - 1} for a {k} x {k} matrix)"
        )
    return out


def _validate(matrix: np.ndarray[Any, Any], gap_open: int, gap_extend: int) -> int:
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not 1 <= matrix.shape[0] <= 255:
        raise ValueError(
            f"matrix: expected a square k x k matrix with 1 <= k <= 255; got shape "
            f"{tuple(matrix.shape)}"
        )
    for name, value in (("gap_open", gap_open), ("gap_extend", gap_extend)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name}: expected an integer penalty; got {value!r}")
        if not 0 <= int(value) < 2**30:
            raise ValueError(f"{name}: expected a penalty from 0 to 2**30 - 1; got {value!r}")
    why = unsupported(int(gap_open), int(gap_extend))
    if why:
        raise ValueError(why)
    return int(matrix.shape[0])


def _address(matrix: Any) -> int:
    """The C address of a ``parasail.Matrix``'s ``parasail_matrix_t``."""
    return int(ctypes.cast(matrix.pointer, ctypes.c_void_p).value or 0)


#: ``PARASAIL_FLAG_SATURATED`` of parasail.h: a lane saturated (read from the result's flags,
#: not through ``parasail_result_is_saturated``: one foreign call less per alignment).
_SATURATED = 1 << 6


def _read(result: Any) -> tuple[int, int, int, bool]:
    """Score, end in the query, end in the target and whether a lane saturated; frees it."""
    if not result:
        raise MemoryError("parasail returned no result (it could not allocate its tables)")
    try:
        got = result.contents
        return got.score, got.end_query, got.end_ref, bool(got.flag & _SATURATED)
    finally:
        _free(result)


def _ends(score: int, end_query: int, end_ref: int) -> tuple[int, int, int]:
    return (score, end_query, end_ref) if score > 0 else (0, -1, -1)


def align(
    isa_name: str,
    query: np.ndarray[Any, Any],
    target: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
) -> tuple[int, int, int]:
    """Local alignment of one pair on the kernels of ``isa_name``: ``(score, query_end,
    target_end)``, exact at any score (lanes promoted on saturation)."""
    if not isa_usable(isa_name):
        raise RuntimeError(
            f"parasail: this CPU does not execute {isa_name} (parasail.{ISAS[isa_name].check}() "
            "is false), although the device description in scope lists it"
        )
    k = _validate(matrix, gap_open, gap_extend)
    q = _to_parasail("query", query, k)
    t = _to_parasail("target", target, k)
    n, m = len(q), len(t)
    if n == 0 or m == 0:
        return 0, -1, -1
    kernels = _kernels_of(ISAS[isa_name])
    method = "striped" if gap_open > gap_extend else "scan"
    _pm, address = _matrix(matrix)  # _pm keeps the matrix alive while parasail reads it
    o, e = int(gap_open), int(gap_extend)
    for lane in _LANES:
        fn = kernels.pair[method, lane]
        score, qe, te, saturated = _read(fn(q, n, t, m, o, e, address))
        if not saturated:
            return _ends(score, qe, te)
    raise OverflowError("parasail: the score saturated even 64-bit lanes")


class _Profile:
    """A query profile of one instruction set, one lane width; freed with the object."""

    def __init__(self, create: Any, q: np.ndarray[Any, Any], address: int) -> None:
        self._q = q  # parasail keeps a pointer to the sequence: keep it alive
        self.pointer = create(q.ctypes.data, int(q.shape[0]), address)
        if not self.pointer:
            raise MemoryError("parasail could not allocate the query profile")

    def __del__(self) -> None:
        pointer = getattr(self, "pointer", None)
        if pointer:
            _profile_free(pointer)


class _BatchWork:
    """What the threads of one batch share: the profiles (the wider ones made on demand)."""

    def __init__(self, kernels: _Kernels, q: np.ndarray[Any, Any], matrix_address: int) -> None:
        self.kernels = kernels
        self.q = q
        self.address = matrix_address
        self._profiles: dict[str, _Profile] = {}
        self._lock = threading.Lock()

    def profile(self, lane: str) -> _Profile:
        found = self._profiles.get(lane)
        if found is None:
            with self._lock:
                found = self._profiles.get(lane)
                if found is None:
                    found = _Profile(self.kernels.create[lane], self.q, self.address)
                    self._profiles[lane] = found
        return found


def _run_targets(
    work: _BatchWork,
    method: str,
    base: int,
    offsets: np.ndarray[Any, Any],
    start: int,
    stop: int,
    gap_open: int,
    gap_extend: int,
    out: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]],
) -> None:
    """Targets ``start..stop-1`` of a batch, results written into ``out`` (once, at the end:
    the loop holds the GIL between parasail calls, and the other threads wait for it)."""
    scores, query_ends, target_ends = out
    first = work.profile("sat").pointer
    kernel = work.kernels.profile[method, "sat"]
    bounds = offsets[start : stop + 1].tolist()  # Python ints: no NumPy scalar per target
    hits: list[tuple[int, int, int, int]] = []
    for i, lo, hi in zip(range(start, stop), bounds[:-1], bounds[1:], strict=True):
        if hi == lo:
            continue  # score 0, ends -1: as the arrays were made
        score, qe, te, saturated = _read(kernel(first, base + lo, hi - lo, gap_open, gap_extend))
        if saturated:
            for lane in _LANES[1:]:
                wider = work.kernels.profile[method, lane]
                score, qe, te, saturated = _read(
                    wider(work.profile(lane).pointer, base + lo, hi - lo, gap_open, gap_extend)
                )
                if not saturated:
                    break
            else:
                raise OverflowError("parasail: the score saturated even 64-bit lanes")
        if score > 0:
            hits.append((i, score, qe, te))
    if hits:
        index, got_scores, got_query_ends, got_target_ends = zip(*hits, strict=True)
        at = list(index)
        scores[at], query_ends[at], target_ends[at] = got_scores, got_query_ends, got_target_ends


def batch_threads() -> int:
    """How many threads a batch uses at most: the CPUs this process may run on."""
    return usable_cpus()


def align_batch(
    isa_name: str,
    query: np.ndarray[Any, Any],
    targets: np.ndarray[Any, Any],
    offsets: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
    *,
    threads: int = 1,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """One query against the packed ``targets`` (target ``i`` is
    ``targets[offsets[i]:offsets[i + 1]]``) on the kernels of ``isa_name``, with the query
    profile built once; ``threads`` > 1 splits the targets over that many threads (in chunks of
    about equal residues, four per thread, taken as threads come free).  Returns int64
    ``(scores, query_ends, target_ends)``."""
    if not isa_usable(isa_name):
        raise RuntimeError(
            f"parasail: this CPU does not execute {isa_name} (parasail.{ISAS[isa_name].check}() "
            "is false), although the device description in scope lists it"
        )
    k = _validate(matrix, gap_open, gap_extend)
    offsets = np.asarray(offsets, dtype=np.int64)
    count = int(offsets.shape[0]) - 1
    if count < 0 or (count and (int(offsets[0]) < 0 or int(offsets[-1]) > targets.shape[0])):
        raise ValueError(
            f"offsets: expected t + 1 increasing positions within the {targets.shape[0]} packed "
            f"target codes; got {offsets.shape[0]} from {offsets[:1]} to {offsets[-1:]}"
        )
    if count and bool(np.any(np.diff(offsets) < 0)):
        raise ValueError(
            "offsets: expected non-decreasing positions (target i is "
            "targets[offsets[i]:offsets[i + 1]])"
        )
    q = _to_parasail("query", query, k)
    packed = np.frombuffer(_to_parasail("targets", targets, k), dtype=np.uint8)
    scores = np.zeros(count, dtype=np.int64)
    query_ends = np.full(count, -1, dtype=np.int64)
    target_ends = np.full(count, -1, dtype=np.int64)
    if count == 0 or query.shape[0] == 0:
        return scores, query_ends, target_ends
    kernels = _kernels_of(ISAS[isa_name])
    method = "striped" if gap_open > gap_extend else "scan"
    _pm, address = _matrix(matrix)  # _pm keeps the matrix alive while parasail reads it
    work = _BatchWork(kernels, np.frombuffer(q, dtype=np.uint8), address)
    base = int(packed.ctypes.data)
    out = (scores, query_ends, target_ends)
    threads = max(1, min(int(threads), count))
    run: Callable[[tuple[int, int]], None] = lambda span: _run_targets(  # noqa: E731
        work, method, base, offsets, span[0], span[1], int(gap_open), int(gap_extend), out
    )
    if threads == 1:
        run((0, count))
    else:
        spans: Sequence[tuple[int, int]] = balanced_chunks(offsets, 4 * threads)
        for _ in thread_pool(threads, "parasail").map(run, spans):
            pass
    del packed  # the threads are done with it: keep it alive until here
    return scores, query_ends, target_ends
