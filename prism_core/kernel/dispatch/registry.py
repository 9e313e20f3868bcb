"""The table of ops and their variants, and the generation that dates every cached plan.

An :class:`Op`'s variants come from plugins (:func:`sync_plugins`) and from user code.  The
*dispatch generation* advances whenever anything a plan was built from changes: :func:`bump`
drops every cached plan under the lock :func:`store_plan` takes, so a plan built from a
superseded state is never stored.  docs/architecture.md, "Layers" and "Dispatch".
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

from prism_core.kernel.contract.variant import CanRun, Variant
from prism_core.kernel.errors import PrismError, PrismWarning, did_you_mean, user_stacklevel
from prism_core.kernel.events import subscribe

if TYPE_CHECKING:
    from prism_core.kernel.contract.array import Array
    from prism_core.kernel.dispatch.decision import Decision
    from prism_core.kernel.op_examples import Examples
    from prism_core.kernel.plugins import PluginSet

__all__ = ["Op", "OpFunction", "OperationError", "PlanKey"]


class OperationError(PrismError, LookupError):
    """An unknown operation, or an operation declared twice."""

    __module__ = "prism_core"


class OpFunction(Protocol):
    """What users call for an op (``prism_core.matmul``): a function with the op attached."""

    op: Op
    name: str
    variants: list[Variant]

    def __call__(self, *args: object, **kwargs: object) -> Any: ...
    def variant(self, fn: Callable[..., object] | None = None, **options: object) -> Any: ...
    def explain(self, *args: object, **kwargs: object) -> Decision: ...


#: A call's plan-cache key: the scope's token, then each array argument's type (and dtype, and
#: the size bucket, as the op's keying asks: ``arguments.plan_key``).
PlanKey = tuple[object, ...]
_F = TypeVar("_F", bound=Callable[..., object])

#: Makes the function users call for an op, and gives it the code for the op's keying when that
#: changes (users hold the function: it stays the same object); installed by ``ops.py``.
_function_factory: list[Callable[[Op], Any]] = []


class Op:
    """An operation users call: ``prism_core.matmul(a, b)`` dispatches to the best variant.

    ``array_args`` lists the positional parameters that are arrays (their types and dtypes key
    the plan and decide moves between backends; ``None``: every positional argument with a
    ``dtype`` or ``__dlpack__``), ``sequences`` those that take a sequence of arrays (``stack``).
    ``examples`` makes its arguments at a size for ``prism bench`` and ``prism.tune`` (an op a
    plugin declares; the builtin ops' are the tuner's).
    """

    __module__ = "prism_core"

    def __init__(
        self,
        name: str,
        doc: str = "",
        *,
        aliases: Sequence[str] = (),
        array_args: Sequence[int] | None = None,
        sequences: Sequence[int] = (),
        examples: Examples | None = None,
    ) -> None:
        self.name = name
        self.aliases = tuple(aliases)
        self.array_args = None if array_args is None else tuple(array_args)
        self.sequences = tuple(sequences)
        self.examples = examples
        self.__doc__ = doc
        self.__name__ = name.rpartition(".")[2]
        self.__qualname__ = self.__name__
        self.variants: list[Variant] = []
        # Plans cached by key: a ``plans.Plan`` or a ``location.Router`` (layers above).  Only
        # ever cleared, never replaced: the op's function holds its ``get``.
        self._plans: dict[PlanKey | None, Any] = {}
        #: What keys hold beyond the scope and the argument types (set by :meth:`_key_by`): 0
        #: nothing, 1 the dtypes (``dtype_support``), 2 the dtypes and the size bucket.
        self._keying: list[int] = [0]
        #: What users call: a function specialised for this op (cheaper to call than an object).
        self.function: OpFunction = _function_factory[0](self)

    def _key_by(self, keying: int) -> None:
        """Key this op's plans as ``keying`` says (:attr:`_keying`; the caller holds the lock
        and drops the plans), and its function's keys with them."""
        if self._keying[0] != keying:
            self._keying[0] = keying
            _function_factory[1](self)

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return self.function(*args, **kwargs)

    def variant(
        self,
        fn: Callable[..., object] | None = None,
        *,
        backend: str = "numpy",
        requires: Mapping[str, object] | None = None,
        priority: int = 0,
        can_run: CanRun | None = None,
        dtype_support: bool = False,
        name: str | None = None,
    ) -> Any:
        """Register a variant of this op (usable as a decorator)."""

        def register(f: _F) -> _F:
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

    def explain(self, *args: object, **kwargs: object) -> Decision:
        """The decision a call with these arguments gets, with every candidate's verdict."""
        return self.function.explain(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<prism op {self.name!r} ({len(self.variants)} variants)>"


# Reentrant: registering a variant bumps the generation under the same lock.
lock = threading.RLock()
_ops: dict[str, Op] = {}
_aliases: dict[str, str] = {}


class _State:
    """What the op table's plans depend on, beside the ops themselves."""

    #: The dispatch generation: read on every plan store.
    generation = 0
    #: The plugin set whose variants the ops hold now.
    synced: PluginSet | None = None
    #: Whether the builtin ops of the catalogue are declared.
    declared = False
    #: What the ranker in force ranks by (``Ranker.revision()``), as the keying reflects.
    revision: object = None
    #: Whether an op's order depends on the size (``Ranker.sizes_matter``); ``None``: never.
    sizes_matter: Callable[[str], bool] | None = None
    #: The backends that declare the dtypes they hold (``Backend.dtypes``): the ops they have
    #: variants of key plans by dtype.
    by_dtype: frozenset[str] = frozenset()
    #: Every op's keys hold the size bucket (tuning on first use: each new size is tuned).
    every_size = False


_state = _State()


def key_every_size(on: bool) -> None:
    """Key every op's plans by size bucket (``on``: tuning on first use tunes each new size),
    or only those whose tuned choice depends on the size."""
    with lock:
        _state.every_size = on
        bump()


def rekey(revision: object, sizes_matter: Callable[[str], bool] | None) -> None:
    """What the ranker in force ranks by changed (``revision``, as ``Ranker.revision()``): key
    the plans of each op whose order depends on the size (``sizes_matter``) by size bucket, and
    build every plan again.  Nothing happens while ``revision`` is the one in force."""
    if _state.revision is revision:
        return
    with lock:
        _state.revision = revision
        _state.sizes_matter = sizes_matter
        bump()


def generation() -> int:
    """The dispatch generation, read before anything a plan is built from."""
    return _state.generation


def bump() -> None:
    """Something plans depend on changed: advance the generation, drop every cached plan."""
    with lock:
        _state.generation += 1
        sizes_matter = _state.sizes_matter
        for op in _ops.values():
            if _state.every_size or (sizes_matter is not None and sizes_matter(op.name)):
                op._key_by(2)
            else:
                by_dtype = _state.by_dtype
                op._key_by(int(any(v.dtype_support or v.backend in by_dtype for v in op.variants)))
            op._plans.clear()


def size_keyed(op: Op) -> None:
    """Key ``op``'s plans by size bucket from now on (its choice was modelled, or made under an
    execution policy: predicted times depend on the size).  ``bump`` decides again."""
    if op._keying[0] == 2:
        return
    with lock:
        op._key_by(2)
        op._plans.clear()


def store_plan(op: Op, key: PlanKey, plan: object, built_at: int) -> bool:
    """Cache ``plan`` for ``key`` unless the generation it was built at has passed."""
    with lock:
        if _state.generation != built_at:
            return False
        plans = op._plans
        if len(plans) >= 4096:  # signatures are open-ended; keep the cache bounded
            plans.clear()
        plans[key] = plan
        return True


def swap_plan(op: Op, key: PlanKey | None, expected: object, new: object, built_at: int) -> bool:
    """Cache ``new``, built at generation ``built_at``, for ``key`` if the cache still holds
    ``expected`` there (``None``: nothing); ``False`` when another thread changed it meanwhile.
    A ``new`` built at a passed generation is not stored, though the swap counts as done."""
    with lock:
        if op._plans.get(key) is not expected:
            return False
        if _state.generation == built_at:
            op._plans[key] = new
        return True


# Plugins or devices loaded again: every plan is stale (the layer below announces it).
subscribe(lambda what: bump())


def register_op(op: Op) -> Op:
    with lock:
        _enter(op)
        bump()
    return op


def _enter(op: Op) -> None:
    """Put ``op`` in the table, under its name and aliases (the caller holds the lock and
    bumps the generation)."""
    for name in (op.name, *op.aliases):
        if name in _ops or name in _aliases:
            raise OperationError(f"an operation named {name!r} is already declared")
    _ops[op.name] = op
    for alias in op.aliases:
        _aliases[alias] = op.name


def add_variant(variant: Variant) -> None:
    """Add a variant to its op (the op must exist); cached plans are dropped.  Called while a
    plugin is being loaded, the variant is the plugin's: discovery collects it, and it joins its
    op with the rest of the plugin's variants."""
    from prism_core.kernel.plugins import collect_variant, discovering, plugins

    if collect_variant(variant):
        return
    with lock:
        _join(variant)
        bump()
    if not discovering():
        backends = plugins().backends
        if variant.backend not in backends:
            hint = did_you_mean(variant.backend, backends)
            if hint:  # a typo, not a backend that is merely not installed here
                warnings.warn(
                    f"variant {variant.name} of {variant.op!r} is for backend "
                    f"{variant.backend!r}, which is not installed{hint}",
                    PrismWarning,
                    stacklevel=user_stacklevel(),
                )
        _warn_unknown_keys([variant])


def _warn_unknown_keys(variants: Sequence[Variant]) -> None:
    """Warn about requirement keys no description in the library knows (``knd``), with the
    close matches: such a clause can never be met, so the variant would never run."""
    from prism_core.kernel.description.requirements import IDENTITY_KEYS
    from prism_core.kernel.devices import default_library

    known: set[str] | None = None
    for variant in variants:
        for clause in variant.requirement.clauses:
            if clause.namespace not in ("auto", "feature", "attribute", "flag"):
                continue
            if known is None:  # names from the documents: building every Feature costs 1.5 ms
                known = set()
                for device in default_library().list(include_abstract=True):
                    known.update(f["name"] for f in device.data.get("features", ()))
                    known.update(device.data.get("attributes", ()))
                    known.update(device.cpu_flags)
            if clause.name in known:
                continue
            hint = did_you_mean(clause.name, [*known, *IDENTITY_KEYS, "compute_units"])
            warnings.warn(
                f"variant {variant.name} of {variant.op!r} ({variant.origin}) requires "
                f"{clause.key!r}, which no device description in the library declares, so "
                f"it can never be met{hint}",
                PrismWarning,
                stacklevel=user_stacklevel(),
            )


def remove_variants(predicate: Callable[[Variant], bool]) -> int:
    """Remove the variants for which ``predicate`` is true; returns how many."""
    removed = 0
    with lock:
        for op in _ops.values():
            keep = [v for v in op.variants if not predicate(v)]
            removed += len(op.variants) - len(keep)
            op.variants[:] = keep
        if removed:
            bump()
    return removed


def lookup(name: str) -> Op:
    """The op called ``name`` (or one of its aliases), without discovering plugins."""
    op = _ops.get(name) or _ops.get(_aliases.get(name, ""))
    if op is None:
        raise OperationError(
            f"unknown operation {name!r}{did_you_mean(name, [*_ops, *_aliases])}; "
            "`prism_core.all_ops()` lists them"
        )
    return op


def table() -> dict[str, Op]:
    return dict(_ops)


def as_op(target: object) -> Op:
    """The :class:`Op` behind an op, its function (``prism_core.matmul``) or its name."""
    if isinstance(target, Op):
        return target
    if isinstance(target, str):
        ensure_ready()
        return lookup(target)
    op = getattr(target, "op", None)
    if isinstance(op, Op):
        return op
    raise TypeError(f"{target!r} is not an operation (give an op, its function or its name)")


def ensure_ready() -> None:
    """Declare the builtin ops (first call) and join the current plugin set's variants to them.
    While this thread is loading a plugin, plugins are not discovered again: ops can be looked
    up and variants registered, which is all a plugin may do then."""
    from prism_core.kernel.plugins import discovering, plugins

    _declare_catalogue()
    if discovering():
        return
    ps = plugins()
    if _state.synced is not ps:
        sync_plugins(ps)


def _declare_catalogue() -> None:
    if _state.declared:
        return
    from prism_core.kernel.dispatch.catalogue import SPECS

    with lock:
        if _state.declared:
            return
        try:
            for spec in SPECS:
                op = Op(
                    spec.name,
                    spec.text,
                    aliases=spec.aliases,
                    array_args=spec.array_args,
                    sequences=spec.sequences,
                )
                _enter(op)
                if spec.work == "elementwise" and spec.arity == 2:  # NumPy's binary ufuncs
                    _give_outer(op, spec.numpy.rpartition(":")[2])
            _state.declared = True
        finally:
            bump()  # once for the catalogue: a bump per op would rekey every op declared so far


def _give_outer(op: Op, numpy_name: str) -> None:
    """Give the function of ``op``, an elementwise op of two operands, the method ``outer`` of
    NumPy's ufunc ``numpy_name`` (an attribute, not an op: it dispatches ``reshape``, then
    ``op``), documented below."""
    name = op.__name__

    def outer(a: object, b: object, /) -> object:
        # NumPy's ufunc.outer makes arrays of its operands first (Python scalars included,
        # which then promote as arrays do: float32 array .outer 2.0 is float64, as NumPy's).
        if not (hasattr(a, "shape") and hasattr(a, "dtype")):
            a = lookup("asarray").function(a)
        if not (hasattr(b, "shape") and hasattr(b, "dtype")):
            b = lookup("asarray").function(b)
        extra = len(cast("Array", b).shape)
        if extra:  # a's axes first, then b's: a of shape (*a.shape, 1, ..., 1) broadcasts
            a = lookup("reshape").function(a, (*cast("Array", a).shape, *(1,) * extra))
        return op.function(a, b)

    outer.__name__ = "outer"
    outer.__qualname__ = f"{name}.outer"
    outer.__module__ = "prism_core"
    outer.__doc__ = (
        f"{name}.outer(a, b, /): ``{name}`` of every element of ``a`` with every element of "
        f"``b``, NumPy's ``numpy.{numpy_name}.outer(a, b)``: the result's shape is "
        "``a.shape + b.shape``, its dtype and values NumPy's.  Computed as ``"
        f"{name}(reshape(a, (*a.shape, *(1,) * b.ndim)), b)`` through Prism's ops, so it runs "
        'on the backend in scope (a torch tensor under ``use_backend("torch")``); operands '
        "that are not arrays (Python scalars, lists) are made arrays with ``asarray`` first, "
        "as NumPy makes them.  NumPy's keywords (``out``, ``dtype``, ``where``) are not taken."
    )
    op.function.outer = outer  # type: ignore[attr-defined]


def sync_plugins(ps: PluginSet) -> None:
    """Make the ops hold the variants of plugin set ``ps`` (and no other set's).  A plugin
    whose variants cannot join (an unknown op, a name taken) fails as a whole: none of its
    variants stay, and the plugin set records why (an error in strict mode)."""
    with lock:
        if _state.synced is ps:
            return
        remove_variants(lambda v: v.source.startswith("plugin:"))
        # A backend whose dtypes() raised counts as declaring (its plans are keyed by dtype).
        _state.by_dtype = frozenset(
            name for name, backend in ps.backends.items() if ps.held_dtypes(backend) is not None
        )
        for record in ps.loaded:
            try:
                for variant in record.variants:
                    _join(variant)
            except PrismError as exc:
                source = f"plugin:{record.name}"
                remove_variants(lambda v: v.source == source)  # noqa: B023  (called at once)
                _state.synced = ps  # before failing it: strict mode raises from here
                ps.fail_loaded(record, f"prism_variants: {exc}")
        _state.synced = ps
        bump()
    _warn_unknown_keys([v for r in ps.loaded for v in r.variants])


def _join(variant: Variant) -> None:
    op = lookup(variant.op)
    if any(v.name == variant.name for v in op.variants):
        raise OperationError(
            f"op {op.name!r} already has a variant named {variant.name!r}; give it a name="
        )
    op.variants.append(variant)
