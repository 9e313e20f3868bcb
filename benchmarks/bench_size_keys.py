"""What size-aware plans cost on the cached path, against the code before them.

Dispatch adds a size bucket to the plan key of the ops whose tuned choice depends on the size,
and asks that the other ops keep today's cost (within 0.1 µs).  This compares, in fresh
processes run alternately (so that drifts of a shared machine hit all alike):

* **before**: the tree at ``--before`` (a git revision, checked out into a temporary worktree
  and put first on ``sys.path``): ``prism_core.matmul(a, b)`` on 4x4 float64, cached plan;
* **after, no bucket**: the same call on the working tree (matmul's choice does not depend
  on the size: its key is as before, plus the keying test);
* **after, with bucket**: the same call with every op keyed by size bucket (what tuning on
  first use does, and what an op with size-dependent tuned choices gets).

Each child reports min over rounds of (prism call - ``np.matmul`` call) per call, in ns; the
script prints the minimum over children of each configuration, and the differences.

Usage::

    python benchmarks/bench_size_keys.py [--before REV] [--children N] [--output PREFIX]

``--output PREFIX`` writes PREFIX.json and PREFIX.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, sys, timeit
tree = os.environ.get("PRISM_BENCH_TREE")
if tree:  # the tree before the change, ahead of the editable install of the working tree
    sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in type(f).__module__]
    sys.path.insert(0, tree)
import numpy as np
import prism_core
mode = sys.argv[1]
if mode == "bucket":
    from prism_core.kernel.dispatch import registry
    registry.every_size[0] = True
    registry.bump()
a = np.ones((4, 4)); b = np.ones((4, 4))
matmul = prism_core.matmul
matmul(a, b)
if mode == "bucket":
    assert matmul.op._keying[0] == 2, matmul.op._keying
npmatmul = np.matmul
d, n = [], []
for _ in range(int(sys.argv[2])):
    d.append(min(timeit.repeat(lambda: matmul(a, b), number=20000, repeat=1)) / 20000 * 1e9)
    n.append(min(timeit.repeat(lambda: npmatmul(a, b), number=20000, repeat=1)) / 20000 * 1e9)
print(json.dumps({"prism_ns": min(d), "numpy_ns": min(n), "added_ns": min(d) - min(n),
                  "file": prism_core.__file__}))
"""


def child(python: str, mode: str, rounds: int, path: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("PRISM_BENCH_TREE", None)
    if path is not None:
        env["PRISM_BENCH_TREE"] = path
    out = subprocess.run(
        [python, "-c", CHILD, mode, str(rounds)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="b31542c", help="git revision before the change")
    parser.add_argument("--children", type=int, default=6, help="processes per configuration")
    parser.add_argument("--rounds", type=int, default=15, help="rounds per process")
    parser.add_argument("--output")
    args = parser.parse_args()

    python = sys.executable
    results: dict[str, list[dict[str, Any]]] = {"before": [], "after": [], "bucket": []}
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), args.before],
            check=True,
            capture_output=True,
        )
        try:
            for _ in range(args.children):
                results["before"].append(child(python, "plain", args.rounds, str(worktree)))
                results["after"].append(child(python, "plain", args.rounds, None))
                results["bucket"].append(child(python, "bucket", args.rounds, None))
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)],
                check=False,
                capture_output=True,
            )
    assert str(worktree) in results["before"][0]["file"], results["before"][0]["file"]
    best = {k: min(r["added_ns"] for r in v) for k, v in results.items()}
    summary = {
        "python": platform.python_version(),
        "before": args.before,
        "added_ns": best,
        "after_minus_before_ns": best["after"] - best["before"],
        "bucket_minus_before_ns": best["bucket"] - best["before"],
        "children": args.children,
        "rounds": args.rounds,
        "raw": results,
    }
    lines = [
        f"# Size-aware plan keys: dispatch's added cost (min over {args.children} processes)",
        "",
        f"`python benchmarks/bench_size_keys.py --children {args.children} --rounds "
        f"{args.rounds}`, Python {platform.python_version()}, {os.cpu_count()} CPUs.",
        "",
        "| configuration | added per call (prism.matmul 4x4 - np.matmul) |",
        "|---|---|",
        f"| before ({args.before}) | {best['before']:.0f} ns |",
        f"| after, no size bucket | {best['after']:.0f} ns |",
        f"| after, size bucket in the key | {best['bucket']:.0f} ns |",
        "",
        f"after - before: {summary['after_minus_before_ns']:+.0f} ns; "
        f"with the bucket - before: {summary['bucket_minus_before_ns']:+.0f} ns",
    ]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.output:
        Path(args.output + ".json").write_text(json.dumps(summary, indent=2) + "\n")
        Path(args.output + ".md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
