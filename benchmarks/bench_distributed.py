"""Prism's added cost per task on a Dask cluster, against plain Dask doing the same NumPy work.

On a ``LocalCluster`` (one process per worker, one thread each), side by side: in each round
every contender runs once, back to back, in alternating order (the machine is shared):

1. **many small tasks**: ``--tasks`` additions of two small arrays (8 float64)

   * plain Dask: ``client.map(np.add, xs, ys)``, then ``gather``;
   * Prism op: ``prism_client.map_op("add", xs, ys)`` (routed by the op: every worker runs it,
     so the tasks are unrestricted; on the worker, Prism's dispatch runs NumPy's ``add``);
   * Prism routed: ``prism_client.map(np.add, xs, ys, requires={"kind": "cpu"})`` (restricted
     to the qualifying workers, each task under ``prism.device(<the CPU>)``), against plain
     Dask placed the same way (``workers=[every worker], allow_other_workers=False``): Dask's
     scheduler treats restricted tasks differently (it does not queue them), so the routed
     tasks are compared with tasks under the same restriction;
   * and the same one task at a time: ``client.submit`` against ``prism_client.run_op``, which
     routes every call (a cached route: a dictionary lookup);

2. **a chunked large matmul**: ``A @ B`` (``--n`` square, float64) as ``--chunks`` row blocks of
   ``A`` times ``B``, the blocks and ``B`` scattered to the workers beforehand: plain
   ``client.map(np.matmul, blocks, [B]*k)`` against ``prism_client.map_op("matmul", ...)``;

3. **a chunked FFT**: rows of a (64, 2^18) float64 array in ``--chunks`` blocks, scattered:
   ``client.map(np.fft.fft, blocks)`` against ``prism_client.map_op("fft.fft", blocks)``.

Each measurement is the wall time from the first submission until every result is in (``wait``
for the large cases, ``gather`` of the small results), and the time the submission itself took
on the client.  Reported: the minima and their ratio, and the median of the round-by-round
ratios (paired: steadier where other work comes and goes); the added cost per task is the
paired ratio's excess times plain Dask's time, per task.  The goal is a ratio under
1.05.  Plugins other than the builtin NumPy backend are not loaded
(``PRISM_DISABLE_PLUGIN_AUTOLOAD=1``), so that Prism's dispatch runs the same NumPy functions
plain Dask calls.  Besides, in this process: what Prism's task wrapper adds around one call on
a worker.

Prints a Markdown report; ``--output PREFIX`` writes PREFIX.json and PREFIX.md.

Usage::

    python benchmarks/bench_distributed.py [--tasks 1000] [--repeat 11] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any


def _best(fn: Callable[[], Any], number: int, repeat: int = 7) -> float:
    """Seconds per call of ``fn``: the minimum over ``repeat`` runs of ``number`` calls."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="small tasks per measurement")
    parser.add_argument("--repeat", type=int, default=11, help="interleaved rounds")
    parser.add_argument("--n", type=int, default=2048, help="matmul size")
    parser.add_argument("--chunks", type=int, default=8, help="blocks of the large cases")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", default=None, help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args()

    cache = tempfile.mkdtemp(prefix="prism-bench-distributed-")
    os.environ["PRISM_CACHE_DIR"] = cache  # the workers inherit both
    os.environ["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"

    from importlib.metadata import version

    import distributed
    import numpy as np

    import prism_core as prism
    from prism_core.distributed import PrismCall, WorkerScope, connect

    wait: Any = distributed.wait  # unannotated

    began = time.perf_counter()
    load_before = os.getloadavg()[0]  # 1-minute load average: how busy the machine was
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(8) for _ in range(args.tasks)]
    ys = [rng.standard_normal(8) for _ in range(args.tasks)]
    single = max(args.tasks // 2, 1)

    with connect(
        n_workers=args.workers,
        threads_per_worker=1,
        dashboard_address="127.0.0.1:0",
        local_directory=cache,
    ) as pc:
        client: Any = pc.client  # distributed leaves its methods unannotated
        host = next(iter(pc.workers().values())).devices[0].device_type
        everyone = sorted(pc.workers())

        def timed(submit: Callable[[], Any], finish: Callable[[Any], Any]) -> float:
            """Submit, then wait for every result; the seconds the submission took."""
            start = time.perf_counter()
            futures = submit()
            submitted = time.perf_counter() - start
            finish(futures)
            return submitted

        gather = client.gather

        def small_plain() -> float:
            return timed(lambda: client.map(np.add, xs, ys, pure=False), gather)

        def small_op() -> float:
            return timed(lambda: pc.map_op("add", xs, ys, pure=False), gather)

        def small_placed() -> float:
            return timed(
                lambda: client.map(
                    np.add, xs, ys, workers=everyone, allow_other_workers=False, pure=False
                ),
                gather,
            )

        def small_routed() -> float:
            return timed(
                lambda: pc.map(np.add, xs, ys, requires={"kind": "cpu"}, pure=False), gather
            )

        pairs = list(zip(xs[:single], ys, strict=False))

        def one_plain() -> float:
            return timed(
                lambda: [client.submit(np.add, x, y, pure=False) for x, y in pairs], gather
            )

        def one_op() -> float:
            return timed(lambda: [pc.run_op("add", x, y, pure=False) for x, y in pairs], gather)

        n, k = args.n, args.chunks
        a = rng.standard_normal((n, n))
        b = rng.standard_normal((n, n))
        blocks = client.scatter(np.array_split(a, k), broadcast=False)
        b_future = client.scatter(b, broadcast=True)
        signal = rng.standard_normal((64, 1 << 18))
        rows = client.scatter(np.array_split(signal, k), broadcast=False)
        wait([*blocks, b_future, *rows])

        def matmul_plain() -> float:
            return timed(lambda: client.map(np.matmul, blocks, [b_future] * k, pure=False), wait)

        def matmul_op() -> float:
            return timed(lambda: pc.map_op("matmul", blocks, [b_future] * k, pure=False), wait)

        def fft_plain() -> float:
            return timed(lambda: client.map(np.fft.fft, rows, pure=False), wait)

        def fft_op() -> float:
            return timed(lambda: pc.map_op("fft.fft", rows, pure=False), wait)

        # The results agree (once, outside the timings).
        got = np.vstack(gather(pc.map_op("matmul", blocks, [b_future] * k)))
        np.testing.assert_allclose(got, a @ b, rtol=1e-9, atol=1e-9)
        got = np.vstack(gather(pc.map_op("fft.fft", rows)))
        np.testing.assert_allclose(got, np.fft.fft(signal), rtol=1e-9, atol=1e-6)

        cases: list[dict[str, Any]] = [
            {
                "case": f"{args.tasks} small tasks (add of 8 float64), map",
                "tasks": args.tasks,
                "contenders": {"plain Dask": small_plain, "Prism op (map_op)": small_op},
            },
            {
                "case": f"{args.tasks} small tasks placed on the workers, map",
                "tasks": args.tasks,
                "contenders": {
                    "plain Dask": small_placed,
                    "Prism routed (map, requires)": small_routed,
                },
            },
            {
                "case": f"{single} small tasks, one submit each",
                "tasks": single,
                "contenders": {"plain Dask": one_plain, "Prism op (run_op)": one_op},
            },
            {
                "case": f"matmul {n}x{n} float64 in {k} row blocks",
                "tasks": k,
                "contenders": {"plain Dask": matmul_plain, "Prism op (map_op)": matmul_op},
            },
            {
                "case": f"fft.fft of 64x{1 << 18} float64 in {k} row blocks",
                "tasks": k,
                "contenders": {"plain Dask": fft_plain, "Prism op (map_op)": fft_op},
            },
        ]
        for case in cases:
            contenders = list(case.pop("contenders").items())
            for _name, fn in contenders:
                fn()  # warm up: worker imports, dispatch plans, Dask's code paths
            times: dict[str, list[float]] = {name: [] for name, _ in contenders}
            submits: dict[str, list[float]] = {name: [] for name, _ in contenders}
            for i in range(args.repeat):
                # Interleaved, and in alternating order (ABBA), so that drift in the machine's
                # load falls on both alike.
                for name, fn in contenders if i % 2 == 0 else contenders[::-1]:
                    start = time.perf_counter()
                    submits[name].append(fn())
                    times[name].append(time.perf_counter() - start)
            case["times_s"] = times
            case["submit_s"] = submits
            print(f"measured: {case['case']}", flush=True)
        workers = [w.summary() for w in pc.workers().values()]

        # What Prism adds around one task, measured apart from Dask (steady where the cluster
        # timings are not): its own work on the client (run_op and a routed submit, without
        # Dask's submit; private methods, as run_op calls them) and the task wrapper on a
        # worker, in automatic mode (an op) and under a device scope (a routed function).
        x, y = xs[0], ys[0]
        add = prism.add
        op_call = PrismCall(None, op="add")
        scoped_call = PrismCall(np.add, placement=WorkerScope(host))

        def route_run_op() -> None:
            op = pc._op("add")
            requirement = pc._requirement(None)
            pc._check_dask_arguments({}, requirement[1], op)
            pc._call(None, op, pc._op_route(op, requirement, (x, y)), False)

        def route_submit() -> None:
            requirement = pc._requirement({"kind": "cpu"})
            pc._check_dask_arguments({}, requirement[1], None)
            pc._call(np.add, None, pc._route(requirement, None), False)

        micro = {
            "np.add(x, y)": _best(lambda: np.add(x, y), 20000),
            "prism.add(x, y)": _best(lambda: add(x, y), 20000),
            "worker: PrismCall op 'add', automatic": _best(lambda: op_call(x, y), 20000),
            "worker: PrismCall np.add under device(CPU)": _best(lambda: scoped_call(x, y), 20000),
            "client: run_op's routing (no submit)": _best(route_run_op, 20000),
            "client: submit(requires=)'s routing (no submit)": _best(route_submit, 20000),
        }

    wall = time.perf_counter() - began

    rows_out = []
    for case in cases:
        times, submits = case["times_s"], case["submit_s"]
        base = min(times["plain Dask"])
        base_submit = min(submits["plain Dask"])
        for name, values in times.items():
            best = min(values)
            submit = min(submits[name])
            # Round by round (the contenders ran back to back, in alternating order): the
            # machine's load changes between rounds far more than within one.
            paired = sorted(v / p for v, p in zip(values, times["plain Dask"], strict=True))
            rows_out.append(
                {
                    "case": case["case"],
                    "tasks": case["tasks"],
                    "contender": name,
                    "min_s": best,
                    "median_s": sorted(values)[len(values) // 2],
                    "ratio": best / base,
                    "paired_ratio": paired[len(paired) // 2],
                    "added_per_task_us": (best - base) / case["tasks"] * 1e6,
                    "paired_added_per_task_us": (paired[len(paired) // 2] - 1)
                    * base
                    / case["tasks"]
                    * 1e6,
                    "submit_per_task_us": submit / case["tasks"] * 1e6,
                    "submit_added_per_task_us": (submit - base_submit) / case["tasks"] * 1e6,
                    "times_s": values,
                    "submit_s": submits[name],
                }
            )
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python benchmarks/bench_distributed.py "
        f"--tasks {args.tasks} --repeat {args.repeat} --n {args.n} --chunks {args.chunks} "
        f"--workers {args.workers}",
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "dask": version("dask"),
        "distributed": version("distributed"),
        "numpy": np.__version__,
        "prism": prism.__version__,
        "workers": workers,
        "rounds": args.repeat,
        "wall_s": wall,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }
    text = render(meta, rows_out, micro)
    print(text)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.with_suffix(".json").write_text(
            json.dumps({"meta": meta, "rows": rows_out, "micro_s": micro}, indent=2) + "\n",
            encoding="utf-8",
        )
        out.with_suffix(".md").write_text(text, encoding="utf-8")
    return 0


def render(meta: dict[str, Any], rows: list[dict[str, Any]], micro: dict[str, float]) -> str:
    lines = [
        f"# Prism on Dask: added cost per task ({meta['date']})",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs ({meta['machine']}), Python "
        f"{meta['python']}, Dask {meta['dask']}, NumPy {meta['numpy']}; a LocalCluster of "
        f"{len(meta['workers'])} worker processes with one thread each "
        f"({'; '.join(meta['workers'])}). {meta['rounds']} rounds, the contenders back to "
        f"back in alternating order; whole run {meta['wall_s']:.0f} s; load average "
        f"{meta['load_before']:.1f} before, {meta['load_after']:.1f} after (other work on the "
        "machine).",
        "",
        "Ratios to plain Dask: of the minima, and the median of the round-by-round ratios "
        "(*paired*, the steadier on a shared machine); the added cost per task is the paired "
        "ratio's excess times plain Dask's time, per task.",
        "",
        "| case | contender | min | median | ratio (minima) | ratio (paired) | "
        "added per task | submission per task (added) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        plain = r["contender"] == "plain Dask"
        added = "" if plain else f"{r['paired_added_per_task_us']:+.1f} µs"
        ratios = "" if plain else f"{r['ratio']:.3f} | {r['paired_ratio']:.3f}"
        submit = f"{r['submit_per_task_us']:.1f} µs" + (
            "" if plain else f" ({r['submit_added_per_task_us']:+.1f} µs)"
        )
        lines.append(
            f"| {r['case']} | {r['contender']} | {r['min_s'] * 1e3:.1f} ms | "
            f"{r['median_s'] * 1e3:.1f} ms | {ratios or '1 | 1'} | {added} | {submit} |"
        )
    lines += [
        "",
        "## Prism's own work per task, measured apart from Dask",
        "",
        "| call | µs per call |",
        "|---|---|",
        *(f"| `{name}` | {seconds * 1e6:.2f} |" for name, seconds in micro.items()),
        "",
        "What that adds to plain Dask's cost per task in this run (plain Dask's minimum per "
        "task; Prism's work: the routing on the client where it is done per task, and what "
        "the wrapper costs on the worker beyond `np.add`):",
        "",
        "| case | plain Dask per task | Prism's own work per task | ratio |",
        "|---|---|---|---|",
    ]
    plain = {r["case"]: r["min_s"] / r["tasks"] for r in rows if r["contender"] == "plain Dask"}
    bare = micro["np.add(x, y)"]
    own = {
        "Prism op (map_op)": micro["worker: PrismCall op 'add', automatic"] - bare,
        "Prism routed (map, requires)": micro["worker: PrismCall np.add under device(CPU)"] - bare,
        "Prism op (run_op)": micro["client: run_op's routing (no submit)"]
        + micro["worker: PrismCall op 'add', automatic"]
        - bare,
    }
    for r in rows:
        if r["contender"] in own and not r["case"].startswith(("matmul", "fft")):
            base, extra = plain[r["case"]], own[r["contender"]]
            lines.append(
                f"| {r['case']}: {r['contender']} | {base * 1e6:.0f} µs | "
                f"{extra * 1e6:.1f} µs | {1 + extra / base:.3f} |"
            )
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
