"""A backend whose library crashes or hangs costs the conformance suite one check each, not the run.

``tests/fragile_backend_plugin.py`` contributes the ``fragile`` backend, installed through a real
``prism.plugins`` entry point: its ``linalg.inv`` kills its process with ``SIGFPE`` for one input,
its ``matmul`` calls ``abort()`` for another and its ``sum`` sleeps forever for a third.  Each
test runs ``python -m pytest --prism-backend fragile`` in a subprocess, as a backend author would;
the checks run in a worker process that the suite restarts when it dies, and a summary names what
crashed and what hung.
"""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import prism_core as prism

from .conftest import put_distribution_on_path
from .test_pytest_plugin import GUARD_S, pytest_run

#: Short, so that the three hung checks cost seconds; far above what a check of NumPy takes.
TIMEOUT_S = "4"

CRASHED = {
    "fragile.linalg.inv-values-float32-empty": "SIGFPE",
    "fragile.linalg.inv-dtype-float32": "SIGFPE",  # its checks of every shape call the 0x0 too
    "fragile.linalg.inv-type-float32": "SIGFPE",
    "fragile.matmul-values-complex64-one": "SIGABRT",
    "fragile.matmul-dtype-complex64": "SIGABRT",
    "fragile.matmul-type-complex64": "SIGABRT",
}
HUNG = {
    "fragile.sum-values-float32-odd",
    "fragile.sum-dtype-float32",
    "fragile.sum-type-float32",
}


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The fragile plugin's distribution: its entry point visible here and, through
    ``PYTHONPATH``, to the pytest subprocesses."""
    site = tmp_path / "site"
    put_distribution_on_path(
        monkeypatch,
        site,
        "prism-test-fragile",
        "1.0",
        "[prism.plugins]\nfragile = tests.fragile_backend_plugin\n",
    )
    yield site
    prism.extending.reload_plugins()


def _count_checks() -> int:
    ps = prism.extending.reload_plugins(
        prism.extending.PluginSettings(strict=True, allow=("fragile",))
    )
    assert ps.records["fragile"].status == "loaded", ps.records["fragile"].reason
    return len(prism.testing.conformance_checks("fragile"))


def _summary(stdout: str) -> str:
    assert "prism conformance summary" in stdout, stdout[-3000:]
    return stdout.split("prism conformance summary", 1)[1]


def _assert_named(proc: subprocess.CompletedProcess[str], total: int) -> None:
    out = proc.stdout
    assert proc.returncode == 1, out[-4000:] + proc.stderr
    # Each crashed or hung check fails, saying how, and nothing else fails.
    failed = set(re.findall(r"^FAILED prism-backend-fragile::test_conformance\[(\S+)\]", out, re.M))
    assert failed == set(CRASHED) | HUNG
    for name, how in CRASHED.items():
        assert f"{name}: crashed: {how} in {name}" in out, name
    for name in HUNG:
        assert f"{name}: hung (over {TIMEOUT_S} s) in {name}" in out, name
    # The checks after each crash ran (in a new worker), and passed.
    passed = total - len(CRASHED) - len(HUNG)
    assert re.search(rf"\b9 failed, {passed} passed in ", out), out.strip().splitlines()[-1]
    # The summary counts every outcome, and names what crashed (with the signal) and hung.
    summary = _summary(out)
    counts = (
        f"fragile: {passed} passed, 0 failed, {len(CRASHED)} crashed, {len(HUNG)} hung, 0 skipped"
    )
    assert counts in summary, summary
    listed = dict(re.findall(r"^ {4}(fragile\S+): (.+)$", summary, re.M))
    assert listed == {
        **{name: f"crashed: {how}" for name, how in CRASHED.items()},
        **dict.fromkeys(HUNG, f"hung (over {TIMEOUT_S} s)"),
    }


@pytest.mark.timeout(GUARD_S)
def test_crashes_and_hangs_are_named_and_the_run_goes_on(tmp_path: Path, site: Path) -> None:
    total = _count_checks()
    proc = pytest_run(
        tmp_path, "--prism-backend", "fragile", "--prism-timeout", TIMEOUT_S, "-q", site=site
    )
    _assert_named(proc, total)
    # The crashed worker's Python stack (faulthandler) is captured with the check that crashed.
    one = re.escape("fragile.linalg.inv-values-float32-empty")
    block = re.search(
        rf"_ test_conformance\[{one}\] _+\n(.*?)\n(?:_{{5,}} |=+ )", proc.stdout, re.S
    )
    assert block, proc.stdout[-4000:]
    assert "Captured stderr call" in block.group(1)
    assert "Fatal Python error: Floating point exception" in block.group(1)
    assert "fragile_backend_plugin.py" in block.group(1)  # the line that raised the signal


@pytest.mark.timeout(GUARD_S)
def test_the_same_under_pytest_xdist(tmp_path: Path, site: Path) -> None:
    pytest.importorskip("xdist", reason="pytest-xdist runs the suite in two processes here")
    total = _count_checks()
    proc = pytest_run(
        tmp_path,
        "--prism-backend",
        "fragile",
        "--prism-timeout",
        TIMEOUT_S,
        "-q",
        "-n",
        "2",
        site=site,
    )
    _assert_named(proc, total)


@pytest.mark.timeout(GUARD_S)
def test_one_check_reruns_alone_and_without_isolation_a_crash_ends_the_run(
    tmp_path: Path, site: Path
) -> None:
    one = "fragile.linalg.inv-values-float32-empty"
    alone = pytest_run(tmp_path, "--prism-backend", "fragile", "-q", "-k", one, site=site)
    assert alone.returncode == 1, alone.stdout[-3000:] + alone.stderr
    assert "fragile: 0 passed, 0 failed, 1 crashed, 0 hung, 0 skipped" in _summary(alone.stdout)
    assert f"    {one}: crashed: SIGFPE" in alone.stdout
    # In pytest's own process the signal ends pytest: no summary, nothing after the crash.
    inside = pytest_run(
        tmp_path,
        "--prism-backend",
        "fragile",
        "--prism-no-isolate",
        "-q",
        "-k",
        f"{one} or fragile.add-values",
        site=site,
    )
    assert inside.returncode == -signal.SIGFPE, inside.stdout[-3000:] + inside.stderr
    assert "prism conformance summary" not in inside.stdout


@pytest.mark.timeout(GUARD_S)
def test_a_negative_timeout_is_refused(tmp_path: Path, site: Path) -> None:
    proc = pytest_run(tmp_path, "--prism-backend", "fragile", "--prism-timeout", "-1", site=site)
    assert proc.returncode == 4, proc.stdout + proc.stderr  # pytest's usage error
    assert "--prism-timeout -1: expected seconds >= 0" in proc.stderr


@pytest.mark.timeout(GUARD_S)
def test_a_shorter_pytest_timeout_leaves_the_next_checks_their_own_answers(
    tmp_path: Path, site: Path
) -> None:
    pytest.importorskip("pytest_timeout", reason="pytest-timeout's limit is the one tested")
    proc = pytest_run(
        tmp_path,
        "--prism-backend",
        "fragile",
        "--prism-timeout",
        "600",
        "--timeout",
        TIMEOUT_S,
        "-q",
        "-k",
        "fragile.sum-values-float32",
        site=site,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr
    # pytest-timeout fails the hung check; its worker is killed with it, so that the checks
    # after it (strided, fortran) get their own answers from a new worker, not the hung one's.
    failed = re.findall(
        r"^FAILED prism-backend-fragile::test_conformance\[(\S+)\]", proc.stdout, re.M
    )
    assert failed == ["fragile.sum-values-float32-odd"], proc.stdout[-3000:]
    assert "Timeout" in proc.stdout
    assert re.search(r"\b1 failed, 5 passed\b", proc.stdout), proc.stdout[-1000:]
