"""Every installed backend, through Prism and directly: what Prism adds per call, and which
backend is fastest at each size (the oracle the tuner of the next issue must match).

For each op (``matmul``, ``fft.fft``, ``linalg.svd``, ``linalg.solve``), dtype (float32,
float64), size and installed backend, in one process and interleaved (round by round, so that
drifts of a shared machine hit every contender alike):

* **direct**: the framework's own function on the backend's own arrays (``np.matmul``,
  ``scipy.linalg.svd``, ``torch.matmul`` on tensors, ...);
* **prism**: ``prism_core.<op>`` on the same arrays, inside ``use_backend(name)`` entered once
  around the batch (the decision cached, as in a loop of calls).

Each direct batch starts as Prism's does after another backend ran: with the other backends'
idle thread pools released (``threads.entering(name)``, what dispatch calls), so that neither
side is timed against a pool still spinning from the batch before.  "automatic" is the backend
Prism's automatic mode picks for the NumPy inputs (``explain``): the decision the next issue's
tuner must bring to the fastest one.

Each figure is the minimum over rounds of the mean over a batch of calls (batches sized to about
``--batch-seconds``).  "added" is prism - direct in microseconds; "ratio" prism / direct.

Usage::

    python benchmarks/bench_backends.py [--quick] [--rounds N] [--output PREFIX]
        [--device cuda] [--backends torch,cuda]

writes PREFIX.json and PREFIX.md (default benchmarks/results/backends-DATE).  On a GPU host the
torch backend's arrays are CUDA tensors when ``--device cuda`` is given, and every timed call
synchronizes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import prism_core as prism
from prism_core.kernel import threads

SIZES = {
    "matmul": [4, 16, 64, 256, 1024, 2048],
    "fft.fft": [2**4, 2**8, 2**12, 2**16, 2**20],
    "linalg.svd": [8, 32, 128, 512, 1024],
    "linalg.solve": [8, 64, 256, 1024],
}
QUICK = {
    "matmul": [4, 64, 256],
    "fft.fft": [2**4, 2**12],
    "linalg.svd": [8, 128],
    "linalg.solve": [8, 256],
}


def inputs(op: str, n: int, dtype: str) -> tuple[Any, ...]:
    """The NumPy arguments ``prism tune`` and ``prism bench`` use for ``op`` at size ``n``."""
    from prism_core._tuning.tuner import example_arguments

    return example_arguments(op, n, dtype)


def direct_function(backend: str, op: str, device: str) -> Any:
    """(framework function, converter of NumPy inputs to the backend's arrays), or None."""
    if backend == "numpy":
        table = {
            "matmul": np.matmul,
            "fft.fft": np.fft.fft,
            "linalg.svd": np.linalg.svd,
            "linalg.solve": np.linalg.solve,
        }
        return table[op], lambda x: x
    if backend == "scipy":
        import scipy.fft
        import scipy.linalg

        table = {
            "matmul": np.matmul,  # what a SciPy user writes; the plugin calls BLAS gemm
            "fft.fft": scipy.fft.fft,
            "linalg.svd": scipy.linalg.svd,
            "linalg.solve": scipy.linalg.solve,
        }
        return table[op], lambda x: x
    if backend == "torch":
        import torch

        table = {
            "matmul": torch.matmul,
            "fft.fft": torch.fft.fft,
            "linalg.svd": torch.linalg.svd,
            "linalg.solve": torch.linalg.solve,
        }
        from_dlpack = torch.utils.dlpack.from_dlpack
        return table[op], lambda x: from_dlpack(x).to(device)
    if backend == "cuda":
        import cupy

        table = {
            "matmul": cupy.matmul,
            "fft.fft": cupy.fft.fft,
            "linalg.svd": cupy.linalg.svd,
            "linalg.solve": cupy.linalg.solve,
        }
        return table[op], cupy.asarray
    return None


def batch_time(fn: Callable[[], Any], sync: Callable[[], None], seconds: float) -> float:
    """Mean seconds per call over a batch sized to take about ``seconds``."""
    fn()
    sync()
    start = time.perf_counter()
    fn()
    sync()
    once = max(time.perf_counter() - start, 1e-7)
    number = max(1, min(100_000, int(seconds / once)))
    start = time.perf_counter()
    for _ in range(number):
        fn()
    sync()
    return (time.perf_counter() - start) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few sizes only")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch-seconds", type=float, default=0.05)
    parser.add_argument("--device", default="cpu", help="torch device for torch arrays")
    parser.add_argument("--backends", default=None, help="comma-separated: only these backends")
    parser.add_argument("--output", default=None)
    args = parser.parse_args()

    installed = [b for b in prism.extending.backends() if b.available]
    if args.backends is not None:
        installed = [b for b in installed if b.name in args.backends.split(",")]
    if args.device.startswith("cuda"):
        try:
            import torch
        except ImportError as exc:
            print(f"skipped: --device cuda needs torch ({exc})")
            return
        if not torch.cuda.is_available():
            print(f"skipped: no GPU that torch can use (torch {torch.__version__}: "
                  "torch.cuda.is_available() is False)")  # fmt: skip
            return
    names = [b.name for b in installed]
    sizes = QUICK if args.quick else SIZES
    sync_for: dict[str, Callable[[], None]] = {b.name: b.backend.synchronize for b in installed}
    rows: list[dict[str, Any]] = []
    for op, ns in sizes.items():
        fn_prism = prism.get_op(op).function
        for dtype in ("float32", "float64"):
            for n in ns:
                host = inputs(op, n, dtype)
                contenders: dict[str, tuple[Any, Any, Any]] = {}
                for name in names:
                    found = direct_function(name, op, args.device)
                    if found is None:
                        continue
                    direct, convert = found
                    arrays = tuple(convert(x) for x in host)
                    scope = prism.use_backend(name)

                    def through(arrays: tuple[Any, ...] = arrays, fn: Any = fn_prism) -> Any:
                        return fn(*arrays)

                    def plain(arrays: tuple[Any, ...] = arrays, direct: Any = direct) -> Any:
                        return direct(*arrays)

                    try:
                        with scope:
                            through()
                    except Exception as exc:  # a backend without this op or dtype: say so
                        rows.append({"op": op, "dtype": dtype, "n": n, "backend": name,
                                     "error": f"{type(exc).__name__}: {exc}"[:200]})  # fmt: skip
                        continue
                    contenders[name] = (through, plain, scope)
                best: dict[str, list[float]] = {k: [] for k in contenders}
                best_direct: dict[str, list[float]] = {k: [] for k in contenders}
                for _ in range(args.rounds):
                    for name, (through, plain, scope) in contenders.items():
                        sync = sync_for[name]
                        threads.entering(name)  # as dispatch does before the Prism batch
                        best_direct[name].append(batch_time(plain, sync, args.batch_seconds))
                        with scope:  # entered once, as around a loop of calls
                            best[name].append(batch_time(through, sync, args.batch_seconds))
                automatic = fn_prism.explain(*host).chosen_backend
                for name in contenders:
                    p, d = min(best[name]), min(best_direct[name])
                    rows.append({
                        "op": op, "dtype": dtype, "n": n, "backend": name,
                        "automatic": automatic,
                        "prism_us": round(p * 1e6, 3), "direct_us": round(d * 1e6, 3),
                        "added_us": round((p - d) * 1e6, 3), "ratio": round(p / d, 3),
                    })  # fmt: skip
                print(f"{op:13s} {dtype:8s} n={n:<8d}", "  ".join(
                    f"{r['backend']}={r['prism_us']:.1f}us(x{r['ratio']:.2f})"
                    for r in rows[-len(contenders):]
                ), flush=True)  # fmt: skip

    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "backends": {b.name: b.version for b in installed},
        "rounds": args.rounds,
        "batch_seconds": args.batch_seconds,
        "device": args.device,
        "command": "python benchmarks/bench_backends.py " + " ".join(sys.argv[1:]),
    }
    prefix = args.output or f"benchmarks/results/backends-{meta['date']}"
    with open(prefix + ".json", "w", encoding="utf-8") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    with open(prefix + ".md", "w", encoding="utf-8") as fh:
        fh.write(render(meta, rows))
    print(f"wrote {prefix}.json and {prefix}.md")


def render(meta: dict[str, Any], rows: list[dict[str, Any]]) -> str:
    lines = [
        f"# Backends through Prism and directly ({meta['date']})",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs ({meta['machine']}), Python "
        f"{meta['python']}; backends: "
        + ", ".join(f"{k} {v}" for k, v in meta["backends"].items())
        + ". Minimum over rounds of the mean of a batch; interleaved.",
        "",
        "## Prism's added cost per call (µs; ratio to the direct call)",
        "",
        "| op | dtype | n | " + " | ".join(meta["backends"]) + " |",
        "|---|---|---|" + "---|" * len(meta["backends"]),
    ]
    keyed: dict[tuple[str, str, int], dict[str, Any]] = {}
    for r in rows:
        keyed.setdefault((r["op"], r["dtype"], r["n"]), {})[r["backend"]] = r
    for (op, dtype, n), by in keyed.items():
        cells = []
        for b in meta["backends"]:
            found = by.get(b)
            if found is None:
                cells.append("")
            elif "error" in found:
                cells.append("n/a")
            else:
                cells.append(f"{found['added_us']:+.2f} (x{found['ratio']:.3f})")
        lines.append(f"| {op} | {dtype} | {n} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Fastest backend per size (through Prism; µs per call)",
        "",
        "| op | dtype | n | fastest | automatic picks | " + " | ".join(meta["backends"]) + " |",
        "|---|---|---|---|---|" + "---|" * len(meta["backends"]),
    ]
    for (op, dtype, n), by in keyed.items():
        timed = {b: r["prism_us"] for b, r in by.items() if "prism_us" in r}
        if not timed:
            continue
        fastest = min(timed, key=timed.__getitem__)
        auto = next((r.get("automatic") for r in by.values() if "prism_us" in r), None)
        if auto in timed and auto != fastest:
            auto = f"{auto} (x{timed[auto] / timed[fastest]:.2f})"
        cells = [f"{timed[b]:.1f}" if b in timed else "" for b in meta["backends"]]
        lines.append(
            f"| {op} | {dtype} | {n} | **{fastest}** | {auto} | " + " | ".join(cells) + " |"
        )
    errors = [r for r in rows if "error" in r]
    if errors:
        lines += ["", "## Not measured", ""]
        lines += [
            f"- {r['backend']} {r['op']} {r['dtype']} n={r['n']}: {r['error']}" for r in errors
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
