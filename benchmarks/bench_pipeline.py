"""What pipelines and stages cost: per call, per stage, per run, per plan.

Measured side by side, interleaved round by round (so that drifts of a shared machine hit all
alike), minimum over rounds:

* **cached call, outside vs inside a stage**: ``prism.matmul`` on 4x4 float64 minus
  ``np.matmul``, outside any stage and inside an open stage (its move, fallback and split
  recordings active).  A stage adds nothing per call: the difference is noise.
* **cached call, before vs after**: the same outside a stage, in fresh processes on the tree
  at ``--before`` (a git revision checked out in a temporary worktree) and on the working tree:
  the hooks added to dispatch are off the cached path.
* **a moved argument, recording or not**: ``prism.add`` on 4x4 NumPy arrays under
  ``use_backend("torch")`` (two arguments move, zero copy) with and without
  ``movement.recording()``: what recording a move costs (needs the torch plugin).
* **a stage's own cost**: an empty ``with prism.stage(...)`` block (automatic; a preferred
  backend) against an empty ``with prism.use_backend("numpy")`` block; **a run's**: a pipeline
  of four empty stages, ``fn(...)`` against calling the plain function, and ``fn.run(...)``.
* **planning**: ``prism.explain`` of a three-stage pipeline (4 calls) on ``ArraySpec``.

Usage::

    python benchmarks/bench_pipeline.py [--rounds N] [--before REV] [--children N] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import timeit
from collections.abc import Callable
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
a = np.ones((4, 4)); b = np.ones((4, 4))
matmul = prism_core.matmul
matmul(a, b)
npmatmul = np.matmul
d, n = [], []
for _ in range(int(sys.argv[1])):
    d.append(min(timeit.repeat(lambda: matmul(a, b), number=20000, repeat=1)) / 20000 * 1e9)
    n.append(min(timeit.repeat(lambda: npmatmul(a, b), number=20000, repeat=1)) / 20000 * 1e9)
print(json.dumps({"added_ns": min(d) - min(n), "file": prism_core.__file__}))
"""


def _child(rounds: int, tree: str | None) -> dict[str, Any]:
    env = dict(os.environ)
    env.pop("PRISM_BENCH_TREE", None)
    if tree is not None:
        env["PRISM_BENCH_TREE"] = tree
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(rounds)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def before_after(rev: str, children: int, rounds: int) -> dict[str, Any]:
    results: dict[str, list[float]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), rev],
            check=True,
            capture_output=True,
        )
        try:
            for _ in range(children):
                old = _child(rounds, str(worktree))
                assert str(worktree) in old["file"], old["file"]
                results["before"].append(old["added_ns"])
                results["after"].append(_child(rounds, None)["added_ns"])
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)],
                check=False,
                capture_output=True,
            )
    return {k: min(v) for k, v in results.items()} | {"raw": results}


def interleaved(
    cases: dict[str, Callable[[], Any]],
    rounds: int,
    number: int,
    around: dict[str, Callable[[], Any]] | None = None,
) -> dict[str, float]:
    """Seconds per call of each case: min over ``rounds`` rounds, the cases taking turns.
    ``around[name]`` is a context manager factory a case's timing loop runs in."""
    best = {k: float("inf") for k in cases}
    for _ in range(rounds):
        for name, fn in cases.items():
            factory = (around or {}).get(name)
            if factory is None:
                t = timeit.timeit(fn, number=number) / number
            else:
                with factory():
                    t = timeit.timeit(fn, number=number) / number
            best[name] = min(best[name], t)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--before", default=None, help="git revision before the change")
    parser.add_argument("--children", type=int, default=4, help="processes per tree (--before)")
    parser.add_argument("--output")
    args = parser.parse_args()

    import numpy as np

    import prism_core as prism
    from prism_core.kernel.dispatch import movement

    a = np.ones((4, 4))
    matmul, npmatmul = prism.matmul, np.matmul
    matmul(a, a)
    results: dict[str, Any] = {"python": platform.python_version(), "cpus": os.cpu_count()}

    # 1. the cached call, outside and inside a stage
    stage = prism.stage("bench", preferred_backend="numpy")
    with stage:
        matmul(a, a)  # the plan of the stage's scope
    times = interleaved(
        {
            "np.matmul": lambda: npmatmul(a, a),
            "outside": lambda: matmul(a, a),
            "inside a stage": lambda: matmul(a, a),
        },
        args.rounds,
        20000,
        around={"inside a stage": lambda: prism.stage("bench", preferred_backend="numpy")},
    )
    results["cached_call_ns"] = {k: v * 1e9 for k, v in times.items()}
    results["added_outside_ns"] = (times["outside"] - times["np.matmul"]) * 1e9
    results["added_inside_ns"] = (times["inside a stage"] - times["np.matmul"]) * 1e9

    # 2. recording a moved argument (numpy -> torch, zero copy)
    torch_ok = "torch" in prism.extending.plugins().backends and bool(
        prism.extending.plugins().backends["torch"].availability()
    )
    if torch_ok:
        add = prism.add
        with prism.use_backend("torch"):
            add(a, a)

        def moving() -> Any:
            with prism.use_backend("torch"):
                return add(a, a)

        def moving_recorded() -> Any:
            with prism.use_backend("torch"), movement.recording():
                return add(a, a)

        def recording_only() -> Any:
            with prism.use_backend("torch"), movement.recording():
                return None

        times = interleaved(
            {"moved": moving, "moved, recorded": moving_recorded, "empty": recording_only},
            args.rounds,
            2000,
        )
        results["move_ns"] = {k: v * 1e9 for k, v in times.items()}
        results["recording_per_move_ns"] = (
            ((times["moved, recorded"] - times["empty"]) - times["moved"]) * 1e9 / 2
        )  # two arguments moved per call; "empty" is the recording block itself
    else:
        results["move_ns"] = None

    # 3. a stage's own cost, and a run's
    def in_scope() -> None:
        with prism.use_backend("numpy"):
            pass

    def in_stage() -> None:
        with prism.stage("s"):
            pass

    def in_preferred_stage() -> None:
        with prism.stage("s", preferred_backend="numpy"):
            pass

    def plain(x: Any) -> Any:
        for name in ("one", "two", "three", "four"):
            with prism.use_backend("numpy"):
                del name
        return x

    @prism.pipeline
    def four(x: Any) -> Any:
        with prism.stage("one"):
            pass
        with prism.stage("two"):
            pass
        with prism.stage("three"):
            pass
        with prism.stage("four"):
            pass
        return x

    times = interleaved(
        {
            "use_backend block": in_scope,
            "stage block (automatic)": in_stage,
            "stage block (preferred_backend)": in_preferred_stage,
            "plain function, 4 scope blocks": lambda: plain(1),
            "pipeline fn(...), 4 stages": lambda: four(1),
            "pipeline fn.run(...), 4 stages": lambda: four.run(1),
        },
        args.rounds,
        500,
    )
    results["blocks_us"] = {k: v * 1e6 for k, v in times.items()}

    # 4. planning
    @prism.pipeline
    def analysis(samples: Any) -> Any:
        with prism.stage("features", preferred_backend="numpy"):
            gram = prism.matmul(samples, prism.transpose(samples))
        with prism.stage("scale"):
            g = prism.add(gram, gram)
        with prism.stage("summary", preferred_backend="numpy"):
            return prism.sum(g)

    spec = prism.ArraySpec((512, 256))
    analysis.explain(spec)
    times = interleaved({"explain, 3 stages, 4 calls": lambda: analysis.explain(spec)}, 5, 20)
    results["explain_ms"] = {k: v * 1e3 for k, v in times.items()}

    if args.before:
        results["before_after_added_ns"] = before_after(args.before, args.children, 10)
        results["before"] = args.before

    lines = [
        "# Pipelines and stages: what they cost",
        "",
        f"`python benchmarks/bench_pipeline.py --rounds {args.rounds}"
        + (f" --before {args.before} --children {args.children}" if args.before else "")
        + f"`, Python {platform.python_version()}, {os.cpu_count()} CPUs, load average "
        f"{os.getloadavg()[0]:.1f} at the end (a shared machine); min over rounds, cases "
        "interleaved.",
        "",
        "## The cached call (prism.matmul 4x4 float64, added over np.matmul)",
        "",
        "| where | added per call |",
        "|---|---|",
        f"| outside any stage | {results['added_outside_ns']:.0f} ns |",
        f"| inside a stage (recordings active) | {results['added_inside_ns']:.0f} ns |",
    ]
    if args.before:
        ba = results["before_after_added_ns"]
        lines += [
            f"| outside, tree before ({args.before}), fresh processes | {ba['before']:.0f} ns |",
            f"| outside, this tree, fresh processes | {ba['after']:.0f} ns |",
        ]
    if results["move_ns"] is not None:
        m = results["move_ns"]
        lines += [
            "",
            "## Recording moves (prism.add 4x4 under use_backend('torch'): two arguments move)",
            "",
            "| case | per call |",
            "|---|---|",
            f"| moved, not recorded | {m['moved']:.0f} ns |",
            f"| moved, recorded | {m['moved, recorded']:.0f} ns |",
            f"| the recording block alone (no call) | {m['empty']:.0f} ns |",
            "",
            f"Recording one moved argument: about {results['recording_per_move_ns']:.0f} ns "
            "(the record, the size, the two data addresses).",
        ]
    lines += ["", "## Blocks and runs", "", "| case | per call |", "|---|---|"]
    lines += [f"| {k} | {v:.1f} µs |" for k, v in results["blocks_us"].items()]
    lines += ["", "## Planning", "", "| case | per plan |", "|---|---|"]
    lines += [f"| {k} | {v:.2f} ms |" for k, v in results["explain_ms"].items()]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.output:
        Path(args.output + ".json").write_text(json.dumps(results, indent=2) + "\n")
        Path(args.output + ".md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
