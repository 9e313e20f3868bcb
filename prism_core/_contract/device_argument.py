"""What the ``device=`` argument of a creation function (``zeros``, ``arange``, ...) asks of a
backend, and the check of the backends that create in host memory only (NumPy, SciPy);
``prism_core.backend_kit`` exports both to plugins."""

from __future__ import annotations

from typing import Any

__all__ = ["host_only", "requested_device"]

#: The devices a host-memory backend (NumPy, SciPy) creates on, for its error messages.
_HOST_DEVICES = (
    "None, 'cpu' or Prism's description of a CPU "
    "(prism_core.array_api.__array_namespace_info__().default_device())"
)


def requested_device(device: Any) -> tuple[str, Any]:
    """What the ``device=`` argument of a creation function (``zeros``, ``arange``, ...) asks
    of a backend: ``("default", None)`` for ``None`` (the backend's own default);
    ``("cpu", None)`` for ``"cpu"`` and for Prism's description of a CPU (a
    :class:`~prism_core.hardware.DeviceInstance` or :class:`~prism_core.hardware.DeviceDescription`
    of kind ``cpu``); ``("gpu", instance)`` for Prism's description of any other device (the
    instance's ``index`` says which; a description alone means the first); and
    ``("native", device)`` for anything else: a backend's own device object or name
    (``torch.device("cuda:1")``, ``"cuda"``), which the backend reads itself.

    Dispatch has already chosen the backend by then (a ``device=`` naming an accelerator runs the
    call as ``prism_core.device(...)`` would); the variant only has to honour it."""
    if device is None:
        return "default", None
    if isinstance(device, str) and device == "cpu":
        return "cpu", None
    description = getattr(device, "description", device)
    kind = getattr(description, "kind", None)
    if kind is not None and hasattr(description, "device_type"):
        return ("cpu", None) if kind == "cpu" else ("gpu", device)
    return "native", device


def host_only(op: str, device: Any) -> None:
    """Raise ``ValueError`` unless ``device`` (a creation function's ``device=``) names host
    memory, where NumPy and SciPy create arrays; the message names the op, the device and what
    is accepted."""
    if requested_device(device)[0] not in ("default", "cpu"):
        raise ValueError(
            f"{op}: device={device!r} is not where this backend creates arrays (host memory); "
            f"it takes {_HOST_DEVICES}"
        )
