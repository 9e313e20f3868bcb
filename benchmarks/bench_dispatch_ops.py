"""What a cached Prism call adds to the library call, op by op: the new ops of the Array API
(the elementwise functions, and one op of each family declared as a table) beside
matmul, a reduction and the creation op ``zeros`` from before.

For each op, in one process, alternating: ``prism_core.<op>(...)`` (the decision cached) and
the NumPy function it runs, on 4-element float64 arrays (4x4 for matmul), ``--number`` calls
per sample; the kept figure is the minimum over ``--rounds`` samples of Prism's time per call
minus the minimum of NumPy's, since noise only ever adds time.  The goal is that every new
op costs what the old ones do: compare the rows, not the absolute numbers (the machine is
shared).

Usage::

    python benchmarks/bench_dispatch_ops.py [--rounds 15] [--number 20000] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def cases() -> dict[str, tuple[Callable[..., Any], Callable[..., Any], tuple[Any, ...]]]:
    import prism_core as prism

    v = np.linspace(0.1, 0.9, 4)
    m = np.arange(16.0).reshape(4, 4)
    return {
        "matmul (4x4, an op of the first catalogue)": (prism.matmul, np.matmul, (m, m)),
        "sum (a reduction)": (prism.sum, np.sum, (v,)),
        "sqrt (elementwise, of the first catalogue)": (prism.sqrt, np.sqrt, (v,)),
        "sin (elementwise, new)": (prism.sin, np.sin, (v,)),
        "atan2 (elementwise, new)": (prism.atan2, np.arctan2, (v, v)),
        "isnan (elementwise, new)": (prism.isnan, np.isnan, (v,)),
        # The families declared as tables, against NumPy's own
        # function (what the NumPy reference calls, or the closest NumPy has).
        "zeros (creation, of the first catalogue)": (prism.zeros, np.zeros, (4,)),
        "arange (creation, new)": (prism.arange, np.arange, (4,)),
        "flip (manipulation, new)": (prism.flip, np.flip, (v,)),
        "argsort (sorting, new)": (prism.argsort, np.argsort, (v,)),
        "prod (statistics, new)": (prism.prod, np.prod, (v,)),
        "linalg.det (linalg, new)": (prism.linalg.det, np.linalg.det, (m + 10 * np.eye(4),)),
        "fft.fftshift (fft, new)": (prism.fft.fftshift, np.fft.fftshift, (v,)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--number", type=int, default=20_000)
    parser.add_argument("--output", default=None, help="writes PREFIX.json and PREFIX.md")
    args = parser.parse_args()

    found = cases()
    for prism_fn, _np_fn, call in found.values():
        prism_fn(*call)  # build and cache each decision
    prism_ns: dict[str, list[float]] = {name: [] for name in found}
    numpy_ns: dict[str, list[float]] = {name: [] for name in found}
    for _ in range(args.rounds):
        for name, (prism_fn, np_fn, call) in found.items():
            p = timeit.timeit(functools.partial(prism_fn, *call), number=args.number)
            n = timeit.timeit(functools.partial(np_fn, *call), number=args.number)
            prism_ns[name].append(p / args.number * 1e9)
            numpy_ns[name].append(n / args.number * 1e9)
    # Noise only ever adds time: each side's minimum over the rounds is its undisturbed cost,
    # and their difference what Prism adds.  (The minimum of per-round differences, what this
    # script kept before, is biased low by a round whose NumPy sample was disturbed.)
    best = {name: min(prism_ns[name]) - min(numpy_ns[name]) for name in found}
    added = {
        name: [p - n for p, n in zip(prism_ns[name], numpy_ns[name], strict=True)]
        for name in found
    }
    meta = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "number": args.number,
        "load_after": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }
    lines = [
        f"# A cached Prism call, op by op ({meta['date']})",
        "",
        f"`python benchmarks/bench_dispatch_ops.py --rounds {args.rounds} --number "
        f"{args.number}`, Python {meta['python']}, NumPy {meta['numpy']}, {meta['cpus']} CPUs, "
        f"load average {meta['load_after']:.2f} at the end.",
        "",
        "| op | NumPy's function | Prism | added per call |",
        "|---|---|---|---|",
        *(
            f"| {name} | {min(numpy_ns[name]):.0f} ns | {min(prism_ns[name]):.0f} ns | "
            f"{ns:.0f} ns |"
            for name, ns in best.items()
        ),
        "",
        "Each column the minimum over the rounds; added = Prism - NumPy's function.",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.output:
        Path(args.output + ".json").write_text(
            json.dumps({"meta": meta, "added_ns": best, "raw_ns": added}, indent=2) + "\n"
        )
        Path(args.output + ".md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
