"""The GPU check's ``function-kernels`` step: NumPy-style kernels placed whole by
``prism.function`` on torch-CUDA and CuPy, against a hand port and NumPy.

For each kernel of ``benchmarks/kernels`` (its ``np`` bound to the Prism-first namespace):

* **hand port**: the same kernel module with ``np`` bound to ``cupy`` (what a user would write
  with ``import cupy as np``), on CuPy arrays;
* **Prism on CuPy**: ``prism.function(kernel, backends=["cuda"], requires={"kind": "gpu"})`` on
  the same CuPy arrays (nothing moves);
* **Prism on torch-CUDA**: ``prism.function(kernel, backends=["torch"], requires={"kind":
  "gpu"})`` on torch CUDA tensors holding the same values;
* **NumPy alone**: the kernel module itself on the NumPy arguments.

Each GPU case synchronises its device before the clock stops; rounds are interleaved and each
case's time is the minimum over them.  Every result is compared with NumPy's.  The goal: Prism
on CuPy at least 0.9x as fast as the hand port (hand port time / Prism's time >= 0.9) on every
kernel that runs.

Without a GPU (or without CuPy) the script runs each kernel once pinned to numpy at a small size
(the harness works) and says ``skipped: ...`` with the reason, as the other GPU scripts do.

Usage::

    python benchmarks/gpu/function_kernels.py --output FILE.json [--rounds N] [--kernels a,b]
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import kernels

import prism_core as prism

#: Hand port time / Prism on CuPy's time, at least this on every kernel.
GOAL = 0.9
#: Sizes on the GPU: big enough that the device, not the launch, dominates most kernels.
SIZES = {
    "heat": 1024,
    "trisolve": 256,
    "nbody": 1024,
    "conv2d": 256,
    "lowpass": 1 << 20,
    "histogram": 1 << 22,
    "power_iteration": 2048,
    "mandelbrot": 512,
    "pairwise": 2048,
    "logsumexp": 1 << 16,
    "prefix": 1 << 20,
    "cg": 512,
}


def no_gpu() -> str | None:
    """Why the GPU step cannot run here, or ``None``."""
    try:
        import torch
    except ImportError as exc:
        return f"torch cannot be imported: {exc}"
    if not torch.cuda.is_available():
        return f"torch {torch.__version__}: torch.cuda.is_available() is False"
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return f"CuPy is not usable: {type(exc).__name__}: {exc}"
    return None


def to_numpy(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [to_numpy(v) for v in value]
    if hasattr(value, "get") and type(value).__module__.startswith("cupy"):
        return value.get()
    if type(value).__module__.startswith("torch"):
        return value.detach().cpu().numpy()
    return numpy.asarray(value)


def matches(got: Any, want: Any) -> bool:
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(want, list):
        return len(got) == len(want) and all(matches(g, w) for g, w in zip(got, want, strict=True))
    if want.dtype.kind in "biu":
        return bool(numpy.array_equal(got, want))
    return bool(numpy.allclose(got, want, rtol=1e-6, atol=1e-9))


def call(fn: Callable[..., Any], args: Any) -> Callable[[], Any]:
    """``fn(*args)`` as a case to time."""
    return lambda: fn(*args)


def describe(exc: BaseException) -> str:
    """An exception on one line, at most 300 characters."""
    text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    return f"{type(exc).__name__}: {text}"[:300]


def hand_port_namespace(cupy: Any) -> Any:
    """``cupy``, with the Array API spellings the kernels use that CuPy may lack, written as a
    user porting the kernel by hand would write them (CuPy's own functions underneath)."""

    class Linalg:
        vector_norm = staticmethod(lambda x, **kw: cupy.linalg.norm(x, **kw))

    class Shim:
        linalg = Linalg
        fft = cupy.fft

        @staticmethod
        def concat(arrays: Any, axis: int = 0) -> Any:
            return cupy.concatenate(arrays, axis=axis)

        @staticmethod
        def astype(x: Any, dtype: Any) -> Any:
            return x.astype(dtype)

        @staticmethod
        def cumulative_sum(x: Any, include_initial: bool = False) -> Any:
            c = cupy.cumsum(x)
            return cupy.concatenate((cupy.zeros(1, c.dtype), c)) if include_initial else c

    return kernels.PrismFirst(cupy, Shim)


def difference(got: Any, want: Any) -> str:
    """How a result differs from NumPy's: the elements off, the largest difference."""
    got, want = to_numpy(got), to_numpy(want)
    if isinstance(want, list):
        return "; ".join(
            f"result {i}: {difference(g, w)}"
            for i, (g, w) in enumerate(zip(got, want, strict=True))
        )
    if numpy.shape(got) != numpy.shape(want):
        return f"shape {numpy.shape(got)} against {numpy.shape(want)}"
    off = ~numpy.isclose(got, want, rtol=1e-6, atol=1e-9)
    if want.dtype.kind in "biu":
        off = got != want
    if not off.any():
        return "same"
    worst = numpy.max(numpy.abs(numpy.asarray(got, dtype=complex) - want))
    return f"{int(off.sum())} of {off.size} elements differ (largest {worst:.3g})"


def measure(cases: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    best = dict.fromkeys(cases, math.inf)
    for fn in cases.values():
        fn()  # warm: plans, compiles CuPy's kernels, fills the caching allocators
    for _ in range(rounds):
        for name, fn in cases.items():
            number = 3
            start = time.perf_counter()
            for _ in range(number):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / number)
    return best


def dry(names: list[str], reason: str) -> int:
    """No GPU: each kernel once, pinned to numpy, at a small size; then say why skipped."""
    for name in names:
        module = kernels.load(name)
        args = module.example(8)
        want = module.kernel(*copy.deepcopy(args))
        F = prism.function(kernels.bind(module).kernel, backends=["numpy"])
        assert matches(F(*args), want), name
    print(f"the harness ran {len(names)} kernels on numpy")
    print(f"skipped: no GPU: {reason}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--kernels", default=None, help="comma-separated kernels (default all)")
    args = parser.parse_args()
    names = args.kernels.split(",") if args.kernels else list(kernels.NAMES)
    why = no_gpu()
    if why is not None:
        return dry(names, why)

    import cupy
    import torch

    def sync_all() -> None:
        cupy.cuda.Device().synchronize()
        torch.cuda.synchronize()

    def timed(fn: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            out = fn()
            sync_all()
            return out

        return run

    def on(value: Any, to: Callable[[Any], Any]) -> Any:
        return to(value) if isinstance(value, numpy.ndarray) else value

    rows = []
    for name in names:
        module = kernels.load(name)
        inputs = module.example(SIZES[name], "float64")
        want = module.kernel(*copy.deepcopy(inputs))
        hand = kernels.bind(module, hand_port_namespace(cupy))
        bound = kernels.bind(module)
        row: dict[str, Any] = {
            "kernel": name,
            "n": SIZES[name],
            "seconds": {},
            "errors": {},
            "differs": {},
        }
        cases: dict[str, Callable[[], Any]] = {}
        cupy_args = [on(a, cupy.asarray) for a in copy.deepcopy(inputs)]
        try:
            if not matches(hand.kernel(*copy.deepcopy(cupy_args)), want):
                row["differs"]["hand port (CuPy)"] = difference(
                    hand.kernel(*copy.deepcopy(cupy_args)), want
                )
        except Exception as exc:
            row["errors"]["hand port (CuPy)"] = describe(exc)
        if "hand port (CuPy)" not in row["errors"]:
            cases["hand port (CuPy)"] = timed(call(hand.kernel, cupy_args))
        placements = {
            "Prism on CuPy": ("cuda", cupy.asarray),
            "Prism on torch-CUDA": ("torch", functools.partial(torch.asarray, device="cuda")),
        }
        for label, (backend, move) in placements.items():
            F = prism.function(bound.kernel, backends=[backend], requires={"kind": "gpu"})
            try:
                own = [on(a, move) for a in copy.deepcopy(inputs)]
                got, report = F.run(*own)
                if not matches(got, want):  # timed all the same; the step is missed
                    row["differs"][label] = difference(got, want)
                row[f"{label} ran on"] = f"{report.backend} on {report.device}"
            except Exception as exc:
                row["errors"][label] = describe(exc)
                continue
            cases[label] = timed(call(F, own))
        alone = copy.deepcopy(inputs)
        cases["NumPy alone"] = call(module.kernel, alone)
        try:
            row["seconds"] = measure(cases, args.rounds)
        except Exception as exc:
            row["errors"]["timing"] = describe(exc)
            rows.append(row)
            continue
        s = row["seconds"]
        if "Prism on CuPy" in s and "hand port (CuPy)" in s:
            row["hand_over_prism_cupy"] = s["hand port (CuPy)"] / s["Prism on CuPy"]
        if "Prism on torch-CUDA" in s and "hand port (CuPy)" in s:
            row["hand_over_prism_torch"] = s["hand port (CuPy)"] / s["Prism on torch-CUDA"]
        prism_best = min(s.get("Prism on CuPy", math.inf), s.get("Prism on torch-CUDA", math.inf))
        if prism_best < math.inf:
            row["numpy_over_best_prism"] = s["NumPy alone"] / prism_best
        rows.append(row)
        print(json.dumps(row), flush=True)

    ratios = [r["hand_over_prism_cupy"] for r in rows if "hand_over_prism_cupy" in r]
    below = [r["kernel"] for r in rows if r.get("hand_over_prism_cupy", math.inf) < GOAL]
    result = {
        "goal": GOAL,
        "gpu": torch.cuda.get_device_name(0),
        "rows": rows,
        "geomean_hand_over_prism_cupy": math.exp(sum(map(math.log, ratios)) / len(ratios))
        if ratios
        else None,
        "below_goal": below,
        "not_run": {r["kernel"]: r["errors"] for r in rows if r["errors"]},
        "differs": {r["kernel"]: r["differs"] for r in rows if r["differs"]},
    }
    args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
