"""`prism bench` as a user meets it: time to first output, the wall time of a first run and of a
second one that reuses what the first stored, and how stable its choices are from run to run.

Three runs of ``prism bench --json`` (the quick sizes, every installed backend), back to back,
each a real subprocess:

* **A**: a fresh tuning cache: everything is tuned, stored, then checked;
* **B**: another fresh cache: everything tuned again, independently of A;
* **A again**: A's cache: the stored choices are reused and only checked.

It reports the seconds until each run's first line of output (the header), each run's wall
time, and stability: the cases where A and B picked the same variant, among the cases whose
measured gap (the runner-up's time over the fastest's, in each run's own check rounds) exceeds
``--gap`` (10 %) in both runs, and among all cases.  The machine's load (each run's own
measure: the other processes' share of the CPUs) is recorded beside, since a busy machine
makes choices less stable.

Usage::

    python benchmarks/bench_stability.py [--ops matmul,add] [--gap 0.10] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any


def bench(cache: Path, ops: str | None) -> dict[str, Any]:
    """One ``prism bench --json`` run in ``cache``: its report, the seconds to its first line
    of output (the header goes to stderr with --json) and its wall time."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(cache)
    command = [sys.executable, "-m", "prism_core", "bench", "--json"]
    if ops:
        command += ["--ops", ops]
    began = time.perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    first: list[float] = []
    err_lines: list[str] = []

    def read_stderr() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            if not first:
                first.append(time.perf_counter() - began)
            err_lines.append(line)

    reader = threading.Thread(target=read_stderr)
    reader.start()
    out = proc.stdout.read()
    proc.wait()
    reader.join()
    wall = time.perf_counter() - began
    if proc.returncode != 0:
        raise SystemExit(f"prism bench failed ({proc.returncode}):\n{''.join(err_lines)}")
    report: dict[str, Any] = json.loads(out)
    return {"report": report, "first_output_s": first[0] if first else None, "wall_s": wall}


def gap(row: dict[str, Any]) -> float | None:
    """The runner-up's time over the fastest's, less 1, in the row's own check rounds."""
    times = sorted(t for t in row["times"].values() if t)
    return times[1] / times[0] - 1 if len(times) >= 2 else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default=None, help="as prism bench --ops (default: all)")
    parser.add_argument("--gap", type=float, default=0.10)
    parser.add_argument("--output", default=None, help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        runs = {
            "A": bench(Path(a), args.ops),
            "B": bench(Path(b), args.ops),
            "A again": bench(Path(a), args.ops),
        }
    rows_a = {(r["op"], r["dtype"], r["n"]): r for r in runs["A"]["report"]["rows"]}
    rows_b = {(r["op"], r["dtype"], r["n"]): r for r in runs["B"]["report"]["rows"]}
    cases = []
    for key, ra in rows_a.items():
        rb = rows_b[key]
        ga, gb = gap(ra), gap(rb)
        cases.append(
            {
                "case": list(key),
                "pick_a": ra["prism_picks"],
                "pick_b": rb["prism_picks"],
                "same": ra["prism_picks"] == rb["prism_picks"],
                "gap_a": ga,
                "gap_b": gb,
                "clear": ga is not None and gb is not None and min(ga, gb) > args.gap,
                "times_a": ra["times"],
                "times_b": rb["times"],
            }
        )
    clear = [c for c in cases if c["clear"]]
    result = {
        "date": time.strftime("%Y-%m-%d"),
        "host": {"python": platform.python_version(), "machine": platform.machine()},
        "backends": runs["A"]["report"]["host"]["backends"],
        "ops": args.ops or "all",
        "gap": args.gap,
        "runs": {
            name: {
                "first_output_s": run["first_output_s"],
                "wall_s": run["wall_s"],
                "reused": run["report"]["reused"],
                "stored": run["report"]["stored"],
                "load": run["report"]["load"],
                "prism_vs_oracle": run["report"]["summary"]["prism_vs_oracle"],
            }
            for name, run in runs.items()
        },
        "stable_clear": [sum(c["same"] for c in clear), len(clear)],
        "stable_all": [sum(c["same"] for c in cases), len(cases)],
        "cases": cases,
    }
    lines = [
        f"# `prism bench`: first output, wall time, stability ({result['date']})",
        "",
        f"`python benchmarks/bench_stability.py{' --ops ' + args.ops if args.ops else ''}` on "
        f"Python {result['host']['python']} ({result['host']['machine']}, {os.cpu_count()} CPUs); "
        f"backends: {', '.join(f'{k} {v}' for k, v in result['backends'].items())}.",
        "",
        "| run | first output | wall time | reused | stored | others' CPU share before / peak |"
        " Prism / fastest |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, run in result["runs"].items():
        load = run["load"] or {}
        share = "/".join(
            "-" if load.get(k) is None else f"{load[k]:.0%}"
            for k in ("others_before", "others_peak")
        )
        lines.append(
            f"| {name} | {run['first_output_s']:.2f} s | {run['wall_s']:.1f} s | "
            f"{run['reused']} | {run['stored']} | {share} | {run['prism_vs_oracle']:.3f} |"
        )
    same, total = result["stable_clear"]
    same_all, total_all = result["stable_all"]
    lines += [
        "",
        f"Same pick in A and B: **{same} of {total}** cases whose gap exceeds "
        f"{args.gap:.0%} in both runs; {same_all} of {total_all} cases in all.",
        "",
        "| case | pick A | pick B | gap A | gap B |",
        "|---|---|---|---|---|",
    ]
    for c in cases:
        mark = "" if c["same"] else " **(differs)**"
        lines.append(
            f"| {' '.join(map(str, c['case']))} | {c['pick_a']} | {c['pick_b']}{mark} | "
            + " | ".join("-" if g is None else f"{g:.0%}" for g in (c["gap_a"], c["gap_b"]))
            + " |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.output:
        Path(args.output + ".json").write_text(json.dumps(result, indent=1) + "\n")
        Path(args.output + ".md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
