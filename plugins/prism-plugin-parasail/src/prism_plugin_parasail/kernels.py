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
functions of one instruction set by their C names (``parasail_sw_striped_profile_avx2_256_8``), so
that each Prism variant runs exactly the instructions its requirements name, and ``prism
explain`` tells the truth about it.  Per call:

* ``gap_open > gap_extend``: the striped kernel (Farrar's), parasail's fastest;
* ``gap_open == gap_extend``: the prefix-scan kernel.  The striped kernels give wrong scores
  there (measured: 50 of 1,764 random DNA pairs with equal penalties scored 1-3 below the
  exact optimum, never with ``gap_open > gap_extend``; the scan kernels were exact in all);
* ``gap_open < gap_extend``: neither is exact (parasail issue #64); the variants decline it
  (:func:`unsupported`) and the reference computes it.

Lanes.  parasail computes in lanes of 8, 16, 32 or 64 bits, and flags a result whose running
maximum came near the lane's top (it then stops early, in the striped kernels); narrower lanes
do more cells per instruction (32 per AVX2 instruction in 8 bits, 16 in 16).  Each call runs the
narrowest lane width that can hold the score (:func:`lanes`, :func:`lane_limit`), decided before
calling from what is known of the score:

* an upper bound: ``min(n, m)`` times the largest value of the matrix.  A lane that holds the
  bound cannot saturate; the call never starts wider than that;
* what is likely: the score of the last alignment of the same query (the query and its
  profiles are kept, :func:`_query`), and, where a failed trial would waste a whole pass in
  16-bit lanes (the bound passes their limit, and 2**24 cells or more), a lower bound: the
  best ungapped stretch of the main diagonal (:func:`_diagonal`, cheap beside such a pair).
  Unrelated sequences score far below the upper bound (about ``ln(n m) / lambda``: tens
  where the bound says thousands), so with nothing known the call starts in the narrowest lane;
* the lanes a matrix and penalties fit: parasail casts the matrix's values and the penalties
  to the lane's type, and a value that does not fit wraps silently (a matrix value of 200 in
  8-bit lanes scored wrong, measured), so such lanes are never used.

A result that saturates anyway is redone in the next wider lane; a score is never returned from a
saturated lane.  The widest lane used is 32 bits: parasail's result holds an ``int``, so a score
that saturates 32-bit lanes raises ``OverflowError`` (the reference computes it).  In lanes wider
than the narrowest, which only high scores (similar sequences) reach, the prefix-scan kernel
replaces the striped one where it was measured faster (:func:`lanes`).

Tie-breaking of the end positions, measured against an exhaustive reference on 3,000 random
pairs, ties included: parasail reports the first cell holding the maximum in target-major
order, that is the smallest ``target_end``, then the smallest ``query_end``; Prism's reference
follows the same rule.

Threads: ctypes releases the GIL around every foreign call, so :func:`align_batch` runs the
targets of a batch on several threads, each with its own share of the targets and the query
profiles built once (parasail only reads them).

This module imports parasail (and NumPy); dispatch imports it when it first runs a parasail
variant, never at plugin discovery.
"""

from __future__ import annotations

import ctypes
import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import parasail  # type: ignore[import-untyped, unused-ignore]

from prism_core.backend_kit import balanced_chunks, thread_pool, usable_cpus

__all__ = [
    "ISAS",
    "PROBE_CELLS",
    "WIDTHS",
    "Isa",
    "Lane",
    "align",
    "align_batch",
    "batch_threads",
    "isa_usable",
    "lane_limit",
    "lanes",
    "parasail_matrix",
    "unsupported",
]

#: The lane widths used, narrowest first.  parasail's 64-bit lanes are not: its result holds an
#: ``int``, so their scores beyond 32 bits came back truncated (measured: 0 for 3 * 2**30).
WIDTHS = (8, 16, 32)
#: A pair of at least this many cells whose upper bound passes the second lane's limit gets the
#: lower bound of its main diagonal first (:func:`_diagonal`, about 10 us per 1,000 letters of
#: the shorter sequence; a failed trial in 16-bit lanes would cost more than that pass).
PROBE_CELLS = 1 << 24
#: How many queries are kept with their profiles and last score (:func:`_query`) ...
_QUERIES_KEPT = 16
#: ... each of at most this many profile cells (letters times the matrix's letters: 256 KiB in
#: 8-bit lanes).  Longer ones are profiled per call, where the alignment outweighs it.
_QUERY_CELLS_KEPT = 1 << 18


@dataclass(frozen=True)
class Isa:
    """One instruction set parasail is built for: its tag in the C names and its run-time
    check."""

    name: str
    #: In the kernel names: ``parasail_sw_striped_profile_<tag>_8``.
    tag: str
    #: In the profile constructors' names: ``parasail_profile_create_<profile_tag>_8``.
    profile_tag: str
    #: parasail's own check that this CPU executes it (``parasail.can_use_avx2``).
    check: str


ISAS: dict[str, Isa] = {
    "avx2": Isa("avx2", "avx2_256", "avx_256", "can_use_avx2"),
    "sse41": Isa("sse41", "sse41_128", "sse_128", "can_use_sse41"),
    "neon": Isa("neon", "neon_128", "neon_128", "can_use_neon"),
}


@dataclass(frozen=True)
class Lane:
    """A lane width and the kernel that computes in it, with the largest score it holds."""

    bits: int
    #: ``"striped"`` or ``"scan"``.
    method: str
    #: The largest score these lanes hold without saturating (:func:`lane_limit`).
    limit: int


def lane_limit(method: str, bits: int, top: int) -> int:
    """The largest local score parasail's ``method`` kernels hold in lanes of ``bits`` bits,
    for a matrix whose largest value is ``top`` (at least 0).

    parasail flags saturation when the running maximum passes the lane's largest value less
    ``top + 1``; its striped 8- and 16-bit kernels count scores from the lane's smallest value
    (a bias), so they hold about twice as much (``sw_striped_16`` holds 65,532 at match 2,
    ``sw_scan_16`` 32,764: measured, and read in parasail's sources)."""
    if method == "striped" and bits <= 16:
        return (1 << bits) - 2 - top
    return (1 << (bits - 1)) - 2 - top


def _holds(bits: int, low: int, top: int, gap_open: int) -> bool:
    """Whether lanes of ``bits`` bits hold the matrix's values (``low..top``) and the penalties
    as parasail casts them (``top + 1`` too: its saturation threshold)."""
    largest = (1 << (bits - 1)) - 1
    return -largest - 1 <= low and top < largest and gap_open <= largest


@functools.lru_cache(maxsize=256)
def lanes(low: int, top: int, gap_open: int, gap_extend: int) -> tuple[Lane, ...]:
    """The lanes a call may run in, narrowest first, for a matrix of values ``low..top`` (each
    taken with 0, as parasail's matrix does) and these penalties.

    The narrowest lane that holds the matrix and penalties runs the striped kernel
    (``gap_open > gap_extend``) or the scan kernel (equal penalties, where the striped one is
    not exact).  Wider lanes are reached only by high scores, that is similar sequences; there
    the striped kernel's correction loop runs long when gaps are cheap to extend, and the scan
    kernel was faster (measured on 1,000-letter pairs of 50-100% identity: BLOSUM62 with gaps
    11/1 to 20/6, DNA with extension 1 or matches of 5) wherever ``top > gap_extend`` in 16-bit
    lanes and ``top > 2.5 gap_extend`` in 32-bit ones; elsewhere (DNA 2/-3 with gaps 5/2) the
    striped one was as fast or faster (up to 1.3x).  As the striped 16-bit lanes hold twice
    what the scan ones do, both are listed there, scan first."""
    base = "striped" if gap_open > gap_extend else "scan"
    out: list[Lane] = []
    for bits in WIDTHS:
        if not _holds(bits, low, top, gap_open):
            continue
        methods = [base]
        if out and base == "striped" and 2 * top > (2 if bits == 16 else 5) * gap_extend:
            methods = ["scan", "striped"]
        for method in methods:
            limit = lane_limit(method, bits, top)
            if not out or limit > out[-1].limit:
                out.append(Lane(bits, method, limit))
    return tuple(out)


def _first(choices: tuple[Lane, ...], bound: int, likely: int) -> int:
    """Which of ``choices`` to start in: the narrowest that holds the upper ``bound`` (it
    cannot saturate) or the ``likely`` score, whichever is narrower."""
    want = min(bound, likely)
    for i, lane in enumerate(choices):
        if lane.limit >= want:
            return i
    return len(choices) - 1


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
_PROFILE_ARGS = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int]


@dataclass(frozen=True)
class _Kernels:
    """The C functions of one instruction set: the alignments with a query profile per method
    and lane width, and the profile constructors per lane width."""

    profile: dict[tuple[str, int], Any]
    create: dict[int, Any]


_kernels: dict[str, _Kernels] = {}
_kernels_lock = threading.Lock()


def _kernels_of(isa: Isa) -> _Kernels:
    found = _kernels.get(isa.name)
    if found is None:
        with _kernels_lock:
            found = _kernels.get(isa.name)
            if found is None:
                profile, create = {}, {}
                for bits in WIDTHS:
                    for method in ("striped", "scan"):
                        profile[method, bits] = _bind(
                            f"parasail_sw_{method}_profile_{isa.tag}_{bits}",
                            _PROFILE_ARGS,
                            _ResultP,
                        )
                    create[bits] = _bind(
                        f"parasail_profile_create_{isa.profile_tag}_{bits}",
                        [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p],
                        ctypes.c_void_p,
                    )
                found = _Kernels(profile, create)
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


def _usable(isa_name: str) -> _Kernels:
    if not isa_usable(isa_name):
        raise RuntimeError(
            f"parasail: this CPU does not execute {isa_name} (parasail.{ISAS[isa_name].check}() "
            "is false), although the device description in scope lists it"
        )
    return _kernels_of(ISAS[isa_name])


def unsupported(gap_open: int, gap_extend: int) -> str | None:
    """Why parasail's vectorised kernels cannot compute these penalties exactly, or ``None``."""
    if gap_open < gap_extend:
        return (
            f"gap_extend ({gap_extend}) > gap_open ({gap_open}): parasail's vectorised kernels "
            "are not exact there (parasail issue #64)"
        )
    return None


# -- matrices -----------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Matrix:
    """parasail's matrix for one substitution matrix, the C address of its
    ``parasail_matrix_t``, and the extremes parasail keeps of it."""

    parasail: Any
    address: int
    k: int
    #: The smallest and largest value, each taken with 0 (parasail's matrix starts all 0).
    low: int
    top: int


_MATRICES: dict[tuple[int, bytes], _Matrix] = {}
_MATRICES_KEPT = 32
_matrices_lock = threading.Lock()


def parasail_matrix(matrix: np.ndarray[Any, Any]) -> Any:
    """parasail's matrix for a ``k x k`` integer substitution matrix over the bytes ``1..k``
    (kept for the last 32 distinct matrices built: building one sets ``k * k`` values one by
    one)."""
    return _matrix(matrix).parasail


def _matrix(matrix: np.ndarray[Any, Any]) -> _Matrix:
    """:func:`parasail_matrix` with its address and extremes; checks the matrix's shape."""
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or not 1 <= matrix.shape[0] <= 255:
        raise ValueError(
            f"matrix: expected a square k x k matrix with 1 <= k <= 255; got shape "
            f"{tuple(matrix.shape)}"
        )
    values = np.ascontiguousarray(matrix, dtype=np.int32)
    k = int(values.shape[0])
    key = (k, values.tobytes())
    found = _MATRICES.get(key)
    if found is not None:
        return found
    alphabet = "".join(chr(code + 1) for code in range(k))
    made = parasail.matrix_create(alphabet, 0, 0, case_sensitive=True)
    for row in range(k):
        for col in range(k):
            # Transposed: the vectorised kernels score a pair as matrix[target][query].
            made.set_value(row, col, int(values[col, row]))
    address = int(ctypes.cast(made.pointer, ctypes.c_void_p).value or 0)
    entry = _Matrix(made, address, k, min(0, int(values.min())), max(0, int(values.max())))
    with _matrices_lock:
        entry = _MATRICES.setdefault(key, entry)
        while len(_MATRICES) > _MATRICES_KEPT:
            del _MATRICES[next(iter(_MATRICES))]
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


def _penalties(gap_open: int, gap_extend: int) -> tuple[int, int]:
    if type(gap_open) is int and type(gap_extend) is int and 0 <= gap_extend <= gap_open < 2**30:
        return gap_open, gap_extend  # the usual call, in one test
    for name, value in (("gap_open", gap_open), ("gap_extend", gap_extend)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name}: expected an integer penalty; got {value!r}")
        if not 0 <= int(value) < 2**30:
            raise ValueError(f"{name}: expected a penalty from 0 to 2**30 - 1; got {value!r}")
    why = unsupported(int(gap_open), int(gap_extend))
    if why:
        raise ValueError(why)
    return int(gap_open), int(gap_extend)


# -- queries ------------------------------------------------------------------------------------


class _Query:
    """A query as parasail reads it, kept between calls: its profiles, one per lane width,
    made when first needed (parasail only reads them: threads share them), and the score of
    its last alignment, the likely score of the next."""

    def __init__(self, kernels: _Kernels, q: bytes, matrix: _Matrix) -> None:
        self.kernels = kernels
        self.q = q  # parasail keeps pointers to the sequence and the matrix: keep both alive
        self.matrix = matrix
        self.last = 0
        self._profiles: dict[int, int] = {}
        self._lock = threading.Lock()
        self._release = _profile_free  # still here when the module is torn down at exit

    def profile(self, bits: int) -> int:
        """The address of the query's profile for lanes of ``bits`` bits."""
        found = self._profiles.get(bits)
        if found is None:
            with self._lock:
                found = self._profiles.get(bits)
                if found is None:
                    found = self.kernels.create[bits](self.q, len(self.q), self.matrix.address)
                    if not found:
                        raise MemoryError("parasail could not allocate the query profile")
                    self._profiles[bits] = found
        return found

    def __del__(self) -> None:
        for pointer in getattr(self, "_profiles", {}).values():
            self._release(pointer)


_QUERIES: dict[tuple[str, bytes, _Matrix], _Query] = {}
_queries_lock = threading.Lock()


def _query(isa: str, kernels: _Kernels, q: bytes, matrix: _Matrix) -> _Query:
    """The kept query ``q`` for this instruction set and matrix, or a new one, kept (the last
    :data:`_QUERIES_KEPT` queries of at most :data:`_QUERY_CELLS_KEPT` profile cells): a query
    aligned again, as a search does, reuses its profiles, and starts in the lane its last
    alignment needed."""
    key = (isa, q, matrix)
    found = _QUERIES.get(key)
    if found is None:
        found = _Query(kernels, q, matrix)
        if len(q) * matrix.k <= _QUERY_CELLS_KEPT:
            with _queries_lock:
                found = _QUERIES.setdefault(key, found)
                while len(_QUERIES) > _QUERIES_KEPT:
                    del _QUERIES[next(iter(_QUERIES))]
    return found


def _diagonal(query: np.ndarray[Any, Any], target: np.ndarray[Any, Any], matrix: Any) -> int:
    """A lower bound of the local score: the best ungapped stretch of the main diagonal
    (query letter ``i`` against target letter ``i``)."""
    length = min(query.shape[0], target.shape[0])
    running = np.cumsum(matrix[query[:length], target[:length]], dtype=np.int64)
    return int((running - np.minimum(np.minimum.accumulate(running), 0)).max(initial=0))


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


def _run(
    query: _Query,
    choices: tuple[Lane, ...],
    first: int,
    target: Any,
    length: int,
    gap_open: int,
    gap_extend: int,
) -> tuple[int, int, int]:
    """One target (bytes or an address) in ``choices[first]``, then each wider lane while the
    result saturates: ``(score, query_end, target_end)``."""
    for lane in choices[first:]:
        kernel = query.kernels.profile[lane.method, lane.bits]
        got = _read(kernel(query.profile(lane.bits), target, length, gap_open, gap_extend))
        if not got[3]:
            return got[:3] if got[0] > 0 else (0, -1, -1)
    raise OverflowError(
        "parasail: the score passes what 32-bit lanes hold with this matrix (2**31 - 2 less its "
        "largest value), and parasail's results hold no more; the numpy and numba backends "
        "compute it (use_backend('numpy'))"
    )


def align(
    isa_name: str,
    query: np.ndarray[Any, Any],
    target: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
) -> tuple[int, int, int]:
    """Local alignment of one pair on the kernels of ``isa_name``: ``(score, query_end,
    target_end)``, exact at any score up to 32 bits (module docstring: lanes)."""
    kernels = _usable(isa_name)
    mat = _matrix(matrix)
    o, e = _penalties(gap_open, gap_extend)
    q = _to_parasail("query", query, mat.k)
    t = _to_parasail("target", target, mat.k)
    n, m = len(q), len(t)
    if n == 0 or m == 0:
        return 0, -1, -1
    choices = lanes(mat.low, mat.top, o, e)
    kept = _query(isa_name, kernels, q, mat)
    bound, likely = min(n, m) * mat.top, kept.last
    if len(choices) > 1 and bound > choices[1].limit and n * m >= PROBE_CELLS:
        likely = max(likely, _diagonal(query, target, matrix))
    got = _run(kept, choices, _first(choices, bound, likely), t, m, o, e)
    kept.last = got[0]
    return got


def _run_targets(
    query: _Query,
    codes: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]],
    choices: tuple[Lane, ...],
    base: int,
    offsets: np.ndarray[Any, Any],
    start: int,
    stop: int,
    o: int,
    e: int,
    out: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]],
) -> None:
    """Targets ``start..stop-1`` of a batch with penalties ``o`` and ``e``, each starting in
    the lane the previous one needed (:func:`align`'s choice), results written into ``out``
    (once, at the end: the loop holds the GIL between parasail calls, and the other threads
    wait for it)."""
    scores, query_ends, target_ends = out
    n, top = len(query.q), query.matrix.top
    probe = choices[1].limit if len(choices) > 1 else None
    # The narrowest lane, where most targets (unrelated ones) stay, is called here directly:
    # a few Python calls less per target, which a short target notices.
    narrow = choices[0].limit
    kernel = query.kernels.profile[choices[0].method, choices[0].bits]
    profile = query.profile(choices[0].bits)
    bounds = offsets[start : stop + 1].tolist()  # Python ints: no NumPy scalar per target
    likely = query.last
    hits: list[tuple[int, int, int, int]] = []
    for i, lo, hi in zip(range(start, stop), bounds[:-1], bounds[1:], strict=True):
        if hi == lo:
            continue  # score 0, ends -1: as the arrays were made
        bound = min(n, hi - lo) * top
        if probe is not None and bound > probe and n * (hi - lo) >= PROBE_CELLS:
            q_codes, t_codes, matrix = codes
            likely = max(likely, _diagonal(q_codes, t_codes[lo:hi], matrix))
        if likely <= narrow or bound <= narrow:
            score, qe, te, saturated = _read(kernel(profile, base + lo, hi - lo, o, e))
            if saturated:
                score, qe, te = _run(query, choices, 1, base + lo, hi - lo, o, e)
        else:
            first = _first(choices, bound, likely)
            score, qe, te = _run(query, choices, first, base + lo, hi - lo, o, e)
        likely = score
        if score > 0:
            hits.append((i, score, qe, te))
    query.last = likely
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
    profiles built once (and kept: :func:`_query`); ``threads`` > 1 splits the targets over
    that many threads (in chunks of about equal residues, four per thread, taken as threads
    come free).  Returns int64 ``(scores, query_ends, target_ends)``."""
    kernels = _usable(isa_name)
    mat = _matrix(matrix)
    o, e = _penalties(gap_open, gap_extend)
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
    q = _to_parasail("query", query, mat.k)
    packed = np.frombuffer(_to_parasail("targets", targets, mat.k), dtype=np.uint8)
    scores = np.zeros(count, dtype=np.int64)
    query_ends = np.full(count, -1, dtype=np.int64)
    target_ends = np.full(count, -1, dtype=np.int64)
    if count == 0 or query.shape[0] == 0:
        return scores, query_ends, target_ends
    kept = _query(isa_name, kernels, q, mat)
    choices = lanes(mat.low, mat.top, o, e)
    base = int(packed.ctypes.data)
    out = (scores, query_ends, target_ends)
    codes = (query, targets, matrix)
    threads = max(1, min(int(threads), count))
    run: Callable[[tuple[int, int]], None] = lambda span: _run_targets(  # noqa: E731
        kept, codes, choices, base, offsets, span[0], span[1], o, e, out
    )
    if threads == 1:
        run((0, count))
    else:
        spans: Sequence[tuple[int, int]] = balanced_chunks(offsets, 4 * threads)
        for _ in thread_pool(threads, "parasail").map(run, spans):
            pass
    del packed  # the threads are done with it: keep it alive until here
    return scores, query_ends, target_ends
