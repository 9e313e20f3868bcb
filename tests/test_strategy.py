"""ExecutionStrategy and Executor (prism_core/_pipeline/strategy.py).

The seed's mixed-hardware example runs as written there, with only Prism's names put in (the
module, and the device types the library has: ``aws.graviton3`` for "aws.graviton",
``nvidia.h100-sxm`` for "nvidia.h100", ``aws.inferentia2`` for "aws.inferentia").  None of those
devices is here, so they are simulated: their stages and parts run on the NumPy reference, and
the report and the split records say so.  The parts of the real CPU backends (NumPy, torch
through its installed plugin) run in real threads.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core import PrismWarning
from prism_core.pipelines import ExecutionStrategy, Executor

TORCH_PLUGIN = importlib.util.find_spec("prism_plugin_torch") is not None and any(
    ep.name == "torch" for ep in importlib.metadata.entry_points(group="prism.plugins")
)


@pytest.fixture
def torch_backend() -> Iterator[None]:
    pytest.importorskip("torch", reason="torch is not installed: no second CPU backend")
    if not TORCH_PLUGIN:
        pytest.skip("the torch plugin is not installed (pip install -e plugins/prism-plugin-torch)")
    prism.extending.reload_plugins(prism.extending.PluginSettings(strict=True, allow=("torch",)))
    yield
    prism.extending.reload_plugins()


PROFILE = np.random.default_rng(1).standard_normal((33, 8))
ran: list[str] = []


@prism.pipeline
def genomic_pipeline(input_data: Any) -> Any:
    ran.append("started")
    with prism.stage("data_loading"):
        reads = prism.subtract(input_data, prism.mean(input_data, axis=1, keepdims=True))
    with prism.stage("sequence_alignment"):
        spectra = prism.abs(prism.fft.rfft(reads))  # one spectrum per read: splits by reads
        alignments = prism.matmul(spectra, PROFILE)
    with prism.stage("variant_calling"):
        return prism.max(alignments, axis=1)


def input_reads(n: int = 40) -> np.ndarray:
    return np.random.default_rng(0).standard_normal((n, 64))


# -- the seed's example ------------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_the_seeds_split_example_runs_with_prisms_names() -> None:
    sm = prism.pipelines  # the seed's `sm`: ExecutionStrategy and Executor live there
    input_data = input_reads()
    expected = genomic_pipeline(input_data)

    # Define mixed-hardware execution strategy
    strategy = sm.ExecutionStrategy()

    # Assign work based on computation characteristics
    strategy.assign(operation="data_loading", target="aws.graviton3")

    strategy.assign(
        operation="sequence_alignment",
        target=["nvidia.h100-sxm", "aws.trainium"],
        distribution="data_parallel",
        split_ratio=[0.3, 0.7],  # 30% to H100, 70% to Trainium
    )

    strategy.assign(operation="variant_calling", target="aws.inferentia2")

    # Execute with mixed-hardware strategy
    executor = sm.Executor(strategy)
    with pytest.warns(PrismWarning, match="simulated .*aws.graviton3, nvidia.h100-sxm") as seen:
        result = executor.run(genomic_pipeline, input_data)
    assert {w.filename for w in seen} == {__file__}  # the user's line, not contextlib's

    np.testing.assert_allclose(result.result, expected, rtol=1e-10)
    report = result.report
    loading = report.stage("data_loading")
    assert loading.device == "aws.graviton3" and loading.simulated
    assert loading.why.startswith("ExecutionStrategy: stage 'data_loading' on aws.graviton3")
    assert report.stage("variant_calling").device == "aws.inferentia2"
    alignment = report.stage("sequence_alignment")
    assert "split" in alignment.placement
    assert [s.op for s in alignment.splits] == ["fft.rfft", "abs", "matmul"]
    for record in alignment.splits:
        h100, trainium = record.parts
        assert (h100.size, trainium.size) == (12, 28)  # 30 % and 70 % of 40 reads
        assert h100.device == "nvidia.h100-sxm" and trainium.device == "aws.trainium"
        assert h100.simulated and trainium.simulated and h100.backend == "numpy"
        assert h100.thread != trainium.thread
    assert "split: fft.rfft" in report.describe()


def test_absent_devices_are_an_error_before_anything_runs_when_asked() -> None:
    strategy = ExecutionStrategy()
    strategy.assign("data_loading", "numpy")
    strategy.assign("sequence_alignment", ["numpy", "nvidia.h100-sxm"], "data_parallel")
    ran.clear()
    with pytest.raises(prism.DeviceNotPresentError, match=r"'nvidia\.h100-sxm' is not present"):
        Executor(strategy, simulate=False).run(genomic_pipeline, input_reads())
    assert ran == []


# -- assignments -------------------------------------------------------------------------------


def test_assignments_are_checked_when_made() -> None:
    s = ExecutionStrategy()
    with pytest.raises(ValueError, match=r"'data_paralel' is not a distribution .*'data_parallel'"):
        s.assign("align", ["numpy", "numpy"], distribution="data_paralel")
    with pytest.raises(ValueError, match=r"2 targets need distribution='data_parallel'"):
        s.assign("align", ["numpy", "numpy"])
    with pytest.raises(ValueError, match=r"split_ratio \[1, 2, 3\] has 3 entries for 2 targets"):
        s.assign("align", ["numpy", "numpy"], "data_parallel", split_ratio=[1, 2, 3])
    with pytest.raises(ValueError, match="one is given"):
        s.assign("align", ["numpy"], "data_parallel")
    with pytest.raises(ValueError, match=r"split_ratio=\[1\] needs distribution='data_parallel'"):
        s.assign("align", "numpy", split_ratio=[1])
    with pytest.raises(ValueError, match=r"target\[1\]: 'nvidia.h100' is neither"):
        s.assign("align", ["numpy", "nvidia.h100"], "data_parallel")
    with pytest.raises(ValueError, match="'cumulative_sum' has no split rule"):
        s.assign("cumsum", ["numpy", "numpy"], "data_parallel")
    with pytest.raises(TypeError, match="operation must be a stage name"):
        s.assign("", "numpy")
    assert len(s) == 0  # nothing half-assigned
    first = s.assign("align", ["numpy", "numpy"], "data_parallel", split_ratio=[1, 3])
    assert first.kind == "stage" and first.split_ratio == (0.25, 0.75)
    with pytest.raises(ValueError, match=r"stage 'align' is assigned already \(stage 'align'"):
        s.assign("align", "numpy")
    op = s.assign("matrix_multiply", "numpy")  # an alias: the op
    assert op.kind == "op" and op.operation == "matmul"
    with pytest.raises(ValueError, match="op 'matmul' is assigned already"):
        s.assign("matmul", "numpy")
    assert "stage 'align' data_parallel across numpy, numpy (0.25/0.75" in s.describe()
    assert s.as_dict()["assignments"][1]["operation"] == "matmul"


# -- running -----------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_op_assignments_apply_wherever_the_op_is_called(torch_backend: None) -> None:
    strategy = ExecutionStrategy()
    strategy.assign("matmul", ["numpy", "torch"], "data_parallel", split_ratio="auto")
    strategy.assign("exp", "torch")

    def compute(a: np.ndarray, b: np.ndarray) -> Any:
        return prism.exp(prism.matmul(a, b) / 100), prism.sqrt(np.abs(a))

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((48, 16)), rng.standard_normal((16, 8))
    with prism.pipelines.split_recording() as records:
        got, other = Executor(strategy).run(compute, a, b)
    np.testing.assert_allclose(got, np.exp(a @ b / 100))
    assert isinstance(got, np.ndarray) and isinstance(other, np.ndarray)
    matmul, exp = records
    # Both backends run on this host's CPU, where parts would take turns: "auto" declines.
    assert matmul.op == "matmul" and matmul.decision.startswith("declined:")
    assert {p.backend for p in matmul.parts} == {"numpy", "torch"}
    assert exp.op == "exp" and exp.parts[0].backend == "torch" and exp.axis is None
    # Outside the run, nothing is assigned any more.
    with prism.pipelines.split_recording() as after:
        prism.matmul(a, b)
    assert after == []


@pytest.mark.timeout(60)
def test_stage_assignments_place_and_split_stages(torch_backend: None) -> None:
    strategy = ExecutionStrategy()
    strategy.assign("data_loading", "torch")
    strategy.assign("sequence_alignment", ["numpy", "torch"], "data_parallel")
    data = input_reads()
    run = Executor(strategy).run(genomic_pipeline, data)
    np.testing.assert_allclose(run.result, genomic_pipeline(data), rtol=1e-10)
    loading = run.report.stage("data_loading")
    assert loading.backend == "torch" and "ExecutionStrategy" in loading.why
    alignment = run.report.stage("sequence_alignment")
    assert len(alignment.splits) == 3
    assert all({p.backend for p in s.parts} == {"numpy", "torch"} for s in alignment.splits)
    assert run.report.stage("variant_calling").splits == ()  # not assigned: not split


def test_an_assignment_that_applies_to_nothing_is_said() -> None:
    strategy = ExecutionStrategy()
    strategy.assign("sequence_alignmnet", ["numpy", "numpy"], "data_parallel")
    with pytest.warns(PrismWarning, match=r"no stage 'sequence_alignmnet' ran .*did you mean"):
        Executor(strategy).run(genomic_pipeline, input_reads())


def test_the_executor_checks_its_arguments() -> None:
    with pytest.raises(
        TypeError, match=r"strategy must be a prism_core\.pipelines\.ExecutionStrategy"
    ):
        Executor("aws.graviton3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="simulate must be None, True or False"):
        Executor(ExecutionStrategy(), simulate="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="timeout must be a number of seconds > 0"):
        Executor(ExecutionStrategy(), timeout=0)
    with pytest.raises(TypeError, match="fn must be callable"):
        Executor(ExecutionStrategy()).run(3)  # type: ignore[arg-type]


def test_async_pipelines_run_with_run_async() -> None:
    @prism.pipeline
    async def scaled(x: Any) -> Any:
        with prism.stage("scale"):
            return prism.multiply(x, 2.0)

    strategy = ExecutionStrategy()
    strategy.assign("scale", ["numpy", "numpy"], "data_parallel", split_ratio=[1, 1])
    executor = Executor(strategy)
    with pytest.raises(TypeError, match=r"use `await executor\.run_async"):
        executor.run(scaled, np.ones(4))
    run = asyncio.run(executor.run_async(scaled, np.arange(6.0)))
    np.testing.assert_array_equal(run.result, 2 * np.arange(6.0))
    (record,) = run.report.stage("scale").splits
    assert [p.size for p in record.parts] == [3, 3]


def test_a_strategy_can_be_planned_without_running() -> None:
    strategy = ExecutionStrategy()
    strategy.assign("data_loading", "aws.graviton3")
    strategy.assign("sequence_alignment", ["numpy", "numpy"], "data_parallel")
    ran.clear()
    plan = Executor(strategy, simulate=True).explain(genomic_pipeline, input_reads())
    assert ran == ["started"]  # traced with shapes only: the body runs, no op computes
    loading = plan.stage("data_loading")
    assert loading.device == "aws.graviton3" and loading.simulated
    assert "split" in plan.stage("sequence_alignment").placement
    with pytest.raises(TypeError, match="only a pipeline can be planned"):
        Executor(strategy).explain(lambda x: x, 1)  # type: ignore[arg-type]
