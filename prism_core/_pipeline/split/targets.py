"""Where the parts of a split run: each target's names checked, then bound to this host.

A target is a backend name, ``"cpu"`` (the host), a device type or family, or a ``(device,
backend)`` pair.  :func:`parse_target` checks the names, :func:`bind` makes a
:class:`SplitTarget` of them here: the backend available, the device present or simulated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core.kernel.dispatch.scope import DeviceNotPresentError
from prism_core.kernel.errors import PrismError, did_you_mean
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.description.device import DeviceDescription

__all__ = ["SplitTarget", "bind", "parse_target"]


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitTarget:
    """Where a part runs: a backend, a device (present or simulated), or both.

    ``label`` is what the target was given as (``"torch"``, ``"nvidia.h100-pcie"``), with
    ``(simulated)`` when it is.  ``backend`` is the backend named (``None``: the one dispatch
    chooses on the device), ``device`` the device type named (``None``: the backend's own
    choice), ``simulated`` whether the device is simulated (its parts run on the reference
    backend), ``on_host`` whether its parts compute on this host's CPU (they then share its
    cores with the other host parts).
    """

    label: str
    backend: str | None
    device: str | None
    simulated: bool
    on_host: bool
    description: DeviceDescription | None = field(default=None, compare=False, repr=False)

    def changes(self) -> dict[str, Any]:
        """The scope fields this target sets (on top of the caller's, without its split)."""
        return {
            "device": self.description,
            "simulated": self.simulated,
            "backend": self.backend,
            "split": None,
        }

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "backend": self.backend,
            "device": self.device,
            "simulated": self.simulated,
            "on_host": self.on_host,
        }


@dataclass(frozen=True)
class _Parsed:
    """A target as written, its names checked: ``backend`` and ``device`` (a device type, or
    ``"cpu"`` for the host), not yet bound to what is present."""

    label: str
    backend: str | None
    device: str | None


_HOST_NAMES = ("cpu", "host")


def _plugins() -> Any:
    from prism_core.kernel.plugins import plugins

    return plugins()


def _what_exists() -> str:
    from prism_core.kernel.host import present_devices

    ps = _plugins()
    backends = ", ".join(sorted(ps.backends)) or "none"
    present = ", ".join(d.description.device_type for d in present_devices().devices) or "none"
    return (
        f"backends: {backends}; 'cpu' (the host); present devices: {present}; any described "
        "device type with simulate=True"
    )


def parse_target(item: Any, where: str = "target") -> _Parsed:
    """Check the names of one target: a backend name, ``"cpu"``, a device type or family, or a
    ``(device, backend)`` pair.  Presence and availability are checked by :func:`bind`."""
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.errors import UnknownDeviceError

    if isinstance(item, tuple):
        if len(item) != 2 or not all(isinstance(x, str) for x in item):
            raise TypeError(
                f"{where}: a tuple target is a (device, backend) pair of names such as "
                f"('nvidia.h100-sxm', 'torch'); got {item!r}"
            )
        dev = parse_target(item[0], f"{where}[0]")
        if dev.device is None:
            raise ValueError(
                f"{where}[0]: {item[0]!r} is a backend; a tuple is one (device, backend) pair "
                f"(several targets are a list: targets=[{item[0]!r}, {item[1]!r}])"
            )
        back = parse_target(item[1], f"{where}[1]")
        if back.backend is None:
            raise ValueError(
                f"{where}[1]: {item[1]!r} is not a backend here; the pair is (device, backend); "
                f"backends: {', '.join(sorted(_plugins().backends))}"
            )
        return _Parsed(f"{dev.device}/{back.backend}", back.backend, dev.device)
    if not isinstance(item, str):
        raise TypeError(
            f"{where}: a target is a backend name ('numpy', 'torch'), 'cpu', a device type "
            f"('nvidia.h100-sxm') or a (device, backend) pair; got {item!r} "
            f"({type(item).__name__})"
        )
    ps = _plugins()
    backend = ps.backend_name(item)
    if backend is not None:
        return _Parsed(item, backend, None)
    if item in _HOST_NAMES:
        return _Parsed(item, None, "cpu")
    try:
        desc = default_library().get(item)
    except UnknownDeviceError as exc:
        names = [*ps.backends, *_HOST_NAMES]
        hint = did_you_mean(item, names)
        raise ValueError(
            f"{where}: {item!r} is neither a backend nor a device type{hint}. {exc}. "
            f"What exists: {_what_exists()}"
        ) from None
    return _Parsed(item, None, desc.device_type)


def _present_devices() -> list[DeviceDescription]:
    """The descriptions of the devices present here, asked once per reload (``_events``):
    matching the host CPU costs about 0.15 ms, more than a small split."""
    from prism_core.kernel import events as _events
    from prism_core.kernel.host import present_devices

    now = _events.generation()
    cached = _PRESENT[0] if _PRESENT else None
    if cached is not None and cached[0] == now:
        return cached[1]
    found = [inst.description for inst in present_devices().devices]
    _PRESENT[:] = [(now, found)]
    return found


_PRESENT: list[tuple[int, list[DeviceDescription]]] = []


def _host_description() -> DeviceDescription:
    for desc in _present_devices():
        if desc.kind == "cpu":
            return desc
    raise PrismError("no host CPU description matches this host: 'cpu' cannot be a target")


def _present(device_type: str) -> DeviceDescription | None:
    for desc in _present_devices():
        if desc.is_a(device_type):
            return desc
    return None


def bind(parsed: _Parsed, simulate: bool, where: str = "target") -> SplitTarget:
    """The target ``parsed`` on this host: its backend available, its device present, or
    simulated where ``simulate`` allows (``True``: those not present are; ``False``: none is, an
    absent one is an error)."""
    from prism_core.kernel.devices import default_library
    from prism_core.kernel.dispatch.scope import use_backend

    ps = _plugins()
    backend_obj = None
    if parsed.backend is not None:
        use_backend(parsed.backend)  # raises, saying why, when it is not available here
        backend_obj = ps.backends[parsed.backend]
    if parsed.device is None:
        assert backend_obj is not None
        on_host = bool(ps.drives(backend_obj, _host_description()))
        return SplitTarget(parsed.label, parsed.backend, None, False, on_host)
    if parsed.device == "cpu":
        desc: DeviceDescription | None = _host_description()
        simulated = False
    else:
        desc = _present(parsed.device)
        simulated = False
        if desc is None:
            if not simulate:
                raise DeviceNotPresentError(
                    f"{where}: device {parsed.device!r} is not present on this host; "
                    f"{_what_exists()}; pass simulate=True to plan with it (its parts then run "
                    "on the reference backend, labelled simulated)"
                )
            desc = default_library().get(parsed.device)
            simulated = True
    assert desc is not None
    if backend_obj is not None and not simulated:
        drive = ps.drives(backend_obj, desc)
        if not drive:
            raise ValueError(
                f"{where}: backend {parsed.backend!r} cannot run on {desc.device_type} "
                f"({drive.explain()})"
            )
    label = parsed.label + (" (simulated)" if simulated else "")
    on_host = simulated or desc.kind == "cpu"
    return SplitTarget(label, parsed.backend, desc.device_type, simulated, on_host, desc)


def _targets(targets: Any, simulate: bool) -> tuple[SplitTarget, ...]:
    if isinstance(targets, (str, tuple)):
        targets = [targets]
    if not isinstance(targets, (list, Sequence)) or isinstance(targets, (str, bytes)):
        raise TypeError(
            "targets must be a list of targets (backend names, 'cpu', device types, "
            f"(device, backend) pairs); got {targets!r}"
        )
    if not targets:
        raise ValueError(f"targets is empty; name at least one target ({_what_exists()})")
    parsed = [parse_target(t, f"targets[{i}]") for i, t in enumerate(targets)]
    return tuple(bind(p, simulate, f"targets[{i}]") for i, p in enumerate(parsed))


def _host_or_none() -> DeviceDescription | None:
    try:
        return _host_description()
    except PrismError:
        return None
