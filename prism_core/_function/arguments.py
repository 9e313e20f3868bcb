"""A call's arguments as a placed function sees them: the arrays in them (in tuples, lists and
dicts too), the call's key in the placement cache, its signature and size bucket as the tuning
cache keys them, and the function's identity there."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Any

from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch.arguments import elements
from prism_core.kernel.dispatch.scope import SCOPE

__all__ = [
    "HOST_ARRAYS",
    "call_key",
    "describe",
    "identity",
    "is_array",
    "is_static",
    "leaves",
    "map_arrays",
    "signature_text",
    "size_bucket",
]


def is_array(value: Any) -> bool:
    """Whether ``value`` is an array of some backend."""
    # NumPy scalars have no __dlpack__; 0-d arrays do (they are arrays).
    return hasattr(value, "__dlpack__")


#: Array types whose arrays are always in host memory: their device need not be asked (NumPy's,
#: added when a placement is first planned; asking costs a third of a cached call).
HOST_ARRAYS: set[type] = set()


def _signature(values: Iterable[Any], total: list[int]) -> tuple[Any, ...]:
    """The part of a call that decides its placement: each argument's type, and for arrays
    their dtype and device (where they live); containers by their items.  The arrays' element
    counts are added to ``total[0]``: the size bucket (``bucket_of``, as ops' tuning keys
    it) is part of the key, since a tuned placement depends on it."""
    out: list[Any] = []
    for v in values:
        t = type(v)
        if t in HOST_ARRAYS:
            out.append((t, v.dtype))
            total[0] += v.size
        elif t is tuple or t is list:
            out.append((t, _signature(v, total)))
        elif t is dict:
            out.append((t, tuple(v), _signature(v.values(), total)))
        elif hasattr(v, "__dlpack__"):
            out.append((t, getattr(v, "dtype", None), getattr(v, "device", None)))
            total[0] += elements(v)
        else:
            out.append(t)
    return tuple(out)


def size_bucket(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """The call's size bucket: ``bucket_of`` the element counts of its arrays."""
    from prism_core._tuning.tuning_records import bucket_of

    return bucket_of(*(elements(leaf) for v in (*args, *kwargs.values()) for leaf in leaves(v)))


def _code_digest(code: Any) -> str:
    """A hash of a code object's instructions, constants (nested code objects by their own
    hash) and names: an edited body is another digest; moving it to another line is not."""
    h = hashlib.sha256()

    def feed(c: Any) -> None:
        h.update(c.co_code)
        for const in c.co_consts:
            if hasattr(const, "co_code"):
                feed(const)
            else:
                h.update(repr(const).encode())
        h.update(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars)).encode())

    feed(code)
    return h.hexdigest()[:12]


def identity(fn: Callable[..., Any]) -> str:
    """A function's identity in the tuning cache: ``function:<module>.<qualname>@<code hash>``."""
    name = f"{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', repr(fn))}"
    code = getattr(fn, "__code__", None)
    if code is None:  # a callable object: its __call__'s code
        target: Any = fn
        code = getattr(getattr(target.__call__, "__func__", None), "__code__", None)
    return f"function:{name}@{_code_digest(code) if code is not None else 'nocode'}"


def signature_text(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """The signature as the tuning cache keys it (``prism tune --show`` prints it): each
    argument's type, arrays with their dtype and, off the host, where they live."""

    def one(v: Any) -> str:
        if isinstance(v, tuple | list):
            return f"{type(v).__name__}({', '.join(one(x) for x in v)})"
        if isinstance(v, dict):
            return "dict(" + ", ".join(f"{k}={one(x)}" for k, x in v.items()) + ")"
        if is_array(v):
            kind, _shape, dtype = movement.what(v)
            where = getattr(v, "device", None)
            on = "" if where is None or str(where) == "cpu" else f" on {where}"
            return f"{kind} {dtype}{on}"
        return type(v).__name__

    text = ", ".join([*(one(a) for a in args), *(f"{k}={one(v)}" for k, v in kwargs.items())])
    return text or "no arguments"


def leaves(value: Any) -> Iterable[Any]:
    """The arrays in ``value``, nested in tuples, lists and dicts too."""
    if isinstance(value, tuple | list):
        for v in value:
            yield from leaves(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif is_array(value):
        yield value


def map_arrays(value: Any, fn: Callable[[Any], Any], every: bool = False) -> Any:
    """``value`` with ``fn`` applied to each array in it (``every``: to each item that is no
    container); containers keep their types."""
    if isinstance(value, tuple):
        items = [map_arrays(v, fn, every) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, list):
        return [map_arrays(v, fn, every) for v in value]
    if isinstance(value, dict):
        return {k: map_arrays(v, fn, every) for k, v in value.items()}
    return fn(value) if every or is_array(value) else value


def call_key(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """A call's key in the placement cache: the scope in force, the signature and the size
    bucket."""
    total = [0]
    if not kwargs:
        return (SCOPE.get(), _signature(args, total), total[0].bit_length())
    sig = _signature(args, total)
    return (
        SCOPE.get(),
        sig,
        tuple(kwargs),
        _signature(kwargs.values(), total),
        total[0].bit_length(),
    )


def is_static(value: Any) -> bool:
    """Whether a compiler holds ``value`` static: it holds no array and is hashable (a
    number, a string, ``None``, a tuple of them, a function)."""
    if is_array(value) or isinstance(value, list | dict):
        return False
    try:
        hash(value)
    except TypeError:
        return False
    return not any(True for _ in leaves(value))


def describe(value: Any) -> str:
    """An argument as ``explain`` shows the call's signature: arrays with dtype and shape."""
    kind, shape, dtype = movement.what(value)
    if is_array(value) and shape is not None:
        return f"{kind} {dtype}[{'x'.join(map(str, shape))}]"
    if isinstance(value, tuple | list | dict):
        items = value.values() if isinstance(value, dict) else value
        return f"{type(value).__name__}({', '.join(describe(v) for v in items)})"
    return type(value).__name__
