"""parasail's variants agree with Prism's reference, exactly (score and end positions, ties
included), and with Biopython's PairwiseAligner in local mode (scores): on random inputs
(hypothesis) and adversarial ones (empty sequences, length 1, nothing in common, an optimum
across a gap, ties, scores that saturate 8-bit and 16-bit lanes, lowercase and unknown letters,
BLOSUM62, equal gap penalties), directly on every instruction set this CPU executes and through
Prism's dispatch."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import prism_genomics
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prism_genomics import BLOSUM62, DNA, PROTEIN, Scoring, encode
from prism_plugin_parasail import kernels, rule
from prism_plugin_parasail.variants import PARALLEL_MIN_CELLS

import prism_core

HERE = [isa for isa in rule.ISAS if kernels.isa_usable(isa)]
DNA_SCORING = Scoring.match_mismatch()  # 2 / -3, gaps 5 / 2


def reference(query: Any, target: Any, matrix: Any, o: int, e: int) -> tuple[int, int, int]:
    """Prism's NumPy reference, through dispatch with the numpy backend named."""
    with prism_core.use_backend("numpy"):
        r = prism_genomics.sw_align(query, target, matrix, o, e, False)
    return r.score, r.query_end, r.target_end


def reference_batch(query: Any, targets: list[Any], matrix: Any, o: int, e: int) -> Any:
    packed, offsets = pack(targets)
    with prism_core.use_backend("numpy"):
        return prism_genomics.sw_align_batch(query, packed, offsets, matrix, o, e)


def pack(targets: list[Any]) -> tuple[Any, Any]:
    lengths = [len(t) for t in targets]
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    packed = np.concatenate(targets).astype(np.uint8) if targets else np.zeros(0, np.uint8)
    return packed, offsets


def biopython_score(query: str, target: str, scoring: Scoring) -> int:
    from Bio.Align import PairwiseAligner
    from Bio.Align.substitution_matrices import Array

    aligner = PairwiseAligner(mode="local")
    letters = scoring.alphabet.letters
    aligner.substitution_matrix = Array(letters, 2, scoring.matrix.astype(float))
    aligner.open_gap_score = -scoring.gap_open
    aligner.extend_gap_score = -scoring.gap_extend
    return int(aligner.score(query, target)) if query and target else 0


def test_this_cpu_runs_at_least_one_instruction_set() -> None:
    # The development host and CI are x86-64 with AVX2; an aarch64 host runs NEON.
    assert HERE, "parasail reports no usable SSE4.1, AVX2 or NEON on this CPU"


codes = st.lists(st.integers(0, 4), max_size=60).map(lambda c: np.array(c, dtype=np.uint8))
narrow = st.lists(st.integers(0, 1), max_size=40).map(lambda c: np.array(c, dtype=np.uint8))
matrices = st.one_of(
    st.just(DNA_SCORING.matrix),
    st.lists(st.integers(-6, 6), min_size=25, max_size=25).map(
        lambda v: np.array(v, dtype=np.int32).reshape(5, 5)  # asymmetric too
    ),
)
penalties = st.tuples(st.integers(0, 9), st.integers(0, 9)).map(
    lambda p: (max(p), min(p))  # gap_open >= gap_extend: what the variants take
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(query=st.one_of(codes, narrow), target=st.one_of(codes, narrow), matrix=matrices,
       gaps=penalties)  # fmt: skip
def test_random_pairs_agree_with_the_reference(
    query: Any, target: Any, matrix: Any, gaps: tuple[int, int]
) -> None:
    o, e = gaps
    expected = reference(query, target, matrix, o, e)
    for isa in HERE:
        assert kernels.align(isa, query, target, matrix, o, e) == expected, isa


@settings(max_examples=60, deadline=None)
@given(query=codes, targets=st.lists(codes, max_size=12), gaps=penalties)
def test_random_batches_agree_with_the_reference(
    query: Any, targets: list[Any], gaps: tuple[int, int]
) -> None:
    o, e = gaps
    expected = reference_batch(query, targets, DNA_SCORING.matrix, o, e)
    packed, offsets = pack(targets)
    for isa in HERE:
        for threads in (1, 2):
            got = kernels.align_batch(
                isa, query, packed, offsets, DNA_SCORING.matrix, o, e, threads=threads
            )
            assert np.array_equal(got[0], expected.scores), (isa, threads)
            assert np.array_equal(got[1], expected.query_ends), (isa, threads)
            assert np.array_equal(got[2], expected.target_ends), (isa, threads)


ADVERSARIAL = {
    "empty query": ("", "ACGT"),
    "empty target": ("ACGT", ""),
    "both empty": ("", ""),
    "length 1, a match": ("A", "A"),
    "length 1, a mismatch": ("A", "C"),
    "nothing in common": ("AAAAAAAA", "CCCCCCCCCCCC"),
    "the optimum crosses a gap": ("ACGTACGTAC" * 3 + "GGG" + "TTGCATTGCA" * 3,
                                  "ACGTACGTAC" * 3 + "TTGCATTGCA" * 3),
    "repeats tie": ("ACACAC", "ACACACACACACAC"),
    "saturates 8-bit lanes": ("ACGT" * 50, "ACGT" * 50),  # 400 > 127
    "saturates 16-bit lanes": ("ACGT" * 5000, "ACGT" * 5000),  # 40000 > 32767
    "lowercase letters": ("acgtnACGTN", "TTACGTNACGTNAA"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_adversarial_pairs_agree_with_the_reference_and_biopython(case: str) -> None:
    q_text, t_text = ADVERSARIAL[case]
    query, target = encode(q_text, DNA), encode(t_text, DNA)
    m, o, e = DNA_SCORING.matrix, DNA_SCORING.gap_open, DNA_SCORING.gap_extend
    expected = reference(query, target, m, o, e)
    for isa in HERE:
        assert kernels.align(isa, query, target, m, o, e) == expected, isa
    if len(q_text) * len(t_text) <= 10**6:
        assert expected[0] == biopython_score(q_text.upper(), t_text.upper(), DNA_SCORING)
    if expected[0] == 0:
        assert expected[1:] == (-1, -1)


def test_unknown_letters_substituted_as_n() -> None:
    """Unknown letters are the caller's choice: encoded as N when asked, aligned as N."""
    query = encode("ACGTRYKMACGT", DNA, unknown="N")
    target = encode("ACGTNNNNACGT", DNA)
    assert np.array_equal(query, target)
    m = DNA_SCORING.matrix
    expected = reference(query, target, m, 5, 2)
    assert expected[0] == 24  # 12 letters, N matches N in match/mismatch
    for isa in HERE:
        assert kernels.align(isa, query, target, m, 5, 2) == expected


@settings(max_examples=40, deadline=None)
@given(
    query=st.text(alphabet=PROTEIN.letters[:-1], max_size=50),
    target=st.text(alphabet=PROTEIN.letters[:-1], max_size=50),
)
def test_blosum62_agrees_with_the_reference_and_biopython(query: str, target: str) -> None:
    scoring = BLOSUM62
    q, t = encode(query, PROTEIN), encode(target, PROTEIN)
    m, o, e = scoring.matrix, scoring.gap_open, scoring.gap_extend
    expected = reference(q, t, m, o, e)
    assert expected[0] == biopython_score(query, target, scoring)
    for isa in HERE:
        assert kernels.align(isa, q, t, m, o, e) == expected


@settings(max_examples=100, deadline=None)
@given(query=st.one_of(codes, narrow), target=st.one_of(codes, narrow),
       gap=st.integers(0, 6))  # fmt: skip
def test_equal_penalties_use_the_exact_scan_kernel(query: Any, target: Any, gap: int) -> None:
    """parasail's striped kernels miss the optimum when gap_open == gap_extend (measured);
    the scan kernels do not, and the variants use them there."""
    expected = reference(query, target, DNA_SCORING.matrix, gap, gap)
    for isa in HERE:
        assert kernels.align(isa, query, target, DNA_SCORING.matrix, gap, gap) == expected


def test_gap_extend_above_gap_open_is_declined_and_the_reference_says_why() -> None:
    """parasail is not exact there (issue #64); the reference refuses such penalties as the
    caller's error, which reaches the caller unchanged (no fallback)."""
    query, target = encode("ACGTTTACGT"), encode("ACGTACGT")
    m = DNA_SCORING.matrix
    decision = prism_core.explain("genomics.sw_align", query, target, m, 1, 3, False)
    reasons = {c.variant: " ".join(c.reasons) for c in decision.candidates}
    assert "gap_extend (3) > gap_open (1)" in reasons[f"parasail.sw_align.{HERE[0]}"]
    assert decision.chosen == "numpy.genomics.sw_align"
    with pytest.raises(ValueError, match=r"gap_open \(1\) must be >= gap_extend \(3\)"):
        prism_genomics.sw_align(query, target, m, 1, 3, False)
    assert prism_core.fallbacks() == []
    with pytest.raises(ValueError, match=r"gap_extend \(3\) > gap_open \(1\)"):
        kernels.align(HERE[0], query, target, m, 1, 3)


def test_a_traceback_is_declined_and_the_reference_traces_back() -> None:
    query, target = encode("ACGTTTACGT"), encode("ACGTACGT")
    m = DNA_SCORING.matrix
    decision = prism_core.explain("genomics.sw_align", query, target, m, 5, 2, True)
    assert decision.chosen == "numpy.genomics.sw_align"
    got = prism_genomics.sw_align(query, target, m, 5, 2, True)
    assert got.cigar is not None


def test_through_dispatch_the_widest_instructions_run() -> None:
    rng = np.random.default_rng(1)
    query = rng.integers(0, 4, 300, dtype=np.uint8)
    target = rng.integers(0, 4, 3000, dtype=np.uint8)
    m = DNA_SCORING.matrix
    decision = prism_core.explain("genomics.sw_align", query, target, m, 5, 2, False)
    assert decision.chosen == f"parasail.sw_align.{HERE[0]}"
    with prism_core.use_backend("parasail"):
        got = prism_genomics.sw_align(query, target, m, 5, 2, False)
    assert (got.score, got.query_end, got.target_end) == reference(query, target, m, 5, 2)
    assert prism_core.fallbacks() == []


@pytest.mark.timeout(120)
def test_a_large_batch_runs_on_threads_through_dispatch() -> None:
    rng = np.random.default_rng(2)
    query = rng.integers(0, 4, 1000, dtype=np.uint8)
    targets = [rng.integers(0, 4, int(n), dtype=np.uint8) for n in rng.integers(0, 1800, 24)]
    packed, offsets = pack(targets)
    m = DNA_SCORING.matrix
    assert len(query) * len(packed) >= PARALLEL_MIN_CELLS
    decision = prism_core.explain("genomics.sw_align_batch", query, packed, offsets, m, 5, 2)
    assert decision.chosen == f"parasail.sw_align_batch.{HERE[0]}.threads"
    got = prism_genomics.sw_align_batch(query, packed, offsets, m, 5, 2)
    assert got == reference_batch(query, targets, m, 5, 2)


@pytest.mark.timeout(120)
def test_concurrent_callers_with_many_matrices_get_their_own_results() -> None:
    """Sixteen threads, each with its own matrix (more than the 32 kept matrices in all),
    align at once: every result is the reference's for that thread's matrix."""
    rng = np.random.default_rng(3)
    query = rng.integers(0, 5, 120, dtype=np.uint8)
    target = rng.integers(0, 5, 400, dtype=np.uint8)
    jobs = [rng.integers(-5, 6, (5, 5)).astype(np.int32) for _ in range(48)]
    expected = [reference(query, target, m, 6, 1) for m in jobs]
    got: dict[int, tuple[int, int, int]] = {}
    errors: list[BaseException] = []

    def work(first: int) -> None:
        try:
            for i in range(first, len(jobs), 16):
                got[i] = kernels.align(HERE[0], query, target, jobs[i], 6, 1)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert [got[i] for i in range(len(jobs))] == expected


def test_bad_arguments_name_the_argument() -> None:
    m = DNA_SCORING.matrix
    with pytest.raises(ValueError, match="target: code 7 at position 1 is outside"):
        kernels.align(HERE[0], encode("ACGT"), np.array([0, 7], np.uint8), m, 5, 2)
    with pytest.raises(ValueError, match="matrix: expected a square"):
        kernels.align(HERE[0], encode("ACGT"), encode("ACGT"), np.zeros((5, 4), np.int32), 5, 2)
    with pytest.raises(TypeError, match="gap_open: expected an integer"):
        kernels.align(HERE[0], encode("ACGT"), encode("ACGT"), m, 5.5, 2)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="offsets"):
        kernels.align_batch(HERE[0], encode("ACGT"), encode("ACGT"), np.array([0, 9]), m, 5, 2)


@pytest.mark.skipif("neon" in HERE, reason="this CPU executes NEON")
def test_an_instruction_set_this_cpu_lacks_raises_instead_of_crashing() -> None:
    """A description that claims a flag the CPU does not have (a user's file): the kernel
    says so instead of executing an illegal instruction."""
    with pytest.raises(RuntimeError, match="does not execute neon"):
        kernels.align("neon", encode("ACGT"), encode("ACGT"), DNA_SCORING.matrix, 5, 2)
