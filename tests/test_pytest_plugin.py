"""``pytest --prism-backend NAME``: the conformance suite as tests, run by a real pytest.

prism-core registers ``prism_core.testing.pytest_plugin`` through a ``pytest11`` entry point;
each test here runs ``python -m pytest`` in a subprocess, in an empty directory, as a backend
author would.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

#: A guard against a hung process, not a performance expectation.
GUARD_S = 600


def _entry_point_installed() -> bool:
    found = importlib.metadata.entry_points(group="pytest11")
    return any(ep.value == "prism_core.testing.pytest_plugin" for ep in found)


@pytest.fixture(autouse=True)
def _installed() -> None:
    assert _entry_point_installed(), (
        "prism-core's pytest11 entry point is not installed: reinstall prism-core "
        "(pip install -e .) after pulling pyproject.toml"
    )


def pytest_run(
    tmp_path: Path, *args: str, site: Path | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRISM_", "PYTEST_"))}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if site is not None:  # the wrong backend's distribution, and the tests package it lives in
        env["PYTHONPATH"] = os.pathsep.join([str(site), str(REPO)])
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        check=False,
    )


def _wrong_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    info = site / "prism_test_wrong-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: prism-test-wrong\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        "[prism.plugins]\nwrong = tests.wrong_backend_plugin\n", encoding="utf-8"
    )
    return site


@pytest.mark.timeout(GUARD_S)
def test_one_test_per_op_and_check(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, "--prism-backend", "numpy", "--collect-only", "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ids = [line for line in proc.stdout.splitlines() if "::" in line]
    assert len(ids) > 1000
    for expected in (
        "prism-backend-numpy::test_conformance[numpy-availability]",
        "prism-backend-numpy::test_conformance[numpy-roundtrip-float32]",
        "prism-backend-numpy::test_conformance[numpy.fft.fft-dtype-complex64]",
        "prism-backend-numpy::test_conformance[numpy.matmul-values-float32-fortran]",
        "prism-backend-numpy::test_conformance[numpy.linalg.svd-type-complex128]",
        "prism-backend-numpy::test_conformance[numpy.fft.rfft-kwarg-norm]",
    ):
        assert expected in ids, expected


@pytest.mark.timeout(GUARD_S)
def test_the_numpy_backend_passes(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, "--prism-backend", "numpy", "-q", "-rs")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    summary = proc.stdout.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1))  # type: ignore[union-attr]
    assert passed > 1000, summary
    assert "failed" not in summary
    # Not compared: random numbers, and where prism-plugin-genomics is installed (every installed
    # plugin is loaded here) its two alignment ops, whose arguments are encoded sequences rather
    # than standard arrays (its own tests check them).
    aligning = importlib.util.find_spec("prism_genomics") is not None
    assert f"{1 + 2 * aligning} skipped" in summary
    assert "random numbers differ between backends" in proc.stdout


@pytest.mark.timeout(GUARD_S)
def test_a_wrong_backend_fails_with_the_named_checks(tmp_path: Path) -> None:
    site = _wrong_site(tmp_path)
    proc = pytest_run(tmp_path, "--prism-backend", "wrong", "-q", "-rf", site=site)
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr
    ids = re.findall(
        r"^FAILED prism-backend-wrong::test_conformance\[(\S+)\]", proc.stdout, re.MULTILINE
    )
    # Each failure shows the check's name and finding, not a traceback into the suite.
    failed = dict(re.findall(r"^(wrong[\w.\-]+): (.+)$", proc.stdout, re.MULTILINE))
    assert set(ids) == set(failed) and len(ids) > 6
    assert failed["wrong.fft.fft-values-complex64-standard"].startswith(
        "values differ from the NumPy reference"
    )
    assert "dtype complex128, expected complex64" in failed["wrong.fft.ifft-dtype-complex64"]
    assert "dtype float64, expected float32" in failed["wrong.matmul-dtype-float32"]
    assert "returned a plain tuple" in failed["wrong.linalg.svd-type-float64"]
    assert (
        "returned list, not an array of backend 'wrong'" in failed["wrong.linalg.inv-type-float64"]
    )
    for keyword in ("n", "axis", "norm"):
        assert "unexpected keyword argument" in failed[f"wrong.fft.rfft-kwarg-{keyword}"]
    assert "Traceback" not in proc.stdout and "_conformance.py:" not in proc.stdout
    # What is right passes.
    assert not [name for name in failed if name.startswith(("wrong.add", "wrong.sum", "wrong-"))]
    # -k selects among the checks like among any tests.
    only = pytest_run(tmp_path, "--prism-backend", "wrong", "-q", "-k", "svd-type", site=site)
    assert only.returncode == 1
    assert re.match(r"4 failed, \d+ deselected", only.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(GUARD_S)
def test_an_unknown_backend_is_a_usage_error(tmp_path: Path) -> None:
    proc = pytest_run(tmp_path, "--prism-backend", "numpi", "-q")
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's "usage error"
    assert "--prism-backend numpi: no backend named 'numpi' (did you mean 'numpy'?)" in (
        proc.stdout + proc.stderr
    )


NOTHING_ADDED = """
import sys


def test_the_plugin_is_there_and_idle(request):
    manager = request.config.pluginmanager
    assert manager.has_plugin("prism")  # loaded through the pytest11 entry point
    assert manager.get_plugin("prism-conformance") is None
    loaded = [m for m in ("numpy", "prism_core.testing._conformance",
                          "prism_core.kernel.plugins", "prism_core.kernel.dispatch.ops")
              if m in sys.modules]
    assert loaded == [], loaded
"""


@pytest.mark.timeout(GUARD_S)
def test_without_the_option_the_plugin_adds_nothing(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "test_plain.py").write_text(NOTHING_ADDED, encoding="utf-8")
    proc = pytest_run(tmp_path, "-q")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1].startswith("1 passed")
    # The option is offered, and documented.
    helped = pytest_run(tmp_path, "--help")
    assert "--prism-backend=NAME" in helped.stdout
