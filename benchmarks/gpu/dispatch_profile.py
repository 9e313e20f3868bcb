"""Prism's added cost per call on data already on a GPU, where it goes, and what moving NumPy
data to the GPU costs.

1. **The added cost** (the GPU check's goal, docs/gpu.md): for a few small calls (``add`` and
   ``sum`` of 1,024 elements, ``matmul`` of 16 x 16 and 64 x 64, float32) on each GPU backend's
   arrays (torch CUDA tensors; CuPy arrays), the plain Prism call (``prism.add(x, y)``, no
   scope: what a user writes) against the library's own call (``torch.add(x, y)``), and, for
   CuPy, NumPy's call on the same arrays (``np.add(x, y)``: the dispatch CuPy does itself,
   through NumPy's ``__array_ufunc__`` / ``__array_function__`` protocols).  Each is timed as
   batches of ``--number`` calls, the GPU synchronised at the end of each batch, the callers
   interleaved batch by batch, and the minimum over ``--repeats`` batches taken; the added
   cost is Prism's time per call minus the library's.  Each row records where the result
   lives, the path of the plan the call cached and the top of a cProfile of Prism's calls.
2. **Round trips** (a diagnostic): for NumPy inputs, each GPU backend's round trip inside
   ``prism.device(GPU)`` (copy in, compute, copy out) against the copies alone, so that the
   offload model's transfer figures can be checked.

Without a GPU (or with ``--dry``) it runs part 1 on NumPy arrays on the CPU (``prism.add``
against ``np.add``: the CPU cached path, and the harness checked), writes the output, and
prints ``skipped: ...`` with the reason.

Usage::

    python benchmarks/gpu/dispatch_profile.py --output FILE.json [--number 50] [--repeats 200]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import json
import pstats
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import prism_core as prism

#: The calls timed: (op, shapes, dtype).  Small, so that the call's own cost shows.
CASES: list[tuple[str, list[tuple[int, ...]], str]] = [
    ("add", [(1024,), (1024,)], "float32"),
    ("matmul", [(16, 16), (16, 16)], "float32"),
    ("matmul", [(64, 64), (64, 64)], "float32"),
    ("sum", [(1024,)], "float32"),
]


def label(op: str, shapes: list[tuple[int, ...]], dtype: str) -> str:
    return f"{op} {','.join('x'.join(map(str, s)) for s in shapes)} {dtype}"


def interleaved(
    calls: dict[str, Callable[[], Any]], sync: Callable[[], Any], number: int, repeats: int
) -> dict[str, float]:
    """Seconds per call of each of ``calls``: batches of ``number`` calls, ``sync()`` at the
    end of each batch (inside the clock), the callers in turn batch by batch (their order
    alternating), the minimum over ``repeats`` batches."""
    for fn in calls.values():  # warm-up: plans cached, kernels compiled
        for _ in range(10):
            fn()
    sync()
    best = dict.fromkeys(calls, float("inf"))
    names = list(calls)
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            fn = calls[name]
            start = time.perf_counter()
            for _ in range(number):
                fn()
            sync()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def plan_of(op: str) -> dict[str, Any]:
    """The path of the plan the op's last call cached (``fn``: no per-call check; ``checked``:
    a ``can_run`` first; ``call``: the general path with moves), read from the op's plan cache:
    a diagnostic, which says so where that cache is not as it expects."""
    try:
        plans = list(prism.get_op(op)._plans.values())
        if not plans:
            return {"path": "none cached"}
        plan = plans[-1]
        path = "fn" if plan.fn is not None else "checked" if plan.checked is not None else "call"
        first = plan.first.name if plan.first is not None else None
        return {"path": path, "first": first, "backend": plan.backend}
    except Exception as exc:  # the plan cache is Prism's own business: not the goal's
        return {"path": f"unknown ({type(exc).__name__}: {exc})"}


def where(value: Any) -> str:
    """The type of a result and, for a GPU array, its device."""
    kind = f"{type(value).__module__.split('.')[0]}.{type(value).__name__}"
    device = getattr(value, "device", None)
    return kind if device is None else f"{kind} on {device}"


def top_of_profile(fn: Callable[[], Any], sync: Callable[[], Any], calls: int = 1000) -> list[str]:
    profile = cProfile.Profile()
    profile.enable()
    for _ in range(calls):
        fn()
    sync()
    profile.disable()
    text = io.StringIO()
    pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(12)
    return [line for line in text.getvalue().splitlines() if line.strip()][:30]


def added_cost(
    backend: str,
    convert: Callable[[np.ndarray], Any],
    direct: Callable[[str], Callable[..., Any]],
    protocol: bool,
    sync: Callable[[], Any],
    number: int,
    repeats: int,
) -> list[dict[str, Any]]:
    """Part 1 on one backend's arrays: a row per case."""
    rng = np.random.default_rng(0)
    rows = []
    for op, shapes, dtype in CASES:
        row: dict[str, Any] = {"backend": backend, "op": op, "case": label(op, shapes, dtype)}
        try:
            arrays = [convert(rng.standard_normal(s).astype(dtype)) for s in shapes]
            through = functools.partial(getattr(prism, op), *arrays)
            calls: dict[str, Callable[[], Any]] = {
                "direct": functools.partial(direct(op), *arrays),
                "prism": through,
            }
            if protocol:  # NumPy's function on the backend's arrays: the library's own dispatch
                try:
                    getattr(np, op)(*arrays)
                    calls["protocol"] = functools.partial(getattr(np, op), *arrays)
                except Exception as exc:
                    row["protocol_error"] = f"{type(exc).__name__}: {exc}"
            row["result"] = where(through())
            row["plan"] = plan_of(op)
            times = interleaved(calls, sync, number, repeats)
        except Exception as exc:
            row["error"] = f"{type(exc).__name__}: {exc}"
            rows.append(row)
            print(f"{backend} {row['case']}: {row['error']}", flush=True)
            continue
        row["direct_us"] = times["direct"] * 1e6
        row["prism_us"] = times["prism"] * 1e6
        row["added_us"] = row["prism_us"] - row["direct_us"]
        if "protocol" in times:
            row["protocol_us"] = times["protocol"] * 1e6
            row["protocol_added_us"] = row["protocol_us"] - row["direct_us"]
        row["profile"] = top_of_profile(through, sync)
        rows.append(row)
        print(
            f"{backend} {row['case']}: direct {row['direct_us']:.2f} us, Prism "
            f"{row['prism_us']:.2f} us (+{row['added_us']:.2f} us), result {row['result']}, "
            f"plan {row['plan']}"
            + (f"; NumPy's protocol +{row['protocol_added_us']:.2f} us" if "protocol_us" in row
               else ""),
            flush=True,
        )  # fmt: skip
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for backend in dict.fromkeys(r["backend"] for r in rows):
        timed = [r for r in rows if r["backend"] == backend and "added_us" in r]
        if timed:
            worst = max(timed, key=lambda r: r["added_us"])
            out[backend] = {
                "worst_added_us": worst["added_us"],
                "worst_case": worst["case"],
                "median_added_us": statistics.median(r["added_us"] for r in timed),
            }
    return out


def round_trips(torch: Any, cupy: Any) -> list[dict[str, Any]]:
    """NumPy in, NumPy out on the GPU: each backend's round trip against the copies alone."""

    def best(fn: Callable[[], Any], number: int = 2) -> float:
        """Minimum over 3 batches of ``number`` calls of the seconds per call."""
        fn()
        out = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(number):
                fn()
            out = min(out, (time.perf_counter() - start) / number)
        return out

    gpu = next(d.description for d in prism.hardware.present_devices().devices
               if d.description.kind == "gpu")  # fmt: skip
    rng = np.random.default_rng(1)
    trips: list[dict[str, Any]] = []
    for n in (1024, 4096):
        a = rng.standard_normal((n, n), dtype=np.float32)
        product = functools.partial(prism.matmul, a, a)
        entry: dict[str, Any] = {"n": n}

        def torch_trip(a: Any = a) -> Any:
            return torch.from_numpy(a).cuda().cpu().numpy()

        def cupy_trip(a: Any = a) -> Any:
            return cupy.asnumpy(cupy.asarray(a))

        def on_gpu(product: Callable[[], Any] = product) -> Any:
            return prism.to_numpy(product())  # the copy back waits for the GPU

        entry["torch in+out ms"] = best(torch_trip) * 1e3
        entry["cupy in+out ms"] = best(cupy_trip) * 1e3
        for backend in ("torch", "cuda"):
            with prism.device(gpu), prism.use_backend(backend):
                entry[f"prism matmul on {backend} ms"] = best(on_gpu) * 1e3
        entry["automatic chose"] = prism.explain("matmul", a, a).chosen
        entry["automatic ms"] = best(product) * 1e3
        trips.append(entry)
        print(entry, flush=True)
    return trips


def no_gpu() -> tuple[str | None, Any, Any]:
    """(why not, torch, cupy)."""
    try:
        import torch
    except ImportError as exc:
        return f"torch is not installed ({exc})", None, None
    if not torch.cuda.is_available():
        return f"no GPU that torch can use (torch {torch.__version__})", torch, None
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"CuPy is not usable: {type(exc).__name__}: {exc}", torch, None
    return None, torch, cupy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--number", type=int, default=50, help="calls per timed batch")
    parser.add_argument("--repeats", type=int, default=200, help="batches; the minimum is kept")
    parser.add_argument("--dry", action="store_true", help="part 1 on NumPy arrays only")
    args = parser.parse_args()
    why, torch, cupy = no_gpu()
    if args.dry and why is None:
        why = "--dry"
    found: dict[str, Any] = {"number": args.number, "repeats": args.repeats}
    if why is not None:
        # The CPU cached path, and the harness checked: NumPy arrays, prism.add against np.add.
        rows = added_cost("numpy", np.asarray, lambda op: getattr(np, op), False,
                          lambda: None, args.number, min(args.repeats, 20))  # fmt: skip
        found |= {"dry": why, "added": rows, "summary": summary(rows)}
        args.output.write_text(json.dumps(found, indent=1) + "\n")
        print(f"skipped: {why}; the added cost measured on NumPy arrays instead (the CPU path)")
        return 0

    def cupy_sync() -> None:
        cupy.cuda.get_current_stream().synchronize()

    rows = added_cost(
        "torch", lambda a: torch.asarray(a, device="cuda"), lambda op: getattr(torch, op),
        False, torch.cuda.synchronize, args.number, args.repeats,
    )  # fmt: skip
    rows += added_cost("cuda", cupy.asarray, lambda op: getattr(cupy, op), True, cupy_sync,
                       args.number, args.repeats)  # fmt: skip
    found |= {"gpu": torch.cuda.get_device_name(0), "added": rows, "summary": summary(rows)}
    try:
        found["round_trips"] = round_trips(torch, cupy)
    except Exception as exc:  # a diagnostic: its failure is recorded, not the step's
        found["round_trips_error"] = f"{type(exc).__name__}: {exc}"
    args.output.write_text(json.dumps(found, indent=1) + "\n")
    print(json.dumps(found["summary"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
