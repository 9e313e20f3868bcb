"""How much work an op does: floating-point operations and main-memory bytes, from the shapes of
its array arguments.  The performance model (``model.py``) turns work into time on a device.

Every builtin op's work is counted in ``op_work.py`` (with :class:`Work`, the amount); a user
op declares its own with :func:`declare_work`.  A pure module: it imports nothing of Prism but
the op records and the names of the execution units, so that every layer above can ask it.
The counts and their sources: docs/performance.md, "Work: what an op does".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, overload

from prism_core._tuning.op_work import BUILTIN, Shape, Shapes, Work
from prism_core.kernel.records.families import RECORDS

__all__ = ["declare_work", "declared_ops", "has_work", "work_of"]

#: What a user declares: ``fn(shapes, itemsize) -> Work``.
WorkFunction = Callable[[Shapes, int], Work]

_OP_NAME = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$")
_USER: dict[str, WorkFunction] = {}

#: The builtin ops' aliases -> the op's name.
ALIASES = {alias: r.name for r in RECORDS for alias in r.aliases}


# -- the public functions ---------------------------------------------------------------------


def _shapes(shapes: Any) -> Shapes:
    if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Sequence):
        raise TypeError(
            "shapes must be a sequence of shapes, one per array argument (such as "
            f"((512, 256), (256, 128))); got {shapes!r}"
        )
    out: list[Shape] = []
    for i, shape in enumerate(shapes):
        if isinstance(shape, int) and not isinstance(shape, bool):
            shape = (shape,)
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
            raise TypeError(
                f"shapes[{i}] must be a shape (a tuple of ints), got {shape!r}; shapes holds "
                "one shape per array argument"
            )
        dims: list[int] = []
        for d in shape:
            if isinstance(d, bool) or not isinstance(d, int) or d < 0:
                raise TypeError(
                    f"shapes[{i}] = {tuple(shape)!r}: dimensions must be ints >= 0, got {d!r}"
                )
            dims.append(int(d))
        out.append(tuple(dims))
    return tuple(out)


def _canonical(op_name: str) -> str:
    if op_name in _USER or op_name in BUILTIN:
        return op_name
    return ALIASES.get(op_name, op_name)


def has_work(op_name: str) -> bool:
    """Whether ``op_name`` (or the op it is an alias of) declares its work."""
    name = _canonical(op_name)
    return name in _USER or name in BUILTIN


def declared_ops() -> tuple[str, ...]:
    """The names of every op that declares its work, sorted."""
    return tuple(sorted({*BUILTIN, *_USER}))


def work_of(
    op_name: str, shapes: Sequence[Sequence[int]], itemsize: int, *, complex_input: bool = False
) -> Work | None:
    """The work of one call of ``op_name`` on arrays of ``shapes`` (one shape per array
    argument, in order; a creation op's one shape is the shape it creates) with elements of
    ``itemsize`` bytes.  ``complex_input``: the arguments are complex (their arithmetic costs
    four real operations per complex multiply-add, and a Fourier transform of a real input
    writes complex output).  ``None`` when the op declares no work.

    Raises ``TypeError`` for malformed ``shapes`` or ``itemsize`` and ``ValueError`` for shapes
    the op does not accept (mismatched inner dimensions, a vector for a matrix).
    """
    if not isinstance(op_name, str):
        raise TypeError(f"work_of(): op_name must be an op name such as 'matmul', got {op_name!r}")
    if isinstance(itemsize, bool) or not isinstance(itemsize, int) or itemsize < 1:
        raise TypeError(f"work_of(): itemsize must be a positive int (bytes), got {itemsize!r}")
    checked = _shapes(shapes)
    name = _canonical(op_name)
    user = _USER.get(name)
    if user is not None:
        result = user(checked, itemsize)
        if not isinstance(result, Work):
            raise TypeError(
                f"the work function declared for {name!r} ({_describe(user)}) returned "
                f"{result!r}; it must return prism_core.extending.Work(flops, bytes)"
            )
        return result
    builtin = BUILTIN.get(name)
    if builtin is None:
        return None
    return builtin(checked, itemsize, bool(complex_input))


def _describe(fn: Any) -> str:
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None) or repr(fn)
    return f"{module}.{name}" if module else str(name)


@overload
def declare_work(
    op_name: str, fn: None = None, *, replace: bool = False
) -> Callable[[WorkFunction], WorkFunction]: ...
@overload
def declare_work(op_name: str, fn: WorkFunction, *, replace: bool = False) -> WorkFunction: ...
def declare_work(
    op_name: str, fn: WorkFunction | None = None, *, replace: bool = False
) -> WorkFunction | Callable[[WorkFunction], WorkFunction]:
    """Declare the work of the op ``op_name``: ``fn(shapes, itemsize) -> Work``, called with
    the shapes of the op's array arguments (a tuple of tuples) and their itemsize in bytes.

    Usable as a decorator (``@declare_work("mylib.smooth")``).  Declaring the same function
    again does nothing; declaring another function for a name that has one (a builtin op
    included) is a ``ValueError`` unless ``replace=True``.  Returns ``fn``.
    """
    if not isinstance(op_name, str) or not _OP_NAME.match(op_name):
        raise TypeError(
            "declare_work(): op_name must be an op name: lowercase words joined by '.', such as "
            f"'mylib.smooth'; got {op_name!r}"
        )
    if fn is None:

        def decorate(f: WorkFunction) -> WorkFunction:
            return declare_work(op_name, f, replace=replace)

        return decorate
    if not callable(fn):
        raise TypeError(
            f"declare_work({op_name!r}, fn): fn must be a function (shapes, itemsize) -> "
            f"prism_core.extending.Work; got {fn!r} ({type(fn).__name__})"
        )
    if not isinstance(replace, bool):
        raise TypeError(f"declare_work(): replace must be True or False, got {replace!r}")
    if _USER.get(op_name) is fn:
        return fn
    if not replace and (op_name in _USER or op_name in BUILTIN):
        current = _USER.get(op_name)
        what = "Prism's builtin declaration" if current is None else _describe(current)
        raise ValueError(
            f"the work of {op_name!r} is declared already ({what}); pass replace=True to replace it"
        )
    _USER[op_name] = fn
    return fn
