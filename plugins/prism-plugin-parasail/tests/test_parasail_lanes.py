"""The lane width each alignment runs in: the narrowest the score needs, chosen before calling
from an upper bound of the score (never wider), what is likely (the query's last score, the
main diagonal's lower bound), and the lanes the matrix and penalties fit; scores stay exact
(against Prism's reference) where they pass 8-, 16- and 32-bit lanes."""

from __future__ import annotations

from typing import Any

import numpy as np
import parasail
import prism_genomics
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prism_genomics import BLOSUM62, PROTEIN, Scoring, encode
from prism_plugin_parasail import kernels, rule

import prism_core

HERE = [isa for isa in rule.ISAS if kernels.isa_usable(isa)]
DNA = Scoring.match_mismatch()  # 2 / -3, gaps 5 / 2: top 2, 8-bit striped lanes hold 252


def reference(query: Any, target: Any, matrix: Any, o: int, e: int) -> tuple[int, int, int]:
    with prism_core.use_backend("numpy"):
        r = prism_genomics.sw_align(query, target, matrix, o, e, False)
    return r.score, r.query_end, r.target_end


@pytest.fixture
def ran(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The (method, bits) of every parasail alignment the plugin runs, in order, with no
    query kept from earlier tests."""
    monkeypatch.setattr(kernels, "_QUERIES", {}, raising=False)
    seen: list[tuple[str, int]] = []
    table = kernels._kernels_of(rule.ISAS[HERE[0]]).align
    for key, fn in list(table.items()):

        def spy(*args: Any, _fn: Any = fn, _key: Any = key) -> Any:
            seen.append(_key)
            return _fn(*args)

        monkeypatch.setitem(table, key, spy)
    return seen


def dna(match: int, mismatch: int) -> np.ndarray[Any, Any]:
    out = np.full((4, 4), mismatch, np.int32)
    np.fill_diagonal(out, match)
    return out


def identical(letters: str, n: int, seed: int = 0) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    return encode("".join(rng.choice(list(letters), n)), PROTEIN)


@pytest.mark.parametrize(
    ("method", "bits", "length"),
    [("striped", 8, 126), ("scan", 8, 62), ("scan", 16, 16382)],
)
def test_lane_limits_are_where_parasail_saturates(method: str, bits: int, length: int) -> None:
    """``length`` equal letters at match 2 score the limit exactly: unsaturated there, and
    saturated one letter on (parasail's sources, checked on the kernels themselves)."""
    assert rule.lane_limit(method, bits, 2) == 2 * length
    fn = getattr(parasail, f"sw_{method}_{bits}")
    dna = parasail.matrix_create("ACGT", 2, -3)
    at = fn("A" * length, "A" * length, 5, 2, dna)
    assert (at.score, at.saturated) == (2 * length, False)
    assert fn("A" * (length + 1), "A" * (length + 1), 5, 2, dna).saturated


def lanes(low: int, top: int, o: int, e: int) -> list[tuple[int, str, int]]:
    r = rule.rule(low, top, float(top), True, o, e, 256)
    return [(lane.bits, lane.method, lane.limit) for lane in (*r.striped, *r.scan)]


def test_the_lanes_of_the_two_usual_scorings() -> None:
    assert lanes(-3, 2, 5, 2) == [
        (8, "striped", 252),
        (16, "striped", 65532),
        (32, "striped", 2**31 - 4),
        (8, "scan", 124),
        (16, "scan", 32764),
        (32, "scan", 2**31 - 4),
    ]
    # Equal penalties: no striped lane (they are not exact there).
    assert [method for _, method, _ in lanes(-4, 11, 11, 11)] == ["scan"] * 3


def test_lanes_that_cannot_hold_the_matrix_or_the_penalties_are_never_used() -> None:
    assert [bits for bits, method, _ in lanes(-300, 300, 5, 2) if method == "striped"] == [16, 32]
    assert [bits for bits, method, _ in lanes(-3, 2, 200, 2) if method == "scan"] == [16, 32]
    assert [bits for bits, _, _ in lanes(-3, 2**20, 5, 2)] == [32, 32]
    assert rule.rule(-3, 2**20, 2.0, True, 5, 2, 256).diag == ()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    query=st.lists(st.integers(0, 3), min_size=1, max_size=40),
    target=st.lists(st.integers(0, 3), min_size=1, max_size=40),
    values=st.lists(st.integers(-300, 300), min_size=16, max_size=16),
    gaps=st.tuples(st.integers(0, 300), st.integers(0, 300)).map(lambda p: (max(p), min(p))),
)
def test_matrices_and_penalties_past_8_bits_score_exactly(
    query: list[int], target: list[int], values: list[int], gaps: tuple[int, int]
) -> None:
    """parasail casts the matrix and the penalties to the lane's type: in 8-bit lanes a value
    of 200 wrapped and the scores came out wrong, unflagged."""
    q, t = np.array(query, np.uint8), np.array(target, np.uint8)
    matrix = np.array(values, np.int32).reshape(4, 4)
    expected = reference(q, t, matrix, *gaps)
    for isa in HERE:
        assert kernels.align(isa, q, t, matrix, *gaps) == expected, isa


def test_a_score_past_16_bit_lanes_goes_straight_to_32_bits(ran: list[tuple[str, int]]) -> None:
    """8,000 letters against themselves score about 67,000: the upper bound (88,000) passes the
    16-bit lanes' limit, the diagonal's lower bound shows the score does too."""
    query = identical("WCHYP", 8000)
    m, o, e = BLOSUM62.matrix, BLOSUM62.gap_open, BLOSUM62.gap_extend
    got = kernels.align(HERE[0], query, query, m, o, e)
    assert got[0] > rule.lane_limit("striped", 16, int(m.max()))
    assert ran == [("scan", 32)]
    assert got == reference(query, query, m, o, e)


def test_a_query_aligned_again_starts_in_the_lane_its_last_alignment_needed(
    ran: list[tuple[str, int]],
) -> None:
    rng = np.random.default_rng(4)
    query = rng.integers(0, 4, 400, dtype=np.uint8)
    related = query.copy()
    related[::10] = (related[::10] + 1) % 4  # 90% identical: a score of about 600
    other = rng.integers(0, 4, 400, dtype=np.uint8)
    m = DNA.matrix
    first = kernels.align(HERE[0], query, related, m, 5, 2)
    assert first == reference(query, related, m, 5, 2)
    # Nothing known: 8 bits, saturated; then 16 bits (the family the rule picks for a score
    # past 252: similarity 253 / 800 is low, striped).
    assert ran == [("striped", 8), ("striped", 16)]
    ran.clear()
    assert kernels.align(HERE[0], query, related, m, 5, 2) == first
    assert [bits for _, bits in ran] == [16]
    ran.clear()
    # An unrelated target after a related one: 16 bits once, then 8 again.
    for _ in range(2):
        assert kernels.align(HERE[0], query, other, m, 5, 2) == reference(query, other, m, 5, 2)
    assert [bits for _, bits in ran] == [16, 8]
    ran.clear()
    # The upper bound caps it: 100 letters score at most 200, which 8-bit lanes hold.
    kernels.align(HERE[0], query, related, m, 5, 2)
    assert kernels.align(HERE[0], query, related[:100], m, 5, 2)[0] <= 200
    assert [bits for _, bits in ran] == [8, 16, 8]


def test_a_batch_of_similar_proteins_runs_each_target_once_after_the_first(
    ran: list[tuple[str, int]],
) -> None:
    rng = np.random.default_rng(5)
    query = identical(PROTEIN.letters[:20], 120, seed=5)
    targets = []
    for _ in range(12):
        t = query.copy()
        t[rng.integers(0, 120, 12)] = rng.integers(0, 20, 12)
        targets.append(np.concatenate([rng.integers(0, 20, 7).astype(np.uint8), t]))
    packed = np.concatenate(targets)
    offsets = np.arange(0, packed.shape[0] + 1, 127, dtype=np.int64)
    m, o, e = BLOSUM62.matrix, BLOSUM62.gap_open, BLOSUM62.gap_extend
    scores, query_ends, target_ends = kernels.align_batch(HERE[0], query, packed, offsets, m, o, e)
    # A 120-letter protein query: striped in 16-bit lanes (scan only from 300 letters).
    assert ran == [("striped", 8)] + [("striped", 16)] * 12
    for i, t in enumerate(targets):
        assert (scores[i], query_ends[i], target_ends[i]) == reference(query, t, m, o, e)


def test_after_a_target_saturates_the_next_ones_start_wider_until_eight_score_below_it(
    ran: list[tuple[str, int]],
) -> None:
    """Hysteresis in a batch: one high-scoring target (the query itself, past 8-bit lanes)
    among unrelated ones.  The next 8 targets start in 16-bit lanes though each scores little;
    from the ninth, 8-bit lanes again.  Every score is the reference's."""
    rng = np.random.default_rng(3)
    query = rng.integers(0, 20, 150).astype(np.uint8)
    unrelated = [rng.integers(0, 20, 150).astype(np.uint8) for _ in range(11)]
    targets = [unrelated[0], query.copy(), *unrelated[1:]]
    packed = np.concatenate(targets)
    offsets = np.arange(0, packed.shape[0] + 1, 150, dtype=np.int64)
    m, o, e = BLOSUM62.matrix, 11, 1
    scores, query_ends, target_ends = kernels.align_batch(HERE[0], query, packed, offsets, m, o, e)
    assert max(scores[2:]) < rule.lane_limit("striped", 8, 11) < scores[1]
    assert ran == [("striped", 8)] * 2 + [("striped", 16)] * 9 + [("striped", 8)] * 2
    for i, t in enumerate(targets):
        assert (scores[i], query_ends[i], target_ends[i]) == reference(query, t, m, o, e)


def similar_dna(n: int, m: int, seed: int) -> tuple[Any, list[Any]]:
    """A query of ``n`` DNA codes and 8 targets of ``m``: the query repeated, 10% substituted."""
    rng = np.random.default_rng(seed)
    query = rng.integers(0, 4, n).astype(np.uint8)
    targets = []
    for _ in range(8):
        t = np.resize(query, m).copy()
        changed = rng.random(m) >= 0.9
        t[changed] = (t[changed] + rng.integers(1, 4, int(changed.sum()))) % 4
        targets.append(t.astype(np.uint8))
    return query, targets


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(25, 90),
    changes=st.integers(0, 30),
    gaps=st.sampled_from([(11, 1), (10, 2), (5, 2), (4, 4)]),
)
def test_similar_proteins_in_wider_lanes_agree_with_the_reference(
    seed: int, n: int, changes: int, gaps: tuple[int, int]
) -> None:
    """Scores past 8-bit lanes (similar sequences, substitutions and gaps), which run in the
    16-bit scan or striped kernels, score and end exactly as the reference does."""
    rng = np.random.default_rng(seed)
    query = rng.integers(0, 20, n).astype(np.uint8)
    target = query.copy()
    for _ in range(changes):
        at = int(rng.integers(0, target.shape[0]))
        kind = int(rng.integers(0, 3))
        if kind == 0:
            target[at] = rng.integers(0, 20)
        elif kind == 1:
            target = np.delete(target, at)
        else:
            target = np.insert(target, at, rng.integers(0, 20)).astype(np.uint8)
    expected = reference(query, target, BLOSUM62.matrix, *gaps)
    for isa in HERE:
        assert kernels.align(isa, query, target, BLOSUM62.matrix, *gaps) == expected, isa
        kernels.align(isa, query, target, BLOSUM62.matrix, *gaps)  # again: from history


def test_a_score_past_32_bit_lanes_raises_instead_of_coming_back_wrong() -> None:
    """parasail's result holds an ``int``: its 64-bit lanes gave 0 for 3 * 2**30."""
    matrix = np.full((4, 4), -5, np.int32)
    np.fill_diagonal(matrix, 2**20)
    query = np.zeros(3000, np.uint8)
    with pytest.raises(OverflowError, match="32-bit"):
        kernels.align(HERE[0], query, query, matrix, 5, 2)


@pytest.mark.timeout(120)
def test_threads_sharing_a_kept_query_score_as_one_thread_does() -> None:
    """Two threads align the targets of one kept query (its profiles, last score and lanes
    shared), three times: the same scores and ends as one thread."""
    query, targets = similar_dna(30, 300, seed=7)
    more = [t for _ in range(12) for t in targets]  # 96 targets
    packed = np.concatenate(more)
    offsets = np.arange(0, packed.shape[0] + 1, 300, dtype=np.int64)
    m = dna(2, -1)
    expected = kernels.align_batch(HERE[0], query.copy(), packed, offsets, m, 5, 2)
    kernels._QUERIES.clear()
    for _ in range(3):
        got = kernels.align_batch(HERE[0], query, packed, offsets, m, 5, 2, threads=2)
        for a, b in zip(got, expected, strict=True):
            assert np.array_equal(a, b)
