"""Prism's conformance suite on the ``torch`` backend, on the CPU: from Python
(``check_backend``) and as pytest runs it for a backend author (``pytest --prism-backend
torch``).  On the CPU the ``torch.cuda`` variants decline every input with their reason (the
data is in host memory; without CUDA, creation ops too); ``test_torch_cuda.py`` runs the suite
on a GPU where there is one."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch_testing import builtin_ops, subprocess_env

import prism_core
from prism_core.testing import CheckResult, check_backend, conformance_checks

#: A guard against a hung process, not a performance expectation.
GUARD_S = 900


@pytest.mark.timeout(GUARD_S)
def test_conformance_on_the_cpu() -> None:
    report = check_backend("torch")
    report.raise_for_failures()
    by_subject: dict[str, list[CheckResult]] = {}
    for r in report.results:
        by_subject.setdefault(r.subject, []).append(r)
    for op in builtin_ops():
        results = by_subject[f"torch.{op}"]
        if all(r.status == "skipped" for r in results):
            # Random numbers are not compared; an op the suite has no inputs for is said so.
            details = {r.detail for r in results}
            assert op == "random.normal" or details == {f"no standard inputs for {op}"}, (
                op,
                details,
            )
        else:
            assert any(r.status == "passed" for r in results), op
    passed = {r.name for r in report.passed}
    for name in (
        "torch-roundtrip-complex64",
        "torch-from_dlpack",
        "torch.matmul-values-int32-fortran",
        "torch.fft.fft-dtype-complex64",
        "torch.fft.rfft-kwarg-norm",
        "torch.std-kwarg-correction",
        "torch.sum-kwarg-dtype",
        "torch.linalg.svd-kwarg-full_matrices",
        "torch.linalg.solve-values-float64-vector",
        "torch.einsum-kwarg-optimize",
        "torch.convolve-kwarg-mode",
        "torch.reshape-kwarg-copy",
    ):
        assert name in passed, name
    skipped = {r.name: r.detail for r in report.skipped}
    if not torch.cuda.is_available():
        assert skipped["torch.cuda.matmul-values-float64-standard"] == (
            "can_run declines these inputs: the data is in host memory; torch.matmul runs it there"
        )
        why = (
            prism_core.extending.plugins()
            .backend("torch")
            .can_drive(prism_core.hardware.get_device("nvidia.h100-sxm"))
        )
        assert skipped["torch.cuda.zeros-values-float64-standard"] == (
            f"can_run declines these inputs: {why.reasons[0]}"
        )


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--prism-backend=torch", *args],
        cwd=work,
        env=subprocess_env(PYTHONDONTWRITEBYTECODE="1"),
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        check=False,
    )


@pytest.mark.timeout(GUARD_S)
def test_the_pytest_plugin_runs_the_suite(tmp_path: Path) -> None:
    """``pytest --prism-backend torch``: one test per check, run by a real pytest."""
    listed = _pytest(tmp_path, "--collect-only", "-q")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    ids = [line for line in listed.stdout.splitlines() if "::" in line]
    assert len(ids) == len(conformance_checks("torch"))
    assert "prism-backend-torch::test_conformance[torch.matmul-values-float32-strided]" in ids
    ran = _pytest(tmp_path, "-q", "-k", "torch.matmul- or torch.linalg.qr- or torch-")
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    summary = ran.stdout.strip().splitlines()[-1]
    assert re.search(r"\d+ passed", summary) and "failed" not in summary, summary
