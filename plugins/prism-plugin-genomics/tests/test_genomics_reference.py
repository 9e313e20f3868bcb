"""The NumPy reference against independent oracles: Biopython's ``PairwiseAligner`` in local
mode (scores), a scalar Gotoh written here from the recurrences (scores and ends under the tie
rule), and parasail where it is installed (scores and ends: the rule is parasail's).

Random inputs come from hypothesis (small alphabets make ties and gaps common); the adversarial
ones are listed.  Biopython is the ``test`` extra's; without it those checks skip and say so.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import prism_genomics as genomics
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prism_genomics.reference import sw_align_batch_reference, sw_align_reference

HAS_BIO = importlib.util.find_spec("Bio") is not None
HAS_PARASAIL = importlib.util.find_spec("parasail") is not None
needs_bio = pytest.mark.skipif(
    not HAS_BIO, reason="Biopython is not installed (pip install 'prism-core[test]')"
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def scalar_gotoh(
    q: Any, t: Any, matrix: Any, gap_open: int, gap_extend: int
) -> tuple[int, int, int]:
    """Score and ends, one cell at a time, straight from the recurrences; ties: the smallest
    target end, then the smallest query end."""
    n, m = len(q), len(t)
    neg = -(10**9)
    h = [[0] * (m + 1) for _ in range(n + 1)]
    e = [[neg] * (m + 1) for _ in range(n + 1)]
    f = [[neg] * (m + 1) for _ in range(n + 1)]
    best, best_q, best_t = 0, -1, -1
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            e[i][j] = max(h[i][j - 1] - gap_open, e[i][j - 1] - gap_extend)
            f[i][j] = max(h[i - 1][j] - gap_open, f[i - 1][j] - gap_extend)
            h[i][j] = max(0, h[i - 1][j - 1] + int(matrix[q[i - 1], t[j - 1]]), e[i][j], f[i][j])
            v = h[i][j]
            if v > best or (v == best and v > 0 and (j - 1, i - 1) < (best_t, best_q)):
                best, best_q, best_t = v, i - 1, j - 1
    return best, best_q, best_t


def biopython_score(query: str, target: str, scheme: genomics.Scoring) -> int:
    from Bio import Align
    from Bio.Align import substitution_matrices

    if not query or not target:
        return 0
    aligner = Align.PairwiseAligner()
    aligner.mode = "local"
    letters = scheme.alphabet.letters
    array = substitution_matrices.Array(alphabet=letters, dims=2, data=scheme.matrix.astype(float))
    aligner.substitution_matrix = array
    aligner.open_gap_score = -scheme.gap_open
    aligner.extend_gap_score = -scheme.gap_extend
    return int(aligner.score(query, target))


def dna(alphabet: str = "ACGT", max_size: int = 40) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=0, max_size=max_size)


GAPS = st.sampled_from([(5, 2), (3, 1), (2, 2), (0, 0), (10, 1), (1, 0)])


# -- random pairs ------------------------------------------------------------------------------


@SETTINGS
@given(query=dna("AC"), target=dna("AC"), gaps=GAPS)
def test_scores_and_ends_match_the_scalar_recurrences(
    query: str, target: str, gaps: tuple[int, int]
) -> None:
    scheme = genomics.get_scoring("dna", *gaps)
    q, t = genomics.encode(query), genomics.encode(target)
    result = sw_align_reference(q, t, scheme.matrix, *gaps)
    assert (result.score, result.query_end, result.target_end) == scalar_gotoh(
        q, t, scheme.matrix, *gaps
    )


@needs_bio
@SETTINGS
@given(query=dna(), target=dna(), gaps=GAPS)
def test_dna_scores_match_biopython(query: str, target: str, gaps: tuple[int, int]) -> None:
    scheme = genomics.get_scoring("dna", *gaps)
    result = genomics.align(query, target, scoring=scheme, traceback=True)
    assert result.score == biopython_score(query, target, scheme)


@needs_bio
@SETTINGS
@given(
    query=dna("ARNDCQEGHILKMFPSTWYVBZX*", 30),
    target=dna("ARNDCQEGHILKMFPSTWYVBZX*", 30),
    gaps=st.sampled_from([(11, 1), (10, 1), (5, 5)]),
)
def test_blosum62_scores_match_biopython(query: str, target: str, gaps: tuple[int, int]) -> None:
    scheme = genomics.get_scoring("blosum62", *gaps)
    assert genomics.align(query, target, scoring=scheme).score == biopython_score(
        query, target, scheme
    )


@needs_bio
def test_the_builtin_matrices_are_biopythons() -> None:
    from Bio.Align import substitution_matrices

    for scheme, name in ((genomics.BLOSUM62, "BLOSUM62"), (genomics.DNAFULL, "NUC.4.4")):
        theirs = substitution_matrices.load(name)
        letters = scheme.alphabet.letters
        for a in letters:
            for b in letters:
                assert scheme.score(a, b) == int(theirs[a][b]), (name, a, b)


@needs_bio
@settings(max_examples=40, deadline=None)
@given(
    query=dna("ACGT", 25),
    targets=st.lists(dna("ACGT", 30), max_size=8),
    gaps=GAPS,
)
def test_batches_match_biopython_and_pairs(
    query: str, targets: list[str], gaps: tuple[int, int]
) -> None:
    scheme = genomics.get_scoring("dna", *gaps)
    batch = genomics.align_batch(query, targets, scoring=scheme)
    assert batch.scores.tolist() == [biopython_score(query, t, scheme) for t in targets]
    for i, target in enumerate(targets):
        assert batch[i] == genomics.align(query, target, scoring=scheme)


# -- adversarial inputs --------------------------------------------------------------------------

ADVERSARIAL = [
    ("", ""),
    ("", "ACGT"),
    ("A", "A"),
    ("A", "T"),
    ("AAAAAAAA", "TTTTTTTT"),  # all mismatches
    ("ACGTTGCAACACGTTGCAAC", "ACGTTGCAACGGGACGTTGCAAC"),  # the optimum crosses a gap
    ("ACACACACAC", "ACAC"),  # many equal maxima
    ("ACGT" * 40, "ACGT" * 40),  # 320: past int8 lanes
    ("ACGT" * 4200, "ACGT" * 4200),  # 33,600: past int16 lanes
    ("acgtNNacgt", "ACGTAAACGT"),  # lowercase and N
]


@needs_bio
@pytest.mark.parametrize(("query", "target"), ADVERSARIAL, ids=lambda v: f"{v[:12]}..{len(v)}")
def test_adversarial_pairs_match_biopython(query: str, target: str) -> None:
    scheme = genomics.get_scoring("dna")
    result = genomics.align(query, target)
    assert result.score == biopython_score(query.upper(), target.upper(), scheme)


@pytest.mark.parametrize(("query", "target"), ADVERSARIAL[:7] + ADVERSARIAL[9:])
def test_adversarial_pairs_match_the_scalar_recurrences(query: str, target: str) -> None:
    scheme = genomics.get_scoring("dna")
    q, t = genomics.encode(query), genomics.encode(target)
    result = sw_align_reference(q, t, scheme.matrix, 5, 2)
    assert (result.score, result.query_end, result.target_end) == scalar_gotoh(
        q, t, scheme.matrix, 5, 2
    )


def test_scores_that_need_int64() -> None:
    """A matrix of large scores: beyond int32's room the kernels compute in int64."""
    matrix = np.full((5, 5), -(1 << 20), dtype=np.int32)
    np.fill_diagonal(matrix, 1 << 20)
    scheme = genomics.Scoring(matrix, genomics.DNA, 1 << 21, 1 << 20)
    seq = "ACGT" * 300
    assert genomics.align(seq, seq, scoring=scheme).score == 1200 << 20
    assert genomics.align_batch(seq, [seq, seq[:7]], scoring=scheme).scores.tolist() == [
        1200 << 20,
        7 << 20,
    ]


# -- parasail's end rule -------------------------------------------------------------------------


@pytest.mark.skipif(not HAS_PARASAIL, reason="parasail is not installed (prism-plugin-parasail)")
@SETTINGS
@given(query=dna("AC", 30), target=dna("AC", 30), gaps=st.sampled_from([(5, 2), (3, 1), (2, 2)]))
def test_ends_follow_parasails_rule(query: str, target: str, gaps: tuple[int, int]) -> None:
    """parasail's own scalar kernel (``parasail.sw``, not the plugin's variants) reports the
    same ends: the smallest reference end, then the smallest query end."""
    import parasail

    if not query or not target:
        return
    theirs = parasail.sw(query, target, gaps[0], gaps[1], parasail.matrix_create("ACGTN", 2, -3))
    scheme = genomics.get_scoring("dna", *gaps)
    ours = sw_align_reference(genomics.encode(query), genomics.encode(target), scheme.matrix, *gaps)
    expected = (theirs.score, theirs.end_query, theirs.end_ref) if theirs.score else (0, -1, -1)
    assert (ours.score, ours.query_end, ours.target_end) == expected


def test_a_batch_of_many_small_targets_matches_pairs() -> None:
    rng = np.random.default_rng(1)
    scheme = genomics.get_scoring("dna")
    q = rng.integers(0, 4, 40).astype(np.uint8)
    lengths = rng.integers(0, 12, 500)
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    packed = rng.integers(0, 4, int(offsets[-1])).astype(np.uint8)
    batch = sw_align_batch_reference(q, packed, offsets, scheme.matrix, 5, 2)
    for i in range(len(lengths)):
        t = packed[offsets[i] : offsets[i + 1]]
        assert batch[i] == sw_align_reference(q, t, scheme.matrix, 5, 2), i
