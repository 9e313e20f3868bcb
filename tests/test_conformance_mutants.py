"""The conformance suite catches what the plugin guide promises and a backend breaks.

Each test builds a small real backend on NumPy (a ``prism_core.extending.Backend`` whose variants
are registered for it, as a plugin's are), plants one defect in a copy of it (a *mutant*), and
runs the suite on both: the mutant fails exactly the checks of the defect, its un-mutated twin
passes them.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.dispatch.ops import remove_variants
from prism_core.testing import ConformanceReport, check_backend

from .conftest import put_distribution_on_path

_names = itertools.count()


class TwinBackend(prism.extending.Backend):
    """NumPy arrays, as the reference's: right in every way the suite checks."""

    name = "twin"
    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})

    def availability(self) -> prism.extending.Availability:
        return prism.extending.Availability(True)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        return isinstance(value, (np.ndarray, np.generic)) or not hasattr(value, "__dlpack__")

    def empty(self, shape: Any, dtype: Any) -> Any:
        return np.empty(tuple(shape), dtype=dtype)


def add(x1: Any, x2: Any, /) -> Any:
    return np.add(x1, x2)


def sum_(x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False) -> Any:
    dt = None if dtype is None else prism.dtype(dtype).numpy
    return np.sum(x, axis=axis, dtype=dt, keepdims=keepdims)


def inv(x: Any, /) -> Any:
    return np.linalg.inv(x)


def matmul(x1: Any, x2: Any, /) -> Any:
    return np.matmul(x1, x2)


def large(x1: Any, x2: Any, /) -> bool | str:
    """A ``can_run`` as the guide asks for: shapes only."""
    return True if x1.ndim == 2 and x2.ndim == 2 else "2-D matrices only"


#: The twin's variants: op -> (function, can_run).
TWIN: dict[str, tuple[Callable[..., Any], Any]] = {
    "add": (add, None),
    "sum": (sum_, None),
    "linalg.inv": (inv, None),
    "matmul": (matmul, large),
}


# -- the mutants' defects ---------------------------------------------------------------------


class ReadOnlyToNumpy(TwinBackend):
    """(a) ``to_numpy`` gives a read-only array (a view of a device buffer, say)."""

    def to_numpy(self, array: Any) -> Any:
        out = np.array(array)
        out.flags.writeable = False
        return out


def inv_in_other_words(x: Any, /) -> Any:
    """(b) The reference's exception, LinAlgError, in other words."""
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError("inv takes square matrices")
    return np.linalg.inv(x)


def sum_ignoring_keepdims(
    x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False
) -> Any:
    """(c) ``keepdims`` is taken and ignored."""
    dt = None if dtype is None else prism.dtype(dtype).numpy
    return np.sum(x, axis=axis, dtype=dt)


def add_in_float32(x1: Any, x2: Any, /) -> Any:
    """(d) int32 with float32 computed in float32 (NumPy: float64, exact for every int32)."""
    kinds = {getattr(x, "dtype", None) for x in (x1, x2)}
    if kinds == {np.dtype("int32"), np.dtype("float32")}:
        return np.add(x1, x2, dtype=np.float32)
    return np.add(x1, x2)


def reads_the_data(x1: Any, x2: Any, /) -> bool | str:
    """(e) A ``can_run`` that reads an element: no answer for ``prism explain``'s specs."""
    return True if x1.size == 0 or float(abs(np.ravel(x1)[0])) < 1e300 else "too large"


def _converting(backend: prism.extending.Backend) -> Callable[..., bool | str]:
    def converts(x1: Any, x2: Any, /) -> bool | str:
        """(f) A ``can_run`` that converts its arguments to ask them."""
        return True if backend.asarray(x1).ndim == 2 else "2-D matrices only"

    return converts


# -- running the suite ------------------------------------------------------------------------


@pytest.fixture
def register() -> Iterator[Callable[..., ConformanceReport]]:
    """``register(backend, **replaced)`` gives ``backend`` the twin's variants (those named
    in ``replaced``, by op, as given) and runs the suite on it."""
    backends: list[str] = []

    def run(backend: prism.extending.Backend, **replaced: Any) -> ConformanceReport:
        backends.append(backend.name)
        for op, (fn, can_run) in TWIN.items():
            key = op.replace("linalg.", "")
            fn, can_run = replaced.get(key, (fn, can_run))
            prism.extending.kernel(
                op,
                backend=backend.name,
                priority=-100,
                can_run=can_run,
                name=f"{backend.name}.{op}",
            )(fn)
        return check_backend(backend)

    yield run
    remove_variants(lambda v: v.backend in backends)


def _backend(cls: type[TwinBackend]) -> TwinBackend:
    backend = cls()
    backend.name = f"{cls.__name__.lower()}{next(_names)}"
    return backend


def _failed(report: ConformanceReport) -> dict[str, str]:
    """The failed checks, by name without the backend's prefix (``add-promotion-...``)."""
    prefix = f"{report.backend}."
    return {
        r.name.removeprefix(prefix).removeprefix(f"{report.backend}-"): r.detail
        for r in report.failed
    }


def _passed(report: ConformanceReport) -> set[str]:
    prefix = f"{report.backend}."
    return {r.name.removeprefix(prefix).removeprefix(f"{report.backend}-") for r in report.passed}


def test_the_twin_passes_every_check(register: Callable[..., ConformanceReport]) -> None:
    report = register(_backend(TwinBackend))
    assert report.ok, str(report)
    # The checks the mutants fail are among those it passes.
    assert {
        "to_numpy-writable",
        "linalg.inv-errors-rank",
        "linalg.inv-errors-square",
        "sum-kwarg-keepdims",
        "add-promotion-int32-float32",
        "matmul-can_run",
    } <= _passed(report)


def test_a_read_only_to_numpy_fails_to_numpy_writable(
    register: Callable[..., ConformanceReport],
) -> None:
    report = register(_backend(ReadOnlyToNumpy))
    assert _failed(report) == {
        "to_numpy-writable": (
            "to_numpy(asarray(x)) of a float64 array of shape (3, 4) is read-only "
            "(flags.writeable is False)"
        )
    }
    assert {(r.subject, r.check) for r in report.failed} == {(report.backend, "contract")}


def test_the_reference_s_exception_in_other_words_fails_errors(
    register: Callable[..., ConformanceReport],
) -> None:
    report = register(_backend(TwinBackend), inv=(inv_in_other_words, None))
    failed = _failed(report)
    assert set(failed) == {"linalg.inv-errors-rank", "linalg.inv-errors-square"}
    assert failed["linalg.inv-errors-square"] == (
        "raised LinAlgError: inv takes square matrices; the NumPy reference raises "
        "LinAlgError: Last 2 dimensions of the array must be square"
    )
    assert {r.check for r in report.failed} == {"errors"}
    # Its values, and what it says of a singular matrix (the reference's words), are right.
    assert {"linalg.inv-values-float64-standard", "linalg.inv-singular-float64"} <= _passed(report)


def test_a_reduction_ignoring_keepdims_fails_its_kwarg_check(
    register: Callable[..., ConformanceReport],
) -> None:
    report = register(_backend(TwinBackend), sum=(sum_ignoring_keepdims, None))
    failed = _failed(report)
    assert set(failed) == {"sum-kwarg-keepdims"}
    assert failed["sum-kwarg-keepdims"] == "keepdims=True: shape (), expected (1, 1)"
    assert {r.check for r in report.failed} == {"kwarg"}


def test_a_wrong_promotion_fails_promotion(register: Callable[..., ConformanceReport]) -> None:
    report = register(_backend(TwinBackend), add=(add_in_float32, None))
    failed = _failed(report)
    assert set(failed) == {"add-promotion-int32-float32"}
    assert failed["add-promotion-int32-float32"].startswith("int32 with float32: ")
    assert "dtype float32, expected float64" in failed["add-promotion-int32-float32"] or (
        "values differ" in failed["add-promotion-int32-float32"]
    )
    assert {r.check for r in report.failed} == {"promotion"}
    # A Python scalar stays weak: float32 with 0.5 is float32, as the reference says.
    assert "add-scalars-float32" in _passed(report)


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (lambda backend: reads_the_data, "for ArraySpecs of the arguments"),
        (_converting, "called Backend.asarray(); can_run is asked before anything is converted"),
    ],
    ids=["reads-data", "converts"],
)
def test_a_can_run_that_needs_the_data_fails_can_run(
    register: Callable[..., ConformanceReport],
    make: Callable[[prism.extending.Backend], Any],
    words: str,
) -> None:
    backend = _backend(TwinBackend)
    report = register(backend, matmul=(matmul, make(backend)))
    failed = _failed(report)
    assert set(failed) == {"matmul-can_run"}, failed
    assert words in failed["matmul-can_run"]


def test_only_the_declared_dtypes_are_tried(register: Callable[..., ConformanceReport]) -> None:
    class FloatsOnly(TwinBackend):
        def dtypes(self, device: Any = None) -> frozenset[str] | None:
            return frozenset({"float64", "float32", "complex128", "complex64"})

        def asarray(self, obj: Any, dtype: Any = None) -> Any:
            out = np.asarray(obj, dtype=dtype)
            if out.dtype.kind not in "fc":  # it holds none: converting one is the suite's fault
                raise AssertionError(f"converted a {out.dtype} array, which it does not hold")
            return out

    backend = _backend(FloatsOnly)
    report = register(backend)
    assert report.ok, str(report)
    skipped = {r.name.removeprefix(f"{backend.name}."): r.detail for r in report.skipped}
    reason = f"{backend.name} does not hold int32 (Backend.dtypes)"
    assert skipped["add-values-int32-standard"] == reason
    assert skipped["add-dtype-int32"] == reason
    assert skipped["add-scalars-int32"] == reason
    assert skipped["add-promotion-int32-float32"] == reason
    assert skipped[f"{backend.name}-roundtrip-int32"] == reason
    # The keyword checks run in a dtype it holds; those of a dtype it does not are left out.
    assert "sum-kwarg-dtype" in _passed(report)
    assert "add-promotion-float32-float64" in _passed(report)


def test_a_malformed_dtypes_declaration_fails_its_check(
    register: Callable[..., ConformanceReport],
) -> None:
    class Misnamed(TwinBackend):
        def dtypes(self, device: Any = None) -> frozenset[str] | None:
            return frozenset({"float64", "bool"})  # Prism's name is bool_

    report = register(_backend(Misnamed))
    assert _failed(report) == {
        "dtypes": "dtypes() holds 'bool'; Prism's name of that dtype is 'bool_'"
    }


@pytest.fixture
def floats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The backends of tests/conformance_floats_plugin.py, found through a real entry point."""
    put_distribution_on_path(
        monkeypatch,
        tmp_path / "site",
        "prism-test-floats",
        "1.0",
        "[prism.plugins]\nfloats = tests.conformance_floats_plugin\n",
    )
    ps = prism.extending.reload_plugins(
        prism.extending.PluginSettings(strict=True, allow=("floats",))
    )
    assert ps.records["floats"].status == "loaded"
    yield
    prism.extending.reload_plugins()


@pytest.mark.usefixtures("floats")
def test_dispatch_declines_what_the_backend_declares_it_does_not_hold() -> None:
    report = check_backend("floats")
    assert report.ok, str(report)
    assert "floats-dtypes-declined" in {r.name for r in report.passed}
    # A backend that declares its dtypes for its default device only: dispatch, which asks for
    # the device it plans on, is never told, and would hand it int64 arrays.
    loose = check_backend("loosefloats")
    failed = {r.name: r.detail for r in loose.failed}
    assert set(failed) == {"loosefloats-dtypes-declined"}
    assert re.fullmatch(
        r"add of int64 arrays: dispatch accepts loosefloats\.add on \S+, though loosefloats "
        r"does not hold int64: Backend\.dtypes\(device\) must say so for each device it drives",
        failed["loosefloats-dtypes-declined"],
    )


def test_a_result_in_a_dtype_not_held_is_compared_by_its_values(
    register: Callable[..., ConformanceReport],
) -> None:
    """A backend without 64-bit types (JAX without x64): the reference's int64 sum of int32
    arrays is compared by its values (computed in int32 here), not by its dtype; a call whose
    reference result it cannot hold and which it refuses is skipped, not failed."""

    class Narrow(TwinBackend):
        def dtypes(self, device: Any = None) -> frozenset[str] | None:
            return frozenset({"float32", "complex64", "int32", "bool_"})

    def sum_narrow(
        x: Any, /, *, axis: Any = None, dtype: Any = None, keepdims: bool = False
    ) -> Any:
        out = sum_(x, axis=axis, dtype=dtype, keepdims=keepdims)
        return out.astype(np.int32) if out.dtype == np.int64 else out

    def add_narrow(x1: Any, x2: Any, /) -> Any:
        out = np.add(x1, x2)
        if out.dtype.itemsize == 8 and out.dtype.kind != "c":
            raise TypeError(f"holds no {out.dtype}")  # refuses what it cannot hold
        return out

    backend = _backend(Narrow)
    report = register(backend, sum=(sum_narrow, None), add=(add_narrow, None))
    assert report.ok, str(report)
    results = {r.name.removeprefix(f"{backend.name}."): r for r in report.results}
    assert results["sum-values-int32-standard"].status == "passed"
    assert results["sum-dtype-int32"].detail == (
        f"the NumPy reference's result: {backend.name} does not hold int64 (Backend.dtypes) "
        "(in every shape)"
    )
    assert results["add-promotion-int32-float32"].status == "skipped"
    assert results["add-promotion-int32-float32"].detail == (
        f"the NumPy reference's result: {backend.name} does not hold float64 (Backend.dtypes)"
    )
