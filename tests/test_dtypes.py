"""Prism's data types next to NumPy's, and the dtypes a variant's ``can_run`` sees.

A ``can_run`` gets real arrays when a call runs and :class:`prism_core.ArraySpec` in
``prism.explain``: it must give the same verdict for both, whichever dtypes it is written with.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core import ArraySpec
from prism_core.kernel.description.dtypes import ALL

_names = itertools.count()
#: The Prism types NumPy has, with NumPy's name for each.
IN_NUMPY = {
    "bool_": "bool",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int64": "int64",
    "uint8": "uint8",
    "uint16": "uint16",
    "uint32": "uint32",
    "uint64": "uint64",
    "float16": "float16",
    "float32": "float32",
    "float64": "float64",
    "complex64": "complex64",
    "complex128": "complex128",
}


@pytest.mark.parametrize("name", sorted(IN_NUMPY))
def test_a_prism_dtype_equals_and_hashes_like_its_numpy_dtype(name: str) -> None:
    ours = prism.dtype(name)
    theirs = np.dtype(IN_NUMPY[name])
    assert ours.numpy == theirs
    assert ours == theirs and theirs == ours
    assert not ours != theirs  # noqa: SIM202 - __ne__ is what is tested
    assert not theirs != ours  # noqa: SIM202
    assert hash(ours) == hash(theirs)  # equal objects hash alike
    assert {ours: "found"}[theirs] == "found"
    assert {theirs: "found"}[ours] == "found"
    assert theirs in {ours} and ours in {theirs}
    assert ours == theirs.type  # and the scalar type, as NumPy's dtype does
    others = [d for d in ALL if d is not ours]
    assert all(d != theirs for d in others)


def test_types_numpy_lacks_have_no_numpy_dtype() -> None:
    missing = [d for d in ALL if d.name not in IN_NUMPY]
    assert prism.bfloat16 in missing
    for d in missing:
        assert d.numpy is None
        assert hash(d) == hash(d)
        assert all(d != np.dtype(n) for n in IN_NUMPY.values())


def test_array_specs_carry_the_dtype_a_numpy_array_would_have() -> None:
    for name, numpy_name in IN_NUMPY.items():
        for given in (name, prism.dtype(name), np.dtype(numpy_name), prism.dtype(name).vocab):
            spec = ArraySpec((3, 4), given)
            assert type(spec.dtype) is type(np.dtype(numpy_name)), given
            assert spec.dtype == np.zeros(1, numpy_name).dtype
    bf16 = ArraySpec((3, 4), "bf16")
    assert bf16.dtype is prism.bfloat16  # NumPy has no bfloat16: Prism's own
    assert repr(ArraySpec((2, 3), "fp32")) == "ArraySpec((2, 3), float32)"
    assert repr(ArraySpec((2,), bool)) == "ArraySpec((2,), bool_)"


# -- can_run verdicts: a real array and its ArraySpec ---------------------------------------------

#: can_run checks written in NumPy's terms ...
NUMPY_STYLE: dict[str, Callable[[Any], bool]] = {
    "== np.float32": lambda a: a.dtype == np.float32,
    "== np.dtype": lambda a: a.dtype == np.dtype("float32"),
    "== 'float32'": lambda a: a.dtype == "float32",
    "in (np.float32, np.float64)": lambda a: a.dtype in (np.float32, np.float64),
    "in {np.dtype(f4), np.dtype(f8)}": lambda a: a.dtype in {np.dtype("f4"), np.dtype("f8")},
    "str in (...)": lambda a: str(a.dtype) in ("float32", "float64"),
    "np.issubdtype floating": lambda a: bool(np.issubdtype(a.dtype, np.floating)),
    "kind and itemsize": lambda a: a.dtype.kind == "f" and a.dtype.itemsize == 4,
    "dict lookup": lambda a: {np.dtype("float32"): True}.get(a.dtype, False),
}
#: ... and in Prism's.
PRISM_STYLE: dict[str, Callable[[Any], bool]] = {
    "== prism.float32": lambda a: a.dtype == prism.float32,
    "in (prism.float32, prism.float64)": lambda a: a.dtype in (prism.float32, prism.float64),
    "in {prism.float32, prism.float64}": lambda a: a.dtype in {prism.float32, prism.float64},
    "prism.dtype(...).kind": lambda a: prism.dtype(a.dtype).kind == "f",
    "prism.dtype(...).vocab": lambda a: prism.dtype(a.dtype).vocab in ("fp32", "fp64"),
    "dict lookup": lambda a: {prism.float32: True}.get(a.dtype, False),
}


@pytest.mark.parametrize("check", sorted(NUMPY_STYLE) + [f"prism: {c}" for c in PRISM_STYLE])
@pytest.mark.parametrize("name", sorted(IN_NUMPY))
def test_can_run_gives_the_same_verdict_for_an_array_and_its_spec(check: str, name: str) -> None:
    test = PRISM_STYLE[check.removeprefix("prism: ")] if check.startswith("prism: ") else None
    test = test or NUMPY_STYLE[check]
    array = np.zeros((4, 4), dtype=IN_NUMPY[name])
    assert test(ArraySpec((4, 4), name)) == test(array), (check, name)


@pytest.mark.parametrize("style", ["numpy", "prism"])
def test_dispatch_and_explain_agree(style: str) -> None:
    """Through the dispatcher: the variant ``explain`` picks for a spec runs for the array."""
    name = f"dtypes_{style}_{next(_names)}"
    accepted = (np.float32, np.float64) if style == "numpy" else (prism.float32, prism.float64)

    @prism.extending.operation(name=name, array_args=(0,))
    def reference(x: Any) -> Any:
        return ("reference", x.shape)

    def floats_only(x: Any) -> bool | str:
        return True if x.dtype in accepted else f"not a float32 or float64 array: {x.dtype}"

    @reference.variant(priority=5, can_run=floats_only, name=f"{name}.floats")
    def floats(x: Any) -> Any:
        return ("floats", x.shape)

    for dtype, expected in (("float32", "floats"), ("float64", "floats"), ("int32", "reference")):
        decision = prism.explain(reference, ArraySpec((8, 8), dtype))
        assert decision.chosen == f"{name}.{expected}", (dtype, decision)
        assert reference(np.zeros((8, 8), dtype))[0] == expected, dtype
        assert prism.explain(reference, np.zeros((8, 8), dtype)).chosen == decision.chosen
