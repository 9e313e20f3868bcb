"""Prism in automatic mode after ``prism bench``, against the per-size oracle.

1. ``prism bench --full`` over the sweeps of the backends issue (matmul, fft.fft, linalg.svd,
   linalg.solve; float32 and float64; every installed backend), in a fresh tuning cache: this
   tunes and stores the choices, as a user's first ``prism bench`` does.
2. Then, per case, side by side in one interleaved measurement
   (``prism_core._tuning.tuner.measure``):

   * each backend **through Prism**: ``prism.<op>(*args)`` inside ``use_backend(name)`` (the
     oracle is the fastest of these, as in benchmarks/results/backends-2026-11-23.md);
   * **Prism automatic**: ``prism.<op>(*args)`` with no scope, the tuned plan.

   Each contender runs in a context that holds its scope (``contextvars``), so both pay the same
   cost for it.  NumPy arguments throughout (automatic mode brings results back to NumPy;
   ``use_backend`` gives the backend's arrays).

Prints a Markdown report; ``--output PREFIX`` writes PREFIX.json and PREFIX.md.

Usage::

    python benchmarks/bench_tuned.py [--quick] [--budget SECONDS] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import contextvars
import json
import math
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

OPS = ["matmul", "fft.fft", "linalg.svd", "linalg.solve"]


def geomean(values: list[float]) -> float:
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else float("nan")


def _in(ctx: contextvars.Context, fn: Any, call: tuple[Any, ...]) -> Any:
    """``fn(*call)`` run in ``ctx`` (which holds the contender's scope)."""
    return lambda: ctx.run(fn, *call)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="prism bench's quick sizes")
    parser.add_argument(
        "--budget", type=float, default=None, help="the most prism bench may take, seconds"
    )
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    cache = tempfile.mkdtemp(prefix="prism-bench-tuned-")
    os.environ["PRISM_CACHE_DIR"] = cache  # a fresh tuning cache, before Prism reads it

    import prism_core as prism
    from prism_core._bench import run_bench
    from prism_core._tuning.candidates import Runner
    from prism_core._tuning.tuner import example_arguments, measure

    began = time.perf_counter()
    report = run_bench(quick=args.quick, ops=OPS, budget_s=args.budget)
    tuned_s = time.perf_counter() - began
    backends = [b.name for b in prism.extending.backends() if b.available]
    rows: list[dict[str, Any]] = []
    for r in report.rows:
        fn = prism.get_op(r.op).function
        call = example_arguments(r.op, r.n, r.dtype)
        contenders = []
        for name in backends:
            if not any(m.backend == name for m in r.case.measurements if m.error is None):
                continue  # no variant of this backend runs this call
            ctx = contextvars.copy_context()
            ctx.run(prism.use_backend(name).__enter__)
            contenders.append(Runner(name, name, None, _in(ctx, fn, call)))
        contenders.append(Runner("prism", "", None, _in(contextvars.copy_context(), fn, call)))
        got = {m.variant: m for m in measure(contenders, budget_s=1.0, min_rounds=7)}
        through = {k: v.seconds for k, v in got.items() if k != "prism" and v.error is None}
        oracle = min(through, key=through.__getitem__)
        prism_s = got["prism"].seconds
        rows.append(
            {
                "op": r.op,
                "dtype": r.dtype,
                "n": r.n,
                "through_prism_s": through,
                "oracle": oracle,
                "oracle_s": through[oracle],
                "prism_s": prism_s,
                "prism_picks": prism.explain(r.op, *call).chosen_backend,
                "decided_by": prism.explain(r.op, *call).decided_by,
                "tuned": r.case.decided,
                "prism_vs_oracle": prism_s / through[oracle],
                "numpy_vs_oracle": through.get("numpy", math.nan) / through[oracle],
            }
        )
    summary = {
        "prism_vs_oracle": geomean([x["prism_vs_oracle"] for x in rows]),
        "numpy_vs_oracle": geomean([x["numpy_vs_oracle"] for x in rows]),
        "per_op": {
            f"{op} {dt}": {
                "prism_vs_oracle": geomean(
                    [x["prism_vs_oracle"] for x in rows if x["op"] == op and x["dtype"] == dt]
                ),
                "numpy_vs_oracle": geomean(
                    [x["numpy_vs_oracle"] for x in rows if x["op"] == op and x["dtype"] == dt]
                ),
            }
            for op in OPS
            for dt in ("float32", "float64")
        },
        "cases": len(rows),
        "picks_not_the_oracle": sum(1 for x in rows if x["prism_picks"] != x["oracle"]),
    }
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "backends": {b.name: b.version for b in prism.extending.backends() if b.available},
        "quick": args.quick,
        "tuning_seconds": round(tuned_s, 1),
        "total_seconds": round(time.perf_counter() - began, 1),
        "stored": report.stored,
    }
    text = render(meta, summary, rows)
    print(text)
    if args.output:
        Path(args.output + ".json").write_text(
            json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=2) + "\n"
        )
        Path(args.output + ".md").write_text(text)
    return 0


def _t(s: float) -> str:
    if not math.isfinite(s):
        return "-"
    return f"{s * 1e6:.1f}" if s < 1e-3 else f"{s * 1e6:.0f}"


def render(meta: dict[str, Any], summary: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    names = sorted({k for r in rows for k in r["through_prism_s"]})
    out = [
        f"# Prism after `prism bench`, against the per-size oracle ({meta['date']})",
        "",
        f"`python benchmarks/bench_tuned.py{' --quick' if meta['quick'] else ''}` on "
        f"{meta['cpus']} CPUs ({meta['machine']}), Python {meta['python']}; backends: "
        + ", ".join(f"{k} {v}" for k, v in meta["backends"].items())
        + f". Tuning (`prism bench --full` on these ops, fresh cache): {meta['tuning_seconds']} s, "
        f"{meta['stored']} choices stored; whole run {meta['total_seconds']} s.",
        "",
        f"**Geometric mean over {summary['cases']} cases: Prism automatic "
        f"{summary['prism_vs_oracle']:.3f}x the per-size oracle; NumPy alone "
        f"{summary['numpy_vs_oracle']:.3f}x.** Prism's pick differs from this run's oracle in "
        f"{summary['picks_not_the_oracle']} cases.",
        "",
        "| op | dtype | Prism / oracle | NumPy / oracle |",
        "|---|---|---|---|",
    ]
    for key, v in summary["per_op"].items():
        op, dt = key.split(" ")
        out.append(f"| {op} | {dt} | {v['prism_vs_oracle']:.3f} | {v['numpy_vs_oracle']:.3f} |")
    out += [
        "",
        "## Per case (µs per call; each backend through Prism with `use_backend`)",
        "",
        "| op | dtype | n | "
        + " | ".join(names)
        + " | oracle | Prism auto | picks | why | ratio |",
        "|---|---|---|" + "---|" * len(names) + "---|---|---|---|---|",
    ]
    for r in rows:
        cells = [_t(r["through_prism_s"].get(n, math.nan)) for n in names]
        out.append(
            f"| {r['op']} | {r['dtype']} | {r['n']} | "
            + " | ".join(cells)
            + f" | {r['oracle']} | {_t(r['prism_s'])} | {r['prism_picks']} | {r['decided_by']} "
            f"| {r['prism_vs_oracle']:.3f} |"
        )
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
