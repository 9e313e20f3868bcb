"""Offloading NumPy inputs to a GPU: when automatic mode does it, against when it pays.

The GPU goal: automatic mode offloads NumPy inputs to the GPU only when the transfer
pays, and is never more than 1.1x slower than the better of CPU-only and always-GPU at any
size; the performance model's crossover (the smallest size from which it predicts the GPU,
transfers both ways included, faster) is recorded beside the measured one, per op and dtype,
with whether the model was calibrated on this host (``prism bench --calibrate``) and how.

For each op and size, in one process and interleaved (every mode once per round, rounds
shuffled, minimum over rounds), with NumPy arrays in and NumPy arrays out:

* **CPU only**: ``with prism.device(<this host's CPU>)``: the best CPU variant;
* **always GPU**: ``with prism.device(<the GPU>)``: the arguments copied to the GPU, the result
  (the GPU backend's array there) brought to NumPy with ``prism.to_numpy``, which waits for the
  GPU, so the time is the whole call's;
* **automatic**: ``prism.<op>(...)`` with no scope: what Prism chooses (``explain`` says why).

It needs an NVIDIA GPU and a GPU backend (the torch plugin with CUDA, or prism-plugin-cuda with
CuPy); without one it says so and exits 0 without writing results.

Usage::

    python benchmarks/bench_offload.py [--ops matmul,fft.fft,linalg.solve,add]
        [--dtypes float32,float64] [--rounds 7] [--output PREFIX]
        [--simulate DEVICE --max-n N]

(``--dtype`` is the old spelling of ``--dtypes``.)  The defaults, matmul and fft.fft in
float32, are what the GPU check runs (benchmarks/gpu/run.py).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import platform
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: Sizes per op: n for an (n, n) matmul and linalg.solve (against a vector of n), the length
#: of an FFT and of the vectors added.
SIZES: dict[str, list[int]] = {
    "matmul": [2**k for k in range(3, 14)],
    "fft.fft": [2**k for k in range(6, 25, 2)],
    "linalg.solve": [2**k for k in range(3, 13)],
    "add": [2**k for k in range(10, 27, 2)],
}
DTYPES = ("float32", "float64")


def arguments(op: str, n: int, dtype: str) -> tuple[Any, ...]:
    rng = np.random.default_rng(n)
    if op == "matmul":
        return (rng.random((n, n), dtype=np.float64).astype(dtype),) * 2
    if op == "fft.fft":
        return (rng.random(n, dtype=np.float64).astype(dtype),)
    if op == "linalg.solve":  # well conditioned
        a = rng.random((n, n), dtype=np.float64) + n * np.eye(n)
        return (a.astype(dtype), rng.random(n, dtype=np.float64).astype(dtype))
    if op == "add":
        return (rng.random(n).astype(dtype), rng.random(n).astype(dtype))
    raise SystemExit(f"bench_offload: no arguments for {op!r}; use one of {', '.join(SIZES)}")


def _choices(text: str, allowed: Any, what: str) -> list[str]:
    chosen = [t.strip() for t in text.split(",") if t.strip()]
    wrong = [t for t in chosen if t not in allowed]
    if wrong or not chosen:
        raise SystemExit(
            f"bench_offload: {what}: {', '.join(wrong) or 'none given'}; choose among "
            f"{', '.join(allowed)}"
        )
    return chosen


def _timed(call: Callable[[], Any], seconds: float = 0.01) -> float:
    """Seconds per call, over enough calls to last about ``seconds``."""
    start = time.perf_counter()
    call()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, min(10_000, int(seconds / once)))
    start = time.perf_counter()
    for _ in range(number):
        call()
    return (time.perf_counter() - start) / number


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", default="matmul,fft.fft", help=", ".join(SIZES))
    parser.add_argument(
        "--dtypes", "--dtype", dest="dtypes", default="float32", help=", ".join(DTYPES)
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--output", default=None, help="writes PREFIX.json and PREFIX.md")
    parser.add_argument(
        "--simulate",
        metavar="DEVICE",
        help="a dry run of this script without a GPU: DEVICE (a described GPU) is simulated, "
        "its calls run on the reference backend; the times say nothing about a GPU",
    )
    parser.add_argument("--max-n", type=int, default=None, help="skip larger sizes")
    args = parser.parse_args()
    ops = _choices(args.ops, SIZES, "--ops")
    dtypes = _choices(args.dtypes, DTYPES, "--dtypes")

    import prism_core as prism

    present = prism.hardware.present_devices().devices
    cpu = next((d.description for d in present if d.description.kind == "cpu"), None)
    gpu = next((d.description for d in present if d.description.kind == "gpu"), None)
    if args.simulate is not None:
        gpu = prism.hardware.get_device(args.simulate)
        print(f"bench_offload: {gpu.device_type} SIMULATED: a dry run; no GPU time is measured")
    if gpu is None or cpu is None:
        print(
            "skipped: no GPU on this host (present: "
            + (", ".join(d.description.device_type for d in present) or "none")
            + "); bench_offload measures offloading to a real GPU"
        )
        return 0
    calibration = prism.tuning.TuningStore().load().as_dict()["calibration"]
    model = prism.tuning.PerformanceModel(calibration or None)
    rows: list[dict[str, Any]] = []
    rng = random.Random(0)
    for op, dtype in ((op, dtype) for op in ops for dtype in dtypes):
        fn = prism.get_op(op)
        for n in SIZES[op]:
            if args.max_n is not None and n > args.max_n:
                break
            call = arguments(op, n, dtype)
            # A scope is entered once per sample, not per call: its cost is not the call's.
            modes: dict[str, Any] = {
                "cpu": prism.device(cpu),
                "gpu": prism.device(gpu, simulate=args.simulate is not None),
                "auto": contextlib.nullcontext(),
            }

            # NumPy out in every mode: a named device's results stay on it (its backend's
            # arrays), so "always GPU" is timed with its copy back, as automatic mode is.
            def run(fn: Any = fn, call: tuple[Any, ...] = call) -> Any:
                return prism.to_numpy(fn(*call))

            times: dict[str, list[float]] = {m: [] for m in modes}
            for _ in range(args.rounds):
                order = list(modes)
                rng.shuffle(order)
                for mode in order:
                    with modes[mode]:
                        times[mode].append(_timed(run))
            best = {m: min(t) for m, t in times.items()}
            decision = prism.explain(op, *call)
            shapes = [tuple(a.shape) for a in call]
            predicted = {
                "cpu": model.predict(op, shapes, dtype, cpu, on_device=True).seconds,
                "gpu": model.predict(op, shapes, dtype, gpu, on_device=False).seconds,
            }
            rows.append(
                {
                    "op": op,
                    "dtype": dtype,
                    "n": n,
                    "seconds": best,
                    "predicted": predicted,
                    "auto_over_better": best["auto"] / min(best["cpu"], best["gpu"]),
                    "auto_ran_on": f"{decision.chosen_backend} on {decision.chosen_device}",
                    "decided_by": decision.decided_by,
                }
            )
            print(
                f"{op:8} {dtype} n={n:>9}  cpu {best['cpu'] * 1e6:10.1f} us  gpu "
                f"{best['gpu'] * 1e6:10.1f} us  auto {best['auto'] * 1e6:10.1f} us "
                f"({rows[-1]['auto_over_better']:.3f}x the better; {decision.decided_by})",
                flush=True,
            )
    summary = _summary(rows)
    calibrated = {device.device_type: _calibrated(model, device) for device in (cpu, gpu)}
    text = _markdown(rows, summary, cpu.device_type, gpu.device_type, args, calibrated)
    print(text)
    if args.output and args.simulate is None:
        meta = {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpu": cpu.device_type,
            "gpu": gpu.device_type,
            "ops": ops,
            "dtypes": dtypes,
            "dtype": dtypes[0],
            "rounds": args.rounds,
            "calibrated": calibrated,
            "calibration": {k: calibration[k] for k in calibrated if k in calibration},
        }
        Path(args.output + ".json").write_text(
            json.dumps({"meta": meta, "summary": summary, "rows": rows}, indent=2) + "\n"
        )
        Path(args.output + ".md").write_text(text)
    return 0


def _crossover(rows: list[dict[str, Any]], key: str) -> int | None:
    """The smallest size from which the GPU is faster at every larger size."""
    found = None
    for row in reversed(rows):
        if row[key]["gpu"] < row[key]["cpu"]:
            found = row["n"]
        else:
            break
    return found


def _calibrated(model: Any, device: Any) -> str:
    """The figures of ``device`` the model took from this host's calibration, in words, or
    ``"no"``."""
    figures = model.figures(device)
    if not figures.calibrated:
        return "no"
    when = figures.calibrated_at
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(when)) if when else "by prism bench"
    return f"{stamp}: {', '.join(figures.calibrated)}"


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per op and dtype: the crossovers measured and modelled, and automatic mode against the
    better target."""
    out: dict[str, Any] = {}
    for op, dtype in dict.fromkeys((r["op"], r["dtype"]) for r in rows):
        mine = [r for r in rows if r["op"] == op and r["dtype"] == dtype]
        worst = max(mine, key=lambda r: r["auto_over_better"])
        out.setdefault(op, {})[dtype] = {
            "measured_crossover": _crossover(mine, "seconds"),
            "modelled_crossover": _crossover(mine, "predicted"),
            "worst_auto_over_better": worst["auto_over_better"],
            "worst_at": worst["n"],
            "geomean_auto_over_better": math.exp(
                sum(math.log(r["auto_over_better"]) for r in mine) / len(mine)
            ),
        }
    return out


def _markdown(
    rows: list[dict[str, Any]],
    summary: dict[str, Any],
    cpu: str,
    gpu: str,
    args: Any,
    calibrated: dict[str, str],
) -> str:
    lines = [
        f"# Offloading NumPy inputs: {cpu} and {gpu} ({time.strftime('%Y-%m-%d')})",
        "",
        f"`python benchmarks/bench_offload.py --ops {args.ops} --dtypes {args.dtypes} --rounds "
        f"{args.rounds}`, Python {platform.python_version()}; minimum over rounds, interleaved.",
        "Model calibrated on this host: "
        + "; ".join(f"{device} {how}" for device, how in calibrated.items())
        + ".",
        "",
        "| op | dtype | crossover measured | crossover modelled | worst auto / better (at n) "
        "| geomean |",
        "|---|---|---|---|---|---|",
    ]
    for op, per_dtype in summary.items():
        for dtype, s in per_dtype.items():
            lines.append(
                f"| {op} | {dtype} | {s['measured_crossover']} | {s['modelled_crossover']} | "
                f"{s['worst_auto_over_better']:.3f} ({s['worst_at']}) | "
                f"{s['geomean_auto_over_better']:.3f} |"
            )
    lines += [
        "",
        "| op | dtype | n | CPU only (µs) | always GPU (µs) | automatic (µs) | auto / better "
        "| ran on | decided by | predicted CPU (µs) | predicted GPU (µs) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        s, p = r["seconds"], r["predicted"]
        lines.append(
            f"| {r['op']} | {r['dtype']} | {r['n']} | {s['cpu'] * 1e6:.1f} | "
            f"{s['gpu'] * 1e6:.1f} | {s['auto'] * 1e6:.1f} | {r['auto_over_better']:.3f} | "
            f"{r['auto_ran_on']} | {r['decided_by']} | {p['cpu'] * 1e6:.1f} | "
            f"{p['gpu'] * 1e6:.1f} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
