"""Pipelines and stages (prism_core/_pipeline/pipeline.py, stage.py): where stages run and
why, the checks before the first stage, fallbacks, reports, threads and tasks.

A GPU cannot be had here: the ``simgpu`` test plugin (tests/simulated_gpu_plugin.py, through a
real entry point) reports a simulated ``nvidia.h100-pcie`` and a backend for it whose arrays
are a type of their own, so that stages placed on "the GPU" move data as they would to a real
one.  The tests that use it say so.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import threading
import warnings
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core._pipeline.stage import current_stage, stage_overrides

_names = itertools.count()


def unique(prefix: str) -> str:
    """Ops are process-wide: each test declares its own names."""
    return f"{prefix}_{next(_names)}"


def host_type() -> str:
    return prism.hardware.present_devices().devices[0].description.device_type


# -- where a stage runs ------------------------------------------------------------------------


def test_a_pipeline_returns_the_result_and_run_gives_the_report() -> None:
    @prism.pipeline
    def twice(a: Any) -> Any:
        with prism.stage("square"):
            b = prism.matmul(a, a)
        with prism.stage("double", preferred_backend="numpy"):
            return prism.add(b, b)

    a = np.arange(9.0).reshape(3, 3)
    np.testing.assert_array_equal(twice(a), 2 * (a @ a))
    run = twice.run(a)
    result, report = run  # a PipelineRun unpacks
    np.testing.assert_array_equal(result, 2 * (a @ a))
    assert [s.name for s in report.stages] == ["square", "double"]
    square, double = report.stages
    assert square.placement == "automatic" and square.backend is None
    assert "no placement named" in square.why
    assert double.placement == "backend numpy" and double.backend == "numpy"
    assert double.why == "preferred_backend 'numpy': available"
    assert report.bytes_moved == 0  # NumPy arrays on NumPy: nothing moves
    assert all(s.seconds > 0 and s.runs == 1 for s in report.stages)
    assert report.checked[0] == "2 stages checked before the first ran: square, double"
    assert twice.stages == ("square", "double")
    json.dumps(report.as_dict())  # JSON-able
    text = report.describe()
    assert "square" in text and "backend numpy" in text and str(report) == text


def test_preferences_are_taken_in_order_and_each_one_passed_over_says_why() -> None:
    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("s", preferred_backend=["graviton", "inferentia", "cpu"]):
            return prism.add(a, a)

    report = f.run(np.ones(3)).report
    (s,) = report.stages
    assert s.device == host_type() and s.placement == f"device {host_type()}"
    assert s.why == f"preferred_backend 'cpu': {host_type()} is present"
    assert len(s.skipped) == 2
    assert s.skipped[0].startswith("'graviton': no present device is a 'graviton' device")
    assert s.skipped[1].startswith("'inferentia': no present device")


def test_no_preference_available_runs_automatic_in_auto_mode_and_fails_in_strict() -> None:
    @prism.pipeline
    def lenient(a: Any) -> Any:
        with prism.stage("calling", preferred_backend=["inferentia", "nvidia"]):
            return prism.add(a, a)

    np.testing.assert_array_equal(lenient(np.ones(2)), 2 * np.ones(2))
    (s,) = lenient.run(np.ones(2)).report.stages
    assert s.placement == "automatic"
    assert s.why == "none of the preferences is available here: automatic dispatch"
    assert [x.split(":")[0] for x in s.skipped] == ["'inferentia'", "'nvidia'"]

    ran = []

    @prism.pipeline
    def strict(a: Any) -> Any:
        ran.append("first")
        with prism.stage("calling", preferred_backend=["nvidia"], dispatch="strict"):
            return prism.add(a, a)

    with pytest.raises(
        prism.pipelines.PipelineError, match="dispatch='strict' and none of its"
    ) as info:
        strict(np.ones(2))
    assert "'nvidia': no present device is a 'nvidia' device" in str(info.value)
    assert ran == []  # found in the source: nothing ran


def test_a_stage_pinned_to_an_absent_device_fails_before_any_stage_runs() -> None:
    ran = []

    @prism.pipeline
    def genomic(a: Any) -> Any:
        with prism.stage("prepare"):
            ran.append("prepare")
            b = prism.add(a, a)
        with prism.stage("align", device="nvidia.h100-sxm"):
            ran.append("align")
            return prism.matmul(b, b)

    with pytest.raises(prism.DeviceNotPresentError) as info:
        genomic(np.ones((2, 2)))
    message = str(info.value)
    assert "stage 'align' is pinned to device 'nvidia.h100-sxm', which is not present" in message
    assert "simulate=True" in message
    assert ran == []
    notes = getattr(info.value, "__notes__", [])
    assert any("checked before any stage ran" in n and "line" in n for n in notes)
    # Explaining it says the same: the pipeline cannot run here as written.
    with pytest.raises(prism.DeviceNotPresentError):
        prism.explain(genomic, prism.ArraySpec((2, 2)))


def test_a_pinned_device_computed_at_run_time_is_checked_when_reached() -> None:
    ran = []
    where = "nvidia.h100-sxm"

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("first"):
            ran.append("first")
        with prism.stage("second", device=where):
            ran.append("second")
        return a

    with pytest.raises(prism.DeviceNotPresentError, match="stage 'second' is pinned"):
        f(1)
    assert ran == ["first"]  # the source does not say which device: checked when reached
    checked = f.check()
    assert checked[0] == "1 stage checked before the first ran: first"
    assert any("computed at run time" in c for c in checked)


def test_a_simulated_pinned_stage_runs_on_the_reference_and_says_so() -> None:
    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("gpu", device="nvidia.h100-sxm", simulate=True) as s:
            assert s.scope is not None and s.scope.simulated
            return prism.matmul(a, a)

    a = np.eye(3)
    run = f.run(a)
    np.testing.assert_array_equal(run.result, a)
    (s,) = run.report.stages
    assert s.simulated and s.device == "nvidia.h100-sxm"
    assert s.placement == "device nvidia.h100-sxm (simulated)"


def test_with_a_pinned_device_preferences_are_backends_for_it() -> None:
    host = host_type()
    with prism.stage("s", device=host, preferred_backend=["numpy"]) as s:
        assert s.placement.backend == "numpy" and s.placement.device == host
    assert s.report is not None and s.report.placement == f"numpy on {host}"
    with pytest.raises(ValueError, match="'nvidia' is not an installed backend"):
        prism.stage("s", device=host, preferred_backend=["nvidia"])


def test_bad_arguments_name_what_is_wrong_and_what_is_accepted() -> None:
    with pytest.raises(ValueError, match=r"'grvaiton' is neither.*did you mean 'graviton'"):
        prism.stage("s", preferred_backend="grvaiton")
    with pytest.raises(ValueError, match=r"dispatch='automatic' is not a mode.*'auto' or 'strict'"):
        prism.stage("s", dispatch="automatic")
    with pytest.raises(TypeError, match="name must be a non-empty string"):
        prism.stage("")
    with pytest.raises(TypeError, match="preferred_backend must be a name or a list"):
        prism.stage("s", preferred_backend=3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"preferred_backend=\[\] names nothing"):
        prism.stage("s", preferred_backend=[])
    with pytest.raises(ValueError, match="simulate=True simulates the pinned device"):
        prism.stage("s", simulate=True)
    with pytest.raises(prism.hardware.UnknownDeviceError):
        prism.stage("s", device="nvidia.h100-sxn")
    with pytest.raises(TypeError, match="decorates a function"):
        prism.pipeline(3)  # type: ignore[call-overload]


def test_an_unknown_preference_in_the_source_fails_before_any_stage_runs() -> None:
    ran = []

    @prism.pipeline
    def f() -> None:
        with prism.stage("a"):
            ran.append("a")
        with prism.stage("b", preferred_backend="tpu-v9"):
            ran.append("b")

    with pytest.raises(ValueError, match="'tpu-v9' is neither an installed backend"):
        f()
    assert ran == []


def test_stages_do_not_nest() -> None:
    @prism.pipeline
    def f() -> None:
        with prism.stage("outer"), prism.stage("inner"):
            pass

    with pytest.raises(
        prism.pipelines.PipelineError, match="'inner' was entered inside stage 'outer'"
    ):
        f()
    assert current_stage() is None  # the outer stage ended with the error


def test_a_stage_entered_again_adds_to_its_report() -> None:
    @prism.pipeline
    def loop(a: Any) -> Any:
        for _ in range(3):
            with prism.stage("step", preferred_backend="numpy"):
                a = prism.add(a, a)
        return a

    run = loop.run(np.ones(2))
    np.testing.assert_array_equal(run.result, 8 * np.ones(2))
    (s,) = run.report.stages
    assert s.runs == 3


def test_a_stage_decorates_a_function_and_works_outside_pipelines() -> None:
    @prism.stage("helper", preferred_backend="numpy")
    def helper(a: Any) -> Any:
        scope = prism.current_scope()
        assert scope.backend == "numpy"
        return prism.add(a, a)

    np.testing.assert_array_equal(helper(np.ones(2)), 2 * np.ones(2))
    assert prism.current_scope().backend is None

    @prism.pipeline
    def f(a: Any) -> Any:
        return helper(a)

    assert [s.name for s in f.run(np.ones(2)).report.stages] == ["helper"]
    # A stage outside any pipeline keeps its report on the object `with` gives.
    with prism.stage("alone") as s:
        prism.add(np.ones(2), np.ones(2))
    assert s.report is not None and s.report.name == "alone"


def test_a_pipeline_method_binds_to_its_instance() -> None:
    class Lab:
        def __init__(self, factor: float) -> None:
            self.factor = factor

        @prism.pipeline
        def scaled(self, a: Any) -> Any:
            with prism.stage("scale", preferred_backend="numpy"):
                return prism.multiply(a, self.factor)

    run = Lab(3.0).scaled.run(np.ones(2))
    np.testing.assert_array_equal(run.result, [3.0, 3.0])
    assert run.report.stage("scale").backend == "numpy"
    np.testing.assert_array_equal(Lab(2.0).scaled(np.ones(2)), [2.0, 2.0])
    assert Lab.scaled.stages == ("scale",)


def test_an_error_in_a_stage_reaches_the_caller_with_the_report() -> None:
    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("ok"):
            b = prism.add(a, a)
        with prism.stage("bad"):
            return prism.matmul(b, np.ones((5, 5)))  # a shape mismatch: the caller's error

    with pytest.raises(ValueError, match="matmul") as info:
        f(np.ones((2, 2)))
    report = info.value.report  # type: ignore[attr-defined]
    assert [s.name for s in report.stages] == ["ok", "bad"]
    assert report.stage("bad").error.startswith("ValueError")
    assert report.error.startswith("ValueError")
    assert any("raised in stage 'bad'" in n for n in getattr(info.value, "__notes__", []))
    with pytest.raises(KeyError, match=r"no stage 'bda'.*did you mean 'bad'"):
        report.stage("bda")


# -- fallbacks ---------------------------------------------------------------------------------


def _op_with_a_failing_variant() -> tuple[Any, list[str]]:
    name = unique("pipe_op")
    ran: list[str] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        ran.append("reference")
        return x + 1

    @prism.extending.kernel(op, priority=5, name=f"{name}.broken")
    def broken(x: Any) -> Any:
        ran.append("broken")
        raise RuntimeError("device lost")

    return op, ran


def test_an_automatic_stage_falls_back_like_an_op_and_reports_it() -> None:
    op, ran = _op_with_a_failing_variant()

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("work"):
            return op(a)

    with pytest.warns(prism.FallbackWarning, match="broken failed"):
        run = f.run(np.zeros(2))
    np.testing.assert_array_equal(run.result, np.ones(2))
    (fb,) = run.report.stage("work").fallbacks
    assert fb.failed == f"{op.name}.broken" and fb.instead == f"{op.name}.reference"
    assert "RuntimeError: device lost" in fb.error
    # Later runs use the plan without the failing variant: nothing fails, nothing to report.
    assert f.run(np.zeros(2)).report.stage("work").fallbacks == ()
    assert ran == ["broken", "reference", "reference"]


def test_a_preferred_backend_whose_variant_fails_falls_back_in_auto_mode() -> None:
    op, _ = _op_with_a_failing_variant()

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("work", preferred_backend="numpy"):
            return op(a)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = f.run(np.zeros(2))
    np.testing.assert_array_equal(run.result, np.ones(2))
    s = run.report.stage("work")
    assert s.placement == "backend numpy"
    placement_fallback = [x for x in s.fallbacks if x.failed is None]
    assert placement_fallback and placement_fallback[0].instead == "automatic dispatch"
    assert "not falling back because the backend 'numpy' was named" in placement_fallback[0].error
    assert any(issubclass(w.category, prism.FallbackWarning) for w in caught)


def test_a_strict_stage_does_not_fall_back() -> None:
    op, ran = _op_with_a_failing_variant()

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("work", dispatch="strict"):
            return op(a)

    with pytest.raises(prism.BackendError, match="strict mode is on") as info:
        f(np.zeros(2))
    assert ran == ["broken"]
    assert info.value.report.stage("work").error.startswith("BackendError")  # type: ignore[attr-defined]


@pytest.mark.usefixtures("simgpu")
def test_a_preferred_gpu_without_a_variant_for_a_call_runs_it_automatic() -> None:
    """Simulated H100 (tests/simulated_gpu_plugin.py): simgpu has matmul only, so `add` in a
    stage that prefers the GPU cannot run there; in automatic mode it runs on the host."""

    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("gpu", preferred_backend="nvidia"):
            b = prism.matmul(a, a)
            return prism.add(b, b)

    a = np.eye(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "no variant there" is reported, not warned
        run = f.run(a)
    # Under a named device results are its backend's arrays (simgpu's Wrapped: NumPy inside).
    assert type(run.result).__name__ == "Wrapped"
    np.testing.assert_array_equal(run.result.data, 2 * a)
    s = run.report.stage("gpu")
    assert s.device == "nvidia.h100-pcie"
    (fb,) = s.fallbacks
    assert fb.op == "add" and fb.failed is None and fb.instead == "automatic dispatch"
    assert "no variant of add can run" in fb.error

    @prism.pipeline
    def strict(a: Any) -> Any:
        with prism.stage("gpu", preferred_backend="nvidia", dispatch="strict"):
            return prism.add(a, a)

    with pytest.raises(prism.DispatchError, match="no variant of add can run"):
        strict(a)


def test_a_scope_the_user_enters_inside_a_lenient_stage_keeps_its_own_rules() -> None:
    op, _ = _op_with_a_failing_variant()
    with prism.stage("s", preferred_backend="numpy") as s:
        with prism.use_backend("numpy"), pytest.raises(prism.BackendError):
            op(np.zeros(2))
    assert s.report is not None and s.report.fallbacks == ()


# -- stage_overrides ---------------------------------------------------------------------------


def test_stage_overrides_place_the_named_stages_with_their_note() -> None:
    @prism.pipeline
    def f(a: Any) -> Any:
        with prism.stage("prepare", preferred_backend="numpy"):
            b = prism.add(a, a)
        with prism.stage("align", device="nvidia.h100-sxm", simulate=True):
            return prism.matmul(b, b)

    host = host_type()
    overrides = {
        "align": {"device": host, "note": "assigned by ExecutionStrategy"},
        "prepare": {"prefer": "reference"},
    }
    with stage_overrides(overrides):
        report = f.run(np.eye(2)).report
    align = report.stage("align")
    assert align.device == host and not align.simulated
    assert align.why == "assigned by ExecutionStrategy"
    prepare = report.stage("prepare")
    assert prepare.placement == "automatic" and prepare.why == "assigned by stage_overrides()"
    # Outside the block, the stages' own placements again.
    assert f.run(np.eye(2)).report.stage("align").simulated


def test_an_override_makes_a_pinned_absent_device_no_error() -> None:
    @prism.pipeline
    def f() -> None:
        with prism.stage("align", device="nvidia.h100-sxm"):
            pass

    with pytest.raises(prism.DeviceNotPresentError):
        f()
    with stage_overrides({"align": {"backend": "numpy"}}):
        assert f.run().report.stage("align").backend == "numpy"


def test_stage_overrides_are_checked_when_given() -> None:
    with pytest.raises(ValueError, match=r"unknown key 'devcie' \(did you mean 'device'\?\)"):
        with stage_overrides({"a": {"devcie": "cpu"}}):
            pass
    with pytest.raises(TypeError, match="must be a mapping of scope changes"):
        with stage_overrides({"a": "numpy"}):  # type: ignore[dict-item]
            pass
    with pytest.raises(prism.DeviceNotPresentError):
        with stage_overrides({"a": {"device": "nvidia.h100-sxm"}}):
            pass
    with pytest.raises(prism.extending.PluginError, match="no backend named 'nmupy'"):
        with stage_overrides({"a": {"backend": "nmupy"}}):
            pass


# -- concurrency -------------------------------------------------------------------------------


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("simgpu")
def test_pipelines_in_threads_keep_their_own_reports() -> None:
    """Two pipelines, eight threads, interleaved: each report holds its own stages and the
    moves of its own calls only (simgpu: the simulated H100's backend, whose matmul moves)."""

    @prism.pipeline
    def on_gpu(a: Any) -> Any:
        with prism.stage("gpu", preferred_backend="nvidia"):
            return prism.matmul(a, a)

    @prism.pipeline
    def on_host(a: Any) -> Any:
        with prism.stage("host", preferred_backend="numpy"):
            return prism.add(a, a)

    barrier = threading.Barrier(8)
    reports: dict[str, list[prism.pipelines.PipelineReport]] = {"gpu": [], "host": []}
    errors: list[BaseException] = []

    def work(kind: str) -> None:
        fn = on_gpu if kind == "gpu" else on_host
        a = np.eye(8)
        barrier.wait()
        try:
            for _ in range(20):
                reports[kind].append(fn.run(a).report)
        except BaseException as exc:  # collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in ("gpu", "host") * 4]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(reports["gpu"]) == len(reports["host"]) == 80
    for r in reports["gpu"]:
        (s,) = r.stages
        assert s.name == "gpu" and s.device == "nvidia.h100-pcie"
        assert [m.op for m in s.moves] == ["matmul", "matmul"]  # its two arguments, no more
    for r in reports["host"]:
        (s,) = r.stages
        assert s.name == "host" and s.moves == () and r.moves == ()


@pytest.mark.timeout(60)
@pytest.mark.usefixtures("simgpu")
def test_async_pipelines_in_tasks_keep_their_own_reports() -> None:
    @prism.pipeline
    async def on_gpu(a: Any) -> Any:
        with prism.stage("gpu", preferred_backend="nvidia"):
            await asyncio.sleep(0)  # the other task runs while this stage is open
            b = prism.matmul(a, a)
            await asyncio.sleep(0)
        return b

    @prism.pipeline
    async def on_host(a: Any) -> Any:
        with prism.stage("host", preferred_backend="numpy"):
            await asyncio.sleep(0)
            b = prism.add(a, a)
            await asyncio.sleep(0)
        return b

    async def main() -> list[prism.pipelines.PipelineRun]:
        a = np.eye(4)
        jobs = [on_gpu.run(a) if i % 2 == 0 else on_host.run(a) for i in range(10)]
        return list(await asyncio.gather(*jobs))

    runs = asyncio.run(main())
    for i, run in enumerate(runs):
        (s,) = run.report.stages
        if i % 2 == 0:
            assert s.name == "gpu" and len(s.moves) == 2
        else:
            assert s.name == "host" and s.moves == ()
    assert asyncio.run(on_host(np.ones(2))).tolist() == [2.0, 2.0]


# -- splits ------------------------------------------------------------------------------------


@pytest.mark.timeout(60)
def test_a_split_run_in_a_stage_is_in_its_report() -> None:
    """The split engine (prism_core/_pipeline/split.py) records each split it runs; a stage
    collects those made while it ran (parts in real threads, here NumPy and the simulated
    H100 on the reference)."""
    from prism_core._pipeline.split import split

    a, b = np.arange(24.0).reshape(6, 4), np.ones((4, 3))

    @prism.pipeline
    def f(a: Any, b: Any) -> Any:
        with prism.stage("split"):
            return split(
                prism.matmul,
                a,
                b,
                targets=["numpy", "nvidia.h100-sxm"],
                ratio=[1, 1],
                simulate=True,
            )

    run = f.run(a, b)
    np.testing.assert_array_equal(run.result, a @ b)
    (record,) = run.report.stage("split").splits
    assert record.as_dict()["op"] == "matmul"
    assert "split:" in run.report.describe()
    json.dumps(run.report.as_dict())


def test_an_exception_whose_str_raises_reaches_the_caller_unchanged() -> None:
    """The stage notes where the exception was raised and the report describes it; neither
    may replace it (a RuntimeError from its __str__ did)."""

    class Unprintable(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text for you")

    @prism.pipeline
    def run(x: Any) -> Any:
        with prism.stage("first"):
            raise Unprintable()

    with pytest.raises(Unprintable) as caught:
        run(np.ones(3))
    assert "raised in stage 'first'" in "".join(getattr(caught.value, "__notes__", []))
    from prism_core.kernel.errors import describe_exception

    assert describe_exception(Unprintable()) == (
        "Unprintable: (its message cannot be shown: str() raised RuntimeError)"
    )
