"""The heterogeneous split against each of its targets alone.

A large batched op is split across two backends (``prism.pipelines.split``) and timed against each
backend running the whole op alone, interleaved round by round (the machine is shared: a drift
hits every configuration alike), the minimum over the rounds.  What is reported is the speedup
of the split over the *better* single one, and how much of the split's time is its own cost.

Cases (``--device cpu``, the default): on this host's CPU, NumPy and torch (the torch plugin):

* batched matmul, ``(64, 256, 256) @ (64, 256, 256)`` float64, split along the batch;
* batched FFT, ``fft.fft`` of ``(256, 8192)`` complex128 along the last axis, split along the
  batch;
* the split's own cost on a small op (``exp`` of 64x64): the split against the plain call.

Each split runs with the cores shared between its parts (``share_threads=True``, the default:
on 2 cores, one thread each) and without (each framework keeps its own thread count).

Per case it reports the better single target, the ``ratio="auto"`` split's time and what
``"auto"`` decided (``split``, or ``declined`` and the target it ran on instead, with the
predicted times), and whether ``"auto"`` met the goal of at least 1.0x the better single
target (a declined call is that target's own call, timed in the same rounds: within
:data:`TIE` of it counts as met, the rounds' noise).  ``--tune`` first tunes each case's call
(``prism.tuning.tune``, into a temporary copy of the cache in force, its calibration kept),
so that ``"auto"`` decides from the measured times of the whole call on each target, as
after ``prism tune``.  On the CPU it also gives
what ``"auto"`` decides for each case split between NumPy and a simulated H100 SXM (the
decision only: a simulated part runs on this host, so its time means nothing).

``--device cuda``: the same against a real NVIDIA GPU: the CPU (NumPy) and the GPU (torch), a
float32 batched matmul large enough for the GPU to matter, split with ``ratio="auto"`` and a
few fixed ratios, against the CPU alone and the GPU alone (its time includes moving the
arguments there and the result back, as a NumPy caller pays).  Without a GPU it says why and
records the skip.

``--dispatch-baseline DIR``: also time the cached call of ``prism.matmul`` on 4x4 float64
with ``DIR`` (another prism_core tree) first on ``PYTHONPATH`` against this tree, interleaved,
in fresh processes: the split must leave the hot path of scopes without a split as it was.

Usage::

    python benchmarks/bench_split.py [--rounds N] [--device cpu|cuda] [--tune]
        [--dispatch-baseline DIR] [--output benchmarks/results/split-DATE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

#: A declined ``"auto"`` runs the better single target's own call: a speedup within this of 1.0
#: is that call timed twice (the minimum over the rounds moves by a few percent).
TIE = 0.05

HOT_PATH = """
import timeit, numpy as np, prism_core
a = np.ones((4, 4)); b = np.ones((4, 4))
m = prism_core.matmul
m(a, b)
t = min(timeit.repeat(lambda: m(a, b), number=20000, repeat=15)) / 20000 * 1e9
d = min(timeit.repeat(lambda: np.matmul(a, b), number=20000, repeat=15)) / 20000 * 1e9
print(t, d)
"""


def interleaved(configs: dict[str, Callable[[], Any]], rounds: int) -> dict[str, float]:
    """Min over ``rounds`` of each configuration's time, the configurations taking turns in an
    order shuffled each round (seeded): a split whose parts each ran every thread of their
    framework leaves those threads spinning for a while after it, which slowed whichever
    configuration came next in a fixed order by 5 to 10 % (2026-12-07)."""
    for fn in configs.values():
        fn()  # warm: plans, thread pools, first-touch pages
    best = {name: float("inf") for name in configs}
    order = list(configs)
    shuffle = random.Random(0).shuffle
    for _ in range(rounds):
        shuffle(order)
        for name in order:
            t = time.perf_counter()
            configs[name]()
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def case(
    name: str,
    op: str,
    args: tuple[Any, ...],
    targets: list[Any],
    rounds: int,
    ratios: dict[str, Any],
    shares: tuple[bool, ...] = (True, False),
    **kwargs: Any,
) -> dict[str, Any]:
    import prism_core as prism

    def run(targets: list[Any], ratio: Any = None, share: bool = True) -> Callable[[], Any]:
        return lambda: prism.pipelines.split(
            op, *args, targets=targets, ratio=ratio, share_threads=share, **kwargs
        )

    configs: dict[str, Callable[[], Any]] = {}
    labels = []
    for t in targets:
        label = t if isinstance(t, str) else "/".join(t)
        labels.append(label)
        configs[f"{label} alone"] = run([t])
    # The static ratio the single targets' own times give (each alone, with every core): what
    # the tuner's throughputs would give ``ratio="auto"``.
    alone = interleaved(dict(configs), 2)
    ratios = {**ratios, "by measured times": [1 / alone[f"{label} alone"] for label in labels]}
    for rname, ratio in ratios.items():
        for share in shares:
            key = f"split {rname}" + ("" if share else ", threads not shared")
            configs[key] = run(targets, ratio, share)
    times = interleaved(configs, rounds)
    singles = {k: v for k, v in times.items() if k.endswith(" alone")}
    best_single = min(singles, key=singles.__getitem__)
    # One record per split configuration, for the parts' sizes, threads and gather time.
    records = {}
    for rname, ratio in ratios.items():
        _, rec = prism.pipelines.split(
            op, *args, targets=targets, ratio=ratio, return_record=True, **kwargs
        )
        records[rname] = rec.as_dict()
    auto = None
    if "auto" in ratios:
        rec = records["auto"]
        ran = [p for p in rec["parts"] if p["seconds"] is not None]
        auto_s = times["split auto"]
        speedup = times[best_single] / auto_s
        declined = rec["decision"].startswith("declined")
        auto = {
            "decision": "declined" if declined else "split" if len(ran) > 1 else "whole",
            "ran_on": ran[0]["target"] if len(ran) == 1 else None,
            "why": rec["decision"],
            "ratio_source": rec["ratio_source"],
            "seconds": auto_s,
            "speedup": speedup,
            "goal_met": speedup >= 1.0 or (declined and speedup >= 1.0 - TIE),
        }
    reference = prism.pipelines.split(op, *args, targets=[targets[0]], **kwargs)
    check = prism.pipelines.split(op, *args, targets=targets, **kwargs)
    # Relative to the largest value: an element near 0 (sums that cancel) has no relative
    # accuracy to speak of, in any correct float32 product.
    rtol = 1e-3 if args[0].dtype == np.float32 else 1e-9
    np.testing.assert_allclose(check, reference, rtol=rtol, atol=rtol * np.abs(reference).max())
    return {
        "name": name,
        "op": op,
        "shapes": [list(a.shape) for a in args],
        "dtype": str(args[0].dtype),
        "targets": labels,
        "seconds": times,
        "best_single": best_single,
        "speedup": {k: times[best_single] / v for k, v in times.items() if k.startswith("split")},
        "records": records,
        "auto": auto,
    }


def tune_case(op: str, args: tuple[Any, ...]) -> str:
    """Tune ``op(*args)`` on this host (every variant dispatch chooses among), so that
    ``"auto"`` finds measured times for the whole call on each target; the report's lines."""
    import prism_core as prism

    report = prism.tuning.tune(op, *args, progress=False)
    return " ".join(line.strip() for line in str(report).splitlines()[:2])


def simulated_decisions(cases: list[tuple[str, str, tuple[Any, ...]]]) -> list[dict[str, Any]]:
    """What ``"auto"`` decides for each case split between NumPy and a simulated H100 SXM (the
    part that would run on the GPU runs on this host: only the decision is reported)."""
    import prism_core as prism

    out = []
    for name, op, args in cases:
        targets = ["numpy", "nvidia.h100-sxm"]
        _, rec = prism.pipelines.split(
            op, *args, targets=targets, ratio="auto", simulate=True, return_record=True
        )
        sizes = [p.size for p in rec.parts]
        out.append({"name": name, "op": op, "decision": rec.decision, "sizes": sizes})
    return out


def overhead(rounds: int, targets: list[str]) -> dict[str, Any]:
    import prism_core as prism

    x = np.ones((64, 64))
    configs: dict[str, Callable[[], Any]] = {"plain prism.exp": lambda: prism.exp(x)}
    configs["split, 1 target"] = lambda: prism.pipelines.split("exp", x, targets=targets[:1])
    configs[f"split across {', '.join(targets)}"] = lambda: prism.pipelines.split(
        "exp", x, targets=targets
    )
    times: dict[str, float] = {}
    for _ in range(3):  # a small op: many calls per round, min of rounds
        per = interleaved({k: _repeat(v, 200) for k, v in configs.items()}, rounds)
        times = {k: min(times.get(k, float("inf")), v / 200) for k, v in per.items()}
    return {"op": "exp", "shape": [64, 64], "seconds": times}


def _repeat(fn: Callable[[], Any], n: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(n):
            fn()

    return run


def hot_path(baseline: Path, pairs: int) -> dict[str, Any]:
    here = Path(__file__).resolve().parents[1]
    out: dict[str, list[list[float]]] = {"baseline": [], "this tree": []}
    for _ in range(pairs):
        for label, tree in (("baseline", baseline), ("this tree", here)):
            env = dict(os.environ, PYTHONPATH=str(tree), PRISM_DISABLE_PLUGIN_AUTOLOAD="1")
            done = subprocess.run(
                [sys.executable, "-c", HOT_PATH],
                env=env,
                capture_output=True,
                text=True,
                check=True,
                cwd=tree,
            )
            out[label].append([float(v) for v in done.stdout.split()])
    return {
        label: {
            "prism_matmul_ns": min(r[0] for r in rows),
            "np_matmul_ns": min(r[1] for r in rows),
            "added_ns": min(r[0] for r in rows) - min(r[1] for r in rows),
            "runs": rows,
        }
        for label, rows in out.items()
    } | {"baseline_tree": str(baseline)}


def cuda_case(rounds: int, tune: bool = False) -> dict[str, Any]:
    """CPU (NumPy) + GPU (torch) on a real NVIDIA GPU, or why not."""
    try:
        import torch
    except ImportError:
        return {"skipped": "torch is not installed"}
    if not torch.cuda.is_available():
        return {
            "skipped": "no CUDA GPU here (torch.cuda.is_available() is False: "
            f"torch {torch.__version__}, CUDA build {torch.version.cuda})"
        }
    import prism_core as prism

    gpus = [d for d in prism.hardware.present_devices().devices if d.description.kind == "gpu"]
    if not gpus:
        return {"skipped": "torch sees a GPU but Prism detects none (see `prism doctor`)"}
    gpu = gpus[0].description.device_type
    rng = np.random.default_rng(0)
    a = rng.standard_normal((64, 1024, 1024), dtype=np.float32)
    b = rng.standard_normal((64, 1024, 1024), dtype=np.float32)
    tuned = tune_case("matmul", (a, b)) if tune else None
    result = case(
        "batched matmul, CPU + GPU",
        "matmul",
        (a, b),
        ["numpy", (gpu, "torch")],
        rounds,
        {"auto": "auto", "5/95": [0.05, 0.95], "2/98": [0.02, 0.98], "10/90": [0.1, 0.9]},
        shares=(True,),  # one part on the host: nothing to share
    )
    result["gpu"] = gpu
    result["torch"] = torch.__version__
    result["tuned"] = tuned
    return result


def render(meta: dict[str, Any], results: dict[str, Any]) -> str:
    out = [
        f"# The heterogeneous split against each target alone ({meta['date']})",
        "",
        f"`{meta['command']}` on {meta['cpus']} CPUs ({meta['machine']}), Python "
        f"{meta['python']}, NumPy {meta['numpy']}, torch {meta['torch']}; {meta['rounds']} "
        "rounds, the configurations interleaved in each round, the minimum; "
        f"{meta['seconds']:.0f} s in all. Load average at the end: {meta['load']}.",
        "",
        "Speedup: the better single target's time over the split's (above 1: the split is "
        "faster). *alone*: the whole op through `prism.pipelines.split` with that one target "
        "(the same path as the split, the result brought back to NumPy).",
        "",
    ]
    summary = [c for c in results.get("cases", []) if c.get("auto")]
    if summary:
        out += [
            '## `ratio="auto"` against the better single target',
            "",
            f"Goal: at least 1.0x the better single target (a declined call within {TIE:.0%}: "
            "the same call).",
            "",
            "| case | better single | ms | auto decided | auto ms | auto / better | goal |",
            "|---|---|---|---|---|---|---|",
        ]
        for c in summary:
            a = c["auto"]
            what = a["decision"] + (f" (ran on {a['ran_on']})" if a["ran_on"] else "")
            out.append(
                f"| {c['name']} | {c['best_single'].removesuffix(' alone')} | "
                f"{c['seconds'][c['best_single']] * 1e3:.2f} | {what} | {a['seconds'] * 1e3:.2f} | "
                f"{a['speedup']:.2f}x | {'met' if a['goal_met'] else 'MISSED'} |"
            )
        out.append("")
        out += [f"- {c['name']}: {c['auto']['why']}" for c in summary]
        out.append("")
    for c in results.get("cases", []):
        out += [
            f"## {c['name']}: `{c['op']}` {' x '.join(str(tuple(s)) for s in c['shapes'])} "
            f"{c['dtype']}",
            "",
            "| configuration | ms | speedup over the better single |",
            "|---|---|---|",
        ]
        for k, v in c["seconds"].items():
            sp = c["speedup"].get(k)
            out.append(f"| {k} | {v * 1e3:.2f} | {'' if sp is None else f'{sp:.2f}x'} |")
        for rname, rec in c["records"].items():
            parts = ", ".join(
                f"{p['target']} {p['size']} ({p['threads'] or '-'} thr, "
                f"{(p['seconds'] or 0) * 1e3:.1f} ms)"
                for p in rec["parts"]
            )
            out.append("")
            out.append(
                f"Split {rname} (one run): {parts}; gather {rec['gather_s'] * 1e3:.2f} ms, "
                f"ratio {rec['ratio_source']}."
                + (f" Auto: {rec['decision']}." if rec.get("decision") else "")
            )
        out.append("")
    tuned = results.get("tuned")
    if tuned:
        out += ["## Tuned first (`--tune`)", ""]
        out += [f"- {line}" for line in tuned]
        out.append("")
    sim = results.get("simulated")
    if sim:
        out += [
            '## What `"auto"` decides with a simulated H100 SXM beside NumPy',
            "",
            "The decision only (the simulated part runs on this host): the model's prediction "
            "from the H100's description and this host's CPU.",
            "",
            "| case | sizes (numpy, GPU) | decision |",
            "|---|---|---|",
        ]
        out += [f"| {d['name']} | {d['sizes']} | {d['decision']} |" for d in sim]
        out.append("")
    ov = results.get("overhead")
    if ov:
        out += [
            "## The split's own cost on a small op (`exp`, 64x64 float64)",
            "",
            "| configuration | µs per call |",
            "|---|---|",
        ]
        out += [f"| {k} | {v * 1e6:.1f} |" for k, v in ov["seconds"].items()]
        out.append("")
    cuda = results.get("cuda")
    if cuda is not None:
        out += ["## CPU + GPU (`--device cuda`)", ""]
        if "skipped" in cuda:
            out += [f"Skipped: {cuda['skipped']}.", ""]
        else:
            out += [f"The case above: {cuda['gpu']}, torch {cuda['torch']}.", ""]
    hp = results.get("hot_path")
    if hp:
        out += [
            "## The cached call of a scope without a split",
            "",
            f"`prism.matmul` on 4x4 float64, cached, against `np.matmul`; each tree in fresh "
            f"processes, alternating, min of 15 x 20,000 calls per process. Baseline: "
            f"{meta.get('baseline_label') or hp['baseline_tree']}.",
            "",
            "| tree | prism.matmul ns | np.matmul ns | added ns |",
            "|---|---|---|---|",
        ]
        for label in ("baseline", "this tree"):
            r = hp[label]
            out.append(
                f"| {label} | {r['prism_matmul_ns']:.0f} | {r['np_matmul_ns']:.0f} | "
                f"{r['added_ns']:.0f} |"
            )
        out.append("")
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--dispatch-baseline", type=Path, help="a prism_core tree to compare with")
    parser.add_argument("--baseline-label", default="", help="what the baseline tree is")
    parser.add_argument("--output", help="write PREFIX.json and PREFIX.md")
    parser.add_argument(
        "--tune", action="store_true", help="tune each case first (into a temporary cache)"
    )
    args = parser.parse_args()
    began = time.perf_counter()
    if args.tune:  # into a copy of the cache in force (its calibration kept), never into it
        copy = tempfile.mkdtemp(prefix="bench-split-cache-")
        given = os.environ.get("PRISM_CACHE_DIR")
        if given and Path(given).is_dir():
            shutil.copytree(given, copy, dirs_exist_ok=True)
        os.environ["PRISM_CACHE_DIR"] = copy

    results: dict[str, Any] = {}
    torch_version = "-"
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        pass
    if args.device == "cuda":
        results["cuda"] = cuda_case(args.rounds, tune=args.tune)
        if "skipped" in results["cuda"]:
            print(f"skipped: {results['cuda']['skipped']}")
        else:
            results["cases"] = [results["cuda"]]
    else:
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64, 256, 256))
        b = rng.standard_normal((64, 256, 256))
        x = rng.standard_normal((256, 8192)) + 1j * rng.standard_normal((256, 8192))
        ratios = {"even": None, "auto": "auto"}
        targets = ["numpy", "torch"]
        calls = [("batched matmul", "matmul", (a, b)), ("batched FFT", "fft.fft", (x,))]
        if args.tune:
            results["tuned"] = [tune_case(op, call) for _, op, call in calls]
        results["cases"] = [
            case(name, op, call, targets, args.rounds, ratios) for name, op, call in calls
        ]
        f32 = np.random.default_rng(1).standard_normal((64, 1024, 1024), dtype=np.float32)
        results["simulated"] = simulated_decisions(
            [*calls, ("batched matmul float32 (the --device cuda case)", "matmul", (f32, f32))]
        )
        results["overhead"] = overhead(args.rounds, targets)
    if args.dispatch_baseline is not None:
        results["hot_path"] = hot_path(args.dispatch_baseline.resolve(), 6)
    meta = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python benchmarks/bench_split.py " + " ".join(sys.argv[1:]),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "torch": torch_version,
        "rounds": args.rounds,
        "seconds": time.perf_counter() - began,
        "load": ", ".join(f"{v:.2f}" for v in os.getloadavg()),
        "baseline_label": args.baseline_label,
    }
    text = render(meta, results)
    print(text)
    if args.output:
        Path(args.output + ".json").write_text(
            json.dumps({"meta": meta, "results": results}, indent=2, default=str) + "\n"
        )
        Path(args.output + ".md").write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
