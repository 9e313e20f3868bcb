"""The conformance suite for backend authors (prism_core.testing) finds what is wrong."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.dispatch.ops import remove_variants
from prism_core.testing import (
    check_backend,
    conformance_checks,
    input_cases,
    keyword_cases,
    standard_inputs,
)

from .conftest import put_distribution_on_path

#: Every check of a variant is named VARIANT-KIND[-DTYPE[-SHAPE]] or VARIANT-kwarg-NAME.
SHAPES = ("standard", "empty", "one", "odd", "strided", "fortran")


@pytest.fixture
def wrong(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The deliberately wrong backend of tests/wrong_backend_plugin.py, found through a real
    entry point."""
    put_distribution_on_path(
        monkeypatch,
        tmp_path / "site",
        "prism-test-wrong",
        "1.0",
        "[prism.plugins]\nwrong = tests.wrong_backend_plugin\n",
    )
    ps = prism.extending.reload_plugins(
        prism.extending.PluginSettings(strict=True, allow=("wrong",))
    )
    assert ps.records["wrong"].status == "loaded"
    yield
    prism.extending.reload_plugins()


_names = itertools.count()


class GoodBackend(prism.extending.Backend):
    name = "good"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism.extending.Availability:
        return prism.extending.Availability(True)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, np.ndarray) or not hasattr(value, "__dlpack__")

    def empty(self, shape: Any, dtype: Any) -> Any:
        return np.empty(tuple(shape), dtype=dtype)


def test_the_numpy_backend_conforms() -> None:
    report = check_backend("numpy")
    assert report.ok, str(report)
    names = {r.name for r in report.passed}
    # Results, output dtypes and types, for each dtype, over several shapes and layouts.
    for dtype in ("float64", "float32", "complex128", "complex64", "int64", "int32"):
        for shape in SHAPES:
            assert f"numpy.matmul-values-{dtype}-{shape}" in names, (dtype, shape)
        assert f"numpy.matmul-dtype-{dtype}" in names
        assert f"numpy.matmul-type-{dtype}" in names
    assert "numpy.fft.fft-dtype-complex64" in names
    assert "numpy.linalg.solve-values-float64-vector" in names
    assert "numpy.linalg.svd-type-complex64" in names
    # Every keyword argument each op documents.
    for keyword in ("n", "axis", "norm"):
        assert f"numpy.fft.rfft-kwarg-{keyword}" in names, keyword
    assert "numpy.sum-kwarg-dtype" in names
    # Nothing skipped but what cannot be compared: random numbers.
    assert [r.name for r in report.skipped if r.name.startswith("numpy.")] == [
        "numpy.random.normal",
    ]
    # Each check has its subject and its kind.
    svd = next(r for r in report.results if r.name == "numpy.linalg.svd-type-float32")
    assert (svd.subject, svd.check) == ("numpy.linalg.svd", "type")
    contract = next(r for r in report.results if r.name == "numpy-roundtrip-float64")
    assert (contract.subject, contract.check) == ("numpy", "contract")


def test_checks_are_planned_before_they_run() -> None:
    checks = conformance_checks("numpy")
    names = [c.name for c in checks]
    assert len(names) == len(set(names)), "check names are unique"
    assert names[0] == "numpy-availability"
    assert re.fullmatch(r"[\w.\-]+", "".join(names)), "names are readable test ids"
    first = next(c for c in checks if c.name == "numpy.fft.fft-dtype-complex64")
    result = first.run()
    assert (result.name, result.status) == ("numpy.fft.fft-dtype-complex64", "passed")


@pytest.mark.usefixtures("wrong")
def test_a_wrong_backend_is_caught_check_by_check() -> None:
    """Each defect of tests/wrong_backend_plugin.py is caught by a check named after it."""
    report = check_backend("wrong")
    failed = {r.name: r.detail for r in report.failed}
    # 1. fft.fft drops the imaginary part: its values are wrong in every dtype.
    for dtype in ("complex128", "complex64", "float64", "float32"):
        assert failed[f"wrong.fft.fft-values-{dtype}-standard"].startswith(
            "values differ from the NumPy reference by up to"
        )
    # 2. complex128 for complex64, float64 for float32: the dtype checks.
    assert failed["wrong.fft.ifft-dtype-complex64"] == (
        "standard: dtype complex128, expected complex64 (the NumPy reference's)"
    )
    assert failed["wrong.matmul-dtype-float32"] == (
        "standard: dtype float64, expected float32 (the NumPy reference's)"
    )
    # 3. SVD as a plain tuple; 4. inv as a list: the type checks.
    assert failed["wrong.linalg.svd-type-float64"] == (
        "standard: returned a plain tuple; expected a named tuple with fields U, S, Vh, as the "
        "NumPy reference returns"
    )
    assert failed["wrong.linalg.inv-type-float64"] == (
        "standard: returned list, not an array of backend 'wrong'"
    )
    # 5. rfft without n, axis and norm: one check per keyword argument.
    for keyword in ("n", "axis", "norm"):
        detail = failed[f"wrong.fft.rfft-kwarg-{keyword}"]
        assert detail.startswith(f"{keyword}="), detail
        assert f"got an unexpected keyword argument '{keyword}'" in detail
    # What is right passes: the contract, the right variants, and the right parts of the wrong.
    passed = {r.name for r in report.passed}
    assert {"wrong-identity", "wrong-roundtrip-float32", "wrong-empty"} <= passed
    assert not [n for n in failed if n.startswith(("wrong.add", "wrong.sum", "wrong-"))]
    assert "wrong.matmul-dtype-float64" in passed
    assert "wrong.matmul-values-float32-odd" in passed
    assert "wrong.fft.ifft-dtype-complex128" in passed
    assert "wrong.linalg.svd-values-float64-standard" in passed
    assert "wrong.fft.rfft-values-float32-fortran" in passed
    # Every failure is one of the five defects.
    kinds = {(r.subject, r.check) for r in report.failed}
    assert {subject for subject, _ in kinds} == {
        "wrong.fft.fft",
        "wrong.fft.ifft",
        "wrong.matmul",
        "wrong.linalg.svd",
        "wrong.linalg.inv",
        "wrong.fft.rfft",
    }
    assert ("wrong.fft.rfft", "kwarg") in kinds and ("wrong.fft.rfft", "values") not in kinds
    assert ("wrong.matmul", "values") not in kinds and ("wrong.matmul", "type") not in kinds
    with pytest.raises(AssertionError, match=r"wrong\.linalg\.inv-type-float64"):
        report.raise_for_failures()


def test_every_documented_keyword_argument_has_cases() -> None:
    """The keyword arguments of each op, as its documentation (the catalogue) states them, are
    exactly those the suite calls it with."""
    for name, op in prism.all_ops().items():
        if name == "random.normal" or not op.__doc__.startswith(f"{name}("):
            continue  # random numbers are not compared; user ops have no documented signature
        signature = op.__doc__[len(name) + 1 : op.__doc__.index("):")]
        params = [p.strip().split("=")[0] for p in signature.split(",")]
        if "/" in params:
            params = params[params.index("/") + 1 :]
        documented = {p for p in params if p and not p.startswith("*")}
        assert set(keyword_cases(name)) == documented, name
        assert input_cases(name), name


@pytest.mark.usefixtures("loopback")
def test_plugin_backends_conform() -> None:
    for name in ("loopback", "wrapped"):
        report = check_backend(name)
        assert report.ok, str(report)
        assert any(r.name.startswith(f"{name}.") for r in report.passed)


def test_user_ops_without_standard_inputs_are_skipped_not_guessed() -> None:
    opname = f"conf_scale_{next(_names)}"

    @prism.extending.operation(name=opname, array_args=(0,))
    def scale(x: Any) -> Any:
        return x * 2

    @scale.variant(priority=3, name=f"{opname}.off_by_one")
    def off_by_one(x: Any) -> Any:
        return x * 2 + 1

    report = check_backend("numpy")
    # The suite has no standard inputs for a user's op: it says so rather than guessing.
    assert any(
        r.name == f"{opname}.off_by_one" and r.detail == f"no standard inputs for {opname}"
        for r in report.skipped
    )


def test_a_wrong_builtin_variant_is_caught() -> None:
    @prism.extending.kernel(
        "linalg.solve", requires={"kind": "cpu"}, priority=1, name="numpy.bad_solve"
    )
    def bad_solve(a: Any, b: Any) -> Any:
        return np.linalg.solve(a, b).T  # a transposed result

    try:
        report = check_backend("numpy")
        failed = {r.name: r.detail for r in report.failed}
        assert failed["numpy.bad_solve-values-float64-standard"].startswith(
            "values differ from the NumPy reference by up to"
        )
        assert failed["numpy.bad_solve-values-float64-odd"] == "shape (3, 65), expected (65, 3)"
        # A square result of the right shape: only the values are wrong; a vector right side
        # comes back as it should (transposing a vector changes nothing).
        assert "numpy.bad_solve-values-float64-vector" in {r.name for r in report.passed}
        assert "numpy.bad_solve-type-float64" in {r.name for r in report.passed}
        with pytest.raises(AssertionError, match=r"numpy\.bad_solve"):
            report.raise_for_failures()
    finally:
        remove_variants(lambda v: v.name == "numpy.bad_solve")


def test_contract_mistakes_are_caught() -> None:
    class LossyBackend(GoodBackend):
        name = "lossy"

        def to_numpy(self, array: Any) -> Any:
            return np.asarray(array, dtype=np.float32)  # loses precision and dtype

    report = check_backend(LossyBackend())
    failed = {r.name: r.detail for r in report.failed}
    assert failed["lossy-roundtrip-float64"] == (
        "to_numpy(asarray(x)) has dtype float32, expected float64"
    )
    assert check_backend(GoodBackend()).ok

    class BadName(GoodBackend):
        name = "Bad Name"

    (identity,) = [r for r in check_backend(BadName()).failed if r.check == "contract"]
    assert identity.name == "Bad Name-identity"
    assert "lowercase" in identity.detail

    class IgnoresDtype(GoodBackend):
        name = "ignores-dtype"

        def asarray(self, obj: Any, dtype: Any = None) -> Any:
            return np.asarray(obj)

        def empty(self, shape: Any, dtype: Any) -> Any:
            return np.empty(tuple(shape))

    failed = {r.name: r.detail for r in check_backend(IgnoresDtype()).failed}
    assert failed["ignores-dtype-asarray-dtype-float32"] == (
        "asarray(x, dtype=numpy.dtype('float32')) has dtype float64"
    )
    assert failed["ignores-dtype-empty"] == (
        "empty((2, 5), numpy.dtype('float32')) has dtype float64"
    )


def test_unavailable_backends_skip_with_their_reason() -> None:
    class Absent(GoodBackend):
        name = "absent"

        def availability(self) -> prism.extending.Availability:
            return prism.extending.Availability(False, "the ACME driver is not installed")

    report = check_backend(Absent())
    assert report.ok
    assert report.skipped[0].detail == "backend unavailable: the ACME driver is not installed"

    class Silent(Absent):
        def availability(self) -> prism.extending.Availability:
            return prism.extending.Availability(False)

    assert check_backend(Silent()).failed[0].detail == "unavailable without a reason"

    class Raising(Absent):
        def availability(self) -> prism.extending.Availability:
            raise OSError("driver crashed")

    assert "raised OSError: driver crashed" in check_backend(Raising()).failed[0].detail


def test_standard_inputs_are_well_formed() -> None:
    for op in prism.all_ops():
        for args, kwargs in standard_inputs(op):
            assert isinstance(args, tuple) and isinstance(kwargs, dict)
    assert standard_inputs("no.such.op") == []
    assert input_cases("no.such.op") == {} and keyword_cases("no.such.op") == {}
    (a, _), _ = standard_inputs("linalg.solve")[0]
    assert np.linalg.cond(a) < 10


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    "first",
    [
        "prism_core.testing",
        "prism_core.testing._cases",
        "prism_core.testing._cases.fft",
        "prism_core.testing._conformance",
        "prism_core.testing.pytest_plugin",
    ],
)
def test_the_suite_has_the_families_whichever_module_comes_first(first: str) -> None:
    """In a fresh interpreter, importing any module of the suite first (a family's cases
    included) leaves the suite with every family's ops; a family's cases need only the inputs
    module, not the suite that reads them."""
    family_first = first.startswith("prism_core.testing._cases.")
    code = (
        f"import sys, {first}\n"
        f"if {family_first}:\n"
        "    assert 'prism_core.testing._conformance' not in sys.modules, 'the suite was loaded'\n"
        "from prism_core.testing._conformance import DTYPES, input_cases\n"
        "assert 'fft.fftshift' in DTYPES and 'take' in DTYPES and 'linspace' in DTYPES\n"
        "assert input_cases('fft.fftshift')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(
    "op", sorted(o for o in prism.all_ops() if input_cases(o) and o != "random.normal")
)
def test_the_cases_are_what_they_say(op: str) -> None:
    """The reference computes every case without a warning; the layouts are what they are
    called; and the inputs are of the dtype asked for."""
    import warnings

    reference = prism.get_op(op).variants[0].resolve()
    for dtype in ("float64", "float32", "complex64", "int32"):
        cases = input_cases(op, dtype)
        if not cases:
            continue
        for shape, (args, kwargs) in cases.items():
            # The arrays of the call, those in a list of arrays (stack, concat) included.
            items = [b for a in args for b in (a if isinstance(a, (list, tuple)) else [a])]
            arrays = [a for a in items if isinstance(a, np.ndarray)]
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                reference(*args, **kwargs)
            if shape == "strided":
                assert any(not a.flags.c_contiguous and not a.flags.f_contiguous for a in arrays)
            if shape == "fortran":
                assert any(a.flags.f_contiguous and not a.flags.c_contiguous for a in arrays)
            if shape == "empty":  # an empty array, or a creation op's zero size (shape, n)
                assert any(a.size == 0 for a in arrays) or 0 in np.ravel(args[0])
            if shape == "odd":
                creation = op in ("zeros", "ones", "full", "triu_indices")
                assert creation or any(d % 2 for a in arrays for d in a.shape)
            for a in arrays:
                if op == "where" and a is args[0]:
                    assert a.dtype == np.bool_, (op, shape)  # the condition
                    continue
                # Indices and counts are integers whatever the dtype checked.
                index = op in ("repeat", "take", "take_along_axis", "searchsorted") and any(
                    a is b for b in args[1:]
                )
                assert a.dtype == np.dtype(dtype) or op in ("power", "fft.rfft") or (
                    index and a.dtype.kind in "iu"
                ), (op, shape)
        for keyword, calls in keyword_cases(op, dtype).items():
            for args, kwargs in calls:
                assert keyword in kwargs
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    reference(*args, **kwargs)
