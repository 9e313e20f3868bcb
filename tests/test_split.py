"""The heterogeneous split (prism_core/_pipeline/split.py): results, parts, threads, errors.

Every split is compared with the unsplit call (NumPy's result through Prism), over ops, ratios
and targets.  The parts run in real threads on real backends: NumPy and torch (the installed
torch plugin, loaded through its entry point), and a GPU that is not here, simulated from its
description (its parts run on the NumPy reference and are labelled so) or reported present by
the ``simgpu`` test plugin (tests/simulated_gpu_plugin.py: NumPy behind a GPU's array type,
found through a real entry point).  Which thread and backend ran each part is read from the
record, never inferred from timings.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import math
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import prism_core as prism
from prism_core._pipeline.split import decision as split_decision
from prism_core._pipeline.split import threads as split_threads
from prism_core.kernel.config import usable_cpus
from prism_core.kernel.dispatch.arguments import plan_key as _key
from prism_core.pipelines import SplitError, SplitRecord, SplitRule

TORCH_PLUGIN = importlib.util.find_spec("prism_plugin_torch") is not None and any(
    ep.name == "torch" for ep in importlib.metadata.entry_points(group="prism.plugins")
)
_n = iter(range(1_000_000))


def unique(stem: str) -> str:
    return f"test_split.{stem}{next(_n)}"


@pytest.fixture
def torch_backend() -> Iterator[None]:
    """The torch plugin, loaded as users get it (its entry point), strictly."""
    pytest.importorskip("torch", reason="torch is not installed: no second CPU backend")
    if not TORCH_PLUGIN:
        pytest.skip("the torch plugin is not installed (pip install -e plugins/prism-plugin-torch)")
    ps = prism.extending.reload_plugins(
        prism.extending.PluginSettings(strict=True, allow=("torch",))
    )
    assert ps.records["torch"].status == "loaded"
    yield
    prism.extending.reload_plugins()


def rng_arrays(seed: int = 0) -> Callable[..., np.ndarray]:
    rng = np.random.default_rng(seed)
    return lambda *shape: rng.standard_normal(shape)


def spd(r: Callable[..., np.ndarray], *batch: int, n: int = 4) -> np.ndarray:
    """Well-conditioned matrices: solve and inv give the same answer on every backend."""
    a = r(*batch, n, n)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


#: name -> (op, make(r) -> (args, kwargs), split axis)
CASES: dict[str, tuple[str, Callable[[Callable[..., np.ndarray]], Any], int]] = {
    "add broadcast": ("add", lambda r: ((r(12, 7), r(7)), {}), 0),
    "multiply scalar, columns": ("multiply", lambda r: ((r(12, 7), 2.5), {}), 1),
    "exp": ("exp", lambda r: ((r(5, 12),), {}), 1),
    "where": ("where", lambda r: ((r(12, 3) > 0, r(12, 3), r(1, 3)), {}), 0),
    "clip, bounds by keyword": ("clip", lambda r: ((r(12, 4),), {"min": -0.5, "max": r(12, 4)}), 0),
    "matmul rows": ("matmul", lambda r: ((r(12, 7), r(7, 5)), {}), 0),
    "matmul columns": ("matmul", lambda r: ((r(6, 7), r(7, 12)), {}), 1),
    "matmul batch": ("matmul", lambda r: ((r(9, 4, 5), r(5, 3)), {}), 0),
    "matmul vector": ("matmul", lambda r: ((r(12, 7), r(7)), {}), 0),
    "fft batch": ("fft.fft", lambda r: ((r(12, 16),), {}), 0),
    "rfft along axis 0": ("fft.rfft", lambda r: ((r(16, 12),), {"axis": 0}), 1),
    "ifft": ("fft.ifft", lambda r: ((r(12, 8) + 1j * r(12, 8),), {}), 0),
    "solve": ("linalg.solve", lambda r: ((spd(r, 12), r(12, 4, 2)), {}), 0),
    "solve vector": ("linalg.solve", lambda r: ((spd(r, 12), r(4)), {}), 0),
    "inv": ("linalg.inv", lambda r: ((spd(r, 12),), {}), 0),
    "svd": ("linalg.svd", lambda r: ((r(12, 5, 4),), {"full_matrices": False}), 0),
    "sum over kept axis": ("sum", lambda r: ((r(12, 5),), {"axis": 1}), 0),
    "sum of all": ("sum", lambda r: ((r(12, 5),), {}), 0),
    "mean over split axis": ("mean", lambda r: ((r(12, 5),), {"axis": 0}), 0),
    "max keepdims": ("max", lambda r: ((r(12, 5),), {"axis": 0, "keepdims": True}), 0),
    "min of all": ("min", lambda r: ((r(12, 5),), {"axis": None}), 1),
    "sort": ("sort", lambda r: ((r(12, 5),), {"axis": -1}), 0),
}

TARGETS_AND_RATIOS = [
    (["numpy", "torch"], None),
    (["numpy", "torch"], [0, 1]),
    (["numpy", "torch"], [1, 0]),
    (["numpy", "torch"], [0.3, 0.7]),
    (["numpy", "torch"], "auto"),
    (["torch", "numpy", "numpy"], [0.2, 0.5, 0.3]),
]


def unsplit(op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    with prism.use_backend("numpy"):
        return prism.get_op(op).function(*args, **kwargs)


def assert_same(op: str, got: Any, want: Any) -> None:
    if op == "linalg.svd":  # singular vectors' signs may differ between backends
        np.testing.assert_allclose(got.S, want.S, rtol=1e-10)
        rebuilt = got.U @ (got.S[..., None] * got.Vh)
        np.testing.assert_allclose(rebuilt, want.U @ (want.S[..., None] * want.Vh), atol=1e-10)
        return
    assert type(got) is type(want), (type(got), type(want))
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.timeout(120)
@pytest.mark.parametrize(("targets", "ratio"), TARGETS_AND_RATIOS)
@pytest.mark.parametrize("case", list(CASES))
def test_the_split_equals_the_unsplit_result(
    torch_backend: None, case: str, targets: list[str], ratio: Any
) -> None:
    op, make, axis = CASES[case]
    args, kwargs = make(rng_arrays(len(case)))
    want = unsplit(op, args, kwargs)
    got, record = prism.pipelines.split(
        op, *args, targets=targets, ratio=ratio, split_axis=axis, return_record=True, **kwargs
    )
    assert_same(op, got, want)
    assert isinstance(record, SplitRecord) and record.op == op
    assert [p.target for p in record.parts] == targets
    assert sum(p.size for p in record.parts) == record.length
    assert [p.start for p in record.parts] == sorted(p.start for p in record.parts)
    for part in record.parts:  # a part of size 0 is recorded, and was not run
        assert (part.seconds is None) == (part.size == 0)
    if isinstance(ratio, list):
        assert record.ratio_source == "given"
        for part, share in zip(record.parts, ratio, strict=True):
            assert part.ratio == pytest.approx(share / sum(ratio))
            if share == 0:
                assert part.size == 0


@pytest.mark.timeout(60)
def test_fewer_items_than_targets_and_an_empty_axis(torch_backend: None) -> None:
    r = rng_arrays()
    a, b = r(2, 3), r(3, 4)
    got, record = prism.pipelines.split(
        "matmul", a, b, targets=["numpy", "torch", "numpy"], return_record=True
    )
    np.testing.assert_allclose(got, a @ b)
    assert sorted(p.size for p in record.parts) == [0, 1, 1]
    assert sum(p.seconds is None for p in record.parts) == 1

    empty = np.empty((0, 3))
    got, record = prism.pipelines.split(
        "matmul", empty, b, targets=["numpy", "torch"], return_record=True
    )
    assert got.shape == (0, 4) and isinstance(got, np.ndarray)
    assert record.length == 0 and "length 0" in record.note
    assert sum(p.seconds is not None for p in record.parts) == 1  # the empty call ran once


@pytest.mark.timeout(60)
def test_parts_run_in_threads_of_their_own_on_their_backends(torch_backend: None) -> None:
    r = rng_arrays()
    a, b = r(64, 32), r(32, 16)
    with prism.pipelines.split_recording() as records:
        got = prism.pipelines.split("matmul", a, b, targets=["numpy", "torch"], ratio=[0.5, 0.5])
    np.testing.assert_allclose(got, a @ b)
    (record,) = records
    # The first part runs in the calling thread, the other in a worker thread of its own.
    assert record.parts[0].thread == threading.current_thread().name
    assert str(record.parts[1].thread).startswith("prism-split-")
    assert [p.backend for p in record.parts] == ["numpy", "torch"]
    assert [p.variant for p in record.parts] == ["numpy.matmul", "torch.matmul"]
    host = prism.hardware.present_devices().devices[0].description.device_type
    assert {p.device for p in record.parts} == {host}
    # Two parts on the host at once share its cores: at least one thread each, all cores used.
    counts = [p.threads for p in record.parts]
    assert all(c is not None and c >= 1 for c in counts)
    assert sum(c for c in counts if c) == max(usable_cpus(), 2)
    json.dumps(record.as_dict())  # plain data
    assert "part 1: [32:64]" in record.describe()


@pytest.mark.timeout(60)
def test_thread_counts_come_back_after_the_split(torch_backend: None) -> None:
    import torch

    before = torch.get_num_threads()
    r = rng_arrays()
    prism.pipelines.split("matmul", r(64, 64), r(64, 64), targets=["numpy", "torch"])
    assert torch.get_num_threads() == before
    assert not split_threads._LIBRARIES._limited  # no library is held at a lower count


def test_a_simulated_device_runs_on_the_reference_and_says_so() -> None:
    r = rng_arrays()
    a, b = r(40, 8), r(8, 3)
    got, record = prism.pipelines.split(
        "matmul",
        a,
        b,
        targets=["numpy", "nvidia.h100-pcie"],
        ratio=[0.25, 0.75],
        simulate=True,
        return_record=True,
    )
    np.testing.assert_allclose(got, a @ b)
    gpu = record.parts[1]
    assert gpu.target == "nvidia.h100-pcie (simulated)"
    assert gpu.simulated and gpu.backend == "numpy" and gpu.device == "nvidia.h100-pcie"
    assert gpu.kind == "gpu" and (gpu.start, gpu.stop) == (10, 40)
    assert "simulated: ran on the reference" in record.describe()


def test_an_absent_device_is_an_error_unless_simulated() -> None:
    with pytest.raises(prism.DeviceNotPresentError, match=r"targets\[1\].*simulate=True"):
        prism.pipelines.split("exp", np.ones(4), targets=["numpy", "nvidia.h100-pcie"])


def test_a_present_gpu_runs_its_part_with_its_backend(simgpu: None) -> None:
    r = rng_arrays()
    a, b = r(30, 6), r(6, 5)
    got, record = prism.pipelines.split(
        "matmul", a, b, targets=["numpy", "nvidia.h100-pcie"], return_record=True
    )
    assert isinstance(got, np.ndarray)  # the GPU's array type came back as NumPy
    np.testing.assert_allclose(got, a @ b)
    gpu = record.parts[1]
    assert not gpu.simulated and gpu.backend == "simgpu" and gpu.variant == "simgpu.matmul"
    assert gpu.kind == "gpu"


def test_auto_gives_the_faster_device_the_larger_share() -> None:
    r = rng_arrays()
    a, b = r(2048, 256), r(256, 256)
    _, record = prism.pipelines.split(
        "matmul",
        a,
        b,
        targets=["numpy", "nvidia.h100-pcie"],
        ratio="auto",
        simulate=True,
        return_record=True,
    )
    assert record.ratio_source == "modelled"
    cpu, gpu = record.parts
    assert gpu.size > cpu.size and cpu.size + gpu.size == 2048


def test_auto_uses_tuned_throughputs_where_measured(torch_backend: None) -> None:
    from prism_core._tuning import tuning_records as tuning

    host = prism.hardware.present_devices().devices[0].description.device_type
    variants = ("numpy.matmul", "torch.matmul")
    entry = prism.tuning.TuningEntry(
        op="matmul",
        device=host,
        dtype="fp64",
        bucket=tuning.bucket_of(2 * 64 * 64),
        variants=variants,
        times={"numpy.matmul": 3e-3, "torch.matmul": 1e-3},
        winner="torch.matmul",
        decided="measured",
        shapes=((64, 64), (64, 64)),
        repeats=5,
        measured_at=time.time(),
    )
    tuning.default_store().record([entry])
    r = rng_arrays()
    _, record = prism.pipelines.split(
        "matmul",
        r(100, 64),
        r(64, 64),
        targets=["numpy", "torch"],
        ratio="auto",
        return_record=True,
    )
    assert record.ratio_source == "measured"
    # Torch measured three times faster, on the same CPU as NumPy: parts there would take
    # turns, so "auto" declines and torch runs it all (a kept measured split:
    # tests/test_split_decline.py).
    assert [p.size for p in record.parts] == [0, 100]
    assert record.decision.startswith("declined:") and "torch" in record.decision


@pytest.mark.parametrize(
    ("ratio", "message"),
    [
        ([1], r"ratio \[1\] has 1 entry for 2 targets"),
        ([1, -1], r"ratio\[1\] = -1: each entry must be a finite number >= 0"),
        ([0, 0], r"sums to 0"),
        ([1, float("nan")], r"ratio\[1\] = nan"),
        ([True, 1], r"ratio\[0\] = True"),
        ([10**400, 1], r"ratio\[0\] = 1000.*: each entry must be a finite number"),
        ("atuo", r"'atuo' is not a ratio \(did you mean 'auto'\?\)"),
    ],
)
def test_ratios_are_checked_before_anything_runs(ratio: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        prism.pipelines.split("exp", np.ones(4), targets=["numpy", "numpy"], ratio=ratio)


def test_ratios_near_float_s_maximum_keep_their_proportions() -> None:
    """Their sum overflows to inf; the shares are taken relative to the largest, so they are
    not all 0 (which made an even split, silently)."""
    x = np.ones((100, 4))
    targets = ["numpy", "numpy", "numpy"]
    out, record = prism.pipelines.split(
        "exp", x, targets=targets, ratio=[1e308, 1e308, 1e-308], return_record=True
    )
    assert record.ratio_source == "given"
    assert [p.size for p in record.parts] == [50, 50, 0]
    assert [p.ratio for p in record.parts] == [0.5, 0.5, 0.0]
    np.testing.assert_array_equal(out, np.exp(x))


def test_targets_are_checked_and_errors_name_what_exists() -> None:
    with pytest.raises(ValueError, match=r"targets\[1\]: 'nvidia.h100' is neither") as info:
        prism.pipelines.split("exp", np.ones(4), targets=["numpy", "nvidia.h100"], simulate=True)
    message = str(info.value)
    assert "nvidia.h100-sxm" in message and "backends: numpy" in message and "'cpu'" in message
    with pytest.raises(TypeError, match=r"targets\[0\]: a target is a backend name"):
        prism.pipelines.split("exp", np.ones(4), targets=[3])
    with pytest.raises(ValueError, match=r"several targets are a list"):
        prism.pipelines.split("exp", np.ones(4), targets=("numpy", "numpy"))
    with pytest.raises(ValueError, match="targets is empty"):
        prism.pipelines.split("exp", np.ones(4), targets=[])
    with pytest.raises(ValueError, match=r"'torch' is neither .* backends: numpy;"):
        prism.pipelines.split(
            "exp", np.ones(4), targets=["numpy", "torch"]
        )  # its plugin is not loaded


def test_an_op_without_a_rule_names_those_with_one() -> None:
    with pytest.raises(ValueError, match=r"'cumulative_sum' has no split rule.*matmul"):
        prism.pipelines.split("cumulative_sum", np.ones(4), targets=["numpy", "numpy"])
    assert (
        "matmul" in prism.pipelines.split_rules()
        and prism.pipelines.split_rules()["sum"].combine == "add"
    )


@pytest.mark.parametrize(
    ("op", "args", "kwargs", "axis", "message"),
    [
        ("fft.fft", (np.ones((4, 8)),), {}, 1, r"works along axis -1.*the split axis"),
        ("std", (np.ones((4, 8)),), {"axis": 0}, 0, r"std over the split axis 0 cannot be"),
        ("matmul", (np.ones(3), np.ones(3)), {}, 0, r"0-d: there is no axis"),
        ("linalg.inv", (np.eye(3),), {}, 0, r"one problem, not a stack"),
        ("linalg.inv", (np.ones((2, 3, 3)),), {}, 1, r"one of the last 2 axes"),
        ("exp", (np.ones((2, 3)),), {}, 2, r"axis 2 is out of range"),
    ],
)
def test_calls_that_cannot_be_split_say_why(
    op: str, args: tuple[Any, ...], kwargs: dict[str, Any], axis: int, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        prism.pipelines.split(op, *args, targets=["numpy", "numpy"], split_axis=axis, **kwargs)


def test_mismatched_shapes_are_the_callers_error_before_anything_runs() -> None:
    with pytest.raises(ValueError, match=r"inner dimensions .* differ: 3 != 4"):
        prism.pipelines.split(
            "matmul", np.ones((5, 3)), np.ones((4, 2)), targets=["numpy", "numpy"]
        )
    with pytest.raises(ValueError, match="do not broadcast together"):
        prism.pipelines.split("add", np.ones((5, 3)), np.ones((4,)), targets=["numpy", "numpy"])


@pytest.mark.timeout(60)
def test_a_failing_part_is_named_and_the_others_are_awaited() -> None:
    stack = np.stack([np.eye(3) * (i + 1) for i in range(6)])
    stack[4] = 0.0  # singular: the second part fails
    with pytest.raises(SplitError) as info:
        prism.pipelines.split("linalg.inv", stack, targets=["numpy", "numpy"])
    error = info.value
    assert "part 1 ([3:6] of axis 0) on numpy failed" in str(error)
    assert isinstance(error.__cause__, np.linalg.LinAlgError)
    assert error.part is not None and (error.part.start, error.part.stop) == (3, 6)


@pytest.mark.timeout(60)
def test_a_failure_waits_for_the_parts_still_running() -> None:
    name = unique("fails_fast")
    finished: list[str] = []
    running = threading.Event()

    @prism.extending.operation(name=name, array_args=(0,))
    def fails_fast(x: Any) -> Any:
        if x[0] < 0:
            running.wait(10)  # (a part not started yet would be cancelled instead)
            raise ValueError("a negative read")  # the caller's own part fails...
        running.set()
        time.sleep(0.3)  # ...while the other part is running
        finished.append("slow part")
        return x

    prism.pipelines.declare_split_rule(SplitRule(name, "elementwise", (0,)))
    with pytest.raises(SplitError, match=r"part 0 \(\[0:2\] of axis 0\) on numpy failed"):
        prism.pipelines.split(name, np.array([-1.0, 1.0, 2.0, 3.0]), targets=["numpy", "numpy"])
    assert finished == ["slow part"]  # awaited before the error was raised: nothing runs on


@pytest.mark.timeout(30)
def test_a_part_beyond_the_timeout_is_an_error_not_a_hang() -> None:
    name = unique("slow")
    release = threading.Event()
    ended: list[bool] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def slow(x: Any) -> Any:
        if x[0] < 0:
            release.wait(20)  # the part that never finishes in time (20 s: a guard)
            ended.append(True)
        return x * 2

    prism.pipelines.declare_split_rule(SplitRule(name, "elementwise", (0,)))
    x = np.array([1.0, 2.0, -1.0, 4.0])
    with pytest.raises(SplitError, match=r"part 1 on numpy did not finish within timeout=0.2"):
        prism.pipelines.split(name, x, targets=["numpy", "numpy"], timeout=0.2)
    assert ended == []  # the caller gave up on the part, not waited for it
    release.set()
    np.testing.assert_array_equal(
        prism.pipelines.split(name, np.ones(4), targets=["numpy", "numpy"]), 2
    )


@pytest.mark.timeout(20)
def test_the_timeout_holds_for_the_part_the_caller_would_run() -> None:
    """The first part ran in the calling thread, which cannot give up on it: a first part that
    never finished made the split wait for it, whatever the timeout.  With a timeout every part
    runs in a split thread and the caller waits for them with the deadline; so does the call a
    single target runs whole."""
    name = unique("first_part_hangs")
    release = threading.Event()

    @prism.extending.operation(name=name, array_args=(0,))
    def first_part_hangs(x: Any) -> Any:
        if x[0] < 0:
            release.wait(60)  # never set before the split gives up (the test's mark is 20 s)
        if x[0] == 0:
            raise KeyError("the op's own error")
        return x * 2

    prism.pipelines.declare_split_rule(SplitRule(name, "elementwise", (0,)))
    try:
        x = np.array([-1.0, 1.0, 2.0, 3.0])
        with pytest.raises(SplitError, match=r"part 0 on numpy did not finish within timeout=0.5"):
            prism.pipelines.split(name, x, targets=["numpy", "numpy"], timeout=0.5)
        with pytest.raises(SplitError, match=r"part 0 on numpy did not finish within timeout=0.5"):
            prism.pipelines.split(name, x, targets=["numpy"], timeout=0.5)
        with (
            prism.pipelines.splitting(["numpy", "numpy"], ops=[name], timeout=0.5),
            pytest.raises(SplitError, match=r"part 0 on numpy did not finish"),
        ):
            prism.get_op(name).function(x)
    finally:
        release.set()
    # Within the timeout: the result, and a single target's own error, unchanged.
    ok, record = prism.pipelines.split(
        name, np.ones(4), targets=["numpy", "numpy"], timeout=10, return_record=True
    )
    np.testing.assert_array_equal(ok, 2)
    assert all(str(p.thread).startswith("prism-split-") for p in record.parts)
    with pytest.raises(KeyError, match="the op's own error"):
        prism.pipelines.split(name, np.zeros(4), targets=["numpy"], timeout=10)


@pytest.mark.timeout(30)
def test_a_timeout_shorter_than_any_part_is_a_split_error() -> None:
    # Whether the other part had started (it runs on) or not (it is cancelled), the caller
    # gets a SplitError naming it.
    name = unique("second_half_slow")

    @prism.extending.operation(name=name, array_args=(0,))
    def second_half_slow(x: Any) -> Any:
        if x[0] > 0:
            time.sleep(0.05)
        return x

    prism.pipelines.declare_split_rule(SplitRule(name, "elementwise", (0,)))
    x = np.array([0.0, 0.0, 1.0, 1.0])
    for _ in range(10):
        with pytest.raises(SplitError, match=r"part 1 on numpy did not finish within"):
            prism.pipelines.split(name, x, targets=["numpy", "numpy"], timeout=1e-9)


@pytest.mark.timeout(120)
def test_many_splits_from_many_threads_at_once(torch_backend: None) -> None:
    errors: list[BaseException] = []
    counts: dict[int, int] = {}

    def worker(seed: int) -> None:
        try:
            r = rng_arrays(seed)
            with prism.pipelines.split_recording() as records:
                for k in range(5):
                    a, b = r(20 + seed, 6), r(6, 4)
                    ratio = [seed + 1, k + 1]
                    got = prism.pipelines.split(
                        "matmul", a, b, targets=["numpy", "torch"], ratio=ratio
                    )
                    np.testing.assert_allclose(got, a @ b)
            counts[seed] = len(records)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert counts == dict.fromkeys(range(6), 5)  # each thread's recording has its own splits


@pytest.mark.timeout(60)
def test_a_splitting_scope_splits_the_ops_with_rules(torch_backend: None) -> None:
    r = rng_arrays()
    a, b, v = r(32, 8), r(8, 4), r(8)
    with (
        prism.pipelines.split_recording() as records,
        prism.pipelines.splitting(["numpy", "torch"]) as scope,
    ):
        assert "split=" in repr(scope) and scope.as_dict()["split"]["ops"] is None
        np.testing.assert_allclose(prism.matmul(a, b), a @ b)
        np.testing.assert_allclose(prism.exp(a), np.exp(a))
        np.testing.assert_allclose(prism.matmul(v, v), v @ v)  # 0-d: runs whole, says why
        np.testing.assert_allclose(prism.cumulative_sum(v), np.cumsum(v))  # no rule: as ever
    assert [rec.op for rec in records] == ["matmul", "exp", "matmul"]
    assert records[0].split and records[1].split
    assert not records[2].split and records[2].note.startswith("not split: the product")
    # The split scope's plan runs the split; the plan of the scope without it is the plain
    # fast path, as it was.
    op = prism.get_op("matmul")
    np.testing.assert_allclose(prism.matmul(a, b), a @ b)
    assert op._plans[_key(op, None, (a, b))].fn is not None
    split_plans = [p for k, p in op._plans.items() if k[0] is scope]
    assert split_plans and all(p.fn is None for p in split_plans)
    assert {p.call.__name__ for p in split_plans} == {"split[matmul]"}


def test_a_scope_that_names_its_ops_is_strict() -> None:
    v = np.ones(3)
    with (
        prism.pipelines.splitting(["numpy", "numpy"], ops=["matmul"]),
        pytest.raises(ValueError, match="matmul cannot be split along axis 0"),
    ):
        prism.matmul(v, v)
    with pytest.raises(ValueError, match="'cumulative_sum' has no split rule"):
        prism.pipelines.splitting(["numpy", "numpy"], ops=["cumulative_sum"])


def test_one_target_pins_the_op_and_brings_the_result_home(torch_backend: None) -> None:
    a = rng_arrays()(4, 4)
    with (
        prism.pipelines.split_recording() as records,
        prism.pipelines.splitting(["torch"], ops=["exp"]),
    ):
        got = prism.exp(a)
        other = prism.sqrt(np.abs(a))  # not named: dispatch as usual
    assert isinstance(got, np.ndarray) and isinstance(other, np.ndarray)
    np.testing.assert_allclose(got, np.exp(a))
    (record,) = records
    assert record.axis is None and record.parts[0].backend == "torch"


def test_torch_in_torch_out(torch_backend: None) -> None:
    import torch

    x = torch.randn(10, 6, dtype=torch.float64)
    got = prism.pipelines.split("exp", x, targets=["numpy", "torch"], ratio=[0.6, 0.4])
    assert isinstance(got, torch.Tensor)
    torch.testing.assert_close(got, torch.exp(x))


def test_user_ops_split_by_the_rule_they_declare() -> None:
    name = unique("axpy")

    @prism.extending.operation(name=name, array_args=(0, 1))
    def axpy(x: Any, y: Any) -> Any:
        return 2 * x + y

    rule = prism.pipelines.declare_split_rule(SplitRule(name, "elementwise", (0, 1)))
    assert prism.pipelines.split_rules()[name] is rule
    with pytest.raises(ValueError, match="has a split rule already"):
        prism.pipelines.declare_split_rule(SplitRule(name, "elementwise", (0,)))
    x, y = np.arange(10.0), np.ones(10)
    np.testing.assert_array_equal(
        prism.pipelines.split(name, x, y, targets=["numpy", "numpy"]), 2 * x + 1
    )
    with pytest.raises(ValueError, match="'elementwse' is not a kind of rule"):
        SplitRule(name, "elementwse")


def test_recordings_nest_and_end() -> None:
    with prism.pipelines.split_recording() as outer:
        prism.pipelines.split("exp", np.ones(6), targets=["numpy", "numpy"])
        with prism.pipelines.split_recording() as inner:
            prism.pipelines.split("exp", np.ones(6), targets=["numpy", "numpy"])
    prism.pipelines.split("exp", np.ones(6), targets=["numpy", "numpy"])
    assert len(outer) == 2 and len(inner) == 1 and inner[0] is outer[1]


@given(
    st.integers(min_value=0, max_value=10_000),
    st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=6).filter(
        lambda w: sum(w) > 0
    ),
)
def test_largest_remainder_sizes_sum_exactly(length: int, weights: list[float]) -> None:
    sizes = split_decision.sizes_of(length, weights)
    assert sum(sizes) == length
    total = sum(weights)
    for n, w in zip(sizes, weights, strict=True):
        assert abs(n - length * w / total) < 1 + 1e-9
        if w == 0:
            assert n == 0


def test_balancing_finishes_every_part_together() -> None:
    # Part times a + b*n: the second target is twice as fast, the third has a large fixed cost.
    fits = [(0.0, 2.0), (0.0, 1.0), (1e9, 1.0)]
    shares = split_decision.balance(300, fits)
    assert shares[2] == 0  # never worth its fixed cost
    finish = [a + b * n for (a, b), n in zip(fits[:2], shares[:2], strict=True)]
    assert math.isclose(finish[0], finish[1]) and math.isclose(sum(shares), 300)


def test_a_masked_array_is_refused_before_anything_runs() -> None:
    """The parts would lose the mask (a torch part drops it, NumPy's concatenate too): a sum
    over [1, 2, (1000), 4] came out 1007, not 7."""
    x = np.ma.masked_array([1.0, 2.0, 1000.0, 4.0], mask=[0, 0, 1, 0])
    assert prism.sum(x) == 7.0  # unsplit, NumPy's masked sum
    with pytest.raises(TypeError, match=r"sum: argument 0 is a numpy.ma.MaskedArray, and a "
                       r"split would drop its mask"):  # fmt: skip
        prism.pipelines.split("sum", x, targets=["numpy", "numpy"])
    with pytest.raises(TypeError, match=r"add: argument 1 is a numpy.ma.MaskedArray"):
        prism.pipelines.split("add", x.data, x, targets=["numpy", "numpy"])
