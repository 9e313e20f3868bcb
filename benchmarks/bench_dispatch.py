"""The cost Prism's dispatch adds to a call, next to the same cost of other dispatchers.

Measured in one process, side by side (ratios and differences, since the machine is shared):

* Prism: ``prism_core.matmul(a, b)`` on 4x4 float64 against ``np.matmul(a, b)`` (cached decision),
  beside the floor of a dispatcher in Python: a function that reads a ``ContextVar``, looks the
  arguments' types up in a dict and calls what it finds (and the same keyed by dtypes too, as
  Prism keys an op whose variants depend on dtypes);
* Prism with a ``can_run``: an op whose chosen variant has a per-call check, against calling the
  same check and ``np.matmul`` directly (what is left is dispatch's own cost);
* networkx's backend dispatch: ``nx.is_empty(G)`` against its undecorated function;
* array-api-compat: ``xp.matmul(a, b)`` with the namespace cached, against ``np.matmul``;
* SciPy's uarray: ``scipy.fft.fft(x)`` on 16 points against ``scipy.fft._pocketfft.fft``;
* the first (uncached) decision of an op with 1,000 registered variants.

Usage::

    python benchmarks/bench_dispatch.py [--rounds N] [--output benchmarks/results/NAME.json]

Each "added" figure is min(time of the dispatched call) - min(time of the direct call), per
call, over ``--rounds`` short rounds of timeit that take the calls compared in turn (so that
drifts of the machine hit them alike); the minimum is the least noisy estimate of the cost.
Optional comparisons (networkx, array-api-compat, SciPy) are skipped with a note when missing.
"""

from __future__ import annotations

import argparse
import contextvars
import json
import math
import os
import platform
import statistics
import time
import timeit
from collections.abc import Callable
from typing import Any

import numpy as np


def per_call_ns(fn: Callable[[], Any], number: int, rounds: int) -> float:
    return min(timeit.repeat(fn, number=number, repeat=rounds)) / number * 1e9


def interleaved(calls: dict[str, Callable[[], Any]], number: int, rounds: int) -> dict[str, float]:
    """The least time per call (ns) of each of ``calls``, timed in turn, round after round."""
    best = dict.fromkeys(calls, math.inf)
    for _ in range(rounds):
        for name, fn in calls.items():
            best[name] = min(best[name], per_call_ns(fn, number, 1))
    return best


def pair(
    dispatched: Callable[[], Any], direct: Callable[[], Any], number: int, rounds: int
) -> dict[str, float]:
    t = interleaved({"dispatched": dispatched, "direct": direct}, number, rounds)
    d, b = t["dispatched"], t["direct"]
    return {"dispatched_ns": round(d, 1), "direct_ns": round(b, 1), "added_ns": round(d - b, 1)}


def bench_prism(number: int, rounds: int) -> dict[str, Any]:
    import prism_core

    a = np.ones((4, 4))
    b = np.ones((4, 4))
    matmul = prism_core.matmul
    matmul(a, b)  # build and cache the decision
    npmatmul = np.matmul
    # The floor: a ContextVar read, a dict lookup keyed by it and the arguments' types, the call.
    token = contextvars.ContextVar[Any]("floor_scope", default=None).get
    get = {(None, np.ndarray, np.ndarray): npmatmul}.__getitem__
    by_dtype = {(None, np.ndarray, a.dtype, np.ndarray, b.dtype): npmatmul}.__getitem__

    def floor(*args: Any, **kwargs: Any) -> Any:
        return get((token(), type(args[0]), type(args[1])))(*args, **kwargs)

    def floor_dtypes(*args: Any, **kwargs: Any) -> Any:
        x, y = args[0], args[1]
        return by_dtype((token(), type(x), x.dtype, type(y), y.dtype))(*args, **kwargs)

    t = interleaved(
        {
            "prism": lambda: matmul(a, b),
            "floor": lambda: floor(a, b),
            "floor_dtypes": lambda: floor_dtypes(a, b),
            "direct": lambda: npmatmul(a, b),
        },
        number,
        rounds,
    )
    added = t["prism"] - t["direct"]
    over = {name: t[name] - t["direct"] for name in ("floor", "floor_dtypes")}
    return {
        "dispatched_ns": round(t["prism"], 1),
        "direct_ns": round(t["direct"], 1),
        "added_ns": round(added, 1),
        "floor_added_ns": round(over["floor"], 1),
        "floor_dtypes_added_ns": round(over["floor_dtypes"], 1),
        "times_floor": round(added / over["floor"], 2),
        "times_floor_dtypes": round(added / over["floor_dtypes"], 2),
        # Whether Prism's key for this call holds the dtypes (a variant depends on them).
        "keyed_by_dtype": getattr(getattr(matmul, "op", None), "_keying", [None])[0] != 0,
    }


def bench_prism_can_run(number: int, rounds: int) -> dict[str, Any]:
    import prism_core

    name = f"bench_checked_{os.getpid()}"

    @prism_core.extending.operation(name=name, array_args=(0, 1))
    def checked(a: Any, b: Any) -> Any:
        return np.matmul(a, b)

    def square_only(a: Any, b: Any) -> bool | str:
        return True if a.ndim == 2 and b.ndim == 2 else "2-D operands only"

    checked.variant(np.matmul, priority=5, can_run=square_only, name=f"{name}.checked")
    a = np.ones((4, 4))
    b = np.ones((4, 4))
    checked(a, b)  # build and cache the decision
    assert prism_core.explain(checked, a, b).chosen == f"{name}.checked"
    npmatmul = np.matmul
    return pair(
        lambda: checked(a, b),
        lambda: square_only(a, b) is True and npmatmul(a, b),
        number,
        rounds,
    )


def bench_networkx(number: int, rounds: int) -> dict[str, Any]:
    import networkx as nx

    graph = nx.path_graph(4)
    is_empty = nx.is_empty
    orig = is_empty.orig_func
    is_empty(graph)
    return {
        **pair(lambda: is_empty(graph), lambda: orig(graph), number, rounds),
        "version": nx.__version__,
    }


def bench_array_api_compat(number: int, rounds: int) -> dict[str, Any]:
    import array_api_compat

    a = np.ones((4, 4))
    b = np.ones((4, 4))
    xp = array_api_compat.array_namespace(a, b)
    xmatmul = xp.matmul
    npmatmul = np.matmul
    return {
        **pair(lambda: xmatmul(a, b), lambda: npmatmul(a, b), number, rounds),
        "version": array_api_compat.__version__,
    }


def bench_uarray(number: int, rounds: int) -> dict[str, Any]:
    import scipy
    import scipy.fft
    from scipy.fft import _pocketfft

    x = np.ones(16)
    fft = scipy.fft.fft
    direct = _pocketfft.fft
    return {**pair(lambda: fft(x), lambda: direct(x), number, rounds), "version": scipy.__version__}


def bench_first_decision(variants: int, repeats: int) -> dict[str, Any]:
    """Time to a first decision for an op with many variants (each with requirements)."""
    import prism_core

    name = f"bench_many_{os.getpid()}"

    @prism_core.extending.operation(name=name, array_args=(0,))
    def many(x: Any) -> Any:
        return x

    vendors = ["nvidia", "amd", "intel", "generic", "aws"]
    for i in range(variants - 1):
        many.variant(
            lambda x: x,
            requires={"vendor": vendors[i % len(vendors)], "compute_units": i % 97},
            priority=i % 13,
            name=f"{name}.v{i}",
        )
    op = many.op
    x = np.ones(4)
    samples = []
    for _ in range(repeats):
        op._plans.clear()
        t0 = time.perf_counter()
        many(x)
        samples.append(time.perf_counter() - t0)
    decision = prism_core.explain(many, x)
    return {
        "variants": len(op.variants),
        "first_decision_ms_median": round(statistics.median(samples) * 1000, 3),
        "first_decision_ms_min": round(min(samples) * 1000, 3),
        "per_variant_us": round(statistics.median(samples) / len(op.variants) * 1e6, 2),
        "chosen": decision.chosen,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="timeit rounds (minimum is kept)")
    parser.add_argument("--number", type=int, default=10_000, help="calls per round")
    parser.add_argument("--output", help="write the results as JSON")
    args = parser.parse_args()

    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "when": time.strftime("%Y-%m-%d"),
        }
    }
    benches: dict[str, Callable[[int, int], dict[str, Any]]] = {
        "prism": bench_prism,
        "prism_can_run": bench_prism_can_run,
        "networkx": bench_networkx,
        "array_api_compat": bench_array_api_compat,
        "scipy_uarray": bench_uarray,
    }
    for name, bench in benches.items():
        try:
            results[name] = bench(args.number, args.rounds)
        except ImportError as exc:
            results[name] = {"skipped": f"not installed: {exc}"}
    results["first_decision"] = bench_first_decision(1000, 20)

    print(
        f"# Dispatch overhead ({results['machine']['when']}, Python "
        f"{results['machine']['python']}, NumPy {results['machine']['numpy']}, "
        f"{results['machine']['cpus']} CPUs; min of {args.rounds} rounds x {args.number})\n"
    )
    print("| dispatcher | dispatched call | direct call | added per call |")
    print("|---|---|---|---|")
    for name in benches:
        r = results[name]
        if "skipped" in r:
            print(f"| {name} | skipped: {r['skipped']} | | |")
        else:
            print(
                f"| {name} | {r['dispatched_ns']:.0f} ns | {r['direct_ns']:.0f} ns | "
                f"**{r['added_ns']:.0f} ns** |"
            )
    r = results["prism"]
    print(
        f"\nPrism adds {r['added_ns']:.0f} ns to a cached call, {r['times_floor']}x the "
        f"{r['floor_added_ns']:.0f} ns a plain dispatcher adds (ContextVar, dict lookup by the "
        f"arguments' types, call), {r['times_floor_dtypes']}x the {r['floor_dtypes_added_ns']:.0f} "
        f"ns of one keyed by their dtypes too (Prism's key holds them: {r['keyed_by_dtype']})"
    )
    fd = results["first_decision"]
    print(
        f"\nFirst decision with {fd['variants']} variants: {fd['first_decision_ms_median']} ms "
        f"(median; {fd['per_variant_us']} µs per variant), chosen {fd['chosen']}"
    )
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=2)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
