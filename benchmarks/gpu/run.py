"""The GPU check: every GPU path of Prism, step by step, each under its own timeout.

``benchmarks/gpu/run.sh`` installs the wheels that ``prepare.sh`` downloaded and runs this
script; ``run.sh --dry-run`` runs it in the environment at hand (CI's), where each step that
needs a GPU runs its dry form (the same command narrowed, or a script that checks for the GPU
and says why it is not there) and is reported "skipped: no GPU" with the reason.

Every step writes its log to ``OUT/logs/STEP.log`` and its results to ``OUT/results/``; the
whole run is summarised in ``OUT/summary.json`` and ``OUT/summary.md``.  A step's status is
``passed``, ``missed`` (it ran; its goal was not met), ``skipped`` (with the reason) or
``failed``; the script exits 1 if any step failed.  See docs/gpu.md.

Usage::

    python benchmarks/gpu/run.py --out DIR [--dry-run] [--budget SECONDS] [--only STEP,...]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: A script that finds no GPU says so on a line of its own, beginning with this.
SKIP = re.compile(r"^skipped: (.+)$", re.MULTILINE)
#: bench_backends' goal: Prism's call at least 0.95 as fast as the direct one (direct / prism).
BACKENDS_GOAL = 0.95
#: function_kernels' goal: Prism's placed kernel on CuPy at least 0.9x the hand port's speed.
FUNCTION_KERNELS_GOAL = 0.9
#: bench_offload's goal: automatic mode at most 1.1x the better of CPU-only and always-GPU.
OFFLOAD_GOAL = 1.1


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


def parse_doctor(results: Path, output: str) -> Outcome:
    import prism_core

    report = json.loads(output[output.index("{") :])
    (results / "doctor.json").write_text(json.dumps(report, indent=1) + "\n")
    present = report["devices"]["present"]
    def is_gpu(device_type: str) -> bool:
        try:
            return prism_core.hardware.get_device(device_type).kind == "gpu"
        except prism_core.hardware.UnknownDeviceError:
            return False

    gpus = [d for d in present if is_gpu(d["device_type"])]
    seen = ", ".join(f"{d['name']} -> {d['device_type']}" for d in present)
    if not gpus:
        why = "; ".join(f"{k}: {v}" for k, v in report["devices"].get("none_found", {}).items())
        return Outcome("missed", f"no GPU mapped to a description (present: {seen}; {why})")
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
    found = json.loads((results / "conformance.json").read_text())
    parts = [
        f"{b}: {r['passed']} passed, {r['failed']} failed, {r['skipped']} skipped"
        + ("" if r["run"] == r["checks"] else f" ({r['run']} of {r['checks']} checks run)")
        for b, r in found["backends"].items()
    ]
    parts += [f"{b}: not run: {why}" for b, why in found["unavailable"].items()]
    backends = found["backends"].values()
    status = "passed"
    if any(r["run"] < r["checks"] for r in backends) or found["unavailable"]:
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
    found = json.loads((results / "profile.json").read_text())
    text = "; ".join(
        f"{c['backend']} {c['op']} {c['dtype']} +{c['prism_us'] - c['direct_us']:.1f} us "
        f"({c['plan']['path']})"
        for c in found["calls"]
    )
    return Outcome("passed", text, found)


def parse_offload(results: Path, output: str) -> Outcome:
    summary = json.loads((results / "offload.json").read_text())["summary"]
    worst = max(s["worst_auto_over_better"] for s in summary.values())
    text = "; ".join(
        f"{op}: worst auto / better {s['worst_auto_over_better']:.3f} at n={s['worst_at']}, "
        f"crossover measured {s['measured_crossover']}, modelled {s['modelled_crossover']}"
        for op, s in summary.items()
    )
    return Outcome("passed" if worst <= OFFLOAD_GOAL else "missed", text, summary)


def parse_split(results: Path, output: str) -> Outcome:
    found = json.loads((results / "split.json").read_text())
    case = found["results"]["cuda"]
    best = max(case["speedup"].items(), key=lambda kv: kv[1])
    text = f"best split {best[0]}: {best[1]:.2f}x the better single target ({case['gpu']})"
    return Outcome("passed", text, {"speedup": case["speedup"], "seconds": case["seconds"]})


def parse_sw(results: Path, output: str) -> Outcome:
    found = json.loads((results / "sw.json").read_text())
    exact = found["exact"]
    text = (
        f"{'exact' if exact else 'NOT exact'} on {found['checked_pairs']} pairs; "
        f"{found['gcups']:.1f} GCUPS on {found['cells'] / 1e9:.2f} G cells"
    )
    return Outcome("passed" if exact else "missed", text, found)


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


def parse_bench(results: Path, output: str) -> Outcome:
    found = json.loads(output[output.index("{") :])
    (results / "bench.json").write_text(json.dumps(found, indent=1) + "\n")
    summary = found["summary"]
    text = (
        f"Prism / fastest {summary['prism_vs_oracle']:.3f}, Prism / NumPy "
        f"{summary['prism_vs_numpy']:.3f} (geometric means over {len(found['rows'])} cases); "
        f"backends: {', '.join(found['host']['backends'])}"
    )
    return Outcome("passed", text, {"summary": summary, "host": found["host"]})


def steps(results: Path, workers: int) -> list[Step]:
    py = sys.executable
    bench = ROOT / "benchmarks"
    tests = [f"plugins/prism-plugin-{name}/tests" for name in ("torch", "cuda", "jax")]
    # The conformance suite is a step of its own (JAX's whole run takes minutes: not here);
    # pytest-benchmark (on the GPU image) warns under xdist, which the project's
    # filterwarnings = error makes fatal.
    skipped = "not test_conformance_on_the_gpu and not test_the_conformance_suite_passes"
    pytest = [py, "-m", "pytest", *tests, "-m", "not slow", "-p", "no:cacheprovider",
              "-p", "no:benchmark", "-q", "-k", skipped]  # fmt: skip
    return [
        Step("doctor", "prism doctor: the GPU detected and mapped to its description",
             [py, "-m", "prism_core", "doctor", "--json"], 60, parse_doctor),
        Step("tests", "the torch, cuda and jax plugins' test suites (without the slow ones)",
             [*pytest, "-n", str(workers), f"--junitxml={results / 'tests.xml'}"], 150,
             parse_pytest, dry=[*pytest, "--collect-only"]),
        Step("conformance", "the conformance suite on torch-CUDA and CuPy",
             [py, str(bench / "gpu" / "conformance.py"), "--seconds", "30", "--output",
              str(results / "conformance.json")], 90, parse_conformance),
        Step("backends", f"bench_backends: plugin vs direct torch/CuPy (goal >= {BACKENDS_GOAL})",
             [py, str(bench / "bench_backends.py"), "--quick", "--device", "cuda",
              "--backends", "torch,cuda", "--rounds", "3", "--output",
              str(results / "backends")], 75, parse_backends),
        Step("profile", "where Prism's added cost per call goes on the GPU; NumPy round trips",
             [py, str(bench / "gpu" / "dispatch_profile.py"), "--output",
              str(results / "profile.json")], 60, parse_profile),
        Step("offload", f"bench_offload: automatic <= {OFFLOAD_GOAL}x the better of CPU and GPU",
             [py, str(bench / "bench_offload.py"), "--rounds", "5", "--output",
              str(results / "offload")], 110, parse_offload),
        Step("split", "bench_split --device cuda: one matmul split over CPU and GPU",
             [py, str(bench / "bench_split.py"), "--device", "cuda", "--rounds", "5",
              "--output", str(results / "split")], 75, parse_split),
        Step("smith-waterman", "the torch CUDA Smith-Waterman batch kernel: exact, GCUPS",
             [py, str(bench / "gpu" / "sw_check.py"), "--output", str(results / "sw.json")],
             60, parse_sw),
        Step("function-kernels",
             "NumPy-style kernels placed by prism.function on torch-CUDA and CuPy against a hand "
             f"port and NumPy (goal >= {FUNCTION_KERNELS_GOAL}x the hand port)",
             [py, str(bench / "gpu" / "function_kernels.py"), "--rounds", "5", "--output",
              str(results / "function_kernels.json")], 120, parse_function_kernels),
        Step("bench", "prism bench on the GPU machine",
             [py, "-m", "prism_core", "bench", "--json", "--plot", str(results / "bench.png")],
             150, parse_bench,
             dry=[py, "-m", "prism_core", "bench", "--json", "--no-store", "--ops", "add",
                  "--dtypes", "float32", "--budget", "10"]),
    ]  # fmt: skip


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="where logs and results go")
    parser.add_argument(
        "--dry-run", action="store_true",
        help="the steps' dry forms, for a host without a GPU (CI): each GPU step is skipped "
        "with its reason after checking that its command still works",
    )  # fmt: skip
    parser.add_argument("--budget", type=float, default=450, help="seconds for all steps")
    parser.add_argument("--only", default=None, help="comma-separated steps to run")
    parser.add_argument("--workers", type=int, default=8, help="pytest-xdist workers")
    args = parser.parse_args()

    out: Path = args.out.resolve()
    logs, results = out / "logs", out / "results"
    logs.mkdir(parents=True, exist_ok=True)
    results.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + args.budget
    began = time.perf_counter()
    env_info = probe()
    no_gpu = "--dry-run" if args.dry_run else env_info.get("no_gpu")
    if args.dry_run and "no_gpu" in env_info:
        no_gpu = f"--dry-run; {env_info['no_gpu']}"
    print(f"GPU check: {env_info.get('gpu', 'no GPU: ' + str(no_gpu))}", flush=True)

    chosen = steps(results, args.workers)
    known = [s.name for s in chosen]
    if args.only:
        wanted = args.only.split(",")
        unknown = [w for w in wanted if w not in known]
        if unknown:
            parser.error(f"--only: unknown step(s) {', '.join(unknown)}; known: {', '.join(known)}")
        chosen = [s for s in chosen if s.name in wanted]

    cache = tempfile.mkdtemp(prefix="prism-gpu-check-")
    # A private tuning cache, and output Python does not hold back.
    env = dict(os.environ, PRISM_CACHE_DIR=cache, PYTHONUNBUFFERED="1", MPLBACKEND="Agg")
    records: list[dict[str, Any]] = []
    for step in chosen:
        dry = no_gpu is not None  # every step checks something of the GPU
        argv = (step.dry or step.argv) if dry else step.argv
        left = deadline - time.monotonic()
        record: dict[str, Any] = {"step": step.name, "title": step.title, "command": argv}
        if left < 5:
            record |= {"status": "failed", "summary": "not run: the run's --budget is spent"}
            records.append(record)
            print(f"[{step.name}] not run: the budget is spent", flush=True)
            continue
        timeout = min(step.timeout, left)
        print(f"[{step.name}] {step.title} (timeout {timeout:.0f} s)", flush=True)
        code, output, seconds = run_step(argv, timeout, logs / f"{step.name}.log", env)
        record["seconds"] = round(seconds, 1)
        skipped = SKIP.search(output)
        if code is None:
            record |= {"status": "failed", "summary": f"timed out after {timeout:.0f} s"}
        elif dry:
            ran = "its dry form ran" if skipped is None else f"it said: {skipped[1]}"
            status = "skipped" if code == 0 else "failed"
            record |= {"status": status, "summary": f"no GPU ({no_gpu}); {ran}"}
            if code != 0:
                record["summary"] = f"its dry form failed (exit {code}): {tail(output)}"
        elif skipped is not None and code == 0:
            record |= {"status": "skipped", "summary": skipped[1]}
        else:
            try:
                outcome = step.parse(results, output)
            except Exception as exc:  # output it cannot read: the step failed
                outcome = Outcome("failed", f"exit {code}: {tail(output)} (output unreadable: "
                                  f"{type(exc).__name__}: {exc})")  # fmt: skip
            if code != 0:
                outcome.status = "failed"
            record |= {"status": outcome.status, "summary": outcome.summary}
            record["result"] = outcome.result
        records.append(record)
        print(f"[{step.name}] {record['status']} in {seconds:.1f} s: {record['summary']}",
              flush=True)  # fmt: skip

    summary = {
        "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
        "dry_run": args.dry_run,
        "host": {"platform": platform.platform(), "cpus": os.cpu_count()} | env_info,
        "seconds": round(time.perf_counter() - began, 1),
        "steps": records,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str) + "\n")
    (out / "summary.md").write_text(markdown(summary))
    print((out / "summary.md").read_text())
    return 1 if any(r["status"] == "failed" for r in records) else 0


def markdown(summary: dict[str, Any]) -> str:
    host = summary["host"]
    gpu = host.get("gpu") or f"no GPU ({host.get('no_gpu', '?')})"
    lines = [
        f"# GPU check, {summary['date']}{' (dry run)' if summary['dry_run'] else ''}",
        "",
        f"{gpu}; {host['cpus']} CPUs, {host['platform']}; Python {host['python']}, torch "
        f"{host.get('torch', '-')} (CUDA {host.get('torch_cuda', '-')}), CuPy "
        f"{host.get('cupy', '-')}. {summary['seconds']:.0f} s in all.",
        "",
        "| step | status | seconds | result |",
        "|---|---|---|---|",
    ]
    for r in summary["steps"]:
        cell = str(r["summary"]).replace("|", "\\|")
        lines.append(f"| {r['step']} | {r['status']} | {r.get('seconds', '-')} | {cell} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
