"""The rule that picks the kernel family and lane width of each parasail call: decisions only.

Pure decision logic, no parasail and no NumPy (reading the rule imports neither): the
instruction sets parasail is built for (:data:`ISAS`), the kernel families (:data:`FAMILIES`),
the lane widths (:data:`WIDTHS`) and the largest score each holds (:func:`lane_limit`), the
thresholds measured on an AVX2 host, and, per scoring (a matrix and penalties) and instruction
set, a :class:`Rule` (:func:`rule`) from which :func:`choose` picks the lane (family and width)
of one alignment.  ``prism_plugin_parasail.kernels`` runs what it picks;
``prism_plugin_parasail.why`` says it in words for ``prism explain``.

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
* what is likely: the score of the last alignment of the same query (the kernels keep the
  query and its profiles), and, where a failed trial would waste a whole pass in 16-bit lanes
  (the bound passes their limit, and 2**24 cells or more: :func:`probes`), a lower bound: the
  best ungapped stretch of the main diagonal (``kernels.diagonal_bound``, cheap beside such a
  pair).  Unrelated sequences score far below the upper bound (about ``ln(n m) / lambda``: tens
  where the bound says thousands), so with nothing known the call starts in the narrowest lane;
* the lanes a matrix and penalties fit: parasail casts the matrix's values and the penalties
  to the lane's type, and a value that does not fit wraps silently (a matrix value of 200 in
  8-bit lanes scored wrong, measured), so such lanes are never used.

A result that saturates anyway is redone in a wider lane, which :func:`choose` picks again
knowing that the score passes the lane that saturated (its ``floor``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "EQUAL_SCAN_WIDTHS",
    "FAMILIES",
    "ISAS",
    "LONG_TARGET",
    "PROBE_CELLS",
    "SCAN_FROM",
    "SCAN_FROM_LONG",
    "SHORT_QUERY",
    "SIMILAR",
    "WHY_ASKED",
    "WHY_EQUAL_DIAG",
    "WHY_EQUAL_SCAN",
    "WHY_NARROW",
    "WHY_SCAN32",
    "WHY_SHORT_DIAG",
    "WHY_SHORT_SIMILAR",
    "WHY_SHORT_STRIPED",
    "WHY_SIMILAR_SCAN",
    "WHY_STRIPED16",
    "WHY_STRIPED32",
    "WIDTHS",
    "Isa",
    "Lane",
    "Rule",
    "choose",
    "lane_limit",
    "probes",
    "rule",
    "scan_from",
]

#: The lane widths used, narrowest first.  parasail's 64-bit lanes are not: its result holds an
#: ``int``, so their scores beyond 32 bits came back truncated (measured: 0 for 3 * 2**30).
WIDTHS = (8, 16, 32)
#: The kernel families, as named in parasail's C functions (``kernels``' module docstring).
FAMILIES = ("striped", "scan", "diag")
#: A pair of at least this many cells whose upper bound passes the 16-bit lanes' limit gets the
#: lower bound of its main diagonal first (``kernels.diagonal_bound``, about 10 us per 1,000
#: letters of the shorter sequence; a failed trial in 16-bit lanes would cost more than that
#: pass): :func:`probes`.
PROBE_CELLS = 1 << 24


# -- the rule's thresholds, measured on an AVX2 host (docs/genomics.md, "parasail on the CPU";
# benchmarks/bench_sw_families.py).  "Similarity" is the likely score over that of an identical
# pair, min(n, m) times the matrix's match score.

#: Similarity from which sequences count as similar: short similar queries run striped in wide
#: lanes, and a short query is left to the diagonal kernel (or taken from it) by it.
SIMILAR = 0.75
#: Queries up to this many letters, when similar, run striped in 16- or 32-bit lanes
#: (:func:`_short_similar`), never in 8: 16 bits were 1.1-1.16x faster than 8 for 100-letter
#: queries, 90% identical, against 3,000 letters.
SHORT_QUERY = 100
#: The query length from which the scan kernel may beat the striped one in 16-bit lanes, for
#: alphabets of up to 5 letters (DNA) and larger ones: below, similar pairs ran striped up to
#: 1.12x faster (a 200-letter protein query, 90% identical).
SCAN_FROM = {True: 150, False: 300}
#: Against a target at least this many times longer than the query, the scan kernel takes
#: queries from :data:`SCAN_FROM_LONG` letters.  Queries of 150-300 letters, 90% identical,
#: against 10 to 67 times as many ran striped 1.02-1.45x faster than scan (DNA and BLOSUM62,
#: every penalty, 8 targets in turn), where against as many letters scan was faster (up to
#: 1.4x); a 1,000-letter query against 10,000 ran scan up to 1.33x faster (striped 1.04x for
#: DNA 2/-1 with 3/1).  Proteins with a gap open cheaper than 0.45 matches (BLOSUM62 with 3/1)
#: stayed striped at 1,000 x 10,000 (1.09-1.28x): never scan against such a target.
LONG_TARGET = 4
SCAN_FROM_LONG = 800
#: With equal penalties (scan or diagonal only), the scan lane width by query length: 8-bit
#: lanes from 400 letters (1.1-2.6x faster than 16 from 500), 16-bit from 200, else 32-bit
#: (1.03-1.25x faster than 16 below 150 letters, 1.07x at 150 over 8 targets in turn: the
#: scan's per-column passes over fewer lanes).
EQUAL_SCAN_WIDTHS = ((400, 8), (200, 16), (0, 32))


def _scan_similarity(nucleotide: bool, cheapness: float) -> float:
    """The similarity from which the scan kernel beats the striped one in 16-bit lanes, by
    ``cheapness`` = ``(gap_open - gap_extend) / match``; measured on 1,000 x 1,000 and 1,000 x
    10,000 pairs of 50-90% identity (DNA 2/-1, 2/-3, 5/-4; BLOSUM62; gaps 3/1, 5/2, 11/1,
    12/2; 8 targets in turn).  The dearer the gap against a match, the sooner the striped
    kernel's correction loop runs long; with DNA 5/-4 and gaps 3/1 or 5/2 the striped kernel
    stayed faster even at 90% identity.  DNA 2/-1 and 2/-3 with gaps 3/1 and 5/2: striped
    1.01-1.11x faster at 0.69, scan 1.07-1.24x at 0.77-0.85; BLOSUM62 with 3/1: striped 1.04x
    at 0.65, scan 1.29x at 0.75."""
    if nucleotide:
        return 0.95 if cheapness < 0.75 else 0.72 if cheapness < 2 else 0.35
    return 0.7 if cheapness < 0.45 else 0.6 if cheapness < 1.2 else 0.3


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


class Lane(NamedTuple):
    """A lane width and the kernel family that computes in it, with the largest score it
    holds (for the diagonal kernels, for the query at hand: :func:`_diag_limit`).  A named
    tuple: hashed and compared in C (a frozen dataclass's are Python functions)."""

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
    #: ``gap_open + gap_extend`` at most twice a match (``cheap``): queries of at most 16
    #: letters go to the diagonal kernel; ``gap_open`` at most 1.5 matches (``open_cheap``):
    #: unrelated queries of 17-32 letters do.
    cheap: bool
    open_cheap: bool
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
        open_cheap=gap_open <= 1.5 * match,
        scan32=2 * top > 5 * gap_extend,
    )


# Why the rule chose what it chose (:func:`_auto`; the second of :func:`choose`'s answers);
# ``why.describe`` words them.
WHY_ASKED, WHY_EQUAL_DIAG, WHY_SHORT_DIAG, WHY_EQUAL_SCAN = range(4)
WHY_SHORT_SIMILAR, WHY_NARROW, WHY_SIMILAR_SCAN = range(4, 7)
WHY_STRIPED16, WHY_SCAN32, WHY_STRIPED32, WHY_SHORT_STRIPED = range(7, 11)


def _auto(r: Rule, n: int, m: int, need: int, similarity: float) -> tuple[str, int, int]:
    """The family and least lane width the rule picks for a query of ``n`` letters against
    ``m`` whose score needs lanes holding ``need``, at this ``similarity``; and why (a code)."""
    if n <= r.lanes[8] and r.diag:
        # One vector holds the query.  Measured (8-32-letter queries against 10,000 letters):
        # with equal penalties the diagonal kernel was 1.15-2x faster than scan; up to 16
        # letters it beat striped unless gaps are dear and the pair unrelated (then striped
        # was 1.3-1.4x faster); from 17 letters for unrelated pairs and a gap open of at most
        # 1.5 matches (24-32 letters, 8 targets in turn: BLOSUM62 with gaps 3/1 and 5/2 1.1-1.4x
        # faster than striped, DNA 2/-3 with 3/1 1.2x, DNA 2/-1 with 3/1 even; striped was
        # 1.3-2.5x faster for BLOSUM62 with 11/1 and DNA 2/-x with 5/2 or dearer); similar
        # pairs ran striped as fast or up to 1.3x faster.
        similar = similarity >= SIMILAR
        if r.equal:
            return "diag", 8, WHY_EQUAL_DIAG
        if (r.cheap or similar) if n <= r.lanes[16] else (r.open_cheap and not similar):
            return "diag", 8, WHY_SHORT_DIAG
    if r.equal:
        return "scan", next(b for at, b in EQUAL_SCAN_WIDTHS if n >= at), WHY_EQUAL_SCAN
    if n <= SHORT_QUERY and similarity >= SIMILAR:
        return "striped", _short_similar(r, n), WHY_SHORT_SIMILAR
    lane = _lane(r.striped, 8, need)
    if lane.bits == 8:
        # A query of one 8-bit vector: 16-bit lanes were 1.01-1.17x faster (30 letters against
        # 300-10,000, unrelated, every penalty measured).
        return ("striped", 16, WHY_SHORT_STRIPED) if n <= r.lanes[8] else ("striped", 8, WHY_NARROW)
    if lane.bits == 16:
        scan16 = next((lane for lane in r.scan if lane.bits == 16), None)
        if (
            n >= scan_from(r, n, m)
            and similarity >= r.scan_similarity
            and scan16 is not None
            and need <= scan16.limit
        ):
            return "scan", 16, WHY_SIMILAR_SCAN
        return "striped", 16, WHY_STRIPED16
    return ("scan", 32, WHY_SCAN32) if r.scan32 else ("striped", 32, WHY_STRIPED32)


def scan_from(r: Rule, n: int, m: int) -> int:
    """The query length from which similar pairs run scan in 16-bit lanes (:data:`SCAN_FROM`,
    :data:`SCAN_FROM_LONG` against a target :data:`LONG_TARGET` times longer; past the target's
    length, never, for a protein with cheap gaps)."""
    if m >= LONG_TARGET * n:
        return SCAN_FROM_LONG if r.nucleotide or r.cheapness >= 0.45 else m + 1
    return SCAN_FROM[r.nucleotide]


def _short_similar(r: Rule, n: int) -> int:
    """The least striped lane width for a similar query of at most :data:`SHORT_QUERY`
    letters: 32 bits, but 16 below 80 letters where a gap open is dear (``cheapness`` 1.6 or
    more).  Measured, 90% identical, 8 targets in turn: 24-64 letters with gaps 3/1 and 5/2,
    32 bits 1.03-1.3x faster than 16; with 11/1 (cheapness 1.7 for BLOSUM62's 20 amino acids,
    1.9 with its ambiguity codes), 16 bits 1.35-2x faster than 32; 100 letters, every penalty,
    32 bits up to 1.13x faster than 16 (in 16 of the benchmark's 20 such cases) and 1.1-1.16x
    than 8."""
    return 16 if r.cheapness >= 1.6 and n < 80 else 32


def _lane(lanes: tuple[Lane, ...], least: int, need: int) -> Lane:
    """The narrowest of ``lanes`` at least ``least`` bits wide that holds ``need``, else the
    widest."""
    for lane in lanes:
        if lane.bits >= least and lane.limit >= need:
            return lane
    return lanes[-1]


def _diag_lane(r: Rule, n: int, need: int) -> Lane:
    """The diagonal kernel's lane for a query of ``n`` letters: 16-bit lanes (up to 16 letters
    on AVX2 1.1-1.7x faster than 8-bit ones, 17-32 letters 1.01-1.07x: the kernel's cost is its
    matrix lookups, per cell whatever the width); past what they hold, the scan kernel's 32-bit
    lanes."""
    lanes = tuple(Lane(b, "diag", _diag_limit(b, r.lanes[b], n, r.top)) for b in r.diag)
    if not lanes or lanes[-1].limit < need:
        return _lane(r.scan, 32, need)
    return _lane(lanes, 16, need)


def choose(
    r: Rule, n: int, m: int, likely: int, family: str | None = None, floor: int = 0
) -> tuple[Lane, int]:
    """The lane (family and width) to align a query of ``n`` letters against a target of ``m``
    in, under rule ``r``, when the score is likely ``likely`` and known to pass ``floor - 1``
    (a lane saturated there); ``family`` forces the family.  Returns the lane and why (a code
    ``why.describe`` words).

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
        family, least, why = _auto(r, n, m, need, similarity)
    elif family == "scan":
        least, why = next(b for at, b in EQUAL_SCAN_WIDTHS if n >= at), WHY_ASKED
    elif family == "striped" and n <= SHORT_QUERY and similarity >= SIMILAR:
        least, why = _short_similar(r, n), WHY_ASKED
    else:
        least, why = 8, WHY_ASKED
    if family == "diag":
        return _diag_lane(r, n, need), why
    return _lane(r.scan if family == "scan" else r.striped, least, need), why


def probes(n: int, m: int, top: int) -> bool:
    """Whether a pair of ``n`` by ``m`` letters, matrix's largest value ``top``, gets the
    diagonal's lower bound (``kernels.diagonal_bound``) before its lane is chosen: its upper
    bound passes 16-bit lanes, and it is large enough that a failed 16-bit trial costs more than
    the pass."""
    return min(n, m) * top > lane_limit("striped", 16, top) and n * m >= PROBE_CELLS
