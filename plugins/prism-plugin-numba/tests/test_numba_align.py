"""The Numba variants agree with Prism's reference, exactly (score and end positions, ties
included), and with Biopython's PairwiseAligner in local mode (scores): random inputs
(hypothesis, asymmetric matrices, every gap penalty the reference takes) and adversarial ones,
directly, on threads, and through Prism's dispatch."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import prism_genomics
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prism_genomics import BLOSUM62, DNA, PROTEIN, Scoring, encode
from prism_plugin_numba import kernels

import prism_core

DNA_SCORING = Scoring.match_mismatch()


def reference(query: Any, target: Any, matrix: Any, o: int, e: int) -> tuple[int, int, int]:
    with prism_core.use_backend("numpy"):
        r = prism_genomics.sw_align(query, target, matrix, o, e, False)
    return r.score, r.query_end, r.target_end


def pack(targets: list[Any]) -> tuple[Any, Any]:
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    packed = np.concatenate(targets).astype(np.uint8) if targets else np.zeros(0, np.uint8)
    return packed, offsets


def biopython_score(query: str, target: str, scoring: Scoring) -> int:
    from Bio.Align import PairwiseAligner
    from Bio.Align.substitution_matrices import Array

    aligner = PairwiseAligner(mode="local")
    aligner.substitution_matrix = Array(scoring.alphabet.letters, 2, scoring.matrix.astype(float))
    aligner.open_gap_score = -scoring.gap_open
    aligner.extend_gap_score = -scoring.gap_extend
    return int(aligner.score(query, target)) if query and target else 0


codes = st.lists(st.integers(0, 4), max_size=60).map(lambda c: np.array(c, dtype=np.uint8))
narrow = st.lists(st.integers(0, 1), max_size=40).map(lambda c: np.array(c, dtype=np.uint8))
matrices = st.one_of(
    st.just(DNA_SCORING.matrix),
    st.lists(st.integers(-6, 6), min_size=25, max_size=25).map(
        lambda v: np.array(v, dtype=np.int32).reshape(5, 5)
    ),
)
penalties = st.tuples(st.integers(0, 9), st.integers(0, 9)).map(lambda p: (max(p), min(p)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=st.one_of(codes, narrow), target=st.one_of(codes, narrow), matrix=matrices,
       gaps=penalties)  # fmt: skip
def test_random_pairs_agree_with_the_reference(
    query: Any, target: Any, matrix: Any, gaps: tuple[int, int]
) -> None:
    o, e = gaps
    assert kernels.align(query, target, matrix, o, e) == reference(query, target, matrix, o, e)


@settings(max_examples=60, deadline=None)
@given(query=codes, targets=st.lists(codes, max_size=12), matrix=matrices, gaps=penalties)
def test_random_batches_agree_with_the_reference(
    query: Any, targets: list[Any], matrix: Any, gaps: tuple[int, int]
) -> None:
    o, e = gaps
    packed, offsets = pack(targets)
    with prism_core.use_backend("numpy"):
        expected = prism_genomics.sw_align_batch(query, packed, offsets, matrix, o, e)
    for threads in (1, 2):
        got = kernels.align_batch(query, packed, offsets, matrix, o, e, threads=threads)
        assert np.array_equal(got[0], expected.scores), threads
        assert np.array_equal(got[1], expected.query_ends), threads
        assert np.array_equal(got[2], expected.target_ends), threads


ADVERSARIAL = {
    "empty query": ("", "ACGT"),
    "empty target": ("ACGT", ""),
    "length 1, a match": ("A", "A"),
    "length 1, a mismatch": ("A", "C"),
    "nothing in common": ("AAAAAAAA", "CCCCCCCCCCCC"),
    "the optimum crosses a gap": ("ACGTACGTAC" * 3 + "GGG" + "TTGCATTGCA" * 3,
                                  "ACGTACGTAC" * 3 + "TTGCATTGCA" * 3),
    "repeats tie": ("ACACAC", "ACACACACACACAC"),
    "a score beyond 16 bits": ("ACGT" * 5000, "ACGT" * 5000),
    "lowercase letters": ("acgtnACGTN", "TTACGTNACGTNAA"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_adversarial_pairs_agree_with_the_reference_and_biopython(case: str) -> None:
    q_text, t_text = ADVERSARIAL[case]
    query, target = encode(q_text, DNA), encode(t_text, DNA)
    m = DNA_SCORING.matrix
    expected = reference(query, target, m, 5, 2)
    assert kernels.align(query, target, m, 5, 2) == expected
    if len(q_text) * len(t_text) <= 10**6:
        assert expected[0] == biopython_score(q_text.upper(), t_text.upper(), DNA_SCORING)


@settings(max_examples=40, deadline=None)
@given(
    query=st.text(alphabet=PROTEIN.letters[:-1], max_size=50),
    target=st.text(alphabet=PROTEIN.letters[:-1], max_size=50),
)
def test_blosum62_agrees_with_the_reference_and_biopython(query: str, target: str) -> None:
    q, t = encode(query, PROTEIN), encode(target, PROTEIN)
    m, o, e = BLOSUM62.matrix, BLOSUM62.gap_open, BLOSUM62.gap_extend
    expected = reference(q, t, m, o, e)
    assert expected[0] == biopython_score(query, target, BLOSUM62)
    assert kernels.align(q, t, m, o, e) == expected


def test_through_dispatch_with_the_backend_named() -> None:
    rng = np.random.default_rng(1)
    query = rng.integers(0, 4, 200, dtype=np.uint8)
    target = rng.integers(0, 4, 900, dtype=np.uint8)
    m = DNA_SCORING.matrix
    assert prism_core.explain("genomics.sw_align", query, target, m, 5, 2, False).chosen == (
        "numba.sw_align"
    )
    with prism_core.use_backend("numba"):
        got = prism_genomics.sw_align(query, target, m, 5, 2, False)
    assert (got.score, got.query_end, got.target_end) == reference(query, target, m, 5, 2)
    assert prism_core.fallbacks() == []


@pytest.mark.timeout(120)
def test_a_large_batch_runs_on_threads_through_dispatch() -> None:
    rng = np.random.default_rng(2)
    query = rng.integers(0, 4, 300, dtype=np.uint8)
    targets = [rng.integers(0, 4, int(n), dtype=np.uint8) for n in rng.integers(0, 600, 30)]
    packed, offsets = pack(targets)
    m = DNA_SCORING.matrix
    decision = prism_core.explain("genomics.sw_align_batch", query, packed, offsets, m, 5, 2)
    assert decision.chosen == "numba.sw_align_batch.threads"
    got = prism_genomics.sw_align_batch(query, packed, offsets, m, 5, 2)
    with prism_core.use_backend("numpy"):
        assert got == prism_genomics.sw_align_batch(query, packed, offsets, m, 5, 2)


@pytest.mark.timeout(120)
def test_concurrent_callers_get_their_own_results() -> None:
    rng = np.random.default_rng(3)
    query = rng.integers(0, 5, 100, dtype=np.uint8)
    jobs = [
        (rng.integers(0, 5, 300, dtype=np.uint8), rng.integers(-5, 6, (5, 5)).astype(np.int32))
        for _ in range(24)
    ]
    expected = [reference(query, t, m, 6, 1) for t, m in jobs]
    got: dict[int, tuple[int, int, int]] = {}
    errors: list[BaseException] = []

    def work(first: int) -> None:
        try:
            for i in range(first, len(jobs), 8):
                got[i] = kernels.align(query, jobs[i][0], jobs[i][1], 6, 1)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [got[i] for i in range(len(jobs))] == expected


def test_a_traceback_is_declined_and_the_reference_traces_back() -> None:
    query, target = encode("ACGTTTACGT"), encode("ACGTACGT")
    m = DNA_SCORING.matrix
    decision = prism_core.explain("genomics.sw_align", query, target, m, 5, 2, True)
    reasons = {c.variant: " ".join(c.reasons) for c in decision.candidates}
    assert "traceback" in reasons["numba.sw_align"]
    assert prism_genomics.sw_align(query, target, m, 5, 2, True).cigar is not None


def test_bad_arguments_name_the_argument() -> None:
    m = DNA_SCORING.matrix
    with pytest.raises(ValueError, match="target: code 7 is outside"):
        kernels.align(encode("ACGT"), np.array([0, 7], np.uint8), m, 5, 2)
    with pytest.raises(ValueError, match=r"gap_open \(1\) must be >= gap_extend \(3\)"):
        kernels.align(encode("ACGT"), encode("ACGT"), m, 1, 3)
    with pytest.raises(TypeError, match="query: expected 1-D uint8 codes"):
        kernels.align(np.array([0, 1], np.int64), encode("ACGT"), m, 5, 2)
    with pytest.raises(ValueError, match="offsets"):
        kernels.align_batch(encode("ACGT"), encode("ACGT"), np.array([0, 9]), m, 5, 2)
