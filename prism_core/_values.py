"""Dataclasses that cost no compilation to create.

``@dataclass`` writes the methods of each class (``__init__``, ``__repr__``, ``__eq__``,
``__hash__``, the ordering methods, and for a frozen class ``__setattr__`` and ``__delattr__``)
as source text and compiles it with ``exec``: 0.5-1 ms per class.  The first call in a fresh
process created 33 dataclasses, about a sixth of its time (docs/performance.md, "First call in
a fresh process").

:func:`value_type` makes the same class without compiling anything.  It is still a dataclass:
``@dataclass(init=False, repr=False, eq=False)``, which generates no method, finds the fields,
so ``dataclasses.fields``, ``asdict``, ``astuple``, ``replace`` and ``is_dataclass`` work as
before, and ``__dataclass_params__`` is set to what ``@dataclass`` would have recorded.  The
methods ``@dataclass`` would write come from this module instead, as closures over the field
names (making a closure costs microseconds): ``__repr__`` (fields with ``repr=True``, guarded
against recursion), ``__eq__`` (fields with ``compare=True``, between instances of the very
same class), ``__hash__`` (frozen and ``eq``: the hashed fields; mutable and ``eq``: ``None``),
the ordering methods with ``order=True``, and for a frozen class the ``__setattr__`` and
``__delattr__`` that raise :class:`dataclasses.FrozenInstanceError`.  A method the class body
defines is kept, as ``@dataclass`` keeps it.

Only ``__init__`` is written by hand in the class, as ``@dataclass`` would write it: each field
a parameter, in order, with its default, then ``__post_init__`` where there is one.  A frozen
class sets its fields with ``object.__setattr__``.  A field with a ``default_factory`` takes
``None`` for "not given" (a mutable default) or a shared read-only default.  :func:`value_type`
checks the parameters against the fields when the class is made, so that the two cannot drift
apart.  mypy knows such a class as a dataclass (frozen unless ``frozen=False``) through
``dataclass_transform``.
"""

from __future__ import annotations

import dataclasses
import operator
import reprlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, overload

__all__ = ["value_type"]

_T = TypeVar("_T")

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:  # only type checkers read it; Python 3.10 has no typing.dataclass_transform

    def dataclass_transform(**_: Any) -> Callable[[_T], _T]:
        return lambda decorator: decorator


@overload
def value_type(cls: type[_T], /) -> type[_T]: ...


@overload
def value_type(
    *, frozen: bool = True, eq: bool = True, order: bool = False
) -> Callable[[type[_T]], type[_T]]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def value_type(
    cls: type[_T] | None = None, /, *, frozen: bool = True, eq: bool = True, order: bool = False
) -> type[_T] | Callable[[type[_T]], type[_T]]:
    """Make ``cls`` a dataclass as ``@dataclass(frozen=frozen, eq=eq, order=order)`` would,
    without compiling its methods; ``cls`` defines ``__init__`` itself (see the module
    docstring).  Raises ``TypeError`` where ``__init__``'s parameters are not the fields."""

    def wrap(cls: type[_T]) -> type[_T]:
        if order and not eq:
            raise ValueError("eq must be true if order is true")
        dataclasses.dataclass(init=False, repr=False, eq=False)(cls)
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        _check_init(cls, fields)
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        params.init, params.repr, params.eq = True, True, eq
        params.order, params.frozen = order, frozen
        _add(cls, "__repr__", _repr([f.name for f in fields if f.repr]))
        if eq:
            compared = _getter([f.name for f in fields if f.compare])
            _add(cls, "__eq__", _comparison(operator.eq, compared))
            if "__hash__" not in cls.__dict__ or cls.__dict__["__hash__"] is None:
                hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
                method: Any = _hash(_getter(hashed)) if frozen else None
                cls.__hash__ = method  # type: ignore[method-assign]
            if order:
                for name, compare in (
                    ("__lt__", operator.lt),
                    ("__le__", operator.le),
                    ("__gt__", operator.gt),
                    ("__ge__", operator.ge),
                ):
                    if name in cls.__dict__:
                        raise TypeError(f"cannot overwrite {name} in class {cls.__name__}")
                    setattr(cls, name, _comparison(compare, compared))
        if frozen:
            names = frozenset(f.name for f in fields)
            _add(cls, "__setattr__", _frozen_setattr(cls, names))
            _add(cls, "__delattr__", _frozen_delattr(cls, names))
        return cls

    return wrap if cls is None else wrap(cls)


def _check_init(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """``cls.__init__`` takes the fields, in order, each with a default where the field has one:
    the ``__init__`` ``@dataclass`` would have written."""
    init: Any = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    if code is None:
        raise TypeError(f"{cls.__qualname__} defines no __init__; a value type writes its own")
    wanted = [f.name for f in fields if f.init]
    positional = list(code.co_varnames[1 : code.co_argcount])
    given = positional + list(code.co_varnames[code.co_argcount :][: code.co_kwonlyargcount])
    with_default = set(positional[len(positional) - len(init.__defaults__ or ()) :])
    with_default.update(init.__kwdefaults__ or ())
    defaulted = {
        f.name
        for f in fields
        if f.init
        and (f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING)
    }
    if given != wanted or with_default != defaulted:
        raise TypeError(
            f"{cls.__qualname__}.__init__ takes {given} (defaults: {sorted(with_default)}); "
            f"its fields are {wanted} (defaults: {sorted(defaulted)})"
        )


def _add(cls: type, name: str, method: Callable[..., Any]) -> None:
    if name not in cls.__dict__:
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)


def _getter(names: list[str]) -> Callable[[Any], Any]:
    """The values of ``names`` of an instance, as one comparable value."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        name = names[0]
        return lambda self: (getattr(self, name),)
    return operator.attrgetter(*names)


def _repr(names: list[str]) -> Callable[[Any], str]:
    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{type(self).__qualname__}({shown})"

    return __repr__


def _comparison(
    compare: Callable[[Any, Any], bool], values: Callable[[Any], Any]
) -> Callable[[Any, Any], Any]:
    def method(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return compare(values(self), values(other))
        return NotImplemented

    return method


def _hash(values: Callable[[Any], Any]) -> Callable[[Any], int]:
    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen_setattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str, Any], None]:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return __setattr__


def _frozen_delattr(cls: type[Any], names: frozenset[str]) -> Callable[[Any, str], None]:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __delattr__
