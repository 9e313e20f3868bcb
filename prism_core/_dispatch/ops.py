"""Operations and their variants.

An :class:`Op` is an abstract operation (``matmul``, ``linalg.svd``) that users call; a
:class:`Variant` is one implementation of it on one backend, with requirements on the device and
optionally a per-call check of the arguments.  Dispatch (``_dispatch.py``) picks the variant.

Ops are declared once, in the catalogue (``_catalogue.py``) or by users with
:func:`operation`; variants come from plugins (``prism_variants`` hook, the builtin NumPy plugin
included) or from user code (:meth:`Op.variant`, :func:`kernel`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, overload

from prism_core._description.requirements import Requirement
from prism_core._dispatch.scope import SCOPE
from prism_core._errors import PrismError

_scope_token = SCOPE.get

if TYPE_CHECKING:
    from prism_core._dispatch.dispatcher import Decision

__all__ = [
    "Op",
    "OperationError",
    "Variant",
    "all_ops",
    "get_op",
    "kernel",
    "operation",
]

#: What ``can_run`` may answer: ``True`` (yes), or a string saying why not.
CanRun = Callable[..., "bool | str"]


class OpFunction(Protocol):
    """What users call for an op (``prism_core.matmul``): a function with the op attached."""

    op: Op
    name: str
    variants: list[Variant]

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    def variant(self, fn: Callable[..., Any] | None = None, **options: Any) -> Any: ...

    def explain(self, *args: Any, **kwargs: Any) -> Decision: ...


class OperationError(PrismError, LookupError):
    """An unknown operation, or an operation declared twice."""

    __module__ = "prism_core"


class Variant:
    """One implementation of an op: a backend, requirements on the device, a priority.

    :param op: the op's name (``"matmul"``).
    :param fn: the implementation; receives the call's arguments (converted to the backend's
        arrays) and returns the result.  It may be given as ``"module:attribute"`` (for
        example ``"numpy:matmul"``): it is then imported when dispatch first chooses it, so that
        registering variants never imports a framework, and the hot path calls it directly.
    :param backend: name of the backend it runs on (``"numpy"``, ``"cuda"``).
    :param requires: requirement mapping on the device (``{"vendor": "nvidia",
        "tensor_cores": ">=3"}``); see docs/device-files.md, "Requirements".
    :param priority: higher wins among eligible variants.
    :param can_run: optional per-call check ``can_run(*args, **kwargs) -> True | "reason"``;
        it sees the arguments' ``shape``/``dtype`` (for ``prism.explain`` they are
        :class:`ArraySpec`), and must not compute anything expensive.
    :param dtype_support: when true, the device must have a feature that accelerates this op in
        the data type of the call's arrays (``supports`` with the argument's dtype).
    :param reference: marks the op's reference implementation (run for simulated devices).
    :param name: a unique name; defaults to ``"<backend>.<function name>"``.
    """

    __module__ = "prism_core"
    __slots__ = (
        "backend",
        "can_run",
        "dtype_support",
        "fn",
        "name",
        "op",
        "priority",
        "reference",
        "requirement",
        "source",
    )

    def __init__(
        self,
        op: str,
        fn: Callable[..., Any] | str,
        *,
        backend: str = "numpy",
        requires: Mapping[str, Any] | None = None,
        priority: int = 0,
        can_run: CanRun | None = None,
        dtype_support: bool = False,
        reference: bool = False,
        name: str | None = None,
        source: str = "user",
    ) -> None:
        if not callable(fn) and not (isinstance(fn, str) and ":" in fn):
            raise TypeError(
                f"variant of {op!r}: fn must be callable or 'module:attribute', got {fn!r}"
            )
        if can_run is not None and not callable(can_run):
            raise TypeError(f"variant of {op!r}: can_run must be callable, got {can_run!r}")
        self.op = op
        self.fn = fn
        self.backend = backend
        self.requirement = requires if isinstance(requires, Requirement) else Requirement(requires)
        self.priority = int(priority)
        self.can_run = can_run
        self.dtype_support = bool(dtype_support)
        self.reference = bool(reference)
        default = (
            fn.rpartition(":")[2] if isinstance(fn, str) else getattr(fn, "__name__", "variant")
        )
        self.name = name or f"{backend}.{default}"
        self.source = source

    def resolve(self) -> Callable[..., Any]:
        """The implementation, importing it first when it was given as ``"module:attribute"``."""
        fn = self.fn
        if isinstance(fn, str):
            import importlib

            module, _, attribute = fn.partition(":")
            obj: Any = importlib.import_module(module)
            for part in attribute.split("."):
                obj = getattr(obj, part)
            self.fn = fn = obj
        return fn

    @property
    def specificity(self) -> int:
        return self.requirement.specificity + (1 if self.dtype_support else 0)

    def __repr__(self) -> str:
        return f"<Variant {self.name!r} of {self.op!r} on {self.backend!r}>"


class Op:
    """An operation users call: ``prism_core.matmul(a, b)`` dispatches to the best variant.

    ``array_args`` lists the positional parameters that are arrays (their types and dtypes form
    the cache key and decide conversions between backends); ``None`` means every positional
    argument that has a ``dtype`` or ``__dlpack__``.
    """

    __module__ = "prism_core"

    def __init__(
        self,
        name: str,
        doc: str = "",
        *,
        aliases: Sequence[str] = (),
        array_args: Sequence[int] | None = None,
    ) -> None:
        self.name = name
        self.aliases = tuple(aliases)
        self.array_args = None if array_args is None else tuple(array_args)
        self.__doc__ = doc
        self.__name__ = name.rpartition(".")[2]
        self.__qualname__ = self.__name__
        self.variants: list[Variant] = []
        # Dispatch state: plans cached by (scope, argument signature); see _dispatch.py.
        self._plans: dict[Any, Any] = {}
        #: Whether dispatch keys include dtypes: only when a variant depends on them.
        self._by_dtype: list[bool] = [False]
        #: What users call (``prism_core.matmul``): a plain function specialised for this op,
        #: because calling a function costs less than calling an object (benchmarks/).
        self.function: OpFunction = _make_function(self)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.function(*args, **kwargs)

    def variant(
        self,
        fn: Callable[..., Any] | None = None,
        *,
        backend: str = "numpy",
        requires: Mapping[str, Any] | None = None,
        priority: int = 0,
        can_run: CanRun | None = None,
        dtype_support: bool = False,
        name: str | None = None,
    ) -> Any:
        """Register a variant of this op (usable as a decorator)."""

        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            add_variant(
                Variant(
                    self.name,
                    f,
                    backend=backend,
                    requires=requires,
                    priority=priority,
                    can_run=can_run,
                    dtype_support=dtype_support,
                    name=name,
                )
            )
            return f

        return register if fn is None else register(fn)

    def explain(self, *args: Any, **kwargs: Any) -> Decision:
        """The decision a call with these arguments gets, with every candidate's verdict."""
        from prism_core._dispatch.dispatcher import explain

        return explain(self, *args, **kwargs)

    def __repr__(self) -> str:
        return f"<prism op {self.name!r} ({len(self.variants)} variants)>"


_lock = threading.RLock()
_ops: dict[str, Op] = {}
_aliases: dict[str, str] = {}
#: Bumped whenever ops or variants change: dispatch plans of older generations are stale.
generation = 0


def _bump() -> None:
    global generation
    generation += 1
    for op in _ops.values():
        op._by_dtype[0] = any(v.dtype_support for v in op.variants)
        op._plans.clear()


def _make_function(op: Op) -> OpFunction:
    """The function users call for ``op``: the hot path of dispatch.

    A context read, a key tuple, a dict lookup and the call; everything else (plans, per-call
    checks, conversions, fallback) is in _dispatch.  The key is the scope and the type of each
    array argument, plus its dtype when a variant of the op depends on dtypes (``dtype_support``;
    ``op._by_dtype``).  Specialised for one and two leading array arguments, whose keys are
    built inline; benchmarks/bench_dispatch.py measures what each of these choices saves.
    """
    from prism_core._dispatch.dispatcher import CALLER_ERRORS, _key, call_slow, failed

    get = op._plans.get  # the dict is only ever cleared, never replaced
    token = _scope_token
    caller_errors = CALLER_ERRORS
    by_dtype = op._by_dtype  # a one-item list, updated when variants change

    if op.array_args == (0, 1):

        def function(*args: Any, **kwargs: Any) -> Any:
            try:
                x = args[0]
                y = args[1]
                if by_dtype[0]:
                    key: Any = (token(), type(x), x.dtype, type(y), y.dtype)
                else:
                    key = (token(), type(x), type(y))
            except (IndexError, AttributeError):
                key = _key(op, token(), args)
            plan = get(key)
            if plan is not None:
                fn = plan.fn
                if fn is not None:
                    try:
                        if kwargs:
                            return fn(*args, **kwargs)
                        return fn(*args)
                    except caller_errors:
                        raise
                    except Exception as exc:
                        return failed(op, plan, exc, args, kwargs)
            return call_slow(op, key, args, kwargs)

    elif op.array_args == (0,):

        def function(*args: Any, **kwargs: Any) -> Any:
            try:
                x = args[0]
                key: Any = (token(), type(x), x.dtype) if by_dtype[0] else (token(), type(x))
            except (IndexError, AttributeError):
                key = _key(op, token(), args)
            plan = get(key)
            if plan is not None:
                fn = plan.fn
                if fn is not None:
                    try:
                        if kwargs:
                            return fn(*args, **kwargs)
                        return fn(*args)
                    except caller_errors:
                        raise
                    except Exception as exc:
                        return failed(op, plan, exc, args, kwargs)
            return call_slow(op, key, args, kwargs)

    else:

        def function(*args: Any, **kwargs: Any) -> Any:
            key = _key(op, token(), args)
            plan = get(key)
            if plan is not None:
                fn = plan.fn
                if fn is not None:
                    try:
                        return fn(*args, **kwargs)
                    except caller_errors:
                        raise
                    except Exception as exc:
                        return failed(op, plan, exc, args, kwargs)
            return call_slow(op, key, args, kwargs)

    leaf = op.name.rpartition(".")[2]
    function.__name__ = function.__qualname__ = leaf
    function.__doc__ = op.__doc__
    function.__module__ = "prism_core"
    function.op = op  # type: ignore[attr-defined]
    function.name = op.name  # type: ignore[attr-defined]
    function.variants = op.variants  # type: ignore[attr-defined]
    function.variant = op.variant  # type: ignore[attr-defined]
    function.explain = op.explain  # type: ignore[attr-defined]
    return function  # type: ignore[return-value]


def as_op(target: Any) -> Op:
    """The :class:`Op` behind an op, its function (``prism_core.matmul``) or its name."""
    if isinstance(target, Op):
        return target
    if isinstance(target, str):
        return get_op(target)
    op = getattr(target, "op", None)
    if isinstance(op, Op):
        return op
    raise TypeError(f"{target!r} is not an operation (give an op, its function or its name)")


def register_op(op: Op) -> Op:
    with _lock:
        for name in (op.name, *op.aliases):
            if name in _ops or name in _aliases:
                raise OperationError(f"an operation named {name!r} is already declared")
        _ops[op.name] = op
        for alias in op.aliases:
            _aliases[alias] = op.name
        _bump()
    return op


def add_variant(variant: Variant) -> None:
    """Add a variant to its op (the op must exist); dispatch caches are invalidated."""
    with _lock:
        # Not get_op(): this runs during plugin discovery, which get_op() would start again.
        op = _lookup(variant.op)
        if any(v.name == variant.name for v in op.variants):
            raise OperationError(
                f"op {op.name!r} already has a variant named {variant.name!r}; give it a name="
            )
        op.variants.append(variant)
        _bump()


def remove_variants(predicate: Callable[[Variant], bool]) -> int:
    """Remove the variants for which ``predicate`` is true; returns how many."""
    removed = 0
    with _lock:
        for op in _ops.values():
            keep = [v for v in op.variants if not predicate(v)]
            removed += len(op.variants) - len(keep)
            op.variants[:] = keep
        if removed:
            _bump()
    return removed


def get_op(name: str) -> Op:
    """The op called ``name`` (or one of its aliases)."""
    _ensure_catalogue()
    return _lookup(name)


def _lookup(name: str) -> Op:
    op = _ops.get(name) or _ops.get(_aliases.get(name, ""))
    if op is None:
        from prism_core._errors import did_you_mean

        raise OperationError(
            f"unknown operation {name!r}{did_you_mean(name, [*_ops, *_aliases])}; "
            "`prism_core.all_ops()` lists them"
        )
    return op


def all_ops() -> dict[str, Op]:
    """Every declared op by name (aliases not repeated)."""
    _ensure_catalogue()
    return dict(sorted(_ops.items()))


def _ensure_catalogue() -> None:
    from prism_core._dispatch import catalogue as _catalogue  # noqa: F401  (declares the builtin ops on first use)
    from prism_core._knowledge.plugins import plugins

    plugins()  # plugins' variants are registered when plugins are discovered


@overload
def operation(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
) -> OpFunction: ...


@overload
def operation(
    fn: None = None,
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
) -> Callable[[Callable[..., Any]], OpFunction]: ...


def operation(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    aliases: Sequence[str] = (),
    array_args: Sequence[int] | None = None,
) -> Any:
    """Declare a new op with its reference implementation (usable as a decorator).

    The decorated function becomes the op's reference variant (backend ``numpy``, no
    requirements, lowest rank among its siblings of equal priority); add faster variants with
    ``@myop.variant(requires=...)`` or :func:`kernel`.  Returns the function users call; its
    ``.op`` is the :class:`Op`.
    """

    def declare(f: Callable[..., Any]) -> OpFunction:
        op = Op(name or f.__name__, f.__doc__ or "", aliases=aliases, array_args=array_args)
        register_op(op)
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
    op: Any,
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
