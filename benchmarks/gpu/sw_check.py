"""The torch plugin's Smith-Waterman batch kernel on a CUDA GPU: exactness against Prism's
reference and GCUPS.

1. **Exact**: DNA (match 2, mismatch -3, gap 5 + 2 per base) and protein (BLOSUM62, gap 11 + 1)
   batches of random targets, empty and one-letter ones among them, through
   ``sw_batch_wavefront(..., device=cuda)`` and through dispatch on CUDA tensors
   (``prism_genomics.sw_align_batch``, which must choose ``torch.cuda.genomics.sw_align_batch``),
   each compared with the NumPy reference: scores and both end positions, ties included.
2. **GCUPS**: one DNA query of 1,000 against 512, 2,048 then 8,192 targets of 1,000
   (``--sizes``; the largest batch whose single call takes under ``--seconds`` is kept), the
   minimum of repeated calls over about ``--seconds`` (3 at least, unless one takes longer).
   GCUPS = query length x target lengths summed / seconds / 1e9.

Without a GPU that torch can use it prints ``skipped: ...`` and exits 0.

Usage::

    python benchmarks/gpu/sw_check.py --output FILE.json [--sizes 512,2048,8192] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import prism_genomics
from prism_genomics import BLOSUM62, Scoring

import prism_core


def pack(targets: list[Any]) -> tuple[Any, Any]:
    offsets = np.concatenate([[0], np.cumsum([len(t) for t in targets])]).astype(np.int64)
    return np.concatenate(targets).astype(np.uint8), offsets


def batch(rng: Any, letters: int, query: int, count: int, longest: int) -> tuple[Any, ...]:
    q = rng.integers(0, letters, query, dtype=np.uint8)
    lengths = [0, 1, *rng.integers(1, longest, count - 2)]
    packed, offsets = pack([rng.integers(0, letters, int(n), dtype=np.uint8) for n in lengths])
    return q, packed, offsets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--seconds", type=float, default=2.0, help="timing per batch size")
    parser.add_argument("--sizes", default="512,2048,8192", help="targets per timed batch")
    args = parser.parse_args()

    try:
        from prism_plugin_torch.backend import cuda_unavailable
    except ImportError as exc:
        print(f"skipped: prism-plugin-torch is not installed ({exc})")
        return 0
    why = cuda_unavailable()
    if why is not None:
        print(f"skipped: no GPU that torch can use: {why}")
        return 0
    import torch
    from prism_plugin_torch.genomics import sw_batch_wavefront

    cuda = torch.device("cuda")
    rng = np.random.default_rng(7)
    dna = Scoring.match_mismatch()
    cases = {
        "dna": (batch(rng, 4, 300, 128, 1000), dna.matrix, 5, 2),
        "protein": (batch(rng, BLOSUM62.matrix.shape[0], 250, 96, 800), BLOSUM62.matrix, 11, 1),
    }
    checks: dict[str, Any] = {}
    pairs = 0
    for name, ((q, packed, offsets), matrix, gap_open, gap_extend) in cases.items():
        with prism_core.use_backend("numpy"):
            want = prism_genomics.sw_align_batch(q, packed, offsets, matrix, gap_open,
                                                      gap_extend)  # fmt: skip
        kernel = sw_batch_wavefront(q, packed, offsets, matrix, gap_open, gap_extend, device=cuda)
        on_gpu = [torch.from_numpy(np.array(a)).to(cuda)
                  for a in (q, packed, offsets, matrix)]  # fmt: skip
        decision = prism_core.explain("genomics.sw_align_batch", *on_gpu, gap_open, gap_extend)
        dispatched = prism_genomics.sw_align_batch(*on_gpu, gap_open, gap_extend)
        wanted = (want.scores, want.query_ends, want.target_ends)
        kernel_exact = all(np.array_equal(g, w) for g, w in zip(kernel, wanted, strict=True))
        checks[name] = {
            "pairs": len(offsets) - 1,
            "kernel_exact": kernel_exact,
            "dispatch_exact": dispatched == want,
            "dispatch_chose": decision.chosen,
            "max_score": int(want.scores.max()),
        }
        pairs += len(offsets) - 1
        print(name, checks[name], flush=True)
    exact = all(
        c["kernel_exact"] and c["dispatch_exact"]
        and c["dispatch_chose"] == "torch.cuda.genomics.sw_align_batch"
        for c in checks.values()
    )  # fmt: skip

    timings: list[dict[str, Any]] = []
    query = rng.integers(0, 4, 1000, dtype=np.uint8)
    for count in (int(n) for n in args.sizes.split(",")):
        packed, offsets = pack([rng.integers(0, 4, 1000, dtype=np.uint8) for _ in range(count)])
        cells = 1000 * int(offsets[-1])

        def call(packed: Any = packed, offsets: Any = offsets) -> Any:
            return sw_batch_wavefront(query, packed, offsets, dna.matrix, 5, 2, device=cuda)

        call()  # warm-up: kernels compiled, memory pooled
        torch.cuda.synchronize()
        best, spent, calls = float("inf"), 0.0, 0
        while spent < args.seconds or calls < 3:
            began = time.perf_counter()
            call()  # returns NumPy arrays: the copy back waits for the GPU
            took = time.perf_counter() - began
            best, spent, calls = min(best, took), spent + took, calls + 1
            if took > args.seconds:
                break
        timings.append({"targets": count, "cells": cells, "seconds": best, "calls": calls,
                        "gcups": cells / best / 1e9})  # fmt: skip
        print(f"{count} targets: {best * 1e3:.2f} ms, {cells / best / 1e9:.1f} GCUPS", flush=True)
        if best > args.seconds:
            break
    top = max(timings, key=lambda t: t["gcups"])
    found = {
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "exact": exact,
        "checked_pairs": pairs,
        "checks": checks,
        "timings": timings,
        "gcups": top["gcups"],
        "cells": top["cells"],
    }
    args.output.write_text(json.dumps(found, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
