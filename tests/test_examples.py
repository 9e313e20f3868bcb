"""``prism_core.backend_kit.Examples`` (prism_core/kernel/op_examples.py) and what
``operation()`` gained for plugins: ``reference=False`` (an op declared alone, its variants all
from plugins) and ``examples=`` (how ``prism bench`` and ``prism.tuning.tune`` make its
arguments)."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core._tuning import tuner
from prism_core.backend_kit import Examples

_names = itertools.count()


def unique(stem: str) -> str:
    """An op name no other test of this process declared."""
    return f"examplestest.{stem}{next(_names)}"


def make(n: int, dtype: str, batch: int | None) -> tuple[Any, ...]:
    return (np.ones((batch or 1, n), dtype=dtype),)


def nbytes(n: int, dtype: str, batch: int | None) -> int:
    return (batch or 1) * n * np.dtype(dtype).itemsize + 8


def examples(**changes: Any) -> Examples:
    fields: dict[str, Any] = {
        "make": make, "nbytes": nbytes, "size": "a vector of n", "quick": (4, (8, 2)),
        "full": [16],
    }  # fmt: skip
    return Examples(**{**fields, **changes})


def test_sizes_are_n_batch_pairs_and_the_record_is_read_only() -> None:
    record = examples()
    assert record.sizes() == ((4, None), (8, 2))
    assert record.sizes(quick=False) == ((16, None),)
    assert record.axis == "size n" and record.dtype_label is None and not record.axis_cells
    with pytest.raises(AttributeError, match="read-only"):
        record.size = "other"  # type: ignore[misc]
    assert record == examples() and hash(record) == hash(examples())
    assert record != examples(group="g")
    assert "size='a vector of n'" in repr(record)
    assert type(record).__module__ == "prism_core.backend_kit"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"make": "module:function"}, "make must be a function"),
        ({"quick": ()}, "quick: expected a non-empty sequence"),
        ({"quick": "100"}, "quick: expected a non-empty sequence"),
        ({"full": [(8, 0)]}, r"full: each size is a positive int n or an \(n, batch\) pair"),
        ({"full": [True]}, "full: each size is a positive int"),
        ({"size": ""}, "size must be a phrase"),
        ({"batch": 0}, "batch must be a positive int or None"),
        ({"group": ""}, "group must be a non-empty str or None"),
        ({"cells": 3}, "cells must be a function or None"),
        ({"axis_cells": 1}, "axis_cells must be True or False"),
    ],
)
def test_a_bad_field_is_named(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        examples(**changes)


def test_an_op_declared_alone_has_no_variant_until_a_plugin_gives_one() -> None:
    name = unique("alone")

    def alone(x: Any, scale: float = 1.0) -> Any:
        """alone(x, scale): x times scale."""
        raise AssertionError("never run")

    fn = prism.extending.operation(alone, name=name, array_args=(0,), reference=False)
    op = prism.get_op(name)
    assert op.variants == [] and fn is op.function
    assert str(fn.__signature__) == "(x: 'Any', scale: 'float' = 1.0) -> 'Any'"  # type: ignore[attr-defined]
    with pytest.raises(prism.DispatchError):
        fn(np.ones(3))
    with pytest.raises(TypeError, match="reference must be True or False"):
        prism.extending.operation(alone, name=unique("bad"), reference="no")  # type: ignore[arg-type]


def test_an_ops_examples_are_what_tune_and_its_sizes_use() -> None:
    name = unique("total")
    record = examples(batch=3, dtype_label="fixed")

    @prism.extending.operation(name=name, examples=record)
    def total(x: Any) -> Any:
        return x.sum()

    assert prism.get_op(name).examples is record
    assert tuner.declared_examples()[name] is record
    (args,) = [tuner.example_arguments(name, 5, "float32")]
    assert args[0].shape == (3, 5) and args[0].dtype == np.float32  # the default batch
    assert tuner.example_bytes(name, 5, "float32", batch=2) == 2 * 5 * 4 + 8
    with pytest.raises(
        prism.tuning.TuningError, match="batch: expected a positive number of items"
    ):
        tuner.example_arguments(name, 5, batch=-1)
    report = prism.tuning.tune(name, sizes=[6], dtypes=["float32", "float64"], budget_s=1,
                        record=False, progress=False)  # fmt: skip
    assert [c.shapes for c in report.cases] == [((3, 6),)]  # fixed types: one case per size
    with pytest.raises(TypeError, match=r"examples must be a prism_core\.backend_kit\.Examples"):
        prism.extending.operation(total, name=unique("bad"), examples={"make": make})  # type: ignore[arg-type]


def test_an_op_without_examples_says_which_ops_have_them() -> None:
    name = unique("plain")
    prism.extending.operation(lambda x: x, name=name)
    with pytest.raises(prism.tuning.TuningError) as info:
        tuner.example_arguments(name, 4)
    assert f"no example arguments for {name!r}: sizes= works for " in str(info.value)
    assert "matmul" in str(info.value)
