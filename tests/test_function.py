"""``prism_core.function``: whole functions placed on numpy, torch (CPU) and jax, with real
kernels: arguments moved once, in-place updates seen by the caller on every placement, jax
declined for a mutating body, fallback, explain and the run report."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core import BackendError, FallbackWarning

#: The installed torch and jax plugins, JAX in its default 32-bit mode (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jax_without_x64", "torch_and_jax")

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")

PLACEMENTS = ["numpy", "torch"]


def smooth(a: Any) -> Any:
    """An in-place stencil, as real kernels write it."""
    a[1:-1] = 0.5 * (a[:-2] + a[2:])
    return a.sum()


def expected_smooth(a: np.ndarray) -> tuple[np.ndarray, Any]:
    b = a.copy()
    return b, smooth(b)


@pytest.mark.parametrize("backend", PLACEMENTS)
def test_stencil_updates_the_callers_array_on_every_placement(backend: str) -> None:
    F = prism.function(smooth)
    a = np.random.default_rng(0).random(64)
    want, total = expected_smooth(a)
    with prism.use_backend(backend):
        got, report = F.run(a)
    np.testing.assert_allclose(a, want)
    assert isinstance(got, np.floating | np.ndarray)  # NumPy in, NumPy out
    assert float(got) == pytest.approx(float(total))
    assert report.backend == backend


def test_an_argument_moved_by_copy_is_written_back() -> None:
    F = prism.function(smooth)
    a = np.random.default_rng(1).random(32)[::2]  # strided: still a view torch can share
    b = np.random.default_rng(1).random(16).astype(">f8")  # big-endian: DLPack refuses it
    want, _ = expected_smooth(np.asarray(b))
    with prism.use_backend("torch"):
        _, report = F.run(b)
    np.testing.assert_allclose(b, want)
    assert [m.how for m in report.moves if m.position == 0] == ["copied"]
    assert len(report.write_backs) == 1 and "from torch" in report.write_backs[0]
    want_a, _ = expected_smooth(a)
    with prism.use_backend("torch"):
        _, report = F.run(a)
    np.testing.assert_allclose(a, want_a)
    assert not report.write_backs  # shared by DLPack: updated in place


def test_a_read_only_argument_updated_elsewhere_raises_as_numpy_does() -> None:
    F = prism.function(smooth)
    a = np.random.default_rng(5).random(8)
    a.flags.writeable = False
    for backend in PLACEMENTS:
        with prism.use_backend(backend), pytest.raises(ValueError, match="read-only"):
            F(a)


def test_a_loop_of_small_calls_stays_on_one_placement() -> None:
    @prism.function
    def step(u: Any, v: Any) -> Any:
        u[1:-1] += 0.1 * (v[:-2] - 2 * v[1:-1] + v[2:])
        return u

    rng = np.random.default_rng(2)
    u, v = rng.random(100), rng.random(100)
    u_ref = u.copy()
    for _ in range(20):
        u_ref[1:-1] += 0.1 * (v[:-2] - 2 * v[1:-1] + v[2:])
    with prism.use_backend("torch"):
        for _ in range(20):
            out = step(u, v)
    np.testing.assert_allclose(u, u_ref)
    assert isinstance(out, np.ndarray)


@pytest.mark.parametrize("backend", PLACEMENTS)
def test_creation_functions_make_arrays_on_the_placement(backend: str) -> None:
    seen: list[str] = []

    @prism.function
    def blur(a: Any) -> Any:
        out = prism.zeros(a.shape, dtype=prism.float64)
        seen.append(type(out).__module__.split(".")[0])
        out[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3
        return prism.matmul(out[None, :], out[:, None])

    a = np.random.default_rng(3).random(10)
    with prism.use_backend(backend):
        got = blur(a)
    assert seen == [backend]
    ref = np.zeros(10)
    ref[1:-1] = (a[:-2] + a[1:-1] + a[2:]) / 3
    assert isinstance(got, np.ndarray)
    np.testing.assert_allclose(got, ref[None, :] @ ref[:, None])


def test_nested_arguments_move_and_come_back() -> None:
    @prism.function
    def fold(pair: tuple[Any, Any], named: dict[str, Any], scale: float) -> Any:
        left, right = pair
        named["w"][0] = scale
        return {"sum": left + right, "w": named["w"]}

    x, y, w = np.ones(3), np.arange(3.0), np.zeros(2)
    with prism.use_backend("torch"):
        out = fold((x, y), {"w": w}, 5.0)
    assert isinstance(out["sum"], np.ndarray) and isinstance(out["w"], np.ndarray)
    np.testing.assert_allclose(out["sum"], x + y)
    assert w[0] == 5.0


def test_keep_returns_the_placements_arrays() -> None:
    @prism.function(keep=True)
    def double(a: Any) -> Any:
        return a * 2

    with prism.use_backend("torch"):
        out = double(np.arange(3.0))
    assert isinstance(out, torch.Tensor)


def test_jax_is_declined_for_a_mutating_function_with_the_reason() -> None:
    F = prism.function(smooth)
    a = np.random.default_rng(4).random(16).astype(np.float32)
    with prism.use_backend("jax"), pytest.raises(BackendError, match="jax arrays are immutable"):
        F(a)
    assert "jax" in F.declined
    decision = prism.explain(F, a)
    jax_line = next(c for c in decision.candidates if c.backend == "jax")
    assert not jax_line.ok and "updates arrays in place" in jax_line.reasons[0]
    want, _ = expected_smooth(a)
    F(a)  # automatic: never jax again
    np.testing.assert_allclose(a, want, rtol=1e-6)


def test_jax_is_declined_up_front_for_an_augmented_argument() -> None:
    @prism.function(backends=["jax", "numpy"])
    def bump(a: Any) -> Any:
        a += 1
        return a

    a = np.zeros(3, dtype=np.float32)
    decision = bump.explain(a)
    assert decision.chosen == "numpy"
    assert any("+=" in r for c in decision.candidates if c.backend == "jax" for r in c.reasons)
    bump(a)
    assert a.tolist() == [1.0, 1.0, 1.0]


def test_a_pure_function_runs_on_jax() -> None:
    @prism.function
    def energy(x: Any, y: Any) -> Any:
        return (x * y).sum() + prism.matmul(x[None, :], y[:, None])[0, 0]

    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, dtype=np.float32)
    with prism.use_backend("jax"):
        got, report = energy.run(x, y)
    assert report.backend == "jax"
    assert isinstance(got, np.generic | np.ndarray)
    assert float(got) == pytest.approx(12.0)


def test_a_backend_error_falls_back_with_a_warning() -> None:
    @prism.function
    def as_float(x: Any) -> Any:
        return x.astype("float32") * 2  # NumPy's spelling: a torch tensor has no astype

    t = torch.arange(4.0)
    with pytest.warns(FallbackWarning, match="as_float"):
        out = as_float(t)
    assert isinstance(out, torch.Tensor)  # torch in, torch out
    assert out.tolist() == [0.0, 2.0, 4.0, 6.0]
    assert any(r.op.endswith("as_float") for r in prism.fallbacks())
    decision = as_float.explain(t)
    assert decision.chosen == "numpy" and "torch failed earlier" in decision.basis
    with prism.use_backend("torch"), pytest.raises(BackendError, match="torch"):
        as_float(t)


def test_the_users_own_exceptions_reach_the_caller_unchanged() -> None:
    class Mine(Exception):
        pass

    @prism.function
    def fails(x: Any) -> Any:
        raise Mine("mine")

    @prism.function
    def runtime(x: Any) -> Any:
        raise RuntimeError("also mine")

    with pytest.raises(Mine, match="mine"):
        fails(np.ones(2))
    with pytest.raises(RuntimeError, match="also mine"):
        runtime(np.ones(2))
    with pytest.raises(ValueError, match="reshape"):
        prism.function(lambda x: x.reshape(7))(np.ones(2))


def test_requirements_and_backends_narrow_the_candidates() -> None:
    F = prism.function(smooth, backends=["torch"])
    a = np.ones(4)
    decision = F.explain(a)
    assert decision.chosen == "torch"
    numpy_line = next(c for c in decision.candidates if c.backend == "numpy")
    assert "not in backends" in numpy_line.reasons[0]
    G = prism.function(smooth, requires={"kind": "gpu"})
    assert G.explain(a).chosen is None
    with pytest.raises(prism.DispatchError, match="requirement unmet"):
        G(a)


def test_explain_lists_every_candidate_with_its_reason() -> None:
    F = prism.function(smooth)
    decision = prism.explain(F, np.ones(4))
    assert decision.chosen == "numpy" and decision.basis == "where the arguments live"
    reasons = {c.backend: c.reasons for c in decision.candidates}
    assert reasons["torch"] == ()
    assert any("float64" in r for r in reasons["jax"])
    text = str(decision)
    assert "runs on: numpy" in text and "- jax" in text
    moved = F.explain(torch.ones(4))
    assert moved.chosen == "torch" and not moved.data_movement


def test_threads_racing_on_the_placement_cache() -> None:
    F = prism.function(smooth)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        try:
            barrier.wait()
            dtype = (np.float32, np.float64)[i % 2]
            for _ in range(50):
                a = np.arange(8, dtype=dtype) ** 2
                want, _ = expected_smooth(a)
                if i % 4 == 3:
                    with prism.use_backend("torch"):
                        F(a)
                else:
                    F(a)
                np.testing.assert_allclose(a, want, rtol=1e-6)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_jax_arguments_to_a_mutating_function_fall_back_and_stay_jax() -> None:
    import jax.numpy as jnp

    F = prism.function(smooth)
    x = jnp.arange(6, dtype=jnp.float32) ** 2
    with pytest.warns(FallbackWarning, match="immutable"):
        total = F(x)
    assert F.declined == {"jax": "updates arrays in place; jax arrays are immutable"}
    assert type(total).__module__.startswith("jax")  # jax in, jax out
    assert x.tolist() == [0.0, 1.0, 4.0, 9.0, 16.0, 25.0]  # a jax array never changes


def test_keyword_arguments_and_no_arrays_at_all() -> None:
    @prism.function
    def ramp(n: int, *, scale: Any) -> Any:
        out = prism.arange(n, dtype=prism.float64)
        return out * scale

    with prism.use_backend("torch"):
        got = ramp(4, scale=np.float64(2.0))
    assert isinstance(got, np.ndarray)  # no array in: NumPy out
    assert got.tolist() == [0.0, 2.0, 4.0, 6.0]
    w = np.ones(3)

    @prism.function
    def fill(*, out: Any) -> None:
        out[:] = 7

    with prism.use_backend("torch"):
        fill(out=w)
    assert w.tolist() == [7.0, 7.0, 7.0]


def test_a_simulated_device_is_planned_for_and_the_body_runs_here() -> None:
    F = prism.function(smooth)
    a = np.random.default_rng(6).random(8)
    want, _ = expected_smooth(a)
    with prism.device("nvidia.h100-pcie", simulate=True):
        decision = F.explain(a)
        F(a)
    assert decision.chosen == "torch" and decision.chosen_device == "nvidia.h100-pcie"
    assert any("copied" in m for m in decision.data_movement)
    np.testing.assert_allclose(a, want)


def test_asyncio_tasks_each_keep_their_scope() -> None:
    import asyncio

    @prism.function
    def where(a: Any) -> str:
        a[0] = 1.0
        return type(prism.zeros(1, dtype=prism.float64)).__module__.split(".")[0]

    async def one(backend: str | None) -> tuple[str, float]:
        a = np.zeros(4)
        await asyncio.sleep(0)
        if backend is None:
            return where(a), float(a[0])
        with prism.use_backend(backend):
            await asyncio.sleep(0)
            return where(a), float(a[0])

    async def main() -> list[tuple[str, float]]:
        return await asyncio.gather(*(one(b) for b in [None, "torch", "numpy", "torch"] * 3))

    got = asyncio.run(main())
    assert got == [("numpy", 1.0), ("torch", 1.0), ("numpy", 1.0), ("torch", 1.0)] * 3


def test_a_lenient_stage_runs_what_its_placement_cannot_elsewhere() -> None:
    """A stage that prefers a backend is lenient (docs/pipelines.md): a placed function its
    placement cannot run runs in automatic dispatch, reported, and no update is lost."""

    @prism.function
    def smooth_in_place(a: Any) -> Any:
        a[1:-1] = 0.5 * (a[:-2] + a[2:])
        return a.sum()

    a = np.arange(6, dtype=np.float32) ** 2
    expected = a.copy()
    expected[1:-1] = 0.5 * (expected[:-2] + expected[2:])
    with pytest.warns(prism.FallbackWarning, match="ran in automatic dispatch"):
        with prism.stage("smoothing", preferred_backend="jax") as stage:
            total = smooth_in_place(a)
    np.testing.assert_array_equal(a, expected)  # the update is the caller's, once
    assert float(total) == float(expected.sum())
    (fell,) = stage.report.fallbacks
    assert "smooth_in_place" in fell.op and "jax arrays are immutable" in fell.error
    with prism.stage("smoothing", preferred_backend="jax", dispatch="strict"):
        # Strict: no rescue (jax is declined for this function by now: nothing can run it).
        with pytest.raises(prism.DispatchError, match="jax arrays are immutable"):
            smooth_in_place(a)


def test_torch_placements_promote_python_floats_as_numpy_does() -> None:
    """On torch, an integer tensor times a Python float is float32 by torch's default; the
    body of a placed function runs with NumPy's rule (float64, complex128)."""
    import torch

    @prism.function
    def scaled(n: int) -> Any:
        i = prism.arange(n)  # int64, made on the placement
        return i * 0.5, -2.0j * i

    with prism.use_backend("torch"):
        half, turned = scaled(4)
    want_half, want_turned = np.arange(4) * 0.5, -2.0j * np.arange(4)
    assert half.dtype == want_half.dtype and turned.dtype == want_turned.dtype
    np.testing.assert_array_equal(half, want_half)
    np.testing.assert_array_equal(turned, want_turned)
    assert torch.get_default_dtype() is torch.float32  # torch's own default, put back


def test_torch_bodies_in_threads_share_numpy_defaults_until_the_last_leaves() -> None:
    import torch

    entered, release = threading.Event(), threading.Event()
    seen: list[Any] = []

    @prism.function
    def waits(x: Any) -> Any:
        entered.set()
        release.wait(timeout=30)
        seen.append(torch.get_default_dtype())  # after the other thread's body has left
        return x * 0.5

    @prism.function
    def quick(x: Any) -> Any:
        return x * 0.5

    def first() -> None:
        with prism.use_backend("torch"):
            waits(np.arange(3))

    thread = threading.Thread(target=first)
    thread.start()
    assert entered.wait(timeout=30)
    with prism.use_backend("torch"):
        assert quick(np.arange(3)).dtype == np.float64
    release.set()
    thread.join(timeout=30)
    assert seen == [torch.float64]
    assert torch.get_default_dtype() is torch.float32
