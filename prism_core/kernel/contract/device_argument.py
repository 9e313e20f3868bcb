"""What a creation function's ``device=`` asks of a backend, and the check of the backends that
create in host memory only (NumPy, SciPy), which ``prism_core.backend_kit`` exports; and
:func:`spelled_device`, the spellings users type for a device (``"cuda:1"``, a torch.device)."""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Any

__all__ = ["DEVICE_SPELLINGS", "host_only", "requested_device", "spelled_device"]

#: The spellings of a device present here that Prism takes besides its device types and
#: descriptions, for messages.
DEVICE_SPELLINGS = (
    "'cpu', 'cuda', 'cuda:N', 'gpu', 'gpu:N' (the N-th GPU present), or a library's own device "
    "(a torch.device, a jax device, a cupy.cuda.Device, array_api_strict's CPU_DEVICE)"
)
_SPELLING = re.compile(r"([a-z]+)(?::(\d+))?")
_WORDS = MappingProxyType({"cpu": "cpu", "cuda": "gpu", "gpu": "gpu"})

#: The devices a host-memory backend (NumPy, SciPy) creates on, for its error messages.
_HOST_DEVICES = (
    "None, 'cpu' or Prism's description of a CPU "
    "(prism_core.array_api.__array_namespace_info__().default_device())"
)


def _library_spelling(device: object) -> str | None:
    """A library's device object as the library writes it (``"cuda:1"``, ``"gpu:0"``), read
    without importing the library."""
    module = type(device).__module__.split(".")[0]
    if module == "torch" and type(device).__name__ == "device":
        return str(device)
    if module in ("jax", "jaxlib") and isinstance(kind := getattr(device, "platform", None), str):
        return f"{kind}:{getattr(device, 'id', None)}"
    if module == "cupy" and isinstance(ordinal := getattr(device, "id", None), int):
        return f"cuda:{ordinal}"
    if module == "array_api_strict" and getattr(device, "_device", None) == "CPU_DEVICE":
        return "cpu"  # its other devices pretend to be elsewhere, for testing
    return None


def spelled_device(device: object) -> tuple[str, int | None] | None:
    """The kind of device (a description's ``kind``) and the ordinal among the present devices
    of that kind that a user's spelling means: ``("cpu", None)`` for ``"cpu"``, ``("gpu", 1)``
    for ``"cuda:1"``, ``"gpu:1"`` and ``torch.device("cuda", 1)``, ``("tpu", 0)`` for a jax TPU;
    ``None`` where ``device`` is no such spelling (a device type such as ``"nvidia.h100-sxm"``,
    anything else).  :data:`DEVICE_SPELLINGS` lists them."""
    text = device.strip() if isinstance(device, str) else _library_spelling(device)
    found = None if text is None else _SPELLING.fullmatch(text.lower())
    if found is None or (isinstance(device, str) and found.group(1) not in _WORDS):
        return None
    kind = _WORDS.get(found.group(1), found.group(1))
    return kind, None if found.group(2) is None else int(found.group(2))


def requested_device(device: object) -> tuple[str, Any]:
    """What the ``device=`` argument of a creation function (``zeros``, ``arange``, ...) asks
    of a backend: ``("default", None)`` for ``None`` (the backend's own default);
    ``("cpu", None)`` for ``"cpu"`` (``"cpu:0"``) and for Prism's description of a CPU (a
    :class:`~prism_core.hardware.DeviceInstance` or :class:`~prism_core.hardware.DeviceDescription`
    of kind ``cpu``); ``("gpu", instance)`` for Prism's description of any other device (the
    instance's ``index`` says which; a description alone means the first); and
    ``("native", device)`` for anything else: a backend's own device object or name
    (``torch.device("cuda:1")``, ``"cuda"``), which the backend reads itself.  Dispatch has
    chosen the backend by then (as ``prism_core.device(...)`` would): the variant honours it."""
    if device is None:
        return "default", None
    if isinstance(device, str) and spelled_device(device) in (("cpu", None), ("cpu", 0)):
        return "cpu", None
    description = getattr(device, "description", device)
    kind = getattr(description, "kind", None)
    if kind is not None and hasattr(description, "device_type"):
        return ("cpu", None) if kind == "cpu" else ("gpu", device)
    return "native", device


def host_only(op: str, device: object) -> None:
    """Raise ``ValueError`` unless ``device`` (a creation function's ``device=``) names host
    memory, where NumPy and SciPy create arrays; the message names the op, the device and what
    is accepted."""
    if requested_device(device)[0] not in ("default", "cpu"):
        raise ValueError(
            f"{op}: device={device!r} is not where this backend creates arrays (host memory); "
            f"it takes {_HOST_DEVICES}"
        )
