"""``prism_core.backend_kit``'s shared pieces for host-library backends: batches on the host's
CPUs and the library probe (the SciPy, parasail and Numba plugins are built on them)."""

from __future__ import annotations

import itertools
import os
import threading

import numpy as np
import pytest

from prism_core import backend_kit


def test_usable_cpus_is_the_affinity() -> None:
    expected = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    assert backend_kit.usable_cpus() == max(1, expected or 1)


def test_a_thread_pool_is_kept_per_name_and_size() -> None:
    pool = backend_kit.thread_pool(2, "kit-test")
    assert backend_kit.thread_pool(2, "kit-test") is pool
    assert backend_kit.thread_pool(3, "kit-test") is not pool
    names = set(pool.map(lambda _: threading.current_thread().name, range(8)))
    assert names and all(n.startswith("prism-kit-test") for n in names)


@pytest.mark.parametrize("parts", [1, 2, 3, 8, 40])
def test_balanced_chunks_cover_the_batch_in_order(parts: int) -> None:
    sizes = np.array([5, 1, 1, 30, 2, 2, 2, 9, 0, 4])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    runs = backend_kit.balanced_chunks(offsets, parts)
    assert runs[0][0] == 0 and runs[-1][1] == len(sizes)
    assert all(a < b for a, b in runs)
    assert all(b == c for (_, b), (c, _) in itertools.pairwise(runs))
    assert len(runs) <= max(parts, 1)
    if parts == 1:
        assert runs == [(0, len(sizes))]


def test_probe_names_what_to_do() -> None:
    missing = backend_kit.probe_library("prism_no_such_library", "1.0", "prism-plugin-nothing")
    assert not missing
    assert missing.reason == (
        "prism_no_such_library is not installed (pip install 'prism_no_such_library>=1.0', or "
        "reinstall prism-plugin-nothing, which depends on it)"
    )
    found = backend_kit.probe_library("numpy", "1.0", "prism-core")
    assert found and found.version == np.__version__
    too_old = backend_kit.probe_library("numpy", "999.0", "prism-core")
    assert not too_old and "needs numpy>=999.0 (pip install -U 'numpy>=999.0')" in too_old.reason
