"""NumPy-style kernels placed whole by ``prism.function``: each kernel on each placement and in
automatic mode, side by side in one process.

Every kernel of ``benchmarks/kernels`` (its ``np`` bound to the Prism-first namespace, as issue
34's held-out suite runs kernels) is timed

* pinned to each placement: ``prism.function(kernel, backends=[name])`` for numpy, torch (CPU)
  and jax (where it can run: JAX holds no float64 without x64, and declines a kernel that
  updates arrays in place);
* in automatic mode: ``prism.function(kernel)``, after ``prism.tuning.tune(F, *args)`` (the
  tuning cache is a fresh temporary one unless ``--keep-cache``; ``--untuned`` skips tuning);
* and as plain NumPy, the kernel module itself (``np`` is NumPy): "NumPy alone".

Rounds are interleaved (each round times every case once, so that drifts of a shared machine
hit all alike; the order turns each round, and each sample follows an untimed call, so that the
threads one backend leaves spinning do not slow the case timed after it); each case's time is
the minimum over rounds of the mean of a short repeat.
Reported: automatic / best placement (goal <= 1.05, geometric mean) and automatic / NumPy alone.

Usage::

    python benchmarks/bench_function_kernels.py [--dtype float32] [--rounds N] [--quick]
        [--kernels heat,nbody] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import platform
import sys
import tempfile
import time
import timeit
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernels

import prism_core as prism

#: The size each kernel is timed at: a few milliseconds of NumPy work (``--quick``: a sixteenth
#: of the work, about).
SIZES = {
    "heat": 256,
    "trisolve": 256,
    "nbody": 256,
    "conv2d": 64,
    "lowpass": 1 << 17,
    "histogram": 1 << 18,
    "power_iteration": 256,
    "mandelbrot": 128,
    "pairwise": 512,
    "logsumexp": 4096,
    "prefix": 1 << 17,
    "cg": 128,
}
PLACEMENTS = ("numpy", "torch", "jax")


def calibrate(fn: Callable[[], Any], target: float) -> int:
    """How many calls of ``fn`` take about ``target`` seconds (at least 1)."""
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    return max(1, min(1000, int(target / once)))


def measure(cases: dict[str, Callable[[], Any]], rounds: int, target: float) -> dict[str, float]:
    """Seconds per call of each case: the minimum over ``rounds`` interleaved rounds."""
    numbers = {name: calibrate(fn, target) for name, fn in cases.items()}
    best = dict.fromkeys(cases, math.inf)
    names = list(cases)
    for i in range(rounds):
        # The order turns each round, and each sample follows one untimed call: the threads a
        # backend leaves spinning after its call (torch's, XLA's) slow whatever runs next on a
        # small machine, and that cost lands on the untimed call, not on one case's samples.
        for name in names[i % len(names) :] + names[: i % len(names)]:
            fn = cases[name]
            fn()
            t = timeit.timeit(fn, number=numbers[name]) / numbers[name]
            best[name] = min(best[name], t)
    return best


def call(fn: Callable[..., Any], args: Any) -> Callable[[], Any]:
    """``fn(*args)`` as a case to time."""
    return lambda: fn(*args)


def probe(F: Any, args: tuple[Any, ...]) -> str | None:
    """Why ``F`` cannot run ``args`` (pinned: its one backend), or ``None``: one call, made
    here, that also plans the placement before any timing."""
    try:
        F(*copy.deepcopy(args))
    except prism.BackendError as exc:
        text = str(exc).split("; not falling back")[0].removeprefix("function kernel ")
    except prism.DispatchError as exc:
        text = str(exc).removeprefix("function kernel: ")
    else:
        return None
    return "; ".join(line.strip() for line in text.splitlines())


def bench_kernel(name: str, n: int, dtype: str, rounds: int, target: float, tune: bool) -> Any:
    module = kernels.load(name)
    bound = kernels.bind(module)
    args = module.example(n, dtype)
    row: dict[str, Any] = {"kernel": name, "n": n, "dtype": dtype, "seconds": {}, "not_run": {}}
    cases: dict[str, Callable[[], Any]] = {}
    for placement in PLACEMENTS:
        F = prism.function(bound.kernel, backends=[placement])
        why = probe(F, args)
        if why is not None:
            row["not_run"][placement] = why
            continue
        own = copy.deepcopy(args)  # each case updates its own copy in place
        cases[placement] = call(F, own)
    auto = prism.function(bound.kernel)
    auto_args = copy.deepcopy(args)
    if tune:
        report = prism.tuning.tune(auto, *auto_args, progress=False, budget_s=10)
        row["tuned"] = str(report).splitlines()[0]
    auto(*auto_args)
    row["automatic_on"] = auto.run(*auto_args)[1].backend
    cases["automatic"] = call(auto, auto_args)
    alone = copy.deepcopy(args)
    cases["NumPy alone"] = call(module.kernel, alone)
    row["seconds"] = measure(cases, rounds, target)
    placed = {p: row["seconds"][p] for p in PLACEMENTS if p in row["seconds"]}
    row["best"] = min(placed, key=lambda p: placed[p])
    row["auto_over_best"] = row["seconds"]["automatic"] / placed[row["best"]]
    row["auto_over_numpy"] = row["seconds"]["automatic"] / row["seconds"]["NumPy alone"]
    return row


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value * 1e3:.3f}"


def markdown(result: dict[str, Any], command: str) -> str:
    tuned = "after `prism.tuning.tune(F, *args)`" if result["tuned"] else "untuned"
    threads = (
        f"{result['threads']} thread(s) per library" if result["threads"] else "default threads"
    )
    lines = [
        "# Placed functions on real kernels: each placement and automatic mode",
        "",
        f"`{command}`",
        "",
        f"{result['date']}; Python {result['python']}, NumPy {result['numpy']}, torch "
        f"{result['torch']}, JAX {result['jax']}; {result['cpus']} CPUs ({result['platform']}). "
        f"{result['dtype']} inputs; "
        f"{threads}; "
        f"automatic mode {tuned}; milliseconds per call, minimum over "
        f"{result['rounds']} interleaved rounds. Load average (1, 5, 15 min) "
        f"{', '.join(f'{v:.1f}' for v in result['load_average']['before'])} before, "
        f"{', '.join(f'{v:.1f}' for v in result['load_average']['after'])} after. "
        "Kernels: `benchmarks/kernels/` (their `np` bound to the Prism-first namespace); "
        "NumPy alone is the same kernel with `np` = NumPy.",
        "",
        "| kernel | n | numpy | torch | jax | automatic (on) | NumPy alone | auto / best | "
        "auto / NumPy alone |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        s = r["seconds"]
        lines.append(
            f"| {r['kernel']} | {r['n']} | {ms(s.get('numpy'))} | {ms(s.get('torch'))} | "
            f"{ms(s.get('jax'))} | {ms(s['automatic'])} ({r['automatic_on']}) | "
            f"{ms(s['NumPy alone'])} | {r['auto_over_best']:.3f} (best: {r['best']}) | "
            f"{r['auto_over_numpy']:.3f} |"
        )
    summary = result["summary"]
    lines += [
        "",
        f"Geometric means over {len(result['rows'])} kernels: automatic / best placement "
        f"**{summary['auto_over_best']:.3f}** (goal <= 1.05), automatic / NumPy alone "
        f"**{summary['auto_over_numpy']:.3f}**.",
        "",
        "Placements that could not run a kernel:",
        "",
    ]
    lines += [
        f"- {r['kernel']} on {p}: {why}" for r in result["rows"] for p, why in r["not_run"].items()
    ] or ["- none"]
    if result["tuned"]:
        lines += ["", "What `prism.tuning.tune(F, *args)` decided (its report's first line):", ""]
        lines += [
            f"- {r['kernel']}: {r.get('tuned', '-').split(': ', 1)[-1]}" for r in result["rows"]
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dtype", default="float32", help="the inputs' dtype (float32: JAX too)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--target", type=float, default=0.02, help="seconds per timed sample")
    parser.add_argument("--quick", action="store_true", help="small sizes, 3 rounds")
    parser.add_argument("--kernels", default=None, help="comma-separated kernels (default all)")
    parser.add_argument("--untuned", action="store_true", help="automatic mode without tuning")
    parser.add_argument("--keep-cache", action="store_true", help="the host's tuning cache")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads per library (BLAS, OpenMP, torch, XLA): on a small shared machine one "
        "thread each keeps the placements' times from swinging with the other jobs' load",
    )
    parser.add_argument("--output", help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args(argv)
    limits = None
    if args.threads:
        limits = limit_threads(args.threads)
    names = args.kernels.split(",") if args.kernels else list(kernels.NAMES)
    rounds = 3 if args.quick else args.rounds
    if not args.keep_cache:  # a fresh tuning cache: this run's measurements decide
        os.environ["PRISM_CACHE_DIR"] = tempfile.mkdtemp(prefix="prism-bench-kernels-")
    tune = not args.untuned
    if tune and not _tunes_functions():
        print("prism_core.tuning.tune does not take a placed function here: untuned")
        tune = False

    load_before = os.getloadavg()
    rows = []
    for name in names:
        n = SIZES[name] // (4 if args.quick else 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", prism.FallbackWarning)
            row = bench_kernel(name, max(n, 8), args.dtype, rounds, args.target, tune)
        rows.append(row)
        print(f"{name}: " + ", ".join(f"{k} {ms(v)} ms" for k, v in row["seconds"].items()),
              flush=True)  # fmt: skip
    import jax
    import torch

    result: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "torch": torch.__version__,
        "jax": jax.__version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "dtype": args.dtype,
        "threads": args.threads,
        "rounds": rounds,
        "tuned": tune,
        "load_average": {"before": load_before, "after": os.getloadavg()},
        "rows": rows,
        "summary": {
            "auto_over_best": geomean([r["auto_over_best"] for r in rows]),
            "auto_over_numpy": geomean([r["auto_over_numpy"] for r in rows]),
        },
    }
    command = "python benchmarks/bench_function_kernels.py " + " ".join(
        argv if argv is not None else sys.argv[1:]
    )
    text = markdown(result, command.strip())
    del limits
    print(text)
    if args.output:
        Path(f"{args.output}.json").write_text(json.dumps(result, indent=2) + "\n")
        Path(f"{args.output}.md").write_text(text)
    return 0


def limit_threads(n: int) -> Any:
    """``n`` threads for every library's pool: XLA's flags before JAX is imported (the jax
    plugin imports it on first use), torch's, and BLAS/OpenMP through threadpoolctl (kept
    while the returned object lives)."""
    flags = f"--xla_cpu_multi_thread_eigen={'true' if n > 1 else 'false'}"
    os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flags}".strip()
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]
    import torch

    torch.set_num_threads(n)
    return threadpoolctl.threadpool_limits(n)


def _tunes_functions() -> bool:
    """Whether this Prism's ``tuning.tune`` takes a placed function (``tune(F, *args)``)."""
    tuning = getattr(prism, "tuning", None)
    tune = getattr(tuning, "tune", None)
    return tune is not None and "placed function" in (tune.__doc__ or "")


if __name__ == "__main__":
    sys.exit(main())
