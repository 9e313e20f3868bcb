"""The first call in a fresh process: plugin discovery, device library, host detection, tuned
choices (under 100 ms on the machine the goal was set on, measured from bytecode).

Each sample is a fresh interpreter that imports NumPy (not Prism's cost, so not timed), then
times ``import prism_core`` and the first ``prism_core.matmul`` of two 4x4 arrays, to its
result, with every installed plugin autoloaded and the validation cache warm::

    import time; import numpy as np; t = time.perf_counter(); import prism_core as p
    a = np.ones((4, 4)); p.matmul(a, a); print((time.perf_counter() - t) * 1e3)

Cases, run interleaved (one sample of each in turn) so that a change in the machine's load
touches them alike:

* ``first call``: as above, no tuning records;
* ``first call, 100 tuning entries``: with a tuning file of 100 entries for this host (made by
  ``TuningStore.record``; matmul's winner is NumPy's variant, so that no framework is imported);
* ``first call, autoload off``: ``PRISM_DISABLE_PLUGIN_AUTOLOAD=1``, only the builtin plugin;
* ``python -c pass`` (wall time of the whole interpreter, for scale) and ``import numpy``
  (timed inside the interpreter: what the measurement leaves out).

and, as a user waits for them, whole processes timed from outside (wall clock, start to exit):

* ``python -c "import numpy"``, the floor;
* the first call (``import numpy, prism_core`` and one matmul), with every installed plugin
  autoloaded and with autoload off;
* ``prism doctor`` (``python -m prism_core doctor``), likewise.

``--baseline DIR`` adds every case again with ``DIR`` first on ``PYTHONPATH`` (a
``prism_core`` of another version, with its ``hardware/`` and ``schemas/`` beside it, and the
plugins' sources of that version where ``DIR/plugins/*/src`` holds them), for a before/after
comparison within one run.  Each case is then also compared with its baseline
round by round: the median of the per-round ratios (this tree / baseline), which the machine's
load, shared by the two samples of a round, touches least.  ``--breakdown`` adds separate runs
that time the first call's steps one by one, in the order the call takes them, and the
sections of ``prism doctor`` likewise.  ``--imports`` adds runs of the first call under
``python -X importtime``: the modules it imports after NumPy, each at its least time over the
runs.

Usage::

    python benchmarks/bench_first_call.py [--repeat N] [--breakdown] [--imports]
        [--baseline DIR [--baseline-label TEXT]] [--output benchmarks/results/first-call-DATE.json]

Prints a Markdown report; with ``--output`` also writes the raw numbers as JSON and the report
beside them (``.md``).  Medians and minimums of N samples; on a shared machine compare the
cases of one run with each other, not with another run.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

FIRST_CALL = (
    "import time; import numpy as np; t = time.perf_counter(); import prism_core as p; "
    "a = np.ones((4, 4)); p.matmul(a, a); print((time.perf_counter() - t) * 1e3)"
)
IMPORT_NUMPY = (
    "import time; t = time.perf_counter(); import numpy; print((time.perf_counter() - t) * 1e3)"
)
#: Modules the first call should not need; which of them it imported is reported.
WATCHED = (
    "importlib.metadata",
    "email",
    "packaging",
    "yaml",
    "jsonschema",
    "prism_core.kernel.description.yaml_loader",
    "prism_core._description.yaml_loader",
    "archspec",
    "subprocess",
    "logging",
    "concurrent.futures",
    "prism_core._tuning",
    "prism_genomics.result",
    "torch",
    "scipy",
    "cupy",
)
MODULES = (
    "import sys, json; import numpy as np; before = set(sys.modules); import prism_core as p; "
    "a = np.ones((4, 4)); p.matmul(a, a); "
    f"print(json.dumps([len(set(sys.modules) - before), [m for m in {WATCHED!r} "
    "if m in sys.modules]]))"
)
#: The first call's steps, each timed on its own, in the order ``prism_core.matmul`` takes them
#: (each step finds the earlier ones done; the last includes declaring the catalogue, joining
#: the plugins' variants to their ops and building the plan).
STEPS = (
    ("import prism_core", "import prism_core as p"),
    (
        "import dispatch (ops, dispatcher, registry)",
        "_m('prism_core.kernel.dispatch.ops', 'prism_core._dispatch.ops')",
    ),
    (
        "plugin discovery",
        "_m('prism_core.kernel.plugins', 'prism_core._knowledge.plugins').plugins()",
    ),
    (
        "device library (validation cache hits)",
        "_m('prism_core.kernel.devices', 'prism_core._knowledge.devices').default_library()",
    ),
    (
        "host detection",
        "_m('prism_core.kernel.host', 'prism_core._knowledge.host').present_devices()",
    ),
    (
        "tuning records (host fingerprint, file)",
        "_m('prism_core._tuning.tuning_records', 'prism_core._knowledge.tuning_records').records()",
    ),
    ("the call (variants joined, plan, call)", "a = np.ones((4, 4)); p.matmul(a, a)"),
)
#: Finds a module by its name in this tree or in an earlier layout (a baseline tree).
FIND_MODULE = (
    "def _m(*names):\n"
    "    import importlib\n"
    "    for name in names:\n"
    "        try:\n"
    "            return importlib.import_module(name)\n"
    "        except ImportError:\n"
    "            pass\n"
    "    raise ImportError(names)\n"
)
BREAKDOWN = (
    FIND_MODULE
    + "import time, json; import numpy as np; out = []\n"
    + "".join(
        f"t = time.perf_counter(); {code}; out.append((time.perf_counter() - t) * 1e3)\n"
        for _, code in STEPS
    )
    + "print(json.dumps(out))"
)

#: Whole processes, timed from outside: (name, arguments after the interpreter, autoload).
WALL: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("import numpy (wall)", ("-c", "import numpy"), True),
    (
        "first call (wall)",
        ("-c", "import numpy as np, prism_core as p; a = np.ones((4, 4)); p.matmul(a, a)"),
        True,
    ),
    (
        "first call, autoload off (wall)",
        ("-c", "import numpy as np, prism_core as p; a = np.ones((4, 4)); p.matmul(a, a)"),
        False,
    ),
    ("prism doctor (wall)", ("-m", "prism_core", "doctor"), True),
    ("prism doctor, autoload off (wall)", ("-m", "prism_core", "doctor"), False),
)
#: The sections of ``prism doctor`` (``prism_core._doctor.collect``), each timed on its own in
#: the order the report takes them; a backend's line is its availability and, where it is
#: available, its capabilities (where frameworks are imported).
DOCTOR_BREAKDOWN = """
import json, time
out = {}


def step(label, fn):
    t = time.perf_counter()
    value = d._section(fn)
    out[label] = (time.perf_counter() - t) * 1e3
    return value


t = time.perf_counter()
from prism_core import _doctor as d
try:  # the modules' names before the kernel package, in a baseline tree
    from prism_core.kernel.devices import DeviceLibrary
    from prism_core.kernel.plugins import plugins
except ImportError:
    from prism_core._knowledge.devices import DeviceLibrary
    from prism_core._knowledge.plugins import plugins
try:  # where the host's report lives: beside doctor, in the kernel, before the kernel package
    from prism_core._host_report import describe_host
except ImportError:
    try:
        from prism_core.kernel.host import describe_host
    except ImportError:
        from prism_core._knowledge.host import describe_host

out["import prism_core._doctor"] = (time.perf_counter() - t) * 1e3
library = step("device library (plugin discovery)", DeviceLibrary)
step("python, packages, yaml", lambda: (d._python(), d._versions(), d._yaml()))
step("host (CPU, BLAS)", lambda: describe_host(library).as_dict())
for name, backend in sorted(plugins().backends.items()):
    step(f"backend {name}", lambda b=backend: b.availability() and b.capabilities())
step("devices present (detection)", lambda: d._devices(library))
step("caches", lambda: d._caches(library))
print(json.dumps(out))
"""

#: Entries written for the tuned case.
TUNING_ENTRIES = 100
MAKE_TUNING = """
import sys, time
import numpy as np
import prism_core as p
try:  # the modules' names before the kernel package and before the redesign (baseline trees)
    from prism_core._tuning.tuning_records import TuningEntry, TuningStore, bucket_of
    from prism_core.kernel.host import present_devices
except ImportError:
    try:
        from prism_core._knowledge.tuning_records import TuningEntry, TuningStore, bucket_of
    except ImportError:
        from prism_core._knowledge.tuning import TuningEntry, TuningStore, bucket_of
    from prism_core._knowledge.host import present_devices

n = int(sys.argv[1])
a = np.ones((4, 4))
cpu = next(d.device_type for d in present_devices().devices if d.description.kind == "cpu")
try:  # the exact key the tuner records for the timed call, where dispatch can say it
    try:
        from prism_core._tuning.candidates import candidates
    except ImportError:
        try:  # a tree before the tuner took it over
            from prism_core.kernel.dispatch.candidates import candidates
        except ImportError:
            try:  # a tree before the kernel package
                from prism_core._dispatch.candidates import candidates
            except ImportError:  # a tree before dispatch was split
                from prism_core._dispatch.dispatcher import candidates

    found = candidates(p.matmul, (a, a))
    first = (found.devices, tuple(found.variants), found.dtype or "fp64", found.bucket)
except ImportError:
    first = None
entries = []


def entry(op, device, variants, dtype, bucket):
    variants = sorted(variants)
    winner = next((v for v in variants if v.startswith("numpy.")), variants[0])
    times = {v: (1e-6 if v == winner else 2e-6 + 1e-7 * i) for i, v in enumerate(variants)}
    return TuningEntry(
        op=op, device=device, dtype=dtype, bucket=bucket, variants=tuple(variants),
        times=times, winner=winner, decided="measured", shapes=((4, 4), (4, 4)), repeats=50,
        measured_at=time.time(),
    )


if first is not None and first[1]:
    entries.append(entry("matmul", first[0], first[1], first[2], first[3]))
ops = p.all_ops()
for bucket in range(4, 40):
    for dtype in ("fp64", "fp32"):
        for name, op in ops.items():
            names = [v.name for v in op.variants if v.backend in ("numpy", "scipy", "torch")]
            if len(entries) < n and names:
                entries.append(entry(name, cpu, names, dtype, bucket))
TuningStore().record(entries=entries)
print(len(TuningStore().load()))
"""


def _env(cache: Path, *, baseline: Path | None = None, autoload: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # bytecode is compiled first; may be written
    env["PRISM_CACHE_DIR"] = str(cache)
    if not autoload:
        env["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    if baseline is not None:
        plugins = [str(src) for src in sorted(baseline.glob("plugins/*/src"))]
        env["PYTHONPATH"] = os.pathsep.join(
            filter(None, [str(baseline), *plugins, env.get("PYTHONPATH")])
        )
    return env


def _python(code: str, env: dict[str, str], cwd: Path, *args: str) -> str:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        env=env,
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def _wall_ms(env: dict[str, str], cwd: Path, *args: str) -> float:
    """The wall time of ``python ARGS`` (``-c pass`` by default), start to exit."""
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, *(args or ("-c", "pass"))],
        env=env,
        cwd=cwd,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return (time.perf_counter() - t) * 1e3


def _imports(env: dict[str, str], cwd: Path, runs: int) -> dict[str, Any]:
    """The modules the first call imports after NumPy, by ``-X importtime``: each module's least
    own and cumulative time over ``runs`` runs (microseconds), largest own time first."""
    own: dict[str, list[int]] = {}
    cumulative: dict[str, list[int]] = {}
    for _ in range(runs):
        err = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", WALL[1][1][1]],
            env=env,
            cwd=cwd,
            check=True,
            capture_output=True,
            text=True,
        ).stderr
        after_numpy = False
        for line in err.splitlines():
            fields = line.removeprefix("import time:").split("|")
            if len(fields) != 3 or not fields[0].strip().isdigit():
                continue
            name = fields[2].strip()
            if after_numpy:
                own.setdefault(name, []).append(int(fields[0]))
                cumulative.setdefault(name, []).append(int(fields[1]))
            after_numpy = after_numpy or name == "numpy"
    modules = sorted(own, key=lambda m: -min(own[m]))
    return {
        "modules": len(modules),
        "own_us_total": sum(min(own[m]) for m in modules),
        "largest": [[m, min(own[m]), min(cumulative[m])] for m in modules[:20]],
    }


def _summary(samples: list[float]) -> dict[str, Any]:
    return {"median_ms": round(statistics.median(samples), 1), "min_ms": round(min(samples), 1)}


def _stats(samples: list[float]) -> dict[str, Any]:
    return {**_summary(samples), "samples_ms": [round(s, 2) for s in samples]}


def _compile(*trees: Path) -> None:
    for tree in trees:
        compileall.compile_dir(str(tree), quiet=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=21, help="samples per case")
    parser.add_argument("--baseline", type=Path, help="another prism_core tree to compare with")
    parser.add_argument("--baseline-label", default="", help="what the baseline tree is")
    parser.add_argument("--breakdown", action="store_true", help="time the steps one by one")
    parser.add_argument("--imports", action="store_true", help="what the first call imports")
    parser.add_argument("--output", type=Path, help="write the results as JSON (and .md)")
    args = parser.parse_args()

    import numpy

    _compile(REPO / "prism_core", *sorted((REPO / "plugins").glob("*/src")))
    if args.baseline is not None:
        _compile(args.baseline / "prism_core", *sorted(args.baseline.glob("plugins/*/src")))
    work = Path(tempfile.mkdtemp(prefix="prism-first-call-"))
    load_before = os.getloadavg()
    try:
        caches = {"plain": work / "plain", "tuned": work / "tuned", "off": work / "off"}
        for cache in caches.values():
            cache.mkdir()
        #: (name, prefix of its cases, the tree first on PYTHONPATH)
        trees: list[tuple[str, str, Path | None]] = [("this tree", "", None)]
        if args.baseline is not None:
            trees.append(("baseline", "baseline: ", args.baseline.resolve()))
        cases: dict[str, tuple[str, dict[str, str]]] = {}
        #: Whole processes: name -> (the interpreter's arguments, environment).
        wall: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {}
        plain_envs: dict[str, dict[str, str]] = {}
        tuned_count: dict[str, int] = {}
        for tree_name, prefix, tree in trees:
            tag = "-baseline" if tree is not None else ""
            envs = {}
            for kind, cache in caches.items():
                path = Path(f"{cache}{tag}")
                path.mkdir(exist_ok=True)
                envs[kind] = _env(path, baseline=tree, autoload=kind != "off")
            count = _python(MAKE_TUNING, envs["tuned"], work, str(TUNING_ENTRIES))
            tuned_count[tree_name] = int(count.splitlines()[-1])
            cases[f"{prefix}first call"] = (FIRST_CALL, envs["plain"])
            cases[f"{prefix}first call, {TUNING_ENTRIES} tuning entries"] = (
                FIRST_CALL,
                envs["tuned"],
            )
            cases[f"{prefix}first call, autoload off"] = (FIRST_CALL, envs["off"])
            plain_envs[tree_name] = envs["plain"]
            for name, argv, autoload in WALL:
                if tree is None or "prism" in " ".join(argv):  # one floor: the same NumPy
                    wall[f"{prefix}{name}"] = (argv, envs["plain" if autoload else "off"])
        plain = _env(caches["plain"])
        for code, env in cases.values():  # fill the validation caches, write __pycache__
            _python(code, env, work)
        for argv, env in wall.values():  # and the doctor's (the host CPU's identification)
            _wall_ms(env, work, *argv)
        samples: dict[str, list[float]] = {name: [] for name in cases}
        samples["import numpy (not timed above)"] = []
        samples["python -c pass (wall)"] = []
        for _ in range(args.repeat):
            for name, (code, env) in cases.items():
                samples[name].append(float(_python(code, env, work)))
            samples["import numpy (not timed above)"].append(
                float(_python(IMPORT_NUMPY, plain, work))
            )
            samples["python -c pass (wall)"].append(_wall_ms(plain, work))
            for name, (argv, env) in wall.items():
                samples.setdefault(name, []).append(_wall_ms(env, work, *argv))
        modules = {
            tree_name: json.loads(_python(MODULES, cases[f"{prefix}first call"][1], work))
            for tree_name, prefix, _ in trees
        }
        steps: dict[str, dict[str, Any]] = {}
        doctor_steps: dict[str, dict[str, Any]] = {}
        if args.breakdown:
            runs: dict[str, list[list[float]]] = {name: [] for name, _, _ in trees}
            for _ in range(args.repeat):  # interleaved too
                for tree_name, prefix, _ in trees:
                    env = cases[f"{prefix}first call"][1]
                    runs[tree_name].append(json.loads(_python(BREAKDOWN, env, work)))
            for tree_name, tree_runs in runs.items():
                steps[tree_name] = {
                    label: _summary([r[i] for r in tree_runs]) for i, (label, _) in enumerate(STEPS)
                }
            doctor_runs: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in trees}
            for _ in range(max(3, args.repeat // 3)):
                for tree_name, _, _ in trees:
                    env = plain_envs[tree_name]
                    doctor_runs[tree_name].append(json.loads(_python(DOCTOR_BREAKDOWN, env, work)))
            for tree_name, sections in doctor_runs.items():
                doctor_steps[tree_name] = {
                    label: _summary([r[label] for r in sections])
                    for label in sections[0]
                }
        imports = {
            tree_name: _imports(plain_envs[tree_name], work, max(5, args.repeat // 2))
            for tree_name, _, _ in trees
            if args.imports
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    load_after = os.getloadavg()

    results: dict[str, Any] = {
        "machine": {
            "python": platform.python_version(),
            "numpy": numpy.__version__,
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "when": time.strftime("%Y-%m-%d %H:%M"),
            "load_average_1min": [round(load_before[0], 2), round(load_after[0], 2)],
        },
        "repeat": args.repeat,
        "baseline": (args.baseline_label or str(args.baseline)) if args.baseline else None,
        "tuning_entries": tuned_count,
        "cases": {name: _stats(s) for name, s in samples.items()},
        "ratios_to_baseline": _ratios(samples),
        "first_call_imports": {
            tree: {"new_modules": n, "watched": watched} for tree, (n, watched) in modules.items()
        },
        "steps": steps,
        "doctor_steps": doctor_steps,
        "imports": imports,
    }
    report = _markdown(results)
    print(report)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(results, indent=2) + "\n")
        args.output.with_suffix(".md").write_text(report + "\n")
    return 0


def _ratios(samples: dict[str, list[float]]) -> dict[str, dict[str, float]]:
    """For each case with a baseline: the median, lowest and highest of the per-round ratios
    (this tree / baseline; the two samples of a round ran one after the other)."""
    out = {}
    for name, mine in samples.items():
        theirs = samples.get(f"baseline: {name}")
        if theirs is None:
            continue
        ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
        out[name] = {
            "median": round(statistics.median(ratios), 3),
            "lowest": round(min(ratios), 3),
            "highest": round(max(ratios), 3),
        }
    return out


def _markdown(results: dict[str, Any]) -> str:
    m = results["machine"]
    lines = [
        f"# First call in a fresh process ({m['when']}, Python {m['python']}, NumPy "
        f"{m['numpy']}, {m['cpus']} CPUs, {results['repeat']} samples, load average "
        f"{m['load_average_1min'][0]} before, {m['load_average_1min'][1]} after)",
        "",
        "| case | median | min |",
        "|---|---|---|",
    ]
    for name, s in results["cases"].items():
        lines.append(f"| {name} | {s['median_ms']} ms | {s['min_ms']} ms |")
    if results.get("ratios_to_baseline"):
        lines += ["", "| case | this tree / baseline, per round: median | lowest | highest |"]
        lines.append("|---|---|---|---|")
        for name, r in results["ratios_to_baseline"].items():
            lines.append(f"| {name} | {r['median']} | {r['lowest']} | {r['highest']} |")
    floor = results["cases"].get("import numpy (wall)")
    if floor:
        lines += ["", '## Whole processes against `python -c "import numpy"` (wall clock)', ""]
        lines += ["| process | min | median | min / the floor's min |", "|---|---|---|---|"]
        for name, s in results["cases"].items():
            if name.endswith("(wall)") and not name.startswith("python -c pass"):
                ratio = s["min_ms"] / floor["min_ms"]
                lines.append(f"| {name} | {s['min_ms']} ms | {s['median_ms']} ms | {ratio:.2f} |")
    lines += ["", "## What the first call imports", "", "| tree | modules added | watched |"]
    lines.append("|---|---|---|")
    for tree, found in results["first_call_imports"].items():
        watched = ", ".join(found["watched"]) or "none"
        lines.append(f"| {tree} | {found['new_modules']} | {watched} |")
    for tree, steps in results["steps"].items():
        lines += ["", f"## Steps, one by one ({tree})", "", "| step | median | min |"]
        lines.append("|---|---|---|")
        for label, s in steps.items():
            lines.append(f"| {label} | {s['median_ms']} ms | {s['min_ms']} ms |")
        total = sum(s["median_ms"] for s in steps.values())
        lines.append(f"| (sum of the medians) | {total:.1f} ms | |")
    for tree, steps in results["doctor_steps"].items():
        lines += ["", f"## `prism doctor`, section by section ({tree})", ""]
        lines += ["| section | median | min |", "|---|---|---|"]
        for label, s in steps.items():
            lines.append(f"| {label} | {s['median_ms']} ms | {s['min_ms']} ms |")
    for tree, found in results["imports"].items():
        lines += ["", f"## The first call's imports after NumPy, `-X importtime` ({tree})", ""]
        lines.append(
            f"{found['modules']} modules, {found['own_us_total'] / 1000:.1f} ms of their own "
            "in all (each module's least time over the runs); the largest:"
        )
        lines += ["", "| module | own | with what it imports |", "|---|---|---|"]
        for name, own, cumulative in found["largest"]:
            lines.append(f"| {name} | {own / 1000:.2f} ms | {cumulative / 1000:.2f} ms |")
    if results["baseline"]:
        lines += ["", f"Baseline: {results['baseline']}."]
    lines += ["", f"Tuning entries on file in the tuned case: {results['tuning_entries']}."]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
