"""What a placed function costs per call: ``prism.function`` against calling the function.

Measured side by side, interleaved round by round (so that drifts of a shared machine hit all
alike), minimum over rounds of short repeats:

* **the cached call, nothing to move**: a small kernel on NumPy arrays, placed on numpy (its
  arguments' home): ``F(a, b)`` against ``kernel(a, b)`` under ``use_backend("numpy")`` (the
  same placement, the scope set once outside the timing).  The goal: at most 2 µs added.
* **an empty body**: the same with a function that returns its argument, so that the added
  cost is not hidden in the kernel's own time.
* **a moved call** (needs the torch plugin): the kernel placed on torch with NumPy arguments
  (moved by DLPack, zero copy, and the result brought back), against the kernel called on
  torch tensors directly: what a move costs, which is excluded from the 2 µs.

Usage::

    python benchmarks/bench_function.py [--rounds N] [--number N] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import prism_core as prism


def kernel(a: Any, b: Any) -> Any:
    a[1:-1] = 0.5 * (a[:-2] + a[2:])
    return a + b


def empty(a: Any) -> Any:
    return a


def measure(cases: dict[str, Callable[[], Any]], rounds: int, number: int) -> dict[str, float]:
    """Nanoseconds per call of each case: the minimum over ``rounds`` interleaved rounds."""
    best = dict.fromkeys(cases, float("inf"))
    for fn in cases.values():
        fn()  # the first call plans; not measured
    for _ in range(rounds):
        for name, fn in cases.items():
            t = min(timeit.repeat(fn, number=number, repeat=3)) / number * 1e9
            best[name] = min(best[name], t)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--output", help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args(argv)

    a, b = np.ones(16), np.ones(16)
    placed, placed_empty = prism.function(kernel), prism.function(empty)
    numpy_scope = prism.use_backend("numpy")

    def direct() -> Any:
        with numpy_scope:
            return kernel(a, b)

    def direct_empty() -> Any:
        with numpy_scope:
            return empty(a)

    with numpy_scope:
        scoped = measure(
            {"kernel": lambda: kernel(a, b), "empty": lambda: empty(a)}, args.rounds, args.number
        )
    outside = measure(
        {
            "F(a, b)": lambda: placed(a, b),
            "E(a)": lambda: placed_empty(a),
            "kernel in a use_backend block": direct,
            "empty in a use_backend block": direct_empty,
        },
        args.rounds,
        args.number,
    )
    result: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "number": args.number,
        "ns": {**{f"{k} (scope set outside)": v for k, v in scoped.items()}, **outside},
        "added_kernel_ns": outside["F(a, b)"] - scoped["kernel"],
        "added_empty_ns": outside["E(a)"] - scoped["empty"],
    }
    try:
        import torch

        prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("torch",)))
        ta, tb = torch.ones(16, dtype=torch.float64), torch.ones(16, dtype=torch.float64)
        on_torch = prism.function(kernel, backends=["torch"])
        result["moved_ns"] = measure(
            {
                "F(numpy args) on torch": lambda: on_torch(a, b),
                "kernel on torch tensors": lambda: kernel(ta, tb),
            },
            args.rounds,
            max(1, args.number // 10),
        )
    except ImportError:
        result["moved_ns"] = None

    lines = [
        "# Placed functions: what a call costs",
        "",
        f"`python benchmarks/bench_function.py --rounds {args.rounds} --number {args.number}`, "
        f"Python {result['python']}, {result['cpus']} CPUs; min over interleaved rounds.",
        "",
        "| case | per call |",
        "|---|---|",
        *(f"| {k} | {v:.0f} ns |" for k, v in result["ns"].items()),
        "",
        f"Added by a cached call, nothing moved: kernel {result['added_kernel_ns']:.0f} ns, "
        f"empty body {result['added_empty_ns']:.0f} ns (goal: at most 2000 ns).",
    ]
    if result["moved_ns"]:
        lines += [
            "",
            "| moved (16 float64, NumPy -> torch, zero copy, result brought back) | per call |",
            "|---|---|",
            *(f"| {k} | {v:.0f} ns |" for k, v in result["moved_ns"].items()),
            "",
            "A moved call takes the slow path (movers made per call, write-back checks, the",
            "result brought back): outside the 2 µs goal, and the next thing to prepare once",
            "per signature.",
        ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(f"{args.output}.json").write_text(json.dumps(result, indent=2) + "\n")
        Path(f"{args.output}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
