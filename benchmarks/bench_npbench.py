"""Real NumPy kernels written by others, placed whole by ``prism.function``: NPBench's 54.

NPBench (https://github.com/spcl/npbench, BSD-3-Clause; not vendored here: give a checkout
with ``--npbench``) holds 54 NumPy programs written by others: stencils, linear-algebra loops,
n-body, small CNN layers, FFTs.  Each is run the way a held-out suite of real kernels is run:
its module loaded afresh with its ``np`` bound to a namespace that looks names up in
``prism_core`` first and NumPy second (``kernels.PrismFirst``), its function wrapped unchanged
by ``prism.function``, and

* **pinned** to numpy, torch (CPU) and jax (``use_backend``): the outputs and every argument
  NPBench lists as an output are compared with the plain NumPy kernel on the same inputs, by
  NPBench's own measure (the relative error in the 2-norm at most 1e-5; integers exactly); a
  placement that cannot run it says why;
* **automatic** after ``prism.tuning.tune(F, *args)``, compared the same way;
* **timed**: each placement that matched, automatic mode and NumPy alone (the kernel module
  itself), in interleaved rounds, each call on fresh copies of the inputs (copied outside the
  timed region) after an untimed one; a case's time is the minimum over rounds.  The tuning
  cache is a fresh temporary one, unless ``--keep-cache``.

Goals (docs/functions.md, "Real kernels"): at least 85 % of the kernels run whole on two or
more backends and match NumPy; automatic / best placement at most 1.05 (geometric mean).

Usage::

    git clone https://github.com/spcl/npbench /tmp/npbench
    python benchmarks/bench_npbench.py --npbench /tmp/npbench [--preset S] [--rounds 3]
        [--kernels jacobi_2d,gemm] [--threads 1] [--output PREFIX]
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import importlib.util
import json
import math
import os
import platform
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kernels
from bench_function_kernels import limit_threads

import prism_core as prism

PLACEMENTS = ("numpy", "torch", "jax")
#: NPBench's tolerance: the relative error in the 2-norm (its ``norm_error`` default).
TOLERANCE = 1e-5


def load(path: Path, name: str) -> ModuleType:
    """The module at ``path``, loaded afresh under ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def differs(got: Any, want: Any) -> str:
    """Why ``got`` is not ``want`` by NPBench's measure, or ``""``."""
    got, want = numpy.asarray(got), numpy.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape} where NumPy's is {want.shape}"
    if want.dtype.kind in "biu":
        return "" if numpy.array_equal(got, want) else "integer values differ"
    diff = numpy.linalg.norm((got.astype(complex) - want.astype(complex)).ravel())
    scale = numpy.linalg.norm(want.astype(complex).ravel())
    error = diff / scale if scale else diff
    return "" if error <= TOLERANCE else f"relative error {error:.3g} > {TOLERANCE:g}"


class Kernel:
    """One NPBench kernel: its inputs at a preset, its NumPy function, and Prism's."""

    def __init__(self, root: Path, info_path: Path, preset: str) -> None:
        info = json.loads(info_path.read_text(encoding="utf-8"))["benchmark"]
        self.name = info_path.stem
        folder = root / "npbench" / "benchmarks" / info["relative_path"]
        self.source = folder / f"{info['module_name']}_numpy.py"
        self.function = info["func_name"]
        params = info["parameters"][preset]
        env = dict(params)
        if "init" in info:
            init = load(folder / f"{info['module_name']}.py", f"npbench_init_{self.name}")
            made = getattr(init, info["init"]["func_name"])(
                *(params[a] for a in info["init"]["input_args"])
            )
            made = made if isinstance(made, tuple) else (made,)
            env.update(zip(info["init"]["output_args"], made, strict=True))
        self.names = list(info["input_args"])
        self.args = tuple(env[a] for a in self.names)
        self.outputs = set(info.get("output_args", ()))
        self.numpy = getattr(load(self.source, f"npbench_{self.name}"), self.function)
        self.reference_args = copy.deepcopy(self.args)
        self.want = self.numpy(*self.reference_args)

    def placed(self, **options: Any) -> Any:
        """The kernel's function, its module's ``np`` Prism-first, placed whole."""
        module = load(self.source, f"npbench_prism_{self.name}")
        module.np = kernels.PrismFirst()  # type: ignore[attr-defined]
        return prism.function(getattr(module, self.function), **options)

    def mismatch(self, got: Any, args: tuple[Any, ...]) -> str:
        """Why a run's result ``got`` (with its arguments ``args`` after it) is not NumPy's."""
        pairs = list(zip(got, self.want, strict=True)) if isinstance(self.want, tuple) else []
        if not pairs and self.want is not None:
            pairs = [(got, self.want)]
        for i, (g, w) in enumerate(pairs):
            why = differs(g, w)
            if why:
                return f"result {i}: {why}"
        for name, g, w in zip(self.names, args, self.reference_args, strict=True):
            if name in self.outputs and isinstance(w, numpy.ndarray):
                why = differs(g, w)
                if why:
                    return f"argument {name}: {why}"
        return ""


def first_line(exc: BaseException) -> str:
    """The error in one line: its type, its message's lines joined (a ``DispatchError`` gives
    each backend's reason on a line of its own)."""
    text = f"{type(exc).__name__}: {exc}".split("; not falling back")[0]
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return "; ".join(lines)[:300]


def check(kernel: Kernel, F: Any, scope: Any) -> tuple[str, str | None]:
    """(why ``F`` did not run ``kernel`` whole and match NumPy, or ``""``; where it ran)."""
    args = copy.deepcopy(kernel.args)
    try:
        with scope:
            got, report = F.run(*args)
    except Exception as exc:
        return first_line(exc), None
    return kernel.mismatch(got, args), report.backend


def timed(fn: Callable[..., Any], args: tuple[Any, ...]) -> Callable[[], float]:
    """A case: one call of ``fn`` on fresh copies of ``args`` (copied before the clock), after
    one untimed call: the threads a backend leaves spinning after its call (torch's, XLA's,
    OpenBLAS's) slow whatever runs next on a small machine, and that lands on the untimed call."""

    def sample() -> float:
        fn(*copy.deepcopy(args))
        fresh = copy.deepcopy(args)
        start = time.perf_counter()
        fn(*fresh)
        return time.perf_counter() - start

    return sample


def bench(kernel: Kernel, rounds: int, budget: float) -> dict[str, Any]:
    row: dict[str, Any] = {"kernel": kernel.name, "checks": {}, "seconds": {}}
    cases: dict[str, Callable[[], float]] = {}
    for name in PLACEMENTS:
        F = kernel.placed()
        why, ran = check(kernel, F, prism.use_backend(name))
        row["checks"][name] = why or "ok"
        if not why:
            scoped = prism.use_backend(name)

            def pinned(*a: Any, F: Any = F, scoped: Any = scoped) -> Any:
                with scoped:
                    return F(*a)

            cases[name] = timed(pinned, kernel.args)
    auto = kernel.placed()
    try:
        report = prism.tuning.tune(auto, *copy.deepcopy(kernel.args), budget_s=budget,
                                   progress=False)  # fmt: skip
        row["tuned"] = str(report).splitlines()[0]
    except Exception as exc:
        row["tuned"] = f"tuning failed: {first_line(exc)}"
    why, ran = check(kernel, auto, contextlib.nullcontext())  # automatic: no scope
    row["checks"]["automatic"] = why or "ok"
    row["automatic_on"] = ran
    if not why:
        cases["automatic"] = timed(auto, kernel.args)
    cases["NumPy alone"] = timed(kernel.numpy, kernel.args)
    best = dict.fromkeys(cases, math.inf)
    names = list(cases)
    for i in range(rounds):
        for name in names[i % len(names) :] + names[: i % len(names)]:
            best[name] = min(best[name], cases[name]())
    row["seconds"] = best
    placed = {p: best[p] for p in PLACEMENTS if p in best}
    if placed and "automatic" in best:
        row["best"] = min(placed, key=lambda p: placed[p])
        row["auto_over_best"] = best["automatic"] / placed[row["best"]]
        row["auto_over_numpy"] = best["automatic"] / best["NumPy alone"]
    row["backends_ok"] = sorted(p for p in PLACEMENTS if row["checks"][p] == "ok")
    return row


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else math.nan


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g}"


def render(rows: list[dict[str, Any]], args: argparse.Namespace, header: str) -> str:
    lines = [
        "# NPBench's NumPy kernels placed whole by `prism.function`",
        "",
        f"`python benchmarks/bench_npbench.py --npbench {args.npbench} --preset {args.preset} "
        f"--rounds {args.rounds} --budget {args.budget:g}"
        + (f" --threads {args.threads}" if args.threads else "")
        + "`",
        "",
        header,
        "",
        "| kernel | numpy | torch | jax | automatic (on) | NumPy alone | auto / best |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cells = []
        for p in PLACEMENTS:
            cells.append(ms(r["seconds"][p]) if p in r["seconds"] else "-")
        auto = (
            f"{ms(r['seconds']['automatic'])} ({r['automatic_on']})"
            if "automatic" in r["seconds"]
            else f"- ({r['checks']['automatic']})"
        )
        ratio = f"{r['auto_over_best']:.3f} (best: {r['best']})" if "best" in r else "-"
        lines.append(
            f"| {r['kernel']} | {' | '.join(cells)} | {auto} | {ms(r['seconds']['NumPy alone'])} "
            f"| {ratio} |"
        )
    two = [r for r in rows if len(r["backends_ok"]) >= 2]
    ratios = [r["auto_over_best"] for r in rows if "auto_over_best" in r]
    alone = [r["auto_over_numpy"] for r in rows if "auto_over_numpy" in r]
    lines += [
        "",
        f"Kernels that run whole on two or more backends and match NumPy: **{len(two)} of "
        f"{len(rows)}** ({100 * len(two) / len(rows):.1f} %; goal >= 85 %).  Matching per "
        "backend: "
        + ", ".join(
            f"{p} {sum(r['checks'][p] == 'ok' for r in rows)}" for p in (*PLACEMENTS, "automatic")
        )
        + ".",
        f"Automatic / best placement, geometric mean over {len(ratios)} kernels: "
        f"**{geomean(ratios):.3f}** (goal <= 1.05); automatic / NumPy alone "
        f"**{geomean(alone):.3f}**.",
        "",
        "Placements that did not run a kernel whole and match NumPy:",
        "",
    ]
    for r in rows:
        for p in (*PLACEMENTS, "automatic"):
            if r["checks"][p] != "ok":
                lines.append(f"- {r['kernel']} on {p}: {r['checks'][p]}")
    lines += ["", "What `prism.tuning.tune(F, *args)` decided:", ""]
    lines += [f"- {r['kernel']}: {r.get('tuned', '-')}" for r in rows]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--npbench", required=True, type=Path, help="a checkout of spcl/npbench")
    parser.add_argument("--preset", default="S", help="NPBench's size preset (S, M, L, paper)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=5.0, help="tuning seconds per kernel")
    parser.add_argument("--kernels", help="comma-separated NPBench names (default: all)")
    parser.add_argument("--threads", type=int, help="threads per library (BLAS, torch, XLA)")
    parser.add_argument("--keep-cache", action="store_true", help="use the user's tuning cache")
    parser.add_argument("--output", help="write PREFIX.json and PREFIX.md")
    args = parser.parse_args(argv)
    infos = sorted((args.npbench / "bench_info").glob("*.json"))
    if not infos:
        parser.error(f"--npbench {args.npbench}: no bench_info/*.json there (a checkout of "
                     "https://github.com/spcl/npbench)")  # fmt: skip
    if args.kernels:
        wanted = set(args.kernels.split(","))
        unknown = wanted - {p.stem for p in infos}
        if unknown:
            parser.error(f"--kernels: no such NPBench kernel {sorted(unknown)}")
        infos = [p for p in infos if p.stem in wanted]
    limits = limit_threads(args.threads) if args.threads else None
    if not args.keep_cache:  # a fresh tuning cache: this run's measurements decide
        os.environ["PRISM_CACHE_DIR"] = tempfile.mkdtemp(prefix="prism-bench-npbench-")
    prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("torch", "jax")))
    warnings.simplefilter("ignore")  # fallbacks are in the rows; NumPy's overflow warnings too
    load_before = os.getloadavg()
    rows = []
    for path in infos:
        kernel = Kernel(args.npbench, path, args.preset)
        row = bench(kernel, args.rounds, args.budget)
        rows.append(row)
        print(json.dumps({k: row[k] for k in ("kernel", "backends_ok")}), flush=True)
    import jax
    import jax.numpy
    import torch

    header = (
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; Python "
        f"{platform.python_version()}, NumPy {numpy.__version__}, torch {torch.__version__}, "
        f"JAX {jax.__version__} (x64 {'on' if jax.numpy.zeros(1).dtype.itemsize == 8 else 'off'}); "
        f"{os.cpu_count()} CPUs; preset {args.preset}; milliseconds per call, minimum over "
        f"{args.rounds} interleaved rounds, each call on fresh copies of the inputs. Load "
        f"average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after."
    )
    del limits
    text = render(rows, args, header)
    print(text)
    if args.output:
        Path(f"{args.output}.json").write_text(json.dumps(rows, indent=1, default=str) + "\n")
        Path(f"{args.output}.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
