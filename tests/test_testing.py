"""The conformance suite for backend authors (prism_core.testing) finds what is wrong."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core._dispatch.ops import remove_variants
from prism_core.testing import check_backend, standard_inputs

from .test_dispatch import loopback  # noqa: F401  (the fixture)

_names = itertools.count()


class GoodBackend(prism.Backend):
    name = "good"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism.Availability:
        return prism.Availability(True)

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
    names = {r.name for r in report.results}
    # Every builtin op's NumPy variant was called on standard inputs and compared.
    for op in ("matmul", "linalg.svd", "linalg.eig", "fft.fft", "convolve", "std"):
        assert any(n.startswith(f"numpy.{op} [") for n in names), op
    # (Other tests declare ops of their own, which have no standard inputs: not counted here.)
    assert [r.name for r in report.skipped if r.name.startswith("numpy.")] == [
        "numpy.random.normal"
    ]


@pytest.mark.usefixtures("loopback")
def test_plugin_backends_conform() -> None:
    for name in ("loopback", "wrapped"):
        report = check_backend(name)
        assert report.ok, str(report)
        assert any(r.name.startswith(f"{name}.") for r in report.passed)


def test_user_ops_without_standard_inputs_are_skipped_not_guessed() -> None:
    opname = f"conf_scale_{next(_names)}"

    @prism.operation(name=opname, array_args=(0,))
    def scale(x: Any) -> Any:
        return x * 2

    @scale.variant(priority=3, name=f"{opname}.off_by_one")
    def off_by_one(x: Any) -> Any:
        return x * 2 + 1

    report = check_backend("numpy")
    # The suite has no standard inputs for a user's op: it says so rather than guessing.
    assert any(
        r.name == f"{opname}.off_by_one [float64]"
        and r.detail == f"no standard inputs for {opname}"
        for r in report.skipped
    )


def test_a_wrong_builtin_variant_is_caught() -> None:
    @prism.kernel("linalg.solve", requires={"kind": "cpu"}, priority=1, name="numpy.bad_solve")
    def bad_solve(a: Any, b: Any) -> Any:
        return np.linalg.solve(a, b).T  # a transposed result

    try:
        report = check_backend("numpy")
        (failure,) = [r for r in report.failed if r.name == "numpy.bad_solve [float64]"]
        assert failure.detail.startswith("values differ from the NumPy reference by up to")
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
    assert failed["asarray/to_numpy round trip [float64]"] == (
        "to_numpy(asarray(x)) has dtype float32, expected float64"
    )
    assert check_backend(GoodBackend()).ok

    class BadName(GoodBackend):
        name = "Bad Name"

    (identity,) = [r for r in check_backend(BadName()).failed if r.name.startswith("identity")]
    assert "lowercase" in identity.detail


def test_unavailable_backends_skip_with_their_reason() -> None:
    class Absent(GoodBackend):
        name = "absent"

        def availability(self) -> prism.Availability:
            return prism.Availability(False, "the ACME driver is not installed")

    report = check_backend(Absent())
    assert report.ok
    assert report.skipped[0].detail == "backend unavailable: the ACME driver is not installed"

    class Silent(Absent):
        def availability(self) -> prism.Availability:
            return prism.Availability(False)

    assert check_backend(Silent()).failed[0].detail == "unavailable without a reason"

    class Raising(Absent):
        def availability(self) -> prism.Availability:
            raise OSError("driver crashed")

    assert "raised OSError: driver crashed" in check_backend(Raising()).failed[0].detail


def test_standard_inputs_are_well_formed() -> None:
    for op in prism.all_ops():
        for args, kwargs in standard_inputs(op):
            assert isinstance(args, tuple) and isinstance(kwargs, dict)
    assert standard_inputs("no.such.op") == []
    (a, _), _ = standard_inputs("linalg.solve")[0]
    assert np.linalg.cond(a) < 10
