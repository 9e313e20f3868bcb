"""parasail's Smith-Waterman kernels, called per instruction set, on Prism's encoded sequences.

What the kernels receive is what every variant of ``genomics.sw_align`` and
``genomics.sw_align_batch`` receives (``docs/genomics.md``): sequences as ``uint8`` codes
``0..k-1``, a ``k x k`` int32 substitution matrix, and positive gap penalties (a gap of length
``L`` costs ``gap_open + (L - 1) * gap_extend``, parasail's and Biopython's convention).  What
they return is the score and the 0-based inclusive end positions, ``-1``/``-1`` for a score of
0.

How the codes reach parasail.  parasail maps each *byte* of a sequence to a row of its matrix
through a 256-entry table (its ``mapper``) built from an alphabet string.  The matrix is
parasail's own (``parasail.matrix_create``, case-sensitive, over the bytes ``1..k``: a C string
cannot hold byte 0) with its table then rewritten to map byte ``c`` to row ``c``, so that the
codes themselves are the bytes parasail reads (checked to be below ``k`` first, never
translated: a translation cost 3.6 us per 10,000 letters), and the caller's ``k x k`` values
set into it, *transposed*: Prism's ``matrix[a, b]`` scores query letter ``a`` against
target letter ``b``, and parasail's vectorised kernels build their query profile from the
matrix's columns, scoring a pair as ``matrix[target][query]`` (its scalar kernels read it the
other way round; found with asymmetric matrices, which no symmetric test matrix would show).
It is built once per distinct matrix and kept (:func:`parasail_matrix`).
Sequences are passed by address, never copied again.

Which kernels.  parasail's Python module binds only its run-time dispatchers
(``sw_striped_sat`` picks the widest instruction set the CPU has); this module binds the
functions of one instruction set by their C names (``parasail_sw_striped_profile_avx2_256_8``,
``parasail_sw_diag_avx2_256_16``), so that each Prism variant runs exactly the instructions its
requirements name, and ``prism explain`` tells the truth about it.  Three families:

* striped (Farrar's): the query profile laid out in stripes, and a "lazy F" loop after each
  target letter that corrects the vertical gaps crossing from one stripe to the next; that loop
  runs long where vertical gaps keep beating the cells they reach, in high-scoring (similar)
  regions, and the more so the cheaper a gap is against a match;
* prefix scan: the vertical gaps of a whole column in two fixed passes, whatever the
  sequences: slower than striped where the lazy loop is short, faster where it runs long;
* diagonal (anti-diagonal): one vector of query letters along each anti-diagonal, no query
  profile; the query is padded to a whole vector, so it pays off for queries of at most a
  vector's lanes (32 letters in 8-bit AVX2 lanes), where a striped profile would be mostly
  padding.

Every family is exact where used: the striped kernels give wrong scores with ``gap_open ==
gap_extend`` (measured: 50 of 1,764 random DNA pairs scored 1-3 below the optimum, never with
``gap_open > gap_extend``), so they are never used there; the scan and diagonal kernels were
exact on all of 6,000 random pairs (equal penalties and ties included, scores and end
positions).  ``gap_open < gap_extend`` is exact in none (parasail issue #64); the variants
decline it (:func:`unsupported`) and the reference computes it.  The diagonal kernels read
their matrix as ``[query][target]`` (as parasail's scalar ones do), the vectorised striped and
scan kernels as ``[target][query]``: each gets its own (:class:`_Matrix`).

Which family and lane width run is chosen per call by ``prism_plugin_parasail.rule``
(:func:`~prism_plugin_parasail.rule.choose`: the rule, the lanes' limits and the measurements
they come from); this module gives it what it reads of a call: the matrix's extremes and match
score (:func:`rule_of`), the score of the query's last alignment (the query and its profiles
are kept, :func:`_query`) and, for a large pair whose upper bound passes 16-bit lanes, a lower
bound: the best ungapped stretch of the main diagonal (:func:`diagonal_bound`).  A result that
saturates anyway is redone in a wider lane, chosen again knowing that the score passes the lane
that saturated; a score is never returned from a saturated lane.  The widest lane used is 32
bits: parasail's result holds an ``int``, so a score that saturates 32-bit lanes raises
``OverflowError`` (the reference computes it).

Tie-breaking of the end positions, measured against an exhaustive reference on 3,000 random
pairs, ties included: parasail reports the first cell holding the maximum in target-major
order, that is the smallest ``target_end``, then the smallest ``query_end``; Prism's reference
follows the same rule.

Threads: ctypes releases the GIL around every foreign call, so :func:`align_batch` runs the
targets of a batch on several threads, each with its own share of the targets and the query
profiles built once (parasail only reads them).

This module imports parasail (and NumPy); dispatch imports it when it first runs a parasail
variant, never at plugin discovery.  ``prism explain``'s words for the rule's choice are
``prism_plugin_parasail.why``'s.
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

from .rule import (
    FAMILIES,
    ISAS,
    PROBE_CELLS,
    WIDTHS,
    Isa,
    Lane,
    Rule,
    choose,
    lane_limit,
    probes,
    rule,
)

__all__ = [
    "align",
    "align_batch",
    "batch_threads",
    "checked_penalties",
    "diagonal_bound",
    "isa_usable",
    "last_score",
    "parasail_matrix",
    "rule_of",
    "to_parasail",
    "unsupported",
]

#: How many queries are kept with their profiles and last score (:func:`_query`) ...
_QUERIES_KEPT = 16
#: ... each of at most this many profile cells (letters times the matrix's letters: 256 KiB in
#: 8-bit lanes).  Longer ones are profiled per call, where the alignment outweighs it.
_QUERY_CELLS_KEPT = 1 << 18


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
#: The diagonal kernels take both sequences and the matrix: no profile.
_DIAG_ARGS = [
    ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
    ctypes.c_void_p,
]  # fmt: skip


@dataclass(frozen=True)
class _Kernels:
    """The C functions of one instruction set: the alignments per family and lane width (the
    striped and scan ones with a query profile, the diagonal ones with the query), and the
    profile constructors per lane width."""

    align: dict[tuple[str, int], Any]
    create: dict[int, Any]


_kernels: dict[str, _Kernels] = {}
_kernels_lock = threading.Lock()


def _kernels_of(isa: Isa) -> _Kernels:
    found = _kernels.get(isa.name)
    if found is None:
        with _kernels_lock:
            found = _kernels.get(isa.name)
            if found is None:
                align, create = {}, {}
                for bits in WIDTHS:
                    for method in ("striped", "scan"):
                        align[method, bits] = _bind(
                            f"parasail_sw_{method}_profile_{isa.tag}_{bits}",
                            _PROFILE_ARGS,
                            _ResultP,
                        )
                    align["diag", bits] = _bind(
                        f"parasail_sw_diag_{isa.tag}_{bits}", _DIAG_ARGS, _ResultP
                    )
                    create[bits] = _bind(
                        f"parasail_profile_create_{isa.profile_tag}_{bits}",
                        [ctypes.c_char_p, ctypes.c_int, ctypes.c_void_p],
                        ctypes.c_void_p,
                    )
                found = _Kernels(align, create)
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
    """parasail's matrices for one substitution matrix, the C addresses of their
    ``parasail_matrix_t``, and what the kernels' choice reads of it."""

    #: Transposed, for the striped and scan kernels, which read it as ``[target][query]``.
    parasail: Any
    address: int
    #: As given, for the diagonal kernels, which read it as ``[query][target]`` (the same
    #: matrix where it is symmetric).
    plain: Any
    plain_address: int
    k: int
    #: The smallest and largest value, each taken with 0 (parasail's matrix starts all 0).
    low: int
    top: int
    #: The mean of the positive diagonal values (1 at least): the score of a matched letter.
    match: float


_MATRICES: dict[tuple[int, bytes], _Matrix] = {}
_MATRICES_KEPT = 32
_matrices_lock = threading.Lock()


def parasail_matrix(matrix: np.ndarray[Any, Any]) -> Any:
    """parasail's matrix for a ``k x k`` integer substitution matrix over the bytes ``1..k``, as
    the striped and scan kernels read it (kept for the last 32 distinct matrices built:
    building one sets ``k * k`` values one by one)."""
    return _matrix(matrix).parasail


def _made(values: np.ndarray[Any, Any]) -> tuple[Any, int]:
    """parasail's matrix with ``made[row][col] = values[row, col]``, reading byte ``c`` as
    row ``c`` (module docstring), and its address."""
    k = int(values.shape[0])
    alphabet = "".join(chr(code + 1) for code in range(k))
    made = parasail.matrix_create(alphabet, 0, 0, case_sensitive=True)
    for row in range(k):
        for col in range(k):
            made.set_value(row, col, int(values[row, col]))
    # The table parasail's Python module shows read-only: rewritten through its address.
    mapper = (ctypes.c_int * 256).from_address(int(made.mapper.ctypes.data))
    for code in range(k):
        mapper[code] = code
    return made, int(ctypes.cast(made.pointer, ctypes.c_void_p).value or 0)


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
    # Transposed: the vectorised kernels score a pair as matrix[target][query].
    made, address = _made(values.T)
    plain, plain_address = (made, address) if (values == values.T).all() else _made(values)
    diagonal = np.diagonal(values)
    positive = diagonal[diagonal > 0]
    match = max(1.0, float(positive.mean())) if positive.size else 1.0
    low, top = min(0, int(values.min())), max(0, int(values.max()))
    entry = _Matrix(made, address, plain, plain_address, k, low, top, match)
    with _matrices_lock:
        entry = _MATRICES.setdefault(key, entry)
        while len(_MATRICES) > _MATRICES_KEPT:
            del _MATRICES[next(iter(_MATRICES))]
    return entry


@functools.cache
def _table(k: int) -> bytes:
    """``bytes.translate`` table: a code ``c < k`` to 1, any other to 0."""
    return bytes(1 if c < k else 0 for c in range(256))


def to_parasail(name: str, codes: np.ndarray[Any, Any], k: int) -> bytes:
    """The codes as the bytes parasail reads (they are: :func:`_made`), checked to be below
    ``k``: in one pass of C (``translate``, then ``memchr``), or NumPy's maximum for long
    sequences (flat 0.8 us, where the translation costs 0.36 ns a letter)."""
    _uint8_codes(name, codes)
    raw = codes.tobytes()
    if k < 256 and raw:
        long = len(raw) > 2048
        if int(codes.max()) >= k if long else b"\0" in raw.translate(_table(k)):
            raise _outside(name, codes, k)
    return raw


def _uint8_codes(name: str, codes: np.ndarray[Any, Any]) -> None:
    """Raise the error naming ``name`` unless ``codes`` are 1-D uint8."""
    if codes.dtype.char != "B" or codes.ndim != 1:
        raise TypeError(f"{name}: expected 1-D uint8 codes; got {codes.dtype} {codes.shape}")


def _outside(name: str, codes: np.ndarray[Any, Any], k: int) -> ValueError:
    """The error for ``codes`` that hold a code of ``k`` or more, naming the first."""
    at = int(np.flatnonzero(codes >= k)[0])
    return ValueError(
        f"{name}: code {int(codes[at])} at position {at} is outside the matrix's alphabet "
        f"(codes 0 to {k - 1} for a {k} x {k} matrix)"
    )


def checked_penalties(gap_open: int, gap_extend: int) -> tuple[int, int]:
    """The penalties as Python ints, checked: integers from 0 to 2**30 - 1 that parasail's
    vectorised kernels compute exactly (:func:`unsupported`), else the error naming the one at
    fault."""
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


#: The scorings of recent calls: by the matrix object's id, the instruction set and the
#: penalties, each with the matrix's type character, shape and bytes, which every call compares
#: (an id is reused once its object is gone; equal contents are the same scoring).
_SCORINGS: dict[
    tuple[int, str, int, int], tuple[str, tuple[int, ...], bytes, tuple[_Kernels, _Matrix, Rule]]
] = {}
_SCORINGS_KEPT = 64


def _scoring(
    isa_name: str, matrix: np.ndarray[Any, Any], gap_open: int, gap_extend: int
) -> tuple[_Kernels, _Matrix, Rule]:
    """The C functions of ``isa_name`` (checked to run here: :func:`isa_usable`), parasail's
    matrix (:func:`_matrix`) and the rule (:func:`rule_of`) of this matrix and these penalties
    (checked: :func:`checked_penalties`), kept: one lookup and a comparison of the matrix's
    bytes per call, where :func:`_matrix` hashes them (0.8 us for a 24 x 24 matrix)."""
    raw = matrix.tobytes()
    plain = type(gap_open) is int and type(gap_extend) is int
    if plain:
        key = (id(matrix), isa_name, gap_open, gap_extend)
        found = _SCORINGS.get(key)
        if (
            found is not None
            and found[2] == raw
            and found[0] == matrix.dtype.char
            and found[1] == matrix.shape
        ):
            return found[3]
    kernels = _usable(isa_name)
    mat = _matrix(matrix)
    o, e = checked_penalties(gap_open, gap_extend)
    made = (kernels, mat, rule_of(isa_name, mat, o, e))
    if plain:
        with _matrices_lock:
            _SCORINGS[key] = (matrix.dtype.char, matrix.shape, raw, made)
            while len(_SCORINGS) > _SCORINGS_KEPT:
                del _SCORINGS[next(iter(_SCORINGS))]
    return made


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


def _kept(isa: str, kernels: _Kernels, codes: np.ndarray[Any, Any], matrix: _Matrix) -> _Query:
    """:func:`_query` for the query's codes, checked (:func:`to_parasail`) unless kept: a
    kept query's bytes were checked against this matrix when it was made."""
    _uint8_codes("query", codes)
    found = _QUERIES.get((isa, codes.tobytes(), matrix))
    if found is not None:
        return found
    return _query(isa, kernels, to_parasail("query", codes, matrix.k), matrix)


def last_score(isa: str, q: bytes, matrix: _Matrix) -> int | None:
    """The score of the last alignment of the kept query ``q`` (bytes, :func:`to_parasail`) on
    ``isa`` with ``matrix`` (:func:`_matrix`), the likely score of its next; ``None`` where the
    query is not kept.  Reads, never changes, what is kept."""
    found = _QUERIES.get((isa, q, matrix))
    return None if found is None else found.last


def diagonal_bound(query: np.ndarray[Any, Any], target: np.ndarray[Any, Any], matrix: Any) -> int:
    """A lower bound of the local score: the best ungapped stretch of the main diagonal
    (query letter ``i`` against target letter ``i``)."""
    length = min(query.shape[0], target.shape[0])
    running = np.cumsum(matrix[query[:length], target[:length]], dtype=np.int64)
    return int((running - np.minimum(np.minimum.accumulate(running), 0)).max(initial=0))


#: After a target of a batch saturated its lane, the next targets start in a wider one until
#: this many in a row scored below the lane's limit.  Unrelated proteins of one length score
#: alike, and where their scores straddle a lane's limit, a choice from the last score alone
#: oscillated: 1,000 x 16 targets of 1,000 (BLOSUM62, gaps 5/2) ran in 8-bit lanes 5 times,
#: 3 of them saturated and ran again, 0.92x the 16-bit loop (benchmarks/bench_sw_families.py).
#: A rare high score (a hit in a search) costs this many targets in the wider lane.
_HOLD = 8
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


def rule_of(isa: str, matrix: _Matrix, o: int, e: int) -> Rule:
    """The :class:`~prism_plugin_parasail.rule.Rule` of ``matrix`` (:func:`_matrix`) and the
    penalties ``o``, ``e`` (checked: :func:`checked_penalties`) on the instruction set ``isa``."""
    return rule(matrix.low, matrix.top, matrix.match, matrix.k <= 5, o, e, ISAS[isa].vector_bits)


def _call(query: _Query, lane: Lane, target: Any, length: int, o: int, e: int) -> Any:
    """One parasail alignment of ``query`` against a target (bytes or an address) in ``lane``:
    its result, unread."""
    kernel = query.kernels.align[lane.method, lane.bits]
    if lane.method == "diag":
        q = query.q
        return kernel(q, len(q), target, length, o, e, query.matrix.plain_address)
    return kernel(query.profile(lane.bits), target, length, o, e)


def _run(
    query: _Query,
    r: Rule,
    target: Any,
    length: int,
    likely: int,
    family: str | None,
    floor: int = 0,
) -> tuple[int, int, int]:
    """One target (bytes or an address) in the lane :func:`choose` picks, then, while the
    result saturates, in the lane it picks knowing that the score passes the lane that
    saturated (``floor``: a lane saturated below it already): ``(score, query_end,
    target_end)``."""
    n = len(query.q)
    while True:
        lane = choose(r, n, length, likely, family, floor)[0]
        if lane.limit < floor:
            raise OverflowError(
                "parasail: the score passes what 32-bit lanes hold with this matrix (2**31 - 2 "
                "less its largest value), and parasail's results hold no more; the numpy and "
                "numba backends compute it (use_backend('numpy'))"
            )
        score, query_end, target_end, saturated = _read(
            _call(query, lane, target, length, r.gap_open, r.gap_extend)
        )
        if not saturated:
            return (score, query_end, target_end) if score > 0 else (0, -1, -1)
        floor = lane.limit + 1


def _family(family: str | None, o: int, e: int) -> str | None:
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family: expected one of {', '.join(FAMILIES)} or None; got {family!r}")
    if family == "striped" and o == e:
        raise ValueError(
            "family: parasail's striped kernels are not exact with gap_open == gap_extend "
            f"({o}); the scan and diag ones are"
        )
    return family


def align(
    isa_name: str,
    query: np.ndarray[Any, Any],
    target: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
    family: str | None = None,
) -> tuple[int, int, int]:
    """Local alignment of one pair on the kernels of ``isa_name``: ``(score, query_end,
    target_end)``, exact at any score up to 32 bits, in the family and lane :func:`choose`
    picks (``family`` forces the family: ``"striped"``, ``"scan"`` or ``"diag"``)."""
    kernels, mat, r = _scoring(isa_name, matrix, gap_open, gap_extend)
    family = _family(family, r.gap_open, r.gap_extend) if family is not None else None
    kept = _kept(isa_name, kernels, query, mat)
    t = to_parasail("target", target, mat.k)
    n, m = len(kept.q), len(t)
    if n == 0 or m == 0:
        return 0, -1, -1
    likely = kept.last
    if n * m >= PROBE_CELLS and probes(n, m, mat.top):  # the cheap half first
        likely = max(likely, diagonal_bound(query, target, matrix))
    got = _run(kept, r, t, m, likely, family)
    kept.last = got[0]
    return got


def _run_targets(
    query: _Query,
    codes: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]],
    r: Rule,
    family: str | None,
    base: int,
    offsets: np.ndarray[Any, Any],
    start: int,
    stop: int,
    out: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]],
) -> None:
    """Targets ``start..stop-1`` of a batch, each in the lane :func:`choose` picks from the
    score of the previous one (:func:`align`'s choice), results written into ``out`` (once, at
    the end: the loop holds the GIL between parasail calls, and the other threads wait for
    it).  After a lane saturated, the targets start past it until :data:`_HOLD` of them in a
    row scored below it."""
    scores, query_ends, target_ends = out
    q, n, top = query.q, len(query.q), query.matrix.top
    # Whether any target may need the diagonal's lower bound (:func:`align`).
    probing = n * top > lane_limit("striped", 16, top)
    bounds = offsets[start : stop + 1].tolist()  # Python ints: no NumPy scalar per target
    likely = query.last
    hits: list[tuple[int, int, int, int]] = []
    o, e = r.gap_open, r.gap_extend
    memo = r.memo
    # The kernel of the last lane, and what it takes first (the profile, or the query): most
    # targets run in the lane of the one before.  Per target, the loop is a few microseconds
    # of Python, which short targets notice: the lookups and parasail's result are inlined.
    last: Lane | None = None
    kernel: Any = None
    first: Any = None
    diag = False
    plain = query.matrix.plain_address
    hold = held = 0
    for i, lo, hi in zip(range(start, stop), bounds[:-1], bounds[1:], strict=True):
        m = hi - lo
        if m == 0:
            continue  # score 0, ends -1: as the arrays were made
        # :func:`probes`, inlined (a call per target costs): ``probing`` is its first half.
        if probing and min(n, m) * top > lane_limit("striped", 16, top) and n * m >= PROBE_CELLS:
            q_codes, t_codes, matrix = codes
            likely = max(likely, diagonal_bound(q_codes, t_codes[lo:hi], matrix))
        found = memo.get((n, m, likely, family, 0))
        lane = found[0] if found is not None else choose(r, n, m, likely, family)[0]
        if lane is not last:
            last, kernel, diag = lane, query.kernels.align[lane.method, lane.bits], False
            if lane.method == "diag":
                diag = True
            else:
                first = query.profile(lane.bits)
        result = (
            kernel(q, n, base + lo, m, o, e, plain) if diag else kernel(first, base + lo, m, o, e)
        )
        if not result:
            raise MemoryError("parasail returned no result (it could not allocate its tables)")
        got = result.contents
        score, qe, te, flag = got.score, got.end_query, got.end_ref, got.flag
        _free(result)
        if flag & _SATURATED:
            hold, held = lane.limit + 1, _HOLD
            score, qe, te = _run(query, r, base + lo, m, likely, family, hold)
        elif score <= 0:
            score = 0
        if held:
            # Hysteresis: a lane saturated lately, so the next targets start past it, until
            # _HOLD of them in a row scored below it.
            held = _HOLD if score >= hold else held - 1
            likely = max(score, hold) if held else score
        else:
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
    family: str | None = None,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """One query against the packed ``targets`` (target ``i`` is
    ``targets[offsets[i]:offsets[i + 1]]``) on the kernels of ``isa_name``, with the query
    profiles built once (and kept: :func:`_query`), each target in the family and lane
    :func:`choose` picks (``family`` forces the family); ``threads`` > 1 splits the targets
    over that many threads (in chunks of about equal residues, four per thread, taken as
    threads come free).  Returns int64 ``(scores, query_ends, target_ends)``."""
    kernels, mat, r = _scoring(isa_name, matrix, gap_open, gap_extend)
    family = _family(family, r.gap_open, r.gap_extend) if family is not None else None
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
    q = to_parasail("query", query, mat.k)
    _uint8_codes("targets", targets)
    # Read in place where contiguous: a copy of a search's targets cost more than the check.
    packed = np.ascontiguousarray(targets)
    if mat.k < 256 and packed.shape[0] and int(packed.max()) >= mat.k:
        raise _outside("targets", packed, mat.k)
    scores = np.zeros(count, dtype=np.int64)
    query_ends = np.full(count, -1, dtype=np.int64)
    target_ends = np.full(count, -1, dtype=np.int64)
    if count == 0 or query.shape[0] == 0:
        return scores, query_ends, target_ends
    kept = _query(isa_name, kernels, q, mat)
    base = int(packed.ctypes.data)
    out = (scores, query_ends, target_ends)
    codes = (query, targets, matrix)
    threads = max(1, min(int(threads), count))
    run: Callable[[tuple[int, int]], None] = lambda span: _run_targets(  # noqa: E731
        kept, codes, r, family, base, offsets, span[0], span[1], out
    )
    if threads == 1:
        run((0, count))
    else:
        spans: Sequence[tuple[int, int]] = balanced_chunks(offsets, 4 * threads)
        for _ in thread_pool(threads, "parasail").map(run, spans):
            pass
    del packed  # the threads are done with it: keep it alive until here
    return scores, query_ends, target_ends
