"""Planning without hardware (prism_core._tuning.planner) on the shipped device descriptions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core._tuning import work as work_module
from prism_core._tuning.execution_policy import ExecutionPolicy, PolicyError
from prism_core._tuning.model import ModelError, PerformanceModel
from prism_core._tuning.op_work import Work
from prism_core._tuning.planner import DeviceChoice, choose_device
from prism_core._tuning.work import declare_work

WriteYaml = Callable[[str, str], Path]
S = prism.ArraySpec
N = 4096
FLOPS = 2 * N**3
BYTES = 3 * N * N * 4  # two float32 arguments and the result
DEVICES = ["nvidia.h100-sxm", "aws.trainium", "aws.inferentia2", "nvidia.l4"]


@pytest.fixture(autouse=True)
def _forget_user_declarations() -> Iterator[None]:
    saved = dict(work_module._USER)
    yield
    work_module._USER.clear()
    work_module._USER.update(saved)


def matmul_plan(policy: ExecutionPolicy | None = None, **kwargs: object) -> DeviceChoice:
    return choose_device(
        "matmul", S((N, N), "float32"), S((N, N), "float32"), devices=DEVICES, policy=policy,
        **kwargs,  # type: ignore[arg-type]
    )  # fmt: skip


# The arguments start on the host: each accelerator pays launch + compute + host-link transfer.
H100_S = 5e-6 + FLOPS / 67e12 + BYTES / 64e9  # pcie5-x16: 128 GB/s, 64 each way
INF2_S = 5e-6 + FLOPS / 47.5e12 + BYTES / 32e9  # no host_link: PCIe 4.0 x16 assumed
L4_S = 5e-6 + FLOPS / 30.3e12 + BYTES / 32e9  # pcie4-x16: 64 GB/s, 32 each way


def test_speed_picks_the_fastest() -> None:
    result = matmul_plan(ExecutionPolicy("speed"))
    assert result.device_type == "nvidia.h100-sxm"
    assert result.chosen.seconds == pytest.approx(H100_S, rel=1e-12)
    assert result.chosen.source == "modelled"
    assert result.chosen.bound == "transfer"
    # Trainium and Inferentia2 have the same figures: the label breaks the tie.
    assert [r.device_type for r in result.rows] == [
        "nvidia.h100-sxm", "aws.inferentia2", "aws.trainium", "nvidia.l4",
    ]  # fmt: skip


def test_cost_efficiency_picks_the_cheapest_per_run() -> None:
    result = matmul_plan(ExecutionPolicy("cost_efficiency"))
    assert result.device_type == "aws.inferentia2"
    assert result.chosen.cost_per_run == pytest.approx(1.08 * INF2_S / 3600, rel=1e-12)
    # The L4 has no price: last.
    assert result.rows[-1].device_type == "nvidia.l4"
    assert "no cloud_price, ranked last for cost_efficiency: nvidia.l4 x1" in str(result)


def test_energy_picks_the_least_joules() -> None:
    result = matmul_plan(ExecutionPolicy("energy"))
    assert result.device_type == "nvidia.l4"
    assert result.chosen.energy_j == pytest.approx(72 * L4_S, rel=1e-12)
    assert result.rows[1].device_type == "nvidia.h100-sxm"
    assert result.rows[1].energy_j == pytest.approx(700 * H100_S, rel=1e-12)


def test_a_constraint_nothing_meets_names_the_best_and_the_miss() -> None:
    with pytest.raises(PolicyError) as info:
        matmul_plan(ExecutionPolicy(max_latency_ms=1))
    over = H100_S * 1e3 - 1
    assert str(info.value).startswith(
        "device for matmul((4096, 4096), (4096, 4096)) in fp32: no candidate meets the policy "
        "(speed, max_latency_ms=1); the best under speed: nvidia.h100-sxm x1 takes "
        f"{H100_S * 1e3:.3g} ms, {over:.3g} ms ({over / 1 * 100:.0f} %) over max_latency_ms=1"
    )
    assert info.value.best is not None and info.value.best.device_type == "nvidia.h100-sxm"
    assert len(info.value.rows) == 4


def test_constraints_choose_among_the_rest() -> None:
    # Within $1.2 an hour: only Inferentia2 ($1.08); the fastest of the priced ones otherwise.
    result = matmul_plan(ExecutionPolicy(max_cost_per_hour=1.2))
    assert result.device_type == "aws.inferentia2"
    assert "nvidia.h100-sxm x1 costs $6.88 per hour" in str(result)


def test_a_tuned_time_replaces_the_prediction() -> None:
    calls: list[tuple[object, ...]] = []

    def tuned(op: str, device_type: str, dtype: str, shapes: object) -> float | None:
        calls.append((op, device_type, dtype, shapes))
        return 1e-3 if device_type == "aws.inferentia2" else None

    result = matmul_plan(tuned=tuned)
    assert result.device_type == "aws.inferentia2"
    assert result.chosen.source == "measured"
    assert result.chosen.seconds == 1e-3
    assert result.chosen.bound == "measured"
    assert result.chosen.throughput == pytest.approx(BYTES / 1e-3)
    assert ("matmul", "nvidia.h100-sxm", "fp32", ((N, N), (N, N))) in calls
    assert {r.device_type: r.source for r in result.rows}["nvidia.h100-sxm"] == "modelled"
    with pytest.raises(TypeError, match=r"tuned\('matmul', 'nvidia.h100-sxm', 'fp32', ...\) "):
        matmul_plan(tuned=lambda *args: -1.0)


def test_this_hosts_tuning_records_replace_the_prediction() -> None:
    """By default a plan reads what ``prism tune`` measured on this host (really measured
    here, with a small budget), for the device, dtype and size bucket it was measured at."""
    from prism_core.kernel.dispatch.registry import remove_variants, table

    name = "planner_tuned_op"
    declare_work(name, lambda shapes, itemsize: Work(2.0 * shapes[0][0], 16.0 * shapes[0][0]))

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: np.ndarray) -> np.ndarray:
        return np.asarray(x) * 2

    @op.variant(priority=5, name=f"{name}.other")
    def other(x: np.ndarray) -> np.ndarray:
        return np.asarray(x) * 2

    try:
        host = prism.hardware.present_devices().devices[0].description.device_type
        x = np.ones(4096)
        (case,) = prism.tuning.tune(op, x, budget_s=1).cases
        measured = min(m.seconds for m in case.measurements if m.error is None)

        tuned = choose_device(name, x, devices=[host])
        assert (tuned.chosen.source, tuned.chosen.seconds) == ("measured", measured)
        assert choose_device(name, x, devices=[host], tuned=False).chosen.source == "modelled"
        # Another size bucket, or another dtype, was not measured: the model predicts it.
        assert (
            choose_device(name, S((1 << 20,), "float64"), devices=[host]).chosen.source
            == "modelled"
        )
        assert (
            choose_device(name, S((4096,), "float32"), devices=[host]).chosen.source == "modelled"
        )
        with pytest.raises(TypeError, match=r"tuned must be True .* got 'yes'"):
            choose_device(name, x, devices=[host], tuned="yes")  # type: ignore[arg-type]
    finally:
        remove_variants(lambda v: v.op == name)
        table().pop(name, None)


def test_arrays_ops_and_aliases_are_accepted() -> None:
    a = np.ones((64, 64), dtype=np.float32)
    by_function = choose_device(prism.matmul, a, a, devices=["nvidia.h100-sxm"])
    by_alias = choose_device(
        "matrix_multiply", S((64, 64), "float32"), a, devices=["nvidia.h100-sxm"]
    )
    assert by_function.op == by_alias.op == "matmul"
    assert by_function.dtype == "fp32"
    assert by_function.chosen.seconds == by_alias.chosen.seconds
    # A Python scalar is a 0-d operand; the widest array type wins.
    mixed = choose_device(
        "add", S((64,), "float32"), S((64,), "float64"), devices=["nvidia.h100-sxm"]
    )
    assert mixed.dtype == "fp64"
    scalar = choose_device("add", S((64,), "float32"), 2.0, devices=["nvidia.h100-sxm"])
    assert scalar.shapes == ((64,), ())
    assert scalar.dtype == "fp32"
    # A sequence argument: stack's arrays.
    stacked = choose_device("stack", [S((8,)), S((8,))], devices=["nvidia.h100-sxm"])
    assert stacked.shapes == ((8,), (8,))


def test_device_counts_and_descriptions() -> None:
    h100 = prism.hardware.get_device("nvidia.h100-sxm")
    result = choose_device(
        "matmul", S((N, N), "float32"), S((N, N), "float32"), devices=[(h100, 2), "nvidia.l4"]
    )
    assert result.chosen.label == "nvidia.h100-sxm x2"
    assert result.chosen.cost_per_hour == pytest.approx(2 * 6.88)


def test_a_device_file_of_ones_own(write_yaml: WriteYaml) -> None:
    path = write_yaml(
        "budget.yaml",
        """
        device_type: test.budget-gpu
        kind: gpu
        peak_tflops: {fp32: 20}
        memory_hierarchy: [{level: global, bandwidth_gbps: 500}]
        host_link: {interface: pcie4-x16, bandwidth_gbps: 64}
        tdp_watts: 150
        cloud_price: {usd_per_hour: 0.5}
        """,
    )
    budget = prism.hardware.load_device_file(path)
    devices = ["nvidia.h100-sxm", "aws.inferentia2", budget]
    specs = (S((N, N), "float32"), S((N, N), "float32"))
    cost = choose_device(
        "matmul", *specs, devices=devices, policy=ExecutionPolicy("cost_efficiency")
    )
    assert cost.device_type == "test.budget-gpu"
    seconds = 5e-6 + FLOPS / 20e12 + BYTES / 32e9
    assert cost.chosen.seconds == pytest.approx(seconds, rel=1e-12)
    assert cost.chosen.cost_per_run == pytest.approx(0.5 * seconds / 3600, rel=1e-12)
    assert choose_device("matmul", *specs, devices=devices).device_type == "nvidia.h100-sxm"


def test_a_user_op_with_declared_work() -> None:
    declare_work("mylib.smooth", lambda shapes, itemsize: Work(100.0 * shapes[0][0], 0.0))
    result = choose_device("mylib.smooth", S((10**9,), "float32"), devices=["nvidia.h100-sxm"])
    assert result.op == "mylib.smooth"
    prediction = result.chosen.prediction
    assert prediction is not None
    assert prediction.compute_s == pytest.approx(100e9 / 67e12)


def test_errors() -> None:
    with pytest.raises(ModelError, match=r"choose_device\(\): unknown operation 'mylib.nothing'"):
        choose_device("mylib.nothing", S((3,)), devices=["nvidia.h100-sxm"])
    with pytest.raises(ModelError, match=r"'einsum' declares no work"):
        choose_device("einsum", S((3, 3)), devices=["nvidia.h100-sxm"])
    with pytest.raises(TypeError, match=r"give the array arguments"):
        choose_device("matmul", devices=["nvidia.h100-sxm"])
    with pytest.raises(TypeError, match=r"choose_device\(\): argument 0 must be an array"):
        choose_device("matmul", "a", "b", devices=["nvidia.h100-sxm"])
    with pytest.raises(TypeError, match=r"policy must be a prism_core\.ExecutionPolicy"):
        choose_device("add", S((3,)), S((3,)), devices=["nvidia.h100-sxm"], policy="speed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"choose_device\(\): devices is empty"):
        choose_device("add", S((3,)), S((3,)), devices=[])


def test_devices_the_model_cannot_predict_are_listed() -> None:
    specs = (S((64, 64), "float64"), S((64, 64), "float64"))
    result = choose_device("matmul", *specs, devices=["nvidia.h100-sxm", "nvidia.l4"])
    assert [r.device_type for r in result.rows] == ["nvidia.h100-sxm"]
    assert result.excluded[0][0] == "nvidia.l4 x1"
    assert "not predicted: nvidia.l4 x1: nvidia.l4 has no peak for fp64" in str(result)
    with pytest.raises(ModelError, match=r"no device could be predicted for matmul"):
        choose_device("matmul", *specs, devices=["nvidia.l4"])


def test_a_calibrated_model() -> None:
    model = PerformanceModel({"nvidia.l4": {"gflops": {"fp64": 490.0}}}, host_device_type=None)
    specs = (S((64, 64), "float64"), S((64, 64), "float64"))
    result = choose_device("matmul", *specs, devices=["nvidia.l4"], model=model)
    prediction = result.chosen.prediction
    assert prediction is not None and prediction.figures is not None
    assert prediction.figures.sources["peak_tflops.fp64"] == "calibrated"


def test_the_result_prints_and_serialises() -> None:
    result = matmul_plan(ExecutionPolicy("cost_efficiency", max_latency_ms=9))
    text = str(result)
    lines = text.splitlines()
    assert lines[0].startswith(
        "device for matmul((4096, 4096), (4096, 4096)) in fp32, policy cost_efficiency, "
        "max_latency_ms=9: nvidia.h100-sxm x1 (modelled, "
    )
    assert lines[1].split() == [
        "device", "count", "time", "throughput", "cost/run", "energy", "bound", "source",
    ]  # fmt: skip
    assert lines[2].startswith("*  nvidia.h100-sxm")
    assert "aws.inferentia2 x1 takes" in text  # why the cheaper ones were not chosen
    data = json.loads(json.dumps(result.as_dict()))
    assert data["chosen"]["device_type"] == "nvidia.h100-sxm"
    assert data["policy"]["priority"] == "cost_efficiency"
    assert data["rows"][1]["misses"][0].startswith("aws.inferentia2 x1 takes")
    assert DeviceChoice.__module__ == "prism_core.tuning"
