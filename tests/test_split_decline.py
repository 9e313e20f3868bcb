"""``ratio="auto"`` declines a split predicted to lose, and pinned host buffers for GPU parts
(prism_core/_pipeline/split_decision.py).

No GPU is on the machines these tests run on.  The devices are simulated from their
descriptions (``simulate=True``: the parts run on the NumPy reference, the predictions are the
real devices') or reported present by a test plugin (``tests/split_pinned_plugin.py``: NumPy
behind a GPU's array type, with "pinned" buffers that are plain NumPy arrays, found through a
real entry point).  What the predictions say is set by calibrations and tuning entries stored
in each test's own tuning cache (the ``PRISM_CACHE_DIR`` that conftest gives every test), so
that the decisions do not depend on this host's CPU; no test asserts a time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core._pipeline.split import pinned as split_decision
from prism_core._tuning import figures as model_module
from prism_core._tuning import tuning_records as tuning
from tests.conftest import load_test_plugin

FAST, SLOW = "nvidia.h100-sxm", "amd.mi300x"


def host_type() -> str:
    return next(
        d.device_type
        for d in prism.hardware.present_devices().devices
        if d.description.kind == "cpu"
    )


def gpus(fast: float, slow: float) -> None:
    """The two simulated GPUs' fp64 rates (GFLOP/s) set by calibration."""
    tuning.default_store().record(
        calibration={
            host_type(): {"bandwidth_gbs": 100.0},
            FAST: {"gflops": {"fp64": fast}},
            SLOW: {"gflops": {"fp64": slow}},
        }
    )


def operands(n: int = 256) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)
    return rng.standard_normal((n, 128)), rng.standard_normal((128, 128))


def split(*args: Any, ratio: Any = "auto", op: str = "matmul", **kwargs: Any) -> Any:
    return prism.pipelines.split(
        op, *args, targets=[SLOW, FAST], ratio=ratio, simulate=True, return_record=True, **kwargs
    )


# -- declining ----------------------------------------------------------------------------------


def test_a_split_predicted_to_lose_is_declined_and_runs_on_the_better_target() -> None:
    gpus(fast=1000.0, slow=10.0)  # the slow GPU would add 1 % of throughput: not worth a thread
    a, b = operands()
    out, record = split(a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)  # the unsplit call's result
    slow, fast = record.parts
    assert (slow.size, fast.size) == (0, 256) and slow.seconds is None
    assert fast.seconds is not None and fast.device == FAST
    assert not record.split and record.ratio_source == "modelled"
    assert record.decision.startswith("declined: predicted split ")
    assert f" vs {FAST} (simulated) " in record.decision
    assert "a split must be predicted 20% faster" in record.decision
    assert f"auto: {record.decision}" in record.describe()
    assert record.as_dict()["decision"] == record.decision


def test_a_split_predicted_to_win_is_kept_and_says_so() -> None:
    gpus(fast=1.0, slow=1.0)  # equal and compute-bound: half each, nearly twice as fast
    a, b = operands()
    out, record = split(a, b)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert record.split and [p.size for p in record.parts] == [128, 128]
    assert record.decision.startswith("split: predicted ")
    assert f" vs {SLOW} (simulated) " in record.decision and " alone " in record.decision


def test_the_decision_compares_the_split_with_the_margin() -> None:
    # Compute-bound (milliseconds at these rates): with the slow GPU at half the fast one's
    # rate the balanced split takes 2/3 of the fast one's time, inside the margin; at a
    # fiftieth, 98 %, outside it.
    plans = {}
    for slow in (1.0, 0.04):
        gpus(fast=2.0, slow=slow)
        _, record = split(*operands(512))
        plans[slow] = record.decision
    assert plans[1.0].startswith("split:")
    assert plans[0.04].startswith("declined:")


@pytest.mark.parametrize("ratio", [[1, 1], [0.9, 0.1], None])
def test_a_given_or_default_ratio_is_never_declined(ratio: Any) -> None:
    gpus(fast=1000.0, slow=10.0)  # "auto" would decline this one
    a, b = operands()
    out, record = split(a, b, ratio=ratio)
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert record.split and record.decision == ""
    assert record.ratio_source == ("even" if ratio is None else "given")


def test_targets_on_one_device_take_turns_so_auto_declines() -> None:
    a, b = operands()
    out, record = prism.pipelines.split(
        "matmul", a, b, targets=["numpy", "cpu"], ratio="auto", return_record=True
    )
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert record.decision.startswith(f"declined: every target computes on {host_type()}, ")
    assert "where parts would take turns; numpy " in record.decision  # a tie: the first
    assert [p.size for p in record.parts] == [256, 0]


def test_of_targets_on_one_device_only_the_fastest_gets_a_part() -> None:
    # This host's CPU and the GPU calibrated to the same rate: the split between them is kept,
    # and the second CPU target (a tie with the first: the first is kept) gets nothing.
    host = {"bandwidth_gbs": 100.0, "gflops": {"fp64": 1.0}}
    tuning.default_store().record(calibration={host_type(): host, FAST: {"gflops": {"fp64": 1.0}}})
    a, b = operands(512)
    out, record = prism.pipelines.split(
        "matmul", a, b, targets=["numpy", "cpu", FAST], ratio="auto", simulate=True,
        return_record=True,
    )  # fmt: skip
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert record.decision.startswith("split:")
    assert "parts on one device would take turns: the fastest there runs them" in record.decision
    numpy_part, cpu_part, gpu_part = record.parts
    assert cpu_part.size == 0 and numpy_part.size > 0 and gpu_part.size > 0


def test_nothing_to_predict_keeps_the_even_split_and_says_why() -> None:
    @prism.extending.operation(name="test_split_decline.axpy", array_args=(0, 1))
    def axpy(x: Any, y: Any, a: float = 2.0) -> Any:
        """a * x + y, with no declared work: the model cannot predict it."""
        return a * x + y

    rule = prism.pipelines.SplitRule("test_split_decline.axpy", "elementwise", arrays=(0, 1))
    prism.pipelines.declare_split_rule(rule, replace=True)
    x = np.arange(40.0).reshape(20, 2)
    out, record = prism.pipelines.split(
        axpy, x, x, targets=["numpy", FAST], ratio="auto", simulate=True, return_record=True
    )
    np.testing.assert_array_equal(out, 3 * x)
    assert record.ratio_source.startswith("even: the model cannot predict")
    assert record.decision.startswith("kept even: nothing to predict with")
    assert [p.size for p in record.parts] == [10, 10]


# -- tuned times --------------------------------------------------------------------------------


def tuned(device: str, variant: str, seconds: float, shapes: Any) -> Any:
    return prism.tuning.TuningEntry(
        op="matmul",
        device=device,
        dtype="fp64",
        bucket=tuning.bucket_of(*(int(np.prod(s)) for s in shapes)),
        variants=(variant,),
        times={variant: seconds},
        winner=variant,
        decided="measured",
        shapes=tuple(tuple(s) for s in shapes),
        repeats=5,
        measured_at=time.time(),
    )


@pytest.fixture
def pinned_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The ``pinnedgpu`` test plugin: an H100 PCIe reported present and a backend offering
    "pinned" buffers; the pool of kept buffers is emptied before and after."""
    from tests import split_pinned_plugin

    load_test_plugin(monkeypatch, tmp_path / "site", "pinnedgpu", "tests.split_pinned_plugin")
    split_decision.PINNED.clear()
    split_pinned_plugin.SEEN.clear()
    backend = split_pinned_plugin.BACKEND
    with backend.lock:
        backend.calls = 0
        backend.buffers.clear()
    yield split_pinned_plugin
    split_decision.PINNED.clear()
    prism.extending.reload_plugins()


@pytest.mark.parametrize(("cpu_s", "gpu_s", "kept"), [(1.0, 1.0, True), (100.0, 1.0, False)])
def test_tuned_times_of_the_whole_call_decide(
    pinned_gpu: Any, cpu_s: float, gpu_s: float, kept: bool
) -> None:
    a, b = operands(512)
    shapes = (a.shape, b.shape)
    tuning.default_store().record(
        [
            tuned(host_type(), "numpy.matmul", cpu_s, shapes),
            tuned("nvidia.h100-pcie", "pinnedgpu.matmul", gpu_s, shapes),
        ]
    )
    out, record = prism.pipelines.split(
        "matmul", a, b, targets=["numpy", "nvidia.h100-pcie"], ratio="auto", return_record=True
    )
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert record.ratio_source == "measured"
    if kept:
        assert record.decision.startswith("split:") and record.split
        assert [p.size for p in record.parts] == [256, 256]
    else:
        assert record.decision.startswith("declined:") and not record.split
        assert "vs nvidia.h100-pcie 1 s (measured" in record.decision
        assert [p.size for p in record.parts] == [0, 512]


# -- pinned host buffers ------------------------------------------------------------------------


def pinned_link(monkeypatch: pytest.MonkeyPatch, pinned: float, pageable: float) -> None:
    """The H100 PCIe's host links: pageable and pinned, host to device, as a calibration on
    this host would measure them (the host's memory at 100 GB/s).  Where the model has no
    pinned figure yet, the split's reading of it stands in."""
    gpu: dict[str, Any] = {"host_link_gbs": pageable}
    if "h2d_pinned_gbs" in model_module._CALIBRATION_KEYS:
        gpu["h2d_pinned_gbs"] = pinned
    else:  # pragma: no cover - a model without the pinned figure
        monkeypatch.setattr(split_decision, "pinned_gbps", lambda figures: pinned)
    tuning.default_store().record(
        calibration={host_type(): {"bandwidth_gbs": 100.0}, "nvidia.h100-pcie": gpu}
    )


@pytest.mark.timeout(60)
def test_a_gpu_part_is_staged_through_pinned_memory_where_it_pays(
    pinned_gpu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned_link(monkeypatch, pinned=50.0, pageable=5.0)
    a = np.random.default_rng(1).standard_normal((512, 256))
    for round_ in range(2):
        out, record = prism.pipelines.split(
            "exp", a, targets=["numpy", ("nvidia.h100-pcie", "pinnedgpu")], ratio=[1, 1],
            return_record=True,
        )  # fmt: skip
        np.testing.assert_allclose(out, np.exp(a), rtol=1e-15)
        cpu, gpu = record.parts
        assert gpu.pinned and not cpu.pinned
        assert "staged through pinned memory" in record.describe()
        assert gpu.as_dict()["pinned"] is True
        # The buffer is made once and kept: the second call takes it from the pool.
        assert pinned_gpu.BACKEND.calls == 1, round_
    assert pinned_gpu.SEEN == [True, True]  # the variant got the pinned buffer itself


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("pinned", "pageable", "rows"),
    [
        (50.0, 5.0, 2),  # too small to save the staging's fixed cost
        (5.2, 5.0, 512),  # the copy into pinned memory costs more than the faster link saves
    ],
)
def test_a_part_is_not_staged_where_it_would_not_pay(
    pinned_gpu: Any, monkeypatch: pytest.MonkeyPatch, pinned: float, pageable: float, rows: int
) -> None:
    pinned_link(monkeypatch, pinned=pinned, pageable=pageable)
    a = np.random.default_rng(2).standard_normal((rows, 256))
    out, record = prism.pipelines.split(
        "exp", a, targets=["numpy", "nvidia.h100-pcie"], ratio=[1, 1], return_record=True
    )
    np.testing.assert_allclose(out, np.exp(a), rtol=1e-15)
    assert not record.parts[1].pinned and pinned_gpu.BACKEND.calls == 0
    assert pinned_gpu.SEEN == [False]


def test_no_pinned_figure_no_staging(pinned_gpu: Any) -> None:
    # Only the description's link (the pageable figure for every kind of host memory): staging
    # on a guess could lose, so nothing is staged.
    a = np.random.default_rng(3).standard_normal((512, 256))
    _, record = prism.pipelines.split(
        "exp", a, targets=["numpy", "nvidia.h100-pcie"], ratio=[1, 1], return_record=True
    )
    assert not record.parts[1].pinned and pinned_gpu.BACKEND.calls == 0


def test_a_declined_split_stages_the_whole_call_for_the_gpu(
    pinned_gpu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned_link(monkeypatch, pinned=50.0, pageable=5.0)
    a, b = operands(512)
    shapes = (a.shape, b.shape)
    tuning.default_store().record(
        [
            tuned(host_type(), "numpy.matmul", 100.0, shapes),
            tuned("nvidia.h100-pcie", "pinnedgpu.matmul", 1.0, shapes),
        ]
    )
    out, record = prism.pipelines.split(
        "matmul", a, b, targets=["numpy", "nvidia.h100-pcie"], ratio="auto", return_record=True
    )
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert record.decision.startswith("declined:")
    assert record.parts[1].size == 512 and record.parts[1].pinned
    assert pinned_gpu.BACKEND.calls == 2  # a and b, each through a buffer of its own


def test_a_result_that_shares_a_pinned_buffer_keeps_it() -> None:
    class Counting:
        name = "counting"

        def pinned_empty(self, shape: Any, dtype: Any) -> Any:
            return np.empty(shape, dtype)

    backend: Any = Counting()
    x = np.ones((4, 4))
    args, _, used = split_decision.stage(backend, (x,), {})
    assert len(used) == 1 and args[0] is used[0] and args[0] is not x
    split_decision.unstage(backend, used, args[0][1:])  # a view of the buffer came back
    assert split_decision.PINNED.take(backend, (4, 4), x.dtype) is not used[0]
    split_decision.unstage(backend, used, np.zeros(3))
    assert split_decision.PINNED.take(backend, (4, 4), x.dtype) is used[0]


# -- many callers at once -----------------------------------------------------------------------


@pytest.mark.timeout(120)
def test_many_threads_splitting_at_once_get_their_own_results(
    pinned_gpu: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned_link(monkeypatch, pinned=50.0, pageable=5.0)
    errors: list[BaseException] = []
    decisions: dict[int, set[str]] = {}

    def worker(seed: int) -> None:
        try:
            rng = np.random.default_rng(seed)
            seen = decisions.setdefault(seed, set())
            for k in range(6):
                a = rng.standard_normal((64 + seed, 256))
                b = rng.standard_normal((256, 32))
                ratio: Any = "auto" if k % 2 == 0 else [seed + 1, k + 1]
                out, record = prism.pipelines.split(
                    "matmul", a, b, targets=["numpy", "nvidia.h100-pcie"], ratio=ratio,
                    return_record=True,
                )  # fmt: skip
                np.testing.assert_allclose(out, a @ b, rtol=1e-12)
                if ratio == "auto":
                    seen.add(record.decision.split(":")[0])
                got = prism.pipelines.split("exp", a, targets=["numpy", "nvidia.h100-pcie"])
                np.testing.assert_allclose(got, np.exp(a), rtol=1e-15)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(90)
    assert not errors, errors
    assert all(not t.is_alive() for t in threads)
    assert all(seen and seen <= {"split", "declined", "kept even"} for seen in decisions.values())
