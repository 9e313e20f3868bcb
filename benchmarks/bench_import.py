"""What importing Prism costs, and that it imports nothing heavy (``import prism_core``
under 50 ms with the whole Array API declared).

Each sample is a fresh interpreter that times, inside itself, one of:

* ``import prism_core``;
* ``import prism_core.array_api`` (the standard's namespace: the op tables, no ops made yet);
* ``dir(prism_core.array_api)`` after that (the names, still no op made);

and reports which heavy modules (NumPy, torch, PyYAML, jsonschema, ...) were imported by then.
Rounds interleave the cases, and with ``--baseline DIR`` the same cases again with another
``prism_core`` tree first on ``PYTHONPATH`` (a ``git worktree`` of an older commit), so that the
two are compared within one run, round by round, on a machine whose load changes.

Usage::

    python benchmarks/bench_import.py [--repeat 41] [--baseline DIR [--baseline-label TEXT]]
        [--output benchmarks/results/import-DATE]

Prints a Markdown report (the median and minimum of each case; the median of the per-round
ratios to the baseline); ``--output NAME`` writes ``NAME.md`` and ``NAME.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
HEAVY = ("numpy", "torch", "cupy", "scipy", "yaml", "jsonschema", "referencing", "archspec")
CASES: dict[str, str] = {
    "import prism_core": "import prism_core",
    "import prism_core.array_api": "import prism_core.array_api",
    "dir(prism_core.array_api)": "import prism_core.array_api as xp; dir(xp)",
}


def _sample(statement: str, env: dict[str, str]) -> tuple[float, list[str]]:
    code = (
        "import sys, time, json\n"
        "t = time.perf_counter()\n"
        f"{statement}\n"
        "dt = time.perf_counter() - t\n"
        f"print(json.dumps([dt, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True
    ).stdout
    dt, heavy = json.loads(out)
    return float(dt), list(heavy)


def _env(tree: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    return env


def _compile(tree: Path) -> None:
    """Byte-compile a tree first, so that no sample pays for writing ``.pyc`` files."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "prism_core")], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=41, help="rounds (each runs every case)")
    parser.add_argument("--baseline", type=Path, help="another prism_core tree to compare with")
    parser.add_argument("--baseline-label", default="", help="what the baseline tree is")
    parser.add_argument("--output", type=Path, help="write NAME.md and NAME.json")
    args = parser.parse_args()

    trees: list[tuple[str, Path | None]] = [("", None)]
    _compile(REPO)
    if args.baseline is not None:
        _compile(args.baseline)
        trees.append(("baseline: ", args.baseline.resolve()))
    load_before = os.getloadavg()[0]
    samples: dict[str, list[float]] = {}
    heavy: dict[str, list[str]] = {}
    for _ in range(args.repeat):
        for label, tree in trees:
            env = _env(tree)
            for name, statement in CASES.items():
                if tree is not None and name != "import prism_core":
                    # The baseline may have no array_api package: only the import is compared.
                    continue
                dt, found = _sample(statement, env)
                samples.setdefault(label + name, []).append(dt)
                heavy[label + name] = found
    load_after = os.getloadavg()[0]
    python_pass = [
        _timed_pass() for _ in range(min(args.repeat, 21))
    ]  # the interpreter's own start-up, for scale

    rows = {
        name: {
            "median_ms": round(statistics.median(v) * 1000, 2),
            "min_ms": round(min(v) * 1000, 2),
            "heavy_modules": heavy[name],
        }
        for name, v in samples.items()
    }
    ratios = {}
    if args.baseline is not None:
        ours, theirs = samples["import prism_core"], samples["baseline: import prism_core"]
        per_round = [a / b for a, b in zip(ours, theirs, strict=True)]
        ratios["import prism_core"] = {
            "median": round(statistics.median(per_round), 3),
            "lowest": round(min(per_round), 3),
            "highest": round(max(per_round), 3),
        }
    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "rounds": args.repeat,
        "load_before": round(load_before, 2),
        "load_after": round(load_after, 2),
        "baseline": (args.baseline_label or str(args.baseline)) if args.baseline else None,
        "cases": rows,
        "ratios_to_baseline": ratios,
        "python_-c_pass_wall_ms": round(statistics.median(python_pass) * 1000, 2),
    }
    report = _markdown(result)
    print(report)
    if args.output is not None:
        args.output.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
        args.output.with_suffix(".md").write_text(report + "\n")


def _timed_pass() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


def _markdown(result: dict[str, Any]) -> str:
    lines = [
        f"# Importing Prism ({result['date']}, Python {result['python']}, {result['cpus']} CPUs, "
        f"{result['rounds']} rounds, load average {result['load_before']} before, "
        f"{result['load_after']} after)",
        "",
        "Timed inside a fresh interpreter, each case in every round.",
        "",
        "| case | median | min | heavy modules imported |",
        "|---|---|---|---|",
    ]
    for name, row in result["cases"].items():
        heavy = ", ".join(row["heavy_modules"]) or "none"
        lines.append(f"| {name} | {row['median_ms']} ms | {row['min_ms']} ms | {heavy} |")
    lines.append(
        f"| python -c pass (wall, for scale) | {result['python_-c_pass_wall_ms']} ms | | |"
    )
    if result["ratios_to_baseline"]:
        lines += [
            "",
            f"Baseline: {result['baseline']}.",
            "",
            "| case | this tree / baseline, per round: median | lowest | highest |",
            "|---|---|---|---|",
        ]
        for name, r in result["ratios_to_baseline"].items():
            lines.append(f"| {name} | {r['median']} | {r['lowest']} | {r['highest']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
