"""Dispatch choosing by the performance model and by execution policies.

A GPU cannot be had here: the ``simgpu`` test plugin (tests/simulated_gpu_plugin.py) reports a
simulated ``nvidia.h100-pcie`` and a backend for it that computes with NumPy behind a GPU's own
array type.  What is compared is the performance model's prediction from the descriptions (the
H100's peak and PCIe link, this host's CPU), found through a real entry point; the results are
checked against NumPy's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core import ArraySpec, ExecutionPolicy, PolicyError


def spec(n: int) -> ArraySpec:
    return ArraySpec((n, n), "float64")


def test_the_model_keeps_small_calls_on_the_cpu_and_offloads_large_ones(simgpu: None) -> None:
    small = prism.explain("matmul", spec(8), spec(8))
    assert small.decided_by == "modelled"
    assert small.chosen_backend == "numpy"
    large = prism.explain("matmul", spec(4096), spec(4096))
    assert large.decided_by == "modelled"
    assert large.chosen == "simgpu.matmul"
    assert "moves:" in str(large)  # the arguments go to the GPU and the result comes back
    times = dict(large.basis.times)
    assert times["simgpu.matmul"] < times["numpy.matmul"]
    assert "decided by: modelled: predicted by the performance model" in str(large)


def test_modelled_choices_run_and_give_numpy_results(simgpu: None) -> None:
    rng = np.random.default_rng(0)
    ran = set()
    for _ in range(2):
        for n in (8, 600):
            a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
            ran.add(prism.explain("matmul", a, b).chosen)
            out = prism.matmul(a, b)
            assert isinstance(out, np.ndarray)  # NumPy in, NumPy out, wherever it ran
            np.testing.assert_allclose(out, a @ b, rtol=1e-10)
    assert ran == {"numpy.matmul", "simgpu.matmul"}
    # The size decides, so the plan key holds the size bucket: both plans are cached.
    keys = list(prism.get_op("matmul")._plans)
    assert len({k[-1] for k in keys if isinstance(k[-1], int)}) >= 2


def test_the_crossover_is_where_the_transfer_stops_paying(simgpu: None) -> None:
    picks = {
        n: prism.explain("matmul", spec(n), spec(n)).chosen_backend
        for n in (2, 16, 128, 1024, 4096)
    }
    backends = list(picks.values())
    assert backends[0] == "numpy" and backends[-1] == "simgpu"
    crossed = backends.index("simgpu")
    assert all(b == "simgpu" for b in backends[crossed:])  # one crossover, not a flip-flop


def test_energy_policy_prefers_the_device_that_spends_less(simgpu: None) -> None:
    model = prism.tuning.PerformanceModel()
    cpu = prism.hardware.present_devices().devices[0].description
    with prism.execution_policy(ExecutionPolicy(priority="energy")):
        decision = prism.explain("matmul", spec(2048), spec(2048))
    # The host CPU's description has no TDP: the H100's energy is known, the CPU's is not,
    # and a row without a TDP ranks last under energy.
    assert model.figures(cpu).tdp_watts is None
    assert decision.chosen == "simgpu.matmul"
    assert decision.basis.note.startswith("policy energy")


def test_a_latency_limit_nothing_meets_is_an_error_naming_the_best(simgpu: None) -> None:
    policy = ExecutionPolicy(priority="speed", max_latency_ms=0.001)
    with prism.execution_policy(policy), pytest.raises(PolicyError) as info:
        prism.explain("matmul", spec(4096), spec(4096))
    message = str(info.value)
    assert "simgpu.matmul on nvidia.h100-pcie" in message
    assert "over max_latency_ms=0.001" in message


def test_a_latency_limit_moves_the_call_to_the_device_that_meets_it(simgpu: None) -> None:
    fast = prism.explain("matmul", spec(1024), spec(1024))
    gpu_ms = dict(fast.basis.times)["simgpu.matmul"] * 1e3
    cpu_ms = dict(fast.basis.times)["numpy.matmul"] * 1e3
    assert gpu_ms < cpu_ms
    limit = (gpu_ms + cpu_ms) / 2  # only the GPU meets it
    with prism.execution_policy(ExecutionPolicy(priority="energy", max_latency_ms=limit)):
        assert prism.explain("matmul", spec(1024), spec(1024)).chosen == "simgpu.matmul"


def test_execution_policy_scope_is_checked_and_shown() -> None:
    with pytest.raises(TypeError, match="ExecutionPolicy"):
        prism.execution_policy("speed")
    policy = ExecutionPolicy(priority="throughput")
    with prism.execution_policy(policy) as scope:
        assert scope.execution is policy
        assert "throughput" in repr(scope)
        assert scope.as_dict()["execution_policy"]["priority"] == "throughput"
        with prism.execution_policy(None) as inner:
            assert inner.execution is None
    assert prism.current_scope().execution is None


def test_a_policy_on_the_cpu_alone_uses_tuned_times(tmp_path: Path) -> None:
    """One device and several variants: the policy ranks the tuned times."""
    name = f"policy_op_{tmp_path.name}"

    def spin(n: int) -> None:
        total = 0
        for i in range(n):
            total += i

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: np.ndarray) -> np.ndarray:
        spin(40_000)
        return x + 1

    @op.variant(priority=10, name=f"{name}.slow")
    def slow(x: np.ndarray) -> np.ndarray:
        spin(20_000)
        return x + 1

    @op.variant(priority=5, name=f"{name}.fast")
    def fast(x: np.ndarray) -> np.ndarray:
        return x + 1

    x = np.ones(32)
    prism.tuning.tune(op, x, budget_s=1)
    with prism.execution_policy(ExecutionPolicy(priority="speed")):
        decision = prism.explain(op, x)
    assert decision.chosen == f"{name}.fast"
    assert decision.decided_by == "measured"
    with (
        prism.execution_policy(ExecutionPolicy(max_latency_ms=1e-9)),
        pytest.raises(PolicyError, match=f"{name}.fast on generic"),
    ):
        op(x)
