"""The conformance suite's checks of what the plugin guide promises beyond values (caller's
mistakes, singular matrices, Python scalars, mixed dtypes, ``can_run``): their inputs are what
they say, and the NumPy backend, the reference itself, passes them all."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.testing import check_backend
from prism_core.testing._conformance import DTYPES
from prism_core.testing._promises import (
    SINGULAR,
    mistake_cases,
    promotion_case,
    promotion_dtypes,
    scalar_cases,
    scalar_dtypes,
    singular_case,
)

OPS = sorted(o for o in prism.all_ops() if o in DTYPES)


def _reference(op: str) -> Any:
    return next(v for v in prism.get_op(op).variants if v.reference).resolve()


@pytest.mark.parametrize("op", OPS)
def test_every_mistake_is_one_the_reference_refuses(op: str) -> None:
    """In every dtype the op is checked in (a backend that does not hold the first gets the
    mistakes in another), so that the numpy backend's errors checks are never skipped."""
    for dtype in DTYPES[op]:
        for mistake, (args, kwargs) in mistake_cases(op, dtype).items():
            with pytest.raises(Exception) as raised:  # noqa: PT011 - whichever the reference's
                _reference(op)(*args, **kwargs)
            assert not isinstance(raised.value, Warning), (op, dtype, mistake)


def test_the_mistakes_are_named_after_what_is_wrong() -> None:
    assert set(mistake_cases("add")) == {"shapes"}
    assert set(mistake_cases("sum")) == {"axis"}
    assert set(mistake_cases("linalg.inv")) == {"rank", "square"}
    assert set(mistake_cases("linalg.solve")) == {"shapes", "rank", "square"}
    assert set(mistake_cases("fft.fft")) == {"axis", "norm"}
    assert set(mistake_cases("searchsorted")) == {"side"}
    assert mistake_cases("no.such.op") == {}
    (x1, x2), _ = mistake_cases("add")["shapes"]
    assert x1.shape == (4096,) and x2.shape == (4095,)


@pytest.mark.parametrize("op", OPS)
def test_the_reference_computes_every_scalar_and_promotion_case(op: str) -> None:
    reference = _reference(op)
    for dtype in scalar_dtypes(op):
        cases = scalar_cases(op, dtype)
        assert cases, (op, dtype)
        for said, (args, kwargs) in cases:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                reference(*args, **kwargs)
            assert any(isinstance(a, (bool, int, float, complex)) for a in args), said
    for first, second in promotion_dtypes(op):
        case = promotion_case(op, first, second)
        assert case is not None
        args, kwargs = case
        arrays = [b for a in args for b in (a if isinstance(a, list) else [a])]
        dtypes = {str(a.dtype) for a in arrays if isinstance(a, np.ndarray)}
        assert {first, second} <= dtypes, (op, first, second, dtypes)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            reference(*args, **kwargs)


def test_python_scalars_are_weak_in_the_reference() -> None:
    """What the scalars checks compare with: NEP 50, as NumPy 2 computes it."""
    [(_, (args, _))] = [c for c in scalar_cases("add", "float32") if c[0] == "(x1, 0.5)"]
    assert _reference("add")(*args).dtype == np.float32
    case = promotion_case("add", "int32", "float32")
    assert case is not None
    assert _reference("add")(*case[0]).dtype == np.float64


@pytest.mark.parametrize("op", SINGULAR)
def test_the_singular_matrices_are_singular(op: str) -> None:
    for dtype in DTYPES[op]:
        case = singular_case(op, dtype)
        assert case is not None
        (matrix, *_), _ = case
        assert matrix.dtype == np.dtype(dtype)
        assert np.linalg.matrix_rank(matrix.astype(np.complex128)) == matrix.shape[-1] - 1
    assert singular_case("linalg.qr", "float64") is None


def test_the_numpy_backend_passes_every_new_check() -> None:
    report = check_backend("numpy")
    assert report.ok, str(report)
    kinds = {r.check for r in report.passed}
    assert {"errors", "singular", "scalars", "promotion"} <= kinds
    passed = {r.name for r in report.passed}
    for name in (
        "numpy-to_numpy-writable",
        "numpy-dtypes",
        "numpy.matmul-errors-shapes",
        "numpy.linalg.cholesky-singular-complex64",
        "numpy.linalg.slogdet-singular-float32",
        "numpy.equal-scalars-bool",
        "numpy.where-promotion-complex64-float64",
        "numpy.stack-promotion-int32-int64",
    ):
        assert name in passed, name
    # Nothing of these is skipped: each mistake is one NumPy refuses, each case one it computes.
    assert not [r for r in report.skipped if r.check in kinds - {"values"}]
