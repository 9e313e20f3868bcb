"""Namespace backends: a library that already speaks the Python Array API is a Prism backend.

:class:`NamespaceBackend` turns an Array API namespace (``jax.numpy``,
``array_api_compat.torch``, ``cupy``, ``array_api_strict``, ...) into a backend: a variant for
every op of the standard the namespace computes, with Prism's semantics where a library's
differ (NumPy's dtypes and promotion, the reference's errors for a caller's mistake, a variant
per :class:`Target` device), and a plugin adds only what is its own (overrides, declines,
quirks).  What each variant does, and a whole plugin: docs/writing-a-plugin.md, "Your library
already speaks the Array API".
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple

from prism_core.backend_kit import adapters
from prism_core.backend_kit._common import array_arguments, import_framework, probe_library, too_old
from prism_core.backend_kit._numpy_rules import (
    ELEMENTWISE,
    NUMPY_DEFAULTS,
    PRISM_OR_NUMPY,
    SCALARS,
    STANDARD,
    STANDARD_NAMES,
    caller_error,
    container_type,
    default_kind,
    dtype_kind,
    promoted_dtype,
    record_of,
    value_parameters,
)
from prism_core.backend_kit.declines import Decline
from prism_core.kernel.contract.backend import Availability, Backend
from prism_core.kernel.contract.device_argument import requested_device
from prism_core.kernel.contract.variant import CanRun, Variant
from prism_core.kernel.description.dtypes import dtype as prism_dtype
from prism_core.kernel.description.dtypes import dtype_name
from prism_core.kernel.errors import describe_exception

if TYPE_CHECKING:
    from prism_core.kernel.description.device import DeviceDescription

__all__ = ["NamespaceBackend", "Target"]


class Target(NamedTuple):
    """One kind of device a namespace backend computes on.

    ``name`` is the target's (``"cpu"``, ``"cuda"``); the first target's variants are named
    ``<backend>.<op>``, the others' ``<backend>.<target>.<op>``.  ``requires`` is the device
    requirement of its variants, ``priority`` theirs (an accelerator's above the host's, so that
    it wins where the caller named it).
    """

    name: str
    requires: Mapping[str, Any]
    priority: int = 0


class NamespaceBackend(Backend):
    """A backend computing Prism's ops with an Array API namespace.

    Subclass it and set:

    * ``name`` (and ``description``, ``drives``, as for any backend);
    * ``namespace``: the module path of the namespace (``"jax.numpy"``), imported on first use;
    * ``library`` and ``minimum``: the module probed for availability and its least version
      (``"jax"``, ``"0.4.30"``); ``distribution``, the plugin's name for messages;
      ``installed_as``, the distributions of the library (first) and of the namespace, whose
      installed metadata answer availability without importing the library (``("jax",)``);
    * ``array_types``: the library's array classes as ``"module:Class"`` (``"jax:Array"``),
      found without importing the library;
    * ``targets``: the devices it computes on (default: one, the CPU);
    * ``holds``: the dtypes it holds (Prism's names), or ``None`` for all of them;
    * ``overrides``: op -> a function (or ``"module:attribute"``) replacing the namespace's:
      a faster kernel, a fix of a library quirk (say which in a comment), or an op beyond the
      standard (``dot``, ``einsum``, ``linalg.eig``);
    * ``declines``: op -> a ``can_run`` asked before each call of the op's variants, or a
      :class:`~prism_core.backend_kit.Decline` saying declaratively which calls (by dtype kind,
      dtype, keyword or empty input);
    * ``excludes``: op -> the dtypes (Prism's names) the backend holds but does not compute
      that op in accurately (``{"sin": {"float64"}}``): those calls are declined, saying so;
    * ``lacks``: the ops (Prism's names) whose standard function the namespace does not have,
      for a namespace not imported when dispatch first asks (availability answered from
      ``installed_as``); once it is imported, :meth:`missing` finds them itself;
    * ``adapts``: the NumPy-like signatures the namespace has where the standard's differ
      (``prism_core.backend_kit.adapters``: ``"correction"``, ``"sort"``, ``"clip"``,
      ``"cumulative"``, ``"svd"``, ``"linalg"``; ``adapters.NUMPY_LIKE`` is all of them),
      adapted once in the kit;
    * ``default_dtypes``: the library's defaults where they differ from NumPy's
      (``{"float": "float32", "int": "int32", "index": "int32"}``): creation functions are
      passed NumPy's default explicitly, and index results are NumPy's index type;
    * ``lazy``: ``True`` for a library that computes when a result is evaluated (MLX): each
      variant evaluates its result (:meth:`evaluate`) so that the library's errors are raised,
      and translated, inside it, and :meth:`synchronize` evaluates;
    * ``streams``: ``True`` for a library whose device is where an op runs, not where its
      arrays live (MLX: the CPU and the GPU share one memory, and ``mx.stream(device)`` says
      where ops run): each variant runs inside ``xp.stream(device_for(target))`` (by default
      the namespace's attribute named as the target: ``mx.cpu``), nothing is moved, and the
      library's arrays are on every target (:meth:`placement`);
    * ``transfer`` (``"dlpack"`` or ``"copy"``) and ``compiles``, as for any backend.

    :meth:`make_array` (every array the kit makes from host data) and :meth:`promote` (NumPy's
    promotion of an op's operands) are the override points for a library that reads arrays or
    dtypes its own way.

    With several targets, a library's devices are its own: :meth:`device_for` (a target's
    device), :meth:`where` (the target an array lives on), :meth:`place` (arguments moved
    there), :meth:`creation_device` (what ``device=`` becomes) and :meth:`placement` (the
    variants' ``placement``, which keeps data where it is: asked once per plan, since plans are
    keyed by where the arrays live) may be overridden.

    :meth:`variants` gives the plugin's ``prism_variants`` hook its list.
    """

    namespace: str = ""
    library: str = ""
    minimum: str = "0"
    distribution: str = ""
    installed_as: tuple[str, ...] = ()
    array_types: tuple[str, ...] = ()
    targets: tuple[Target, ...] = (Target("cpu", MappingProxyType({"kind": "cpu"})),)
    holds: frozenset[str] | None = None
    overrides: Mapping[str, Callable[..., Any] | str] = MappingProxyType({})
    declines: Mapping[str, CanRun] = MappingProxyType({})
    excludes: Mapping[str, Collection[str]] = MappingProxyType({})
    lacks: frozenset[str] = frozenset()
    adapts: frozenset[str] = frozenset()
    default_dtypes: Mapping[str, str] = MappingProxyType({})
    lazy: bool = False
    streams: bool = False

    def __init__(self) -> None:
        # Creating the backend is cheap: nothing is imported or probed here.
        self._xp: ModuleType | None = None
        self._availability: Availability | None = None
        self._functions: dict[tuple[str, str], Callable[..., Any]] = {}

    # -- the library ----------------------------------------------------------------------------
    @property
    def xp(self) -> ModuleType:
        """The namespace, imported on first use."""
        xp = self._xp
        if xp is None:
            xp = self._xp = importlib.import_module(self.namespace)
        return xp

    def availability(self) -> Availability:
        """Whether :attr:`library` imports here at :attr:`minimum` or later, and the namespace
        with it; the reason says what to install or why an installed one cannot load.

        Where :attr:`installed_as` names the distributions, and nothing has imported the
        library yet, their installed metadata answer instead, without importing it (``prism
        doctor`` and ``prism plugins`` stay fast; an installed library that cannot load then
        fails at its first op, and dispatch falls back with the import error)."""
        if self._availability is None:
            library = self.library or self.namespace.partition(".")[0]
            found = None if library in sys.modules else self._installed()
            if found is not None:
                self._availability = found
                return found
            found = probe_library(library, self.minimum, self.distribution or self.name)
            if found and self.namespace != library:
                module, why = import_framework(self.namespace)
                if module is None:
                    found = Availability(False, f"{self.namespace} {why}", found.version)
            self._availability = found
        return self._availability

    def _installed(self) -> Availability | None:
        """What :attr:`installed_as` says without importing anything; ``None`` where only an
        import can tell (nothing named, metadata unreadable)."""
        import importlib.metadata

        versions = []
        for name in self.installed_as:
            try:
                versions.append(importlib.metadata.version(name))
            except importlib.metadata.PackageNotFoundError:
                return Availability(
                    False,
                    f"{name} is not installed (pip install {name}, or reinstall "
                    f"{self.distribution or self.name}, which depends on it)",
                )
            except Exception:
                return None
        if not versions:
            return None
        outdated = too_old(self.installed_as[0], versions[0], self.minimum, self.name)
        if outdated is not None:
            return outdated
        return Availability(True, version=versions[0])

    def dtypes(self, device: DeviceDescription | None = None) -> frozenset[str] | None:
        """:attr:`holds`, on every device."""
        return self.holds

    def capabilities(self) -> dict[str, Any]:
        """The library's version, its namespace, the dtypes it holds and how it moves data."""
        held = self.dtypes()
        return {
            self.library or self.namespace: self.availability().version,
            "namespace": self.namespace,
            "dtypes": "all" if held is None else sorted(held),
            "transfer": self.transfer,
            "compiles per shape": self.compiles,
        }

    # -- arrays ---------------------------------------------------------------------------------
    def owns(self, value: Any) -> bool:
        """Whether ``value`` is one of :attr:`array_types`; imports nothing (an array of the
        library cannot exist before the library is imported)."""
        for spec in self.array_types:
            module, _, attribute = spec.partition(":")
            found = sys.modules.get(module)
            if found is not None and isinstance(value, getattr(found, attribute)):
                return True
        return False

    def is_native(self, value: Any) -> bool:
        """The library's arrays and Python scalars, which the standard takes as they are."""
        return type(value) in SCALARS or self.owns(value)

    def native_dtype(self, value: Any) -> Any:
        """The library's dtype for a ``dtype=`` argument (a Prism dtype, a NumPy dtype, a name,
        or the library's own); ``None`` stays ``None``.  ``TypeError`` for what is no dtype or
        one the library lacks."""
        if value is None:
            return None
        if type(value).__module__.partition(".")[0] not in PRISM_OR_NUMPY:
            return value  # the library's own dtype (or its error)
        try:
            name = prism_dtype(value).name  # TypeError, naming it, for what is no dtype
        except ValueError:
            if not isinstance(value, str):
                raise
            import numpy as np

            name = np.dtype(value).name  # NumPy's own names ("f4"), as the reference reads them
        if name == "bool_":  # the standard's name is bool; NumPy's, and some libraries', bool_
            found = getattr(self.xp, "bool", None)
            if found is None:
                found = getattr(self.xp, "bool_", None)
        else:
            found = getattr(self.xp, name, None)
        if found is None:
            raise TypeError(f"dtype: {self.name} has no {name} ({self.namespace}.{name})")
        return found

    def _widen(self, op: str, args: tuple[Any, ...], rule: str) -> tuple[Any, ...]:
        """``args`` with their integer and bool arrays cast to the dtype NumPy computes ``op``
        in (``rule``): sums and products accumulate in the 64-bit integer of their kind;
        ``divide``, ``mean``, ``std`` and ``var`` give float64; the floating functions the
        smallest float that holds the integers (``sqrt`` of int8 is float16)."""
        out = list(args)
        for i, a in enumerate(args[:1] if rule == "accumulate" else args):
            kind = dtype_kind(a.dtype) if hasattr(a, "dtype") else None
            if kind is None or kind not in "biu":
                continue
            import numpy as np

            given = np.dtype(dtype_name(a.dtype))
            if rule == "accumulate":
                if given.itemsize == 8:
                    continue
                wanted = "uint64" if kind == "u" else "int64"
            else:
                wanted = "float64" if rule == "float64" else np.result_type(given, np.float16).name
            out[i] = self.xp.astype(a, self._held_dtype(op, wanted))
        return tuple(out)

    def _held_dtype(self, op: str, value: Any) -> Any:
        """The library's dtype for a ``dtype=`` argument of ``op``, which it must hold."""
        native = self.native_dtype(value)
        self._check_held(op, dtype_name(native))
        return native

    def _check_held(self, what: str, name: str) -> None:
        held = self.dtypes()
        if held is not None and name not in held:
            raise TypeError(
                f"{what}: {self.name} holds no {name}; it holds {', '.join(sorted(held))}"
            )

    def _holds(self, name: str) -> bool:
        held = self.dtypes()
        return held is None or name in held

    def _as_index(self, op: str, out: Any, index: str) -> Any:
        """``op``'s index result (``argmax``'s, ``nonzero``'s, the indices and counts of the
        ``unique_*`` functions) in NumPy's index type ``index``, where the library gives its
        own default: the integer arrays of ``out`` cast (a ``unique_*`` result's values kept)."""
        native = self.native_dtype(index)

        def cast(value: Any) -> Any:
            kind = dtype_kind(value.dtype) if hasattr(value, "dtype") else None
            if kind in ("i", "u") and dtype_name(value.dtype) != index:
                return self.xp.astype(value, native)
            return value

        if isinstance(out, (tuple, list)):
            items = list(out)
            keep = 1 if op.startswith("unique_") else 0
            items = items[:keep] + [cast(v) for v in items[keep:]]
            if hasattr(out, "_fields"):
                return type(out)(*items)
            return type(out)(items)
        return cast(out)

    def evaluate(self, out: Any) -> None:
        """Compute ``out``, a variant's result (an array of the library, or a tuple or list of
        them), where the library evaluates lazily (``lazy = True``): override it with the
        library's evaluation (MLX: ``mlx.core.eval(out)``), which raises the errors of the
        computation (MLX's for a singular matrix) inside the variant, where the kit translates
        them to the reference's.  The default does nothing."""

    def synchronize(self, *arrays: Any) -> None:
        """With ``lazy``: the arrays given that are the library's, evaluated
        (:meth:`evaluate`); else nothing (override it for a library with a device-wide or
        per-array wait)."""
        if self.lazy:
            owned = [a for a in arrays if self.owns(a)]
            if owned:
                self.evaluate(owned)

    def device_for(self, target: Target) -> Any:
        """The library's device of ``target``, where its variants put their arguments and
        results; ``None`` (the default): the library's default device, nothing moved.  With
        :attr:`streams`, the default is the namespace's attribute named as the target
        (``mx.cpu``, ``mx.gpu``), which each variant runs inside."""
        return getattr(self.xp, target.name) if self.streams else None

    def where(self, array: Any) -> str | None:
        """The name of the target ``array`` (one of the library's) lives on, with several
        targets (dispatch keys plans by it: override it, cheaply, in a backend with several);
        ``None`` with one target.  The default: the first target's."""
        return self.targets[0].name if len(self.targets) > 1 else None

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        """An array of the library holding ``obj``, in NumPy's dtype for it (lists and scalars
        are read as NumPy reads them); a dtype the backend does not hold is a ``TypeError``."""
        return self.make_array(obj, dtype=self.native_dtype(dtype))

    def make_array(
        self, obj: Any, *, dtype: Any = None, device: Any = None, copy: bool | None = None
    ) -> Any:
        """The library's array of ``obj`` (host data, a Python scalar or list, or the library's
        own array), made with ``xp.asarray``: every array the kit makes goes through here.

        ``dtype`` is the library's dtype, or ``None``: NumPy's dtype for host data (lists and
        scalars are read as NumPy reads them), and the library's own arrays' dtype, passed to
        the library explicitly, since a library may otherwise pick its own (MLX makes float32
        of float64 data).  A dtype the backend does not hold is a ``TypeError``.
        ``device`` is the library's device (``None``: its default, nothing passed); ``copy``
        the standard's.  Override it where the library makes arrays otherwise (another
        function, no ``copy=``), calling ``super().make_array`` for what stays the same."""
        if dtype is None and self.owns(obj):
            dtype = obj.dtype  # its own, said: a copy keeps it
        elif dtype is None:
            if not hasattr(obj, "dtype"):
                import numpy as np

                obj = np.asarray(obj)  # NumPy's dtype for lists and scalars, as the reference
            try:
                dtype = self.native_dtype(dtype_name(obj.dtype))
            except (TypeError, ValueError):
                dtype = None  # a dtype the library lacks or Prism cannot name: its verdict
        self._check_held("asarray", dtype_name(dtype if dtype is not None else obj.dtype))
        kwargs: dict[str, Any] = {"dtype": dtype, "copy": copy}
        if device is not None:
            kwargs["device"] = device
        return self.xp.asarray(obj, **kwargs)

    def to_numpy(self, array: Any) -> Any:
        """A writable NumPy array with the contents of ``array`` (a copy where the library's
        view of its memory is read-only).  An array without ``__array__`` (ndonnx's), which
        ``numpy.asarray`` would wrap in a 0-d object array, is read through DLPack; one that
        NumPy cannot read either way is a ``TypeError`` saying to override this method."""
        import numpy as np

        out = np.asarray(array)
        if out.dtype == object and out.ndim == 0 and out.item() is array:
            try:
                out = np.from_dlpack(array)
            except (AttributeError, BufferError, TypeError, ValueError, RuntimeError) as exc:
                raise TypeError(
                    f"to_numpy: NumPy reads a {type(array).__module__}.{type(array).__name__} "
                    f"neither through __array__ nor through DLPack ({describe_exception(exc)}); "
                    f"override {type(self).__name__}.to_numpy to convert it"
                ) from exc
        return out if out.flags.writeable else out.copy()

    def from_dlpack(self, obj: Any) -> Any:
        """``obj`` as the library's array: shared through DLPack where :attr:`transfer` is
        ``"dlpack"`` and the library takes it, else copied (``asarray(obj, copy=True)``)."""
        if self.transfer == "dlpack":
            try:
                return self.xp.from_dlpack(obj)
            except (BufferError, TypeError, ValueError, RuntimeError):
                pass  # byte-swapped, read-only or otherwise unexportable: copied below
        return self.make_array(obj, copy=True)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        return self.xp.empty(tuple(shape), dtype=self.native_dtype(dtype))

    # -- the variants ---------------------------------------------------------------------------
    def provides(self, op: str) -> bool:
        """Whether this backend has a variant of ``op``: an op of the standard, one it
        overrides, and ``to_numpy``."""
        return op in STANDARD or op in self.overrides or op == "to_numpy"

    def variants(self, ops: Collection[str] | None = None) -> list[Variant]:
        """A variant of each op it :meth:`provides` (of those in ``ops``: the ops the
        installed prism-core declares) on each target; nothing is imported."""
        out: list[Variant] = []
        first = self.targets[0]
        several = len(self.targets) > 1
        for op in sorted(STANDARD | set(self.overrides) | {"to_numpy"}):
            if ops is not None and op not in ops:
                continue
            can_run = self._can_run(op)
            for target in self.targets:
                name = f"{self.name}.{op}" if target is first else f"{self.name}.{target.name}.{op}"
                placement = self.placement(op, target) if several else None
                out.append(
                    Variant(
                        op,
                        self._lazy(op, target),
                        backend=self.name,
                        requires=dict(target.requires),
                        priority=target.priority,
                        can_run=can_run,
                        placement=placement,
                        name=name,
                    )
                )
        return out

    def _can_run(self, op: str) -> CanRun | None:
        """The op's ``can_run``: its :attr:`declines`, and its :attr:`excludes` as a
        :class:`Decline`, asked in that order; for an op of :attr:`lacks`, a decline of every
        call, saying so (what asks only ``can_run``, as the conformance suite does, then
        skips it as dispatch does, rather than calling a function the namespace lacks)."""
        lacking = self.missing(op) if op in self.lacks else None
        if lacking is not None:

            def lacks(*args: Any, **kwargs: Any) -> str:
                return lacking

            lacks.__name__ = lacks.__qualname__ = f"lacks[{op}]"
            return lacks
        declined = self.declines.get(op)
        excluded = self.excludes.get(op)
        if not excluded:
            return declined
        if isinstance(excluded, str):
            raise TypeError(f"excludes[{op!r}]: a collection of dtype names, not one string")
        names = ", ".join(sorted(excluded))
        check = Decline(
            f"{self.name}.{op} does not compute {names} accurately", dtypes=frozenset(excluded)
        )
        if declined is None:
            return check

        def both(*args: Any, **kwargs: Any) -> bool | str:
            verdict = declined(*args, **kwargs)
            return check(*args, **kwargs) if verdict is True else verdict

        both.__name__ = both.__qualname__ = f"declines[{op}]"
        return both

    def _lazy(self, op: str, target: Target) -> Callable[..., Any]:
        """The variant's function: made on its first call (importing the library then)."""
        functions = self._functions
        key = (op, target.name)

        def call(*args: Any, **kwargs: Any) -> Any:
            fn = functions.get(key)
            if fn is None:
                fn = functions[key] = self.function(op, target)
            return fn(*args, **kwargs)

        call.__name__ = call.__qualname__ = op.rpartition(".")[2]
        # Dispatch asks it once the backend is available, before choosing the variant.
        setattr(call, "__prism_missing__", functools.partial(self.missing, op))  # noqa: B010
        return call

    def missing(self, op: str) -> str | None:
        """Why the namespace cannot run ``op``: it lacks the standard's function (or, for an op
        of :attr:`adapts`, the library's function the adapter calls), or :attr:`lacks` names
        ``op``; ``None`` when it has it, or ``op`` is overridden.  Never imports anything: with
        the namespace not imported yet, only :attr:`lacks` answers.  Dispatch skips such a
        variant with this reason, and ``explain`` shows it."""
        if op in self.overrides or op in ("to_numpy", "asarray"):
            return None
        if op == "from_dlpack" and self.transfer != "dlpack":
            return None  # a copy, made with asarray
        names = adapters.needs(self.adapts, op) or (STANDARD_NAMES.get(op, op),)
        if op in self.lacks:
            return (
                f"{self.namespace} has no {names[0]} (the standard's function for {op}); "
                f"{self.name} cannot run it"
            )
        xp = self._xp if self._xp is not None else sys.modules.get(self.namespace)
        if xp is None:
            return None
        for name in names:
            found: Any = xp
            for part in name.split("."):
                found = getattr(found, part, None)
                if found is None:
                    what = (
                        f"the standard's function for {op}"
                        if name == STANDARD_NAMES.get(op, op)
                        else f"which the kit's {op} calls (adapts)"
                    )
                    return f"{self.namespace} has no {name} ({what}); {self.name} cannot run it"
        return None

    def placement(self, op: str, target: Target) -> CanRun:
        """The ``placement`` of ``op``'s variant on ``target`` (with several targets): data stays
        where it is, so a target takes the calls whose arrays of this library live on it (with
        :attr:`streams`, every target), and an accelerator also takes host data where the
        caller named a device.  Override it to
        say so in your library's words."""
        default = target is self.targets[0]
        prefix = self.name if default else f"{self.name}.{target.name}"

        def can_run(*args: Any, **kwargs: Any) -> bool | str:
            here = False
            for a in array_arguments(args, kwargs):
                if self.owns(a) and self.streams:
                    here = True  # in the memory every target computes on
                elif self.owns(a):
                    where = self.where(a) or self.targets[0].name
                    if where != target.name:
                        other = next(t for t in self.targets if t.name == where)
                        elsewhere = (
                            self.name if other is self.targets[0] else f"{self.name}.{where}"
                        )
                        return f"the data is on {where}; {elsewhere}.{op} runs it there"
                    here = True
            if default or here:
                return True
            from prism_core.kernel.dispatch.scope import current_scope

            if current_scope().device is not None:
                return True  # the caller named the device: host data goes there
            return (
                f"the data is in host memory and no device is named; {prefix.split('.')[0]}."
                f"{op} runs it there (name the device with prism.device(...) to move it)"
            )

        can_run.__name__ = can_run.__qualname__ = f"on_{target.name}[{op}]"
        return can_run

    def function(self, op: str, target: Target | None = None) -> Callable[..., Any]:
        """The function the variant of ``op`` on ``target`` runs: the override or the
        namespace's function, with Prism's semantics around it (the module docstring)."""
        target = target or self.targets[0]
        base = self._base(op)
        device = self.device_for(target)
        stream, device = (device, None) if self.streams else (None, device)
        record = record_of(op)  # what NumPy does that the library may not
        sequence = bool(record.promoted) and set(record.promoted) <= set(record.sequences)
        promoted = None if sequence or not record.promoted else record.promoted
        widened = record.widened
        elementwise = op in ELEMENTWISE
        creation = record.creation is not None
        values = value_parameters(record) if record.creation == "values" else (0, ())
        has_dtype = creation or record.dtype_keyword
        cast = op == "astype"  # its dtype is positional
        positional = record.numpy_positional
        container = container_type(record)
        lazy = self.lazy and op != "to_numpy"  # its result is NumPy's
        # NumPy's defaults where the library's differ (used where the backend holds them:
        # asked per call, as what a backend holds may change with its settings, JAX's x64).
        defaults = {
            kind: numpy
            for kind, numpy in NUMPY_DEFAULTS.items()
            if self.default_dtypes.get(kind, numpy) != numpy
        }
        index = defaults.pop("index", None) if record.index_result else None
        defaults.pop("index", None)
        backend = self

        def run(*args: Any, **kwargs: Any) -> Any:
            given, keywords = args, kwargs
            if positional is not None and len(args) > positional[0]:
                at, keyword = positional
                if keyword in kwargs:
                    raise TypeError(f"{op}() got multiple values for argument {keyword!r}")
                args, kwargs = (*args[:at], *args[at + 1 :]), {**kwargs, keyword: args[at]}
            # The library's reading of device= is its verdict (the reference knows only host
            # memory, so its error would not say what the library takes): not asked below.
            where = backend.creation_device(kwargs.get("device"), device) if creation else None
            try:
                if has_dtype and kwargs.get("dtype") is not None:
                    kwargs = {**kwargs, "dtype": backend._held_dtype(op, kwargs["dtype"])}
                elif cast and len(args) > 1:
                    args = (args[0], backend._held_dtype(op, args[1]), *args[2:])
                if creation:
                    # None is the library's default device: not passed, so that a namespace
                    # whose creation functions take no device= (CuPy's) creates there.
                    kwargs = {k: v for k, v in kwargs.items() if k != "device"}
                    if where is not None:
                        kwargs["device"] = where
                    if defaults and kwargs.get("dtype") is None:
                        wanted = defaults.get(default_kind(record, values, args, kwargs) or "")
                        if wanted is not None and backend._holds(wanted):
                            kwargs["dtype"] = backend.native_dtype(wanted)
                else:
                    if kwargs.get("device", 0) is None:  # astype's: the default, not passed
                        kwargs = {k: v for k, v in kwargs.items() if k != "device"}
                    if device is not None:
                        args, kwargs = backend.place(args, kwargs, device)
                if (
                    elementwise
                    and args
                    and type(args[0]) in SCALARS
                    and not any(hasattr(a, "dtype") for a in args[1:])
                ):  # Python scalars alone: the first as an array
                    args = (backend.make_array(args[0], device=device), *args[1:])
                early = widened == "float" and all(hasattr(a, "dtype") for a in args)
                if early:
                    # Each array to its own float first, as NumPy picks the loop: atan2 of
                    # int8 and uint8 is float16, not int16's float32.  (A Python scalar
                    # promotes first: atan2(int8 array, 2.5) is float64.)
                    args = backend._widen(op, args, "float")
                if promoted is not None:
                    args = backend.promote(op, args, promoted)
                if widened is not None and not early and kwargs.get("dtype") is None:
                    args = backend._widen(op, args, widened)
                elif sequence and args and isinstance(args[0], (list, tuple)):
                    items = backend.promote(op, tuple(args[0]), range(len(args[0])))
                    args = (list(items), *args[1:])
                out = base(*args, **kwargs)
                if index is not None and backend._holds(index):
                    out = backend._as_index(op, out, index)
                if container is not None and type(out) is not container:
                    out = container(*out) if hasattr(container, "_fields") else container(out)
                if lazy:
                    backend.evaluate(out)  # the library's errors raised here, translated below
                return out
            except Exception as exc:
                error = backend.reference_error(op, exc, given, keywords)
                if error is exc:
                    raise
                raise error from exc

        run.__name__ = run.__qualname__ = op.rpartition(".")[2]
        run.__doc__ = f"{op} on {self.name} ({self.namespace})"
        if stream is None:
            return run

        @functools.wraps(run)
        def on_stream(*args: Any, **kwargs: Any) -> Any:
            with backend.xp.stream(stream):  # evaluated inside too: lazy results run there
                return run(*args, **kwargs)

        return on_stream

    def _base(self, op: str) -> Callable[..., Any]:
        override = self.overrides.get(op)
        if override is not None:
            if isinstance(override, str):
                module, _, attribute = override.partition(":")
                found: Any = importlib.import_module(module)
                for part in attribute.split("."):
                    found = getattr(found, part)
                return found  # type: ignore[no-any-return]
            return override
        if op == "to_numpy":
            return self.to_numpy
        if op == "asarray":
            return self._asarray
        if op == "from_dlpack" and self.transfer != "dlpack":
            return self._copied
        found = self.xp  # imported now, so that missing() can tell
        why = self.missing(op)
        if why is not None:
            raise NotImplementedError(why)
        adapter = adapters.adapted(self.adapts, op, found)
        if adapter is not None:
            return adapter
        for part in STANDARD_NAMES.get(op, op).split("."):
            found = getattr(found, part)
        return found  # type: ignore[no-any-return]

    def _asarray(
        self, obj: Any, /, *, dtype: Any = None, device: Any = None, copy: bool | None = None
    ) -> Any:
        return self.make_array(obj, dtype=dtype, device=device, copy=copy)

    def _copied(self, x: Any, /, *, device: Any = None, copy: bool | None = None) -> Any:
        """The standard's ``from_dlpack`` of a backend whose ``transfer`` is ``"copy"``: a
        copy (the library's ``from_dlpack`` is what such a backend must not call)."""
        if copy is False:
            raise ValueError(f"copy: {self.name} copies what it takes (its transfer is 'copy')")
        return self.make_array(x, device=device, copy=True)

    def creation_device(self, given: Any, device: Any) -> Any:
        """What a creation function passes as ``device=`` for the caller's ``given`` on a
        target whose device is ``device``: the library's own device objects as given, else
        the target's (``None``: nothing is passed, the library's default)."""
        kind, value = requested_device(given)
        if kind == "native":
            return value
        return device

    def place(self, args: tuple[Any, ...], kwargs: dict[str, Any], device: Any) -> Any:
        """``(args, kwargs)`` with every array on ``device``, a target's (host data, and the
        library's arrays elsewhere, moved with ``xp.asarray(value, device=device)``)."""

        def move(value: Any) -> Any:
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                return self.xp.asarray(value, device=device)
            if type(value) in (list, tuple) and any(hasattr(v, "dtype") for v in value):
                return type(value)(move(v) for v in value)
            return value

        return tuple(move(a) for a in args), {k: move(v) for k, v in kwargs.items()}

    def promote(self, op: str, args: tuple[Any, ...], positions: Iterable[int]) -> Any:
        """``args`` with the arrays at ``positions`` cast to NumPy's result type where the
        library could promote otherwise: mixed dtypes, or a Python scalar of a kind the
        array's dtype does not hold (``int32_array + 1.5`` is float64 in NumPy).  Asked before
        every call of the binary ops (``add``, ``matmul``, ``where``'s two values, ...) and of
        ``concat`` and ``stack`` (``positions``: every item).

        Library dtypes are compared only with each other (never with ``None`` or another
        library's: MLX refuses ``dtype == None``).  Override it where the library's promotion
        is already NumPy's (return ``args``), or to add a rule of its own."""
        promoted = promoted_dtype(args, positions)
        if promoted is None:
            return args
        name, places = promoted
        self._check_held(op, name)
        native = self.native_dtype(name)
        out = list(args)
        for i in places:
            if hasattr(out[i], "dtype") and out[i].dtype != native:
                out[i] = self.xp.astype(out[i], native)
        return tuple(out)

    # -- caller mistakes ------------------------------------------------------------------------
    def reference_error(
        self, op: str, exc: Exception, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Exception:
        """What to raise for ``exc``, raised by the library on this call: the reference's
        exception where the reference raises a caller's error on the same arguments (on the
        host); ``exc`` itself where the reference has no verdict; and a ``RuntimeError``, the
        backend's failure, where the reference computes the call."""
        return caller_error(self.name, op, exc, args, kwargs, self._on_host)

    def _on_host(self, value: Any) -> Any:
        """An argument as the reference takes it: the library's arrays as NumPy's."""
        if self.owns(value):
            return self.to_numpy(value)
        if type(value) in (list, tuple):
            return type(value)(self._on_host(v) for v in value)
        return value
