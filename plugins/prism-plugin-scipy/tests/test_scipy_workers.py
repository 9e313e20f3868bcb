"""The FFTs' ``workers``: from the described cores, the usable CPUs and the BLAS threads."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.fft
import threadpoolctl
from prism_plugin_scipy import ops, workers

import prism_core

THREE_CORES = """\
format_version: 1
device_type: acme.three-core
name: ACME three-core test CPU
vendor: acme
kind: cpu
extends: generic.x86-64
compute_units: 3
"""


@pytest.fixture(autouse=True)
def _decide_afresh() -> Iterator[None]:
    workers.reset_fft_workers()
    yield
    workers.reset_fft_workers()


@pytest.fixture
def three_cores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> prism_core.hardware.DeviceDescription:
    """The host, as Prism sees it, is a described CPU with three cores (and plenty of usable
    CPUs and BLAS threads, so that the description decides)."""
    (tmp_path / "three-core.yaml").write_text(THREE_CORES, encoding="utf-8")
    monkeypatch.setenv("PRISM_HARDWARE_PATH", str(tmp_path))
    description = prism_core.hardware.get_device("acme.three-core")
    assert description.compute_units == 3
    host = prism_core.hardware.DeviceInstance(description, 0, "ACME", None, None, "archspec")
    present = prism_core.hardware.PresentDevices((host,), {})
    monkeypatch.setattr(prism_core.hardware, "present_devices", lambda library=None: present)
    monkeypatch.setattr(workers, "_usable_cpus", lambda: 16)
    monkeypatch.setattr(workers, "_blas_threads", lambda: 16)
    return description


@pytest.mark.parametrize(
    ("described", "usable", "blas", "expected"),
    [
        (64, 2, 2, 2),  # a described 64-core chip, in a 2-CPU container
        (3, 16, 16, 3),  # the description decides
        (None, 8, 16, 8),  # a generic description declares no cores
        (64, 16, 1, 1),  # BLAS limited to one thread: so are the FFTs
        (None, None, None, 1),
        (0, 4, None, 4),
    ],
)
def test_the_smallest_known_number(
    described: int | None, usable: int | None, blas: int | None, expected: int
) -> None:
    assert workers.derive_workers(described, usable, blas) == expected


def test_workers_come_from_the_described_cores(
    three_cores: prism_core.hardware.DeviceDescription,
) -> None:
    choice = workers.fft_workers()
    assert choice.workers == 3
    assert choice.described_cores == 3
    assert choice.described_by == "acme.three-core"
    assert choice.as_dict() == {
        "workers": 3,
        "described_cores": 3,
        "described_by": "acme.three-core",
        "usable_cpus": 16,
        "blas_threads": 16,
    }


def test_the_fft_passes_them_to_scipy(
    three_cores: prism_core.hardware.DeviceDescription, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    real = scipy.fft.fft

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("workers"))
        return real(*args, **kwargs)

    monkeypatch.setattr(scipy.fft, "fft", spy)
    enough = workers.PARALLEL_MIN_ELEMENTS
    batch = np.ones((64, enough // 32), complex)
    ops.fft_fft(batch)  # 64 transforms: as many threads as described, 3
    ops.fft_fft(np.ones((2, enough), complex))  # two transforms: two threads at most
    ops.fft_fft(np.ones(4 * enough, complex))  # one transform: nothing to split
    ops.fft_fft(np.ones((4, 64), complex))  # 256 elements: not worth a thread
    ops.fft_fft(batch, axis=0)  # transforms of 64 points down the columns
    assert seen == [3, 2, 1, 1, 3]


def test_this_hosts_workers_are_the_minimum_of_what_it_knows() -> None:
    choice = workers.fft_workers()
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert choice.usable_cpus == cpus
    blas = [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]
    assert choice.blas_threads == max(blas)
    cpu = next(
        d for d in prism_core.hardware.present_devices().devices if d.description.kind == "cpu"
    )
    assert choice.described_by == cpu.device_type
    assert choice.described_cores == cpu.description.compute_units
    assert choice.workers == workers.derive_workers(
        choice.described_cores, choice.usable_cpus, choice.blas_threads
    )


@pytest.mark.timeout(120)
def test_a_blas_thread_limit_limits_the_ffts() -> None:
    """A real threadpoolctl limit, as a user sets it at start-up, in a process of its own: in
    the test process, threads other tests left behind (thread pools released and restored by
    dispatch) may set the BLAS thread count back while the limit is in force."""
    import subprocess
    import sys

    code = (
        "import scipy.linalg, threadpoolctl\n"
        "from prism_plugin_scipy import workers\n"
        "workers.fft_workers()  # load what deciding loads (a plugin may bring its own BLAS)\n"
        "with threadpoolctl.threadpool_limits(limits=1, user_api='blas'):\n"
        "    workers.reset_fft_workers()\n"
        "    choice = workers.fft_workers()\n"
        "    print(choice.blas_threads, choice.workers, workers.workers_for(1000, 1000))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1", "1"]


def test_per_call_workers() -> None:
    w = workers.fft_workers().workers
    big = workers.PARALLEL_MIN_ELEMENTS
    assert workers.workers_for(1, big * 4) == 1
    assert workers.workers_for(2, big // 4) == 1
    assert workers.workers_for(2, big) == min(w, 2)
    assert workers.workers_for(1000, big) == w
