"""A placed function on a backend that compiles (docs/functions.md, "Compiled placements"): on
JAX the body runs through ``jax.jit`` (``Backend.jit``), traced once per shape and static
arguments; a body that cannot be traced runs eagerly there, with the reason; the user's own
errors still reach the caller unchanged.

Whether the body was traced or run is seen from the body itself: it counts the times its
Python code runs (a compiled call runs none of it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import prism_core as prism

#: The installed torch and jax plugins, JAX in its default 32-bit mode (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jax_without_x64", "torch_and_jax")

jax = pytest.importorskip("jax")


def _counted() -> tuple[Any, list[int]]:
    """A placed relaxation whose body counts how often its Python code runs."""
    runs = [0]

    @prism.function
    def relax(u: Any, alpha: float, steps: int) -> Any:
        runs[0] += 1
        for _ in range(steps):
            u = u[1:-1] * alpha + prism.sin(u[:-2] + u[2:])
        return prism.mean(u)

    return relax, runs


def _want(u: np.ndarray, alpha: float, steps: int) -> Any:
    for _ in range(steps):
        u = u[1:-1] * alpha + np.sin(u[:-2] + u[2:])
    return np.mean(u)


def test_a_jax_placement_traces_the_body_once_per_shape() -> None:
    relax, runs = _counted()
    u = np.linspace(0.0, 1.0, 64, dtype=np.float32)
    with prism.use_backend("jax"):
        first, report = relax.run(u, 0.5, 4)
        assert report.compiled == "compiled: traced and compiled on this call"
        again, report = relax.run(u, 0.5, 4)
        assert report.compiled == "compiled"
        relax(u, 0.5, 4)
        assert runs == [1]  # traced once; the compiled calls run none of the Python
        relax(u[:32].copy(), 0.5, 4)  # another shape: traced again
        assert runs == [2]
        relax(u, 0.25, 4)  # another static argument: traced again
        assert runs == [3]
        assert "compiled whole (jax's jit)" in str(relax.explain(u, 0.5, 4))
    np.testing.assert_allclose(first, _want(u, 0.5, 4), rtol=2e-5)
    assert isinstance(first, np.generic | np.ndarray) and float(first) == float(again)


def test_a_backend_without_a_compiler_runs_the_body_every_call() -> None:
    relax, runs = _counted()
    u = np.linspace(0.0, 1.0, 64)
    with prism.use_backend("torch"):
        _, report = relax.run(u, 0.5, 4)
        relax(u, 0.5, 4)
        assert relax.explain(u, 0.5, 4).compiled == ""
    assert report.compiled == "" and runs == [2]


def test_jax_arrays_in_automatic_mode_take_the_compiled_fast_path() -> None:
    import jax.numpy as jnp

    relax, runs = _counted()
    u = jnp.linspace(0.0, 1.0, 64, dtype=jnp.float32)
    results = [relax(u, 0.5, 4) for _ in range(3)]
    assert runs == [1]
    assert all(type(r).__module__.startswith("jax") for r in results)  # jax in, jax out
    np.testing.assert_allclose(np.asarray(results[0]), _want(np.asarray(u), 0.5, 4), rtol=2e-5)


def test_a_body_that_cannot_be_traced_runs_eagerly_with_the_reason() -> None:
    runs = [0]

    @prism.function
    def scaled(u: Any, factor: int) -> Any:
        runs[0] += 1
        if float(prism.sum(u)) > 0:  # a Python branch on a value: not traceable
            return u * factor
        return u

    u = np.arange(8, dtype=np.float32)
    with prism.use_backend("jax"):
        got, report = scaled.run(u, 3)
        assert report.compiled.startswith("eager: not traceable (")
        assert "ConcretizationTypeError" in scaled.eager["jax"]
        assert runs == [2]  # traced once (failed), then run eagerly
        scaled(u, 3)
        assert runs == [3]  # eagerly from then on: never traced again
        assert scaled.explain(u, 3).compiled.startswith("eagerly: not traceable")
    np.testing.assert_array_equal(got, u * 3)


def test_the_users_own_error_reaches_the_caller_and_the_body_stays_compiled() -> None:
    @prism.function
    def checked(u: Any) -> Any:
        if u.shape[0] < 4:  # shapes are known when traced: this is traceable
            raise ValueError("checked() needs at least 4 values")
        return u * 2

    with prism.use_backend("jax"):
        with pytest.raises(ValueError, match="at least 4 values"):
            checked(np.ones(2, dtype=np.float32))
        assert checked.eager == {}
        _, report = checked.run(np.ones(8, dtype=np.float32))
    assert report.compiled.startswith("compiled")


def test_tuning_reports_the_compiled_placements_first_call_apart() -> None:
    @prism.function(backends=["numpy", "jax"])
    def energy(u: Any) -> Any:
        return prism.sum(u * u)

    u = np.linspace(0.0, 1.0, 4097, dtype=np.float32)  # a shape no other test compiles
    report = prism.tuning.tune(energy, u, budget_s=20, progress=False)
    (case,) = report.cases
    (on_jax,) = [m for m in case.measurements if m.backend == "jax"]
    assert on_jax.first_call is not None and on_jax.first_call > on_jax.seconds
    assert "jax compiles per shape" in str(report)


def test_on_the_fast_path_a_body_that_cannot_be_traced_is_traced_once() -> None:
    import jax.numpy as jnp

    runs = [0]

    @prism.function
    def scaled(u: Any) -> Any:
        runs[0] += 1
        return u * 2 if float(u.sum()) > 0 else u  # not traceable

    u = jnp.arange(4, dtype=jnp.float32)
    scaled(u)  # plans: where the arguments live, jax; traced, then run eagerly
    assert runs == [2] and "jax" in scaled.eager
    out = scaled(u)  # the fast path: eagerly, never traced again
    assert runs == [3]
    np.testing.assert_array_equal(np.asarray(out), np.arange(4) * 2)
