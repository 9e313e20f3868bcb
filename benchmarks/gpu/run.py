"""The GPU check: every GPU path of Prism, step by step, each under its own timeout.

``benchmarks/gpu/run.sh`` installs the wheels that ``prepare.sh`` downloaded and runs this
script; ``run.sh --dry-run`` runs it in the environment at hand (CI's), where each step that
needs a GPU runs its dry form (the same command narrowed, or a script that checks for the GPU
and says why it is not there) and is reported "skipped: no GPU" with the reason.

Each run works in a folder of its own (each step's log in ``logs/STEP.log``, its results in
``results/``, the run's ``summary.json`` and ``summary.md``) and archives that folder into one
file, ``OUT/gpu-check-N-DATE.tar.gz`` (N counts the archives already in OUT: a rerun keeps the
earlier ones); ``OUT/summary.md`` holds the summary tables of the runs, the latest first, so
that they are readable at once.  Nothing else is written under OUT (the device tool brings
back at most 8 files).  A step's status is ``passed``, ``missed`` (it ran; its goal was not
met), ``skipped`` (with the reason) or ``failed``; the script exits 1 if any step failed.

The whole check, the installation of the wheels included, fits in ``--budget`` seconds
(``BUDGET``, 8 minutes by default, counted from run.sh's start): the steps' timeouts add up to
at most ``BUDGET - START_S``.  The steps after ``calibrate`` run in the tuning cache it
calibrated, which lives on the machine (``--state``) so that a rerun of one of them with
``--only`` finds it; where it holds no calibration for a GPU, ``calibrate`` runs first.  See
docs/gpu.md.

By default the check is of NVIDIA's GPU through torch-CUDA and CuPy.  ``--device TYPE`` (or the
environment variable ``PRISM_GPU_DEVICE``) names another accelerator by its Prism description
(``amd.mi300x``, ``intel.max-1550``, ``apple.m4-max-gpu``, ``huawei.ascend-910b``, or a family:
``amd.gpu``): the check first makes sure it is present (else it says what is, and exits 1; 2
for a name no description has), then ``doctor`` passes only if it is detected, the conformance
suite runs on every backend that drives it, ``tests``, ``calibrate`` and ``bench`` run as
always, and the steps that measure the CUDA path say "skipped" with the reason.

Usage::

    python benchmarks/gpu/run.py --out DIR [--dry-run] [--budget SECONDS] [--only STEP,...]
        [--device TYPE]
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import functools
import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: A script that finds no GPU says so on a line of its own, beginning with this.
SKIP = re.compile(r"^skipped: (.+)$", re.MULTILINE)
#: The whole check in seconds, from run.sh's start: 8 minutes, so that a failed step can be
#: fixed and rerun within a lent machine's 15 minutes (its start included).
BUDGET = 480
#: Seconds before the first step: run.sh's installation of the wheels and the probe of the GPU.
#: The steps' timeouts add up to at most BUDGET - START_S (tests/test_gpu_scripts.py).
START_S = 30
#: Files the device tool brings back from OUT, at most; 16 MiB each.
OUT_FILES = 8
OUT_FILE_BYTES = 16 * 2**20
#: bench_backends' goal: Prism's call at least 0.95 as fast as the direct one (direct / prism).
BACKENDS_GOAL = 0.95
#: dispatch_profile's goal: Prism's added cost per call on GPU arrays, on torch and on CuPy, at
#: most this many microseconds (what it added on CuPy on the H100; docs/gpu.md).
PROFILE_GOAL_US = 3.0
#: function_kernels' goal: Prism's placed kernel on CuPy at least 0.9x the hand port's speed.
FUNCTION_KERNELS_GOAL = 0.9
#: bench_offload's goal: automatic mode at most 1.1x the better of CPU-only and always-GPU.
OFFLOAD_GOAL = 1.1
#: bench_split's goal: the automatic split at least 1.0x the better single target's speed.
SPLIT_GOAL = 1.0
#: The option of `prism bench` that measures the performance model's calibration.
CALIBRATE_FLAG = "--calibrate"
#: The environment variable naming the accelerator, where ``--device`` does not.
DEVICE_VARIABLE = "PRISM_GPU_DEVICE"
#: The steps that check any accelerator named with ``--device``; the others measure the NVIDIA
#: CUDA path (torch-CUDA, CuPy's CUDA build, Numba's CUDA kernels).
ANY_DEVICE_STEPS = ("doctor", "tests", "conformance", "calibrate", "bench")


@dataclass
class Outcome:
    """What a step's parser makes of a run that exited 0."""

    status: str  # passed | missed | skipped | failed
    summary: str
    result: dict[str, Any] = field(default_factory=dict)


@dataclass
class Step:
    name: str
    title: str
    argv: list[str]
    timeout: float
    parse: Callable[[Path, str], Outcome]
    #: On a host without a GPU: the command that checks this step still works (None: the same).
    dry: list[str] | None = None
    #: The dry form writes an output that the parser reads (checking the parser on it).
    dry_parse: bool = False
    #: Runs in the tuning cache that ``calibrate`` calibrated (and needs its calibration).
    calibrated: bool = False


def probe() -> dict[str, Any]:
    """Python, torch, CuPy and the GPU, in a child process (this one stays free of CUDA)."""
    code = r"""
import json, platform
out = {"python": platform.python_version(), "machine": platform.machine()}
try:
    import torch
    out["torch"] = torch.__version__
    out["torch_cuda"] = torch.version.cuda
    if torch.cuda.is_available():
        out["gpu"] = torch.cuda.get_device_name(0)
        out["gpu_count"] = torch.cuda.device_count()
    else:
        out["no_gpu"] = ("torch " + torch.__version__ + ": torch.cuda.is_available() is False"
                         + ("" if torch.version.cuda else " (a CPU-only build)"))
except Exception as exc:
    out["no_gpu"] = f"torch cannot be imported: {type(exc).__name__}: {exc}"
try:
    import cupy
    out["cupy"] = cupy.__version__
    out["cupy_devices"] = cupy.cuda.runtime.getDeviceCount()
except Exception as exc:
    out["cupy_missing"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
print(json.dumps(out))
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    if done.returncode != 0:
        return {"no_gpu": f"the probe failed: {done.stderr.strip().splitlines()[-1:]}"}
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


# -- what each step's output means ----------------------------------------------------------------


def first_json(output: str) -> Any:
    """The first JSON object in a command's output that begins a line (text may come before
    and after it)."""
    for start in re.finditer(r"^\{", output, re.MULTILINE):
        with contextlib.suppress(ValueError):
            return json.JSONDecoder().raw_decode(output[start.start() :])[0]
    raise ValueError("no JSON object in the output")


def is_gpu(device_type: str) -> bool:
    import prism_core

    try:
        return bool(prism_core.hardware.get_device(device_type).kind == "gpu")
    except prism_core.hardware.UnknownDeviceError:
        return False


def gpu_calibration(cache: Path) -> dict[str, Any]:
    """The calibration stored for GPU device types in the tuning files under ``cache``."""
    found: dict[str, Any] = {}
    for path in sorted(cache.rglob("*.json")) if cache.is_dir() else []:
        with contextlib.suppress(OSError, ValueError, AttributeError):
            document = json.loads(path.read_text())
            if document.get("format") == "prism-tuning":
                found |= {k: v for k, v in document["calibration"].items() if is_gpu(k)}
    return found


def figures(entry: dict[str, Any]) -> str:
    """A calibration entry in words, as ``prism bench --calibrate`` prints it (or plainly, where
    that function is not there)."""
    try:
        from prism_core._tuning.calibration import figures_text

        return str(figures_text(entry))
    except Exception:
        parts = []
        for key, value in entry.items():
            if isinstance(value, dict):
                values = " ".join(f"{k} {v:.3g}" for k, v in value.items() if ":" not in k)
                parts.append(f"{key} {values}")
            elif isinstance(value, (int, float)) and key != "measured_at":
                parts.append(f"{key} {value:.3g}")
        return ", ".join(parts)


def is_a(device_type: str, device: str) -> bool:
    """Whether ``device_type``'s description is ``device`` or one of its kind."""
    import prism_core

    try:
        return bool(prism_core.hardware.get_device(device_type).is_a(device))
    except prism_core.hardware.UnknownDeviceError:
        return False


def parse_doctor(results: Path, output: str, device: str | None = None) -> Outcome:
    """Passed when a GPU (with ``device``: that device, or one of its kind) is detected and
    mapped to its description."""
    report = first_json(output)
    (results / "doctor.json").write_text(json.dumps(report, indent=1) + "\n")
    present = report["devices"]["present"]
    if device is None:
        gpus = [d for d in present if is_gpu(d["device_type"])]
    else:
        gpus = [d for d in present if is_a(d["device_type"], device)]
    seen = ", ".join(f"{d['name']} -> {d['device_type']}" for d in present)
    if not gpus:
        why = "; ".join(f"{k}: {v}" for k, v in report["devices"].get("none_found", {}).items())
        what = "no GPU" if device is None else f"no {device}"
        return Outcome("missed", f"{what} mapped to a description (present: {seen}; {why})")
    return Outcome("passed", f"present: {seen}", {"present": present})


def parse_pytest(results: Path, output: str) -> Outcome:
    junit = results / "tests.xml"
    if not junit.exists():  # --collect-only writes none
        found = re.search(r"(\d+) tests? collected", output)
        count = found.group(1) if found else "?"
        return Outcome("passed", f"{count} tests collected", {"collected": count})
    suite = ET.parse(junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite[0]
    counts = {k: int(suite.get(k, "0")) for k in ("tests", "failures", "errors", "skipped")}
    reasons = collections.Counter(
        (s.get("message") or "").removeprefix("Skipped: ")[:80]
        for tc in suite.iter("testcase")
        for s in tc.findall("skipped")
    )
    counts["passed"] = counts["tests"] - counts["failures"] - counts["errors"] - counts["skipped"]
    why = "; ".join(f"{n}x {reason}" for reason, n in reasons.most_common(3))
    text = (
        f"{counts['passed']} passed, {counts['failures'] + counts['errors']} failed, "
        f"{counts['skipped']} skipped" + (f" ({why})" if why else "")
    )
    return Outcome("passed", text, counts | {"skip_reasons": dict(reasons)})


def parse_conformance(results: Path, output: str) -> Outcome:
    """Passed when no check failed and every variant was checked at least once (the suite runs
    round-robin over the ops under a time limit; the counts say how much of it ran)."""
    found = json.loads((results / "conformance.json").read_text())

    def reached(r: dict[str, Any]) -> bool:
        if "subjects" in r:  # every variant checked at least once
            return bool(r["subjects_run"] >= r["subjects"])
        return bool(r["run"] >= r["checks"])  # an older conformance.py: every check

    parts = []
    for b, r in found["backends"].items():
        text = f"{b}: {r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped"
        if r["run"] != r["checks"]:
            text += f" ({r['run']} of {r['checks']} checks run"
            if "subjects" in r:
                text += f"; {r['subjects_run']} of {r['subjects']} variants"
            text += ")"
        parts.append(text)
    parts += [f"{b}: not run: {why}" for b, why in found["unavailable"].items()]
    backends = found["backends"].values()
    status = "passed"
    if not all(reached(r) for r in backends) or found["unavailable"]:
        status = "missed"
    if any(r["failed"] for r in backends):
        status = "failed"
    return Outcome(status, "; ".join(parts), found)


def parse_backends(results: Path, output: str) -> Outcome:
    rows = json.loads((results / "backends.json").read_text())["rows"]
    timed = [r for r in rows if "ratio" in r]
    if not timed:
        return Outcome("missed", "no GPU backend timed", {"rows": rows})
    worst = max(timed, key=lambda r: r["ratio"])
    below = [r for r in timed if 1 / r["ratio"] < BACKENDS_GOAL]
    text = (
        f"direct / Prism: worst {1 / worst['ratio']:.3f} ({worst['backend']} {worst['op']} "
        f"{worst['dtype']} n={worst['n']}, +{worst['added_us']:.1f} us); {len(below)} of "
        f"{len(timed)} rows below the goal {BACKENDS_GOAL}"
    )
    result = {"worst": worst, "below_goal": below, "rows": len(timed)}
    return Outcome("missed" if below else "passed", text, result)


def parse_profile(results: Path, output: str) -> Outcome:
    """The goal: on torch CUDA tensors and on CuPy arrays, Prism's added cost per call on every
    case at most ``PROFILE_GOAL_US``, and every result left on the GPU.  CuPy's own added cost
    (NumPy's function on the CuPy arrays, its protocol dispatch, over CuPy's) is reported beside
    it."""
    found = json.loads((results / "profile.json").read_text())
    rows = found.get("added")
    if rows is None:
        return Outcome("missed", "field 'added' not in output (the goal's figures)", found)
    own = {r["case"]: r["protocol_added_us"] for r in rows if "protocol_added_us" in r}
    errors = [f"{r['backend']} {r['case']}: {r['error']}" for r in rows if "error" in r]
    over, parts, off_gpu = [], [], []
    for backend in dict.fromkeys(r["backend"] for r in rows):
        timed = [r for r in rows if r["backend"] == backend and "added_us" in r]
        if not timed:
            continue
        for r in timed:
            r["bound_us"] = PROFILE_GOAL_US
            if r["added_us"] > r["bound_us"]:
                over.append(f"{backend} {r['case']} +{r['added_us']:.1f} > {r['bound_us']:.1f}")
            if backend != "numpy" and "cuda" not in str(r.get("result", "")).lower():
                off_gpu.append(f"{backend} {r['case']} gave {r.get('result')}")
        worst = max(timed, key=lambda r: r["added_us"])
        median = sorted(r["added_us"] for r in timed)[len(timed) // 2]
        parts.append(
            f"{backend}: +{worst['added_us']:.1f} us at worst ({worst['case']}, "
            f"{worst.get('plan', {}).get('path', '?')}), median +{median:.1f}"
        )
    if own:
        parts.append(f"CuPy's own (NumPy's protocol): +{min(own.values()):.1f} to "
                     f"+{max(own.values()):.1f} us")  # fmt: skip
    missing = {"torch", "cuda"} - {r["backend"] for r in rows if "added_us" in r}
    text = "; ".join(parts)
    if over:
        text += f"; over the bound: {', '.join(over)}"
    if off_gpu:
        text += f"; results not on the GPU: {', '.join(off_gpu)}"
    if errors:
        text += f"; not run: {'; '.join(errors)}"
    if missing:
        text += f"; not timed on {', '.join(sorted(missing))}"
    missed = over or off_gpu or errors or missing
    return Outcome("missed" if missed else "passed", text, found)


def parse_calibrate(results: Path, output: str) -> Outcome:
    """``prism bench --calibrate --json``: passed when it stored a calibration for a GPU in the
    tuning cache; each device's figures are recorded."""
    found = first_json(output)
    (results / "calibrate.json").write_text(json.dumps(found, indent=1) + "\n")
    stored: dict[str, Any] = {}
    where = found.get("store_path")
    problem = "it stored nothing (store_path null)" if not where else ""
    if where:
        try:
            stored = json.loads(Path(where).read_text()).get("calibration") or {}
        except (OSError, ValueError, AttributeError) as exc:
            problem = f"its tuning file could not be read ({type(exc).__name__}: {exc})"
    gpus = {k: v for k, v in stored.items() if is_gpu(k)}
    devices = found.get("devices") or []
    measured = [f"{d.get('device_type')} ({d.get('backend')}): {figures(d.get('figures') or {})}"
                + (f"; not measured: {'; '.join(d['skipped'])}" if d.get("skipped") else "")
                for d in devices if isinstance(d, dict)]  # fmt: skip
    result = {"stored": stored, "devices": devices, "store_path": where,
              "problems": found.get("problems", []), "seconds": found.get("seconds")}  # fmt: skip
    if not gpus:
        text = (
            "no calibration for a GPU stored"
            + (f": {problem}" if problem else "")
            + f"; measured: {' | '.join(measured) or 'nothing'}"
            + (f"; problems: {'; '.join(map(str, found['problems']))[:300]}"
               if found.get("problems") else "")
        )  # fmt: skip
        return Outcome("missed", text, result)
    text = "; ".join(f"stored for {k}: {figures(v)}" for k, v in gpus.items())
    return Outcome("passed", text, result)


def parse_bench(results: Path, output: str) -> Outcome:
    found = first_json(output)
    (results / "bench.json").write_text(json.dumps(found, indent=1) + "\n")
    summary = found["summary"]
    text = (
        f"Prism / fastest {summary['prism_vs_oracle']:.3f}, Prism / NumPy "
        f"{summary['prism_vs_numpy']:.3f} (geometric means over {len(found['rows'])} cases); "
        f"backends: {', '.join(found['host']['backends'])}"
    )
    return Outcome("passed", text, {"summary": summary, "host": found["host"]})


def _offload_entries(summary: Any, prefix: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """(label, figures) of each op (and dtype) in bench_offload's summary, however nested."""
    if not isinstance(summary, dict):
        return
    if any(not isinstance(v, dict) for v in summary.values()) or not summary:
        yield prefix.strip() or "all", summary
        return
    for key, value in summary.items():
        yield from _offload_entries(value, f"{prefix} {key}")


def parse_offload(results: Path, output: str) -> Outcome:
    found = json.loads((results / "offload.json").read_text())
    if "summary" not in found:
        return Outcome("missed", "field 'summary' not in output", found)
    entries = list(_offload_entries(found["summary"]))
    needed = ("worst_auto_over_better", "worst_at", "measured_crossover", "modelled_crossover")
    for name, s in entries:
        lacking = [k for k in needed if k not in s]
        if lacking:
            return Outcome("missed", f"field {lacking[0]} not in output ({name})", found)
    if not entries:
        return Outcome("missed", "no op in the output's summary", found)
    worst = max(s["worst_auto_over_better"] for _, s in entries)
    text = "; ".join(
        f"{name}: worst auto / better {s['worst_auto_over_better']:.3f} at n={s['worst_at']}, "
        f"crossover measured {s['measured_crossover']}, modelled {s['modelled_crossover']}"
        for name, s in entries
    )
    meta = found.get("meta") or {}
    calibrated = (meta.get("calibrated") or {}).get(meta.get("gpu"))
    if calibrated is not None:  # what the model took from this host's calibration
        text = (f"the model for {meta['gpu']} calibrated: {calibrated}; " if calibrated != "no"
                else f"the model for {meta['gpu']} NOT calibrated; ") + text  # fmt: skip
    crossovers = {name: {"measured": s["measured_crossover"],
                         "modelled": s["modelled_crossover"]} for name, s in entries}  # fmt: skip
    result = {"summary": found["summary"], "crossovers": crossovers, "meta": found.get("meta")}
    return Outcome("passed" if worst <= OFFLOAD_GOAL else "missed", text, result)


def _split_cases(found: dict[str, Any]) -> list[dict[str, Any]]:
    results = found.get("results", found)
    cases = results.get("cases")
    if cases is None and isinstance(results.get("cuda"), dict):
        cases = [results["cuda"]]
    return [c for c in cases or [] if isinstance(c, dict) and "skipped" not in c]


def parse_split(results: Path, output: str) -> Outcome:
    """The goal: in every case, ``ratio="auto"`` at least SPLIT_GOAL x the better single
    target's speed (its time over auto's).  bench_split reports per case what auto decided
    (``auto``: split, or declined and the target it ran on) and whether the goal was met (a
    declined call, the better target's own call timed twice, within its ``TIE``); from an
    older bench_split, the ``split auto`` time against the better single one."""
    found = json.loads((results / "split.json").read_text())
    cases = _split_cases(found)
    skipped = (found.get("results") or {}).get("cuda", {}).get("skipped")
    if not cases:
        why = f" ({skipped})" if skipped else ""
        return Outcome("missed", f"field results.cases not in output{why}", found)
    parts, below, kept = [], [], []
    for c in cases:
        name = c.get("name", "?")
        seconds, best = c.get("seconds"), c.get("best_single")
        if not isinstance(seconds, dict) or best not in seconds:
            return Outcome("missed", f"field best_single not in output ({name})", found)
        auto = c.get("auto")
        if isinstance(auto, dict) and {"speedup", "seconds", "decision"} <= set(auto):
            ratio, auto_s = auto["speedup"], auto["seconds"]
            met = auto.get("goal_met", ratio >= SPLIT_GOAL)
            decided = auto["decision"] + (f" (ran on {auto['ran_on']})" if auto.get("ran_on")
                                          else "")  # fmt: skip
        elif "split auto" in seconds:  # an older bench_split: no "auto" field
            auto_s = seconds["split auto"]
            ratio = seconds[best] / auto_s
            met, decided = ratio >= SPLIT_GOAL, "split"
        else:
            return Outcome("missed", f"field auto not in output ({name})", found)
        parts.append(
            f"{name}: auto {decided}, {ratio:.2f}x the better single target ({best}, "
            f"{seconds[best] * 1e3:.1f} ms; auto {auto_s * 1e3:.1f} ms)"
            + ("" if met else f": below {SPLIT_GOAL}x")
        )
        kept.append({"case": name, "better_single": best, "auto": auto, "speedup": ratio,
                     "goal_met": met, "seconds": seconds})  # fmt: skip
        if not met:
            below.append(name)
    return Outcome("missed" if below else "passed", "; ".join(parts), {"cases": kept})


def parse_sw(results: Path, output: str) -> Outcome:
    found = json.loads((results / "sw.json").read_text())
    parts, exact = [], True
    if "exact" in found:  # the torch wavefront
        exact = found["exact"]
        parts.append(
            f"{'exact' if exact else 'NOT exact'} on {found['checked_pairs']} pairs; "
            f"{found['gcups']:.1f} GCUPS on {found['cells'] / 1e9:.2f} G cells"
        )
    numba = found.get("numba_gpu")
    if numba:  # the Numba inter-sequence kernel (goal: 300 GCUPS)
        exact = exact and numba["exact"]
        goal = numba["goal"]
        parts.append(
            f"numba {'exact' if numba['exact'] else 'NOT exact'}; {goal['gcups']:.0f} GCUPS on "
            f"100,000 targets (goal 300); GPU wins from {numba.get('crossover_cells')} cells"
        )
    return Outcome("passed" if exact and parts else "missed", "; ".join(parts), found)


def parse_function_kernels(results: Path, output: str) -> Outcome:
    found = json.loads((results / "function_kernels.json").read_text())
    rows = found["rows"]
    timed = [r for r in rows if "hand_over_prism_cupy" in r]
    if not timed:
        first: tuple[str, Any] = next(iter(found["not_run"].items()), ("-", {}))
        return Outcome(
            "missed",
            f"no kernel timed on CuPy (not run: {', '.join(sorted(found['not_run']))}; "
            f"{first[0]}: {first[1]})",
            found,
        )
    worst = min(timed, key=lambda r: r["hand_over_prism_cupy"])
    torch_ratios = [r["hand_over_prism_torch"] for r in rows if "hand_over_prism_torch" in r]
    text = (
        f"hand port / Prism on CuPy: geometric mean {found['geomean_hand_over_prism_cupy']:.3f}, "
        f"worst {worst['hand_over_prism_cupy']:.3f} ({worst['kernel']}); "
        f"{len(found['below_goal'])} of {len(timed)} kernels below {FUNCTION_KERNELS_GOAL}; "
        f"torch-CUDA timed on {len(torch_ratios)} of {len(rows)}"
        + (f"; not run: {', '.join(sorted(found['not_run']))}" if found["not_run"] else "")
    )
    if found.get("differs"):
        text += f"; results differ from NumPy's on: {', '.join(sorted(found['differs']))}"
    missed = found["below_goal"] or found["not_run"] or found.get("differs")
    return Outcome("missed" if missed else "passed", text, found)


# -- the steps ------------------------------------------------------------------------------------

#: Tests that the GPU run leaves out: JAX's whole conformance run (minutes) and the suites'
#: own conformance runs (the conformance step's), and the bulk of the host-only tests that CI
#: runs (NumPy standing in for CuPy; torch's op functions on CPU tensors).
DESELECTED = (
    "test_conformance_on_the_gpu",
    "test_the_conformance_suite_passes",
    "test_each_op_on_a_simulated_gpu",
    "test_each_op_has_a_function",
    "test_each_implementation_agrees_with_numpy",
    "test_small_calls_stay_off_a_simulated_gpu",
    "test_values_as_numpy_on_tensors",
)


def steps(results: Path, workers: int) -> list[Step]:
    py = sys.executable
    bench = ROOT / "benchmarks"
    tests = [f"plugins/prism-plugin-{name}/tests" for name in ("torch", "cuda", "jax")]
    # pytest-benchmark (on the GPU image) warns under xdist, which the project's
    # filterwarnings = error makes fatal.
    deselected = " and ".join(f"not {t}" for t in DESELECTED)
    pytest = [py, "-m", "pytest", *tests, "-m", "not slow", "-p", "no:cacheprovider",
              "-p", "no:benchmark", "-q", "-k", deselected]  # fmt: skip
    offload = [py, str(bench / "bench_offload.py"), "--ops", "matmul,fft.fft,linalg.solve,add",
               "--dtypes", "float32,float64"]  # fmt: skip
    bench_small = ["--no-store", "--ops", "add", "--dtypes", "float32", "--budget", "10"]
    return [
        Step("doctor", "prism doctor: the GPU detected and mapped to its description",
             [py, "-m", "prism_core", "doctor", "--json"], 20, parse_doctor),
        Step("tests", "the torch, cuda and jax plugins' tests of the GPU paths (not the slow "
             "ones, nor the host-only bulk CI runs)",
             [*pytest, "-n", str(workers), f"--junitxml={results / 'tests.xml'}"], 55,
             parse_pytest, dry=[*pytest, "--collect-only"]),
        Step("conformance", "the conformance suite on torch-CUDA and CuPy, 15 s each",
             [py, str(bench / "gpu" / "conformance.py"), "--seconds", "15", "--output",
              str(results / "conformance.json")], 45, parse_conformance),
        Step("backends", f"bench_backends: plugin vs direct torch/CuPy (goal >= {BACKENDS_GOAL})",
             [py, str(bench / "bench_backends.py"), "--quick", "--device", "cuda",
              "--backends", "torch,cuda", "--rounds", "3", "--output",
              str(results / "backends")], 25, parse_backends),
        Step("profile", f"Prism's added cost per call on GPU arrays (goal <= {PROFILE_GOAL_US} us"
             " on torch and CuPy); where it goes; NumPy round trips",
             [py, str(bench / "gpu" / "dispatch_profile.py"), "--output",
              str(results / "profile.json")], 25, parse_profile,
             dry=[py, str(bench / "gpu" / "dispatch_profile.py"), "--dry", "--output",
                  str(results / "profile.json")], dry_parse=True),
        Step("calibrate", "prism bench --calibrate in a fresh tuning cache: the performance "
             "model's figures measured on the GPU and stored",
             [py, "-m", "prism_core", "bench", CALIBRATE_FLAG, "--json", "--budget", "25"], 30,
             parse_calibrate,
             dry=[py, "-m", "prism_core", "bench", CALIBRATE_FLAG, "--json", *bench_small],
             dry_parse=True),
        Step("offload", f"bench_offload in the calibrated cache: automatic <= {OFFLOAD_GOAL}x "
             "the better of CPU and GPU; crossovers modelled and measured",
             [*offload, "--rounds", "2", "--output", str(results / "offload")], 100,
             parse_offload,
             dry=[*offload, "--rounds", "1", "--simulate", "nvidia.h100-sxm", "--max-n", "64"],
             calibrated=True),
        Step("split", f"bench_split --device cuda in the calibrated cache: the automatic split "
             f">= {SPLIT_GOAL}x the better single target",
             [py, str(bench / "bench_split.py"), "--device", "cuda", "--rounds", "3",
              "--output", str(results / "split")], 35, parse_split, dry_parse=True,
             calibrated=True),
        Step("smith-waterman", "the torch and Numba CUDA Smith-Waterman batch kernels: exact, "
             "GCUPS, crossover against the CPU",
             [py, str(bench / "gpu" / "sw_check.py"), "--sizes", "8192", "--seconds", "1",
              "--output", str(results / "sw.json")], 35, parse_sw),
        Step("function-kernels",
             "NumPy-style kernels placed by prism.function on torch-CUDA and CuPy against a hand "
             f"port and NumPy (goal >= {FUNCTION_KERNELS_GOAL}x the hand port)",
             [py, str(bench / "gpu" / "function_kernels.py"), "--rounds", "3", "--output",
              str(results / "function_kernels.json")], 45, parse_function_kernels),
        Step("bench", "prism bench on the GPU machine, in the calibrated cache",
             [py, "-m", "prism_core", "bench", "--json", "--plot", str(results / "bench.png"),
              "--budget", "30"], 35, parse_bench,
             dry=[py, "-m", "prism_core", "bench", "--json", *bench_small], dry_parse=True,
             calibrated=True),
    ]  # fmt: skip


def for_device(chosen: list[Step], device: str | None) -> list[Step]:
    """The steps of a check of ``device`` (``--device``): ``chosen`` unchanged where it is
    ``None``; else ``doctor`` looks for that device, the conformance suite runs on it, and each
    step of the CUDA path says it is skipped, and why."""
    if device is None:
        return chosen
    py, script = sys.executable, str(ROOT / "benchmarks" / "gpu" / "conformance.py")
    out = []
    for step in chosen:
        if step.name == "doctor":
            step = dataclasses.replace(
                step, title=f"prism doctor: {device} detected and mapped to its description",
                parse=functools.partial(parse_doctor, device=device),
            )  # fmt: skip
        elif step.name == "conformance":
            output = next(a for a in step.argv if a.endswith("conformance.json"))
            step = dataclasses.replace(
                step, title=f"the conformance suite on {device}, 15 s per backend that drives it",
                argv=[py, script, "--device", device, "--seconds", "15", "--output", output],
                dry=[py, script, "--device", device, "--dry-run"],
            )  # fmt: skip
        elif step.name not in ANY_DEVICE_STEPS:
            said = (
                f"skipped: {step.name} measures the NVIDIA CUDA path; --device {device} runs "
                f"{', '.join(ANY_DEVICE_STEPS)}"
            )
            step = dataclasses.replace(
                step, argv=[py, "-c", f"print({said!r})"], dry=None, dry_parse=False
            )
        out.append(step)
    return out


def check_device(device: str, dry: bool) -> tuple[int, str]:
    """(0, the device type present) where ``device`` is here (in a dry run: where a
    description has that name), else (exit status, what conformance.py said: what is
    present, why each plugin found nothing)."""
    script = ROOT / "benchmarks" / "gpu" / "conformance.py"
    argv = [sys.executable, str(script), "--device", device, "--dry-run" if dry else "--present"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    except subprocess.TimeoutExpired:
        return 1, f"--device {device}: looking for it took over 120 s"
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()
        text = said[-1] if said else f"--device {device}: exit {done.returncode}"
        return done.returncode, text.removeprefix("conformance.py: ")
    return 0, device if dry else json.loads(done.stdout.strip().splitlines()[-1])["device"]


# -- running --------------------------------------------------------------------------------------


def tail(output: str, lines: int = 3) -> str:
    return " | ".join([line for line in output.strip().splitlines() if line.strip()][-lines:])


def run_step(argv: list[str], timeout: float, log: Path, env: dict[str, str]) -> Any:
    """(exit code or None on timeout, output, seconds); the whole process group is stopped
    on timeout (pytest's workers too)."""
    began = time.perf_counter()
    with log.open("w", encoding="utf-8") as fh:
        fh.write("$ " + " ".join(argv) + "\n\n")
        fh.flush()
        proc = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, start_new_session=True,
        )  # fmt: skip
        try:
            output, _ = proc.communicate(timeout=timeout)
            code: int | None = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            output, _ = proc.communicate()
            code = None
        fh.write(output)
    return code, output, time.perf_counter() - began


def archive_name(out: Path) -> str:
    """``gpu-check-N-DATE``: N counts the archives already in OUT, plus one."""
    n = 1 + len(list(out.glob("gpu-check-*.tar.gz")))
    stem = f"gpu-check-{n}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    while (out / f"{stem}.tar.gz").exists():
        n += 1
        stem = f"gpu-check-{n}-{time.strftime('%Y%m%d-%H%M%S', time.gmtime())}"
    return stem


def started_at() -> float:
    """When run.sh started (``PRISM_GPU_CHECK_STARTED``, seconds since the epoch), or now."""
    now = time.time()
    try:
        began = float(os.environ.get("PRISM_GPU_CHECK_STARTED", now))
    except ValueError:
        return now
    return began if now - 3600 < began <= now else now


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where the archive goes")
    parser.add_argument(
        "--dry-run", action="store_true",
        help="the steps' dry forms, for a host without a GPU (CI): each GPU step is skipped "
        "with its reason after checking that its command still works",
    )  # fmt: skip
    parser.add_argument("--budget", type=float, default=BUDGET,
                        help=f"seconds for the whole check, from run.sh's start (default "
                        f"{BUDGET})")  # fmt: skip
    parser.add_argument("--only", default=None, help="comma-separated steps to run")
    parser.add_argument("--workers", type=int, default=8, help="pytest-xdist workers")
    parser.add_argument(
        "--device", default=os.environ.get(DEVICE_VARIABLE) or None,
        help="the accelerator to check, by its Prism description (amd.mi300x, intel.max-1550, "
        f"apple.m4-max-gpu, huawei.ascend-910b, amd.gpu; default: ${DEVICE_VARIABLE}, else "
        "NVIDIA's GPU through torch-CUDA and CuPy)",
    )  # fmt: skip
    parser.add_argument(
        "--state", type=Path,
        default=Path(os.environ.get("PRISM_GPU_STATE")
                     or Path(tempfile.gettempdir()) / "prism-gpu-check"),
        help="where the calibrated tuning cache stays between runs on this machine",
    )  # fmt: skip
    args = parser.parse_args()
    found = ""
    if args.device is not None:
        code, found = check_device(args.device, args.dry_run)
        if code != 0:
            print(f"run.py: {found}", file=sys.stderr)
            return code

    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget - (time.time() - started_at())
    began = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="prism-gpu-check-"))
    name = archive_name(out)
    folder = work / name
    logs, results = folder / "logs", folder / "results"
    logs.mkdir(parents=True)
    results.mkdir()
    env_info = probe()
    if args.device is not None:  # present (check_device): the check is of it, not of CUDA
        env_info["device"] = args.device
        if not args.dry_run:
            env_info.pop("no_gpu", None)
            env_info["gpu"] = f"{found} (--device {args.device})"
    no_gpu = "--dry-run" if args.dry_run else env_info.get("no_gpu")
    if args.dry_run and "no_gpu" in env_info:
        no_gpu = f"--dry-run; {env_info['no_gpu']}"
    print(f"GPU check {name}: {env_info.get('gpu', 'no GPU: ' + str(no_gpu))}", flush=True)
    dry = no_gpu is not None  # every step checks something of the GPU

    everything = for_device(steps(results, args.workers), args.device)
    known = [s.name for s in everything]
    chosen = everything
    notes: list[str] = []
    # The tuning caches: the run's own, fresh; and the calibrated one, which calibrate empties
    # and fills and the steps after it use (kept on the machine for a rerun; a dry run's is
    # its own).
    fresh = work / "cache"
    calibrated = work / "calibrated-cache" if dry else args.state.resolve() / "cache"
    if args.only:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if w not in known]
        if unknown:
            shutil.rmtree(work, ignore_errors=True)
            parser.error(f"--only: unknown step(s) {', '.join(unknown)}; known: {', '.join(known)}")
        needs = [s.name for s in everything if s.name in wanted and s.calibrated]
        if needs and "calibrate" not in wanted and not dry and not gpu_calibration(calibrated):
            wanted.append("calibrate")
            notes.append(f"{', '.join(needs)} need(s) a calibrated tuning cache, which "
                         f"{calibrated} lacks: calibrate ran first")  # fmt: skip
            print(f"[{needs[0]}] {notes[-1]}", flush=True)
        chosen = [s for s in everything if s.name in wanted]

    base = dict(os.environ, PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    records: list[dict[str, Any]] = []

    def run_one(step: Step) -> None:
        """Run one step and append its record."""
        cache = calibrated if step.calibrated or step.name == "calibrate" else fresh
        env = base | {"PRISM_CACHE_DIR": str(cache)}
        argv = (step.dry or step.argv) if dry else step.argv
        record: dict[str, Any] = {"step": step.name, "title": step.title, "command": argv}
        note = ""
        left = deadline - time.monotonic()
        if left < 5:
            record |= {"status": "failed", "summary": "not run: the run's --budget is spent"}
            records.append(record)
            print(f"[{step.name}] not run: the budget is spent", flush=True)
            return
        if step.name == "calibrate" and not dry:  # a fresh cache for the calibration
            shutil.rmtree(calibrated, ignore_errors=True)
        cache.mkdir(parents=True, exist_ok=True)
        if step.calibrated and not dry:
            stored = gpu_calibration(calibrated)
            record["calibration"] = stored
            if not stored:
                note = "; the tuning cache held no calibration for a GPU (the model uncalibrated)"
        timeout = min(step.timeout, left)
        print(f"[{step.name}] {step.title} (timeout {timeout:.0f} s)", flush=True)
        # What the archive says if the run is stopped from outside during the step.
        record |= {"status": "failed", "summary": "did not finish: the run was stopped during it"}
        records.append(record)
        publish(final=False)
        code, output, seconds = run_step(argv, timeout, logs / f"{step.name}.log", env)
        record["seconds"] = round(seconds, 1)
        skipped = SKIP.search(output)
        if code is None:
            record |= {"status": "failed", "summary": f"timed out after {timeout:.0f} s"}
        elif dry:
            ran = "its dry form ran" if skipped is None else f"it said: {skipped[1]}"
            status = "skipped" if code == 0 else "failed"
            record |= {"status": status, "summary": f"no GPU ({no_gpu}); {ran}{note}"}
            if code != 0:
                record["summary"] = f"its dry form failed (exit {code}): {tail(output)}"
            elif step.dry_parse:  # the parser, on what the dry form wrote
                try:
                    read = step.parse(results, output)
                    record["summary"] += f"; its output read: {read.status}: {read.summary[:200]}"
                except Exception as exc:
                    record |= {"status": "failed", "summary": "its dry form's output could not "
                               f"be read: {type(exc).__name__}: {exc}"}  # fmt: skip
        elif skipped is not None and code == 0:
            record |= {"status": "skipped", "summary": skipped[1] + note}
        else:
            try:
                outcome = step.parse(results, output)
                if code != 0:  # what it wrote is read, but the step failed
                    outcome.status = "failed"
                    outcome.summary = f"exit {code}: {tail(output)}; {outcome.summary}"
            except Exception as exc:  # output it cannot read: the step failed
                outcome = Outcome("failed", f"exit {code}: {tail(output)} (output unreadable: "
                                  f"{type(exc).__name__}: {exc})")  # fmt: skip
            record |= {"status": outcome.status, "summary": outcome.summary + note}
            record["result"] = outcome.result
        print(f"[{step.name}] {record['status']} in {seconds:.1f} s: {record['summary']}",
              flush=True)  # fmt: skip

    earlier = out / "summary.md"
    before = earlier.read_text() if earlier.exists() else ""  # the earlier runs' tables
    archive = out / f"{name}.tar.gz"

    def publish(final: bool) -> str:
        """The run so far, into its folder, its archive and OUT/summary.md: after each step,
        so that a run stopped from outside leaves what it had done."""
        summary = {
            "name": name,
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            "dry_run": args.dry_run,
            "only": args.only,
            "host": {"platform": platform.platform(), "cpus": os.cpu_count()} | env_info,
            "seconds": round(time.perf_counter() - began, 1),
            "since_run_sh": round(time.time() - started_at(), 1),
            "finished": final,
            "notes": notes,
            "steps": records,
        }
        (folder / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
        table = markdown(summary)
        (folder / "summary.md").write_text(table)
        partial = archive.with_name(f".{archive.name}.part")
        with tarfile.open(partial, "w:gz") as tar:
            tar.add(folder, arcname=name)
        partial.replace(archive)
        earlier.write_text(table + ("\n" + before if before else ""))
        return table

    try:
        for step in chosen:
            run_one(step)
            publish(final=False)
    finally:
        table = publish(final=True)
        shutil.rmtree(work, ignore_errors=True)
    print(table)
    files = [p for p in out.rglob("*") if p.is_file()]
    print(f"{archive} ({archive.stat().st_size / 1024:.0f} KiB): logs/, results/, summary.json, "
          f"summary.md; {earlier}: the runs' tables", flush=True)  # fmt: skip
    if len(files) > OUT_FILES or archive.stat().st_size > OUT_FILE_BYTES:
        print(f"run.py: WARNING: {out} holds {len(files)} files (the device tool brings back "
              f"{OUT_FILES}, {OUT_FILE_BYTES // 2**20} MiB each at most)", flush=True)  # fmt: skip
    return 1 if any(r["status"] == "failed" for r in records) else 0


def markdown(summary: dict[str, Any]) -> str:
    host = summary["host"]
    gpu = host.get("gpu") or f"no GPU ({host.get('no_gpu', '?')})"
    flags = [" (dry run)" if summary["dry_run"] else "",
             f" (--only {summary['only']})" if summary.get("only") else ""]  # fmt: skip
    lines = [
        f"# GPU check {summary['name']}, {summary['date']}{''.join(flags)}",
        "",
        f"{gpu}; {host['cpus']} CPUs, {host['platform']}; Python {host['python']}, torch "
        f"{host.get('torch', '-')} (CUDA {host.get('torch_cuda', '-')}), CuPy "
        f"{host.get('cupy', '-')}. {summary['seconds']:.0f} s in all "
        f"({summary['since_run_sh']:.0f} s since run.sh started). Everything in "
        f"`{summary['name']}.tar.gz`.",
        "",
        *[f"Note: {n}\n" for n in summary.get("notes", [])],
        "| step | status | seconds | result |",
        "|---|---|---|---|",
    ]
    for r in summary["steps"]:
        cell = str(r["summary"]).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r['step']} | {r['status']} | {r.get('seconds', '-')} | {cell} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
