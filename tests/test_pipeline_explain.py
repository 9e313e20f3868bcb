"""Planning a pipeline without running it (prism_core/_pipeline/pipeline.py: ``explain``).

The plan traces the pipeline with shapes and dtypes; every op call gets dispatch's decision
and the performance model's predicted time.  Simulated devices come from their descriptions
(``simulate=True``) or from the test plugins (tests/loopback_plugin.py drives any device;
tests/simulated_gpu_plugin.py reports a simulated H100), each through a real entry point.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core import ArraySpec

_names = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}_{next(_names)}"


def test_a_plan_follows_shapes_through_the_stages_without_running_anything() -> None:
    name = unique("plan_op")
    ran: list[str] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def scale(x: Any) -> Any:
        return x * 2.0  # the reference: planning may run it on zero-stride views

    @prism.extending.kernel(scale, priority=5, name=f"{name}.fast")
    def fast(x: Any) -> Any:
        ran.append("fast")
        return x * 2.0

    @prism.pipeline
    def f(a: Any, b: Any) -> Any:
        with prism.stage("first", preferred_backend="numpy"):
            c = prism.matmul(a, b)
        d = prism.transpose(c)
        with prism.stage("second"):
            return scale(prism.sum(d, axis=0))

    plan = prism.explain(f, ArraySpec((32, 16), "float32"), np.ones((16, 8), np.float32))
    again = f.explain(ArraySpec((32, 16), "float32"), np.ones((16, 8), np.float32))
    assert [c.describe() for s in again.stages for c in s.calls] == [
        c.describe() for s in plan.stages for c in s.calls
    ]
    assert ran == []  # no variant ran
    first, second = plan.stages
    (matmul,) = first.calls
    assert matmul.signature == ("float32[32x16]", "float32[16x8]")
    assert matmul.result == "float32[32x8]"
    assert matmul.decision.chosen == "numpy.matmul" and first.placement == "backend numpy"
    assert matmul.seconds is not None and matmul.seconds > 0
    assert matmul.predicted.startswith("modelled")
    (transpose,) = plan.calls  # outside any stage
    assert transpose.result == "float32[8x32]"
    summed, scaled = second.calls
    assert summed.result == "float32[32]"
    assert scaled.op == name and scaled.decision.chosen == f"{name}.fast"
    assert scaled.result == "float32[32]"
    assert scaled.result_by.startswith("NumPy reference on zero-stride views")
    assert scaled.seconds is None and "declares no work" in scaled.predicted
    assert plan.stopped is None and plan.not_reached == ()
    json.dumps(plan.as_dict())
    text = str(plan)
    assert "plan of pipeline" in text and "matmul(float32[32x16], float32[16x8])" in text


@pytest.mark.usefixtures("loopback")
def test_a_simulated_stage_is_planned_on_the_device_it_simulates() -> None:
    """Simulated H100 SXM: the loopback test backend drives any device, so its tensor-core
    variant is chosen there and the model predicts its time from the H100's description."""

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("gpu", device="nvidia.h100-sxm", simulate=True):
            return prism.matmul(a, a)

    plan = f.explain(ArraySpec((4096, 4096), "float16"))
    (s,) = plan.stages
    assert s.simulated and s.placement == "device nvidia.h100-sxm (simulated)"
    (call,) = s.calls
    assert call.decision.chosen == "loopback.tensor_core_matmul"
    assert call.decision.chosen_device == "nvidia.h100-sxm" and call.decision.simulated
    assert "simulated: executes numpy.matmul" in call.runs_on
    model = prism.tuning.PerformanceModel()
    expected = model.predict("matmul", [(4096, 4096)] * 2, "float16", "nvidia.h100-sxm")
    assert call.seconds == pytest.approx(expected.seconds)


def test_the_trace_stops_where_a_shape_cannot_be_known_and_says_why() -> None:
    name = unique("opaque")

    @prism.extending.operation(name=name, array_args=(0,))
    def opaque(x: Any) -> Any:
        return x[: len(x) // 2]

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("one"):
            b = opaque(a)
        with prism.stage("two"):
            return prism.add(b, b)

    plan = f.explain(ArraySpec((1_000_000,)))
    assert plan.stopped is not None
    assert plan.stopped.startswith(f"{name}: the shape of its result is not known")
    assert "over the 131,072 that planning runs the NumPy reference on" in plan.stopped
    assert plan.not_reached == ("two",)
    (call,) = plan.stage("one").calls
    assert call.result == "unknown" and call.decision.chosen == f"{name}.reference"
    # Small enough, the reference runs on zero-stride views and the trace goes on.
    small = f.explain(ArraySpec((1000,)))
    assert small.stopped is None
    assert small.stage("two").calls[0].signature == ("float64[500]", "float64[500]")


def test_large_shapes_are_worked_out_on_torchs_meta_device() -> None:
    pytest.importorskip("torch", reason="the meta device is torch's")
    ps = prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("torch",)))
    try:
        if ps.records.get("torch") is None or ps.records["torch"].status != "loaded":
            pytest.skip("prism-plugin-torch is not installed in this environment")

        @prism.pipeline
        def f(a: Any) -> Any:
            with prism.stage("big"):
                _, s, _ = prism.linalg.svd(prism.matmul(a, a))
                return prism.fft.fft(s)

        plan = f.explain(ArraySpec((20000, 20000), "float32"))  # 1.6 GB each: never made
        assert plan.stopped is None
        matmul, svd, fft = plan.stage("big").calls
        assert matmul.result == "float32[20000x20000]"
        assert matmul.result_by.startswith("torch meta device")
        assert svd.result == "(float32[20000x20000], float32[20000], float32[20000x20000])"
        assert fft.result == "complex64[20000]"
    finally:
        prism.extending.reload_plugins()


@pytest.mark.usefixtures("simgpu")
def test_a_plan_shows_the_lenient_fallback_and_where_arrays_are_at_run_time() -> None:
    """Simulated H100 (simgpu has matmul only): `add` in a stage preferring the GPU runs in
    automatic dispatch, as a run would, and the plan says that its arguments are the GPU
    backend's arrays at run time."""

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("gpu", preferred_backend="nvidia"):
            b = prism.matmul(a, a)
            return prism.add(b, b)

    plan = f.explain(ArraySpec((256, 256)))
    matmul, add = plan.stage("gpu").calls
    assert matmul.decision.chosen == "simgpu.matmul"
    assert matmul.transfer_seconds is not None and matmul.transfer_seconds > 0
    assert add.decision.chosen == "numpy.add"
    assert any("runs in automatic dispatch" in n for n in add.notes)
    assert any("argument 0 is simgpu's" in n for n in add.notes)


def test_what_the_function_does_with_data_stops_the_trace_at_its_line() -> None:
    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("s"):
            b = prism.add(a, a)
            return float(b.sum())  # needs the data

    plan = f.explain(ArraySpec((3,)))
    assert plan.stopped is not None
    assert plan.stopped.startswith("the function raised AttributeError")
    assert "test_pipeline_explain.py" in plan.stopped and "b.sum()" in plan.stopped
    assert [c.op for c in plan.stage("s").calls] == ["add"]


def test_an_async_pipeline_is_planned_too() -> None:
    @prism.pipeline
    async def f(a: Any) -> Any:
        with prism.stage("s"):
            return prism.add(a, a)

    plan = prism.explain(f, ArraySpec((3,)))
    assert plan.stopped is None and [c.op for c in plan.stage("s").calls] == ["add"]

    @prism.pipeline
    async def waits(a: Any) -> Any:
        with prism.stage("s"):
            await asyncio.sleep(0.01)
            return prism.add(a, a)

    # Planned on an event loop of its own: the function waits as it would, then goes on.
    assert [c.op for c in waits.explain(ArraySpec((3,))).stage("s").calls] == ["add"]

    async def from_async_code() -> prism.pipelines.PipelinePlan:
        return waits.explain(ArraySpec((3,)))  # this thread's loop is busy running us

    stopped = asyncio.run(from_async_code()).stopped or ""
    assert "waited for something outside Prism" in stopped


def test_planning_leaves_no_plan_keyed_by_its_own_scopes() -> None:
    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("s", preferred_backend="numpy"):
            return prism.add(a, a)

    op = prism.get_op("add")
    f.explain(np.ones(3))
    scopes = {k[0] for k in op._plans}
    assert all(s is None or type(s).__name__ == "Scope" for s in scopes)
    traced = [k for k in op._plans if any(getattr(t, "__name__", "") == "_Traced" for t in k)]
    assert traced == []
    # And the pipeline runs afterwards as it would have.
    np.testing.assert_array_equal(f(np.ones(3)), 2 * np.ones(3))
