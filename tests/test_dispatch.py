"""Dispatch: selection by capabilities, scopes, the decision cache, fallback, explain, interop.

Selection on accelerators is tested with simulated devices (their descriptions are real; the
hardware is not here) and the test-only ``loopback`` plugin (tests/loopback_plugin.py), found
through a real ``prism.plugins`` entry point put on ``sys.path``.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import logging
import threading
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core import ArraySpec

_names = itertools.count()


def unique(prefix: str) -> str:
    """Ops are process-wide: each test declares its own names."""
    return f"{prefix}_{next(_names)}"


# -- the catalogue through the dispatcher ---------------------------------------------------


def test_matmul_runs_the_numpy_reference_on_this_host() -> None:
    a = np.arange(16.0).reshape(4, 4)
    np.testing.assert_array_equal(prism.matmul(a, a), a @ a)
    decision = prism.explain("matmul", a, a)
    assert decision.chosen == "numpy.matmul" and decision.chosen_backend == "numpy"
    host = prism.hardware.present_devices().devices[0].description.device_type
    assert decision.chosen_device == host
    assert decision.simulated is False
    assert decision.from_cache is True  # the call above cached the plan


def test_old_names_are_aliases() -> None:
    assert prism.matrix_multiply is prism.matmul
    assert prism.vector_add is prism.add
    assert prism.inverse is prism.linalg.inv
    assert prism.eigendecomposition is prism.linalg.eig


def test_caller_errors_reach_the_caller_unchanged() -> None:
    with pytest.raises(ValueError, match="matmul"):
        prism.matmul(np.ones((2, 3)), np.ones((2, 3)))
    assert prism.fallbacks() == [] or all(r.op != "matmul" for r in prism.fallbacks())


# -- selection on simulated devices ---------------------------------------------------------


@pytest.mark.usefixtures("loopback")
def test_simulated_h100_chooses_the_tensor_core_variant() -> None:
    a = ArraySpec((4096, 4096), "float16")
    with prism.device("nvidia.h100-sxm", simulate=True):
        decision = prism.explain("matmul", a, a)
        result = prism.matmul(np.ones((2, 2), np.float16), np.ones((2, 2), np.float16))
    assert decision.chosen == "loopback.tensor_core_matmul"
    assert decision.chosen_device == "nvidia.h100-sxm"
    assert decision.simulated and decision.executed == "numpy.matmul"
    numpy_verdict = next(c for c in decision.candidates if c.variant == "numpy.matmul")
    assert not numpy_verdict.accepted
    assert "'numpy' does not drive nvidia.h100-sxm" in numpy_verdict.reasons[0]
    np.testing.assert_array_equal(result, np.full((2, 2), 2, np.float16))


@pytest.mark.usefixtures("loopback")
def test_requirements_and_dtype_support_reject_with_reasons() -> None:
    fp64 = ArraySpec((8, 8), "float64")
    with prism.device("nvidia.l4", simulate=True):  # Ada: no fp64 on its tensor cores
        decision = prism.explain("matmul", fp64, fp64)
    assert decision.chosen is None
    tc = next(c for c in decision.candidates if c.variant == "loopback.tensor_core_matmul")
    assert tc.reasons == ("nvidia.l4: no feature accelerates matmul in fp64",)
    with prism.device("amd.mi300x", simulate=True):
        decision = prism.explain(
            "matmul", ArraySpec((8, 8), "float16"), ArraySpec((8, 8), "float16")
        )
    tc = next(c for c in decision.candidates if c.variant == "loopback.tensor_core_matmul")
    assert "amd.mi300x: amd.mi300x has no feature or attribute 'tensor_cores'" in tc.reasons[0]
    with prism.device("generic.x86-64-v3", simulate=True):
        decision = prism.explain("matmul", fp64, fp64)
    assert decision.chosen == "numpy.matmul"
    tc = next(c for c in decision.candidates if c.variant == "loopback.tensor_core_matmul")
    assert "kind is 'cpu', required 'gpu'" in tc.reasons[0]


def test_naming_an_absent_device_is_an_error() -> None:
    with pytest.raises(prism.DeviceNotPresentError, match="simulate=True") as info:
        with prism.device("nvidia.h100-sxm"):
            pass  # pragma: no cover
    assert "not present on this host" in str(info.value)
    with pytest.raises(prism.hardware.UnknownDeviceError, match=r"did you mean 'nvidia\.h100-sxm'"):
        with prism.device("nvidia.h100-sx", simulate=True):
            pass  # pragma: no cover


def test_a_present_family_can_be_named() -> None:
    host = prism.hardware.present_devices().devices[0].description
    family = host.lineage[-1]  # e.g. generic.x86-64
    with prism.device(family) as scope:
        assert scope.device is not None and scope.device.device_type == host.device_type
        assert not scope.simulated
        np.testing.assert_array_equal(prism.add(np.ones(3), np.ones(3)), np.full(3, 2.0))


def test_use_backend_is_strict_about_names() -> None:
    with pytest.raises(prism.extending.PluginError, match="did you mean 'numpy'"):
        with prism.use_backend("numpi"):
            pass  # pragma: no cover
    with prism.use_numpy_backend() as scope:
        assert scope.backend == "numpy"
        assert prism.explain("matmul", np.ones((2, 2)), np.ones((2, 2))).chosen == "numpy.matmul"


# -- ranking, user ops, kernels, can_run ----------------------------------------------------


def test_user_op_with_variants_ranked_by_the_documented_key() -> None:
    name = unique("axpy")

    @prism.extending.operation(name=name, array_args=(1, 2))
    def axpy(a: float, x: Any, y: Any) -> Any:
        """a * x + y"""
        return a * x + y

    calls: list[str] = []

    @axpy.variant(requires={"kind": "cpu"}, priority=1, name=f"{name}.cpu_b")
    def cpu_b(a: float, x: Any, y: Any) -> Any:
        calls.append("b")
        return a * x + y

    @axpy.variant(requires={"kind": "cpu"}, priority=1, name=f"{name}.cpu_a")
    def cpu_a(a: float, x: Any, y: Any) -> Any:
        calls.append("a")
        return a * x + y

    @prism.extending.kernel(
        axpy, requires={"kind": "cpu", "compute_units": False}, priority=1, name=f"{name}.specific"
    )
    def specific(a: float, x: Any, y: Any) -> Any:
        calls.append("specific")
        return a * x + y

    x = np.arange(3.0)
    np.testing.assert_array_equal(axpy(2.0, x, x), 3 * x)
    # Equal priority: the most specific requirement first, then the name.
    decision = prism.explain(axpy, 2.0, x, x)
    order = [c.variant for c in decision.candidates if c.accepted]
    assert order == [f"{name}.specific", f"{name}.cpu_a", f"{name}.cpu_b", f"{name}.reference"]
    assert calls == ["specific"]
    with prism.choosing(prefer="reference"):
        assert prism.explain(axpy, 2.0, x, x).chosen == f"{name}.reference"


def test_kernel_fallback_ranks_last() -> None:
    name = unique("norm")

    @prism.extending.operation(name=name)
    def norm(x: Any) -> Any:
        return np.sqrt((x * x).sum())

    @prism.extending.kernel(norm, fallback=True, name=f"{name}.anywhere")
    def anywhere(x: Any) -> Any:
        return np.linalg.norm(x)

    decision = prism.explain(norm, np.ones(4))
    assert [c.variant for c in decision.candidates] == [f"{name}.reference", f"{name}.anywhere"]


def test_can_run_is_checked_per_call() -> None:
    name = unique("scale")

    @prism.extending.operation(name=name, array_args=(0,))
    def scale(x: Any) -> Any:
        return x * 2

    def big_only(x: Any) -> bool | str:
        return True if x.size >= 100 else f"size {x.size} < 100"

    @scale.variant(priority=5, can_run=big_only, name=f"{name}.big")
    def big(x: Any) -> Any:
        return x + x

    small, large = np.ones(10), np.ones(1000)
    assert prism.explain(scale, small).chosen == f"{name}.reference"
    verdict = next(c for c in prism.explain(scale, small).candidates if c.variant == f"{name}.big")
    assert verdict.reasons == ("can_run: size 10 < 100",)
    assert prism.explain(scale, large).chosen == f"{name}.big"
    assert prism.explain(scale, ArraySpec((10, 10))).chosen == f"{name}.big"
    np.testing.assert_array_equal(scale(small), small * 2)
    np.testing.assert_array_equal(scale(large), large * 2)


# -- fallback -------------------------------------------------------------------------------


def _flaky_op() -> tuple[prism.Op, list[str]]:
    name = unique("flaky")
    ran: list[str] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def flaky(x: Any) -> Any:
        ran.append("reference")
        return x + 1

    @flaky.variant(priority=5, name=f"{name}.broken")
    def broken(x: Any) -> Any:
        ran.append("broken")
        raise RuntimeError("device lost")

    return flaky, ran


def test_backend_failure_falls_back_warns_once_and_records() -> None:
    flaky, ran = _flaky_op()
    prism.reset_fallbacks()
    with pytest.warns(
        prism.FallbackWarning, match=r"broken failed \(RuntimeError: device lost\); falling back"
    ):
        np.testing.assert_array_equal(flaky(np.zeros(2)), np.ones(2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(flaky(np.zeros(2)), np.ones(2))
    # The failed variant is not retried for this signature: the plan moved on.
    assert ran == ["broken", "reference", "reference"]
    (record,) = [r for r in prism.fallbacks() if r.op == flaky.name]
    assert record.variant == f"{flaky.name}.broken"
    assert record.fell_back_to == f"{flaky.name}.reference"
    assert record.error == "RuntimeError: device lost"
    decision = prism.explain(flaky, np.zeros(2))
    assert decision.chosen == f"{flaky.name}.reference"


def test_named_backend_or_strict_mode_raises() -> None:
    flaky, _ = _flaky_op()
    with (
        prism.use_backend("numpy"),
        pytest.raises(prism.BackendError, match="backend 'numpy' was named") as info,
    ):
        flaky(np.zeros(2))
    assert isinstance(info.value.__cause__, RuntimeError)
    flaky2, _ = _flaky_op()
    with prism.choosing(strict=True), pytest.raises(prism.BackendError, match="strict mode"):
        flaky2(np.zeros(2))


def test_caller_errors_never_fall_back() -> None:
    name = unique("picky")

    @prism.extending.operation(name=name, array_args=(0,))
    def picky(x: Any) -> Any:
        return x

    @picky.variant(priority=5, name=f"{name}.typed")
    def typed(x: Any) -> Any:
        raise TypeError("x must be float32")

    with pytest.raises(TypeError, match="x must be float32"):
        picky(np.zeros(2))
    assert all(r.op != name for r in prism.fallbacks())


# -- scopes ---------------------------------------------------------------------------------


def test_scopes_nest_and_are_restored_on_exceptions() -> None:
    base = prism.current_scope()
    with pytest.raises(KeyError):
        with prism.device("nvidia.h100-sxm", simulate=True):
            with prism.use_backend("numpy"):
                inner = prism.current_scope()
                assert inner.device is not None and inner.backend == "numpy"
                raise KeyError("boom")
    assert prism.current_scope() is base


def test_scopes_are_per_thread_and_per_task() -> None:
    seen: dict[str, Any] = {}
    with prism.device("nvidia.h100-sxm", simulate=True):
        # A new thread starts with an empty context: the process default.
        t = threading.Thread(target=lambda: seen.setdefault("thread", prism.current_scope().device))
        t.start()
        t.join()
        # ... unless the caller hands its context over.
        ctx = contextvars.copy_context()
        t = threading.Thread(
            target=lambda: seen.setdefault("copied", ctx.run(lambda: prism.current_scope().device))
        )
        t.start()
        t.join()
    assert seen["thread"] is None
    assert seen["copied"].device_type == "nvidia.h100-sxm"

    async def in_task(device_type: str) -> str:
        with prism.device(device_type, simulate=True):
            await asyncio.sleep(0.01)
            dev = prism.current_scope().device
            assert dev is not None
            return dev.device_type

    async def both() -> list[str]:
        return list(await asyncio.gather(in_task("nvidia.h100-sxm"), in_task("amd.mi300x")))

    assert asyncio.run(both()) == ["nvidia.h100-sxm", "amd.mi300x"]


def test_set_backend_is_the_process_default() -> None:
    try:
        prism.set_backend("numpy")
        assert prism.current_scope().backend == "numpy"
        t_seen: list[Any] = []
        t = threading.Thread(target=lambda: t_seen.append(prism.current_scope().backend))
        t.start()
        t.join()
        assert t_seen == ["numpy"]
    finally:
        prism.set_backend(None)
    assert prism.current_scope().backend is None


def test_policy_rejects_unknown_preferences() -> None:
    with pytest.raises(ValueError, match="did you mean 'reference'"):
        with prism.choosing(prefer="referenc"):
            pass  # pragma: no cover


# -- the decision cache ---------------------------------------------------------------------


def test_decisions_are_cached_and_invalidated() -> None:
    name = unique("cached")

    @prism.extending.operation(name=name, array_args=(0,))
    def cached(x: Any) -> Any:
        return x

    x = np.ones(2)
    assert prism.explain(cached, x).from_cache is False
    assert prism.explain(cached, x).from_cache is True
    assert prism.explain(cached, [1.0, 2.0]).from_cache is False  # another argument type
    # Dtypes are part of the key only once a variant depends on them (dtype_support).
    assert prism.explain(cached, x.astype(np.float32)).from_cache is True
    with prism.device("nvidia.h100-sxm", simulate=True):
        assert prism.explain(cached, x).from_cache is False  # another scope

    @cached.variant(priority=3, name=f"{name}.new")
    def new(x: Any) -> Any:
        return x

    decision = prism.explain(cached, x)
    assert decision.from_cache is False and decision.chosen == f"{name}.new"

    @cached.variant(priority=4, dtype_support=True, name=f"{name}.accelerated")
    def accelerated(x: Any) -> Any:
        return x

    assert prism.explain(cached, x).from_cache is False
    assert prism.explain(cached, x).from_cache is True
    assert prism.explain(cached, x.astype(np.float32)).from_cache is False
    verdict = next(
        c for c in prism.explain(cached, x).candidates if c.variant == f"{name}.accelerated"
    )
    assert verdict.reasons[0].endswith(f"no feature accelerates {name} in fp64")


def test_decisions_are_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    name = unique("logged")

    @prism.extending.operation(name=name, array_args=(0,))
    def logged(x: Any) -> Any:
        return x

    with caplog.at_level(logging.DEBUG, logger="prism_core"):
        logged(np.ones(1))
    assert any(
        f"dispatch {name}" in r.getMessage() and f"{name}.reference" in r.getMessage()
        for r in caplog.records
    )


# -- interop --------------------------------------------------------------------------------


class ForeignArray:
    """An array type from "another library": it speaks only the DLPack protocol."""

    def __init__(self, data: np.ndarray) -> None:
        self._data = data
        self.dtype = data.dtype
        self.shape = data.shape

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()


def test_foreign_arrays_move_through_dlpack_and_it_is_recorded() -> None:
    a = np.arange(4.0).reshape(2, 2)
    foreign = ForeignArray(a)
    np.testing.assert_array_equal(prism.matmul(foreign, a), a @ a)
    decision = prism.explain("matmul", foreign, a)
    (move,) = decision.data_movement
    assert move.startswith(
        "argument 0: tests.test_dispatch.ForeignArray float64[2x2] (32 B) -> numpy on "
    )
    assert move.endswith(
        "host memory on both sides: shared through DLPack where it allows, else copied"
    )
    assert prism.explain("matmul", a, a).data_movement == ()


def test_explain_text_and_dict() -> None:
    a = ArraySpec((3, 3), "float32")
    with prism.device("nvidia.h100-sxm", simulate=True):
        decision = prism.explain("matmul", a, a)
    text = str(decision)
    assert text.startswith("matmul(float32[3x3], float32[3x3])")
    assert "(simulated)" in text
    data = decision.as_dict()
    assert data["scope"]["device"] == "nvidia.h100-sxm" and data["simulated"] is True
    assert {c["variant"] for c in data["candidates"]} >= {"numpy.matmul"}


def test_explain_refuses_fewer_arrays_than_the_op_takes() -> None:
    """A decision for ``matmul(a)`` judged every candidate on an argument that is not there."""
    a = ArraySpec((4, 4), "float64")
    message = r"matmul takes 2 arrays \(x1, x2\); 1 given, x2 missing: explain a call"
    with pytest.raises(TypeError, match=message):
        prism.explain("matmul", a)
    with pytest.raises(TypeError, match=message):
        prism.matmul.explain(np.ones((4, 4)))
    with pytest.raises(TypeError, match=r"clip takes 1 to 3 arrays \(x; min, max optional\)"):
        prism.explain("clip")
    assert prism.explain("clip", a, max=a).signature == ("float64[4x4]",)  # min, max optional

    # A user's op: its reference function's signature says which arrays it needs.
    name = unique("axpy")

    @prism.extending.operation(name=name, array_args=(0, 1, 2))
    def axpy(x: Any, y: Any, w: Any = None) -> Any:
        return 2 * x + y if w is None else 2 * x + y * w

    with pytest.raises(TypeError, match=rf"{name} takes 2 to 3 arrays \(x, y; w optional\)"):
        prism.explain(name, a)
    assert prism.explain(name, a, y=a).chosen is not None
    assert prism.explain(name, a, a).chosen is not None


def test_warnings_raised_as_errors_are_the_callers() -> None:
    from prism_core.kernel.dispatch import fallback as _dispatch

    assert Warning in _dispatch.CALLER_ERRORS


def test_simulation_without_an_eligible_variant_still_executes_the_reference() -> None:
    """Only the NumPy plugin is installed: nothing would run matmul on an H100, and the decision
    says so, but a simulated call still computes (on the reference)."""
    a = np.ones((2, 2))
    with prism.device("nvidia.h100-sxm", simulate=True):
        decision = prism.explain("matmul", a, a)
        np.testing.assert_array_equal(prism.matmul(a, a), a @ a)
    assert decision.chosen is None
    assert decision.executed == "numpy.matmul"
    assert "chosen: none: no installed variant can run here" in str(decision)


def test_reloading_devices_drops_cached_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A user file that redefines the host's description changes the decision at once."""
    name = unique("reloaded")

    @prism.extending.operation(name=name, array_args=(0,))
    def reloaded(x: Any) -> Any:
        return x

    def tuned(x: Any) -> Any:
        return x

    # No description declares the attribute yet: registering says so.
    with pytest.warns(prism.PrismWarning, match="'attribute:lab_tuned', which no device"):
        reloaded.variant(
            tuned, requires={"attribute:lab_tuned": True}, priority=5, name=f"{name}.tuned"
        )

    x = np.ones(2)
    assert prism.explain(reloaded, x).chosen == f"{name}.reference"
    host = prism.hardware.present_devices().devices[0].description
    # The host's own description, redefined: same parents (so it still matches), one more
    # attribute.  (A root description such as generic.aarch64 is matched as the fallback.)
    extends = f"extends: {list(host.parents)}\n" if host.parents else ""
    (tmp_path / "host.yaml").write_text(
        f"device_type: {host.device_type}\n{extends}kind: cpu\nattributes: {{lab_tuned: true}}\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("PRISM_HARDWARE_PATH", str(tmp_path))
    prism.hardware.reload_devices()
    decision = prism.explain(reloaded, x)
    assert decision.from_cache is False
    assert decision.chosen == f"{name}.tuned"
    monkeypatch.delenv("PRISM_HARDWARE_PATH")
    prism.hardware.reload_devices()


@pytest.mark.usefixtures("loopback")
def test_arguments_move_for_the_variant_that_runs() -> None:
    """NumPy arrays stay with NumPy in automatic mode, although a variant of higher priority
    (``wrapped.add``) exists: it would have to move them.  Named, that backend gets the arrays
    moved, and a call it declines (too small) has nothing else to run on."""
    from tests.loopback_plugin import Wrapped

    small, big = np.ones(4), np.ones(1000)
    for x in (small, big):
        result = prism.add(x, x)
        assert type(result) is np.ndarray
        np.testing.assert_array_equal(result, np.full(x.shape, 2.0))
        decision = prism.explain("add", x, x)
        assert decision.chosen == "numpy.add" and decision.data_movement == ()
    with prism.use_backend("wrapped"):
        moved = prism.add(big, big)
        decision = prism.explain("add", big, big)
        with pytest.raises(prism.DispatchError, match=r"wrapped.add: too small \(4 elements\)"):
            prism.add(small, small)
    assert isinstance(moved, Wrapped)
    np.testing.assert_array_equal(moved.data, np.full(1000, 2.0))
    assert decision.chosen == "wrapped.add"
    assert [m.split(" (")[0] for m in decision.data_movement] == [
        "argument 0: numpy.ndarray float64[1000]",
        "argument 1: numpy.ndarray float64[1000]",
    ]


@pytest.mark.usefixtures("loopback")
def test_a_simulated_call_that_every_candidate_declines_runs_the_reference() -> None:
    small = np.ones(4)
    with prism.device("nvidia.h100-sxm", simulate=True):
        decision = prism.explain("add", small, small)
        np.testing.assert_array_equal(prism.add(small, small), np.full(4, 2.0))
    assert decision.chosen is None
    assert decision.executed == "numpy.add"
    verdict = next(c for c in decision.candidates if c.variant == "wrapped.add")
    assert verdict.reasons == ("can_run: too small (4 elements)",)
