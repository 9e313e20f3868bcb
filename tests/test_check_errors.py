"""``prism.choosing(check_errors=...)`` (docs/dispatch.md, "Errors without a stall"): NumPy's
``LinAlgError`` by default; under ``"deferred"`` the torch and JAX variants leave the status
unread and the library's NaN or inf stand for the error.  The GPU's cost is what this saves
(benchmarks/gpu); here the same variants run on the CPU, through the installed plugins."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import prism_core as prism

from .conftest import load_bundled_plugin

#: JAX runs here in its default, 32-bit mode (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jax_without_x64")

SINGULAR = np.zeros((3, 3), dtype=np.float32)
RHS = np.ones(3, dtype=np.float32)


@pytest.fixture(autouse=True)
def _reloaded() -> Iterator[None]:
    """The plugins as they were, after a test that loaded some (``load_bundled_plugin``)."""
    yield
    prism.extending.reload_plugins()


def test_the_setting_is_checked_and_shown() -> None:
    with pytest.raises(ValueError, match=r"check_errors must be one of 'raise', 'deferred'.*"
                                         r"did you mean 'deferred'"):  # fmt: skip
        prism.choosing(check_errors="defered")
    with pytest.raises(ValueError, match="check_errors"):
        prism.choosing(check_errors=True)  # type: ignore[arg-type]
    assert prism.current_scope().check_errors == "raise"
    with prism.choosing(check_errors="deferred"):
        scope = prism.current_scope()
        assert scope.check_errors == "deferred" and scope.as_dict()["check_errors"] == "deferred"
        assert "check_errors='deferred'" in repr(scope)
        text = str(prism.explain("linalg.solve", SINGULAR, RHS))
        assert "errors deferred (the library's NaN or inf, no status read)" in text
    assert "errors deferred" not in str(prism.explain("linalg.solve", SINGULAR, RHS))


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_deferred_errors_give_the_librarys_non_finite_values(backend: str) -> None:
    load_bundled_plugin(backend)
    with prism.use_backend(backend):
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            prism.linalg.solve(SINGULAR, RHS)
        with prism.choosing(check_errors="deferred"):
            solved = prism.to_numpy(prism.linalg.solve(SINGULAR, RHS))
            inverse = prism.to_numpy(prism.linalg.inv(SINGULAR))
    assert not np.isfinite(solved).all() and not np.isfinite(inverse).all()


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_a_regular_system_is_solved_alike_in_both_modes(backend: str) -> None:
    load_bundled_plugin(backend)
    a = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]], dtype=np.float32)
    for rhs in (RHS, np.ones((3, 2), dtype=np.float32), np.ones((2, 3, 3), dtype=np.float32)):
        stacked = np.broadcast_to(a, (*rhs.shape[:-2], 3, 3)) if rhs.ndim == 3 else a
        want = np.linalg.solve(stacked, rhs)
        with prism.use_backend(backend):
            checked = prism.to_numpy(prism.linalg.solve(stacked, rhs))
            with prism.choosing(check_errors="deferred"):
                unchecked = prism.to_numpy(prism.linalg.solve(stacked, rhs))
                factor = prism.to_numpy(prism.linalg.cholesky(a, upper=True))
        np.testing.assert_allclose(checked, want, rtol=1e-5)
        np.testing.assert_allclose(unchecked, want, rtol=1e-5)
        np.testing.assert_allclose(factor, np.linalg.cholesky(a).T, rtol=1e-5)


def test_numpy_still_raises_under_deferred_errors() -> None:
    with prism.use_backend("numpy"), prism.choosing(check_errors="deferred"):
        with pytest.raises(np.linalg.LinAlgError):
            prism.linalg.solve(SINGULAR, RHS)


def test_deferred_errors_let_jax_compile_a_function_that_solves() -> None:
    load_bundled_plugin("jax")

    @prism.function
    def step(a: Any, b: Any) -> Any:
        return prism.linalg.solve(a, b) * 2.0

    a = np.eye(3, dtype=np.float32) * 2.0
    with prism.use_backend("jax"), prism.choosing(check_errors="deferred"):
        got, report = step.run(a, RHS)
    assert report.compiled.startswith("compiled") and step.eager == {}
    np.testing.assert_allclose(got, np.ones(3), rtol=1e-6)
