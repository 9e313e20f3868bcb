"""Through Prism's dispatcher, in automatic mode: NumPy arrays in, NumPy results out, the
scipy variants first where they take the call, and ``explain`` saying so."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest

import prism_core

RNG = np.random.default_rng(7)


def _candidates(decision: prism_core.Decision) -> list[tuple[str, bool]]:
    return [(c.variant, c.accepted) for c in decision.candidates]


def test_svd_runs_on_scipy_and_returns_numpys_result() -> None:
    a = RNG.normal(size=(80, 60))
    decision = prism_core.explain("linalg.svd", a)
    assert decision.chosen == "scipy.linalg.svd"
    assert decision.chosen_backend == "scipy"
    assert _candidates(decision)[:2] == [("scipy.linalg.svd", True), ("numpy.linalg.svd", True)]
    assert decision.data_movement == ()  # NumPy arrays stay where they are
    result = prism_core.linalg.svd(a)
    expected = np.linalg.svd(a)
    assert type(result) is type(expected)
    assert all(type(x) is np.ndarray for x in result)
    assert [x.shape for x in result] == [x.shape for x in expected]
    np.testing.assert_allclose(result.S, expected.S, rtol=1e-10)
    assert prism_core.explain("linalg.svd", a).executed == "scipy.linalg.svd"


@pytest.mark.parametrize(
    ("op", "args", "variant"),
    [
        ("linalg.solve", (np.eye(70) * 3 + 0.1, RNG.normal(size=70)), "scipy.linalg.solve"),
        ("linalg.inv", (np.eye(5) * 2,), "scipy.linalg.inv"),
        ("fft.fft", (RNG.normal(size=1024),), "scipy.fft.fft"),
        ("fft.ifft", (RNG.normal(size=(8, 256)),), "scipy.fft.ifft"),
        ("fft.rfft", (RNG.normal(size=1024).astype("float32"),), "scipy.fft.rfft"),
        ("convolve", (RNG.normal(size=50_000), RNG.normal(size=2_000)), "scipy.convolve"),
    ],
)
def test_each_op_runs_on_scipy_where_it_takes_the_call(
    op: str, args: tuple[np.ndarray, ...], variant: str
) -> None:
    function = prism_core.get_op(op).function
    result = function(*args)
    decision = prism_core.explain(op, *args)
    assert decision.chosen == variant
    assert decision.executed == variant
    reference = next(v for v in prism_core.get_op(op).variants if v.reference).resolve()
    expected = reference(*args)
    if isinstance(expected, tuple):
        assert type(result) is type(expected)
        expected, result = expected[0], result[0]
    assert type(result) is np.ndarray
    assert result.dtype == expected.dtype and result.shape == expected.shape
    rtol = 1e-4 if args[0].dtype == np.float32 else 1e-9
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=rtol * np.abs(expected).max())


@pytest.mark.parametrize(
    ("op", "args", "reason"),
    [
        ("linalg.svd", (np.arange(16).reshape(4, 4),), "not int64"),
        ("matmul", (np.ones((2, 3, 4)), np.ones((4, 2))), "not 3-D by 2-D"),
        ("convolve", (np.ones(1000), np.ones(8)), "too short for an FFT to beat NumPy"),
        ("convolve", (np.ones(100_000, "int32"), np.ones(5000, "int32")), "integers exactly"),
        ("fft.rfft", (np.ones(64, complex),), "rfft takes real"),
    ],
)
def test_numpy_computes_what_scipy_declines_and_explain_says_why(
    op: str, args: tuple[np.ndarray, ...], reason: str
) -> None:
    decision = prism_core.explain(op, *args)
    assert decision.chosen == f"numpy.{op}"
    scipy_candidate = next(c for c in decision.candidates if c.backend == "scipy")
    assert any(reason in r for r in scipy_candidate.reasons), scipy_candidate.reasons
    assert f"scipy.{op}" in str(decision)
    function = prism_core.get_op(op).function
    if op == "fft.rfft":
        with pytest.raises(TypeError):
            function(*args)  # NumPy's own error: rfft of complex input
        return
    reference = next(v for v in prism_core.get_op(op).variants if v.reference).resolve()
    expected, result = reference(*args), function(*args)
    if isinstance(expected, tuple):
        expected, result = expected[1], result[1]
    np.testing.assert_array_equal(result, expected)


def test_a_callers_mistake_reaches_the_caller_as_numpys_error() -> None:
    singular = np.array([[1.0, 2.0], [2.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no FallbackWarning: nothing failed but the caller
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            prism_core.linalg.inv(singular)
        with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
            prism_core.linalg.solve(singular, np.ones(2))
        with pytest.raises(ValueError, match="mismatch in its core dimension"):
            prism_core.matmul(np.ones((2, 3)), np.ones((4, 2)))
    assert prism_core.fallbacks() == []


@pytest.mark.parametrize(
    ("op", "args"),
    [
        ("matmul", (RNG.normal(size=(30, 40)), RNG.normal(size=(40, 20)))),
        ("linalg.eigh", (np.eye(5) * 2,)),
        ("linalg.eig", (np.diag([1.0, 2.0, 3.0]),)),
    ],
)
def test_ops_only_as_fast_as_numpy_run_where_scipy_is_named(
    op: str, args: tuple[np.ndarray, ...]
) -> None:
    automatic = prism_core.explain(op, *args)
    assert automatic.chosen == f"numpy.{op}"  # priority -1, below NumPy's reference
    assert (f"scipy.{op}", True) in _candidates(automatic)  # eligible, ranked after NumPy
    function = prism_core.get_op(op).function
    with prism_core.use_backend("scipy"):
        named = prism_core.explain(op, *args)
        result = function(*args)
    assert named.chosen == f"scipy.{op}"
    reference = next(v for v in prism_core.get_op(op).variants if v.reference).resolve()
    expected = reference(*args)
    if isinstance(expected, tuple):
        assert type(result) is type(expected)
        expected, result = expected[0], result[0]
    assert type(result) is np.ndarray and result.dtype == expected.dtype
    np.testing.assert_allclose(np.sort(result), np.sort(expected), rtol=1e-10)


def test_named_backend_gives_numpy_arrays() -> None:
    a = RNG.normal(size=(20, 20))
    with prism_core.use_backend("scipy"):
        result = prism_core.linalg.inv(a)
        decision = prism_core.explain("linalg.inv", a)
    assert type(result) is np.ndarray
    np.testing.assert_allclose(result @ a, np.eye(20), atol=1e-10)
    assert decision.chosen == "scipy.linalg.inv"
    assert all(c.backend == "scipy" for c in decision.candidates if c.accepted)


@pytest.mark.timeout(120)
def test_prism_explain_on_the_command_line() -> None:
    def explain(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "prism_core", "explain", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    long = explain("convolve", "--shape", "100000,4096")
    assert "chosen: scipy.convolve on scipy" in long
    short = explain("convolve", "--shape", "1000,8")
    assert "chosen: numpy.convolve on numpy" in short
    assert "too short for an FFT to beat NumPy's direct sum" in short
    svd = explain("linalg.svd", "--dtype", "float32", "--shape", "512x512")
    assert "chosen: scipy.linalg.svd on scipy" in svd
