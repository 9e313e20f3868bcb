"""The ``fft`` extension of ``prism_core.array_api`` against ``array-api-strict``, the reference
implementation of the standard's semantics.

Hypothesis draws the shapes (0-d and empty included where the standard allows them), the
dtypes the standard defines each function for, the axes (unique, any order), the sizes
(``s``, ``n``; ``-1`` in ``s``) and ``norm``.  Each function runs through Prism's dispatch on
NumPy arrays (the NumPy reference), under ``use_backend("torch")`` (the torch plugin's
variants) and, for the transforms, under ``use_backend("scipy")``; its result must have the
values (to the dtype's tolerance), the shape and the dtype that ``array_api_strict`` gives.

Where Prism departs from ``array_api_strict`` (which is NumPy's behaviour under the standard's
dtype checks) the tests say so: ``s`` without ``axes`` and a repeated axis are errors in Prism
(the standard forbids the first and leaves the second to the library), and ``-1`` as the last
size of ``irfftn`` keeps the default output length ``2 * (m - 1)`` (NumPy 2 makes it ``m``).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis", reason="the property tests need hypothesis")
strict = pytest.importorskip(
    "array_api_strict", reason="the reference semantics: pip install array-api-strict"
)

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import prism_core  # noqa: E402
from prism_core import array_api as xp  # noqa: E402
from prism_core._builtin import numpy_fft  # noqa: E402
from prism_core.kernel.records.fft_functions import ROWS  # noqa: E402
from prism_core.testing._cases import fft as cases  # noqa: E402
from prism_core.testing._inputs import Maker  # noqa: E402

from .array_api_dtypes import COMPLEX  # noqa: E402
from .conftest import load_bundled_plugin  # noqa: E402

SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)
REAL = ("float32", "float64")
#: The transforms, by form, with the dtypes the standard defines them for.
ND: dict[str, tuple[str, ...]] = {
    "fftn": COMPLEX, "ifftn": COMPLEX, "rfftn": REAL, "irfftn": COMPLEX,
}  # fmt: skip
ONE: dict[str, tuple[str, ...]] = {
    "fft": COMPLEX, "ifft": COMPLEX, "rfft": REAL, "irfft": COMPLEX, "hfft": COMPLEX,
    "ihfft": REAL,
}  # fmt: skip
#: Transforms whose input is a half spectrum (the default output length is 2 * (m - 1)).
HALF = {"irfft", "hfft", "irfftn"}
BACKENDS = ("numpy", "torch", "scipy")


# -- the namespace -------------------------------------------------------------------------------


def test_every_fft_function_of_the_standard_is_here() -> None:
    """``prism_core.array_api.fft`` has every function of ``array_api_strict.fft``, each the
    op's own function (and ``prism_core.fft.<name>`` too)."""
    assert set(xp.fft.__all__) == set(strict.fft.__all__)
    for name in strict.fft.__all__:
        op = prism_core.get_op(f"fft.{name}")
        assert getattr(xp.fft, name) is op.function, name
        assert getattr(prism_core.fft, name) is op.function, name
    assert {row.name for row in ROWS} | {"fft.fft", "fft.ifft", "fft.rfft"} == {
        f"fft.{name}" for name in strict.fft.__all__
    }


# -- backends ------------------------------------------------------------------------------------


def _plugin(name: str) -> Any:
    if name == "numpy":
        return None
    pytest.importorskip(name, reason=f"the {name} backend's variants need {name}")
    return load_bundled_plugin(name)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Iterator[str]:
    """The backend a test runs on: NumPy (Prism's reference; automatic mode on NumPy arrays),
    torch or scipy (named with ``use_backend``), each plugin loaded through its entry point."""
    _plugin(request.param)
    yield request.param
    if request.param != "numpy":
        prism_core.extending.reload_plugins()


def _run(backend: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> np.ndarray[Any, Any]:
    """``fn`` on ``backend``, its result as a NumPy array (a tensor's through ``to_numpy``)."""
    if backend == "numpy":
        result = fn(*args, **kwargs)
        assert isinstance(result, np.ndarray), type(result)
        return result
    with prism_core.use_backend(backend):
        result = fn(*args, **kwargs)
    if backend == "torch":
        import torch

        assert isinstance(result, torch.Tensor), type(result)
        return np.asarray(prism_core.to_numpy(result))
    assert isinstance(result, np.ndarray), type(result)
    return result


def _strict(name: str, x: np.ndarray[Any, Any], **kwargs: Any) -> np.ndarray[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # no call relies on NumPy's deprecated
        return np.from_dlpack(getattr(strict.fft, name)(strict.asarray(x), **kwargs))


def _close(name: str, actual: np.ndarray[Any, Any], expected: np.ndarray[Any, Any]) -> None:
    assert actual.dtype == expected.dtype, (name, actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (name, actual.shape, expected.shape)
    rtol = 1e-4 if expected.dtype in (np.float32, np.complex64) else 1e-10
    scale = float(np.max(np.abs(expected))) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * max(scale, 1.0))


def _values(dtype: str) -> st.SearchStrategy[Any]:
    width = 32 if dtype in ("float32", "complex64") else 64
    part = st.floats(-10, 10, width=width)
    return st.builds(complex, part, part) if dtype.startswith("complex") else part


# -- the n-dimensional transforms ----------------------------------------------------------------


@st.composite
def _nd_case(draw: st.DrawFn, name: str) -> tuple[np.ndarray[Any, Any], dict[str, Any]]:
    """An array and keywords: ``axes`` unique in any order (or ``None``), ``s`` only with
    ``axes`` (``-1`` among the sizes), every transformed axis long enough."""
    real_kind = name in ("rfftn", "irfftn")
    shape = draw(hnp.array_shapes(min_dims=1 if real_kind else 0, max_dims=3, max_side=5))
    dtype = draw(st.sampled_from(ND[name]))
    kwargs: dict[str, Any] = {"norm": draw(st.sampled_from(["backward", "ortho", "forward"]))}
    if draw(st.booleans()):
        axes = draw(st.permutations(range(len(shape))))
        count = draw(st.integers(1 if real_kind else 0, len(shape)))
        axes = [a - len(shape) if draw(st.booleans()) else a for a in axes[:count]]
        kwargs["axes"] = axes
        if draw(st.booleans()):
            kwargs["s"] = [draw(st.sampled_from([-1, 1, 2, 3, 4, 6])) for _ in axes]
    if name in HALF:  # at least 2 input points on the last transformed axis, for 2 * (m - 1)
        last = (kwargs.get("axes") or [len(shape) - 1])[-1] if shape else None
        if last is not None and shape[last] < 2:
            shape = tuple(2 if i == last % len(shape) else d for i, d in enumerate(shape))
    x = draw(hnp.arrays(np.dtype(dtype), shape, elements=_values(dtype)))
    return x, kwargs


def _strict_nd_kwargs(name: str, x: np.ndarray[Any, Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """The same call for ``array_api_strict``: ``-1`` as ``irfftn``'s last size made the
    default ``2 * (m - 1)`` Prism gives it (NumPy 2 would make it ``m``)."""
    out = dict(kwargs)
    if name == "irfftn" and out.get("s") and out["s"][-1] == -1:
        out["s"] = [*out["s"][:-1], 2 * (x.shape[out["axes"][-1]] - 1)]
    return out


@pytest.mark.parametrize("name", sorted(ND))
def test_the_n_dimensional_transforms_as_the_standard(name: str, backend: str) -> None:
    @SETTINGS
    @given(case=_nd_case(name))
    def check(case: tuple[np.ndarray[Any, Any], dict[str, Any]]) -> None:
        x, kwargs = case
        try:
            expected = _strict(name, x, **_strict_nd_kwargs(name, x, kwargs))
        except ValueError:  # a transform of no points (an empty axis): an error on every side
            with pytest.raises(ValueError, match=r"needs at least 1|at least one axis"):
                _run(backend, getattr(xp.fft, name), x, **kwargs)
            return
        if x.ndim == 0 or kwargs.get("axes") == []:
            expected = expected.astype(np.result_type(x.dtype, np.complex64))  # NumPy: x itself
        _close(name, _run(backend, getattr(xp.fft, name), x, **kwargs), expected)

    check()


# -- the one-dimensional transforms --------------------------------------------------------------


@st.composite
def _one_case(draw: st.DrawFn, name: str) -> tuple[np.ndarray[Any, Any], dict[str, Any]]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=6))
    dtype = draw(st.sampled_from(ONE[name]))
    kwargs: dict[str, Any] = {
        "axis": draw(st.integers(-len(shape), len(shape) - 1)),
        "norm": draw(st.sampled_from(["backward", "ortho", "forward"])),
    }
    if draw(st.booleans()):
        kwargs["n"] = draw(st.integers(1, 9))
    x = draw(hnp.arrays(np.dtype(dtype), shape, elements=_values(dtype)))
    return x, kwargs


@pytest.mark.parametrize("name", sorted(ONE))
def test_the_one_dimensional_transforms_as_the_standard(name: str, backend: str) -> None:
    """``fft``, ``ifft`` and ``rfft`` (older than the table) included."""

    @SETTINGS
    @given(case=_one_case(name))
    def check(case: tuple[np.ndarray[Any, Any], dict[str, Any]]) -> None:
        x, kwargs = case
        expected = _strict(name, x, **kwargs)
        _close(name, _run(backend, getattr(xp.fft, name), x, **kwargs), expected)

    check()


@pytest.mark.parametrize("name", ["fftn", "irfftn", "rfftn", "hfft", "ihfft", "irfft"])
def test_an_empty_batch_is_transformed(name: str, backend: str) -> None:
    """An array with no elements whose transformed axis has points (torch's and cuFFT's
    libraries refuse it; the variants make the empty result)."""
    dtype = "float32" if name in ("rfftn", "ihfft") else "complex64"
    x = np.zeros((0, 6), dtype=dtype)
    kwargs: dict[str, Any] = {"axes": [1]} if name.endswith("n") else {}
    expected = _strict(name, x, **kwargs)
    _close(name, _run(backend, getattr(xp.fft, name), x, **kwargs), expected)


# -- frequencies and shifts ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_the_frequencies_as_the_standard(name: str, backend: str) -> None:
    if backend == "scipy":
        pytest.skip("scipy has no variant of the frequencies (NumPy's own in SciPy too)")

    @SETTINGS
    @given(
        n=st.integers(1, 40),
        d=st.sampled_from([1.0, 0.25, 3, -2.5, 1e-3]),
        dtype=st.sampled_from([None, "float32", "float64"]),
    )
    def check(n: int, d: float, dtype: str | None) -> None:
        kwargs: dict[str, Any] = {"d": d}
        expected = np.from_dlpack(
            getattr(strict.fft, name)(
                n, d=d, dtype=None if dtype is None else getattr(strict, dtype)
            )
        )
        if dtype is not None:
            kwargs["dtype"] = getattr(xp, dtype)
        _close(name, _run(backend, getattr(xp.fft, name), n, **kwargs), expected)

    check()


@st.composite
def _shift_case(draw: st.DrawFn) -> tuple[np.ndarray[Any, Any], Any]:
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5))
    dtype = draw(st.sampled_from(["float32", "float64", "complex64", "complex128"]))
    x = draw(hnp.arrays(np.dtype(dtype), shape, elements=_values(dtype)))
    if not shape or draw(st.booleans()):
        return x, None
    axes = draw(st.permutations(range(len(shape))))[: draw(st.integers(1, len(shape)))]
    return x, (axes[0] - len(shape) if len(axes) == 1 and draw(st.booleans()) else tuple(axes))


@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_the_shifts_as_the_standard(name: str, backend: str) -> None:
    if backend == "scipy":
        pytest.skip("scipy has no variant of the shifts (NumPy's own in SciPy too)")

    @SETTINGS
    @given(case=_shift_case())
    def check(case: tuple[np.ndarray[Any, Any], Any]) -> None:
        x, axes = case
        # NumPy's shifts (array_api_strict's) fail on a 0-d array: Prism's give a copy.
        expected = x if x.ndim == 0 else _strict(name, x, axes=axes)
        actual = _run(backend, getattr(xp.fft, name), x, axes=axes)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected)

    check()


def test_the_shifts_take_any_dtype_and_repeated_axes(backend: str) -> None:
    """Beyond the standard (floating point, unique axes): integers and booleans are rolled
    too, and a repeated axis twice, as NumPy does."""
    if backend == "scipy":
        pytest.skip("scipy has no variant of the shifts")
    x = np.arange(10, dtype=np.int32).reshape(2, 5)
    np.testing.assert_array_equal(
        _run(backend, xp.fft.fftshift, x, axes=(1, 1)), np.fft.fftshift(x, axes=(1, 1))
    )
    assert _run(backend, xp.fft.ifftshift, x > 3).dtype == np.bool_


# -- what Prism decides where the standard leaves it open ----------------------------------------


def test_irfftn_takes_minus_one_as_the_default_length(backend: str) -> None:
    """The standard: ``-1`` in ``s`` uses every input element along that axis; on
    ``irfftn``'s last axis that is the default output length ``2 * (m - 1)``."""
    x = np.fft.rfftn(np.random.default_rng(0).normal(size=(4, 6)))  # (4, 4): m = 4
    by_default = _run(backend, xp.fft.irfftn, x, axes=(0, 1))
    with_minus_one = _run(backend, xp.fft.irfftn, x, s=(-1, -1), axes=(0, 1))
    assert by_default.shape == with_minus_one.shape == (4, 6)
    np.testing.assert_allclose(with_minus_one, by_default)


def test_a_transform_over_no_axes_is_a_copy_in_the_complex_type(backend: str) -> None:
    """``fftn`` over no axis (``axes=()``, a 0-d array) gives a copy of ``x`` in the type a
    transform would (NumPy gives ``x`` itself, real or not)."""
    x = np.array([[1.0, 2.0]], dtype=np.float32)
    for call in (lambda: xp.fft.fftn(x, axes=()), lambda: xp.fft.ifftn(np.asarray(2.0))):
        result = _run(backend, call)
        assert result.dtype.kind == "c" and result is not x
    np.testing.assert_array_equal(_run(backend, xp.fft.fftn, x, axes=()), x.astype(np.complex64))


# -- errors --------------------------------------------------------------------------------------

X = np.ones((4, 6), dtype=np.complex128)
R = np.ones((4, 6))
ERRORS: list[tuple[str, tuple[Any, ...], dict[str, Any], type[Exception], str]] = [
    ("fftn", (X,), {"s": (4,)}, ValueError, r"s=\(4,\) needs axes.*axes=\(-1,\)"),
    ("ifftn", (X,), {"s": (4,), "axes": (0, 1)}, ValueError, "s and axes must have the same len"),
    ("fftn", (X,), {"axes": (0, -2)}, ValueError, r"axes=\(0, -2\) names an axis twice"),
    ("irfftn", (X,), {"s": (0, 4), "axes": (0, 1)}, ValueError, r"s\[0\]=0 is no size"),
    ("rfftn", (R,), {"s": (-3,), "axes": (1,)}, ValueError, r"s\[0\]=-3 is no size"),
    ("fftn", (X,), {"axes": (2,)}, np.exceptions.AxisError, "fft.fftn: axes: axis 2 is out"),
    ("fftn", (X,), {"axes": 1}, TypeError, "axes must be a sequence of ints"),
    ("fftn", (X,), {"s": (2.5,), "axes": (0,)}, TypeError, "s must hold ints"),
    ("rfftn", (X,), {}, TypeError, "fft.rfftn: x must be real, not complex128"),
    ("rfftn", (R,), {"axes": ()}, ValueError, "needs at least one axis"),
    ("irfftn", (np.asarray(1j),), {}, ValueError, "needs at least one axis"),
    ("fftn", (np.zeros((0, 3), complex),), {}, ValueError, "along axis 0 would have 0 points"),
    ("fftn", (X,), {"norm": "both"}, ValueError, "Invalid norm value both"),
    ("ihfft", (X,), {}, TypeError, "complex|not supported for the input types"),
    ("irfft", (np.ones(1, complex),), {}, ValueError, r"Invalid number of (FFT )?data points \(0"),
    ("hfft", (X,), {"axis": 2}, IndexError, "axis 2|tuple index out of range"),  # NumPy's
    ("fftfreq", (0,), {}, ValueError, r"fft.fftfreq: n must be an int >= 1 .*not 0"),
    ("rfftfreq", (2.5,), {}, ValueError, r"fft.rfftfreq: n must be an int >= 1 .*not 2.5"),
    ("fftfreq", (4,), {"d": 0}, ValueError, "d must not be 0"),
    ("fftfreq", (4,), {"d": "1"}, TypeError, "d must be a real number"),
    ("rfftfreq", (4,), {"dtype": "int64"}, TypeError, "dtype must be a real floating-point type"),
    ("fftshift", (R,), {"axes": (0, 2)}, np.exceptions.AxisError, "fft.fftshift: axes: axis 2"),
    ("ifftshift", (R,), {"axes": 1.0}, TypeError, "fft.ifftshift: axes must hold ints"),
]


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "error", "match"),
    ERRORS,
    ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)],
)
def test_bad_arguments_are_named(
    name: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    error: type[Exception],
    match: str,
    backend: str,
) -> None:
    """The same calls are refused with the same exception and words on every backend (torch's
    own would be ``RuntimeError``, which dispatch takes for a failure of the backend)."""
    if backend == "scipy" and name.endswith(("freq", "shift")):
        pytest.skip("scipy has no variant of the frequencies and shifts")
    if backend == "scipy" and name in ("rfftn", "ihfft") and args[0].dtype.kind == "c":
        pytest.skip("the scipy variants decline complex input to rfftn/ihfft (can_run)")
    with pytest.raises(error, match=match):
        _run(backend, getattr(xp.fft, name), *args, **kwargs)


def test_the_frequencies_are_made_on_the_host(backend: str) -> None:
    """``device``: ``"cpu"`` and Prism's CPU on the host backends; another device is a
    ``ValueError`` naming it on NumPy, which creates in host memory only."""
    if backend == "scipy":
        pytest.skip("scipy has no variant of the frequencies")
    cpu = xp.__array_namespace_info__().default_device()
    for device in ("cpu", cpu):
        np.testing.assert_array_equal(
            _run(backend, xp.fft.fftfreq, 4, device=device), np.fft.fftfreq(4)
        )
    if backend == "numpy":
        gpu = prism_core.hardware.get_device("nvidia.h100-sxm")
        with pytest.raises(ValueError, match=r"fft\.rfftfreq: device=.* not where this backend"):
            numpy_fft.rfftfreq(4, device=gpu)


# -- the conformance suite's keyword cases, on torch -----------------------------------------------


FFT_DTYPES = {r.name: r.dtypes for r in ROWS}


@pytest.mark.parametrize("op", sorted(FFT_DTYPES))
def test_the_keyword_cases_on_torch(op: str) -> None:
    """Every keyword case of the conformance suite (``_cases/fft.py``) gives the NumPy
    reference's values and dtype on torch."""
    _plugin("torch")
    try:
        found = cases.keyword_cases(op, Maker(FFT_DTYPES[op][0]))
        assert found, op
        name = op.partition(".")[2]
        for keyword, calls in found.items():
            for args, kwargs in calls:
                expected = _run("numpy", getattr(xp.fft, name), *args, **kwargs)
                actual = _run("torch", getattr(xp.fft, name), *args, **kwargs)
                assert keyword in kwargs
                _close(op, actual, expected)
    finally:
        prism_core.extending.reload_plugins()


# -- NumPy 1 ---------------------------------------------------------------------------------------


def test_on_numpy_1_single_precision_is_cast_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """NumPy 1 computes every transform in double: the references cast single precision back
    (simulated: NumPy 1's upcasting functions in NumPy 2's place)."""

    def in_double(fn: Callable[..., Any], dtype: type) -> Callable[..., Any]:
        return lambda a, *args, **kwargs: fn(np.asarray(a, dtype=dtype), *args, **kwargs)

    monkeypatch.setattr(numpy_fft, "_numpy2", lambda: False)
    for name in ("fftn", "irfftn", "irfft", "ihfft"):
        double = float if name == "ihfft" else complex
        monkeypatch.setattr(np.fft, name, in_double(getattr(np.fft, name), double))
    x = np.ones((4, 4), dtype=np.complex64)
    assert numpy_fft.fftn(x).dtype == np.complex64
    assert numpy_fft.irfftn(x).dtype == np.float32
    assert numpy_fft._numpy1_transform("irfft", True)(x).dtype == np.float32
    ihfft = numpy_fft._numpy1_transform("ihfft", False)
    assert ihfft(np.ones(4, dtype=np.float32)).dtype == np.complex64
    with pytest.raises(TypeError, match=r"fft\.ihfft: x must be real"):
        ihfft(x)
    with pytest.raises(TypeError, match=r"fft\.rfft: x must be real"):
        numpy_fft._numpy1_transform("rfft", False)(x)
