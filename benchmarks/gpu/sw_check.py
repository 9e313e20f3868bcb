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

3. **The Numba GPU kernel** (prism-plugin-numba's ``cuda_batch``, one thread per target, 16-bit
   pass with a 32-bit recheck; DPX where the GPU has it): exact against the reference on the
   same batches and on a batch forcing the 16-bit overflow; GCUPS of one BLOSUM62 query of 400
   against 100,000 targets of about 300 (gaps 11/1; the issue's goal: 300), end to end (the
   copies, the sort, the launches) and of the kernels alone (the same call timed with CUDA
   events); exact against parasail's threaded batch there; and the crossover against that CPU
   variant on batches of 250 to 8,000 targets (``numba_gpu`` in the JSON).

Without a GPU that torch can use the torch part is skipped (``skipped: ...``); without one that
numba.cuda can use, the Numba part; with neither the script exits 0 having written nothing.

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

    numba_found = numba_gpu()
    try:
        from prism_plugin_torch.runtime import cuda_unavailable

        why = cuda_unavailable()
    except ImportError as exc:
        why = f"prism-plugin-torch is not installed ({exc})"
    if why is not None:
        print(f"skipped: no GPU that torch can use: {why}")
        if numba_found is not None:
            args.output.write_text(json.dumps({"numba_gpu": numba_found}, indent=1) + "\n")
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
        "numba_gpu": numba_found,
    }
    args.output.write_text(json.dumps(found, indent=1) + "\n")
    return 0


def timed(call: Any, least: int = 3, seconds: float = 1.0) -> float:
    """The fastest of at least ``least`` calls over about ``seconds``."""
    best, spent, calls = float("inf"), 0.0, 0
    while calls < least or spent < seconds:
        began = time.perf_counter()
        call()
        took = time.perf_counter() - began
        best, spent, calls = min(best, took), spent + took, calls + 1
    return best


def numba_gpu() -> dict[str, Any] | None:
    """Part 3 of the module's docstring; ``None`` (saying why) without a GPU numba.cuda uses."""
    try:
        from prism_plugin_numba.backend import cuda_unavailable
    except ImportError as exc:
        print(f"skipped: prism-plugin-numba is not installed ({exc})")
        return None
    why = cuda_unavailable()
    if why is not None:
        print(f"skipped: no GPU that numba.cuda can use: {why}")
        return None
    from prism_plugin_numba import cuda_batch

    cuda = cuda_batch.cuda

    name = cuda.get_current_device().name
    dpx = cuda.get_current_device().compute_capability >= (9, 0)
    rng = np.random.default_rng(11)
    dna = Scoring.match_mismatch()
    big = np.array([[3000, -2000], [-2000, 3000]], np.int32)
    cases = {
        "dna": (batch(rng, 4, 300, 128, 1000), dna.matrix, 5, 2),
        "protein": (batch(rng, 24, 250, 96, 800), BLOSUM62.matrix, 11, 1),
        "equal-gaps": (batch(rng, 24, 120, 64, 300), BLOSUM62.matrix, 4, 4),
        "int16-overflow": (batch(rng, 1, 40, 16, 60), big, 10, 1),
    }
    found: dict[str, Any] = {"device": str(name, "ascii") if isinstance(name, bytes) else name,
                             "dpx": dpx, "checks": {}}  # fmt: skip
    exact = True
    for label, ((q, packed, offsets), matrix, go, ge) in cases.items():
        with prism_core.use_backend("numpy"):
            want = prism_genomics.sw_align_batch(q, packed, offsets, matrix, go, ge)
        for kind in ("plain", "dpx") if dpx else ("plain",):
            got = cuda_batch.align_batch(q, packed, offsets, matrix, go, ge, dpx=kind == "dpx")
            wanted = (want.scores, want.query_ends, want.target_ends)
            same = all(np.array_equal(g, w) for g, w in zip(got, wanted, strict=True))
            found["checks"][f"{label}/{kind}"] = same
            exact = exact and same
    # The goal: one query of 400 against 100,000 targets of about 300 (200 to 400), BLOSUM62.
    query = rng.integers(0, 24, 400, dtype=np.uint8)
    lengths = rng.integers(200, 401, 100_000)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    packed = rng.integers(0, 24, int(offsets[-1]), dtype=np.uint8)
    cells = 400 * int(offsets[-1])
    args = (query, packed, offsets, BLOSUM62.matrix, 11, 1)
    got = cuda_batch.align_batch(*args, dpx=dpx)  # compiles
    seconds = timed(lambda: cuda_batch.align_batch(*args, dpx=dpx))
    found["goal"] = {"targets": 100_000, "cells": cells, "seconds": seconds,
                     "gcups": cells / seconds / 1e9}  # fmt: skip
    print(f"numba GPU: 100,000 targets, {seconds * 1e3:.1f} ms, {cells / seconds / 1e9:.0f} GCUPS")

    def cpu(*call: Any) -> Any:  # parasail's best variant here (threaded for large batches)
        with prism_core.use_backend("parasail"):
            return prism_genomics.sw_align_batch(*call)

    try:
        cpu(*args[:1], packed[:10], offsets[:2], *args[3:])
    except prism_core.PrismError as exc:
        found["cpu"] = f"not measured: {exc}"
        cpu = None  # type: ignore[assignment]
    if cpu is not None:
        began = time.perf_counter()
        theirs = cpu(*args)
        cpu_seconds = time.perf_counter() - began
        same = bool(np.array_equal(theirs.scores, got[0]) and
                    np.array_equal(theirs.target_ends, got[2]))  # fmt: skip
        found["goal"].update(cpu_seconds=cpu_seconds, cpu_gcups=cells / cpu_seconds / 1e9,
                             exact_against_cpu=same)  # fmt: skip
        exact = exact and same
        crossover = []
        for count in (250, 1000, 2000, 4000, 8000):
            sub = (query, packed[: int(offsets[count])], offsets[: count + 1],
                   BLOSUM62.matrix, 11, 1)  # fmt: skip
            gpu_s = timed(lambda sub=sub: cuda_batch.align_batch(*sub, dpx=dpx), 3, 0.2)
            cpu_s = timed(lambda sub=sub: cpu(*sub), 2, 0.2)
            crossover.append({"targets": count, "cells": 400 * int(offsets[count]),
                              "gpu_seconds": gpu_s, "cpu_seconds": cpu_s})  # fmt: skip
            print(f"  {count} targets: GPU {gpu_s * 1e3:.2f} ms, CPU {cpu_s * 1e3:.2f} ms")
        found["crossover"] = crossover
        wins = [c["cells"] for c in crossover if c["gpu_seconds"] < c["cpu_seconds"]]
        found["crossover_cells"] = min(wins) if wins else None
    found["exact"] = exact
    return found


if __name__ == "__main__":
    sys.exit(main())
