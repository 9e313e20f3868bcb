"""``benchmarks/gpu``: the GPU check (docs/gpu.md) stays runnable without a GPU.

* every run-time dependency the project and its plugins declare is either preinstalled on the
  GPU image or downloaded by ``prepare.sh`` (``wheels.txt``), one pinned version each;
* ``run.sh --dry-run`` runs every step here and reports each GPU step skipped with its reason;
* ``run.py``'s reading of each step's output gives the recorded verdicts on the outputs of
  the first real run (an H100, ``benchmarks/results/gpu-2026-11-26/``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
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
    "doctor", "tests", "conformance", "backends", "profile", "offload", "split",
    "smith-waterman", "function-kernels", "bench",
]  # fmt: skip


def _wheels() -> tuple[dict[str, str], set[str]]:
    """(pinned name -> version, preinstalled names) of wheels.txt."""
    pinned: dict[str, str] = {}
    preinstalled: set[str] = set()
    for line in (GPU / "wheels.txt").read_text().splitlines():
        if line.startswith("# preinstalled:"):
            preinstalled = {canonicalize_name(n) for n in line.split(":", 1)[1].split()}
        elif line.strip() and not line.startswith("#"):
            req = Requirement(line)
            name = canonicalize_name(req.name)
            assert name not in pinned, f"wheels.txt: {req.name} twice"
            assert re.fullmatch(r"==[\w.]+", str(req.specifier)), f"wheels.txt: pin {line!r}"
            pinned[name] = str(req.specifier)
    return pinned, preinstalled


def test_every_declared_dependency_reaches_the_gpu_machine() -> None:
    pinned, preinstalled = _wheels()
    assert not set(pinned) & preinstalled
    projects = [REPO / "pyproject.toml", *sorted((REPO / "plugins").glob("*/pyproject.toml"))]
    for path in projects:
        project = tomllib.loads(path.read_text())["project"]
        for text in project.get("dependencies", []):
            req = Requirement(text)
            name = canonicalize_name(req.name)
            if name.startswith("prism-") or (
                req.marker is not None
                and not req.marker.evaluate({"python_version": "3.12"})
            ):
                continue  # the project's own wheels; markers false on Python 3.12
            assert name in pinned or name in preinstalled, (
                f"{path.relative_to(REPO)} needs {req.name}: add it to "
                "benchmarks/gpu/wheels.txt (pinned) or to its preinstalled line"
            )


@pytest.mark.timeout(300)
def test_the_dry_run_skips_each_gpu_step_with_its_reason(tmp_path: Path) -> None:
    out = tmp_path / "out"
    # As CI runs it: every installed plugin, none of this test session's PRISM_* settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env |= {"OUT": str(out), "PYTHON": sys.executable}
    done = subprocess.run(
        ["bash", str(GPU / "run.sh"), "--dry-run", "--workers", "1"],
        capture_output=True, text=True, env=env, timeout=280, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["dry_run"] is True
    assert [s["step"] for s in summary["steps"]] == STEPS
    for step in summary["steps"]:
        assert step["status"] == "skipped", step
        assert step["summary"].startswith("no GPU (--dry-run"), step
        log = (out / "logs" / f"{step['step']}.log").read_text()
        assert log.startswith("$ "), log[:200]  # the command, then its output
    table = (out / "summary.md").read_text()
    assert "(dry run)" in table and table.count("| skipped |") == len(STEPS)


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
    assert run_py.parse_split(tmp_path, "").status == "passed"
    assert "torch matmul float32 +10.0 us (checked)" in run_py.parse_profile(tmp_path, "").summary
    bench = run_py.parse_bench(tmp_path, (RECORDED / "bench.json").read_text())
    assert bench.summary.startswith("Prism / fastest 1.077, Prism / NumPy 0.511")


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
