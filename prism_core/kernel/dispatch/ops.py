"""The ops users call, and the hot path of dispatch.

An :class:`Op` (``registry.py``) is an abstract operation (``matmul``, ``linalg.svd``); this
module makes the plain function users call for it (``prism_core.matmul``), and the ways to
declare ops (:func:`operation`) and variants (:func:`kernel`, :meth:`Op.variant`).  Dispatch
(``plans.py``, ``calls.py``) picks the variant.

Ops are declared once, in the catalogue (``catalogue.py``) or by users with :func:`operation`;
variants come from plugins (``prism_variants`` hook, the builtin NumPy plugin included) or from
user code.
"""

from __future__ import annotations

import inspect
import textwrap
import types
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TypeVar, cast, overload

from prism_core.kernel.contract.variant import CanRun, Variant
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.dispatch import registry
from prism_core.kernel.dispatch.calls import fast_path
from prism_core.kernel.dispatch.explain import explain
from prism_core.kernel.dispatch.registry import (
    Op,
    OperationError,
    OpFunction,
    add_variant,
    as_op,
    register_op,
    remove_variants,
)
from prism_core.kernel.dispatch.scope import current_scope
from prism_core.kernel.dispatch.scope import device as device_scope
from prism_core.kernel.op_examples import Examples
from prism_core.kernel.records.families import RECORDS

__all__ = [
    "Op",
    "OperationError",
    "Variant",
    "add_variant",
    "all_ops",
    "as_op",
    "explain",
    "get_op",
    "kernel",
    "operation",
    "register_op",
    "remove_variants",
]


def get_op(name: str) -> Op:
    """The op called ``name`` (or one of its aliases)."""
    registry.ensure_ready()
    return registry.lookup(name)


def all_ops() -> dict[str, Op]:
    """Every declared op by name (aliases not repeated)."""
    registry.ensure_ready()
    return dict(sorted(registry.table().items()))


#: The fast path's (``calls.fast_path``) key of a call: ``plan_key``'s tuple written out for the
#: op's array arguments, by its keying (``Op._keying``: 0 their types, 1 and dtypes, 2 and the
#: size bucket, ``tuning_records.bucket_of``).  What it does not take (a torch tensor's ``size``
#: is a method; an argument given by keyword) is ``plan_key``'s.
_ARRAYS = """\
try:
{items}    key = {key}
except (IndexError, AttributeError, TypeError):
    key = plan_key(op, token(), args)
"""


def _inline_key(positions: tuple[int, ...], keying: int) -> str:
    """:data:`_ARRAYS` for the array arguments at ``positions``."""
    names = [f"x{i}" for i in range(len(positions))]
    parts = ["token()"]
    for name in names:
        parts += [f"type({name})", f"{name}.dtype"] if keying else [f"type({name})"]
    if keying == 2:
        parts.append(f"({' + '.join(f'{name}.size' for name in names)}).bit_length()")
    items = "".join(f"    {name} = args[{at}]\n" for name, at in zip(names, positions, strict=True))
    return _ARRAYS.format(items=items, key=f"({', '.join(parts)})")


#: A sequence of arrays (stack, concat) is keyed by its items' types, as ``plan_key`` keys it:
#: keyed by ``list``, a list of tensors would reuse a list of NumPy arrays' plan.
_SEQUENCE = """\
if args and isinstance(args[0], (list, tuple)):
    key = {key}
else:
{one}"""
_SEQUENCE_KEY = ("(token(), *map(type, args[0]))", *["plan_key(op, token(), args)"] * 2)
#: The ops that create (no array argument; asarray from lists): a ``device=`` naming an
#: accelerator runs the call in its scope (``_on_device``).
_ON_DEVICE = """\
if kwargs and kwargs.get("device") is not None:
    moved = on_device(call, args, kwargs)
    if moved is not here:
        return moved
"""
#: The builtin ops that create from data that may be no array (``asarray``).
_FROM_DATA = frozenset(r.name for r in RECORDS if r.creation and r.array_args is None)


def _key_lines(op: Op, keying: int) -> str:
    """The lines making the key of a call of ``op`` keyed as ``keying`` says."""
    if op.array_args and (not op.sequences or op.array_args == (0,)):
        lines = _inline_key(op.array_args, keying)
        if op.sequences:
            one = textwrap.indent(lines, "    ")
            lines = _SEQUENCE.format(key=_SEQUENCE_KEY[keying], one=one)
    elif op.array_args == ():  # the scope, and the size bucket 0 where sizes matter
        lines = "key = (token(), 0)\n" if keying == 2 else "key = (token(),)\n"
    else:
        lines = "key = plan_key(op, token(), args)\n"
    return _ON_DEVICE + lines if op.array_args == () or op.name in _FROM_DATA else lines


def _make_function(op: Op) -> OpFunction:
    """The function users call for ``op``: the fast path (``calls.fast_path``), a context
    read, a key tuple made inline for the op's array arguments, a dict lookup and the call;
    everything else (plans, per-call checks, conversions, fallback) is in ``calls.py``.
    benchmarks/bench_dispatch.py measures what it costs beside a plain dispatcher's."""
    function = fast_path(op, _key_lines(op, op._keying[0]), on_device=_on_device, here=_HERE)
    leaf = op.name.rpartition(".")[2]
    function.__name__ = function.__qualname__ = leaf
    function.__doc__ = op.__doc__
    function.__module__ = "prism_core"
    # What ``inspect.signature``, ``help()`` and editors show: the op's declared signature, not
    # the ``(*args, **kwargs)`` of the hot path; parsed when first read (not for 172 ops at the
    # first call).
    signature = OpSignature(source=partial(_declared_signature, op))
    function.__signature__ = signature  # type: ignore[attr-defined]
    op.__signature__ = signature  # type: ignore[attr-defined]
    function.op = op  # type: ignore[attr-defined]
    function.name = op.name  # type: ignore[attr-defined]
    function.variants = op.variants  # type: ignore[attr-defined]
    function.variant = op.variant  # type: ignore[attr-defined]
    function.explain = partial(explain, op)  # type: ignore[attr-defined]
    return function  # type: ignore[return-value]


#: What a function that takes anything shows: an op declared with no signature in its doc.
_ANYTHING = "(*args, **kwargs)"
# The slots of ``inspect.Signature`` that an :class:`OpSignature` fills when first read.
_PARAMETERS: types.MemberDescriptorType = inspect.Signature.__dict__["_parameters"]
_RETURN_ANNOTATION: types.MemberDescriptorType = inspect.Signature.__dict__["_return_annotation"]


def _lazy(slot: types.MemberDescriptorType) -> property:
    """``slot`` of an :class:`OpSignature`, filled from its source when first read."""

    def get(self: OpSignature) -> object:
        try:
            return slot.__get__(self)
        except AttributeError:  # not read yet
            made = inspect.Signature() if self._source is None else self._source()
            _PARAMETERS.__set__(self, made.parameters)
            _RETURN_ANNOTATION.__set__(self, made.return_annotation)
            return slot.__get__(self)

    return property(get, slot.__set__)


class OpSignature(inspect.Signature):
    """An op function's signature (``inspect.signature(prism_core.sum)``), made from its
    ``source`` when first read: an :class:`inspect.Signature` in every respect (``bind``,
    ``replace``, equality), whose parameters are parsed only if someone asks for them.

    The function users call takes ``(*args, **kwargs)`` and passes them on unchanged (the hot
    path builds no bound arguments); its ``__signature__`` is one of these, made from the
    signature the op's documentation starts with (``sum(x, /, *, axis=None, ...)``, the
    catalogue's one place for it) or from the reference function of an op declared with
    :func:`operation`.
    """

    __slots__ = ("_source",)

    def __init__(
        self,
        parameters: Sequence[inspect.Parameter] | None = None,
        *,
        return_annotation: object = inspect.Signature.empty,
        source: Callable[[], inspect.Signature] | None = None,
        **options: bool,
    ) -> None:
        self._source = source
        if source is None:  # made from parameters, as ``replace`` makes one
            super().__init__(parameters, return_annotation=return_annotation, **options)

    _parameters = _lazy(_PARAMETERS)
    _return_annotation = _lazy(_RETURN_ANNOTATION)


def _declared_signature(op: Op) -> inspect.Signature:
    """The signature ``op``'s documentation starts with (``catalogue.signature_text``), or
    ``(*args, **kwargs)`` where it starts with none (an op a user declared with a prose doc)."""
    from prism_core.kernel.dispatch.catalogue import parse_signature, signature_text

    text = signature_text(op.name, op.__doc__ or "")
    if text is not None:
        try:
            return parse_signature(text)
        except SyntaxError:  # prose that only looks like a signature: "f(x) is ...: ..."
            pass
    return parse_signature(_ANYTHING)


def _reference_signature(reference: Callable[..., object], op: Op) -> inspect.Signature:
    """The signature of ``op``'s reference function; where it has none that ``inspect`` can
    read (a builtin such as ``max``), what ``op``'s documentation declares."""
    try:
        return inspect.signature(reference)
    except (TypeError, ValueError):
        return _declared_signature(op)


#: What :func:`_on_device` returns for a call it leaves where it is.
_HERE = object()


def _on_device(
    function: Callable[..., object], args: tuple[object, ...], kwargs: dict[str, object]
) -> object:
    """A creation op's call whose ``device=`` is Prism's description of a device other than a
    CPU (a :class:`~prism_core.hardware.DeviceInstance` or
    :class:`~prism_core.hardware.DeviceDescription`): run as it would be under
    ``prism_core.device(...)`` of that device, so that a backend driving it creates the array
    there.  Every other call (``"cpu"``, Prism's CPU, a backend's own device object) is left
    where it is (:data:`_HERE`): the variant chosen honours ``device`` or names what it accepts.
    A simulated device's call is planned there and computed, as every simulated call is, by the
    reference backend in host memory (without the ``device`` it cannot honour)."""
    where = kwargs["device"]
    if isinstance(where, str):
        return _HERE
    description = getattr(where, "description", where)
    if not isinstance(description, DeviceDescription) or description.kind == "cpu":
        return _HERE
    if current_scope().device is description:  # in its scope already: dispatch it there
        return _HERE
    if getattr(where, "simulated", False) is True:
        kwargs = {k: v for k, v in kwargs.items() if k != "device"}
        with device_scope(description, simulate=True):
            return function(*args, **kwargs)
    with device_scope(description):
        return function(*args, **kwargs)


@overload
def operation(
    fn: Callable[..., object],
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
    reference: bool = True,
    examples: Examples | None = None,
) -> OpFunction: ...


@overload
def operation(
    fn: None = None,
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
    reference: bool = True,
    examples: Examples | None = None,
) -> Callable[[Callable[..., object]], OpFunction]: ...


def operation(
    fn: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
    reference: bool = True,
    examples: Examples | None = None,
) -> OpFunction | Callable[[Callable[..., object]], OpFunction]:
    """Declare a new op with its reference implementation (usable as a decorator).

    The decorated function becomes the op's reference variant (backend ``numpy``, no
    requirements, lowest rank among its siblings of equal priority); add faster variants with
    ``@myop.variant(requires=...)`` or :func:`kernel`.  Returns the function users call; its
    ``.op`` is the :class:`Op`.

    ``reference=False`` declares the op alone: the function gives it its name, signature and
    documentation and is never run, and every variant, the reference included, comes from a
    plugin's ``prism_variants`` hook.  That is how a plugin declares ops that other plugins
    extend (docs/writing-a-plugin.md, "Declaring ops in a plugin").  ``examples`` (a
    :class:`prism_core.backend_kit.Examples`) says how ``prism bench`` and
    ``prism.tune(op, sizes=...)`` make the op's arguments at a size.
    """
    if not isinstance(reference, bool):
        raise TypeError(f"operation(): reference must be True or False, got {reference!r}")
    if examples is not None and not isinstance(examples, Examples):
        raise TypeError(
            "operation(): examples must be a prism_core.backend_kit.Examples or None, got "
            f"{examples!r}"
        )

    def declare(f: Callable[..., object]) -> OpFunction:
        op = Op(
            name or f.__name__,
            f.__doc__ or "",
            aliases=aliases,
            array_args=array_args,
            examples=examples,
        )
        # The reference function's signature is the op's (read when first asked for).
        signature = OpSignature(source=partial(_reference_signature, f, op))
        op.function.__signature__ = signature  # type: ignore[attr-defined]
        op.__signature__ = signature  # type: ignore[attr-defined]
        register_op(op)
        if not reference:
            return op.function
        add_variant(
            Variant(
                op.name,
                f,
                backend="numpy",
                reference=True,
                name=f"{op.name}.reference",
                priority=-1,
            )
        )
        return op.function

    return declare if fn is None else declare(fn)


_F = TypeVar("_F", bound=Callable[..., object])  # a function kernel() gives back as it is


def kernel(
    op: str | Op | OpFunction,
    *,
    requires: Mapping[str, object] | None = None,
    backend: str = "numpy",
    priority: int = 0,
    can_run: CanRun | None = None,
    dtype_support: bool = False,
    fallback: bool = False,
    name: str | None = None,
) -> Callable[[_F], _F]:
    """Register the decorated function as a variant of ``op`` (the original design's
    ``@kernel(requires={"tensor_cores": 2})``).  ``fallback=True`` marks a variant that runs
    anywhere its backend does, ranked after every variant with requirements."""
    register: Callable[[_F], _F] = as_op(op).variant(
        backend=backend,
        requires=requires,
        priority=priority - 1000 if fallback else priority,
        can_run=can_run,
        dtype_support=dtype_support,
        name=name,
    )
    return register


def _rekeyed(op: Op) -> None:
    """``op``'s keying changed: its function, the one users hold, makes keys the new way (the
    code of the fast path for that keying, specialised so that no call reads the keying)."""
    made = fast_path(op, _key_lines(op, op._keying[0]), on_device=_on_device, here=_HERE)
    function = cast(types.FunctionType, op.function)
    assert made.__code__.co_freevars == function.__code__.co_freevars  # the same closure
    function.__code__ = made.__code__


registry._function_factory[:] = [_make_function, _rekeyed]
