"""Prism's value types are the dataclasses they declare.

Each value type of the modules the first call imports is a ``@dataclass`` with the flags it has
always had (frozen, equality, ordering): its constructor takes the fields with their defaults,
a frozen one refuses assignment, a mutable one is unhashable, a default made by a factory is
fresh for each instance, and the public ones pickle under their public module.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any

import pytest

import prism_core
from prism_core._host_report import HostReport
from prism_core.kernel.config import PathEntry
from prism_core.kernel.description.requirements import Clause
from prism_core.kernel.host_cpu import CpuMatch
from prism_core.nvidia_smi import SmiGpu

#: (class, frozen, eq, order) of every value type the first call of a process creates (and
#: the others of the same modules).
VALUE_TYPES = [
    (prism_core.hardware.Problem, True, True, True),
    (PathEntry, True, True, False),
    (prism_core.extending.PluginSettings, True, True, False),
    (Clause, True, True, False),
    (prism_core.hardware.RequirementMatch, True, True, False),
    (prism_core.hardware.MemoryLevel, True, True, False),
    (prism_core.hardware.Feature, True, True, False),
    (prism_core.hardware.Partition, True, True, False),
    (prism_core.hardware.DeviceDescription, True, False, False),
    (prism_core.hardware.SearchEntry, True, True, False),
    (prism_core.hardware.FileReport, False, True, False),
    (prism_core.extending.Availability, True, True, False),
    (prism_core.extending.DetectedDevice, True, True, False),
    (prism_core.extending.Detection, True, True, False),
    (prism_core.extending.PluginRecord, False, True, False),
    (prism_core.hardware.CpuInfo, True, True, False),
    (CpuMatch, True, True, False),
    (prism_core.hardware.DeviceInstance, True, True, False),
    (prism_core.hardware.PresentDevices, True, True, False),
    (HostReport, True, True, False),
    (SmiGpu, True, True, False),
]
IDS = [cls.__name__ for cls, *_ in VALUE_TYPES]


def _values(cls: type, tag: str) -> list[Any]:
    """Values for every field of ``cls``, distinct per field and per ``tag``: a mapping for a
    mapping left out of the hash (``Partition.dimensions``, which the class copies), else a
    string."""
    return [
        {tag: f.name}
        if f.hash is False and str(f.type).startswith("Mapping")
        else f"{tag}-{f.name}"
        for f in dataclasses.fields(cls)
    ]


@pytest.mark.parametrize(("cls", "frozen", "eq", "order"), VALUE_TYPES, ids=IDS)
def test_a_value_type_is_the_dataclass_it_declares(
    cls: type, frozen: bool, eq: bool, order: bool
) -> None:
    assert dataclasses.is_dataclass(cls)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert (params.init, params.repr, params.eq, params.order, params.frozen) == (
        True,
        True,
        eq,
        order,
        frozen,
    )
    # The constructor: the fields, in order, each with a default where the field has one.
    parameters = list(inspect.signature(cls).parameters.values())
    fields = dataclasses.fields(cls)
    assert [p.name for p in parameters] == [f.name for f in fields]
    for p, f in zip(parameters, fields, strict=True):
        missing = (f.default, f.default_factory) == (dataclasses.MISSING, dataclasses.MISSING)
        assert (p.default is p.empty) == missing, f.name
    a, a2, b = (cls(*_values(cls, t)) for t in ("a", "a", "b"))
    assert (a == a2) is eq
    assert a != b
    if frozen and eq:
        assert hash(a) == hash(a2)
    elif eq:
        assert cls.__hash__ is None  # mutable with equality: unhashable, as @dataclass has it
    if order:
        assert (a < b, a <= b, a > b, a >= b) == (True, True, False, False)
    field = fields[0].name
    if frozen:
        with pytest.raises(
            dataclasses.FrozenInstanceError, match=f"cannot assign to field '{field}'"
        ):
            setattr(a, field, "changed")
    else:
        setattr(a, field, "changed")
        assert getattr(a, field) == "changed"
    changed = dataclasses.replace(a2, **{field: "replaced"})
    assert type(changed) is cls and getattr(changed, field) == "replaced"


def test_defaults_made_by_a_factory_are_fresh() -> None:
    one, two = (
        prism_core.extending.PluginRecord("a", "builtin", "x"),
        prism_core.extending.PluginRecord("b", "x", "y"),
    )
    one.hooks.append("prism_backends")
    assert two.hooks == [] and one.info is not two.info
    first = prism_core.hardware.FileReport(Path("f.yaml"))
    first.problems.append(prism_core.hardware.Problem("f.yaml"))
    assert prism_core.hardware.FileReport(Path("g.yaml")).problems == []
    assert prism_core.hardware.Feature("tensor_cores", 4).operations == {}


def test_pickling_keeps_the_value() -> None:
    problem = prism_core.hardware.Problem("f.yaml", 3, 7, "$.name", "missing")
    assert pickle.loads(pickle.dumps(problem)) == problem
    availability = prism_core.extending.Availability(False, "no driver")
    assert pickle.loads(pickle.dumps(availability)) == availability
