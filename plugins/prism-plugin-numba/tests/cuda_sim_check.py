"""Run by test_numba_cuda.py in a subprocess with ``NUMBA_ENABLE_CUDASIM=1`` (the simulator is
chosen when ``numba.cuda`` is first imported): the GPU kernel of ``prism_plugin_numba.cuda_batch``
in Numba's CUDA simulator against Prism's NumPy reference, every score and end position.  Prints
one line per case and ``all exact``; exits 1 at the first difference, showing it."""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import prism_genomics
from prism_genomics import BLOSUM62, Scoring

import prism_core


def pack(targets: list[Any]) -> tuple[Any, Any]:
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    packed = np.concatenate(targets).astype(np.uint8) if targets else np.zeros(0, np.uint8)
    return packed, offsets


def reference(*args: Any) -> tuple[Any, ...]:
    with prism_core.use_backend("numpy"):
        r = prism_genomics.sw_align_batch(*args)
    return r.scores, r.query_ends, r.target_ends


def check(name: str, *args: Any, **options: Any) -> None:
    from prism_plugin_numba import cuda_batch

    got = cuda_batch.align_batch(*args, block=8, **options)
    want = reference(*args)
    if not all(np.array_equal(g, w) for g, w in zip(got, want, strict=True)):
        print(f"{name}: differs from the reference\n got {got}\nwant {want}")
        sys.exit(1)
    print(f"{name}: exact ({len(want[0])} targets, best {int(want[0].max(initial=0))})")


def main() -> None:
    from prism_plugin_numba import cuda_batch

    assert cuda_batch.simulated(), "run with NUMBA_ENABLE_CUDASIM=1"
    rng = np.random.default_rng(2026)
    dna = Scoring.match_mismatch().matrix
    cases = [(dna, 4, (5, 2)), (BLOSUM62.matrix, 24, (11, 1)), (dna, 4, (3, 3)),
             (BLOSUM62.matrix, 24, (0, 0)), (dna, 2, (2, 1))]  # fmt: skip
    for i, (matrix, letters, (go, ge)) in enumerate(cases):
        n = int(rng.integers(1, 40))
        query = rng.integers(0, letters, n, dtype=np.uint8)
        lengths = [0, 1, 0, *rng.integers(0, 30, 13)]
        packed, offsets = pack([rng.integers(0, letters, int(m), dtype=np.uint8) for m in lengths])
        for dpx in (False, True):
            check(f"random {i} gaps {go}/{ge} dpx={dpx}", query, packed, offsets, matrix, go, ge,
                  dpx=dpx)  # fmt: skip
    # Ties: repeats of one motif score the same at many ends; the smallest target end wins,
    # then the smallest query end.
    motif = np.array([0, 1, 2, 3], np.uint8)
    query = np.tile(motif, 5)
    tied = [np.tile(motif, 3), motif, np.tile(motif[::-1], 4), np.zeros(9, np.uint8)]
    packed, offsets = pack(tied)
    check("ties", query, packed, offsets, dna, 5, 2)
    # A query longer than one shared chunk of a 256-letter alphabet (chunks of 40 positions).
    wide = rng.integers(-4, 5, (256, 256)).astype(np.int32)
    query = rng.integers(0, 256, 100, dtype=np.uint8)
    packed, offsets = pack([rng.integers(0, 256, 20, dtype=np.uint8) for _ in range(5)])
    check("256 letters, 3 chunks", query, packed, offsets, wide, 4, 1)
    # Scores beyond int16: the 16-bit pass overflows, the 32-bit pass redoes those targets.
    big = np.array([[3000, -2000], [-2000, 3000]], np.int32)
    query = np.zeros(15, np.uint8)
    packed, offsets = pack([np.zeros(15, np.uint8), np.array([0, 1, 0], np.uint8),
                            np.zeros(12, np.uint8), np.ones(4, np.uint8)])  # fmt: skip
    assert int(reference(query, packed, offsets, big, 10, 1)[0].max()) > cuda_batch.INT16_LIMIT
    check("16-bit overflow rechecked", query, packed, offsets, big, 10, 1)
    check("32-bit only", query, packed, offsets, big, 10, 1, narrow=False)
    print("all exact")


if __name__ == "__main__":
    main()
