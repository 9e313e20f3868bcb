"""Several CPU backends in one process: each op's time alone and right after the other library.

Several backends in one process.  Every measurement runs in a fresh interpreter
(``--child``), so that "alone" means that the other library was never imported:

* ``alone``: only the op's library is imported and used;
* ``after``: the other library is imported and called once, then the op is timed;
* ``alternating``: the other library is called before every timed call of the op (what a
  program mixing backends does: Prism dispatching torch, then SciPy, then torch ...).

Each pattern runs with the coordinator off (``PRISM_THREADS=off``: what the libraries do on
their own, as before the fix) and on.  "On" calls ``prism_core.kernel.threads.entering``
before each call of each library, as dispatch does (this script calls the module directly to
simulate dispatch, so that it measures the coordinator and nothing else).  Diagnostics, with the
coordinator off, show the cause: the other library's spinning pool (``OMP_WAIT_POLICY=passive``
or ``OPENBLAS_THREAD_TIMEOUT=4`` in the child's environment make it sleep at once) and that
thread limits do not help (``limit``: threadpoolctl limits the other library's pools to one
thread while the op runs).

Usage::

    python benchmarks/bench_mixed_threads.py [--rounds 5] [--quick] \\
        [--output benchmarks/results/mixed-threads-DATE.json]

The machine is shared: rounds interleave every configuration, each child keeps the minimum of
its repeats, and the minimum over rounds is reported; ratios compare configurations of one run.
``--output X.json`` also writes ``X.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# case: (library of the op, description, the other library, its call, repeats)
CASES: dict[str, tuple[str, str, str, int]] = {
    "torch-matmul-f64": ("torch", "torch.matmul 256x256 float64", "scipy", 200),
    "torch-matmul-f32": ("torch", "torch.matmul 256x256 float32", "scipy", 200),
    "scipy-svd": ("scipy", "scipy.linalg.svd 512x512 float64", "torch", 20),
    "numpy-matmul/torch": ("numpy", "numpy.matmul 256x256 float64", "torch", 200),
    "numpy-matmul/scipy": ("numpy", "numpy.matmul 256x256 float64", "scipy", 200),
}
# What the other library does between calls: a threaded call of each library.
OTHER_CALL = {
    "torch": "torch.matmul 256x256 float64",
    "scipy": "scipy.linalg.blas.dgemm 256x256",
    "numpy": "numpy.matmul 256x256 float64",
}
PATTERNS = ("alone", "after", "alternating")
DIAGNOSTICS: dict[str, dict[str, str]] = {
    "OMP_WAIT_POLICY=passive": {"OMP_WAIT_POLICY": "passive"},
    "OPENBLAS_THREAD_TIMEOUT=4": {"OPENBLAS_THREAD_TIMEOUT": "4"},
    "limit": {},
}


# -- the child: one configuration in a fresh interpreter -------------------------------------


def _calls(libraries: set[str]) -> dict[str, Callable[[], Any]]:
    import numpy as np

    rng = np.random.default_rng(0)
    m512 = rng.standard_normal((512, 512))
    a = rng.standard_normal((256, 256))
    b = rng.standard_normal((256, 256))
    # Products go to arrays allocated once: a new 512 KiB result per call costs page faults or
    # not depending on the heap's history (importing SciPy changed numpy.matmul's time by 1.4x
    # with no thread involved), which would hide what the thread pools do.
    c = np.empty((256, 256))
    calls: dict[str, Callable[[], Any]] = {"numpy": lambda: np.matmul(a, b, out=c)}
    if "torch" in libraries:
        import torch

        t64 = torch.from_numpy(a.copy())
        t32 = t64.float()
        o64, o32 = torch.empty_like(t64), torch.empty_like(t32)
        calls["torch-matmul-f64"] = lambda: torch.matmul(t64, t64, out=o64)
        calls["torch-matmul-f32"] = lambda: torch.matmul(t32, t32, out=o32)
        calls["torch"] = calls["torch-matmul-f64"]
    if "scipy" in libraries:
        import scipy.linalg

        calls["scipy-svd"] = lambda: scipy.linalg.svd(m512)
        af, bf, cf = (np.asfortranarray(x) for x in (a, b, np.empty((256, 256))))
        calls["scipy"] = lambda: scipy.linalg.blas.dgemm(1.0, af, bf, c=cf, overwrite_c=True)
    calls["numpy-matmul/torch"] = calls["numpy-matmul/scipy"] = calls["numpy"]
    return calls


# Through Prism: each case's op and the other library's call as Prism calls, dispatched in
# automatic mode (torch tensors run on torch; ``linalg.inv`` and ``linalg.svd`` on SciPy, whose
# plugin ranks them above NumPy; NumPy arrays' ``matmul`` on NumPy).
PRISM_PLUGINS = {"torch": "torch", "scipy": "scipy", "numpy": ""}


def _prism_calls(libraries: set[str]) -> dict[str, Callable[[], Any]]:
    import numpy as np

    import prism_core as prism

    rng = np.random.default_rng(0)
    m512 = rng.standard_normal((512, 512))
    a = rng.standard_normal((256, 256))
    b = rng.standard_normal((256, 256))
    calls: dict[str, Callable[[], Any]] = {"numpy": lambda: prism.matmul(a, b)}
    if "torch" in libraries:
        import torch

        t64 = torch.from_numpy(a.copy())
        t32 = t64.float()
        calls["torch-matmul-f64"] = calls["torch"] = lambda: prism.matmul(t64, t64)
        calls["torch-matmul-f32"] = lambda: prism.matmul(t32, t32)
    if "scipy" in libraries:
        calls["scipy-svd"] = lambda: prism.linalg.svd(m512)
        calls["scipy"] = lambda: prism.linalg.inv(a)
    calls["numpy-matmul/torch"] = calls["numpy-matmul/scipy"] = calls["numpy"]
    return calls


def _no_coordinator(name: str) -> None:
    return None


def child(case: str, pattern: str, mode: str) -> dict[str, Any]:
    library, _, other, repeats = CASES[case]
    libraries = {library} if pattern == "alone" else {library, other}
    pools: Any = None
    enter: Callable[[str], None] = _no_coordinator
    if mode.startswith("prism-"):
        # Through Prism's dispatch: ``prism-on``/``prism-off`` is ``PRISM_THREADS``, and
        # dispatch itself tells the process's coordinator which backend runs.
        os.environ["PRISM_THREADS"] = mode.removeprefix("prism-")
        os.environ["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        os.environ["PRISM_PLUGINS"] = ",".join(p for p in map(PRISM_PLUGINS.get, libraries) if p)
        calls = _prism_calls(libraries)
        from prism_core.kernel import threads

        pools = threads.POOLS
    else:
        calls = _calls(libraries)
        if mode == "on":  # the coordinator called directly, as dispatch calls it
            from prism_core.kernel import threads

            pools = threads.ThreadPools(enabled=True)
            enter = pools.entering
        # else the plain libraries: Prism is not even imported
    op = calls[case]
    other_call = calls.get(other, op)  # alone: the other library is never called

    limit: Any = None
    if mode == "limit" and pattern != "alone":
        import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

        limit = threadpoolctl.ThreadpoolController()

    def run_other() -> None:
        enter(other)
        other_call()

    enter(library)
    op()  # warm: the pool exists, caches are filled
    if pattern != "alone":
        run_other()
    times = []
    for _ in range(repeats):
        if pattern == "alternating":
            run_other()
        if limit is not None:
            # The other library's pools limited to one thread while the op runs.
            selected = [
                lc
                for lc in limit.lib_controllers
                if f"{os.sep}{other}" in lc.filepath and library not in lc.filepath
            ]
            counts = [lc.num_threads for lc in selected]
            for lc in selected:
                lc.set_num_threads(1)
        enter(library)
        start = time.perf_counter()
        op()
        times.append(time.perf_counter() - start)
        if limit is not None:
            for lc, count in zip(selected, counts, strict=True):
                lc.set_num_threads(count)
    times.sort()
    return {
        "case": case,
        "pattern": pattern,
        "mode": mode,
        "min_ms": times[0] * 1e3,
        "median_ms": times[len(times) // 2] * 1e3,
        "repeats": repeats,
        "threads": len(os.listdir("/proc/self/task")) if os.path.isdir("/proc/self/task") else None,
        "switches": pools.switches if pools is not None else 0,
        "pools": [p.as_dict() for p in pools.pools()] if pools is not None else [],
        "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    }


def _thread_cpu() -> dict[int, float]:
    """CPU seconds of each thread of this process (``/proc/self/task/*/schedstat``)."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0]) / 1e9
        except OSError:
            pass
    return out


def evidence(window: float = 0.25) -> dict[str, Any]:
    """The cause, measured without timing the ops: the CPU that threads other than the caller
    burn in the ``window`` seconds after one call of each library (a spinning pool burns it;
    a sleeping one burns none), with each candidate remedy applied right after the call."""
    import ctypes
    import threading

    import numpy as np
    import scipy.linalg
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]
    import torch

    me = threading.get_native_id()
    info_before = threadpoolctl.threadpool_info()
    a = np.random.default_rng(0).standard_normal((256, 256))
    m = np.random.default_rng(0).standard_normal((512, 512))
    t = torch.from_numpy(a.copy())
    libs = {lc.filepath: lc for lc in threadpoolctl.ThreadpoolController().lib_controllers}

    def lib(part: str) -> Any:
        return next(lc for path, lc in libs.items() if part in path)

    gomp, sp, npb = lib("libgomp"), lib("scipy.libs"), lib("numpy.libs")
    address = ctypes.cast(gomp.dynlib.omp_pause_resource_all, ctypes.c_void_p).value
    assert address is not None
    pause = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)(address)

    def shutdown(controller: Any) -> Callable[[], Any]:
        return lambda: controller.dynlib.blas_thread_shutdown_()

    def limit(controller: Any) -> Callable[[], Any]:
        return lambda: controller.set_num_threads(1)

    calls: dict[str, Callable[[], Any]] = {
        "torch.matmul 256 float64": lambda: torch.matmul(t, t),
        "scipy.linalg.svd 512": lambda: scipy.linalg.svd(m),
        "numpy.matmul 256": lambda: np.matmul(a, a),
    }
    remedies: dict[str, dict[str, Callable[[], Any] | None]] = {
        "torch.matmul 256 float64": {
            "none": None,
            "torch.set_num_threads(1)": lambda: torch.set_num_threads(1),
            "threadpoolctl limit 1 (libgomp)": limit(gomp),
            "omp_pause_resource_all": lambda: pause(1),
        },
        "scipy.linalg.svd 512": {
            "none": None,
            "threadpoolctl limit 1 (SciPy's OpenBLAS)": limit(sp),
            "blas_thread_shutdown_": shutdown(sp),
        },
        "numpy.matmul 256": {
            "none": None,
            "threadpoolctl limit 1 (NumPy's OpenBLAS)": limit(npb),
            "blas_thread_shutdown_": shutdown(npb),
        },
    }
    counts = {id(lc): lc.num_threads for lc in libs.values()}
    torch_threads = torch.get_num_threads()
    rows = []
    for name, call in calls.items():
        for remedy, action in remedies[name].items():
            burnt = []
            for _ in range(3):
                call()
                start = time.perf_counter()
                if action is not None:
                    action()
                spent = time.perf_counter() - start
                before = _thread_cpu()
                time.sleep(window)
                after = _thread_cpu()
                burnt.append(sum(after[k] - before.get(k, 0.0) for k in after if k != me))
                for lc in libs.values():  # undo the limits
                    lc.set_num_threads(counts[id(lc)])
                torch.set_num_threads(torch_threads)
            rows.append(
                {
                    "call": name,
                    "then": remedy,
                    "other_threads_cpu_ms": [round(b * 1e3, 1) for b in burnt],
                    "remedy_ms": round(spent * 1e3, 3),
                }
            )
    return {
        "window_s": window,
        "pools": [
            {k: i.get(k) for k in ("filepath", "internal_api", "num_threads", "threading_layer")}
            for i in info_before
        ],
        "threads": len(os.listdir("/proc/self/task")),
        "rows": rows,
        "load": os.getloadavg()[0],
    }


def evidence_runs(window: float = 0.25) -> dict[str, Any]:
    """:func:`evidence` in fresh interpreters: as installed, then with the runtimes told to
    sleep at once (diagnostics only: these variables are read when a library loads)."""
    out: dict[str, Any] = {"plain": None, "env": []}
    for env in ({}, {"OMP_WAIT_POLICY": "passive"}, {"OPENBLAS_THREAD_TIMEOUT": "4"}):
        code = (
            "import json, sys; sys.path.insert(0, 'benchmarks'); import bench_mixed_threads as b; "
            f"print(json.dumps(b.evidence({window})))"
        )
        proc = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
            cwd=ROOT,
            check=True,
        )
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        if not env:
            out["plain"] = result
        out["env"].append(
            {
                "env": env,
                "after": {
                    r["call"]: r["other_threads_cpu_ms"]
                    for r in result["rows"]
                    if r["then"] == "none"
                },
            }
        )
    return out


def hot_path(number: int = 20000, rounds: int = 50) -> dict[str, float]:
    """``entering`` for the backend entered last, against an empty function of one argument."""
    import timeit

    from prism_core.kernel import threads

    pools = threads.ThreadPools(enabled=True)
    pools.entering("torch")
    enter = pools.entering

    def empty(name: str) -> None:
        return None

    def per_call(stmt: Callable[[], Any]) -> float:
        return min(timeit.repeat(stmt, number=number, repeat=1)) / number * 1e9

    e_times, f_times = [], []
    for _ in range(rounds):  # interleaved
        e_times.append(per_call(lambda: enter("torch")))
        f_times.append(per_call(lambda: empty("torch")))
    return {
        "entering_ns": round(min(e_times), 1),
        "empty_function_ns": round(min(f_times), 1),
        "added_ns": round(min(e_times) - min(f_times), 1),
    }


# -- the parent ------------------------------------------------------------------------------


def configurations(quick: bool) -> list[tuple[str, str, str, dict[str, str]]]:
    out: list[tuple[str, str, str, dict[str, str]]] = []
    for case in CASES:
        for pattern in PATTERNS:
            for mode in ("off", "on"):
                out.append((case, pattern, mode, {}))
        for pattern in ("alone", "alternating"):
            for mode in ("prism-off", "prism-on"):
                out.append((case, pattern, mode, {}))
        if not quick:
            for name, env in DIAGNOSTICS.items():
                mode = "limit" if name == "limit" else "off"
                out.append((case, "alternating", name if mode == "off" else mode, env))
    return out


def runnable() -> int:
    """Tasks runnable on the machine now, this process excluded (``/proc/loadavg``)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0]) - 1
    except (OSError, ValueError, IndexError):
        return 0


def wait_quiet(limit: float) -> float:
    """Wait (up to ``limit`` seconds) until nothing else runs for half a second: two busy
    threads on two cores are what is measured, and a third task spoils it.  Returns the share
    of samples with something else running in the last half second."""
    deadline = time.monotonic() + limit
    while True:
        samples = []
        for _ in range(10):
            samples.append(runnable())
            time.sleep(0.05)
        busy = sum(1 for n in samples if n > 0) / len(samples)
        if busy == 0 or time.monotonic() > deadline:
            return busy


def run_child(
    case: str, pattern: str, mode: str, env: dict[str, str], wait: float = 0.0
) -> dict[str, Any]:
    child_env = {**os.environ, **env}
    child_env.pop("PRISM_THREADS", None)
    child_mode = "off" if mode in DIAGNOSTICS and mode != "limit" else mode
    busy_before = wait_quiet(wait) if wait > 0 else None
    proc = subprocess.run(
        [sys.executable, __file__, "--child", case, pattern, child_mode],
        capture_output=True,
        text=True,
        env=child_env,
        cwd=ROOT,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"child {case} {pattern} {mode} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    result["mode"] = mode
    result["busy_before"] = busy_before
    return result


def versions() -> dict[str, str | None]:
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for name in ("numpy", "scipy", "torch", "threadpoolctl"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case and configuration: the minimum over rounds of the children's minimum and of
    their median (the median shows how often a call is caught by a spinning pool)."""
    best: dict[tuple[str, str, str], dict[str, float]] = {}
    for r in rows:
        key = (r["case"], r["pattern"], r["mode"])
        old = best.get(key, {"min_ms": float("inf"), "median_ms": float("inf")})
        best[key] = {
            "min_ms": min(old["min_ms"], r["min_ms"]),
            "median_ms": min(old["median_ms"], r["median_ms"]),
        }
    table: dict[str, Any] = {}
    for case in CASES:
        if (case, "alone", "off") not in best or (case, "alone", "on") not in best:
            continue
        alone = {m: best[(case, "alone", m)] for m in ("off", "on")}
        # Alone, on and off run the same calls (on adds one comparison per call): the better of
        # the two is the op's time alone, and the reference of every ratio.
        base = {k: min(alone["off"][k], alone["on"][k]) for k in ("min_ms", "median_ms")}
        entry: dict[str, Any] = {"alone": alone, "alone_best": base}
        # Through Prism, the reference is the op through Prism alone (the better of on and off).
        prism_alone = [
            best[k]
            for k in ((case, "alone", "prism-off"), (case, "alone", "prism-on"))
            if k in best
        ]
        if prism_alone:
            entry["prism_alone_best"] = {
                k: min(r[k] for r in prism_alone) for k in ("min_ms", "median_ms")
            }
        for (c, pattern, mode), r in sorted(best.items()):
            if c != case or pattern == "alone":
                continue
            ref = entry.get("prism_alone_best", base) if mode.startswith("prism-") else base
            entry[f"{pattern}/{mode}"] = {
                "min_ms": round(r["min_ms"], 4),
                "median_ms": round(r["median_ms"], 4),
                "min_ratio": round(r["min_ms"] / ref["min_ms"], 3),
                "median_ratio": round(r["median_ms"] / ref["median_ms"], 3),
            }
        entry["on_alone_vs_off_alone"] = round(alone["on"]["min_ms"] / alone["off"]["min_ms"], 3)
        table[case] = entry
    return table


def markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"# Backends mixed in one process ({m['when']}, {m['cpus']} CPUs, Python {m['python']}, "
        + ", ".join(f"{k} {v}" for k, v in m["versions"].items() if v)
        + ")",
        "",
        f"Every configuration in a fresh interpreter, {results['rounds']} rounds interleaved; "
        "per configuration the lowest minimum and the lowest median of its rounds. Ratio: to "
        "the same op alone (the better of on and off). "
        f"Load average during the run: {results['load_min']:.1f} to {results['load_max']:.1f}.",
        "",
        "Each cell: minimum / median of the calls, and their ratios to the op alone.",
        "",
        "| op | other library's call | alone | after, off | after, on "
        "| alternating, off | alternating, on |",
        "|---|---|---|---|---|---|---|",
    ]
    for case, e in results["summary"].items():
        other = CASES[case][2]

        def cell(key: str, e: dict[str, Any] = e) -> str:
            v = e.get(key)
            if not v:
                return "-"
            return (
                f"{v['min_ms']:.3f} / {v['median_ms']:.3f} ms "
                f"(**{v['min_ratio']:.2f}x** / **{v['median_ratio']:.2f}x**)"
            )

        base = e["alone_best"]
        lines.append(
            f"| {CASES[case][1]} | {OTHER_CALL[other]} "
            f"| {base['min_ms']:.3f} / {base['median_ms']:.3f} ms "
            f"| {cell('after/off')} | {cell('after/on')} | {cell('alternating/off')} "
            f"| {cell('alternating/on')} |"
        )
    through = [(c, e) for c, e in results["summary"].items() if "prism_alone_best" in e]
    if through:
        lines += [
            "",
            "Through Prism's dispatch (`prism.matmul`, `prism.linalg.svd`, `prism.linalg.inv` in "
            "automatic mode, each plugin found by its entry point; dispatch tells the coordinator "
            "which backend runs). `PRISM_THREADS=off` is the libraries on their own; ratios to "
            "the op through Prism alone. The other library's call: torch.matmul 256 float64, or "
            "SciPy's `linalg.inv` 256.",
            "",
            "| op | alone through Prism | alternating, PRISM_THREADS=off "
            "| alternating, PRISM_THREADS=on |",
            "|---|---|---|---|",
        ]
        for case, e in through:
            pbase = e["prism_alone_best"]

            def pcell(key: str, e: dict[str, Any] = e) -> str:
                v = e.get(key)
                if not v:
                    return "-"
                return (
                    f"{v['min_ms']:.3f} / {v['median_ms']:.3f} ms "
                    f"(**{v['min_ratio']:.2f}x** / **{v['median_ratio']:.2f}x**)"
                )

            lines.append(
                f"| {CASES[case][1]} | {pbase['min_ms']:.3f} / {pbase['median_ms']:.3f} ms "
                f"| {pcell('alternating/prism-off')} | {pcell('alternating/prism-on')} |"
            )
    diag = [
        k for k in DIAGNOSTICS if any(f"alternating/{k}" in e for e in results["summary"].values())
    ]
    if diag:
        lines += [
            "",
            "Diagnostics, coordinator off, alternating (ratio to alone):",
            "",
            "| op | " + " | ".join(diag) + " |",
            "|---|" + "---|" * len(diag),
        ]
        for case, e in results["summary"].items():
            cells = []
            for k in diag:
                v = e.get(f"alternating/{k}")
                cells.append(
                    f"{v['min_ms']:.3f} / {v['median_ms']:.3f} ms "
                    f"({v['min_ratio']:.2f}x / {v['median_ratio']:.2f}x)"
                    if v
                    else "-"
                )
            lines.append(
                f"| {CASES[case][1]}, other: {CASES[case][2]} | " + " | ".join(cells) + " |"
            )
    ev = results.get("evidence")
    if ev and ev.get("plain"):
        lines += [
            "",
            f"The cause, without timing anything: CPU (ms) burnt by threads other than the "
            f"caller in the {ev['plain']['window_s'] * 1e3:.0f} ms after one call, three tries "
            "(a spinning pool burns it, a sleeping one none), with what was done right after "
            "the call and how long that took:",
            "",
            "| call | then | other threads' CPU (ms) | that took |",
            "|---|---|---|---|",
        ]
        for row in ev["plain"]["rows"]:
            cpu = ", ".join(f"{v:.1f}" for v in row["other_threads_cpu_ms"])
            lines.append(f"| {row['call']} | {row['then']} | {cpu} | {row['remedy_ms']} ms |")
        lines += ["", "The same after one call, with the runtimes told to sleep at once:", ""]
        lines += ["| environment | " + " | ".join(ev["env"][0]["after"]) + " |"]
        lines += ["|---|" + "---|" * len(ev["env"][0]["after"])]
        for e in ev["env"]:
            name = ", ".join(f"`{k}={v}`" for k, v in e["env"].items()) or "as installed"
            cells = [", ".join(f"{v:.1f}" for v in vals) for vals in e["after"].values()]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
    alone_cost = ", ".join(
        f"{case} {e['on_alone_vs_off_alone']:.3f}" for case, e in results["summary"].items()
    )
    hp = results["hot_path"]
    lines += [
        "",
        f"Alone with the coordinator on vs off (ratio): {alone_cost}.",
        f"`entering()` for the backend entered last: {hp['entering_ns']} ns against "
        f"{hp['empty_function_ns']} ns for an empty function ({hp['added_ns']} ns added).",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="no diagnostics")
    parser.add_argument(
        "--wait",
        type=float,
        default=0.0,
        help="before each child, wait up to this many seconds for no other runnable task",
    )
    parser.add_argument("--no-evidence", action="store_true", help="skip the CPU-burn evidence")
    parser.add_argument("--cases", help="comma-separated subset of: " + ", ".join(CASES))
    parser.add_argument("--output", help="write the results as JSON (and .md beside it)")
    parser.add_argument(
        "--child", nargs=3, metavar=("CASE", "PATTERN", "MODE"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(*args.child)))
        return 0

    configs = configurations(args.quick)
    if args.cases:
        wanted = set(args.cases.split(","))
        configs = [c for c in configs if c[0] in wanted]
    rows: list[dict[str, Any]] = []
    rng = random.Random(8)
    started = time.time()
    for r in range(args.rounds):
        order = configs[:]
        rng.shuffle(order)  # interleaved: drifts of the machine hit every configuration alike
        for case, pattern, mode, env in order:
            rows.append(run_child(case, pattern, mode, env, args.wait))
        print(f"round {r + 1}/{args.rounds} done ({time.time() - started:.0f} s)", file=sys.stderr)
    loads = [r["load"] for r in rows if r.get("load") is not None]
    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "when": time.strftime("%Y-%m-%d"),
            "versions": versions(),
        },
        "rounds": args.rounds,
        "load_min": min(loads, default=0.0),
        "load_max": max(loads, default=0.0),
        "hot_path": hot_path(),
        "evidence": evidence_runs() if not args.no_evidence else None,
        "summary": {},
        "runs": rows,
    }
    results["summary"] = summarise(rows)
    report = markdown(results)
    print(report)
    if args.output:
        out = Path(args.output)
        out.write_text(json.dumps(results, indent=1) + "\n")
        out.with_suffix(".md").write_text(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
