"""How good the performance model is: its predictions against measured times on this host's CPU.

For each op (``matmul``, ``fft.fft``, ``linalg.svd``, ``linalg.solve``, ``add``), dtype (float32,
float64) and size, the op is timed with plain NumPy (no Prism dispatch: the model predicts the
computation, not Prism's call overhead) and predicted for the host's CPU description by

* **roofline**: the uncalibrated model, from the description and what it derives or assumes
  (``PerformanceModel.figures`` says which);
* **median**: the model calibrated with ``calibrate(..., overhead=False)``, one efficiency per op:
  the median ratio of measured to predicted time;
* **calibrated**: ``calibrate(...)`` (the default), an efficiency and a fixed overhead per op,
  fitted by least squares on the relative error;
* **per dtype**: ``calibrate(..., per_dtype=True)``, the same per op and data type.

Calibration is fitted on half of the sizes of each op (the 1st, 3rd, 5th, ... of its sorted
sizes, both dtypes) and evaluated on the other half (the 2nd, 4th, ...): the errors reported for
the calibrated models are on sizes they were not fitted on, between sizes they were.

Each time is the median over ``--repeats`` rounds of the mean time per call in a batch of about
``--batch-seconds`` (after a warm-up call); each round times every case once, so that a burst of
load on a shared machine spoils one batch of many cases rather than every batch of one.  The
error of a prediction is ``|predicted - measured| / measured``; the summary gives its median per
op.

Usage::

    python benchmarks/bench_model.py [--quick] [--repeats N] [--output PREFIX]

writes PREFIX.json and PREFIX.md (default benchmarks/results/model-DATE).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from prism_core._blas import blas_info
from prism_core._tuning.model import PerformanceModel
from prism_core.kernel.host_cpu import detect_cpu

SIZES = {
    "matmul": [16, 32, 64, 128, 256, 512, 768, 1024],
    "fft.fft": [2**6, 2**8, 2**10, 2**12, 2**14, 2**16, 2**18, 2**20],
    "linalg.svd": [8, 16, 32, 64, 128, 256, 384, 512],
    "linalg.solve": [8, 16, 32, 64, 128, 256, 512, 1024],
    "add": [10**2, 10**3, 10**4, 10**5, 10**6, 3 * 10**6, 10**7, 3 * 10**7],
}
QUICK = {
    "matmul": [32, 64, 256, 512],
    "fft.fft": [2**8, 2**12, 2**14, 2**16],
    "linalg.svd": [16, 32, 128, 256],
    "linalg.solve": [16, 64, 256, 512],
    "add": [10**3, 10**4, 10**6, 10**7],
}
FUNCTIONS: dict[str, Callable[..., Any]] = {
    "matmul": np.matmul,
    "fft.fft": np.fft.fft,
    "linalg.svd": np.linalg.svd,
    "linalg.solve": np.linalg.solve,
    "add": np.add,
}
METHODS = ("roofline", "median", "calibrated", "per_dtype")


def inputs(op: str, n: int, dtype: str) -> tuple[np.ndarray[Any, Any], ...]:
    rng = np.random.default_rng(n)
    if op in ("fft.fft", "add"):
        x = rng.standard_normal(n).astype(dtype)
        return (x,) if op == "fft.fft" else (x, rng.standard_normal(n).astype(dtype))
    a = rng.standard_normal((n, n)).astype(dtype)
    if op == "linalg.solve":
        a += n * np.eye(n, dtype=dtype)  # well conditioned
        return (a, rng.standard_normal(n).astype(dtype))
    if op == "linalg.svd":
        return (a,)
    return (a, rng.standard_normal((n, n)).astype(dtype))


def batch_size(fn: Callable[[], Any], batch_seconds: float) -> int:
    """Calls per batch for about ``batch_seconds``, after a warm-up call (first-call costs: FFT
    plans, LAPACK workspace queries, page faults)."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(100_000, int(batch_seconds / once)))


def batch(fn: Callable[[], Any], number: int) -> float:
    """Mean seconds per call over ``number`` calls."""
    start = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - start) / number


def error(predicted: float, measured: float) -> float:
    return abs(predicted - measured) / measured


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="four sizes per op, 3 repeats")
    parser.add_argument("--repeats", type=int, default=None, help="batches per case (default 5)")
    parser.add_argument("--batch-seconds", type=float, default=0.02)
    parser.add_argument("--output", default=None)
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 5)
    sizes = QUICK if args.quick else SIZES

    model = PerformanceModel()
    host = model.host_device_type
    if host is None:
        raise SystemExit("no CPU description matches this host: nothing to compare with")
    figures = model.figures(host)
    print(f"host: {host}; figures: {json.dumps(figures.as_dict(), default=str)}", flush=True)

    started = time.perf_counter()
    cases: list[tuple[str, str, int, int, tuple[tuple[int, ...], ...], Callable[[], Any], int]] = []
    for op, ns in sizes.items():
        for dtype in ("float32", "float64"):
            for i, n in enumerate(sorted(ns)):
                arrays = inputs(op, n, dtype)
                call = functools.partial(FUNCTIONS[op], *arrays)
                number = batch_size(call, args.batch_seconds)
                cases.append((op, dtype, n, i, tuple(a.shape for a in arrays), call, number))
    # Round by round over every case, so that a burst of load on the shared machine spoils one
    # batch of many cases, which the median over rounds discards, not every batch of one case.
    times: list[list[float]] = [[] for _ in cases]
    for round_ in range(repeats):
        for k, case in enumerate(cases):
            times[k].append(batch(case[5], case[6]))
        print(f"round {round_ + 1}/{repeats} done", flush=True)
    rows: list[dict[str, Any]] = []
    for (op, dtype, n, i, shapes, _, _), measured in zip(cases, times, strict=True):
        seconds = statistics.median(measured)
        p = model.predict(op, shapes, dtype, host)
        rows.append({
            "op": op, "dtype": dtype, "n": n, "shapes": [list(s) for s in shapes],
            "split": "fit" if i % 2 == 0 else "evaluate",
            "measured_s": seconds, "spread": (max(measured) - min(measured)) / seconds,
            "roofline_s": p.seconds, "bound": p.bound,
        })  # fmt: skip
        print(
            f"{op:13s} {dtype:8s} n={n:<9d} measured {seconds * 1e6:11.1f} us  "
            f"roofline {p.seconds * 1e6:11.1f} us ({p.bound})",
            flush=True,
        )
    elapsed = time.perf_counter() - started

    fit = [
        (r["op"], tuple(tuple(s) for s in r["shapes"]), r["dtype"], host, r["measured_s"])
        for r in rows
        if r["split"] == "fit"
    ]
    calibrated = {
        "median": model.calibrate(fit, overhead=False),
        "calibrated": model.calibrate(fit),
        "per_dtype": model.calibrate(fit, per_dtype=True),
    }
    for r in rows:
        shapes = tuple(tuple(s) for s in r["shapes"])
        for method, m in calibrated.items():
            r[f"{method}_s"] = m.predict(r["op"], shapes, r["dtype"], host).seconds
        for method in METHODS:
            r[f"{method}_error"] = error(r[f"{method}_s"], r["measured_s"])

    summary: dict[str, dict[str, Any]] = {}
    for op in sizes:
        mine = [r for r in rows if r["op"] == op]
        held_out = [r for r in mine if r["split"] == "evaluate"]
        summary[op] = {
            "roofline_all": statistics.median(r["roofline_error"] for r in mine),
            # The error of a prediction far too small tends to 100 %: the ratio says how far.
            "roofline_ratio": statistics.median(r["measured_s"] / r["roofline_s"] for r in mine),
            **{
                method: statistics.median(r[f"{method}_error"] for r in held_out)
                for method in METHODS
            },
            "points_evaluated": len(held_out),
        }
    cpu = detect_cpu()
    meta: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.machine(),
        "cpu": cpu.brand or cpu.name,
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": [
            {k: pool.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
            for pool in blas_info()
            if pool.get("user_api") == "blas"
        ],
        "host_device_type": host,
        "figures": figures.as_dict(),
        "repeats": repeats,
        "batch_seconds": args.batch_seconds,
        "elapsed_s": round(elapsed, 1),
        "command": "python benchmarks/bench_model.py"
        + (" --quick" if args.quick else "")
        + (f" --repeats {args.repeats}" if args.repeats else ""),
    }
    fitted = {m: model_.calibration for m, model_ in calibrated.items()}
    result = {
        "meta": meta,
        "summary": summary,
        "calibration": fitted,
        "rows": rows,
    }
    prefix = args.output or f"benchmarks/results/model-{meta['date']}"
    prefix = prefix.removesuffix(".json")
    with open(prefix + ".json", "w", encoding="utf-8") as fh:
        json.dump(result, fh, indent=1, default=str)
    with open(prefix + ".md", "w", encoding="utf-8") as fh:
        fh.write(render(meta, summary, rows, fitted["per_dtype"]))
    print(render_summary(summary))
    print(f"wrote {prefix}.json and {prefix}.md")


def _pct(x: float) -> str:
    return f"{x * 100:.0f} %"


def render_summary(summary: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| op | measured / roofline | roofline, all sizes | roofline | median efficiency "
        "| calibrated | per dtype |",
        "|---|---|---|---|---|---|---|",
    ]
    for op, s in summary.items():
        lines.append(
            f"| {op} | {s['roofline_ratio']:.3g} | {_pct(s['roofline_all'])} "
            f"| {_pct(s['roofline'])} | {_pct(s['median'])} | {_pct(s['calibrated'])} "
            f"| **{_pct(s['per_dtype'])}** |"
        )
    return "\n".join(lines)


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.4g}"


def render(
    meta: dict[str, Any],
    summary: dict[str, dict[str, Any]],
    rows: list[dict[str, Any]],
    calibration: dict[str, Any],
) -> str:
    fig = meta["figures"]
    sources = fig["sources"]
    notes = fig["notes"]
    blas = ", ".join(
        f"{b['internal_api']} {b['version']} ({b['num_threads']} threads)" for b in meta["blas"]
    )
    lines = [
        f"# The performance model against measured times ({meta['date']})",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs ({meta['cpu']}, {meta['machine']}), "
        f"Python {meta['python']}, NumPy {meta['numpy']}, BLAS: {blas or 'unknown'}; "
        f"{meta['repeats']} rounds over every case, a batch of about "
        f"{meta['batch_seconds'] * 1e3:g} ms per case and round, the median; "
        f"{meta['elapsed_s']} s in all. Load average at the end: "
        f"{', '.join(f'{x:.2f}' for x in meta['load_average'] or ())}.",
        "",
        f"The host matches `{meta['host_device_type']}`. The model's figures for it:",
        "",
        "| figure | value | source | how |",
        "|---|---|---|---|",
    ]
    for vocab, value in fig["peak_tflops"].items():
        key = f"peak_tflops.{vocab}"
        lines.append(
            f"| peak {vocab} | {value * 1e3:.4g} GFLOP/s | {sources.get(key, '')} "
            f"| {notes.get(key, '')} |"
        )
    lines += [
        f"| memory bandwidth | {fig['bandwidth_gbps']:.4g} GB/s | {sources['bandwidth_gbps']} "
        f"| {notes.get('bandwidth_gbps', '')} |",
        f"| launch latency | {fig['launch_s'] * 1e6:g} us | {sources['launch_s']} "
        f"| {notes.get('launch_s', '')} |",
        "",
        "## Median absolute relative error per op",
        "",
        "`|predicted - measured| / measured`; a prediction far too small has an error near "
        "100 %, so *measured / roofline* gives the median ratio of the uncalibrated model's "
        "misses (all sizes). *roofline, all sizes*: the uncalibrated model on "
        "every size; the other columns on the held-out sizes only (the 2nd, 4th, ... of each "
        "op's sizes, both dtypes), the calibrations having been fitted on the others. "
        "*median efficiency*: `calibrate(overhead=False)`; *calibrated*: `calibrate()`, "
        "efficiency and overhead per op; *per dtype*: `calibrate(per_dtype=True)`, the same "
        "per op and dtype.",
        "",
        render_summary(summary),
        "",
        "## Fitted calibration (`calibrate(per_dtype=True)`, on the fit sizes)",
        "",
        "| op | efficiency | overhead per call |",
        "|---|---|---|",
    ]
    entry = calibration.get(meta["host_device_type"], {})
    for op, eff in entry.get("efficiency", {}).items():
        over = entry.get("overhead_us", {}).get(op, 0.0)
        lines.append(f"| {op} | {eff:.3g} | {over:.3g} us |")
    lines += [
        "",
        "## Every case (µs)",
        "",
        "| op | dtype | n | split | measured | roofline (bound) | median | calibrated "
        "| per dtype | error: roofline / median / calibrated / per dtype |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['op']} | {r['dtype']} | {r['n']} | {r['split']} | {_us(r['measured_s'])} "
            f"| {_us(r['roofline_s'])} ({r['bound']}) | {_us(r['median_s'])} "
            f"| {_us(r['calibrated_s'])} | {_us(r['per_dtype_s'])} "
            f"| {_pct(r['roofline_error'])} / {_pct(r['median_error'])} / "
            f"{_pct(r['calibrated_error'])} / {_pct(r['per_dtype_error'])} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
