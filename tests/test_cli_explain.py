"""`prism explain`: decisions from the command line, for present and simulated devices."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def prism(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env["PRISM_CACHE_DIR"] = str(tmp_path / "cache")
    env["PRISM_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # the builtins only, whatever else is installed
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert "Traceback" not in proc.stdout + proc.stderr
    return proc


def test_explain_on_this_host(tmp_path: Path) -> None:
    proc = prism(tmp_path, "explain", "matmul", "--dtype", "float32", "--shape", "4x4,4x4")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "matmul(float32[4x4], float32[4x4])"
    assert "chosen: numpy.matmul on numpy for " in proc.stdout
    assert "+ numpy.matmul [numpy, priority 0]" in proc.stdout


@pytest.mark.parametrize("op", ["zeros", "arange", "fft.fftfreq"])
def test_explain_an_op_without_array_arguments_by_default(tmp_path: Path, op: str) -> None:
    """Without ``--shape`` an op that takes no array is explained with one shape, its own (it
    was given two, the default of ops with two arrays, and refused them)."""
    proc = prism(tmp_path, "explain", op)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == f"{op}(tuple)"
    assert f"chosen: numpy.{op} on numpy for " in proc.stdout


def test_explain_json_for_a_simulated_device(tmp_path: Path) -> None:
    proc = prism(
        tmp_path,
        "explain",
        "matmul",
        "--device",
        "nvidia.h100-sxm",
        "--dtype",
        "bf16",
        "--shape",
        "4096x4096,4096x4096",
        "--json",
    )
    # Only the NumPy plugin is installed: nothing would run matmul on an H100 (exit 1), and the
    # decision says why for each candidate.
    assert proc.returncode == 1, proc.stderr
    decision = json.loads(proc.stdout)
    assert decision["scope"]["device"] == "nvidia.h100-sxm"
    assert decision["simulated"] is True
    assert decision["signature"] == ["bfloat16[4096x4096]", "bfloat16[4096x4096]"]
    assert decision["chosen"] is None
    assert decision["executed"] == "numpy.matmul"
    (numpy_verdict,) = decision["candidates"]
    assert numpy_verdict["reasons"] == [
        "'numpy' does not drive nvidia.h100-sxm (kind is 'gpu', required 'cpu')"
    ]


def test_explain_on_a_simulated_cpu(tmp_path: Path) -> None:
    proc = prism(tmp_path, "explain", "linalg.svd", "--device", "aws.graviton3", "--shape", "8x8")
    assert proc.returncode == 0, proc.stderr
    assert "is not present on this host: simulated" in proc.stdout
    assert "chosen: numpy.linalg.svd on numpy for aws.graviton3" in proc.stdout


def test_explain_usage_errors(tmp_path: Path) -> None:
    for args, message in [
        (("explain", "matmull"), "did you mean 'matmul'"),
        (("explain", "matmul", "--dtype", "fp9"), "unknown data type 'fp9'"),
        (("explain", "matmul", "--shape", "4by4"), "is not a shape"),
        (("explain", "matmul", "--device", "nvidia.h100-sx"), "did you mean 'nvidia.h100-sxm'"),
        (("explain", "matmul", "--backend", "numpi"), "did you mean 'numpy'"),
    ]:
        proc = prism(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.returncode)
        assert message in proc.stderr, (args, proc.stderr)


def test_explain_refuses_empty_names_and_too_many_shapes(tmp_path: Path) -> None:
    for args, message in [
        (("explain", "matmul", "--device", ""), "--device: an empty device type"),
        (("explain", "matmul", "--device", " "), "--device: an empty device type"),
        (("explain", "matmul", "--backend", ""), "--backend: an empty backend name"),
        (
            ("explain", "matmul", "--shape", "2x2,2x2,2x2"),
            "--shape: 3 shapes given, but matmul takes 2 array arguments",
        ),
        (
            ("explain", "linalg.inv", "--shape", "2x2,2x2"),
            "--shape: 2 shapes given, but linalg.inv takes 1 array argument",
        ),
    ]:
        proc = prism(tmp_path, *args)
        assert proc.returncode == 2, (args, proc.returncode, proc.stdout)
        assert message in proc.stderr, (args, proc.stderr)
    # As many shapes as the op takes is no usage error.
    proc = prism(tmp_path, "explain", "linalg.inv", "--shape", "3x3")
    assert proc.returncode != 2, proc.stderr
    assert proc.stdout.splitlines()[0] == "linalg.inv(float64[3x3])"


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("shapes", "message"),
    [
        (
            ("matmul", "--shape", "4096x4096"),
            "--shape: matmul takes 2 arrays (x1, x2); --shape gave 1: pass --shape "
            "4096x4096,4096x4096",
        ),
        (
            ("where", "--shape", "8,8"),
            "--shape: where takes 3 arrays (condition, x1, x2); --shape gave 2: pass --shape 8,8,8",
        ),
    ],
)
def test_explain_refuses_fewer_shapes_than_the_op_takes(
    tmp_path: Path, shapes: tuple[str, ...], message: str
) -> None:
    """``matmul --shape 4096x4096`` was explained as a one-argument call, its candidates judged
    on an argument that is not there (a garbled reason, exit 0)."""
    proc = prism(tmp_path, "explain", *shapes)
    assert proc.returncode == 2, (proc.returncode, proc.stdout)
    assert message in proc.stderr, proc.stderr
    assert proc.stdout == ""


@pytest.mark.timeout(60)
def test_explain_leaves_out_the_arrays_an_op_may_go_without(tmp_path: Path) -> None:
    proc = prism(tmp_path, "explain", "clip", "--shape", "4x4")  # min and max are optional
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "clip(float64[4x4])"
