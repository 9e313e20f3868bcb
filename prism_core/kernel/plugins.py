"""Plugin discovery: builtins by name, third parties through the ``prism.plugins`` entry points.

Each plugin is loaded and its hooks are called on their own, so that one broken plugin (fails to
import, raises in a hook, returns the wrong thing, implements a hook with a wrong signature or a
misspelled name) is recorded and skipped while everything else keeps working.  In strict mode,
or for a plugin the user asked for by name (``PRISM_PLUGINS``), the same failure is an error.
Discovery happens once, on first use (``import prism_core`` imports no plugin).
"""

from __future__ import annotations

import atexit
import importlib
import sys
import threading
import warnings
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, TypeVar

from prism_core.kernel.config import PluginSettings
from prism_core.kernel.contract.backend import Backend, Detection
from prism_core.kernel.description.device_files import add_search_path_provider
from prism_core.kernel.distributions import EntryPoint, entry_points
from prism_core.kernel.errors import PrismError, PrismWarning, debug, did_you_mean, user_stacklevel
from prism_core.kernel.events import PLUGINS, announce
from prism_core.kernel.public import home
from prism_core.kernel.version import __version__

if TYPE_CHECKING:
    import pluggy

    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.description.library import DeviceLibrary
    from prism_core.kernel.description.requirements import RequirementMatch

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "PluginError",
    "PluginRecord",
    "PluginSet",
    "PluginWarning",
    "Unable",
    "forget_plugins",
    "plugins",
    "reload_plugins",
]


ENTRY_POINT_GROUP = "prism.plugins"
#: Builtin plugins, registered by name through the same hooks; they cannot be disabled.
BUILTIN_PLUGINS: Mapping[str, str] = MappingProxyType(
    {"numpy": "prism_core._builtin.numpy_backend"}
)
#: The hooks called at discovery time, in this order.
_DISCOVERY_HOOKS = ("prism_plugin_info", "prism_hardware_dirs", "prism_backends", "prism_variants")
_T = TypeVar("_T")


@home("prism_core.extending")
class PluginWarning(PrismWarning):
    """A plugin failed to load and was skipped, or loaded with problems (warned once)."""


@home("prism_core.extending")
class PluginError(PrismError, RuntimeError):
    """A plugin failed where failure is not allowed (strict mode, or asked for by name)."""

    def __init__(self, message: str, record: PluginRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


@home("prism_core.extending")
@dataclass
class PluginRecord:
    """What discovery did with one plugin, and what the plugin contributed."""

    name: str
    origin: str  # "builtin" or "entry point"
    target: str  # module or object path, e.g. "prism_plugin_x.plugin"
    distribution: str | None = None
    version: str | None = None
    status: str = "pending"  # loaded, failed, blocked, not loaded
    reason: str = ""
    requested: bool = False
    info: dict[str, object] = field(default_factory=dict)
    hardware_dirs: list[Path] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)
    #: What is wrong with a loaded plugin without failing it: variants whose import string
    #: names no module, variants for a backend nobody provides, invalid device files.
    problems: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        dist = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"{self.name}{dist}"

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "origin": self.origin,
            "target": self.target,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "reason": self.reason,
            "requested": self.requested,
            "info": self.info,
            "hooks": list(self.hooks),
            "hardware_dirs": [str(p) for p in self.hardware_dirs],
            "backends": list(self.backends),
            "variants": len(self.variants),
            "problems": list(self.problems),
        }


class _HookFailure(Exception):
    """A plugin's hook raised or returned something wrong; the message says which and why."""


def _check_info(value: object) -> dict[str, object]:
    if not isinstance(value, Mapping):
        raise _HookFailure(f"returned {type(value).__name__}, expected a mapping")
    return {str(k): v for k, v in value.items()}


def _check_dirs(value: object) -> list[Path]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _HookFailure(f"returned {type(value).__name__}, expected a list of paths")
    out = []
    for item in value:
        if not isinstance(item, (str, PathLike)):
            raise _HookFailure(f"returned {item!r} in its list, expected a path")
        path = Path(item)
        if not path.exists():
            raise _HookFailure(f"returned {str(path)!r}, which does not exist")
        out.append(path)
    return out


def _check_backends(value: object) -> list[Backend]:
    if not isinstance(value, Sequence):
        raise _HookFailure(f"returned {type(value).__name__}, expected a list of Backend")
    for item in value:
        if not isinstance(item, Backend):
            raise _HookFailure(
                f"returned {item!r}, expected prism_core.extending.Backend instances (subclass it)"
            )
        if not item.name or not isinstance(item.name, str):
            raise _HookFailure(f"returned the backend {item!r} without a name")
    return list(value)


def _check_variants(value: object) -> list[Variant]:
    from prism_core.kernel.contract.variant import Variant

    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _HookFailure(f"returned {type(value).__name__}, expected a list of variants")
    for item in value:
        if not isinstance(item, Variant):
            raise _HookFailure(
                f"returned {item!r}, expected prism_core.extending.Variant instances"
            )
    return list(value)


def _check_detection(value: object) -> Detection:
    if not isinstance(value, Detection):
        raise _HookFailure(
            f"returned {type(value).__name__}, expected prism_core.extending.Detection"
        )
    return value


def _owns(backend: Backend, value: object) -> bool:
    """``backend.owns(value)``, where a broken ``owns`` counts as no."""
    try:
        return bool(backend.owns(value))
    except Exception:
        return False


@dataclass(frozen=True)
class Unable:
    """What a backend's capability method gave in place of an answer: it raised ``error`` (the
    exception's type).  ``reason`` names the plugin, the backend, the method and the exception;
    falsy, and ``explain()`` says the reason, as a failed ``RequirementMatch`` does."""

    reason: str
    error: str

    def __bool__(self) -> bool:
        return False

    def explain(self) -> str:
        return self.reason


#: What each capability method must return instead of raising (said when one raises).
_CAPABILITIES = MappingProxyType(
    {
        "can_drive": "a RequirementMatch (prism_core.hardware.RequirementMatch(False, (why,)) "
        "for a device it does not drive)",
        "dtypes": "a frozenset of Prism's dtype names, or None for every dtype",
        "settings": "a mapping of setting names to text",
    }
)


def _describe_exception(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


@home("prism_core.extending")
class PluginSet:
    """The plugins of this process: loaded ones, their contributions, and the failures."""

    def __init__(self, settings: PluginSettings | None = None) -> None:
        import pluggy

        from prism_core.kernel.contract import hookspecs

        self.settings = settings or PluginSettings.from_environment()
        self.manager: pluggy.PluginManager = pluggy.PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.backends: dict[str, Backend] = {}
        #: type -> the name of the backend owning arrays of that type (or None): owner()
        self._owners: dict[type, str | None] = {}
        self._detections: dict[str, Detection] | None = None
        #: (backend, method) of each capability method that raised (recorded once each).
        self._unable: set[tuple[str, str]] = set()
        self._discover()
        self._check_contributions()

    # -- discovery ----------------------------------------------------------------------------
    def _discover(self) -> None:
        settings = self.settings
        for name, module in BUILTIN_PLUGINS.items():
            record = PluginRecord(name, "builtin", module, "prism-core", __version__)
            if name in settings.block:
                record.reason = "builtin plugins cannot be blocked; PRISM_BLOCK_PLUGINS ignored"
            self._load(record, partial(importlib.import_module, module))

        found = {}
        for ep in entry_points(ENTRY_POINT_GROUP):
            if ep.name in found or ep.name in BUILTIN_PLUGINS:
                clash = "a builtin plugin" if ep.name in BUILTIN_PLUGINS else "another plugin"
                record = _record_of(ep)
                # Keyed apart from the plugin that owns the name, so neither record is lost.
                self._fail(
                    record,
                    f"the name {ep.name!r} is taken by {clash}; rename the entry point",
                    key=f"{ep.name} [{record.distribution or record.target}]",
                )
                continue
            found[ep.name] = ep

        for name in settings.allow:
            if name not in found and name not in BUILTIN_PLUGINS:
                raise PluginError(
                    f"plugin {name!r} named in PRISM_PLUGINS is not installed"
                    + did_you_mean(name, found, n=1)
                    + f"; installed plugins: {', '.join(sorted(found)) or 'none'}"
                )

        for name in sorted(found):
            ep = found[name]
            record = _record_of(ep)
            record.requested = name in settings.allow
            if name in settings.block:
                record.status, record.reason = "blocked", "named in PRISM_BLOCK_PLUGINS"
            elif not settings.autoload and not record.requested:
                record.status = "not loaded"
                record.reason = (
                    "autoload is off (PRISM_DISABLE_PLUGIN_AUTOLOAD) and it is not in PRISM_PLUGINS"
                )
            elif settings.allow and not record.requested:
                record.status, record.reason = "not loaded", "not named in PRISM_PLUGINS"
            if record.status != "pending":
                self.records[name] = record
                continue
            self._load(record, ep.load)

    def _load(self, record: PluginRecord, load: Callable[[], object]) -> None:
        self.records[record.name] = record
        collected: list[Variant] = []
        try:
            with _loading(record, collected):
                plugin = load()
        except Exception as exc:
            self._fail(record, f"import failed: {_describe_exception(exc)}")
            return
        # Variants registered (``kernel(...)``) while the module was imported belong to this
        # plugin; a module is imported once per process, so they are kept for later discoveries.
        if collected:
            _import_time_variants[record.target] = collected
        else:
            collected = list(_import_time_variants.get(record.target, ()))
        try:
            self.manager.register(plugin, name=record.name)
        except Exception as exc:  # pluggy.PluginValidationError: a signature not in the spec
            self._fail(record, f"invalid hook implementation: {' '.join(str(exc).split())}")
            return
        unknown = [
            hc.name for hc in self.manager.get_hookcallers(plugin) or () if not hc.has_spec()
        ]
        if unknown:
            self.manager.unregister(plugin)
            known = [*_DISCOVERY_HOOKS, "prism_detect_devices"]
            parts = [f"{hook!r}{did_you_mean(hook, known, n=1)}" for hook in unknown]
            self._fail(record, f"implements unknown hook {', '.join(parts)}")
            return
        record.hooks = sorted(hc.name for hc in self.manager.get_hookcallers(plugin) or ())
        during_hooks: list[Variant] = []
        try:
            with _loading(record, during_hooks):  # the hooks in _DISCOVERY_HOOKS's order
                info = self._call(plugin, "prism_plugin_info", _check_info)
                dirs = self._call(plugin, "prism_hardware_dirs", _check_dirs)
                backends = self._call(plugin, "prism_backends", _check_backends) or []
                listed = self._call(plugin, "prism_variants", _check_variants)
            for backend in backends:
                for name in (backend.name, *backend.aliases):
                    taken = self.backend_name(name)
                    if taken is not None:
                        owner = next(r.name for r in self.records.values() if taken in r.backends)
                        what = "a backend named" if name == backend.name else "the alias"
                        raise _HookFailure(
                            f"prism_backends returned {what} {name!r} (backend "
                            f"{backend.name!r}), which plugin {owner!r} already provides"
                            + ("" if taken == name else f" as an alias of {taken!r}")
                        )
        except _HookFailure as exc:
            self.manager.unregister(plugin)
            self._fail(record, str(exc))
            return
        variants = [*collected, *during_hooks, *(listed or [])]
        twice = sorted(n for n, count in Counter(v.name for v in variants).items() if count > 1)
        if twice:
            self.manager.unregister(plugin)
            self._fail(record, f"prism_variants: more than one variant named {', '.join(twice)}")
            return
        for variant in variants:
            variant.source = f"plugin:{record.name}"
        record.info = info or {}
        record.hardware_dirs = dirs or []
        record.variants = variants
        for backend in backends:
            self.backends[backend.name] = backend
            record.backends.append(backend.name)
        record.status = "loaded"
        debug("loaded plugin %s: %s", record.label, ", ".join(record.hooks))

    def _call(
        self, plugin: object, hook: str, check: Callable[[object], _T], **kwargs: object
    ) -> _T | None:
        """One plugin's implementation of ``hook`` called and its result ``check``-ed (``None``
        if it has none)."""
        caller = getattr(self.manager.hook, hook)
        impls = [i for i in caller.get_hookimpls() if i.plugin is plugin]
        if not impls:
            return None
        args = {k: kwargs[k] for k in impls[0].argnames if k in kwargs}
        try:
            value = impls[0].function(**args)
        except Exception as exc:
            raise _HookFailure(f"{hook} raised {_describe_exception(exc)}") from exc
        try:
            return check(value)
        except _HookFailure as exc:
            raise _HookFailure(f"{hook} {exc}") from None

    def _strict(self, record: PluginRecord) -> str | None:
        """Why a failure of ``record``'s plugin is an error, or ``None`` when it is skipped."""
        if self.settings.strict:
            return "strict mode is on (PRISM_STRICT_PLUGINS)"
        if record.requested:
            return "it was asked for by name (PRISM_PLUGINS)"
        return "builtin plugins must load" if record.origin == "builtin" else None

    def _fail(self, record: PluginRecord, reason: str, key: str | None = None) -> None:
        record.status, record.reason = "failed", reason
        self.records[key or record.name] = record
        debug("plugin %s failed: %s", record.label, record.reason)
        why = self._strict(record)
        if why is not None:
            raise PluginError(f"plugin {record.label} failed: {record.reason}; {why}", record)
        _warn_once(f"plugin {record.label} failed and was skipped: {record.reason}")

    # -- a backend's capability methods, which are plugin code --------------------------------
    def drives(self, backend: Backend, device: DeviceDescription) -> RequirementMatch | Unable:
        """``backend.can_drive(device)``, isolated (:meth:`_ask`)."""
        return self._ask(backend, "can_drive", lambda: backend.can_drive(device))

    def held_dtypes(
        self, backend: Backend, device: DeviceDescription | None = None
    ) -> frozenset[str] | Unable | None:
        """``backend.dtypes(device)``, isolated (:meth:`_ask`)."""
        return self._ask(backend, "dtypes", lambda: backend.dtypes(device))

    def backend_settings(self, backend: Backend) -> Mapping[str, str] | Unable:
        """``backend.settings()``, isolated (:meth:`_ask`)."""
        return self._ask(backend, "settings", backend.settings)

    def _ask(self, backend: Backend, method: str, call: Callable[[], _T]) -> _T | Unable:
        """``call()``, a call of ``backend.<method>``, or :class:`Unable` when it raises: the one
        place the kernel calls a backend's capability methods, since they are plugin code.  The
        first failure of each backend and method goes on its plugin's record (``problems``:
        ``prism plugins``, ``prism doctor``) and is warned once; where plugin failures are errors
        (strict mode, a plugin asked for by name, a builtin) it raises :class:`PluginError`."""
        try:
            return call()
        except Exception as exc:
            problem = f"backend {backend.name!r}: {method}() raised {_describe_exception(exc)}"
            record = next((r for r in self.records.values() if backend.name in r.backends), None)
            if record is None:  # not a backend of this set (a set discovered since)
                return Unable(problem, type(exc).__name__)
            with _lock:  # threads racing: the record takes it once
                first = (backend.name, method) not in self._unable
                if first:
                    self._unable.add((backend.name, method))
                    record.problems.append(problem)
            expected = f"{method}() must return {_CAPABILITIES[method]}, never raise"
            why = self._strict(record)
            if why is not None:
                message = f"plugin {record.label} failed: {problem} ({expected}); {why}"
                raise PluginError(message, record) from exc
            if first:
                debug("plugin %s: %s", record.label, problem)
                _warn_once(
                    f"plugin {record.label}: {problem}; its variants are skipped ({expected})"
                )
            return Unable(f"plugin {record.label}: {problem}", type(exc).__name__)

    # -- results ------------------------------------------------------------------------------
    @property
    def loaded(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.status == "loaded"]

    @property
    def failed(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.status == "failed"]

    def fail_loaded(self, record: PluginRecord, reason: str) -> None:
        """Fail a plugin that had loaded (its variants could not join their ops): it
        contributes nothing more, and the failure is handled as at discovery (an error in strict
        mode or when asked for by name, else recorded and warned once)."""
        plugin = self.manager.get_plugin(record.name)
        if plugin is not None:
            self.manager.unregister(plugin)
        for name in record.backends:
            self.backends.pop(name, None)
        record.backends = []
        self._owners.clear()
        self._fail(record, reason)

    def check_device_files(self, library: DeviceLibrary) -> None:
        """Show each loaded plugin's invalid device files on its record (``problems``); a
        plugin with any fails in strict mode or when it was asked for by name."""
        for record in self.loaded:
            found = library.problems_by_origin.get(f"plugin:{record.name}", [])
            for problem in found:
                text = f"invalid device file: {problem}"
                if text not in record.problems:
                    record.problems.append(text)
            if found and (self.settings.strict or record.requested):
                n, files = len(found), "files" if len(found) != 1 else "file"
                listed = "; ".join(str(p) for p in found[:3]) + (" ..." if n > 3 else "")
                self.fail_loaded(record, f"{n} invalid device {files}: {listed}")

    def _check_contributions(self) -> None:
        """Problems of loaded plugins that discovery can see without importing frameworks:
        a variant whose import string names no module, a variant for a backend that no plugin
        provides (with the close match: ``'scpy'``, did you mean ``'scipy'``?)."""
        # Whether a variant's module can be found depends on the module alone: looked for once
        # per module, not once per variant (244 lookups for 6 modules cost 6-12 ms).
        found: set[str] = set()
        for record in self.loaded:
            for variant in record.variants:
                module = variant.fn.partition(":")[0] if isinstance(variant.fn, str) else None
                problem = None if module in found else variant.import_problem()
                if problem is None and module is not None:
                    found.add(module)
                if problem:
                    record.problems.append(f"variant {variant.name}: {problem}")
                if variant.backend not in self.backends:
                    record.problems.append(
                        f"variant {variant.name} is for backend {variant.backend!r}, which no "
                        f"plugin provides{did_you_mean(variant.backend, self.backends)}; "
                        f"backends: {', '.join(sorted(self.backends))}"
                    )
            for problem in record.problems:
                debug("plugin %s: %s", record.label, problem)
            if record.problems and (self.settings.strict or record.requested):
                self._fail(record, "; ".join(record.problems))
            elif record.problems:
                _warn_once(f"plugin {record.label}: " + "; ".join(record.problems))

    def hardware_dirs(self) -> list[tuple[str, Path]]:
        """(plugin name, path) of every contributed device directory, in plugin order."""
        return [(r.name, p) for r in self.loaded for p in r.hardware_dirs]

    def backend_name(self, name: str) -> str | None:
        """The name of the backend called ``name`` or aliased so (``"pytorch"`` -> ``"torch"``),
        or ``None`` when no loaded backend answers to it."""
        if name in self.backends:
            return name
        for backend in self.backends.values():
            if name in backend.aliases:
                return backend.name
        return None

    def backend(self, name: str) -> Backend:
        """The backend called ``name`` (or aliased so); :class:`PluginError` naming close
        matches when there is none."""
        found = self.backend_name(name)
        if found is not None:
            return self.backends[found]
        known = [*self.backends, *(a for b in self.backends.values() for a in b.aliases)]
        raise PluginError(
            f"no backend named {name!r}{did_you_mean(name, known, n=1)}"
            f"; available backends: {', '.join(sorted(self.backends))}"
        ) from None

    def owner(self, value: object) -> Backend | None:
        """The backend whose own array ``value`` is (:meth:`Backend.owns`), or ``None`` (a
        scalar, a list, an array no loaded backend owns).  Decided once per type."""
        kind = type(value)
        try:
            found = self._owners[kind]
        except KeyError:
            found = next((b.name for b in self.backends.values() if _owns(b, value)), None)
            self._owners[kind] = found
        return None if found is None else self.backends.get(found)

    def detect(self, library: DeviceLibrary) -> dict[str, Detection]:
        """Call every loaded plugin's ``prism_detect_devices`` (once per process), isolated."""
        if self._detections is not None:
            return self._detections
        out: dict[str, Detection] = {}
        for record in self.loaded:
            plugin = self.manager.get_plugin(record.name)
            if plugin is None or "prism_detect_devices" not in record.hooks:
                continue
            hook = "prism_detect_devices"
            try:
                value = self._call(plugin, hook, _check_detection, library=library)
            except _HookFailure as exc:
                if self.settings.strict or record.requested:
                    raise PluginError(f"plugin {record.label} failed: {exc}", record) from None
                value = Detection((), f"detection failed: {exc}")
            if value is not None:
                out[record.name] = value
        self._detections = out
        return out


class _Loading(threading.local):
    record: PluginRecord | None = None
    collected: list[Variant] | None = None


#: The plugin this thread is loading (importing it, or calling its discovery hooks).
_tls = _Loading()
#: Variants a plugin module registered while it was imported, by plugin target: the module is
#: not imported again by a later discovery (``reload_plugins``), so they are remembered.
_import_time_variants: dict[str, list[Variant]] = {}
_warned: set[str] = set()


@contextmanager
def _loading(record: PluginRecord, collected: list[Variant]) -> Iterator[None]:
    previous = (_tls.record, _tls.collected)
    _tls.record, _tls.collected = record, collected
    try:
        yield
    finally:
        _tls.record, _tls.collected = previous


def collect_variant(variant: Variant) -> bool:
    """Take ``variant`` for the plugin this thread is loading (``kernel(...)`` called by a
    plugin at import or in a hook); ``False`` when no plugin is loading."""
    collected = _tls.collected
    if collected is None:
        return False
    collected.append(variant)
    return True


def _warn_once(message: str) -> None:
    """A plugin problem, warned once per process, pointing at the user's line."""
    with _lock:
        if message in _warned:
            return
        _warned.add(message)
    warnings.warn(message, PluginWarning, stacklevel=user_stacklevel())


def _record_of(ep: EntryPoint) -> PluginRecord:
    dist = getattr(ep, "dist", None)
    name, version = getattr(dist, "name", None), getattr(dist, "version", None)
    return PluginRecord(ep.name, "entry point", ep.value, name, version)


_current: PluginSet | None = None
# Reentrant: a plugin failing during discovery warns (``_warn_once``) under the same lock.
_lock = threading.RLock()


def forget_plugins() -> None:
    """Drop the plugin set and the plugin warnings already given, without discovering again:
    the next use discovers from the environment as it is then (a test's clean slate)."""
    global _current
    with _lock:
        _current = None
        _warned.clear()


def plugins() -> PluginSet:
    """The plugins of this process, discovered on first call.

    :raises PluginError: called by a plugin while it is being loaded (at import, or from a
        discovery hook), when the plugin set does not exist yet; the loading plugin is then
        recorded as failed with this reason, never left hanging.
    """
    global _current
    current = _current
    if current is None:
        if _tls.record is not None:
            raise PluginError(
                f"plugin {_tls.record.name!r} used Prism's plugin set while being loaded "
                "(for example by calling an op); at discovery time a plugin may only declare "
                "things: return variants from prism_variants, or register them with "
                "prism_core.extending.kernel(...)"
            )
        with _lock:
            if _current is None:
                _current = PluginSet()
                announce(PLUGINS)
            current = _current
    return current


def _shutdown() -> None:
    """``Backend.shutdown`` of each backend of the plugins in use, at interpreter exit; what one
    raises is said on standard error and the others still run."""
    found = _current
    for backend in [] if found is None else list(found.backends.values()):
        try:
            backend.shutdown()
        except Exception as exc:  # a plugin's fault must not stop the exit or the others
            sys.stderr.write(
                f"prism: backend {backend.name!r} failed to shut down: {_describe_exception(exc)}\n"
            )


atexit.register(_shutdown)


def discovering() -> bool:
    """Whether this thread is loading a plugin right now."""
    return _tls.record is not None


def reload_plugins(settings: PluginSettings | None = None) -> PluginSet:
    """Discover plugins again (after installing one, or to apply other settings); the device
    library is loaded again on next use, since plugin directories may differ."""
    global _current
    from prism_core.kernel.description.library import forget_default_library

    with _lock:
        _current = PluginSet(settings)
        forget_default_library()
    announce(PLUGINS)
    return _current


def _plugin_directories() -> list[tuple[Path, str]]:
    return [(path, f"plugin:{name}") for name, path in plugins().hardware_dirs()]


# The plugins' device directories join the default search path (the library, a layer below,
# asks its providers; it never imports this layer).
add_search_path_provider(_plugin_directories)
