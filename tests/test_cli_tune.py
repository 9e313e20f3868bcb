"""`prism tune` from the command line: sizes that cannot fit in memory, and what the report and
``--show`` say about what was measured.  The tuning of real cases is in test_bench.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(120)

#: The address space of the refused runs: a regression fails with a MemoryError quickly
#: instead of taking the machine's memory.
LIMIT = 4 << 30


def _limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (LIMIT, LIMIT))


def prism(
    tmp_path: Path, *args: str, code: str | None = None, limited: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    env["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the builtins only, whatever else is installed
    env["PYTHONIOENCODING"] = "utf-8"
    command = [sys.executable, *(["-c", code] if code else ["-m", "prism_core"]), *args]
    proc = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=100,
        check=False,
        preexec_fn=_limit_memory if limited else None,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


@pytest.mark.skipif(os.name != "posix", reason="the address space is limited with setrlimit")
@pytest.mark.parametrize(
    ("op", "size", "needs"),
    [
        ("matmul", "100000", "223.5 GiB"),  # three 100000 x 100000 float64 matrices
        ("add", "3000000000", "67.06 GiB"),  # three vectors of 3e9 float64
        ("fft.fft", "64,3000000000", "67.06 GiB"),  # refused before the first size is measured
    ],
)
def test_a_size_that_cannot_fit_in_memory_is_refused(
    tmp_path: Path, op: str, size: str, needs: str
) -> None:
    proc = prism(tmp_path, "tune", op, "--sizes", size, "--budget", "0.01", limited=True)
    assert proc.returncode == 1, proc.stderr
    assert "internal error" not in proc.stderr
    biggest = size.split(",")[-1]
    assert f"prism tune: error: sizes: {op} n={biggest} float64 needs {needs}" in proc.stderr
    assert "of memory available" in proc.stderr
    assert proc.stdout == ""  # nothing was measured


#: ``prism`` with a second variant of ``add``, so that a case of add has a choice to store.
TWIN = """
import sys
import numpy as np
from prism_core.kernel.dispatch.ops import get_op

get_op("add").variant(lambda a, b: np.add(a, b), name="tests.add_twin", priority=-1)
from prism_core._cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(os.name != "posix", reason="the address space is limited with setrlimit")
def test_a_size_that_cannot_fit_stops_every_op_before_measuring(tmp_path: Path) -> None:
    proc = prism(
        tmp_path, "tune", "add", "matmul", "--sizes", "16,100000", "--budget", "0.01",
        code=TWIN, limited=True,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "sizes: matmul n=100000 float64 needs 223.5 GiB" in proc.stderr
    assert not list((tmp_path / "cache").glob("tuning/*.json"))  # add was not measured either


def test_sizes_help_says_what_a_size_is(tmp_path: Path) -> None:
    proc = prism(tmp_path, "tune", "--help")
    assert proc.returncode == 0
    text = " ".join(proc.stdout.split())
    assert "the side of n x n matrices for matmul, linalg.svd and linalg.solve" in text
    assert "the length of the vectors for add and fft.fft" in text


#: Records tuned choices as ``prism tune`` would have stored them: numpy.add, the declared
#: first, measured 40x faster than the runner-up; a tie; and a measured winner.
RECORD = """
from prism_core._tuning.tuning_records import TuningEntry, TuningStore

def entry(op, bucket, times, winner, decided):
    return TuningEntry(
        op=op, device="generic.x86-64", dtype="fp64", bucket=bucket,
        variants=tuple(sorted(times)), times=times, winner=winner, decided=decided,
        shapes=((16,), (16,)), repeats=5, measured_at=0.0,
    )

TuningStore().record(entries=[
    entry("add", 5, {"numpy.add": 1e-6, "torch.add": 40e-6}, "numpy.add", "measured"),
    entry("add", 20, {"numpy.add": 1.03e-3, "torch.add": 1e-3}, "numpy.add", "tie"),
    entry("matmul", 10, {"numpy.matmul": 2e-6, "torch.matmul": 1e-6}, "torch.matmul", "measured"),
])
"""


def test_show_says_what_was_measured(tmp_path: Path) -> None:
    recorded = prism(tmp_path, code=RECORD)
    assert recorded.returncode == 0, recorded.stderr
    proc = prism(tmp_path, "tune", "--show")
    assert proc.returncode == 0, proc.stderr
    lines = {line.split()[3]: " ".join(line.split()) for line in proc.stdout.splitlines()[2:]}
    assert "measured: 40x faster than torch.add" in lines["<2^5"]
    assert "tie" not in lines["<2^5"]
    assert "tie: torch.add 3% faster at the minimum" in lines["<2^20"]
    assert "measured: 2x faster than numpy.matmul" in lines["<2^10"]
