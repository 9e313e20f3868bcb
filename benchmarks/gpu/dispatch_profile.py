"""Where Prism's added cost per call goes on a GPU, and what moving NumPy data costs there.

For a few calls on data already on the GPU (torch CUDA tensors; CuPy arrays), inside
``use_backend(NAME)`` as ``bench_backends.py`` times them: the cached plan's path (``fn``: no
per-call check; ``checked``: a ``can_run`` first; ``call``: the general path with moves),
the time of the direct call, of Prism's, and of the plan's ``can_run`` alone (minimum of
repeated batches), and the top of a cProfile of Prism's calls.  Then, for NumPy inputs, each
GPU backend's round trip inside ``prism.device(GPU)`` (copy in, compute, copy out) against the
copies alone, so that the offload model's transfer figures can be checked.

Without a GPU it prints ``skipped: ...`` and exits 0.

Usage::

    python benchmarks/gpu/dispatch_profile.py --output FILE.json
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import json
import pstats
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import prism_core as prism


def best(fn: Callable[[], Any], sync: Callable[[], Any], number: int = 200) -> float:
    """Minimum over 5 batches of the mean seconds per call."""
    fn()
    sync()
    out = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        sync()
        out = min(out, (time.perf_counter() - start) / number)
    return out


def plan_of(op: str) -> dict[str, Any]:
    """The path of the plan the op's last call cached (a diagnostic: it reads the op's plan
    cache), and its ``can_run`` under ``"check"``."""
    plans = list(prism.get_op(op)._plans.values())
    if not plans:
        return {"path": "none cached", "check": None}
    plan = plans[-1]
    path = "fn" if plan.fn is not None else "checked" if plan.checked is not None else "call"
    first = plan.first.name if plan.first is not None else None
    moves = {k: list(getattr(v, "sentences", ())) for k, v in plan.moves.items()}
    return {"path": path, "first": first, "backend": plan.backend, "moves": moves,
            "check": plan.check}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, required=True)
    args = parser.parse_args()
    try:
        import torch
    except ImportError as exc:
        print(f"skipped: torch is not installed ({exc})")
        return 0
    if not torch.cuda.is_available():
        print(f"skipped: no GPU that torch can use (torch {torch.__version__})")
        return 0
    import cupy

    rng = np.random.default_rng(0)
    host = {
        ("matmul", "float32"): (rng.standard_normal((64, 64), dtype=np.float32),) * 2,
        ("matmul", "float64"): (rng.standard_normal((64, 64)),) * 2,
        ("fft.fft", "float32"): (rng.standard_normal(4096, dtype=np.float32),),
        ("linalg.solve", "float64"): (rng.standard_normal((8, 8)) + 8 * np.eye(8),
                                      rng.standard_normal(8)),
    }  # fmt: skip
    direct = {
        "torch": ({"matmul": torch.matmul, "fft.fft": torch.fft.fft,
                   "linalg.solve": torch.linalg.solve},
                  lambda x: torch.from_numpy(x).cuda(), torch.cuda.synchronize),
        "cuda": ({"matmul": cupy.matmul, "fft.fft": cupy.fft.fft,
                  "linalg.solve": cupy.linalg.solve},
                 cupy.asarray, cupy.cuda.Device().synchronize),
    }  # fmt: skip
    rows: list[dict[str, Any]] = []
    for backend, (table, convert, sync) in direct.items():
        for (op, dtype), arrays in host.items():
            on_gpu = tuple(convert(np.ascontiguousarray(a)) for a in arrays)
            fn = prism.get_op(op).function
            through = functools.partial(fn, *on_gpu)
            with prism.use_backend(backend):
                through()
                plan = plan_of(op)
                check = plan.pop("check")
                t_prism = best(through, sync)
                t_check = None if check is None else best(functools.partial(check, *on_gpu),
                                                          lambda: None, 2000)  # fmt: skip
                profile = cProfile.Profile()
                profile.enable()
                for _ in range(2000):
                    through()
                sync()
                profile.disable()
            t_direct = best(functools.partial(table[op], *on_gpu), sync)
            text = io.StringIO()
            pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(12)
            row: dict[str, Any] = {"backend": backend, "op": op, "dtype": dtype, "plan": plan,
                   "direct_us": t_direct * 1e6, "prism_us": t_prism * 1e6,
                   "can_run_us": None if t_check is None else t_check * 1e6,
                   "profile": text.getvalue().splitlines()[:40]}  # fmt: skip
            rows.append(row)
            print(f"{backend} {op} {dtype}: direct {row['direct_us']:.1f} us, prism "
                  f"{row['prism_us']:.1f} us, can_run {row['can_run_us']}, plan {plan}",
                  flush=True)  # fmt: skip
            print("\n".join(row["profile"][:30]), flush=True)

    # NumPy in, NumPy out on the GPU: each backend's round trip against the copies alone.
    gpu = next(d.description for d in prism.hardware.present_devices().devices
               if d.description.kind == "gpu")  # fmt: skip
    trips: list[dict[str, Any]] = []
    for n in (1024, 4096):
        a = rng.standard_normal((n, n), dtype=np.float32)

        def torch_trip(a: Any = a) -> Any:
            return torch.from_numpy(a).cuda().cpu().numpy()

        def cupy_trip(a: Any = a) -> Any:
            return cupy.asnumpy(cupy.asarray(a))

        product = functools.partial(prism.matmul, a, a)
        entry: dict[str, Any] = {"n": n}
        entry["torch in+out ms"] = best(torch_trip, torch.cuda.synchronize, 3) * 1e3
        entry["cupy in+out ms"] = best(cupy_trip, lambda: None, 3) * 1e3
        for backend in ("torch", "cuda"):
            with prism.device(gpu), prism.use_backend(backend):
                entry[f"prism matmul on {backend} ms"] = best(product, lambda: None, 3) * 1e3
        with prism.device(gpu):
            entry["prism matmul in device scope chose"] = prism.explain("matmul", a, a).chosen
            entry["prism matmul in device scope ms"] = best(product, lambda: None, 3) * 1e3
        entry["automatic chose"] = prism.explain("matmul", a, a).chosen
        trips.append(entry)
        print(entry, flush=True)
    args.output.write_text(json.dumps({"calls": rows, "round_trips": trips}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
