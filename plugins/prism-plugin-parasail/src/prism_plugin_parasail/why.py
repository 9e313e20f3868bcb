"""The rule in words, for ``prism explain``: why a call runs the family and lane it runs.

The family variants' ``can_run`` (``variants.takes_family``) asks :func:`judge` whether the
rule (``prism_plugin_parasail.rule``) is unsure between their family and its own pick, so that
``prism tune`` measures them there, and, where it is sure, takes from it the rule's choice in
words; :func:`describe` words what :func:`~prism_plugin_parasail.kernels.align` would run for
a pair.  Both read what the kernels keep (the query's last score), never change it.

This module imports parasail and NumPy (through ``prism_plugin_parasail.kernels``): the
variants import it when a family variant is asked about a call, never at plugin discovery.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .kernels import _matrix, checked_penalties, diagonal_bound, last_score, rule_of, to_parasail
from .rule import (
    SHORT_QUERY,
    SIMILAR,
    WHY_ASKED,
    WHY_EQUAL_DIAG,
    WHY_EQUAL_SCAN,
    WHY_NARROW,
    WHY_SHORT_DIAG,
    WHY_SHORT_SIMILAR,
    WHY_SHORT_STRIPED,
    WHY_SIMILAR_SCAN,
    WHY_STRIPED16,
    Rule,
    choose,
    probes,
    scan_from,
)

__all__ = ["describe", "judge"]


def _close(
    r: Rule, n: int, m: int, need: int, similarity: float, picked: str, bits: int
) -> set[str]:
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
        star, start = r.scan_similarity, scan_from(r, n, m)
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
    if why == WHY_ASKED:
        reason = f"this variant runs the {family} family only; {score}"
    elif why == WHY_EQUAL_DIAG:
        reason = (
            f"gap_open == gap_extend ({r.gap_open}), where the striped kernels are not exact, "
            f"and a query of {n} letters fits one vector of {lanes8} 8-bit lanes: the diagonal "
            "kernel was 1.15-2x faster than scan there (docs/genomics.md)"
        )
    elif why == WHY_SHORT_DIAG:
        reason = (
            f"a query of {n} letters fits one vector of {lanes8} 8-bit lanes, where the diagonal "
            f"kernel beat a striped profile that is mostly padding ({gaps}, {sim}); {score}"
        )
    elif why == WHY_EQUAL_SCAN:
        reason = (
            f"gap_open == gap_extend ({r.gap_open}), where the striped kernels are not exact; "
            f"scan lanes of {lane.bits} bits for a query of {n} letters (8 from 400 letters, 16 "
            f"from 200, else 32: measured fastest), or wider for the score; {score}"
        )
    elif why == WHY_SHORT_SIMILAR:
        reason = (
            f"a short query ({n} letters, at most {SHORT_QUERY}) of similar sequences ({sim} >= "
            f"{SIMILAR}): striped in wide lanes was faster than in narrow ones; {score}"
        )
    elif why == WHY_SHORT_STRIPED:
        reason = (
            f"a query of {n} letters, one 8-bit vector: 16-bit striped lanes were faster than "
            f"8-bit ones there; {score}"
        )
    elif why == WHY_NARROW:
        reason = (
            f"the score is likely {likely} ({known}), which 8-bit striped lanes hold (up to "
            f"{lane.limit}): the fastest lanes wherever the score fits"
            if likely
            else f"nothing is known of the score yet (at most {bound}): it starts in 8-bit "
            "striped lanes, the fastest wherever the score fits, and goes wider if they saturate"
        )
    elif why == WHY_SIMILAR_SCAN:
        reason = (
            f"{score}: 16-bit lanes; {sim} >= {r.scan_similarity} (the threshold for {gaps}) "
            f"and a query of at least {scan_from(r, n, m)} letters: there the striped "
            "kernel's correction loop runs long, and scan was faster"
        )
    elif why == WHY_STRIPED16:
        start = scan_from(r, n, m)
        if start > m:
            because = (
                f"a protein query against a target {m // n}x as long, with gaps this cheap, ran "
                "striped faster at every length measured"
            )
        elif n < start:
            against = f" against a target {m // n}x as long" if start != scan_from(r, n, n) else ""
            because = f"the query is shorter than {start} letters{against}, where scan never won"
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


def _likely(last: int | None, query: np.ndarray[Any, Any], target: Any, matrix: Any, m: int,
            top: int) -> tuple[int, str]:  # fmt: skip
    """The likely score ``kernels.align`` would start from, and where it comes from (``last``:
    the kept query's last score, ``None`` where not kept; ``top``: the matrix's largest value,
    as ``kernels.align`` reads it)."""
    likely, known = (last, "the last alignment of this query") if last is not None else (0, "")
    if target is not None and probes(int(query.shape[0]), m, top):
        diagonal = diagonal_bound(query, target, matrix)
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
    o, e = checked_penalties(gap_open, gap_extend)
    if family == "striped" and o == e:
        return False, (
            f"gap_open == gap_extend ({o}): parasail's striped kernels are not exact there (the "
            "scan and diagonal ones are)"
        )
    q = to_parasail("query", query, mat.k)
    n = len(q)
    if n == 0 or length == 0:
        return False, "an empty sequence: score 0, no kernel runs"
    r = rule_of(isa_name, mat, o, e)
    likely, known = _likely(last_score(isa_name, q, mat), query, target, matrix, length, mat.top)
    lane, _ = choose(r, n, length, likely)
    short = min(n, length)
    need, similarity = min(likely, short * r.top), likely / (short * r.match)
    if lane.method == family:
        words = _words(r, n, length, likely, known, None)
        return False, f"the automatic variant runs this family here: {words}"
    if family in _close(r, n, length, need, similarity, lane.method, lane.bits):
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
    """Which family and lane width ``kernels.align`` would run this pair in now, and why, in
    words (what ``prism explain`` shows through the family variants' ``can_run``)."""
    mat = _matrix(np.asarray(matrix))
    o, e = checked_penalties(gap_open, gap_extend)
    q = to_parasail("query", query, mat.k)
    m = int(target.shape[0])
    if len(q) == 0 or m == 0:
        return "an empty sequence: score 0, no kernel runs"
    r = rule_of(isa_name, mat, o, e)
    likely, known = _likely(last_score(isa_name, q, mat), query, target, matrix, m, mat.top)
    return _words(r, len(q), m, likely, known, family)
