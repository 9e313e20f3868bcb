"""``benchmarks/gpu``: the GPU check (docs/gpu.md) stays runnable without a GPU.

* every run-time dependency the project and its plugins declare is either preinstalled on the
  GPU image or downloaded by ``prepare.sh`` (``wheels.txt``), one pinned version each;
* ``run.sh --dry-run`` runs every step here, reports each GPU step skipped with its reason, and
  archives the run (logs, results, summaries) into one file under OUT;
* the steps' timeouts fit the check's 8 minutes, the installation of the wheels included;
* a rerun with ``--only`` writes an archive of its own beside the earlier one, and a step that
  needs the calibrated tuning cache gets ``calibrate`` first where the cache lacks it;
* ``run.py``'s reading of each step's output gives the recorded verdicts on the outputs of
  the first real run (an H100, ``benchmarks/results/gpu-2026-11-26/``), and each goal's
  verdict on outputs made for it, a field missing included.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from .conftest import REPO

GPU = REPO / "benchmarks" / "gpu"
RECORDED = REPO / "benchmarks" / "results" / "gpu-2026-11-26"
STEPS = [
    "doctor", "tests", "conformance", "backends", "profile", "calibrate", "offload", "split",
    "smith-waterman", "function-kernels", "bench",
]  # fmt: skip


def _wheels() -> tuple[dict[str, str], set[str], set[str]]:
    """(pinned name -> version, preinstalled names, plugins that stay here) of wheels.txt."""
    pinned: dict[str, str] = {}
    preinstalled: set[str] = set()
    stays: set[str] = set()
    for line in (GPU / "wheels.txt").read_text().splitlines():
        if line.startswith("# preinstalled:"):
            preinstalled = {canonicalize_name(n) for n in line.split(":", 1)[1].split()}
        elif line.startswith("# stays here:"):
            stays = set(line.split(":", 1)[1].split())
        elif line.strip() and not line.startswith("#"):
            req = Requirement(line)
            name = canonicalize_name(req.name)
            assert name not in pinned, f"wheels.txt: {req.name} twice"
            assert re.fullmatch(r"==[\w.]+", str(req.specifier)), f"wheels.txt: pin {line!r}"
            pinned[name] = str(req.specifier)
    return pinned, preinstalled, stays


def test_every_declared_dependency_reaches_the_gpu_machine() -> None:
    pinned, preinstalled, stays = _wheels()
    assert not set(pinned) & preinstalled
    built = set(re.findall(r"plugins/(prism-plugin-[\w-]+)", (GPU / "prepare.sh").read_text()))
    plugins = {path.name for path in (REPO / "plugins").iterdir() if path.is_dir()}
    assert not built & stays, "wheels.txt: a plugin prepare.sh builds is on 'stays here'"
    assert plugins == built | stays, (
        f"plugins {sorted(plugins - built - stays)}: build them in benchmarks/gpu/prepare.sh "
        "or name them on wheels.txt's 'stays here' line"
    )
    projects = [REPO / "pyproject.toml"]
    projects += [REPO / "plugins" / name / "pyproject.toml" for name in sorted(built)]
    for path in projects:
        project = tomllib.loads(path.read_text())["project"]
        for text in project.get("dependencies", []):
            req = Requirement(text)
            name = canonicalize_name(req.name)
            if name.startswith("prism-") or (
                req.marker is not None and not req.marker.evaluate({"python_version": "3.12"})
            ):
                continue  # the project's own wheels; markers false on Python 3.12
            assert name in pinned or name in preinstalled, (
                f"{path.relative_to(REPO)} needs {req.name}: add it to "
                "benchmarks/gpu/wheels.txt (pinned) or to its preinstalled line"
            )


def _archive(path: Path) -> dict[str, str]:
    """The text of each file in a run's archive, by its path inside the run's folder."""
    with tarfile.open(path) as tar:
        members = [m for m in tar.getmembers() if m.isfile()]
        (top,) = {m.name.split("/")[0] for m in members}
        assert path.name == f"{top}.tar.gz"
        files = {}
        for m in members:
            data = tar.extractfile(m)
            assert data is not None
            files[m.name.removeprefix(f"{top}/")] = data.read().decode()
        return files


@pytest.mark.timeout(300)
def test_the_dry_run_skips_each_gpu_step_with_its_reason(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # As CI runs it: every installed plugin, none of this test session's PRISM_* settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env |= {"OUT": str(out), "PYTHON": sys.executable, "PRISM_GPU_STATE": str(tmp_path / "st")}
    done = subprocess.run(
        ["bash", str(GPU / "run.sh"), "--dry-run", "--workers", "1"],
        capture_output=True, text=True, env=env, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    # OUT holds the run's archive and the summary table, nothing else.
    (archive,) = out.glob("gpu-check-1-*.tar.gz")
    assert sorted(p.name for p in out.iterdir()) == sorted([archive.name, "summary.md"])
    files = _archive(archive)
    summary = json.loads(files["summary.json"])
    assert summary["dry_run"] is True
    assert [s["step"] for s in summary["steps"]] == STEPS
    for step in summary["steps"]:
        assert step["status"] == "skipped", step
        assert step["summary"].startswith("no GPU (--dry-run"), step
        log = files[f"logs/{step['step']}.log"]
        assert log.startswith("$ "), log[:200]  # the command, then its output
    # The dry forms that write an output have it read by the step's parser.
    by_step = {s["step"]: s["summary"] for s in summary["steps"]}
    assert "its output read: missed: numpy: +" in by_step["profile"]
    assert "its output read: missed: no calibration for a GPU stored" in by_step["calibrate"]
    assert "its output read: passed: Prism / fastest" in by_step["bench"]
    assert "results/profile.json" in files and "results/bench.json" in files
    table = files["summary.md"]
    assert "(dry run)" in table and table.count("| skipped |") == len(STEPS)
    assert (out / "summary.md").read_text() == table


def test_the_steps_fit_the_eight_minutes(run_py: Any, tmp_path: Path) -> None:
    """Every step's timeout added to what run.sh takes before the first (the wheels installed,
    the GPU probed) fits the check's budget, 8 minutes: a failed step can be fixed and rerun
    within a lent machine's 15."""
    chosen = run_py.steps(tmp_path, 8)
    assert [s.name for s in chosen] == STEPS
    assert run_py.BUDGET == 480
    assert sum(s.timeout for s in chosen) + run_py.START_S <= run_py.BUDGET
    # The calibrated cache: the steps after calibrate that choose between CPU and GPU.
    assert [s.name for s in chosen if s.calibrated] == ["offload", "split", "bench"]
    offload = next(s for s in chosen if s.name == "offload")
    assert "--dtypes" in offload.argv and "linalg.solve" in " ".join(offload.argv)


def test_run_sh_without_wheels_says_what_to_do(tmp_path: Path) -> None:
    """Outside a dry run, run.sh needs prepare.sh's wheels: without them it says so."""
    copy = tmp_path / "repo"
    shutil.copytree(GPU, copy / "benchmarks" / "gpu", ignore=shutil.ignore_patterns("wheels"))
    done = subprocess.run(
        ["bash", str(copy / "benchmarks" / "gpu" / "run.sh")],
        capture_output=True, text=True, env=dict(os.environ, OUT=str(tmp_path / "out")),
        timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert "run benchmarks/gpu/prepare.sh on a machine with PyPI first" in done.stderr


@pytest.fixture
def run_py() -> Any:
    sys.path.insert(0, str(GPU))
    try:
        import run

        yield run
    finally:
        sys.path.remove(str(GPU))
        sys.modules.pop("run", None)


def test_the_recorded_h100_outputs_read_as_recorded(run_py: Any, tmp_path: Path) -> None:
    for name in ("backends", "offload", "sw", "conformance", "split", "profile"):
        shutil.copy(RECORDED / f"{name}.json", tmp_path / f"{name}.json")
    doctor = run_py.parse_doctor(tmp_path, (RECORDED / "doctor.json").read_text())
    assert doctor.status == "passed"
    assert "NVIDIA H100 80GB HBM3 -> nvidia.h100-sxm" in doctor.summary
    backends = run_py.parse_backends(tmp_path, "")
    assert backends.status == "missed"
    assert backends.summary.startswith("direct / Prism: worst 0.349 (cuda linalg.solve float64")
    offload = run_py.parse_offload(tmp_path, "")
    assert offload.status == "missed" and "worst auto / better 3.122 at n=8192" in offload.summary
    sw = run_py.parse_sw(tmp_path, "")
    assert (sw.status, sw.summary) == ("passed", "exact on 224 pairs; 4.4 GCUPS on 8.19 G cells")
    conformance = run_py.parse_conformance(tmp_path, "")
    assert conformance.status == "missed"  # CuPy's checks did not all fit in their 30 s
    assert "torch (CUDA): 12802 passed, 0 failed, 19 skipped" in conformance.summary
    # The goal of the split came later: 0.52x the better single target misses 1.0x.
    split = run_py.parse_split(tmp_path, "")
    assert split.status == "missed"
    assert split.summary.startswith("batched matmul, CPU + GPU: auto split, 0.52x the better")
    # The profile had no goal then: its output lacks the goal's figures.
    profile = run_py.parse_profile(tmp_path, "")
    assert (profile.status, profile.summary) == (
        "missed", "field 'added' not in output (the goal's figures)"
    )  # fmt: skip
    bench = run_py.parse_bench(tmp_path, (RECORDED / "bench.json").read_text())
    assert bench.summary.startswith("Prism / fastest 1.077, Prism / NumPy 0.511")
    # The tuning file it names was on the GPU machine: nothing stored here to read.
    calibrate = run_py.parse_calibrate(tmp_path, (RECORDED / "bench.json").read_text())
    assert calibrate.status == "missed"
    assert calibrate.summary.startswith("no calibration for a GPU stored: its tuning file")


def _profile_rows(torch_added: float, cupy_added: float, own: float) -> list[dict[str, Any]]:
    rows = []
    for backend, added in (("torch", torch_added), ("cuda", cupy_added)):
        for case in ("add 1024,1024 float32", "matmul 64x64,64x64 float32"):
            row = {"backend": backend, "op": case.split()[0], "case": case,
                   "direct_us": 5.0, "prism_us": 5.0 + added, "added_us": added,
                   "result": f"{backend}.array on cuda:0", "plan": {"path": "fn"}}  # fmt: skip
            if backend == "cuda":
                row |= {"protocol_us": 5.0 + own, "protocol_added_us": own}
            rows.append(row)
    return rows


def test_the_profile_step_reads_its_goal(run_py: Any, tmp_path: Path) -> None:
    """``profile``: passed when on torch and on CuPy Prism adds at most 3 us per call on every
    case; CuPy's own added cost (NumPy's protocol on CuPy arrays) is reported, not a bound."""

    def read(rows: list[dict[str, Any]]) -> Any:
        (tmp_path / "profile.json").write_text(json.dumps({"added": rows}))
        return run_py.parse_profile(tmp_path, "")

    passed = read(_profile_rows(2.5, 1.0, 0.5))
    assert passed.status == "passed", passed.summary
    assert passed.summary.startswith("torch: +2.5 us at worst (add 1024,1024 float32, fn)")
    assert "CuPy's own (NumPy's protocol): +0.5 to +0.5 us" in passed.summary
    missed = read(_profile_rows(20.0, 1.0, 0.5))
    assert missed.status == "missed"
    assert "over the bound: torch add 1024,1024 float32 +20.0 > 3.0" in missed.summary
    # CuPy's own dispatch costing more than 3 us does not raise the bound.
    assert read(_profile_rows(2.9, 2.9, 4.0)).status == "passed"
    assert read(_profile_rows(3.1, 2.9, 4.0)).status == "missed"
    # A result moved off the GPU, a case that failed, a backend not timed: missed.
    rows = _profile_rows(1.0, 1.0, 0.5)
    rows[0]["result"] = "numpy.ndarray"
    assert "results not on the GPU: torch add" in read(rows).summary
    rows = [r for r in _profile_rows(1.0, 1.0, 0.5) if r["backend"] == "torch"]
    rows[1] = {"backend": "torch", "op": "sum", "case": "sum", "error": "TypeError: no"}
    found = read(rows)
    assert found.status == "missed"
    assert "not run: torch sum: TypeError: no; not timed on cuda" in found.summary


def test_the_calibrate_step_passes_when_a_gpu_calibration_is_stored(
    run_py: Any, tmp_path: Path
) -> None:
    tuning = tmp_path / "cache" / "tuning" / "host.json"
    tuning.parent.mkdir(parents=True)
    cpu = {"launch_us": 3.3, "efficiency": {"add": 2.5}}
    gpu = {"launch_us": 8.0, "h2d_gbs": 3.1, "d2h_gbs": 2.9, "efficiency": {"matmul": 0.6}}
    output = {
        "seconds": 9.0,
        "devices": [{"device_type": "nvidia.h100-sxm", "backend": "torch", "figures": gpu}],
        "calibration": {"generic.x86-64-v4": cpu, "nvidia.h100-sxm": gpu},
        "problems": [],
        "store_path": str(tuning),
    }
    text = "prism bench: [1/2] calibrating ...\n" + json.dumps(output, indent=1) + "\ndone\n"
    tuning.write_text(
        json.dumps({"format": "prism-tuning", "calibration": {"generic.x86-64-v4": cpu}})
    )
    missed = run_py.parse_calibrate(tmp_path, text)
    assert missed.status == "missed"
    assert missed.summary.startswith("no calibration for a GPU stored; measured: nvidia.h100-sxm")
    tuning.write_text(json.dumps({"format": "prism-tuning", "calibration": output["calibration"]}))
    passed = run_py.parse_calibrate(tmp_path, text)
    assert passed.status == "passed"
    assert passed.summary.startswith("stored for nvidia.h100-sxm: launch 8")
    assert json.loads((tmp_path / "calibrate.json").read_text()) == output
    assert run_py.gpu_calibration(tmp_path / "cache") == {"nvidia.h100-sxm": gpu}


def test_the_offload_step_reads_each_op_and_dtype(run_py: Any, tmp_path: Path) -> None:
    """``offload``: the worst automatic / better over every op and dtype against 1.1x, and the
    crossovers, measured and modelled, of each; a field missing is said, not a crash."""
    figures = {"measured_crossover": 1024, "modelled_crossover": 512, "worst_at": 512,
               "worst_auto_over_better": 1.05, "geomean_auto_over_better": 1.0}  # fmt: skip
    summary = {"matmul": {"float32": figures, "float64": figures | {"modelled_crossover": None}},
               "add": {"float32": figures | {"worst_auto_over_better": 1.2}}}  # fmt: skip
    meta = {"gpu": "nvidia.h100-sxm", "calibrated": {"nvidia.h100-sxm": "2026-12-07 12:00: x"}}
    (tmp_path / "offload.json").write_text(json.dumps({"meta": meta, "summary": summary}))
    found = run_py.parse_offload(tmp_path, "")
    assert found.status == "missed"  # add float32: 1.2x
    assert found.summary.startswith("the model for nvidia.h100-sxm calibrated: 2026-12-07")
    assert (
        "matmul float64: worst auto / better 1.050 at n=512, crossover measured 1024, "
        "modelled None" in found.summary
    )
    assert found.result["crossovers"]["add float32"] == {"measured": 1024, "modelled": 512}
    del summary["add"]
    (tmp_path / "offload.json").write_text(json.dumps({"summary": summary}))
    assert run_py.parse_offload(tmp_path, "").status == "passed"
    del summary["matmul"]["float32"]["worst_at"]
    (tmp_path / "offload.json").write_text(json.dumps({"summary": summary}))
    lacking = run_py.parse_offload(tmp_path, "")
    assert (lacking.status, lacking.summary) == (
        "missed", "field worst_at not in output (matmul float32)"
    )  # fmt: skip


def test_the_split_step_reads_what_auto_decided(run_py: Any, tmp_path: Path) -> None:
    seconds = {"numpy alone": 0.15, "nvidia.h100-sxm/torch alone": 0.25, "split auto": 0.152}
    auto = {"decision": "declined", "ran_on": "numpy", "why": "declined: ...",
            "seconds": 0.152, "speedup": 0.987, "goal_met": True}  # fmt: skip
    case = {"name": "batched matmul, CPU + GPU", "seconds": seconds,
            "best_single": "numpy alone", "auto": auto}  # fmt: skip

    def read(case: dict[str, Any]) -> Any:
        found = {"results": {"cuda": case, "cases": [case]}}
        (tmp_path / "split.json").write_text(json.dumps(found))
        return run_py.parse_split(tmp_path, "")

    met = read(case)
    assert met.status == "passed"  # declined: the better target's own call, within its tie
    assert met.summary == (
        "batched matmul, CPU + GPU: auto declined (ran on numpy), 0.99x the better single "
        "target (numpy alone, 150.0 ms; auto 152.0 ms)"
    )
    missed = read(case | {"auto": auto | {"decision": "split", "ran_on": None, "speedup": 0.6,
                                          "goal_met": False}})  # fmt: skip
    assert missed.status == "missed" and missed.summary.endswith(": below 1.0x")
    lacking = read({k: v for k, v in case.items() if k != "best_single"})
    assert (lacking.status, lacking.summary) == (
        "missed", "field best_single not in output (batched matmul, CPU + GPU)"
    )  # fmt: skip
    no_auto = {k: v for k, v in case.items() if k != "auto"}
    no_auto["seconds"] = {k: v for k, v in seconds.items() if k != "split auto"}
    assert read(no_auto).summary == "field auto not in output (batched matmul, CPU + GPU)"


def test_the_function_kernels_step_reads_its_goal(run_py: Any, tmp_path: Path) -> None:
    """``function-kernels``: passed when Prism on CuPy is >= 0.9x the hand port on every
    kernel and every placement ran; missed otherwise, naming the worst kernel."""

    def write(rows: list[dict[str, Any]], not_run: dict[str, Any]) -> None:
        ratios = [r["hand_over_prism_cupy"] for r in rows if "hand_over_prism_cupy" in r]
        found = {
            "goal": 0.9,
            "rows": rows,
            "geomean_hand_over_prism_cupy": min(ratios) if ratios else None,
            "below_goal": [r["kernel"] for r in rows if r.get("hand_over_prism_cupy", 1) < 0.9],
            "not_run": not_run,
        }
        (tmp_path / "function_kernels.json").write_text(json.dumps(found))

    write([{"kernel": "heat", "hand_over_prism_cupy": 0.97, "hand_over_prism_torch": 1.2}], {})
    passed = run_py.parse_function_kernels(tmp_path, "")
    assert passed.status == "passed"
    assert "worst 0.970 (heat); 0 of 1 kernels below 0.9" in passed.summary
    write(
        [
            {"kernel": "heat", "hand_over_prism_cupy": 0.97},
            {"kernel": "cg", "hand_over_prism_cupy": 0.5},
        ],
        {"histogram": {"Prism on CuPy": "DispatchError: ..."}},
    )
    missed = run_py.parse_function_kernels(tmp_path, "")
    assert missed.status == "missed"
    assert "worst 0.500 (cg); 1 of 2 kernels below 0.9" in missed.summary
    assert "not run: histogram" in missed.summary
    write([], {"heat": {"Prism on CuPy": "DispatchError: no backend"}})
    none = run_py.parse_function_kernels(tmp_path, "")
    assert none.status == "missed" and none.summary.startswith("no kernel timed on CuPy")


def test_a_rerun_with_only_keeps_the_earlier_archive(
    run_py: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run archives into a file of its own under OUT and adds its table to OUT/summary.md;
    ``--only offload`` on a machine whose calibrated cache holds no GPU calibration runs
    ``calibrate`` first, and a later rerun finds the calibration it stored."""
    py = sys.executable
    store = (
        "import json, os, pathlib; p = pathlib.Path(os.environ['PRISM_CACHE_DIR'], 'tuning'); "
        "p.mkdir(parents=True, exist_ok=True); (p / 'host.json').write_text(json.dumps("
        "{'format': 'prism-tuning', 'calibration': {'nvidia.h100-sxm': {'launch_us': 8.0}}}))"
    )
    said = "import os; print('cache', os.environ['PRISM_CACHE_DIR'])"

    def fake(results: Path, workers: int) -> list[Any]:
        ok = lambda results, output: run_py.Outcome("passed", output.strip())  # noqa: E731
        return [
            run_py.Step("doctor", "doctor", [py, "-c", said], 20, ok),
            run_py.Step("calibrate", "calibrate", [py, "-c", store], 20, ok),
            run_py.Step("offload", "offload", [py, "-c", said], 20, ok, calibrated=True),
        ]

    gpu = {"gpu": "NVIDIA H100 80GB HBM3", "python": "3.12.3"}
    monkeypatch.setattr(run_py, "probe", lambda: gpu)
    monkeypatch.setattr(run_py, "steps", fake)
    out, state = tmp_path / "out", tmp_path / "state"

    def main(*argv: str) -> dict[str, Any]:
        monkeypatch.setattr(sys, "argv", ["run.py", "--out", str(out), "--state", str(state),
                                          *argv])  # fmt: skip
        assert run_py.main() == 0
        newest = max(out.glob("gpu-check-*.tar.gz"), key=lambda p: int(p.name.split("-")[2]))
        return json.loads(_archive(newest)["summary.json"])

    first = main("--only", "offload")
    assert [s["step"] for s in first["steps"]] == ["calibrate", "offload"]
    assert first["notes"] == [
        f"offload need(s) a calibrated tuning cache, which {state / 'cache'} lacks: calibrate "
        "ran first"
    ]
    assert first["steps"][1]["summary"] == f"cache {state / 'cache'}"
    assert first["steps"][1]["calibration"] == {"nvidia.h100-sxm": {"launch_us": 8.0}}
    second = main("--only", "offload,doctor")
    assert [s["step"] for s in second["steps"]] == ["doctor", "offload"]
    assert second["notes"] == []
    assert second["steps"][0]["summary"] != f"cache {state / 'cache'}"  # a fresh one
    archives = sorted(p.name for p in out.glob("gpu-check-*.tar.gz"))
    assert [a.split("-")[2] for a in archives] == ["1", "2"]
    assert sorted(p.name for p in out.iterdir()) == [*archives, "summary.md"]
    table = (out / "summary.md").read_text()
    assert table.index(second["name"]) < table.index(first["name"])  # the latest first
    assert "(--only offload,doctor)" in table


def test_a_step_past_its_timeout_or_the_budget_fails_saying_so(
    run_py: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ok = lambda results, output: run_py.Outcome("passed", "ran")  # noqa: E731
    slow = [sys.executable, "-c", "import time; time.sleep(30)"]
    monkeypatch.setattr(run_py, "probe", lambda: {"gpu": "NVIDIA H100", "python": "3.12"})
    monkeypatch.setattr(run_py, "steps", lambda results, workers: [
        run_py.Step("doctor", "doctor", slow, 1, ok),
    ])  # fmt: skip
    out = tmp_path / "out"
    argv = ["run.py", "--out", str(out), "--state", str(tmp_path / "state")]
    monkeypatch.setattr(sys, "argv", argv)
    assert run_py.main() == 1
    monkeypatch.setattr(sys, "argv", [*argv, "--budget", "3"])
    assert run_py.main() == 1
    first, second = (
        json.loads(_archive(p)["summary.json"])["steps"][0]
        for p in sorted(out.glob("gpu-check-*.tar.gz"), key=lambda p: int(p.name.split("-")[2]))
    )
    assert (first["status"], first["summary"]) == ("failed", "timed out after 1 s")
    assert (second["status"], second["summary"]) == (
        "failed", "not run: the run's --budget is spent"
    )  # fmt: skip


# -- --device: another accelerator than NVIDIA's ---------------------------------------------------

CONFORMANCE = GPU / "conformance.py"


def _script(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A script of benchmarks/gpu run as the GPU check runs it: a real process, with none of
    this test session's PRISM_* settings but those given."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")} | env
    return subprocess.run(
        [sys.executable, *argv], capture_output=True, text=True, env=environ, timeout=170,
        check=False, cwd=REPO,
    )  # fmt: skip


@pytest.mark.timeout(180)
@pytest.mark.parametrize("how", ["option", "variable"])
def test_an_absent_device_is_said_and_fails(tmp_path: Path, how: str) -> None:
    """No AMD GPU here: conformance.py says which device is absent, what is present and why each
    detection found nothing, and exits 1, without a traceback; named by ``--device`` or by
    ``PRISM_GPU_DEVICE``."""
    output = tmp_path / "conformance.json"
    if how == "option":
        done = _script(str(CONFORMANCE), "--device", "amd.mi300x", "--output", str(output))
    else:
        done = _script(str(CONFORMANCE), "--output", str(output), PRISM_GPU_DEVICE="amd.mi300x")
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.startswith(
        "conformance.py: --device amd.mi300x: no such device is present on this host (present: "
    ), done.stderr
    assert "-> generic." in done.stderr  # the host CPU, which is present
    assert "nvidia-smi" in done.stderr  # why the cuda plugin found no GPU
    assert "Traceback" not in done.stderr and not output.exists()


@pytest.mark.timeout(180)
def test_a_device_no_description_names_is_a_usage_error() -> None:
    done = _script(str(CONFORMANCE), "--device", "amd.mi301x", "--present")
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith(
        "conformance.py: --device amd.mi301x: no device description has that name; "
        "accelerators Prism describes: "
    ), done.stderr
    assert "amd.mi300x, " in done.stderr and "huawei.ascend-910b" in done.stderr
    assert "-mig-" not in done.stderr and "Traceback" not in done.stderr


@pytest.mark.timeout(180)
def test_a_present_device_is_found_and_a_dry_run_checks_the_name() -> None:
    """The presence check on a device that is here (the host CPU: a family name finds its
    member); ``--dry-run`` only checks that a description has the name."""
    present = _script(str(CONFORMANCE), "--device", "generic.x86-64", "--present")
    assert present.returncode == 0, present.stdout + present.stderr
    assert json.loads(present.stdout)["device"].startswith("generic.x86-64")
    dry = _script(str(CONFORMANCE), "--device", "amd.mi300x", "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert dry.stdout.strip() == (
        "skipped: --dry-run; the suite on amd.mi300x runs where it is present"
    )


@pytest.mark.timeout(180)
@pytest.mark.parametrize(("device", "code"), [("amd.mi300x", 1), ("intel.max-9999", 2)])
def test_run_py_stops_before_any_step_on_an_absent_device(
    tmp_path: Path, device: str, code: int
) -> None:
    out = tmp_path / "out"
    done = _script(str(GPU / "run.py"), "--out", str(out), "--device", device)
    assert done.returncode == code, done.stdout + done.stderr
    assert done.stderr.startswith(f"run.py: --device {device}: "), done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()  # nothing archived: no step ran


def test_the_steps_for_a_device(run_py: Any, tmp_path: Path) -> None:
    """Without ``--device`` the steps are exactly NVIDIA's; with it, the same steps in the same
    budget, ``doctor`` looking for the device, the conformance suite run on it, and the steps of
    the CUDA path saying they are skipped, and why."""
    default = run_py.steps(tmp_path, 8)
    assert run_py.for_device(default, None) is default
    chosen = run_py.for_device(run_py.steps(tmp_path, 8), "amd.mi300x")
    assert [s.name for s in chosen] == STEPS
    assert sum(s.timeout for s in chosen) == sum(s.timeout for s in default)
    by_name = {s.name: s for s in chosen}
    conformance = by_name["conformance"]
    assert conformance.argv[1:] == [
        str(CONFORMANCE), "--device", "amd.mi300x", "--seconds", "15", "--output",
        str(tmp_path / "conformance.json"),
    ]  # fmt: skip
    assert conformance.dry == [sys.executable, str(CONFORMANCE), "--device", "amd.mi300x",
                               "--dry-run"]  # fmt: skip
    for name in ("tests", "calibrate", "bench"):
        assert by_name[name] == next(s for s in default if s.name == name)
    for name in ("backends", "profile", "offload", "split", "smith-waterman", "function-kernels"):
        step = by_name[name]
        done = subprocess.run(step.argv, capture_output=True, text=True, timeout=60, check=True)
        assert run_py.SKIP.search(done.stdout)[1] == (
            f"{name} measures the NVIDIA CUDA path; --device amd.mi300x runs doctor, tests, "
            "conformance, calibrate, bench"
        )
        assert step.dry is None


def test_doctor_looks_for_the_named_device(run_py: Any, tmp_path: Path) -> None:
    """The recorded H100's doctor report: passed for the H100 and its family, missed for an AMD
    GPU, saying what was present."""
    text = (RECORDED / "doctor.json").read_text()
    (doctor,) = [s for s in run_py.for_device(run_py.steps(tmp_path, 8), "amd.gpu")
                 if s.name == "doctor"]  # fmt: skip
    missed = doctor.parse(tmp_path, text)
    assert missed.status == "missed"
    assert missed.summary.startswith("no amd.gpu mapped to a description (present: Intel(R)")
    assert "NVIDIA H100 80GB HBM3 -> nvidia.h100-sxm" in missed.summary
    assert run_py.parse_doctor(tmp_path, text, device="nvidia.gpu").status == "passed"
    assert run_py.parse_doctor(tmp_path, text, device="nvidia.h100-sxm").status == "passed"
