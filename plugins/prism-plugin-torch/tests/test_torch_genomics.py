"""``torch.cuda.genomics.sw_align_batch``: the anti-diagonal wavefront agrees with Prism's
reference exactly (scores and end positions, ties included) on random and adversarial batches,
run on CPU tensors here (the kernel is device-agnostic); dispatch chooses it on NVIDIA devices
simulated from their descriptions; on a real GPU (``gpu`` marker) the same checks run on CUDA.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import prism_genomics
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from prism_genomics import BLOSUM62, DNA, PROTEIN, Scoring, encode
from prism_plugin_torch.genomics import GPU_MIN_CELLS, on_gpu, sw_batch_wavefront
from prism_plugin_torch.runtime import cuda_unavailable

import prism_core

NO_GPU = f"needs an NVIDIA GPU that torch can use: {cuda_unavailable()}"
DNA_SCORING = Scoring.match_mismatch()


def pack(targets: list[Any]) -> tuple[Any, Any]:
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    packed = np.concatenate(targets).astype(np.uint8) if targets else np.zeros(0, np.uint8)
    return packed, offsets


def reference(query: Any, targets: list[Any], matrix: Any, o: int, e: int) -> Any:
    packed, offsets = pack(targets)
    with prism_core.use_backend("numpy"):
        return prism_genomics.sw_align_batch(query, packed, offsets, matrix, o, e)


def check(query: Any, targets: list[Any], matrix: Any, o: int, e: int, device: Any) -> None:
    packed, offsets = pack(targets)
    expected = reference(query, targets, matrix, o, e)
    got = sw_batch_wavefront(query, packed, offsets, matrix, o, e, device=device)
    assert np.array_equal(got[0], expected.scores)
    assert np.array_equal(got[1], expected.query_ends)
    assert np.array_equal(got[2], expected.target_ends)


codes = st.lists(st.integers(0, 4), max_size=30).map(lambda c: np.array(c, dtype=np.uint8))
narrow = st.lists(st.integers(0, 1), max_size=20).map(lambda c: np.array(c, dtype=np.uint8))
matrices = st.one_of(
    st.just(DNA_SCORING.matrix),
    st.lists(st.integers(-6, 6), min_size=25, max_size=25).map(
        lambda v: np.array(v, dtype=np.int32).reshape(5, 5)  # asymmetric too
    ),
)
penalties = st.tuples(st.integers(0, 9), st.integers(0, 9)).map(lambda p: (max(p), min(p)))


@settings(max_examples=80, deadline=None)
@given(
    query=st.one_of(codes, narrow),
    targets=st.lists(st.one_of(codes, narrow), max_size=8),
    matrix=matrices,
    gaps=penalties,
)
def test_random_batches_agree_with_the_reference_on_cpu_tensors(
    query: Any, targets: list[Any], matrix: Any, gaps: tuple[int, int]
) -> None:
    check(query, targets, matrix, *gaps, torch.device("cpu"))


ADVERSARIAL = {
    "no targets": ("ACGT", []),
    "empty query": ("", ["ACGT", "A"]),
    "empty targets among others": ("ACGT", ["", "ACGT", "", "TTTT"]),
    "length 1": ("A", ["A", "C"]),
    "nothing in common": ("AAAAAAAA", ["CCCCCCCCCCCC", "GGG"]),
    "the optimum crosses a gap": ("ACGTACGTAC" * 3 + "GGG" + "TTGCATTGCA" * 3,
                                  ["ACGTACGTAC" * 3 + "TTGCATTGCA" * 3]),
    "ties in later diagonals": ("ACACAC", ["ACACACACACACAC", "CACACA"]),
    "lengths far apart": ("ACGTTGCA" * 8, ["ACG", "ACGTTGCA" * 40, "TTGCAACG" * 3]),
    "lowercase letters": ("acgtnACGTN", ["TTACGTNACGTNAA"]),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ADVERSARIAL))
def test_adversarial_batches_agree_with_the_reference(case: str) -> None:
    q_text, t_texts = ADVERSARIAL[case]
    check(encode(q_text, DNA), [encode(t, DNA) for t in t_texts], DNA_SCORING.matrix, 5, 2,
          torch.device("cpu"))  # fmt: skip


def test_blosum62_and_a_score_beyond_int32_headroom_use_int64() -> None:
    rng = np.random.default_rng(4)
    letters = np.array(list(PROTEIN.letters[:-1]))
    query = encode("".join(rng.choice(letters, 60)), PROTEIN)
    targets = [encode("".join(rng.choice(letters, int(n))), PROTEIN) for n in (0, 5, 80, 200)]
    check(query, targets, BLOSUM62.matrix, BLOSUM62.gap_open, BLOSUM62.gap_extend, "cpu")
    huge = np.full((5, 5), -(1 << 24), dtype=np.int32)
    np.fill_diagonal(huge, 1 << 24)  # 100 matches score 2**30.6: int64 arithmetic
    check(encode("ACGT" * 25), [encode("ACGT" * 25), encode("TTTT")], huge, 5, 2, "cpu")


def test_a_simulated_h100_runs_the_batch_on_the_gpu_variant() -> None:
    """Selection as on the hardware, from the description (no GPU needed); execution on the
    reference, as every simulation."""
    query, targets = encode("ACGTACGT"), encode("ACGTACGTTTTT")
    offsets = np.array([0, 4, 12], dtype=np.int64)
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain(
            "genomics.sw_align_batch", query, targets, offsets, DNA_SCORING.matrix, 5, 2
        )
    assert decision.chosen == "torch.cuda.genomics.sw_align_batch"
    assert decision.executed == "numpy.genomics.sw_align_batch"


def test_the_cpu_host_rejects_it_naming_the_description() -> None:
    query, targets = encode("ACGT"), encode("ACGTACGT")
    offsets = np.array([0, 8], dtype=np.int64)
    decision = prism_core.explain(
        "genomics.sw_align_batch", query, targets, offsets, DNA_SCORING.matrix, 5, 2
    )
    reasons = " ".join(
        " ".join(c.reasons)
        for c in decision.candidates
        if c.variant == "torch.cuda.genomics.sw_align_batch"
    )
    if torch.cuda.is_available():  # the GPU is matched; the call is too small for it
        assert "too few to pay for the GPU's kernel launches" in reasons
    else:
        assert "vendor is 'generic', required 'nvidia'" in reasons
    assert decision.chosen == "numpy.genomics.sw_align_batch"


def test_host_data_goes_to_the_gpu_only_for_a_large_batch() -> None:
    small = on_gpu(encode("ACGT"), encode("ACGTACGT"), np.array([0, 8]), DNA_SCORING.matrix, 5, 2)
    assert isinstance(small, str) and "too few to pay for the GPU's kernel launches" in small
    query = np.zeros(1 << 13, dtype=np.uint8)
    targets = np.zeros(GPU_MIN_CELLS >> 13, dtype=np.uint8)
    large = on_gpu(query, targets, np.array([0, len(targets)]), DNA_SCORING.matrix, 5, 2)
    expected = (
        True if cuda_unavailable() is None else f"CUDA is not available: {cuda_unavailable()}"
    )
    assert large == expected


def test_bad_arguments_name_the_argument() -> None:
    with pytest.raises(ValueError, match="targets: code 9 is outside"):
        sw_batch_wavefront(encode("AC"), np.array([9], np.uint8), np.array([0, 1]),
                           DNA_SCORING.matrix, 5, 2)  # fmt: skip
    with pytest.raises(ValueError, match="offsets"):
        sw_batch_wavefront(encode("AC"), encode("AC"), np.array([0, 5]), DNA_SCORING.matrix, 5, 2)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_GPU)
def test_on_a_real_gpu_the_kernel_agrees_with_the_reference() -> None:
    rng = np.random.default_rng(5)
    query = rng.integers(0, 4, 300, dtype=np.uint8)
    targets = [rng.integers(0, 4, int(n), dtype=np.uint8) for n in rng.integers(0, 700, 64)]
    check(query, targets, DNA_SCORING.matrix, 5, 2, torch.device("cuda"))
    packed, offsets = pack(targets)
    # np.array: a copy (the scoring matrix is read-only, which torch.from_numpy warns about).
    arrays = (query, packed, offsets, DNA_SCORING.matrix)
    on_device = [torch.from_numpy(np.array(a)).cuda() for a in arrays]
    decision = prism_core.explain("genomics.sw_align_batch", *on_device, 5, 2)
    assert decision.chosen == "torch.cuda.genomics.sw_align_batch"
    got = prism_genomics.sw_align_batch(*on_device, 5, 2)
    assert got == reference(query, targets, DNA_SCORING.matrix, 5, 2)
