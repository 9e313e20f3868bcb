"""``value_type``: dataclasses whose methods are not compiled behave as ``@dataclass``.

Each value type of Prism is compared with the class ``@dataclass`` makes from the same fields
and flags (``dataclasses.make_dataclass``): the same constructor, ``repr``, equality, hash,
ordering and frozenness, and the ``dataclasses`` functions work on it.
"""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from pathlib import Path
from typing import Any

import pytest

import prism_core
from prism_core._config import PathEntry
from prism_core._description.requirements import Clause
from prism_core._knowledge.host import CpuMatch, HostReport
from prism_core._values import value_type
from prism_core.nvidia_smi import SmiGpu

#: (class, frozen, eq, order) of every value type the first call of a process creates (and
#: the others of the same modules), as they were declared with ``@dataclass``.
VALUE_TYPES = [
    (prism_core.Problem, True, True, True),
    (PathEntry, True, True, False),
    (prism_core.PluginSettings, True, True, False),
    (Clause, True, True, False),
    (prism_core.RequirementMatch, True, True, False),
    (prism_core.MemoryLevel, True, True, False),
    (prism_core.Feature, True, True, False),
    (prism_core.Partition, True, True, False),
    (prism_core.DeviceDescription, True, False, False),
    (prism_core.SearchEntry, True, True, False),
    (prism_core.FileReport, False, True, False),
    (prism_core.Availability, True, True, False),
    (prism_core.DetectedDevice, True, True, False),
    (prism_core.Detection, True, True, False),
    (prism_core.PluginRecord, False, True, False),
    (prism_core.CpuInfo, True, True, False),
    (CpuMatch, True, True, False),
    (prism_core.DeviceInstance, True, True, False),
    (prism_core.PresentDevices, True, True, False),
    (HostReport, True, True, False),
    (SmiGpu, True, True, False),
]
IDS = [cls.__name__ for cls, *_ in VALUE_TYPES]


def _reference(cls: type, frozen: bool, eq: bool, order: bool) -> Any:
    """The class ``@dataclass`` makes of ``cls``'s fields and flags."""
    fields = []
    for f in dataclasses.fields(cls):
        spec = dataclasses.field(repr=f.repr, compare=f.compare, hash=f.hash)
        if f.default is not dataclasses.MISSING:
            spec = dataclasses.field(default=f.default, repr=f.repr, compare=f.compare, hash=f.hash)
        elif f.default_factory is not dataclasses.MISSING:
            spec = dataclasses.field(
                default_factory=f.default_factory, repr=f.repr, compare=f.compare, hash=f.hash
            )
        fields.append((f.name, Any, spec))
    return dataclasses.make_dataclass(
        cls.__name__, fields, frozen=frozen, eq=eq, order=order, namespace={"__module__": "x"}
    )


def _values(cls: type, tag: str) -> list[Any]:
    """Hashable values for every field of ``cls``, distinct per field and per ``tag``."""
    return [f"{tag}-{f.name}" for f in dataclasses.fields(cls)]


@pytest.mark.parametrize(("cls", "frozen", "eq", "order"), VALUE_TYPES, ids=IDS)
def test_a_value_type_is_the_dataclass_it_was(
    cls: type, frozen: bool, eq: bool, order: bool
) -> None:
    ref = _reference(cls, frozen, eq, order)
    assert dataclasses.is_dataclass(cls)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert (params.init, params.repr, params.eq, params.order, params.frozen) == (
        True,
        True,
        eq,
        order,
        frozen,
    )
    # The constructor: the fields, in order, with their defaults (a factory's: None, made on
    # the call).
    mine = inspect.signature(cls.__init__).parameters
    theirs = inspect.signature(ref.__init__).parameters
    assert list(mine) == list(theirs)
    for name, p in theirs.items():
        assert (mine[name].default is p.empty) == (p.default is p.empty), name
    a, a2, b = (cls(*_values(cls, t)) for t in ("a", "a", "b"))
    ra, ra2, rb = (ref(*_values(cls, t)) for t in ("a", "a", "b"))
    if cls.__repr__.__module__ == "prism_core._values":  # not one the class writes itself
        assert repr(a) == repr(ra).replace(ref.__qualname__, cls.__qualname__, 1)
    assert (a == a2) == (ra == ra2)
    assert (a == b) == (ra == rb)
    assert (a != a2) == (ra != ra2)
    if eq:
        assert a.__eq__(object()) is NotImplemented
    if ref.__hash__ is None:
        assert cls.__hash__ is None
    else:
        assert cls.__hash__ is not None
        if eq:
            assert hash(a) == hash(ra)  # the hash of the same tuple of values
            assert hash(a) == hash(a2)
    if order:
        assert (a < b, a <= b, a > b, a >= b) == (ra < rb, ra <= rb, ra > rb, ra >= rb)
        with pytest.raises(TypeError):
            _ = a < ra
    field = dataclasses.fields(cls)[0].name
    if frozen:
        with pytest.raises(
            dataclasses.FrozenInstanceError, match=f"cannot assign to field '{field}'"
        ):
            setattr(a, field, "changed")
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot delete field '{field}'"):
            delattr(a, field)
        with pytest.raises(dataclasses.FrozenInstanceError):
            a.not_a_field = 1  # type: ignore[attr-defined]
    else:
        setattr(a, field, "changed")
        assert getattr(a, field) == "changed"
    assert dataclasses.asdict(a2) == dataclasses.asdict(ra2)
    assert dataclasses.astuple(a2) == dataclasses.astuple(ra2)
    changed = dataclasses.replace(a2, **{field: "replaced"})
    assert type(changed) is cls and getattr(changed, field) == "replaced"


def test_defaults_made_by_a_factory_are_fresh() -> None:
    one, two = prism_core.PluginRecord("a", "builtin", "x"), prism_core.PluginRecord("b", "x", "y")
    one.hooks.append("prism_backends")
    assert two.hooks == [] and one.info is not two.info
    first = prism_core.FileReport(Path("f.yaml"))
    first.problems.append(prism_core.Problem("f.yaml"))
    assert prism_core.FileReport(Path("g.yaml")).problems == []
    assert prism_core.Feature("tensor_cores", 4).operations == {}


def test_pickling_keeps_the_value() -> None:
    problem = prism_core.Problem("f.yaml", 3, 7, "$.name", "missing")
    assert pickle.loads(pickle.dumps(problem)) == problem
    availability = prism_core.Availability(False, "no driver")
    assert pickle.loads(pickle.dumps(availability)) == availability


def test_a_subclass_made_by_dataclass_extends_it() -> None:
    @dataclasses.dataclass(frozen=True)
    class Located(prism_core.Problem):  # type: ignore[misc]
        hint: str = ""

    found = Located("f.yaml", 1, 2, "$", "wrong", "fix it")
    assert found.hint == "fix it" and found.message == "wrong"
    with pytest.raises(dataclasses.FrozenInstanceError):
        found.hint = "no"  # type: ignore[misc]


def test_an_init_that_is_not_the_fields_is_refused() -> None:
    with pytest.raises(TypeError, match=r"takes \['x'\] .* its fields are \['x', 'y'\]"):

        @value_type
        class Short:
            """Two fields, one parameter."""

            x: int
            y: int = 0

            def __init__(self, x: int) -> None:
                object.__setattr__(self, "x", x)

    with pytest.raises(TypeError, match=r"defaults: \[\]\); its fields are .* \['y'\]"):

        @value_type
        class NoDefault:
            """A field with a default, a parameter without."""

            x: int
            y: int = 0

            def __init__(self, x: int, y: int) -> None:
                object.__setattr__(self, "x", x)

    with pytest.raises(TypeError, match="defines no __init__"):

        @value_type
        class Nothing:
            """No constructor of its own."""

            x: int

    class Unordered:
        """Ordered, but without equality."""

        x: int

        def __init__(self, x: int) -> None:
            object.__setattr__(self, "x", x)

    with pytest.raises(ValueError, match="eq must be true if order is true"):
        value_type(eq=False, order=True)(Unordered)
