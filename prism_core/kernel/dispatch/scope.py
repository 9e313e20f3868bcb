"""Scopes: what the caller asked for (device, backend, policy), held in a ``ContextVar`` (right
across threads and asyncio tasks; ``with`` blocks restore them on exceptions).  Scopes are
interned, one object per combination, so that plan keys hash them by identity.
"""

from __future__ import annotations

import contextvars
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.errors import PrismError, did_you_mean

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op

__all__ = [
    "DeviceNotPresentError",
    "Scope",
    "ScopeBlock",
    "checked_backend",
    "choosing",
    "current_scope",
    "device",
    "innermost_block",
    "present_device",
    "resolved_device",
    "set_backend",
    "use_backend",
    "use_numpy_backend",
]

POLICIES = ("performance", "reference")
#: What ``choosing(check_errors=...)`` takes: read the status NumPy's errors come from, or not.
CHECK_ERRORS = ("raise", "deferred")


class DeviceNotPresentError(PrismError, LookupError):
    """A device was named that is not present on this host (and simulation was not asked)."""

    __module__ = "prism_core"

    def __str__(self) -> str:
        return str(self.args[0])


class Policy(Protocol):
    """An execution policy as a scope holds it (``prism_core.ExecutionPolicy``)."""

    def describe(self) -> str: ...
    def as_dict(self) -> dict[str, object]: ...


class Split(Protocol):
    """What a scope splits (``prism_core.pipelines.splitting()``), as dispatch sees it."""

    def runner_for(self, op: Op) -> Callable[..., object] | None:
        """The function every call of ``op`` runs instead of its variants, or ``None`` where
        this split leaves ``op`` alone."""
        ...

    def describe(self) -> str: ...
    def as_dict(self) -> dict[str, object]: ...


class Scope:
    """An interned combination of device, simulation, backend, preference and strictness."""

    __module__ = "prism_core"
    __slots__ = (
        "__weakref__",
        "backend",
        "check_errors",
        "device",
        "device_asked",
        "execution",
        "prefer",
        "simulated",
        "split",
        "strict",
    )

    device: DeviceDescription | None
    #: How the device was asked for where that was a spelling (:func:`resolved_device`).
    device_asked: str | None
    simulated: bool
    backend: str | None
    prefer: str
    strict: bool
    #: ``"raise"`` or ``"deferred"``: :func:`choosing`.
    check_errors: str
    #: The execution policy in force (``execution_policy()``), or ``None``: speed.
    execution: Policy | None
    #: What this scope splits (``prism_core.pipelines.splitting()``), or ``None``.
    split: Split | None

    def __init__(self, *args: object) -> None:
        raise TypeError("scopes are made with prism_core.device(), use_backend() and choosing()")

    @classmethod
    def _make(cls, **fields: Any) -> Scope:
        """The one scope of ``fields`` (every one of :data:`_FIELDS`)."""
        key = tuple(_fingerprint(fields[n]) if n == "device" else fields[n] for n in _FIELDS)
        with _lock:
            scope = _interned.get(key)
            if scope is None:
                scope = object.__new__(cls)
                for name in _FIELDS:
                    setattr(scope, name, fields[name])
                _interned[key] = scope
        return scope

    def replace(self, **changes: object) -> Scope:
        fields = {name: getattr(self, name) for name in _FIELDS}
        if "device" in changes:
            fields["device_asked"] = None  # another device is not the spelling this was asked by
        return Scope._make(**{**fields, **changes})

    @property
    def automatic(self) -> bool:
        """True when neither a device nor a backend was named: fallback is allowed."""
        return self.device is None and self.backend is None and not self.strict

    def as_dict(self) -> dict[str, object]:
        return {
            "device": self.device.device_type if self.device else None,
            "device_asked": self.device_asked,
            "simulated": self.simulated,
            "backend": self.backend,
            "prefer": self.prefer,
            "strict": self.strict,
            "automatic": self.automatic,
            "execution_policy": None if self.execution is None else self.execution.as_dict(),
            "split": None if self.split is None else self.split.as_dict(),
            "check_errors": self.check_errors,
        }

    def __repr__(self) -> str:
        device, asked = self.device, self.device_asked
        parts = [
            "" if device is None else f"device={device.device_type!r}",
            " (simulated)" if device is not None and self.simulated else "",
            f" asked={asked!r}" if device is not None and asked is not None else "",
            f" backend={self.backend!r}" if self.backend else "",
            f" prefer={self.prefer!r}" if self.prefer != "performance" else "",
            " strict" if self.strict else "",
            f" check_errors={self.check_errors!r}" if self.check_errors != "raise" else "",
            "" if self.execution is None else f" policy={self.execution.describe()!r}",
            "" if self.split is None else f" split={self.split.describe()!r}",
        ]
        return f"<Scope {''.join(parts).strip() or 'automatic'}>"


#: What makes a scope (its interning key holds them, the device by its content).
_FIELDS = tuple(name for name in Scope.__slots__ if name != "__weakref__")
_lock = threading.Lock()
#: Interned scopes, held only while something uses them (a ``with`` block, a plan's key): scopes
#: of descriptions loaded again must not pile up.
_interned: weakref.WeakValueDictionary[tuple[object, ...], Scope] = weakref.WeakValueDictionary()
_fingerprints: weakref.WeakKeyDictionary[DeviceDescription, tuple[str, str]] = (
    weakref.WeakKeyDictionary()
)


def _fingerprint(device: DeviceDescription | None) -> tuple[str, str] | None:
    """A description's identity by content: a description loaded again, with the same content,
    gets the scope of the first (their decisions are the same)."""
    if device is None:
        return None
    found = _fingerprints.get(device)
    if found is None:
        import hashlib
        import json

        content = [device.to_dict(), list(device.lineage), str(device.path), device.origin]
        text = json.dumps(content, sort_keys=True, default=str)
        found = (device.device_type, hashlib.sha256(text.encode()).hexdigest())
        _fingerprints[device] = found
    return found


#: The scope in force; ``None`` means the process default.
SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("prism_scope", default=None)
_default: list[Scope] = []


def _process_default() -> Scope:
    if not _default:
        plain = {"simulated": False, "prefer": "performance", "strict": False}
        _default.append(Scope._make(**{**dict.fromkeys(_FIELDS), **plain, "check_errors": "raise"}))
    return _default[0]


def current_scope() -> Scope:
    """The scope in force in this thread or task."""
    return SCOPE.get() or _process_default()


class _Frame:
    """One entry into a scope block: the scope it replaced, the frame below it, and whether its
    block ended out of order."""

    __slots__ = ("below", "ended", "previous")

    def __init__(self, previous: Scope | None, below: _Frame | None) -> None:
        self.previous = previous
        self.below = below
        self.ended = False


#: The innermost scope block entered in this context: a block ended out of order (a generator
#: suspended inside one, closed elsewhere) never touches a scope that is not its own.
_BLOCK: contextvars.ContextVar[_Frame | None] = contextvars.ContextVar(
    "prism_scope_block", default=None
)


def innermost_block() -> _Frame | None:
    """The frame of the innermost ``with`` block in force in this context (``None``: none):
    a stage compares it with its own to know whether its block is the innermost."""
    return _BLOCK.get()


def _describe(value: object) -> str:
    return f"{value!r} ({type(value).__name__})"


class ScopeBlock:
    """What :func:`device`, :func:`use_backend` and :func:`choosing` return: a context manager
    whose ``with`` puts their (checked) changes in force on top of the scope in force there, and
    gives that scope to ``as``; reentrant.  A block ending out of order (a generator closed
    while its consumer's block is open, or in another context) leaves the scope in force alone,
    and is skipped when the block above it ends."""

    __slots__ = ("_changes", "_frames")

    def __init__(self, changes: dict[str, object]) -> None:
        self._changes = changes
        self._frames: list[_Frame] = []

    def __enter__(self) -> Scope:
        scope = current_scope().replace(**self._changes)
        frame = _Frame(SCOPE.get(), _BLOCK.get())
        self._frames.append(frame)
        SCOPE.set(scope)
        _BLOCK.set(frame)
        return scope

    def __exit__(self, *exc_info: object) -> None:
        top = _BLOCK.get()
        frame = top if top in self._frames else self._frames[-1]
        self._frames.remove(frame)
        if top is not frame:  # out of order: mark it, so that the block above skips it
            frame.ended = True
            return
        while frame.below is not None and frame.below.ended:
            frame = frame.below  # blocks that ended out of order underneath are done too
        SCOPE.set(frame.previous)
        _BLOCK.set(frame.below)


def checked_backend(name: str) -> str:
    """The name of the backend ``name`` names (an alias gives the backend's own name), after
    checking that it is installed and available here."""
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    backend = ps.backend(name)  # PluginError naming close matches
    availability = backend.availability()
    if not availability:
        shown = repr(name) if name == backend.name else f"{name!r} ({backend.name!r})"
        raise PrismError(
            f"backend {shown} was asked for but is not available here: {availability.reason}"
        )
    return backend.name


def device(name: object, *, simulate: bool = False) -> ScopeBlock:
    """Run what follows on ``name``: a device type, a family such as ``"nvidia.hopper"``, a
    description, a present ``DeviceInstance``, or a spelling users type (``"cpu"``, ``"cuda:1"``,
    ``"gpu"``, ``torch.device``, a jax device: :func:`resolved_device`), which means the present
    device of that kind (the scope and ``explain`` say which: ``device_asked``).

    The device must be present on this host unless ``simulate=True``: selection then behaves as
    on that device, execution falls back to the reference backend, and every decision records
    that it was simulated.  Naming a device is strict: a failing variant raises.  The device is
    looked up when ``device()`` is called; ``with`` puts the scope in force.
    """
    if not isinstance(simulate, bool):
        raise TypeError(f"device(): simulate must be True or False, got {_describe(simulate)}")
    desc, asked = resolved_device(name, "device(): name")
    if not simulate and asked is None:
        desc = present_device(desc)
    return ScopeBlock({"device": desc, "simulated": simulate, "device_asked": asked})


def resolved_device(device: object, caller: str) -> tuple[DeviceDescription, str | None]:
    """The description ``device`` names (a device type or family, a description, a present
    ``DeviceInstance``), and ``None``; or, for a spelling (``"cpu"``, ``"cuda:1"``,
    ``torch.device``: ``contract.device_argument.spelled_device``), the present device of that
    kind, in ``present_devices()`` order, and which it is (``"'cuda': GPU 0, NVIDIA H100 PCIe
    (nvidia.h100-pcie)"``).  :class:`DeviceNotPresentError` where none such is present, naming
    what ``caller`` (``"to_device(): device"``) may be; ``UnknownDeviceError`` or ``TypeError``
    for what is neither."""
    from prism_core.kernel.contract.device_argument import DEVICE_SPELLINGS, spelled_device
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.errors import UnknownDeviceError

    takes = (
        f"{caller} may be a device type such as 'nvidia.h100-sxm', a family such as "
        f"'nvidia.hopper', a DeviceDescription, a present DeviceInstance, or {DEVICE_SPELLINGS}"
    )
    if isinstance(device, DeviceDescription):
        return device, None
    inner = getattr(device, "description", None)
    if isinstance(inner, DeviceDescription) and isinstance(getattr(device, "index", None), int):
        return inner, None
    spelled = spelled_device(device)
    if spelled is None:
        if not isinstance(device, str):
            raise TypeError(f"{takes}; got {_describe(device)}".replace(" may be ", " must be ", 1))
        lib = default_library()
        if device not in lib:
            raise UnknownDeviceError(device, sorted(d.device_type for d in lib), accepted=takes)
        return lib.get(device), None
    from prism_core.kernel.host import present_devices

    kind, index = spelled
    present = present_devices().devices
    same = [d for d in present if d.description.kind == kind]
    word = kind.upper() if len(kind) <= 3 else kind  # CPU, GPU, NPU, TPU; accelerator
    if len(same) <= (index or 0):
        here = ", ".join(d.device_type for d in present) or "none"
        if not same:
            why = f"means a{'n' if word[0].upper() in 'AEIO' else ''} {word}, and none is present"
        else:
            plural = "s" if len(same) > 1 else ""
            why = f"means {word} {index}, and this host has {len(same)} {word}{plural}"
        raise DeviceNotPresentError(f"device {device!r} {why} (present: {here}); {takes}")
    found = same[index or 0]
    where = found.description.device_type
    if kind == "cpu" and len(same) == 1:
        return found.description, f"{device!r}: the host CPU ({where})"
    return found.description, f"{device!r}: {word} {index or 0}, {found.name} ({where})"


def present_device(desc: DeviceDescription) -> DeviceDescription:
    from prism_core.kernel.host import present_devices

    found = present_devices()
    for inst in found.devices:
        if inst.description.is_a(desc.device_type):
            return inst.description
    here = ", ".join(i.description.device_type for i in found.devices) or "none"
    raise DeviceNotPresentError(
        f"device {desc.device_type!r} is not present on this host (present: {here}); "
        f"use prism_core.device({desc.device_type!r}, simulate=True) to plan for it without it"
    )


def use_backend(name: str) -> ScopeBlock:
    """Run what follows with the backend ``name`` only (checked when ``use_backend()`` is
    called: installed and available).  Strict: a failure raises."""
    if not isinstance(name, str):
        raise TypeError(
            "use_backend(): name must be a backend name (a string such as 'numpy'); got "
            f"{_describe(name)}; for automatic selection, leave the block out"
        )
    return ScopeBlock({"backend": checked_backend(name)})


def use_numpy_backend() -> ScopeBlock:
    """``use_backend("numpy")``: the reference backend only."""
    return use_backend("numpy")


def choosing(
    *, prefer: str | None = None, strict: bool | None = None, check_errors: str | None = None
) -> ScopeBlock:
    """Change how variants are chosen in what follows (``None`` keeps what is in force).

    :param prefer: ``"performance"`` (default: priority, then the most specific requirements)
        or ``"reference"`` (reference implementations first, for checking results).
    :param strict: ``True``: a failing variant raises instead of falling back; ``False``: off.
    :param check_errors: ``"raise"`` (default: NumPy's errors, such as ``LinAlgError`` for a
        singular matrix, also where reading the library's status waits for the GPU) or
        ``"deferred"`` (variants that can skip that status do: the library's NaN or inf stand
        for the error, and a loop of GPU calls does not wait on each; docs/dispatch.md).
    """
    changes: dict[str, object] = {}
    if check_errors is not None:
        if check_errors not in CHECK_ERRORS:
            hint = did_you_mean(check_errors, CHECK_ERRORS) if isinstance(check_errors, str) else ""
            raise ValueError(
                f"choosing(): check_errors must be one of {', '.join(map(repr, CHECK_ERRORS))} "
                f"(or None to keep the setting in force); got {_describe(check_errors)}{hint}"
            )
        changes["check_errors"] = check_errors
    if prefer is not None:
        if not isinstance(prefer, str):
            raise TypeError(
                f"choosing(): prefer must be one of {', '.join(map(repr, POLICIES))} (or None to "
                f"keep the one in force); got {_describe(prefer)}"
            )
        if prefer not in POLICIES:
            raise ValueError(
                f"prefer={prefer!r} is not a policy{did_you_mean(prefer, POLICIES)}; "
                f"use one of {', '.join(POLICIES)}"
            )
        changes["prefer"] = prefer
    if strict is not None:
        if not isinstance(strict, bool):
            raise TypeError(
                "choosing(): strict must be True or False (or None to keep the setting in force); "
                f"got {_describe(strict)}"
            )
        changes["strict"] = strict
    return ScopeBlock(changes)


def set_backend(name: str | None) -> None:
    """Make ``name`` the process-wide default backend (``None``: automatic selection again);
    scopes entered with ``with`` take precedence where they are in force."""
    if name is not None and not isinstance(name, str):
        raise TypeError(
            "set_backend(): name must be a backend name such as 'numpy', or None for automatic "
            f"selection; got {_describe(name)}"
        )
    if name is not None:
        name = checked_backend(name)
    from prism_core.kernel.dispatch.registry import bump

    _default[:] = [_process_default().replace(backend=name)]
    bump()
