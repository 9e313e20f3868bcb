"""``pytest --prism-backend NAME --collect-only`` lists, and counts, every conformance check.

The checks are the pytest plugin's items, made after the files are collected; pytest's count
("N tests collected", "collected N items") is of the items collection reports announce, so the
plugin announces its own.  Run in a subprocess, as a backend author runs it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .test_pytest_plugin import GUARD_S, pytest_run

COUNT = "from prism_core.testing import conformance_checks; print(len(conformance_checks('numpy')))"


def _checks_in_a_fresh_process(tmp_path: Path) -> int:
    """``len(conformance_checks("numpy"))`` in the environment ``pytest_run`` gives pytest (the
    plugins installed beside prism-core may add variants of the numpy backend)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PRISM_", "PYTEST_"))}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run(
        [sys.executable, "-c", COUNT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=GUARD_S,
        check=True,
    )
    return int(out.stdout.strip())


@pytest.mark.timeout(GUARD_S)
def test_collect_only_lists_and_counts_every_check(tmp_path: Path) -> None:
    expected = _checks_in_a_fresh_process(tmp_path)
    quiet = pytest_run(tmp_path, "--prism-backend", "numpy", "--collect-only", "-q")
    assert quiet.returncode == 0, quiet.stdout[-2000:] + quiet.stderr
    ids = [line for line in quiet.stdout.splitlines() if "::test_conformance[" in line]
    assert len(ids) == expected
    assert quiet.stdout.strip().splitlines()[-1].startswith(f"{expected} tests collected in ")
    # The new kinds of checks are among them.
    for name in (
        "numpy-to_numpy-writable",
        "numpy-dtypes",
        "numpy.add-errors-shapes",
        "numpy.sum-errors-axis",
        "numpy.linalg.inv-errors-square",
        "numpy.fft.fft-errors-norm",
        "numpy.linalg.solve-singular-float32",
        "numpy.add-scalars-complex64",
        "numpy.add-promotion-int32-float32",
        "numpy.concat-promotion-bool-int32",
    ):
        assert f"prism-backend-numpy::test_conformance[{name}]" in ids, name
    # Verbose, the header says it too; with -k, the selection is counted among them.
    verbose = pytest_run(tmp_path, "--prism-backend", "numpy", "--collect-only")
    assert f"collected {expected} items" in verbose.stdout
    selected = pytest_run(
        tmp_path, "--prism-backend", "numpy", "--collect-only", "-q", "-k", "errors-shapes"
    )
    last = selected.stdout.strip().splitlines()[-1]
    found = re.match(rf"(\d+)/{expected} tests collected \((\d+) deselected\)", last)
    assert found, last
    assert int(found.group(1)) + int(found.group(2)) == expected
