"""Plugin discovery: builtins by name, third parties through the ``prism.plugins`` entry points.

Each plugin is loaded and its hooks are called on their own, so that one broken plugin (fails to
import, raises in a hook, returns the wrong thing, implements a hook with a wrong signature or a
misspelled name) is recorded and skipped while everything else keeps working.  In strict mode,
or for a plugin the user asked for by name (``PRISM_PLUGINS``), the same failure is an error.

Discovery happens once, on first use (``import prism_core`` imports no plugin).
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prism_core._config import PluginSettings
from prism_core._errors import PrismError
from prism_core._knowledge.backend import Backend, Detection

if TYPE_CHECKING:
    import pluggy

    from prism_core._description.library import DeviceLibrary

__all__ = [
    "BUILTIN_PLUGINS",
    "ENTRY_POINT_GROUP",
    "PluginError",
    "PluginRecord",
    "PluginSet",
    "plugins",
    "reload_plugins",
]

logger = logging.getLogger("prism_core")

ENTRY_POINT_GROUP = "prism.plugins"
#: Builtin plugins, registered by name through the same hooks; they cannot be disabled.
BUILTIN_PLUGINS: Mapping[str, str] = {"numpy": "prism_core.backends.numpy_backend"}
#: The hooks called at discovery time, in this order.
_DISCOVERY_HOOKS = ("prism_plugin_info", "prism_hardware_dirs", "prism_backends", "prism_variants")


class PluginError(PrismError, RuntimeError):
    """A plugin failed where failure is not allowed (strict mode, or asked for by name)."""

    __module__ = "prism_core"

    def __init__(self, message: str, record: PluginRecord | None = None) -> None:
        super().__init__(message)
        self.record = record


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
    info: dict[str, Any] = field(default_factory=dict)
    hardware_dirs: list[Path] = field(default_factory=list)
    backends: list[str] = field(default_factory=list)
    variants: list[Any] = field(default_factory=list)
    hooks: list[str] = field(default_factory=list)

    __module__ = "prism_core"

    @property
    def label(self) -> str:
        dist = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"{self.name}{dist}"

    def as_dict(self) -> dict[str, Any]:
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
        }


class _HookFailure(Exception):
    """A plugin's hook raised or returned something wrong; the message says which and why."""


def _check_info(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _HookFailure(f"returned {type(value).__name__}, expected a mapping")
    return {str(k): v for k, v in value.items()}


def _check_dirs(value: Any) -> list[Path]:
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


def _check_backends(value: Any) -> list[Backend]:
    if not isinstance(value, Sequence):
        raise _HookFailure(f"returned {type(value).__name__}, expected a list of Backend")
    for item in value:
        if not isinstance(item, Backend):
            raise _HookFailure(
                f"returned {item!r}, expected prism_core.Backend instances (subclass it)"
            )
        if not item.name or not isinstance(item.name, str):
            raise _HookFailure(f"returned the backend {item!r} without a name")
    return list(value)


def _check_variants(value: Any) -> list[Any]:
    from prism_core._dispatch.ops import Variant

    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise _HookFailure(f"returned {type(value).__name__}, expected a list of variants")
    for item in value:
        if not isinstance(item, Variant):
            raise _HookFailure(f"returned {item!r}, expected prism_core.Variant instances")
    return list(value)


_CHECKS: Mapping[str, Callable[[Any], Any]] = {
    "prism_plugin_info": _check_info,
    "prism_hardware_dirs": _check_dirs,
    "prism_backends": _check_backends,
    "prism_variants": _check_variants,
}


def _describe_exception(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class PluginSet:
    """The plugins of this process: loaded ones, their contributions, and the failures."""

    __module__ = "prism_core"

    def __init__(self, settings: PluginSettings | None = None) -> None:
        import pluggy

        from prism_core import hookspecs

        self.settings = settings or PluginSettings.from_environment()
        self.manager: pluggy.PluginManager = pluggy.PluginManager(hookspecs.PROJECT)
        self.manager.add_hookspecs(hookspecs)
        self.records: dict[str, PluginRecord] = {}
        self.backends: dict[str, Backend] = {}
        self._detections: dict[str, Detection] | None = None
        # The ops hold one plugin set's variants: those of the newest set built.
        from prism_core._dispatch.ops import remove_variants

        remove_variants(lambda v: v.source.startswith("plugin:"))
        self._discover()

    # -- discovery ----------------------------------------------------------------------------
    def _discover(self) -> None:
        settings = self.settings
        for name, module in BUILTIN_PLUGINS.items():
            record = PluginRecord(name, "builtin", module, "prism-core", _prism_version())
            if name in settings.block:
                record.reason = "builtin plugins cannot be blocked; PRISM_BLOCK_PLUGINS ignored"
            self._load(record, partial(importlib.import_module, module))

        found = {}
        for ep in _entry_points():
            if ep.name in found or ep.name in BUILTIN_PLUGINS:
                clash = "a builtin plugin" if ep.name in BUILTIN_PLUGINS else "another plugin"
                record = _record_of(ep)
                record.status = "failed"
                record.reason = f"the name {ep.name!r} is taken by {clash}; rename the entry point"
                # Keyed apart from the plugin that owns the name, so neither record is lost.
                self._fail(record, key=f"{ep.name} [{record.distribution or record.target}]")
                continue
            found[ep.name] = ep

        for name in settings.allow:
            if name not in found and name not in BUILTIN_PLUGINS:
                known = sorted(found)
                hint = difflib.get_close_matches(name, known, n=1)
                raise PluginError(
                    f"plugin {name!r} named in PRISM_PLUGINS is not installed"
                    + (f" (did you mean {hint[0]!r}?)" if hint else "")
                    + f"; installed plugins: {', '.join(known) or 'none'}"
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

    def _load(self, record: PluginRecord, load: Callable[[], Any]) -> None:
        self.records[record.name] = record
        try:
            plugin = load()
        except Exception as exc:
            record.status, record.reason = "failed", f"import failed: {_describe_exception(exc)}"
            self._fail(record)
            return
        try:
            self.manager.register(plugin, name=record.name)
        except Exception as exc:  # pluggy.PluginValidationError: a signature not in the spec
            record.status = "failed"
            record.reason = f"invalid hook implementation: {' '.join(str(exc).split())}"
            self._fail(record)
            return
        unknown = [
            hc.name for hc in self.manager.get_hookcallers(plugin) or () if not hc.has_spec()
        ]
        if unknown:
            self.manager.unregister(plugin)
            known = [*_DISCOVERY_HOOKS, "prism_detect_devices"]
            parts = []
            for hook in unknown:
                hint = difflib.get_close_matches(hook, known, n=1)
                parts.append(f"{hook!r}" + (f" (did you mean {hint[0]!r}?)" if hint else ""))
            record.status = "failed"
            record.reason = f"implements unknown hook {', '.join(parts)}"
            self._fail(record)
            return
        record.hooks = sorted(hc.name for hc in self.manager.get_hookcallers(plugin) or ())
        try:
            results = {hook: self._call(plugin, hook, {}) for hook in _DISCOVERY_HOOKS}
            backends: list[Backend] = results["prism_backends"] or []
            for backend in backends:
                if backend.name in self.backends:
                    owner = next(
                        r.name for r in self.records.values() if backend.name in r.backends
                    )
                    raise _HookFailure(
                        f"prism_backends returned a backend named {backend.name!r}, which "
                        f"plugin {owner!r} already provides"
                    )
        except _HookFailure as exc:
            self.manager.unregister(plugin)
            record.status, record.reason = "failed", str(exc)
            self._fail(record)
            return
        variants = results["prism_variants"] or []
        try:
            _register_variants(record.name, variants)
        except PrismError as exc:
            self.manager.unregister(plugin)
            record.status, record.reason = "failed", f"prism_variants: {exc}"
            self._fail(record)
            return
        record.info = results["prism_plugin_info"] or {}
        record.hardware_dirs = results["prism_hardware_dirs"] or []
        record.variants = variants
        for backend in backends:
            self.backends[backend.name] = backend
            record.backends.append(backend.name)
        record.status = "loaded"
        logger.debug("loaded plugin %s: %s", record.label, ", ".join(record.hooks))

    def _call(self, plugin: Any, hook: str, kwargs: dict[str, Any]) -> Any:
        """Call one plugin's implementation of ``hook`` (``None`` if it has none)."""
        caller = getattr(self.manager.hook, hook)
        impls = [i for i in caller.get_hookimpls() if i.plugin is plugin]
        if not impls:
            return None
        impl = impls[0]
        args = {k: kwargs[k] for k in impl.argnames if k in kwargs}
        try:
            value = impl.function(**args)
        except Exception as exc:
            raise _HookFailure(f"{hook} raised {_describe_exception(exc)}") from exc
        check = _CHECKS.get(hook)
        if check is None:
            return value
        try:
            return check(value)
        except _HookFailure as exc:
            raise _HookFailure(f"{hook} {exc}") from None

    def _fail(self, record: PluginRecord, key: str | None = None) -> None:
        self.records[key or record.name] = record
        logger.debug("plugin %s failed: %s", record.label, record.reason)
        if self.settings.strict or record.requested or record.origin == "builtin":
            why = (
                "strict mode is on (PRISM_STRICT_PLUGINS)"
                if self.settings.strict
                else "it was asked for by name (PRISM_PLUGINS)"
                if record.requested
                else "builtin plugins must load"
            )
            raise PluginError(f"plugin {record.label} failed: {record.reason}; {why}", record)

    # -- results ------------------------------------------------------------------------------
    @property
    def loaded(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.status == "loaded"]

    @property
    def failed(self) -> list[PluginRecord]:
        return [r for r in self.records.values() if r.status == "failed"]

    def hardware_dirs(self) -> list[tuple[str, Path]]:
        """(plugin name, path) of every contributed device directory, in plugin order."""
        return [(r.name, p) for r in self.loaded for p in r.hardware_dirs]

    def backend(self, name: str) -> Backend:
        try:
            return self.backends[name]
        except KeyError:
            hint = difflib.get_close_matches(name, list(self.backends), n=1)
            raise PluginError(
                f"no backend named {name!r}"
                + (f" (did you mean {hint[0]!r}?)" if hint else "")
                + f"; available backends: {', '.join(sorted(self.backends))}"
            ) from None

    def detect(self, library: DeviceLibrary) -> dict[str, Detection]:
        """Call every loaded plugin's ``prism_detect_devices`` (once per process), isolated."""
        if self._detections is not None:
            return self._detections
        out: dict[str, Detection] = {}
        for record in self.loaded:
            plugin = self.manager.get_plugin(record.name)
            if plugin is None or "prism_detect_devices" not in record.hooks:
                continue
            try:
                value = self._call(plugin, "prism_detect_devices", {"library": library})
                if not isinstance(value, Detection):
                    raise _HookFailure(
                        f"prism_detect_devices returned {type(value).__name__}, expected "
                        "prism_core.Detection"
                    )
            except _HookFailure as exc:
                if self.settings.strict or record.requested:
                    raise PluginError(f"plugin {record.label} failed: {exc}", record) from None
                out[record.name] = Detection((), f"detection failed: {exc}")
                continue
            out[record.name] = value
        self._detections = out
        return out


def _register_variants(plugin: str, variants: list[Any]) -> None:
    """Add a plugin's variants to their ops, all or none."""
    from prism_core._dispatch import catalogue as _catalogue  # noqa: F401  (the builtin ops must exist first)
    from prism_core._dispatch.ops import add_variant, remove_variants

    source = f"plugin:{plugin}"
    try:
        for variant in variants:
            variant.source = source
            add_variant(variant)
    except PrismError:
        remove_variants(lambda v: v.source == source)
        raise


def _prism_version() -> str:
    from prism_core._version import __version__

    return __version__


def _entry_points() -> list[Any]:
    from importlib.metadata import entry_points

    return sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: ep.name)


def _record_of(ep: Any) -> PluginRecord:
    dist = getattr(ep, "dist", None)
    return PluginRecord(
        ep.name,
        "entry point",
        ep.value,
        getattr(dist, "name", None),
        getattr(dist, "version", None),
    )


_current: PluginSet | None = None
_lock = threading.Lock()


def plugins() -> PluginSet:
    """The plugins of this process, discovered on first call."""
    global _current
    current = _current
    if current is None:
        with _lock:
            if _current is None:
                _current = PluginSet()
            current = _current
    return current


def reload_plugins(settings: PluginSettings | None = None) -> PluginSet:
    """Discover plugins again (after installing one, or to apply other settings).

    The device library is loaded again on next use, since plugin directories may differ.
    """
    global _current
    from prism_core._description import library as _library

    with _lock:
        _current = PluginSet(settings)
        _library._default = None
    _library._forget_dispatch_state()
    return _current
