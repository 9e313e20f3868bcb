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
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, overload

from prism_core.kernel.contract.variant import CanRun, Variant
from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.dispatch import registry
from prism_core.kernel.dispatch.arguments import plan_key
from prism_core.kernel.dispatch.calls import call_slow, declined, failed
from prism_core.kernel.dispatch.explain import explain
from prism_core.kernel.dispatch.fallback import CALLER_ERRORS
from prism_core.kernel.dispatch.registry import (
    Op,
    OperationError,
    OpFunction,
    PlanKey,
    add_variant,
    as_op,
    register_op,
    remove_variants,
)
from prism_core.kernel.dispatch.scope import SCOPE, current_scope
from prism_core.kernel.dispatch.scope import device as device_scope
from prism_core.kernel.threads import POOLS

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.examples import Examples

_scope_token = SCOPE.get

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


def _make_function(op: Op) -> OpFunction:
    """The function users call for ``op``: the hot path of dispatch.

    A context read, a key tuple, a dict lookup and the call; everything else (plans, per-call
    checks, conversions, fallback) is in _dispatch.  The key is the scope and the type of each
    array argument, plus its dtype when a variant of the op depends on dtypes (``dtype_support``),
    plus the size bucket when the op's tuned choice depends on the size (``op._keying``; the
    bucket is ``prism_core._tuning.tuning_records.bucket_of``, inlined).  Specialised for one and
    two leading array arguments, whose keys are built inline; benchmarks/bench_dispatch.py
    measures what each of these choices saves.
    """

    get = op._plans.get  # the dict is only ever cleared, never replaced
    token = _scope_token
    caller_errors = CALLER_ERRORS
    keying = op._keying  # a one-item list, updated when variants or tuning records change
    pools = POOLS  # the thread-pool coordinator: one comparison while the backend is the same

    if op.array_args == (0, 1) and not op.sequences:

        def function(*args: Any, **kwargs: Any) -> Any:
            try:
                x = args[0]
                y = args[1]
                k = keying[0]
                if k == 0:
                    key: PlanKey = (token(), type(x), type(y))
                elif k == 1:
                    key = (token(), type(x), x.dtype, type(y), y.dtype)
                else:
                    bucket = (x.size + y.size).bit_length()
                    key = (token(), type(x), x.dtype, type(y), y.dtype, bucket)
            except (IndexError, AttributeError, TypeError):  # no .size: a torch tensor
                key = plan_key(op, token(), args)
            plan = get(key)
            if plan is not None:
                fn = plan.fn
                if fn is not None:
                    if plan.backend != pools.last:
                        pools.switch(plan.backend)
                    try:
                        if kwargs:
                            return fn(*args, **kwargs)
                        return fn(*args)
                    except caller_errors:
                        raise
                    except Exception as exc:
                        return failed(op, key, plan, exc, args, kwargs)
                fn = plan.checked
                if fn is not None:  # the first candidate has a can_run: check, then call
                    if plan.backend != pools.last:
                        pools.switch(plan.backend)
                    verdict = plan.check(*args, **kwargs) if kwargs else plan.check(*args)
                    if verdict is True:
                        try:
                            if kwargs:
                                return fn(*args, **kwargs)
                            return fn(*args)
                        except caller_errors:
                            raise
                        except Exception as exc:
                            return failed(op, key, plan, exc, args, kwargs)
                    return declined(op, key, plan, verdict, args, kwargs)
                return plan.call(*args, **kwargs)
            return call_slow(op, key, args, kwargs)

    elif op.array_args == (0,):
        # A sequence of arrays (stack, concat) is keyed by its items' types, as ``plan_key`` keys
        # it: keyed by ``list``, a list of tensors would reuse a list of NumPy arrays' plan.
        sequence = 0 in op.sequences

        def function(*args: Any, **kwargs: Any) -> Any:
            try:
                x = args[0]
                k = keying[0]
                key: PlanKey
                if sequence and isinstance(x, (list, tuple)):
                    key = (token(), *map(type, x)) if k == 0 else plan_key(op, token(), args)
                elif k == 0:
                    key = (token(), type(x))
                elif k == 1:
                    key = (token(), type(x), x.dtype)
                else:
                    key = (token(), type(x), x.dtype, x.size.bit_length())
            except (IndexError, AttributeError, TypeError):  # no .size: a torch tensor
                key = plan_key(op, token(), args)
            plan = get(key)
            if plan is not None:
                fn = plan.fn
                if fn is not None:
                    if plan.backend != pools.last:
                        pools.switch(plan.backend)
                    try:
                        if kwargs:
                            return fn(*args, **kwargs)
                        return fn(*args)
                    except caller_errors:
                        raise
                    except Exception as exc:
                        return failed(op, key, plan, exc, args, kwargs)
                fn = plan.checked
                if fn is not None:  # the first candidate has a can_run: check, then call
                    if plan.backend != pools.last:
                        pools.switch(plan.backend)
                    verdict = plan.check(*args, **kwargs) if kwargs else plan.check(*args)
                    if verdict is True:
                        try:
                            if kwargs:
                                return fn(*args, **kwargs)
                            return fn(*args)
                        except caller_errors:
                            raise
                        except Exception as exc:
                            return failed(op, key, plan, exc, args, kwargs)
                    return declined(op, key, plan, verdict, args, kwargs)
                return plan.call(*args, **kwargs)
            return call_slow(op, key, args, kwargs)

    else:
        # The ops that create (no array argument; asarray from lists): a ``device=`` naming an
        # accelerator runs the call in its scope (``_on_device``).
        creating = op.array_args == () or op.name == "asarray"
        # No array argument: the key is the scope (and the size bucket 0 where sizes matter),
        # what ``plan_key`` would make, without calling it.
        no_arrays = op.array_args == ()

        def function(*args: Any, **kwargs: Any) -> Any:
            if creating and kwargs and kwargs.get("device") is not None:
                moved = _on_device(function, args, kwargs)
                if moved is not _HERE:
                    return moved
            if no_arrays:
                key: PlanKey = (token(),) if keying[0] != 2 else (token(), 0)
            else:
                key = plan_key(op, token(), args)
            plan = get(key)
            if plan is not None:
                fn = plan.fn
                if fn is not None:
                    if plan.backend != pools.last:
                        pools.switch(plan.backend)
                    try:
                        return fn(*args, **kwargs)
                    except caller_errors:
                        raise
                    except Exception as exc:
                        return failed(op, key, plan, exc, args, kwargs)
                fn = plan.checked
                if fn is not None:  # the first candidate has a can_run: check, then call
                    if plan.backend != pools.last:
                        pools.switch(plan.backend)
                    verdict = plan.check(*args, **kwargs)
                    if verdict is True:
                        try:
                            return fn(*args, **kwargs)
                        except caller_errors:
                            raise
                        except Exception as exc:
                            return failed(op, key, plan, exc, args, kwargs)
                    return declined(op, key, plan, verdict, args, kwargs)
                return plan.call(*args, **kwargs)
            return call_slow(op, key, args, kwargs)

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


# The slots of ``inspect.Signature`` that :class:`OpSignature` fills when first read.
_PARAMETERS: Any = inspect.Signature.__dict__["_parameters"]
_RETURN_ANNOTATION: Any = inspect.Signature.__dict__["_return_annotation"]
#: What a function that takes anything shows: an op declared with no signature in its doc.
_ANYTHING = "(*args, **kwargs)"


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
        parameters: Any = None,
        *,
        return_annotation: Any = inspect.Signature.empty,
        source: Callable[[], inspect.Signature] | None = None,
        **options: Any,
    ) -> None:
        self._source = source
        if source is None:  # made from parameters, as ``replace`` makes one
            super().__init__(parameters, return_annotation=return_annotation, **options)

    def _made(self) -> None:
        source = self._source
        made = inspect.Signature() if source is None else source()
        _PARAMETERS.__set__(self, made.parameters)
        _RETURN_ANNOTATION.__set__(self, made.return_annotation)

    @property
    def _parameters(self) -> Any:
        try:
            return _PARAMETERS.__get__(self)
        except AttributeError:  # not read yet
            self._made()
            return _PARAMETERS.__get__(self)

    @_parameters.setter
    def _parameters(self, value: Any) -> None:
        _PARAMETERS.__set__(self, value)

    @property
    def _return_annotation(self) -> Any:
        try:
            return _RETURN_ANNOTATION.__get__(self)
        except AttributeError:
            self._made()
            return _RETURN_ANNOTATION.__get__(self)

    @_return_annotation.setter
    def _return_annotation(self, value: Any) -> None:
        _RETURN_ANNOTATION.__set__(self, value)


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


def _reference_signature(reference: Callable[..., Any], op: Op) -> inspect.Signature:
    """The signature of ``op``'s reference function; where it has none that ``inspect`` can
    read (a builtin such as ``max``), what ``op``'s documentation declares."""
    try:
        return inspect.signature(reference)
    except (TypeError, ValueError):
        return _declared_signature(op)


#: What :func:`_on_device` returns for a call it leaves where it is.
_HERE = object()


def _on_device(function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A creation op's call whose ``device=`` is Prism's description of a device other than a
    CPU (a :class:`~prism_core.hardware.DeviceInstance` or
    :class:`~prism_core.hardware.DeviceDescription`): run as it would be under
    ``prism_core.device(...)`` of that device, so that a backend driving it creates the array there.
     Every other call (``"cpu"``, Prism's CPU, a backend's own device object) is left where it is
     (:data:`_HERE`): the variant chosen honours ``device`` or names
    what it accepts.  A simulated device's call is planned there and computed, as every
    simulated call is, by the reference backend in host memory (without the ``device`` it
    cannot honour)."""
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
    fn: Callable[..., Any],
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
) -> Callable[[Callable[..., Any]], OpFunction]: ...


def operation(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
    reference: bool = True,
    examples: Examples | None = None,
) -> Any:
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
    if examples is not None:
        from prism_core.kernel.dispatch.examples import Examples

        if not isinstance(examples, Examples):
            raise TypeError(
                "operation(): examples must be a prism_core.backend_kit.Examples or None, got "
                f"{examples!r}"
            )

    def declare(f: Callable[..., Any]) -> OpFunction:
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


def kernel(
    op: str | Op | OpFunction,
    *,
    requires: Mapping[str, Any] | None = None,
    backend: str = "numpy",
    priority: int = 0,
    can_run: CanRun | None = None,
    dtype_support: bool = False,
    fallback: bool = False,
    name: str | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as a variant of ``op`` (the original design's
    ``@kernel(requires={"tensor_cores": 2})``).  ``fallback=True`` marks a variant that runs
    anywhere its backend does, ranked after every variant with requirements."""
    target = as_op(op)

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        add_variant(
            Variant(
                target.name,
                f,
                backend=backend,
                requires=requires,
                priority=priority - 1000 if fallback else priority,
                can_run=can_run,
                dtype_support=dtype_support,
                name=name,
            )
        )
        return f

    return register


registry._function_factory[:] = [_make_function]
