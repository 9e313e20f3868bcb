"""Each variant against NumPy: values, types and dtypes, the LAPACK drivers it picks, the
errors it raises (NumPy's), and the calls its ``can_run`` declines with the reason."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import scipy.fft
import scipy.linalg.lapack
from prism_plugin_scipy import ops, variants

import prism_core

RNG = np.random.default_rng(20261123)


def _random(shape: tuple[int, ...], dtype: str = "float64") -> np.ndarray:
    x = RNG.normal(size=shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * RNG.normal(size=shape)
    return x.astype(dtype)


def _spd(n: int, dtype: str = "float64") -> np.ndarray:
    g = _random((n, n), dtype)
    a = g @ g.conj().T + n * np.eye(n, dtype=dtype)
    return (a + a.conj().T) / 2  # exactly Hermitian, with a real diagonal


def _rtol(dtype: str) -> float:
    return 1e-4 if dtype in ("float32", "complex64") else 1e-9


def _same(expected: Any, actual: Any, rtol: float = 1e-9) -> None:
    """Same type, dtype and shape, values equal to rounding."""
    assert type(actual) is type(expected)
    if isinstance(expected, tuple):
        for e, a in zip(expected, actual, strict=True):
            _same(e, a, rtol)
        return
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    scale = float(np.max(np.abs(expected))) if expected.size else 1.0
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol * max(scale, 1.0))


@pytest.fixture
def lapack_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The LAPACK routines the plugin asks SciPy for, in order (SciPy's real routines run)."""
    asked: list[str] = []
    real = scipy.linalg.lapack.get_lapack_funcs

    def spy(names: Any, arrays: Any = (), *args: Any, **kwargs: Any) -> Any:
        asked.extend([names] if isinstance(names, str) else names)
        return real(names, arrays, *args, **kwargs)

    monkeypatch.setattr(scipy.linalg.lapack, "get_lapack_funcs", spy)
    return asked


# -- matmul ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize(
    "layout", ["c", "fortran", "transposed", "strided", "vector-like"], ids=str
)
def test_matmul_through_gemm_is_numpys(dtype: str, layout: str) -> None:
    a, b = _random((37, 19), dtype), _random((19, 23), dtype)
    if layout == "fortran":
        a, b = np.asfortranarray(a), np.asfortranarray(b)
    elif layout == "transposed":
        a, b = _random((19, 37), dtype).T, _random((23, 19), dtype).T
    elif layout == "strided":
        a, b = _random((37, 38), dtype)[:, ::2], _random((38, 23), dtype)[::2]
    elif layout == "vector-like":
        a, b = _random((1, 19), dtype), _random((19, 1), dtype)
    result = ops.matmul(a, b)
    _same(np.matmul(a, b), result, rtol=_rtol(dtype))
    assert result.flags.c_contiguous  # as NumPy's, though BLAS writes Fortran order


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_matmul_leaves_to_numpy_what_gemm_does_not_take() -> None:
    ints = np.arange(6).reshape(2, 3)
    _same(np.matmul(ints, ints.T), ops.matmul(ints, ints.T))
    mixed = (_random((3, 4), "float32"), _random((4, 2)))
    _same(np.matmul(*mixed), ops.matmul(*mixed))
    stack, w = _random((2, 3, 4)), _random((4, 5))
    _same(np.matmul(stack, w), ops.matmul(stack, w))
    m = np.asmatrix(_random((2, 2)))
    assert type(ops.matmul(m, m)) is np.matrix
    empty = (np.zeros((3, 0)), np.zeros((0, 2)))
    _same(np.matmul(*empty), ops.matmul(*empty))


# -- solve: the driver ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_solve_a_positive_definite_matrix_by_cholesky(dtype: str, lapack_calls: list[str]) -> None:
    n = ops.CHOLESKY_MIN_N + 7
    a, b = _spd(n, dtype), _random((n, 3), dtype)
    assert ops.maybe_positive_definite(a)
    _same(np.linalg.solve(a, b), ops.linalg_solve(a, b), rtol=_rtol(dtype))
    assert lapack_calls == ["posv"]  # assume_a="pos": no LU


def test_solve_a_general_matrix_by_lu(lapack_calls: list[str]) -> None:
    n = ops.CHOLESKY_MIN_N + 7
    a, b = _random((n, n)) + n * np.eye(n), _random(n)
    assert not ops.maybe_positive_definite(a)
    _same(np.linalg.solve(a, b), ops.linalg_solve(a, b))
    assert lapack_calls == ["gesv"]  # assume_a="gen", NumPy's driver


def test_solve_a_symmetric_indefinite_matrix_tries_cholesky_then_lu(
    lapack_calls: list[str],
) -> None:
    n = ops.CHOLESKY_MIN_N + 7
    a = _spd(n)
    a[-1, -1] = 1e-3  # still symmetric with a positive diagonal, no longer positive definite
    a[-1, :-1] = a[:-1, -1] = 10.0
    assert ops.maybe_positive_definite(a)
    b = _random((n, 2))
    _same(np.linalg.solve(a, b), ops.linalg_solve(a, b), rtol=1e-7)
    assert lapack_calls == ["posv", "gesv"]  # posv reports it is not positive definite


def test_solve_small_systems_skip_the_symmetry_check(lapack_calls: list[str]) -> None:
    n = ops.CHOLESKY_MIN_N - 1
    a, b = _spd(n), _random(n)
    assert not ops.maybe_positive_definite(a)
    _same(np.linalg.solve(a, b), ops.linalg_solve(a, b))
    assert lapack_calls == ["gesv"]


def test_the_symmetry_check_is_exact() -> None:
    n = 300  # several tiles of the check
    a = _spd(n)
    assert ops.maybe_positive_definite(a)
    for i, j in ((150, 7), (299, 150), (140, 129), (1, 0)):
        b = a.copy()
        b[i, j] = np.nextafter(b[i, j], np.inf)  # one ulp off in one element
        assert not ops.maybe_positive_definite(b), (i, j)
    nan = a.copy()
    nan[5, 9] = nan[9, 5] = np.nan
    assert not ops.maybe_positive_definite(nan)  # NaN takes NumPy's path, LU
    negative = a.copy()
    negative[3, 3] = -1.0
    assert not ops.maybe_positive_definite(negative)
    c = _spd(n, "complex128")
    assert ops.maybe_positive_definite(c)
    symmetric = np.triu(c) + np.triu(c, 1).T  # complex symmetric: not Hermitian
    assert not ops.maybe_positive_definite(symmetric)
    c[4, 4] += 1e-9j
    assert not ops.maybe_positive_definite(c)


def test_solve_mixed_dtypes_and_vectors_as_numpy() -> None:
    a = _random((70, 70), "float32") + 70 * np.eye(70, dtype="float32")
    b = _random(70)
    _same(np.linalg.solve(a, b), ops.linalg_solve(a, b), rtol=1e-5)
    _same(np.linalg.solve(a, b[:, None]), ops.linalg_solve(a, b[:, None]), rtol=1e-5)


# -- inv, svd, eigh, eig --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_inv_is_numpys(dtype: str) -> None:
    a = _random((40, 40), dtype) + 40 * np.eye(40, dtype=dtype)
    _same(np.linalg.inv(a), ops.linalg_inv(a), rtol=_rtol(dtype))


@pytest.mark.parametrize("shape", [(30, 30), (30, 45), (45, 30), (1, 7)], ids=str)
@pytest.mark.parametrize("full_matrices", [True, False])
def test_svd_returns_numpys_named_tuple(shape: tuple[int, int], full_matrices: bool) -> None:
    a = _random(shape)
    expected = np.linalg.svd(a, full_matrices=full_matrices)
    result = ops.linalg_svd(a, full_matrices=full_matrices)
    assert type(result) is type(expected)  # numpy.linalg's SVDResult
    assert [x.shape for x in result] == [x.shape for x in expected]
    assert [x.dtype for x in result] == [x.dtype for x in expected]
    _same(expected.S, result.S)
    k = result.S.size
    np.testing.assert_allclose((result.U[:, :k] * result.S) @ result.Vh[:k], a, atol=1e-10)


def _gesdd_never_converges(monkeypatch: pytest.MonkeyPatch, asked: list[str]) -> None:
    """SciPy's ``gesdd`` answers as LAPACK does when it does not converge (``info > 0``, what
    the plugin reads); ``gesdd_lwork`` and ``gesvd`` stay SciPy's real routines.  Matrices on
    which OpenBLAS's gesdd really fails are rare and machine-dependent, so the failure is
    forced."""
    real = scipy.linalg.lapack.get_lapack_funcs

    def failing(a: Any, compute_uv: int = 1, full_matrices: int = 1, lwork: int = 0) -> Any:
        m, n = a.shape
        k = min(m, n)
        s = np.zeros(k, dtype=np.zeros(0, a.dtype).real.dtype)
        return np.zeros((m, m)), s, np.zeros((n, n)), k  # info = k: k superdiagonals left

    def patched(names: Any, arrays: Any = (), *args: Any, **kwargs: Any) -> Any:
        found = real(names, arrays, *args, **kwargs)
        names = [names] if isinstance(names, str) else list(names)
        asked.extend(names)
        if "gesdd" in names:
            found = tuple(failing if n == "gesdd" else f for n, f in zip(names, found, strict=True))
        return found

    monkeypatch.setattr(scipy.linalg.lapack, "get_lapack_funcs", patched)


def test_svd_falls_back_to_gesvd_when_gesdd_does_not_converge(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a = _random((33, 21))
    expected = np.linalg.svd(a, full_matrices=False)
    asked: list[str] = []
    _gesdd_never_converges(monkeypatch, asked)
    result = ops.linalg_svd(a, full_matrices=False)
    assert asked == ["gesdd", "gesdd_lwork", "gesvd", "gesvd_lwork"]
    assert type(result) is type(expected)
    _same(expected.S, result.S)
    np.testing.assert_allclose((result.U * result.S) @ result.Vh, a, atol=1e-10)


def test_svd_raises_numpys_error_when_gesvd_fails_too(monkeypatch: pytest.MonkeyPatch) -> None:
    real = scipy.linalg.lapack.get_lapack_funcs

    def never(a: Any, **kwargs: Any) -> Any:
        return np.zeros((1, 1)), np.zeros(1), np.zeros((1, 1)), 1

    def patched(names: Any, arrays: Any = (), *args: Any, **kwargs: Any) -> Any:
        found = real(names, arrays, *args, **kwargs)
        return (never, found[1]) if names[0] in ("gesdd", "gesvd") else found

    monkeypatch.setattr(scipy.linalg.lapack, "get_lapack_funcs", patched)
    with pytest.raises(np.linalg.LinAlgError, match="SVD did not converge"):
        ops.linalg_svd(_random((4, 4)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_eigh_reads_the_lower_triangle_as_numpy(dtype: str) -> None:
    a = _random((30, 30), dtype)
    h = a + a.conj().T
    h[np.triu_indices(30, 1)] = 99.0  # ignored by both: only the lower triangle is read
    expected, result = np.linalg.eigh(h), ops.linalg_eigh(h)
    assert type(result) is type(expected)
    assert result.eigenvalues.dtype == expected.eigenvalues.dtype
    assert result.eigenvectors.dtype == expected.eigenvectors.dtype
    _same(expected.eigenvalues, result.eigenvalues, rtol=_rtol(dtype))


def test_eig_real_eigenvalues_give_real_types_as_numpy() -> None:
    s = _random((20, 20))
    a = s + s.T  # symmetric: every eigenvalue real
    expected, result = np.linalg.eig(a), ops.linalg_eig(a)
    assert type(result) is type(expected)
    assert result.eigenvalues.dtype == expected.eigenvalues.dtype == np.float64
    assert result.eigenvectors.dtype == np.float64
    np.testing.assert_allclose(np.sort(result.eigenvalues), np.sort(expected.eigenvalues))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eig_complex_pairs_give_complex_types_as_numpy(dtype: str) -> None:
    rotation = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 2.0]], dtype=dtype)
    for x in (rotation, _random((6, 6), dtype)):
        expected, result = np.linalg.eig(x), ops.linalg_eig(x)
        assert type(result) is type(expected)
        assert result.eigenvalues.dtype == expected.eigenvalues.dtype
        assert result.eigenvectors.dtype == expected.eigenvectors.dtype
        assert result.eigenvalues.dtype.kind == "c"
        # An eigenvalue near zero is only as accurate as the matrix's norm allows (backward
        # stable: errors of a few eps * ||x||), not to a relative 1e-5 of itself.
        atol = 100 * np.finfo(dtype).eps * np.linalg.norm(x, 2)
        np.testing.assert_allclose(
            np.sort_complex(result.eigenvalues),
            np.sort_complex(expected.eigenvalues),
            rtol=1e-5,
            atol=atol,
        )
        # Eigenvectors are unique up to a unit factor, which two LAPACK builds may choose
        # differently (NumPy's and SciPy's OpenBLAS give opposite signs in float32 here).
        w, v = result
        np.testing.assert_allclose(x @ v, v * w, atol=1e-5)
        np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=1e-5)
        pairs = np.flatnonzero(w.imag > 0)
        np.testing.assert_array_equal(v[:, pairs + 1], v[:, pairs].conj())


# -- errors: NumPy's, for the caller's mistakes ---------------------------------------------------

_SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
_NAN = np.full((3, 3), np.nan)
_SQUARE = _random((4, 4))

MISTAKES: list[
    tuple[str, Callable[..., Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]
] = [
    ("matmul-shapes", ops.matmul, np.matmul, (_random((3, 4)), _random((5, 6))), {}),
    ("solve-not-square", ops.linalg_solve, np.linalg.solve, (_random((3, 4)), _random(3)), {}),
    ("solve-shapes", ops.linalg_solve, np.linalg.solve, (_SQUARE, _random(3)), {}),
    ("solve-singular", ops.linalg_solve, np.linalg.solve, (_SINGULAR, _random(2)), {}),
    ("inv-not-square", ops.linalg_inv, np.linalg.inv, (_random((3, 4)),), {}),
    ("inv-singular", ops.linalg_inv, np.linalg.inv, (_SINGULAR,), {}),
    ("inv-float16", ops.linalg_inv, np.linalg.inv, (_SQUARE.astype("float16"),), {}),
    ("svd-nan", ops.linalg_svd, np.linalg.svd, (_NAN,), {}),
    ("svd-1d", ops.linalg_svd, np.linalg.svd, (_random(3),), {}),
    ("eigh-not-square", ops.linalg_eigh, np.linalg.eigh, (_random((3, 4)),), {}),
    ("eigh-nan", ops.linalg_eigh, np.linalg.eigh, (_NAN,), {}),
    ("eig-nan", ops.linalg_eig, np.linalg.eig, (_NAN,), {}),
    ("eig-not-square", ops.linalg_eig, np.linalg.eig, (_random((3, 4)),), {}),
    ("fft-n-0", ops.fft_fft, np.fft.fft, (_random(8),), {"n": 0}),
    ("fft-n-float", ops.fft_fft, np.fft.fft, (_random(8),), {"n": 2.5}),
    ("fft-axis", ops.fft_fft, np.fft.fft, (_random(8),), {"axis": 3}),
    ("fft-norm", ops.fft_fft, np.fft.fft, (_random(8),), {"norm": "sideways"}),
    ("ifft-empty", ops.fft_ifft, np.fft.ifft, (np.zeros(0),), {}),
    (
        "rfft-complex",
        ops.fft_rfft,
        np.fft.rfft,
        (
            _random(
                8,
            )
            + 1j,
        ),
        {},
    ),
    ("convolve-empty", ops.convolve, np.convolve, (np.zeros(0), _random(3)), {}),
    ("convolve-mode", ops.convolve, np.convolve, (_random(500), _random(600)), {"mode": "middle"}),
    ("convolve-2d", ops.convolve, np.convolve, (_random((3, 3)), _random(3)), {}),
]


@pytest.mark.parametrize(
    ("name", "plugin", "numpy", "args", "kwargs"), MISTAKES, ids=[m[0] for m in MISTAKES]
)
def test_a_callers_mistake_raises_what_numpy_raises(
    name: str,
    plugin: Callable[..., Any],
    numpy: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    try:
        numpy(*args, **kwargs)
    except Exception as exc:  # what NumPy raises: the plugin must raise the same
        expected = exc
    else:
        pytest.fail(f"NumPy accepts {name}")
    with pytest.raises(type(expected)) as got:
        plugin(*args, **kwargs)
    assert type(got.value) is type(expected)
    assert str(got.value) == str(expected)


def test_nan_in_a_system_solves_as_numpy() -> None:
    a = _spd(ops.CHOLESKY_MIN_N)
    a[0, 0] = np.nan
    b = _random(ops.CHOLESKY_MIN_N)
    expected, result = np.linalg.solve(a, b), ops.linalg_solve(a, b)
    assert np.isnan(expected).all() == np.isnan(result).all()


# -- FFTs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "reference", "dtype"),
    [
        (ops.fft_fft, np.fft.fft, "complex64"),
        (ops.fft_fft, np.fft.fft, "float64"),
        (ops.fft_ifft, np.fft.ifft, "complex128"),
        (ops.fft_ifft, np.fft.ifft, "float32"),
        (ops.fft_rfft, np.fft.rfft, "float32"),
        (ops.fft_rfft, np.fft.rfft, "float64"),
    ],
)
@pytest.mark.parametrize(
    "kwargs",
    [{}, {"n": 100}, {"n": 3000}, {"axis": 0}, {"axis": -2, "norm": "ortho"}, {"norm": "forward"}],
    ids=str,
)
def test_ffts_are_numpys(op: Any, reference: Any, dtype: str, kwargs: dict[str, Any]) -> None:
    x = _random((48, 2048), dtype)  # a batch large enough for worker threads
    rtol = _rtol(dtype)
    _same(reference(x, **kwargs), op(x, **kwargs), rtol=rtol)
    _same(reference(x[0], n=kwargs.get("n")), op(x[0], n=kwargs.get("n")), rtol=rtol)


def test_ffts_leave_other_dtypes_to_numpy() -> None:
    for x in (np.arange(16), np.arange(16, dtype="float16"), np.ones(16, dtype=bool)):
        _same(np.fft.fft(x), ops.fft_fft(x))
        _same(np.fft.rfft(x), ops.fft_rfft(x))


# -- convolve -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize(
    ("n", "m", "dtype"),
    [
        (20000, 300, "float64"),  # overlap-add
        (3000, 2500, "float64"),  # one FFT
        (700, 9000, "float64"),  # the longer second: swapped, as NumPy does
        (20000, 300, "float32"),
        (5000, 1000, "complex128"),
        (5000, 1001, "complex64"),
    ],
)
def test_convolve_is_numpys(mode: str, n: int, m: int, dtype: str) -> None:
    a, v = _random((n,), dtype), _random((m,), dtype)
    assert variants.takes_convolve(a, v) is True
    _same(np.convolve(a, v, mode=mode), ops.convolve(a, v, mode=mode), rtol=_rtol(dtype))


def test_convolve_mixed_dtypes_as_numpy() -> None:
    a, v = _random((5000,), "float32"), _random((1000,), "complex64")
    assert ops.convolve(a, v).dtype == np.convolve(a, v).dtype == np.complex64
    a64 = _random((5000,))
    assert ops.convolve(a, a64).dtype == np.float64


def test_convolve_keeps_nan_where_numpy_does() -> None:
    a, v = _random((5000,)), _random((1000,))
    a[10] = np.nan
    expected, result = np.convolve(a, v), ops.convolve(a, v)
    np.testing.assert_array_equal(np.isnan(result), np.isnan(expected))
    assert not np.isnan(result[2000:]).any()  # an FFT would have spread it everywhere


# -- can_run: what each variant takes, and why not ------------------------------------------------


@pytest.mark.parametrize(
    ("check", "args", "reason"),
    [
        (
            variants.takes_matmul,
            (np.ones((3, 3), int), np.ones((3, 3), int)),
            "BLAS gemm takes two matrices of one dtype, float32, float64, complex64 or complex128; "
            "not int64 and int64",
        ),
        (
            variants.takes_matmul,
            (np.ones((3, 3), "f4"), np.ones((3, 3))),
            "not float32 and float64",
        ),
        (
            variants.takes_matmul,
            (np.ones((2, 3, 3)), np.ones((3, 3))),
            "BLAS gemm multiplies 2-D matrices, not 3-D by 2-D (NumPy's matmul takes vectors and "
            "stacks)",
        ),
        (
            variants.takes_matmul,
            ([[1.0]], np.ones((1, 1))),
            "takes arrays, not list (NumPy converts those)",
        ),
        (
            variants.takes_matrix,
            (np.ones((2, 4, 4)),),
            "LAPACK takes one 2-D matrix, not a 3-D array (NumPy's function takes stacks of "
            "matrices)",
        ),
        (
            variants.takes_matrix,
            (np.ones((4, 4), "float16"),),
            "LAPACK computes in float32, float64, complex64 or complex128, not float16",
        ),
        (
            variants.takes_solve,
            (np.ones((4, 4)), np.ones((2, 4, 1))),
            "LAPACK solves one 2-D system for a 1-D or 2-D right-hand side, not 2-D and 3-D",
        ),
        (variants.takes_solve, (np.ones((4, 4), int), np.ones(4)), "not int64 and float64"),
        (
            variants.takes_fft,
            (np.arange(8),),
            "scipy.fft computes in float32, float64, complex64 or complex128 here, not int64",
        ),
        (
            variants.takes_rfft,
            (np.ones(8, complex),),
            "rfft takes real float32 or float64 input, not complex128",
        ),
        (
            variants.takes_convolve,
            (np.ones(100_000, int), np.ones(1000, int)),
            "(NumPy convolves integers exactly, into integers)",
        ),
        (
            variants.takes_convolve,
            (np.ones(100_000), np.ones(variants.CONVOLVE_MIN_SHORT - 1)),
            f"signals of 100000 and {variants.CONVOLVE_MIN_SHORT - 1} points are too short for an "
            "FFT to beat NumPy's direct sum",
        ),
        (
            variants.takes_convolve,
            (np.ones((10, 10)), np.ones(10)),
            "convolves 1-D signals, not 2-D and 1-D arrays",
        ),
    ],
)
def test_can_run_declines_with_the_reason(check: Any, args: tuple[Any, ...], reason: str) -> None:
    verdict = check(*args)
    assert isinstance(verdict, str)
    assert reason in verdict


def test_can_run_reads_only_shapes_and_dtypes() -> None:
    """The same verdicts for arrays and for the ArraySpecs of ``prism explain``."""
    spec = prism_core.ArraySpec
    cases = [
        (variants.takes_matmul, ((64, 64), "float32"), ((64, 64), "float32")),
        (variants.takes_matmul, ((64, 64), "int32"), ((64, 64), "int32")),
        (
            variants.takes_matrix,
            ((8, 8), "complex64"),
        ),
        (
            variants.takes_matrix,
            ((8, 8), "bfloat16"),
        ),
        (variants.takes_solve, ((8, 8), "float64"), ((8,), "float64")),
        (
            variants.takes_fft,
            ((4096,), "complex128"),
        ),
        (
            variants.takes_rfft,
            ((4096,), "complex128"),
        ),
        (variants.takes_convolve, ((1 << 16,), "float64"), ((1 << 10,), "float64")),
        (variants.takes_convolve, ((1 << 16,), "float64"), ((8,), "float64")),
    ]
    for check, *shapes in cases:
        specs = [spec(shape, dtype) for shape, dtype in shapes]
        verdict = check(*specs)
        if any(dtype == "bfloat16" for _, dtype in shapes):
            assert (
                verdict
                == "LAPACK computes in float32, float64, complex64 or complex128, not bfloat16"
            )
            continue
        arrays = [np.zeros(shape, dtype) for shape, dtype in shapes]
        assert check(*arrays) == verdict, (check, shapes)


@pytest.mark.parametrize(
    ("n", "m", "taken"),
    [
        (1 << 14, 256, True),  # N * M**2 == 2**30: the measured crossover
        (1 << 14, 255, False),
        (1 << 20, 256, True),
        (1 << 20, 255, False),  # however long the other, M >= CONVOLVE_MIN_SHORT
        (1 << 12, 512, True),
        (1 << 12, 511, False),
        (1 << 10, 1 << 10, True),
    ],
)
def test_convolve_takes_signals_from_the_measured_crossover(n: int, m: int, taken: bool) -> None:
    spec = prism_core.ArraySpec
    assert (variants.takes_convolve(spec((n,)), spec((m,))) is True) is taken
    assert (variants.takes_convolve(spec((m,)), spec((n,))) is True) is taken
