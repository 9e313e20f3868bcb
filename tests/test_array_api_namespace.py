"""``prism_core.array_api`` as a whole: every name of the standard 2024.12 is there
(and on ``prism_core`` itself), and the namespace works as the module under test of the
standard's tooling.

The standard's own test suite (array-api-tests, not on PyPI and not vendored here) is pointed
at a namespace with ``ARRAY_API_TESTS_MODULE=prism_core.array_api``; it builds its inputs with
Hypothesis's Array API strategies (``hypothesis.extra.array_api``), which read the namespace's
version, dtypes, ``finfo``/``iinfo`` and create arrays with its ``asarray``, ``zeros``,
``reshape`` and ``isnan``.  Those strategies are run here on Prism's namespace for real.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

strict = pytest.importorskip(
    "array_api_strict", reason="the reference namespace: pip install array-api-strict"
)
hypothesis = pytest.importorskip("hypothesis", reason="the Array API strategies need hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.array_api import make_strategies_namespace  # noqa: E402

import prism_core  # noqa: E402
from prism_core import array_api as xp  # noqa: E402

#: array-api-strict's own names, not the standard's.
STRICT_ONLY = {
    "ArrayAPIStrictFlags",
    "Device",
    "ModuleType",
    "get_array_api_strict_flags",
    "reset_array_api_strict_flags",
    "set_array_api_strict_flags",
    "__version__",  # array-api-strict's version
}
#: Functions array-api-strict has that the standard added after 2024.12 (they refuse to run at
#: 2024.12 in array-api-strict; Prism's namespace follows 2024.12 and need not have them).
AFTER_2024 = {"isin", "broadcast_shapes"}
LINALG_AFTER_2024 = {"eig", "eigvals"}
SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow], database=None
)


def _standard_names(module: Any) -> set[str]:
    """The public names of one of array-api-strict's namespaces (its helpers excluded)."""
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    return {n for n in names if not n[0].isupper() and n not in STRICT_ONLY}


def test_the_version_is_2024_12() -> None:
    assert xp.__array_api_version__ == "2024.12"


def test_every_name_of_the_main_namespace_is_here() -> None:
    missing = sorted(_standard_names(strict) - AFTER_2024 - set(dir(xp)))
    assert missing == []
    for name in _standard_names(strict) - AFTER_2024 - {"newaxis"}:  # newaxis is None
        assert getattr(xp, name) is not None, name
    assert xp.newaxis is None


@pytest.mark.parametrize("extension", ["linalg", "fft"])
def test_every_function_of_the_extensions_is_here(extension: str) -> None:
    theirs = getattr(strict, extension)
    names = {
        n
        for n in dir(theirs)
        if not n.startswith("_") and callable(getattr(theirs, n)) and n.islower()
    }
    # array-api-strict's extension modules also hold its helpers and dtypes: keep the
    # functions the standard lists for the extension (those array-api-strict exports there).
    listed = set(getattr(theirs, "__all__", names))
    ours = getattr(xp, extension)
    missing = sorted((listed & names) - LINALG_AFTER_2024 - set(dir(ours)))
    assert missing == []


def test_the_functions_are_prisms_ops_on_prism_core_too() -> None:
    """Each function of the namespace is the Prism op of its name, the same object as on
    ``prism_core`` (``pow`` is ``power``); the data-type and shape functions are plain
    functions, on ``prism_core`` too."""
    from prism_core.array_api import _OPS, _PLAIN

    for name, op in _OPS.items():
        function = getattr(xp, name)
        assert function is prism_core.get_op(op).function, name
        assert getattr(prism_core, name) is function, name
    for name in _PLAIN:
        assert getattr(prism_core, name) is getattr(xp, name), name


def test_the_dtypes_are_prisms_and_equal_numpys() -> None:
    for name in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                 "uint64", "float32", "float64", "complex64", "complex128"):  # fmt: skip
        dt = getattr(xp, name)
        assert isinstance(dt, prism_core.DType), name
        assert np.zeros(1, dtype=name).dtype == dt, name
    assert xp.__array_namespace_info__().dtypes(kind="unsigned integer") == {
        "uint8": xp.uint8,
        "uint16": xp.uint16,
        "uint32": xp.uint32,
        "uint64": xp.uint64,
    }


XPS = make_strategies_namespace(xp)


@SETTINGS
@given(x=XPS.arrays(dtype=XPS.scalar_dtypes(), shape=XPS.array_shapes(min_dims=0, max_dims=3)))
def test_hypothesis_builds_arrays_through_the_namespace(x: Any) -> None:
    """Hypothesis's Array API strategies (the standard's test suite's input machinery) make
    arrays of every dtype and shape with Prism's functions; they are NumPy's arrays, whose
    dtype equals Prism's."""
    assert isinstance(x, np.ndarray)
    assert x.dtype in set(xp.__array_namespace_info__().dtypes().values())


@SETTINGS
@given(data=st.data())
def test_mutually_broadcastable_shapes_and_results(data: st.DataObject) -> None:
    """The strategies' broadcastable shapes through Prism's elementwise ``add`` and
    ``broadcast_arrays``: the shapes are the standard's (array-api-strict's)."""
    shapes = data.draw(XPS.mutually_broadcastable_shapes(2, min_dims=0, max_dims=3))
    dtype = data.draw(XPS.numeric_dtypes())
    a = data.draw(XPS.arrays(dtype=dtype, shape=shapes.input_shapes[0]))
    b = data.draw(XPS.arrays(dtype=dtype, shape=shapes.input_shapes[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow (integers, floats near max): not the point
        out = xp.add(a, b)
        expected = strict.add(strict.asarray(a), strict.asarray(b))
    assert out.shape == shapes.result_shape
    assert out.dtype.name == str(expected.dtype).rpartition(".")[2]  # "array_api_strict.int8"
    assert tuple(x.shape for x in xp.broadcast_arrays(a, b)) == (shapes.result_shape,) * 2
