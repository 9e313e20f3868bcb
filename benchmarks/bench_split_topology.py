"""What the topology-aware split costs: the split's own time on a small op, this tree against a
baseline tree (``--baseline DIR``: another prism_core checkout, e.g. ``git archive HEAD``).

The split now finds where the call's arrays are and, for ``ratio="auto"`` and for every call
whose record is kept, the path of each part's data over the descriptions' links
(``prism_core/kernel/description/topology.py``) and the bytes each part moves.  A split whose record
is not kept and whose ratio is not ``"auto"`` does none of it.  Cases, all on ``exp`` of a
64x64 float64 array (the work is negligible, so the times are the split's own):

* ``pin``: one target (``numpy``), no record;
* ``given, recorded``: ``numpy`` and a simulated ``nvidia.h100-sxm``, ratio ``[1, 1]``,
  ``return_record=True``;
* ``auto, recorded``: the same with ``ratio="auto"`` (the model's prediction for each target).

Each case runs in fresh processes, alternating the two trees round by round (the machine is
shared: a drift hits both alike); within a process, the minimum of many repeats.

Usage::

    git archive HEAD | tar -x -C /tmp/prism-head
    python benchmarks/bench_split_topology.py --baseline /tmp/prism-head \\
        [--rounds 5] [--output benchmarks/results/split-topology-DATE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CASE = """
import os, timeit, numpy as np, prism_core as prism
assert prism.__file__.startswith(os.environ["BENCH_TREE"]), prism.__file__  # the tree asked for
x = np.ones((64, 64))
split = prism.pipelines.split
cases = {
    "pin": lambda: split("exp", x, targets=["numpy"]),
    "given, recorded": lambda: split(
        "exp", x, targets=["numpy", "nvidia.h100-sxm"], ratio=[1, 1], simulate=True,
        return_record=True),
    "auto, recorded": lambda: split(
        "exp", x, targets=["numpy", "nvidia.h100-sxm"], ratio="auto", simulate=True,
        return_record=True),
}
for name, call in cases.items():
    call()
    best = min(timeit.repeat(call, number=50, repeat=15)) / 50 * 1e6
    print(name, "=", best)
"""


def run(tree: Path) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree), BENCH_TREE=str(tree))
    env.pop("PRISM_HARDWARE_PATH", None)
    # From the tree itself: ``-c`` puts the working directory first on sys.path.
    done = subprocess.run(
        [sys.executable, "-c", CASE],
        env=env,
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    out: dict[str, float] = {}
    for line in done.stdout.splitlines():
        name, _, value = line.rpartition(" = ")
        out[name] = float(value)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="another prism_core tree")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--output", type=Path, default=None, help="path without suffix")
    args = parser.parse_args()
    trees = {"baseline": args.baseline.resolve(), "this tree": HERE}
    best: dict[str, dict[str, float]] = {name: {} for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            for case, us in run(tree).items():
                best[name][case] = min(us, best[name].get(case, us))
    rows = [
        "| case | baseline (µs) | this tree (µs) | ratio |",
        "|---|---|---|---|",
    ]
    for case in best["this tree"]:
        base, now = best["baseline"][case], best["this tree"][case]
        rows.append(f"| {case} | {base:.1f} | {now:.1f} | {now / base:.2f}x |")
    table = "\n".join(rows)
    print(table)
    if args.output is not None:
        meta = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "rounds": args.rounds,
            "baseline": str(trees["baseline"]),
            "microseconds": best,
        }
        args.output.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")
        args.output.with_suffix(".md").write_text(
            "# The split's own cost with the topology (exp of 64x64 float64)\n\n"
            f"`python benchmarks/bench_split_topology.py --baseline {trees['baseline']} "
            f"--rounds {args.rounds}`: fresh processes, the two trees alternating round by "
            "round, the minimum of 15 x 50 calls in each process and of the rounds.\n\n"
            f"{table}\n"
        )


if __name__ == "__main__":
    main()
