"""Recording the moves dispatch makes (prism_core/kernel/dispatch/movement.py: ``recording()``,
``MoveRecord``) and what pipelines' stages report of them.

Moves between NumPy and torch on the CPU use the installed torch plugin (loaded through its
real entry point); moves to a GPU use the ``simgpu`` test plugin's simulated H100
(tests/simulated_gpu_plugin.py), whose arrays are a type of their own in host memory: the
records say what a real GPU's would (copied over the PCIe link the H100's description gives).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch.movement import COPIED, ZERO_COPY


@pytest.fixture
def torch_plugin() -> Iterator[Any]:
    torch = pytest.importorskip("torch", reason="the torch plugin's moves need torch")
    ps = prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("torch",)))
    if ps.records.get("torch") is None or ps.records["torch"].status != "loaded":
        prism.extending.reload_plugins()
        pytest.skip("prism-plugin-torch is not installed in this environment")
    yield torch
    prism.extending.reload_plugins()


def test_numpy_to_torch_and_back_on_the_cpu_is_zero_copy(torch_plugin: Any) -> None:
    a = np.arange(12.0).reshape(3, 4)
    with prism.use_backend("torch"), movement.recording() as moves:
        t = prism.add(a, a)
    assert isinstance(t, torch_plugin.Tensor)
    assert [(m.op, m.position, m.source, m.backend) for m in moves] == [
        ("add", 0, "numpy", "torch"),
        ("add", 1, "numpy", "torch"),
    ]
    assert all(m.how == ZERO_COPY and m.seconds == 0.0 and m.nbytes == a.nbytes for m in moves)
    assert (
        moves[0]
        .describe()
        .startswith("add argument 0: numpy.ndarray float64[3x4] (96 B) numpy -> torch")
    )
    with prism.use_backend("numpy"), movement.recording() as back:
        out = prism.add(t, t)
    np.testing.assert_array_equal(out, 2 * (a + a))
    assert [(m.source, m.backend, m.how) for m in back] == [("torch", "numpy", ZERO_COPY)] * 2


def test_a_copy_to_a_gpu_costs_its_size_over_the_host_link(simgpu: None) -> None:
    """Simulated H100: the copy's estimate is bytes / (PCIe 5 x16's 128 GB/s / 2)."""
    a = np.ones((256, 256))
    with prism.device("nvidia.h100-pcie"), movement.recording() as moves:
        prism.matmul(a, a)
    assert len(moves) == 2
    for m in moves:
        assert m.how == COPIED and m.backend == "simgpu" and m.device == "nvidia.h100-pcie"
        assert m.seconds == pytest.approx(a.nbytes / 64e9)
    assert "copied, ~8.2 µs" in moves[0].describe()


def test_results_brought_back_are_recorded_as_the_result(simgpu: None) -> None:
    """Simulated H100: a large matmul in automatic mode goes to the GPU (the model says so)
    and its result comes back to NumPy, the arguments' backend."""
    a = np.ones((600, 600))
    assert prism.explain("matmul", a, a).chosen == "simgpu.matmul"
    with movement.recording() as moves:
        out = prism.matmul(a, a)
    assert isinstance(out, np.ndarray)
    assert [m.argument for m in moves] == ["argument 0", "argument 1", "result"]
    result = moves[-1]
    assert (result.source, result.backend, result.how) == ("simgpu", "numpy", COPIED)
    assert result.seconds == pytest.approx(out.nbytes / 64e9)


def test_recordings_nest_and_nothing_records_outside_them(simgpu: None) -> None:
    a = np.ones((4, 4))
    with prism.device("nvidia.h100-pcie"):
        prism.matmul(a, a)  # no recording: the movers append nowhere
        with movement.recording() as outer:
            prism.matmul(a, a)
            with movement.recording() as inner:
                prism.matmul(a, a)
            prism.matmul(a, a)
    assert len(outer) == 4 and len(inner) == 2  # the innermost recording gets the records


def test_plans_without_moves_keep_their_direct_function() -> None:
    """Recording costs nothing where nothing moves: the plan of a NumPy call keeps calling
    NumPy's own function directly, recording or not."""
    a = np.ones((3, 3))
    prism.matmul(a, a)
    plans = [p for p in prism.get_op("matmul")._plans.values() if p.fn is not None]
    assert plans
    before = {id(p): p.fn for p in plans}
    with movement.recording() as moves:
        prism.matmul(a, a)
    assert moves == []
    assert all(p.fn is before[id(p)] for p in plans)
    assert plans[0].fn is np.matmul


def test_between_stages_data_moves_only_where_the_next_stage_cannot_take_it(
    torch_plugin: Any,
) -> None:
    @prism.pipeline
    def mixed(a: Any) -> Any:
        with prism.stage("on_torch", preferred_backend="torch"):
            b = prism.matmul(a, a)
            c = prism.add(b, b)  # b is torch's already: nothing moves
        with prism.stage("automatic"):
            d = prism.multiply(c, c)  # automatic takes torch's tensors where they are
        with prism.stage("on_numpy", preferred_backend="numpy"):
            return prism.sum(d)

    a = np.eye(8)
    run = mixed.run(a)
    assert float(run.result) == pytest.approx(float(np.sum((2 * a) ** 2)))
    on_torch = run.report.stage("on_torch")
    assert [(m.op, m.position, m.how) for m in on_torch.moves] == [
        ("matmul", 0, ZERO_COPY),
        ("matmul", 1, ZERO_COPY),
    ]
    assert on_torch.bytes_in == 2 * a.nbytes and on_torch.bytes_out == 0
    assert run.report.stage("automatic").moves == ()
    on_numpy = run.report.stage("on_numpy")
    assert [(m.op, m.source, m.backend, m.how) for m in on_numpy.moves] == [
        ("sum", "torch", "numpy", ZERO_COPY)
    ]
    assert run.report.bytes_moved == 3 * a.nbytes
