"""The kernel families (striped, scan, diagonal): every family and lane width the plugin may
run is exact against Prism's reference on random pairs, ties and equal penalties included; the
rule picks the family and lane width it was measured to (docs/genomics.md, "parasail on the
CPU"); the family variants are measured only where the rule is unsure, and otherwise say, in
``prism explain``, which family and lane width runs and why.  Nothing here is timed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import prism_genomics
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prism_genomics import BLOSUM62, Scoring
from prism_plugin_parasail import kernels, rule, why

import prism_core
from prism_core._tuning.candidates import candidates

HERE = [isa for isa in rule.ISAS if kernels.isa_usable(isa)]
#: Every (family, lane width) the plugin runs: never striped with equal penalties, never the
#: 32-bit diagonal kernel (``rule.Rule.diag``).
KERNELS = [(f, b) for f in ("striped", "scan") for b in (8, 16, 32)] + [("diag", 8), ("diag", 16)]


def reference(query: Any, target: Any, matrix: Any, o: int, e: int) -> tuple[int, int, int]:
    with prism_core.use_backend("numpy"):
        r = prism_genomics.sw_align(query, target, matrix, o, e, False)
    return r.score, r.query_end, r.target_end


def dna(match: int, mismatch: int) -> Any:
    return Scoring.match_mismatch(match, mismatch).matrix


def direct(isa: str, family: str, bits: int, q: Any, t: Any, m: Any, o: int, e: int) -> Any:
    """One kernel, called as the plugin calls it: ``(score, query_end, target_end)``, or
    ``None`` where it saturated (the plugin then goes wider)."""
    matrix = kernels._matrix(m)
    kept = kernels._Query(kernels._kernels_of(rule.ISAS[isa]), q.tobytes(), matrix)
    lane = rule.Lane(bits, family, 0)
    score, qe, te, saturated = kernels._read(kernels._call(kept, lane, t.tobytes(), len(t), o, e))
    if saturated:
        return None
    return (score, qe, te) if score > 0 else (0, -1, -1)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    k=st.sampled_from([2, 4, 20]),
    n=st.integers(1, 70),
    m=st.integers(1, 90),
    extend=st.integers(0, 5),
    more=st.integers(0, 4),
    related=st.booleans(),
)
def test_every_family_and_lane_width_is_exact(
    seed: int, k: int, n: int, m: int, extend: int, more: int, related: bool
) -> None:
    """Random matrices (asymmetric: the diagonal kernels read theirs the other way round),
    small alphabets (many equal maxima: the end positions' tie rule), equal penalties (``more
    == 0``), targets drawn from the query's letters."""
    rng = np.random.default_rng(seed)
    matrix = rng.integers(-4, 6, (k, k)).astype(np.int32)
    query = rng.integers(0, k, n).astype(np.uint8)
    target = query[rng.integers(0, n, m)] if related else rng.integers(0, k, m).astype(np.uint8)
    o, e = extend + more, extend
    expected = reference(query, target, matrix, o, e)
    for isa in HERE:
        for family, bits in KERNELS:
            if family == "striped" and o == e:
                continue
            got = direct(isa, family, bits, query, target, matrix, o, e)
            assert got in (None, expected), (isa, family, bits)
        for family in (None, "scan", "diag") + (("striped",) if o > e else ()):
            assert kernels.align(isa, query, target, matrix, o, e, family) == expected, family


def test_equal_penalties_never_run_striped() -> None:
    rng = np.random.default_rng(3)
    for isa in HERE:
        for _ in range(50):
            k, o = int(rng.integers(2, 21)), int(rng.integers(1, 13))
            matrix = rng.integers(-5, 12, (k, k)).astype(np.int32)
            r = kernels.rule_of(isa, kernels._matrix(matrix), o, o)
            assert r.striped == ()
            for n in (1, 16, 30, 100, 1000, 10_000):
                for likely in (0, 50, 300, 5000, 50_000):
                    lane, _ = rule.choose(r, n, 10_000, likely)
                    assert lane.method != "striped"
                    assert (lane.method, lane.bits) != ("diag", 32)
    with pytest.raises(ValueError, match="not exact with gap_open == gap_extend"):
        kernels.align(HERE[0], np.zeros(3, np.uint8), np.zeros(3, np.uint8), dna(2, -3), 2, 2,
                      "striped")  # fmt: skip
    with pytest.raises(ValueError, match="family: expected one of striped, scan, diag"):
        kernels.align(HERE[0], np.zeros(3, np.uint8), np.zeros(3, np.uint8), dna(2, -3), 5, 2,
                      "swizzle")  # fmt: skip


def pick(matrix: Any, o: int, e: int, n: int, m: int, likely: int) -> tuple[str, int]:
    r = kernels.rule_of("avx2", kernels._matrix(np.asarray(matrix, np.int32)), o, e)
    lane, _ = rule.choose(r, n, m, likely)
    return lane.method, lane.bits


@pytest.mark.parametrize(
    ("case", "matrix", "gaps", "n", "m", "likely", "expected"),
    [
        # The held-out case: DNA 2/-1, gaps 3/1, 1,000 x 10,000 unrelated (score 445):
        # striped in 16-bit lanes was 1.84x faster than scan.
        ("held-out, unrelated", dna(2, -1), (3, 1), 1000, 10_000, 445, ("striped", 16)),
        ("held-out, 90% identical", dna(2, -1), (3, 1), 1000, 10_000, 1725, ("scan", 16)),
        ("nothing known yet", dna(2, -1), (3, 1), 1000, 10_000, 0, ("striped", 8)),
        ("DNA 5/-4 cheap gaps, similar", dna(5, -4), (3, 1), 1000, 10_000, 4205, ("striped", 16)),
        ("DNA 5/-4 dear gaps, similar", dna(5, -4), (11, 1), 1000, 10_000, 4181, ("scan", 16)),
        ("protein unrelated", BLOSUM62.matrix, (11, 1), 1000, 10_000, 54, ("striped", 8)),
        ("protein similar", BLOSUM62.matrix, (11, 1), 1000, 10_000, 4700, ("scan", 16)),
        ("protein similar, 3/1", BLOSUM62.matrix, (3, 1), 1000, 10_000, 3976, ("striped", 16)),
        ("protein similar, short", BLOSUM62.matrix, (11, 1), 200, 10_000, 956, ("striped", 16)),
        ("short similar query, cheap gaps", dna(2, -3), (3, 1), 64, 10_000, 123, ("striped", 32)),
        ("equal penalties, 30 letters", dna(2, -3), (1, 1), 30, 10_000, 40, ("diag", 16)),
        ("equal penalties, 16 letters", dna(2, -3), (1, 1), 16, 10_000, 25, ("diag", 16)),
        ("equal penalties, 100 letters", dna(2, -3), (1, 1), 100, 3000, 90, ("scan", 32)),
        ("equal penalties, 300 letters", dna(2, -3), (1, 1), 300, 3000, 220, ("scan", 16)),
        ("equal penalties, long query", dna(2, -3), (1, 1), 1000, 60, 50, ("scan", 8)),
        ("short query, cheap gaps", BLOSUM62.matrix, (3, 1), 24, 10_000, 35, ("diag", 16)),
        # 30 x 10,000, unrelated, means of 6 random pairs: diag 1.22x faster than striped for
        # DNA 2/-3 with 3/1, striped 1.08x faster with 5/2, 1.65x for BLOSUM62 with 11/1.
        ("short query, DNA 3/1", dna(2, -3), (3, 1), 30, 10_000, 23, ("diag", 16)),
        ("short similar query", BLOSUM62.matrix, (3, 1), 30, 10_000, 150, ("striped", 32)),
        ("short similar query, 11/1", BLOSUM62.matrix, (11, 1), 48, 10_000, 250, ("striped", 16)),
        # Against a target 10x as long, similar DNA ran striped up to 300 letters.
        ("DNA similar, 10x target", dna(2, -1), (5, 2), 300, 3000, 534, ("striped", 16)),
        ("equal penalties, 150 letters", dna(2, -1), (1, 1), 150, 10_000, 280, ("scan", 32)),
        # 100-letter queries, 90% identical: 32-bit striped up to 1.13x faster than 16.
        ("similar query of 100 letters", dna(2, -1), (3, 1), 100, 3000, 188, ("striped", 32)),
        ("short query, DNA 5/2", dna(2, -1), (5, 2), 30, 10_000, 23, ("striped", 16)),
        ("short query, protein 11/1", BLOSUM62.matrix, (11, 1), 30, 10_000, 40, ("striped", 16)),
        # A similar protein query against a target 10x as long ran striped 1.03-1.3x faster
        # up to 500 letters; against one as long, scan 1.3-1.6x.
        ("protein similar, 10x target", BLOSUM62.matrix, (3, 1), 300, 3000, 1617, ("striped", 16)),
        ("protein 10x target, 500", BLOSUM62.matrix, (11, 1), 500, 3000, 2500, ("striped", 16)),
        ("protein similar, as long", BLOSUM62.matrix, (3, 1), 300, 300, 1504, ("scan", 16)),
        ("protein 10x target, 1000", BLOSUM62.matrix, (5, 2), 1000, 10_000, 4700, ("scan", 16)),
        ("protein 10x target, 3/1", BLOSUM62.matrix, (3, 1), 1000, 10_000, 4700, ("striped", 16)),
        # DNA 2/-3 with 3/1 at similarity 0.74 (90% identical): scan 1.01-1.10x faster.
        ("DNA 2/-3 90% identical", dna(2, -3), (3, 1), 3000, 3000, 4439, ("scan", 16)),
        ("DNA 2/-1 80% identical", dna(2, -1), (3, 1), 1000, 1000, 1400, ("striped", 16)),
        ("short query, dear gaps", dna(2, -1), (11, 1), 24, 10_000, 24, ("striped", 16)),
        ("shorter query, dear gaps", dna(2, -1), (11, 1), 16, 10_000, 17, ("striped", 16)),
        ("shorter query, cheap gaps", dna(2, -1), (3, 1), 16, 10_000, 19, ("diag", 16)),
        ("short similar query, dear gaps", dna(2, -1), (11, 1), 48, 10_000, 93, ("striped", 16)),
        ("32 bits, protein", BLOSUM62.matrix, (11, 1), 13_000, 13_000, 75_788, ("scan", 32)),
        ("32 bits, DNA", dna(2, -3), (5, 2), 34_000, 34_000, 68_000, ("striped", 32)),
    ],
)
def test_the_rule_picks_what_was_measured_fastest(
    case: str,
    matrix: Any,
    gaps: tuple[int, int],
    n: int,
    m: int,
    likely: int,
    expected: tuple[str, int],
) -> None:
    assert pick(matrix, *gaps, n, m, likely) == expected, case


def test_a_saturated_lane_hands_over_to_the_lane_the_rule_picks_for_a_higher_score() -> None:
    r = kernels.rule_of("avx2", kernels._matrix(dna(2, -1)), 3, 1)
    first, _ = rule.choose(r, 1000, 10_000, 0)
    assert (first.method, first.bits) == ("striped", 8)
    wider, _ = rule.choose(r, 1000, 10_000, 0, None, first.limit + 1)
    assert (wider.method, wider.bits) == ("striped", 16)


def held_out() -> tuple[Any, ...]:
    rng = np.random.default_rng(11)
    query = rng.integers(0, 4, 1000).astype(np.uint8)
    target = rng.integers(0, 4, 10_000).astype(np.uint8)
    return (query, target, dna(2, -1), 3, 1, False)


def reasons(decision: Any, variant: str) -> str:
    found = [c for c in decision.candidates if c.variant == variant]
    assert found, variant
    return " ".join(found[0].reasons)


@pytest.mark.skipif("avx2" not in HERE, reason="the explain text names the AVX2 variants")
def test_explain_says_which_family_and_lane_width_run_and_why() -> None:
    args = held_out()
    decision = prism_core.explain("genomics.sw_align", *args)
    assert decision.chosen == "parasail.sw_align.avx2"
    first = reasons(decision, "parasail.sw_align.avx2.striped")
    assert "the automatic variant runs this family here: the striped kernel in 8-bit lanes" in first
    assert "nothing is known of the score yet" in first
    prism_genomics.sw_align(*args)  # the query is kept with its score: 16-bit lanes next
    decision = prism_core.explain("genomics.sw_align", *args)
    text = reasons(decision, "parasail.sw_align.avx2.striped")
    assert "the striped kernel in 16-bit lanes (parasail_sw_striped_profile_*_16)" in text
    assert "the last alignment of this query" in text
    assert "similarity 0.23" in text and "below 0.72, the threshold for gaps 3/1" in text
    other = reasons(decision, "parasail.sw_align.avx2.scan")
    assert "the rule is sure here: the automatic variant runs the striped kernel in 16-bit" in other
    assert why.describe("avx2", *args[:5]).startswith("the striped kernel in 16-bit lanes")


@pytest.mark.skipif("avx2" not in HERE, reason="names the AVX2 variants")
def test_explain_from_shapes_alone_says_what_decides() -> None:
    spec = prism_core.ArraySpec
    decision = prism_core.explain(
        "genomics.sw_align", spec((30,), "uint8"), spec((10_000,), "uint8"), spec((5, 5), "int32")
    )
    assert "the matrix's values and the penalties decide" in reasons(
        decision, "parasail.sw_align.avx2.diag"
    )


@pytest.mark.skipif("avx2" not in HERE, reason="names the AVX2 variants")
def test_the_tuner_measures_a_family_only_where_the_rule_is_unsure() -> None:
    rng = np.random.default_rng(12)
    query = rng.integers(0, 4, 1000).astype(np.uint8)
    similar = np.resize(query, 3000)
    similar[::10] = (similar[::10] + 1) % 4  # 90% identical: similarity 0.85, threshold 0.75
    m = dna(2, -3)
    prism_genomics.sw_align(query, similar, m, 5, 2, False)
    unsure = candidates("genomics.sw_align", (query, similar, m, 5, 2, False))
    names = [r.variant for r in unsure.runners]
    assert "parasail.sw_align.avx2" in names and "parasail.sw_align.avx2.striped" in names
    assert "parasail.sw_align.avx2.scan" not in names  # what the automatic one runs
    sure = candidates("genomics.sw_align", held_out())
    assert not [r for r in sure.runners if r.variant.startswith("parasail.sw_align.avx2.")]
    # A batch: judged on its first non-empty target.
    offsets = np.array([0, 0, 3000], np.int64)
    batch = candidates("genomics.sw_align_batch", (query, similar, offsets, m, 5, 2))
    assert "parasail.sw_align_batch.avx2.striped" in [r.variant for r in batch.runners]


def test_a_forced_family_scores_as_the_automatic_choice_in_a_batch() -> None:
    rng = np.random.default_rng(13)
    query = rng.integers(0, 20, 40).astype(np.uint8)
    targets = [rng.integers(0, 20, int(n)).astype(np.uint8) for n in rng.integers(0, 200, 30)]
    targets += [np.resize(query, 120)]
    packed = np.concatenate(targets)
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    m, o, e = BLOSUM62.matrix, BLOSUM62.gap_open, BLOSUM62.gap_extend
    for isa in HERE:
        auto = kernels.align_batch(isa, query, packed, offsets, m, o, e)
        for family in ("striped", "scan", "diag"):
            got = kernels.align_batch(isa, query, packed, offsets, m, o, e, family=family)
            for a, b in zip(auto, got, strict=True):
                assert a.tolist() == b.tolist(), (isa, family)
        for i, t in enumerate(targets):
            assert (auto[0][i], auto[1][i], auto[2][i]) == reference(query, t, m, o, e)


def test_the_rule_check_reads_the_recorded_grid() -> None:
    """``bench_sw_families.py --check-rule`` on the recorded grid: one line per row where the
    rule's lane was over 1.05x the fastest, counted in the first line, in a real subprocess."""
    root = Path(__file__).resolve().parents[3]
    grid = root / "benchmarks" / "results" / "sw-families-grid-2026-12-07-in-turn.json"
    done = subprocess.run(
        [sys.executable, str(root / "benchmarks" / "bench_sw_families.py"), "--check-rule",
         str(grid)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    first, *rows = done.stdout.splitlines()
    found = re.fullmatch(r"(\d+) of (\d+) rows: .* \((\d+) of them of 0.1 ms or more\)", first)
    assert found, first
    assert int(found[2]) == len(json.loads(grid.read_text())["rows"])
    assert int(found[1]) == len(rows) and int(found[3]) <= len(rows)
    assert all(float(row.split()[0]) >= 1.05 for row in rows)  # printed to 2 places
