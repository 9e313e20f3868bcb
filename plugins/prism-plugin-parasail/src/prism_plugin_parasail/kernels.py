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

Which family and lane width run is chosen per call (:func:`choose`, the rule and the
measurements it comes from in ``docs/genomics.md``, "parasail on the CPU"), from what decides
their speed: the query length, the penalties against the matrix's match score, the lane width
the score needs, and how similar the sequences likely are (the likely score against that of an
identical pair).

Lanes.  parasail computes in lanes of 8, 16, 32 or 64 bits, and flags a result whose running
maximum came near the lane's top (it then stops early, in the striped kernels); narrower lanes
do more cells per instruction (32 per AVX2 instruction in 8 bits, 16 in 16).  Each call runs
the lane width its family does best in that can hold the score (:func:`choose`,
:func:`lane_limit`), decided before calling from what is known of the score:

* an upper bound: ``min(n, m)`` times the largest value of the matrix.  A lane that holds the
  bound cannot saturate; the call never starts wider than that but where a wider lane of the
  family was measured faster;
* what is likely: the score of the last alignment of the same query (the query and its
  profiles are kept, :func:`_query`), and, where a failed trial would waste a whole pass in
  16-bit lanes (the bound passes their limit, and 2**24 cells or more), a lower bound: the
  best ungapped stretch of the main diagonal (:func:`_diagonal`, cheap beside such a pair).
  Unrelated sequences score far below the upper bound (about ``ln(n m) / lambda``: tens
  where the bound says thousands), so with nothing known the call starts in the narrowest lane;
* the lanes a matrix and penalties fit: parasail casts the matrix's values and the penalties
  to the lane's type, and a value that does not fit wraps silently (a matrix value of 200 in
  8-bit lanes scored wrong, measured), so such lanes are never used.

A result that saturates anyway is redone in a wider lane, chosen again knowing that the score
passes the lane that saturated; a score is never returned from a saturated lane.  The widest
lane used is 32 bits: parasail's result holds an ``int``, so a score that saturates 32-bit
lanes raises ``OverflowError`` (the reference computes it).

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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import parasail  # type: ignore[import-untyped, unused-ignore]

from prism_core.backend_kit import balanced_chunks, thread_pool, usable_cpus

__all__ = [
    "FAMILIES",
    "ISAS",
    "PROBE_CELLS",
    "WIDTHS",
    "Isa",
    "Lane",
    "Rule",
    "align",
    "align_batch",
    "batch_threads",
    "choose",
    "describe",
    "isa_usable",
    "lane_limit",
    "parasail_matrix",
    "rule",
    "unsupported",
]

#: The lane widths used, narrowest first.  parasail's 64-bit lanes are not: its result holds an
#: ``int``, so their scores beyond 32 bits came back truncated (measured: 0 for 3 * 2**30).
WIDTHS = (8, 16, 32)
#: The kernel families, as named in parasail's C functions (module docstring).
FAMILIES = ("striped", "scan", "diag")
#: A pair of at least this many cells whose upper bound passes the 16-bit lanes' limit gets the
#: lower bound of its main diagonal first (:func:`_diagonal`, about 10 us per 1,000 letters of
#: the shorter sequence; a failed trial in 16-bit lanes would cost more than that pass).
PROBE_CELLS = 1 << 24
#: How many queries are kept with their profiles and last score (:func:`_query`) ...
_QUERIES_KEPT = 16
#: ... each of at most this many profile cells (letters times the matrix's letters: 256 KiB in
#: 8-bit lanes).  Longer ones are profiled per call, where the alignment outweighs it.
_QUERY_CELLS_KEPT = 1 << 18

# -- the rule's thresholds, measured on an AVX2 host (docs/genomics.md, "parasail on the CPU";
# benchmarks/bench_sw_families.py).  "Similarity" is the likely score over that of an identical
# pair, min(n, m) times the matrix's match score.

#: Similarity from which sequences count as similar: short similar queries run striped in wide
#: lanes, and a short query is left to the diagonal kernel (or taken from it) by it.
SIMILAR = 0.75
#: Queries up to this many letters, when similar and the gaps cheap (``gap_open - gap_extend``
#: at most a match), run striped in 32-bit lanes, else in 16 or wider: 1.05-1.3x faster than the
#: narrowest lane (a 48-100-letter query, 90% identical, against 1,000-10,000 letters).
SHORT_QUERY = 100
#: The query length from which the scan kernel may beat the striped one in 16-bit lanes, for
#: alphabets of up to 5 letters (DNA) and larger ones: below, similar pairs ran striped up to
#: 1.12x faster (a 200-letter protein query, 90% identical).
SCAN_FROM = {True: 150, False: 300}
#: With equal penalties (scan or diagonal only), the scan lane width by query length: 8-bit
#: lanes from 400 letters (1.1-2.6x faster than 16 from 500), 16-bit from 150, else 32-bit
#: (1.03-1.25x faster than 16 below 150 letters: the scan's per-column passes over fewer lanes).
EQUAL_SCAN_WIDTHS = ((400, 8), (150, 16), (0, 32))


def _scan_similarity(nucleotide: bool, cheapness: float) -> float:
    """The similarity from which the scan kernel beats the striped one in 16-bit lanes, by
    ``cheapness`` = ``(gap_open - gap_extend) / match``; measured on 1,000 x 10,000 pairs of
    50-100% identity (DNA 2/-1, 2/-3, 5/-4; BLOSUM62; gaps 3/1, 5/2, 11/1, 12/2).  The dearer the
    gap against a match, the sooner the striped kernel's correction loop runs long; with DNA
    5/-4 and gaps 3/1 or 5/2 the striped kernel stayed faster even at 90% identity."""
    if nucleotide:
        return 0.95 if cheapness < 0.75 else 0.75 if cheapness < 2 else 0.35
    return 0.85 if cheapness < 0.45 else 0.6 if cheapness < 1.2 else 0.3


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
    #: Bits per vector: lanes per vector are this over the lane width.
    vector_bits: int


ISAS: dict[str, Isa] = {
    "avx2": Isa("avx2", "avx2_256", "avx_256", "can_use_avx2", 256),
    "sse41": Isa("sse41", "sse41_128", "sse_128", "can_use_sse41", 128),
    "neon": Isa("neon", "neon_128", "neon_128", "can_use_neon", 128),
}


@dataclass(frozen=True)
class Lane:
    """A lane width and the kernel family that computes in it, with the largest score it
    holds (for the diagonal kernels, for the query at hand: :func:`_diag_limit`)."""

    bits: int
    #: ``"striped"``, ``"scan"`` or ``"diag"``.
    method: str
    limit: int


def lane_limit(method: str, bits: int, top: int) -> int:
    """The largest local score parasail's ``method`` (striped or scan) kernels hold in lanes of
    ``bits`` bits, for a matrix whose largest value is ``top`` (at least 0).

    parasail flags saturation when the running maximum passes the lane's largest value less
    ``top + 1``; its striped 8- and 16-bit kernels count scores from the lane's smallest value
    (a bias), so they hold about twice as much (``sw_striped_16`` holds 65,532 at match 2,
    ``sw_scan_16`` 32,764: measured, and read in parasail's sources)."""
    if method == "striped" and bits <= 16:
        return (1 << bits) - 2 - top
    return (1 << (bits - 1)) - 2 - top


def _diag_limit(bits: int, lanes: int, n: int, top: int) -> int:
    """The largest score the diagonal kernel's ``bits``-bit lanes hold for a query of ``n``
    letters, with some room: it flags any cell that reached the lane's largest value, the
    cells of the query's padding to a whole vector of ``lanes`` letters included, which may
    run up to ``top`` more per padded letter (measured: at match 11, 2 letters flagged at 22 in
    8 bits; at match 2, 61 letters held 122)."""
    return (1 << (bits - 1)) - 2 - top - (-n % lanes) * top


def _holds(bits: int, low: int, top: int, gap_open: int) -> bool:
    """Whether lanes of ``bits`` bits hold the matrix's values (``low..top``) and the penalties
    as parasail casts them (``top + 1`` too: its saturation threshold)."""
    largest = (1 << (bits - 1)) - 1
    return -largest - 1 <= low and top < largest and gap_open <= largest


@dataclass(frozen=True, eq=False)
class Rule:
    """What the choice of kernel reads of a scoring (a matrix and penalties) on one
    instruction set, computed once (:func:`rule`): see :func:`choose`."""

    top: int
    #: The matrix's match score: the mean of its positive diagonal values (1 at least).
    match: float
    #: Alphabets of up to 5 letters (DNA, with N) behave differently from proteins' (measured).
    nucleotide: bool
    gap_open: int
    gap_extend: int
    #: Lanes per vector, by lane width.
    lanes: dict[int, int]
    #: The striped and scan lanes that hold the matrix and penalties, narrowest first (none
    #: striped with equal penalties).
    striped: tuple[Lane, ...]
    scan: tuple[Lane, ...]
    #: The lane widths the diagonal kernels may use, 8 and 16 bits (their limits depend on the
    #: query).  Never 32: parasail's 32-bit diagonal kernel subtracts the gap penalties from its
    #: minus infinity without saturating, which wraps (it flagged 266 of 2,000 random short
    #: pairs saturated, scoring 0).
    diag: tuple[int, ...]
    #: ``(gap_open - gap_extend) / match``: how dear a gap is against a match.
    cheapness: float
    #: The similarity from which scan beats striped in 16-bit lanes (:func:`_scan_similarity`).
    scan_similarity: float
    #: ``gap_open + gap_extend`` at most twice a match (``cheap``), at most a match
    #: (``cheaper``): queries of at most 16 (``cheap``), 32 (``cheaper``) letters go to the
    #: diagonal kernel.
    cheap: bool
    cheaper: bool
    #: In 32-bit lanes the scan kernel was faster where ``top > 2.5 gap_extend`` (BLOSUM62 with
    #: gaps 11/1 to 20/6, 13,000 identical letters); elsewhere (DNA 2/-3, gaps 5/2) striped.
    scan32: bool
    #: :func:`choose`'s answers by its arguments: calls repeat them (a query aligned again, the
    #: targets of a batch), and a lookup costs a tenth of the rule.
    memo: dict[tuple[int, int, int, str | None, int], tuple[Lane, int]] = field(
        default_factory=dict, repr=False
    )

    @property
    def equal(self) -> bool:
        return self.gap_open == self.gap_extend


@functools.lru_cache(maxsize=256)
def rule(
    low: int, top: int, match: float, nucleotide: bool, gap_open: int, gap_extend: int,
    vector_bits: int,
) -> Rule:  # fmt: skip
    """The :class:`Rule` of a matrix of values ``low..top`` (each taken with 0), match score
    ``match``, these penalties, on vectors of ``vector_bits`` bits."""
    fits = [bits for bits in WIDTHS if _holds(bits, low, top, gap_open)]
    striped = () if gap_open == gap_extend else tuple(
        Lane(bits, "striped", lane_limit("striped", bits, top)) for bits in fits
    )  # fmt: skip
    scan = tuple(Lane(bits, "scan", lane_limit("scan", bits, top)) for bits in fits)
    cheapness = (gap_open - gap_extend) / match
    return Rule(
        top=top,
        match=match,
        nucleotide=nucleotide,
        gap_open=gap_open,
        gap_extend=gap_extend,
        lanes={bits: vector_bits // bits for bits in WIDTHS},
        striped=striped,
        scan=scan,
        diag=tuple(bits for bits in fits if bits < 32),
        cheapness=cheapness,
        scan_similarity=_scan_similarity(nucleotide, cheapness),
        cheap=gap_open + gap_extend <= 2 * match,
        cheaper=gap_open + gap_extend <= match,
        scan32=2 * top > 5 * gap_extend,
    )


# Why the rule chose what it chose (:func:`_auto`); :func:`describe` words them.
_ASKED, _EQUAL_DIAG, _SHORT_DIAG, _EQUAL_SCAN, _SHORT_SIMILAR, _NARROW, _SIMILAR_SCAN = range(7)
_STRIPED16, _SCAN32, _STRIPED32, _SHORT_STRIPED = range(7, 11)


def _auto(r: Rule, n: int, need: int, similarity: float) -> tuple[str, int, int]:
    """The family and least lane width the rule picks for a query of ``n`` letters whose score
    needs lanes holding ``need``, at this ``similarity``; and why (a code)."""
    if n <= r.lanes[8] and r.diag:
        # One vector holds the query.  Measured (8-32-letter queries against 10,000 letters):
        # with equal penalties the diagonal kernel was 1.15-2x faster than scan; up to 16
        # letters it beat striped unless gaps are dear and the pair unrelated (then striped
        # was 1.3-1.4x faster); from 17 letters only for unrelated pairs and gaps cheaper than
        # a match (DNA 2/-1 and BLOSUM62 with gaps 3/1: 1.05-1.24x; DNA 2/-3: striped 1.15x).
        similar = similarity >= SIMILAR
        if r.equal:
            return "diag", 8, _EQUAL_DIAG
        if (r.cheap or similar) if n <= r.lanes[16] else (r.cheaper and not similar):
            return "diag", 8, _SHORT_DIAG
    if r.equal:
        return "scan", next(b for at, b in EQUAL_SCAN_WIDTHS if n >= at), _EQUAL_SCAN
    if n <= SHORT_QUERY and similarity >= SIMILAR:
        return "striped", _short_similar(r, n), _SHORT_SIMILAR
    lane = _lane(r.striped, 8, need)
    if lane.bits == 8:
        # A query of one 8-bit vector: 16-bit lanes were 1.01-1.17x faster (30 letters against
        # 300-10,000, unrelated, every penalty measured).
        return ("striped", 16, _SHORT_STRIPED) if n <= r.lanes[8] else ("striped", 8, _NARROW)
    if lane.bits == 16:
        scan16 = next((lane for lane in r.scan if lane.bits == 16), None)
        if (
            n >= SCAN_FROM[r.nucleotide]
            and similarity >= r.scan_similarity
            and scan16 is not None
            and need <= scan16.limit
        ):
            return "scan", 16, _SIMILAR_SCAN
        return "striped", 16, _STRIPED16
    return ("scan", 32, _SCAN32) if r.scan32 else ("striped", 32, _STRIPED32)


def _short_similar(r: Rule, n: int) -> int:
    """The least striped lane width for a similar query of at most :data:`SHORT_QUERY`
    letters: 32 bits (1.05-1.3x faster than 16, and than 8 where the score fits) but for dear
    gap opens (``cheapness`` 1.8 or more: gaps 11/1 and 12/2) below 80 letters, where 16 bits
    were 1.5-2x faster than 32 (30-64-letter queries)."""
    return 16 if r.cheapness >= 1.8 and n < 80 else 32


def _lane(lanes: tuple[Lane, ...], least: int, need: int) -> Lane:
    """The narrowest of ``lanes`` at least ``least`` bits wide that holds ``need``, else the
    widest."""
    for lane in lanes:
        if lane.bits >= least and lane.limit >= need:
            return lane
    return lanes[-1]


def _diag_lane(r: Rule, n: int, need: int) -> Lane:
    """The diagonal kernel's lane for a query of ``n`` letters: 16-bit lanes where their vector
    still holds the whole query (up to 16 letters on AVX2: fewer padded lanes, measured 1.1-1.7x
    faster than 8-bit ones there), else 8-bit, widened to hold ``need``; past what 16-bit lanes
    hold, the scan kernel's 32-bit lanes."""
    lanes = tuple(Lane(b, "diag", _diag_limit(b, r.lanes[b], n, r.top)) for b in r.diag)
    if not lanes or lanes[-1].limit < need:
        return _lane(r.scan, 32, need)
    least = 16 if n <= r.lanes[16] else 8
    return _lane(lanes, least, need)


def choose(
    r: Rule, n: int, m: int, likely: int, family: str | None = None, floor: int = 0
) -> tuple[Lane, int]:
    """The lane (family and width) to align a query of ``n`` letters against a target of ``m``
    in, under rule ``r``, when the score is likely ``likely`` and known to pass ``floor - 1``
    (a lane saturated there); ``family`` forces the family.  Returns the lane and why (a code
    :func:`describe` words).

    The lane must hold ``need``: the likely score (or ``floor``), but never more than the upper
    bound ``min(n, m)`` times the largest matrix value.  The family is the rule's, from the
    measurements of ``docs/genomics.md``, "parasail on the CPU": the diagonal kernel for a
    query that fits one vector; with equal penalties the scan kernel (striped is not exact
    there); else striped, but scan in 16-bit lanes for similar pairs of long queries, where
    the striped kernel's correction loop runs long (the similarity it takes depends on how dear
    a gap is against a match, :func:`_scan_similarity`), and in 32-bit lanes by the matrix and
    gap extension."""
    key = (n, m, likely, family, floor)
    found = r.memo.get(key)
    if found is None:
        if len(r.memo) >= _MEMO_KEPT:
            r.memo.clear()
        found = r.memo[key] = _choose(r, n, m, likely, family, floor)
    return found


#: How many of :func:`choose`'s answers a rule keeps.
_MEMO_KEPT = 4096


def _choose(
    r: Rule, n: int, m: int, likely: int, family: str | None, floor: int
) -> tuple[Lane, int]:
    short = min(n, m)
    need = max(min(likely, short * r.top), floor)
    similarity = max(likely, floor) / (short * r.match)
    if family is None:
        family, least, why = _auto(r, n, need, similarity)
    elif family == "scan":
        least, why = next(b for at, b in EQUAL_SCAN_WIDTHS if n >= at), _ASKED
    elif family == "striped" and n <= SHORT_QUERY and similarity >= SIMILAR:
        least, why = _short_similar(r, n), _ASKED
    else:
        least, why = 8, _ASKED
    if family == "diag":
        return _diag_lane(r, n, need), why
    return _lane(r.scan if family == "scan" else r.striped, least, need), why


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


def _to_parasail(name: str, codes: np.ndarray[Any, Any], k: int) -> bytes:
    """The codes as the bytes parasail reads (they are: :func:`_made`), checked to be below
    ``k``: in one pass of C (``translate``, then ``memchr``), or NumPy's maximum for long
    sequences (flat 0.8 us, where the translation costs 0.36 ns a letter)."""
    if codes.dtype.char != "B" or codes.ndim != 1:
        raise TypeError(f"{name}: expected 1-D uint8 codes; got {codes.dtype} {codes.shape}")
    raw = codes.tobytes()
    if k < 256 and raw:
        long = len(raw) > 2048
        if int(codes.max()) >= k if long else b"\0" in raw.translate(_table(k)):
            at = int(np.flatnonzero(codes >= k)[0])
            raise ValueError(
                f"{name}: code {raw[at]} at position {at} is outside the matrix's alphabet "
                f"(codes 0 to {k - 1} for a {k} x {k} matrix)"
            )
    return raw


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


def _kept(isa: str, kernels: _Kernels, codes: np.ndarray[Any, Any], matrix: _Matrix) -> _Query:
    """:func:`_query` for the query's codes, checked (:func:`_to_parasail`) unless kept: a
    kept query's bytes were checked against this matrix when it was made."""
    if codes.dtype.char != "B" or codes.ndim != 1:
        raise TypeError(f"query: expected 1-D uint8 codes; got {codes.dtype} {codes.shape}")
    found = _QUERIES.get((isa, codes.tobytes(), matrix))
    if found is not None:
        return found
    return _query(isa, kernels, _to_parasail("query", codes, matrix.k), matrix)


def _probes(n: int, m: int, top: int) -> bool:
    """Whether a pair of ``n`` by ``m`` letters, matrix's largest value ``top``, gets the
    diagonal's lower bound (:func:`_diagonal`) before its lane is chosen: its upper bound passes
    16-bit lanes, and it is large enough that a failed 16-bit trial costs more than the pass."""
    return min(n, m) * top > lane_limit("striped", 16, top) and n * m >= PROBE_CELLS


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


def _rule_of(isa: str, matrix: _Matrix, o: int, e: int) -> Rule:
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
    kernels = _usable(isa_name)
    mat = _matrix(matrix)
    o, e = _penalties(gap_open, gap_extend)
    family = _family(family, o, e) if family is not None else None
    kept = _kept(isa_name, kernels, query, mat)
    t = _to_parasail("target", target, mat.k)
    n, m = len(kept.q), len(t)
    if n == 0 or m == 0:
        return 0, -1, -1
    r = _rule_of(isa_name, mat, o, e)
    likely = kept.last
    if _probes(n, m, mat.top):
        likely = max(likely, _diagonal(query, target, matrix))
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
    it)."""
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
    for i, lo, hi in zip(range(start, stop), bounds[:-1], bounds[1:], strict=True):
        m = hi - lo
        if m == 0:
            continue  # score 0, ends -1: as the arrays were made
        # :func:`_probes`, inlined (a call per target costs): ``probing`` is its first half.
        if probing and min(n, m) * top > lane_limit("striped", 16, top) and n * m >= PROBE_CELLS:
            q_codes, t_codes, matrix = codes
            likely = max(likely, _diagonal(q_codes, t_codes[lo:hi], matrix))
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
            score, qe, te = _run(query, r, base + lo, m, likely, family, lane.limit + 1)
        elif score <= 0:
            score = 0
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
    kernels = _usable(isa_name)
    mat = _matrix(matrix)
    o, e = _penalties(gap_open, gap_extend)
    family = _family(family, o, e) if family is not None else None
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
    r = _rule_of(isa_name, mat, o, e)
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


# -- why: the rule in words, for prism explain (the family variants' can_run) ----------------


def _close(r: Rule, n: int, need: int, similarity: float, picked: str, bits: int) -> set[str]:
    """The families the rule is unsure against ``picked`` for such a call: near a boundary of
    its measurements, where they were within about 10% of each other.  ``prism tune`` measures
    their variants there (:func:`judge`)."""
    close = {picked}
    if n <= 1.5 * r.lanes[8] and (r.equal or n > r.lanes[16] or not r.cheap):
        close |= {"diag", "scan" if r.equal else "striped"}
    if r.equal:
        return close
    if n <= SHORT_QUERY and similarity >= SIMILAR:
        close.add("scan")
    if bits == 16:
        star, start = r.scan_similarity, SCAN_FROM[r.nucleotide]
        if abs(similarity - star) <= 0.15 or (start / 2 <= n < 1.5 * start and similarity >= star):
            close |= {"striped", "scan"}
    elif bits == 32:
        close |= {"striped", "scan"}
    return close


def _words(r: Rule, n: int, m: int, likely: int, known: str, family: str | None) -> str:
    """What :func:`choose` picks for this call, and why, in words."""
    short = min(n, m)
    bound = short * r.top
    similarity = likely / (short * r.match)
    lane, why = choose(r, n, m, likely, family)
    kernel = "diag" if lane.method == "diag" else f"{lane.method}_profile"
    head = f"the {lane.method} kernel in {lane.bits}-bit lanes (parasail_sw_{kernel}_*_{lane.bits})"
    score = (
        f"the score is likely {likely} ({known}), at most {bound}"
        if likely
        else f"nothing is known of the score yet (at most {bound}): the narrowest lane first, "
        "a wider one if it saturates"
    )
    gaps = f"gaps {r.gap_open}/{r.gap_extend} against a match of {r.match:g}"
    sim = f"similarity {similarity:.2f} (the likely score over an identical pair's)"
    lanes8 = r.lanes[8]
    if why == _ASKED:
        reason = f"this variant runs the {family} family only; {score}"
    elif why == _EQUAL_DIAG:
        reason = (
            f"gap_open == gap_extend ({r.gap_open}), where the striped kernels are not exact, "
            f"and a query of {n} letters fits one vector of {lanes8} 8-bit lanes: the diagonal "
            "kernel was 1.15-2x faster than scan there (docs/genomics.md)"
        )
    elif why == _SHORT_DIAG:
        reason = (
            f"a query of {n} letters fits one vector of {lanes8} 8-bit lanes, where the diagonal "
            f"kernel beat a striped profile that is mostly padding ({gaps}, {sim}); {score}"
        )
    elif why == _EQUAL_SCAN:
        reason = (
            f"gap_open == gap_extend ({r.gap_open}), where the striped kernels are not exact; "
            f"scan lanes of {lane.bits} bits for a query of {n} letters (8 from 400 letters, 16 "
            f"from 150, else 32: measured fastest), or wider for the score; {score}"
        )
    elif why == _SHORT_SIMILAR:
        reason = (
            f"a short query ({n} letters, at most {SHORT_QUERY}) of similar sequences ({sim} >= "
            f"{SIMILAR}): striped in wide lanes was faster than in narrow ones; {score}"
        )
    elif why == _SHORT_STRIPED:
        reason = (
            f"a query of {n} letters, one 8-bit vector: 16-bit striped lanes were faster than "
            f"8-bit ones there; {score}"
        )
    elif why == _NARROW:
        reason = (
            f"the score is likely {likely} ({known}), which 8-bit striped lanes hold (up to "
            f"{lane.limit}): the fastest lanes wherever the score fits"
            if likely
            else f"nothing is known of the score yet (at most {bound}): it starts in 8-bit "
            "striped lanes, the fastest wherever the score fits, and goes wider if they saturate"
        )
    elif why == _SIMILAR_SCAN:
        reason = (
            f"{score}: 16-bit lanes; {sim} >= {r.scan_similarity} (the threshold for {gaps}) "
            f"and a query of at least {SCAN_FROM[r.nucleotide]} letters: there the striped "
            "kernel's correction loop runs long, and scan was faster"
        )
    elif why == _STRIPED16:
        start = SCAN_FROM[r.nucleotide]
        if n < start:
            because = f"the query is shorter than {start} letters, where scan never won"
        elif similarity < r.scan_similarity:
            because = f"{sim} is below {r.scan_similarity}, the threshold for {gaps}"
        else:
            because = "the score passes what scan's 16-bit lanes hold (striped ones hold twice)"
        reason = f"{score}: 16-bit lanes; striped, as {because}"
    else:
        reason = (
            f"{score}: 32-bit lanes; {lane.method}, as the matrix's largest value ({r.top}) is "
            f"{'above' if r.scan32 else 'at most'} 2.5 times gap_extend ({r.gap_extend})"
        )
    return f"{head}: {reason}"


def _likely(isa: str, kept: _Query | None, query: np.ndarray[Any, Any], target: Any, matrix: Any,
            m: int, top: int) -> tuple[int, str]:  # fmt: skip
    """The likely score :func:`align` would start from, and where it comes from (``top``: the
    matrix's largest value, as :func:`align` reads it)."""
    likely, known = (kept.last, "the last alignment of this query") if kept else (0, "")
    if target is not None and _probes(int(query.shape[0]), m, top):
        diagonal = _diagonal(query, target, matrix)
        if diagonal > likely:
            likely, known = diagonal, "the main diagonal's best ungapped stretch"
    return likely, known


def judge(
    isa_name: str,
    family: str,
    query: np.ndarray[Any, Any],
    target: np.ndarray[Any, Any] | None,
    length: int,
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
) -> tuple[bool, str]:
    """Whether the variant that forces ``family`` should be measured for this call (the rule
    is unsure between it and its own pick, :func:`_close`), and, where not, why: what the
    automatic variant runs (a target of ``length`` letters; the first of a batch), in words.

    Reads, never changes, what is kept (the query's last score)."""
    mat = _matrix(np.asarray(matrix))
    o, e = _penalties(gap_open, gap_extend)
    if family == "striped" and o == e:
        return False, (
            f"gap_open == gap_extend ({o}): parasail's striped kernels are not exact there (the "
            "scan and diagonal ones are)"
        )
    q = _to_parasail("query", query, mat.k)
    n = len(q)
    if n == 0 or length == 0:
        return False, "an empty sequence: score 0, no kernel runs"
    r = _rule_of(isa_name, mat, o, e)
    likely, known = _likely(isa_name, _QUERIES.get((isa_name, q, mat)), query, target, matrix,
                            length, mat.top)  # fmt: skip
    lane, _ = choose(r, n, length, likely)
    short = min(n, length)
    need, similarity = min(likely, short * r.top), likely / (short * r.match)
    if lane.method == family:
        words = _words(r, n, length, likely, known, None)
        return False, f"the automatic variant runs this family here: {words}"
    if family in _close(r, n, need, similarity, lane.method, lane.bits):
        return True, ""
    return False, (
        f"the rule is sure here: the automatic variant runs the {lane.method} kernel in "
        f"{lane.bits}-bit lanes (why: its .{lane.method} variant's line)"
    )


def describe(
    isa_name: str,
    query: np.ndarray[Any, Any],
    target: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
    family: str | None = None,
) -> str:
    """Which family and lane width :func:`align` would run this pair in now, and why, in words
    (what ``prism explain`` shows through the family variants' ``can_run``)."""
    mat = _matrix(np.asarray(matrix))
    o, e = _penalties(gap_open, gap_extend)
    q = _to_parasail("query", query, mat.k)
    m = int(target.shape[0])
    if len(q) == 0 or m == 0:
        return "an empty sequence: score 0, no kernel runs"
    r = _rule_of(isa_name, mat, o, e)
    likely, known = _likely(
        isa_name, _QUERIES.get((isa_name, q, mat)), query, target, matrix, m, mat.top
    )
    return _words(r, len(q), m, likely, known, family)
