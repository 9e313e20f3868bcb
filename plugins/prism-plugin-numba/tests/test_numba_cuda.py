"""The GPU kernel (``prism_plugin_numba.cuda_batch``) without a GPU: its logic in Numba's CUDA
simulator against Prism's reference (every score and end position, ties, 16-bit overflow and
its 32-bit recheck, DPX and not), its compilation to PTX for Hopper (the DPX instruction
present, nothing spilled to local memory) where libNVVM is found, and the GPU variants'
declarations and checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from prism_genomics import BLOSUM62

import prism_core

HERE = Path(__file__).parent


def test_the_kernel_in_the_simulator_is_exact() -> None:
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1"}
    done = subprocess.run(
        [sys.executable, str(HERE / "cuda_sim_check.py")],
        capture_output=True, text=True, timeout=240, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "all exact" in done.stdout
    assert "16-bit overflow rechecked: exact" in done.stdout


_PTX = """
import re, sys
from numba import cuda, int16, int32, int64, uint8
from prism_plugin_numba import cuda_batch as cb
for dpx in (False, True):
    for scratch in (int16, int32):
        sig = (int16[:, ::1], int64, int64, uint8[::1], int64[::1], int32[::1], int64[::1],
               int64, int64, int64, scratch[::1], scratch[::1], int32[::1], int32[::1],
               int32[::1])
        ptx, _ = cuda.compile_ptx(cb._make(cb._relu_max(dpx)), sig, cc=(9, 0))
        relu = ptx.count("max.s32.relu")
        assert (relu > 0) == dpx, (dpx, relu)
        assert ".local" not in ptx, "the tile's registers spilled to local memory"
        open(sys.argv[1] + f"/k{int(dpx)}{scratch}.ptx", "w").write(ptx)
print("compiled")
"""


def _nvvm_missing() -> str | None:
    home = os.environ.get("CUDA_HOME") or "/usr/local/cuda"
    if not list(Path(home).glob("**/libnvvm.so*")):
        return f"libNVVM not found under {home} (CUDA_HOME): Numba cannot compile to PTX"
    return None


@pytest.mark.skipif(_nvvm_missing() is not None, reason=str(_nvvm_missing()))
def test_the_kernel_compiles_to_ptx_for_hopper(tmp_path: Path) -> None:
    env = {**os.environ, "CUDA_HOME": os.environ.get("CUDA_HOME") or "/usr/local/cuda"}
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    done = subprocess.run(
        [sys.executable, "-c", _PTX, str(tmp_path)],
        capture_output=True, text=True, timeout=240, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if os.path.exists(ptxas):  # the PTX assembles for sm_90
        for ptx in tmp_path.glob("*.ptx"):
            run = [ptxas, "-arch=sm_90", str(ptx), "-o", str(ptx.with_suffix(".cubin"))]
            assembled = subprocess.run(run, capture_output=True, text=True, timeout=120)
            assert assembled.returncode == 0, assembled.stderr


def _batch(targets: int, length: int, letters: int = 24) -> tuple[object, ...]:
    rng = np.random.default_rng(0)
    query = rng.integers(0, letters, 400, dtype=np.uint8)
    packed = rng.integers(0, letters, targets * length, dtype=np.uint8)
    offsets = np.arange(0, targets * length + 1, length, dtype=np.int64)
    return query, packed, offsets, BLOSUM62.matrix, 11, 1


def test_the_gpu_variants_are_declared_with_their_requirements() -> None:
    record = prism_core.extending.plugins().records["numba"]
    assert record.backends == ["numba", "numba-cuda"]
    gpu = {v.name: v for v in record.variants if v.backend == "numba-cuda"}
    assert set(gpu) == {"numba.cuda.sw_align_batch", "numba.cuda.sw_align_batch.dpx"}
    plain = dict(gpu["numba.cuda.sw_align_batch"].requirement.mapping)
    assert plain == {"vendor": "nvidia", "kind": "gpu", "compute_capability": ">=7.5"}
    assert dict(gpu["numba.cuda.sw_align_batch.dpx"].requirement.mapping)["dpx"] == ">=1"
    assert gpu["numba.cuda.sw_align_batch.dpx"].priority == 41


def test_the_gpu_check_keeps_small_batches_on_the_cpu_and_takes_large_ones() -> None:
    from prism_plugin_numba.variants import GPU_MIN_CELLS, takes_gpu_batch

    small = _batch(10, 300)
    assert "below the crossover" in str(takes_gpu_batch(*small))
    large = _batch(GPU_MIN_CELLS // (400 * 300) + 1, 300)
    assert takes_gpu_batch(*large) is True
    huge = np.full((4, 4), 40000, dtype=np.int32)
    assert "int16" in str(takes_gpu_batch(*large[:3], huge, 5, 2))
    assert "uint8" in str(takes_gpu_batch(large[0].astype(np.int64), *large[1:]))


def test_without_a_gpu_the_backend_says_why() -> None:
    from prism_plugin_numba.backend import NumbaCudaBackend, cuda_unavailable

    why = cuda_unavailable()
    found = NumbaCudaBackend().availability()
    assert bool(found) == (why is None)
    if why is not None:
        assert found.reason == why


def test_a_simulated_h100_chooses_the_dpx_variant() -> None:
    """Selection as on the hardware, from the description (no GPU here; a named device takes
    any batch size): the DPX variant on an H100, the plain one on an Ada GPU (no DPX)."""
    args = _batch(4, 30)
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("genomics.sw_align_batch", *args)
    assert decision.chosen == "numba.cuda.sw_align_batch.dpx"
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain("genomics.sw_align_batch", *args)
    assert decision.chosen == "numba.cuda.sw_align_batch"
