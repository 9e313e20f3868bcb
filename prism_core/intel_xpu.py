"""Detection of the Intel GPUs of this host through Intel's command-line tools, for backend plugins.

A plugin on Intel GPUs (PyTorch's XPU device) returns :func:`detect` from its
``prism_detect_devices`` hook; no framework is imported and no Level Zero context is created.
Two tools are asked, the first that answers wins:

- ``xpu-smi discovery -j`` (Intel XPU Manager): one JSON entry per PCI function, that is per
  *card*, with its name, PCI device id and UUID;
- ``sycl-ls`` (oneAPI): one line per SYCL root device and backend
  (``[level_zero:gpu][level_zero:0] Intel(R) Level-Zero, Intel(R) Data Center GPU Max 1550 1.3
  [1.3.26918]``); the Level Zero lines are used, else the OpenCL ones.

A card is mapped to the non-abstract Intel description whose own ``detection`` hints match it:
the product name (``detection.product_names``), or the PCI device id where the driver gives no
product name (``Intel(R) Graphics [0x0bd5]``) or the description names none.

A card made of several stacks (a Max 1550: ``partitions`` with modes ``flat`` and
``composite``) shows itself as Level Zero's device hierarchy is set
(``ZE_FLAT_DEVICE_HIERARCHY``, read from this process's environment, which the tools inherit):
in FLAT mode, the default, each stack is a root device; in COMPOSITE mode the card is one; the
deprecated COMBINED mode lists stacks as FLAT does.  Each card is reported with that mode
(``partition_mode``), so that ``present_devices`` makes it two stack devices in FLAT mode and
one whole card in COMPOSITE mode.  ``sycl-ls`` in FLAT mode already lists stacks: its lines are
grouped back into cards; where they cannot be (an affinity mask that hides some stacks), each
line is reported as the stack description itself.  docs/architecture.md, "Host detection".
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core.host_tools import TOOL_TIMEOUT_S, run_tool
from prism_core.host_tools import which as _which
from prism_core.kernel.contract.backend import DetectedDevice, Detection
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.host_cpu import name_fits
from prism_core.kernel.partition_match import own_product_names

if TYPE_CHECKING:
    from prism_core.kernel.description.device import DeviceDescription

__all__ = [
    "HIERARCHY_VARIABLE",
    "INTEL_PCI_VENDOR",
    "SYCL_LS_COMMAND",
    "XPU_SMI_COMMAND",
    "XPU_TIMEOUT_S",
    "IntelGpu",
    "detect",
    "detection_from_sycl_ls",
    "detection_from_xpu_smi",
    "hierarchy_mode",
    "match_intel_gpu",
    "parse_sycl_ls",
    "parse_xpu_smi",
    "run_sycl_ls",
    "run_xpu_smi",
]

#: Intel XPU Manager's listing of the devices (one entry per PCI function) as JSON.
XPU_SMI_COMMAND = ("xpu-smi", "discovery", "-j")
#: oneAPI's listing of the SYCL platforms' devices, one line each.
SYCL_LS_COMMAND = ("sycl-ls",)
#: How long each tool may take, in seconds (tests lower it).
XPU_TIMEOUT_S: float = TOOL_TIMEOUT_S
#: Level Zero's setting of how a multi-stack card shows itself: FLAT (default), COMPOSITE or
#: COMBINED.
HIERARCHY_VARIABLE = "ZE_FLAT_DEVICE_HIERARCHY"
INTEL_PCI_VENDOR = 0x8086


@dataclass(frozen=True)
class IntelGpu:
    """One GPU a tool lists: a card (xpu-smi) or a SYCL root device (sycl-ls, a stack in FLAT
    mode).  ``pci_device_id`` is ``"0x0bd5"``-style where known; ``backend`` is the SYCL
    backend (``"level_zero"``, ``"opencl"``) for sycl-ls, ``None`` for xpu-smi."""

    index: int
    name: str
    pci_device_id: str | None = None
    uuid: str | None = None
    backend: str | None = None
    driver: str | None = None


# -- parsing ------------------------------------------------------------------------------------

#: The name a driver gives a device it has no product name for: ``Intel(R) Graphics [0x0bd5]``.
_GENERIC_NAME = re.compile(r"Intel\(R\) Graphics \[(0x[0-9a-fA-F]{1,4})\]", re.IGNORECASE)


def _pci_id(value: object) -> str | None:
    """``"0x0bd5"`` for a device id given as ``"0xbd5"``, ``"0BD5"`` or ``3029``; ``None`` for
    anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and value.strip():
        try:
            number = int(value.strip(), 16)
        except ValueError:
            return None
    else:
        return None
    return f"0x{number:04x}" if 0 <= number <= 0xFFFF else None


def parse_xpu_smi(text: str) -> tuple[list[IntelGpu], str]:
    """Parse the output of :data:`XPU_SMI_COMMAND`: the GPUs (physical functions; virtual
    functions only where no physical one is listed, as in a virtual machine) and ``""``, or no
    GPUs and a sentence saying what is wrong with the output."""
    try:
        data = json.loads(text)
    except ValueError:
        shown = " ".join(text.split())[:120] or "nothing"
        return [], f'xpu-smi printed no JSON (expected {{"device_list": [...]}}): {shown!r}'
    entries = data.get("device_list") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return [], "xpu-smi printed JSON without a device_list"
    listed: list[tuple[IntelGpu, bool]] = []
    for position, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        name = entry.get("device_name")
        if not isinstance(name, str) or not name.strip():
            continue
        if str(entry.get("device_type", "GPU")).upper() != "GPU":
            continue
        index = entry.get("device_id", position)
        uuid = entry.get("uuid")
        gpu = IntelGpu(
            index=index if isinstance(index, int) and not isinstance(index, bool) else position,
            name=" ".join(name.split()),
            pci_device_id=_pci_id(entry.get("pci_device_id")),
            uuid=uuid if isinstance(uuid, str) and uuid.strip() else None,
        )
        virtual = str(entry.get("device_function_type", "physical")).lower() == "virtual"
        listed.append((gpu, virtual))
    if any(not virtual for _, virtual in listed):
        return [gpu for gpu, virtual in listed if not virtual], ""
    return [gpu for gpu, _ in listed], ""


#: One device line of sycl-ls: ``[level_zero:gpu][level_zero:0] Platform, Device Version
#: [Driver]``, or before oneAPI 2024 ``[ext_oneapi_level_zero:gpu:0] Platform, Device Version
#: [Driver]``.
_SYCL_LINE = re.compile(
    r"\[(?:ext_oneapi_)?(?P<backend>[a-z_0-9]+):(?P<type>[a-z]+)(?::(?P<old>\d+))?\]"
    r"(?:\[(?:ext_oneapi_)?[a-z_0-9]+:(?P<new>\d+)\])?"
    r"\s*(?P<platform>[^,]+),\s*(?P<device>.+?)\s*\[(?P<driver>[^\]]*)\]\s*"
)
#: The device version sycl-ls prints after the name: ``1.3``, ``12.60.7``, ``OpenCL 3.0 NEO``,
#: ``3.0``.  A version has a dot, so a name's model number (``Max 1550``) is never taken for it.
_SYCL_VERSION = re.compile(r"\s+(?:OpenCL\s+)?\d+\.\d+(?:\.\d+)*(?:\s+NEO)?\s*$")


def parse_sycl_ls(text: str) -> tuple[list[IntelGpu], list[str]]:
    """Parse the output of :data:`SYCL_LS_COMMAND`: the GPUs of one backend (Level Zero's, else
    OpenCL's: the same devices are listed once per backend) in its order, and the lines that
    look like device lines (``[…]``) but could not be read.  Other lines (warnings) are
    skipped."""
    found: dict[str, list[IntelGpu]] = {}
    unreadable: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line.startswith("["):
            continue
        match = _SYCL_LINE.fullmatch(line)
        if match is None:
            unreadable.append(line)
            continue
        if match["type"] != "gpu":
            continue
        backend = match["backend"]
        index_text = match["new"] if match["new"] is not None else match["old"]
        gpus = found.setdefault(backend, [])
        name = _SYCL_VERSION.sub("", match["device"]).strip()
        generic = _GENERIC_NAME.fullmatch(name)
        gpus.append(
            IntelGpu(
                index=int(index_text) if index_text is not None else len(gpus),
                name=name,
                pci_device_id=_pci_id(generic.group(1)) if generic else None,
                backend=backend,
                driver=match["driver"].strip() or None,
            )
        )
    for backend in ("level_zero", "opencl"):
        if found.get(backend):
            return found[backend], unreadable
    return [], unreadable


def hierarchy_mode(environ: Mapping[str, str] | None = None) -> str:
    """The partition mode a multi-stack card shows itself in: ``"composite"`` where
    :data:`HIERARCHY_VARIABLE` says COMPOSITE, else ``"flat"`` (the driver's default; COMBINED
    lists the stacks as root devices too)."""
    env = os.environ if environ is None else environ
    value = env.get(HIERARCHY_VARIABLE, "").strip().upper()
    return "composite" if value == "COMPOSITE" else "flat"


# -- mapping to descriptions --------------------------------------------------------------------


def _own_pci_ids(description: DeviceDescription) -> frozenset[int]:
    """The Intel PCI device ids written in ``description``'s own file (inherited ids name a
    family)."""
    if description.provenance.get("detection.pci") != description.device_type:
        return frozenset()
    detection = description.data.get("detection") or {}
    ids: set[int] = set()
    for entry in detection.get("pci") or ():
        if _pci_id(entry.get("vendor_id")) != f"0x{INTEL_PCI_VENDOR:04x}":
            continue
        for device_id in entry.get("device_ids") or ():
            found = _pci_id(device_id)
            if found is not None:
                ids.add(int(found, 16))
    return frozenset(ids)


def match_intel_gpu(name: str, pci_device_id: str | None, library: Any) -> DeviceDescription | None:
    """The non-abstract Intel GPU description of a device named ``name`` with PCI device id
    ``pci_device_id`` (or ``None``).

    A description is a candidate when its own hints agree: one of its product names matches the
    whole name, or, where the name is the driver's placeholder (``Intel(R) Graphics [0x…]``) or
    the description names no product, its PCI ids list the device id; a listed id that differs
    rules it out.  The most hints matched wins, then the longest lineage, then the device type.
    """
    device_id = None if pci_device_id is None else int(pci_device_id, 16)
    generic = _GENERIC_NAME.fullmatch(name.strip()) is not None
    scored: list[tuple[int, DeviceDescription]] = []
    for desc in library.list(vendor="intel", kind="gpu"):
        ids, names = _own_pci_ids(desc), own_product_names(desc)
        if ids and device_id is not None and device_id not in ids:
            continue
        named = bool(names) and not generic and name_fits(names, name)
        by_id = bool(ids) and device_id in ids
        if named:
            scored.append((2 + by_id, desc))
        elif by_id and (generic or not names):
            scored.append((1, desc))
    if not scored:
        return None
    scored.sort(key=lambda item: (-item[0], -len(item[1].lineage), item[1].device_type))
    return scored[0][1]


def _stacks_per_card(description: DeviceDescription, mode: str) -> int:
    """How many root devices one card of ``description`` is in partition ``mode`` (1 where it
    has no such mode or the mode shows it whole)."""
    for part in description.partitions:
        if part.mode == mode:
            types = part.device_types
            return 1 if types == (description.device_type,) else len(types)
    return 1


def _mode_of(description: DeviceDescription, mode: str) -> str | None:
    """``mode`` where ``description`` is a package with that partition mode, else ``None``."""
    return mode if any(p.mode == mode for p in description.partitions) else None


def _unmatched_note(tool: str, names: Sequence[str]) -> str:
    shown = ", ".join(repr(n) for n in dict.fromkeys(names))
    return (
        f"{tool}: no Intel GPU description matches {shown} (a description needs a "
        "detection.product_names pattern or a detection.pci device id for it)"
    )


def detection_from_xpu_smi(text: str, library: Any, mode: str | None = None) -> Detection:
    """The :class:`prism_core.extending.Detection` for the output of :data:`XPU_SMI_COMMAND`:
    one device per card, numbered as xpu-smi numbers them, in partition ``mode`` (default:
    :func:`hierarchy_mode`) where its description has that mode."""
    gpus, problem = parse_xpu_smi(text)
    if problem:
        return Detection((), problem)
    mode = hierarchy_mode() if mode is None else mode
    devices: list[DetectedDevice] = []
    unmatched: list[str] = []
    for gpu in gpus:
        desc = match_intel_gpu(gpu.name, gpu.pci_device_id, library)
        if desc is None:
            unmatched.append(gpu.name)
            continue
        devices.append(
            DetectedDevice(
                desc.device_type,
                index=gpu.index,
                name=gpu.name,
                uuid=gpu.uuid,
                partition_mode=_mode_of(desc, mode),
            )
        )
    notes = [_unmatched_note("xpu-smi", unmatched)] if unmatched else []
    if not gpus:
        notes.append("xpu-smi lists no GPU")
    return Detection(tuple(devices), "; ".join(notes))


def detection_from_sycl_ls(text: str, library: Any, mode: str | None = None) -> Detection:
    """The :class:`prism_core.extending.Detection` for the output of :data:`SYCL_LS_COMMAND`.

    A root device of a card that shows itself split in ``mode`` (default:
    :func:`hierarchy_mode`; a Max 1550 in FLAT mode is two) is one of its stacks: the lines of
    such a card are grouped back into cards, reported in that mode, when their number is a
    multiple of the stacks of a card; otherwise each line is reported as the partition's own
    description.  Other devices are one each.  Devices are numbered in the listing's order.
    """
    gpus, unreadable = parse_sycl_ls(text)
    mode = hierarchy_mode() if mode is None else mode
    matched: list[tuple[IntelGpu, DeviceDescription]] = []
    unmatched: list[str] = []
    for gpu in gpus:
        desc = match_intel_gpu(gpu.name, gpu.pci_device_id, library)
        if desc is None:
            unmatched.append(gpu.name)
        else:
            matched.append((gpu, desc))
    lines_of: dict[str, int] = {}
    for _, desc in matched:
        lines_of[desc.device_type] = lines_of.get(desc.device_type, 0) + 1
    devices: list[DetectedDevice] = []
    notes: list[str] = []
    seen: dict[str, int] = {}
    for gpu, desc in matched:
        per_card = _stacks_per_card(desc, mode)
        kind = desc.device_type
        shown = seen[kind] = seen.get(kind, 0) + 1
        if per_card == 1:
            devices.append(
                DetectedDevice(
                    kind,
                    index=len(devices),
                    name=gpu.name,
                    partition_mode=_mode_of(desc, mode),
                    driver=gpu.driver,
                )
            )
        elif lines_of[kind] % per_card == 0:
            if (shown - 1) % per_card == 0:  # the first stack of a card stands for the card
                devices.append(
                    DetectedDevice(
                        kind,
                        index=len(devices),
                        name=gpu.name,
                        partition_mode=mode,
                        driver=gpu.driver,
                    )
                )
        else:
            part = desc.partition(mode)
            stack = part.device_types[0] if part is not None else kind
            devices.append(
                DetectedDevice(stack, index=len(devices), name=gpu.name, driver=gpu.driver)
            )
            if shown == 1:
                notes.append(
                    f"sycl-ls lists {lines_of[kind]} stacks of {kind} in {mode} mode, not a "
                    f"whole number of cards of {per_card} (an affinity mask?): each is "
                    f"reported as {stack}"
                )
    if unmatched:
        notes.append(_unmatched_note("sycl-ls", unmatched))
    if unreadable:
        notes.append("sycl-ls printed lines that could not be read: " + " | ".join(unreadable))
    if not gpus and not unreadable:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        said = f" (it printed {first[:120]!r})" if first else ""
        notes.append(f"sycl-ls lists no GPU{said}")
    return Detection(tuple(devices), "; ".join(notes))


# -- running the tools ----------------------------------------------------------------------------


def run_xpu_smi(executable: str) -> tuple[str | None, str]:
    """Run :data:`XPU_SMI_COMMAND`: (its output, "") or (None, why it failed)."""
    return run_tool(executable, XPU_SMI_COMMAND[1:], name="xpu-smi", timeout=XPU_TIMEOUT_S)


def run_sycl_ls(executable: str) -> tuple[str | None, str]:
    """Run :data:`SYCL_LS_COMMAND`: (its output, "") or (None, why it failed)."""
    return run_tool(executable, SYCL_LS_COMMAND[1:], name="sycl-ls", timeout=XPU_TIMEOUT_S)


def detect(library: Any) -> Detection:
    """The Intel GPUs of this host: xpu-smi's cards, else sycl-ls's devices.  Never raises: an
    empty detection says why there is none, naming what each tool did."""
    try:
        tried: list[str] = []
        for command, runner, parse in (
            ("xpu-smi", run_xpu_smi, detection_from_xpu_smi),
            ("sycl-ls", run_sycl_ls, detection_from_sycl_ls),
        ):
            executable = _which(command)
            if executable is None:
                tried.append(f"{command} not found on PATH")
                continue
            output, why = runner(executable)
            if output is None:
                tried.append(why)
                continue
            found = parse(output, library)
            if found.devices:
                # What the tool asked first said stays with the devices the next one found.
                said = [t for t in (*tried, found.reason) if t]
                return Detection(found.devices, "; ".join(said))
            tried.append(found.reason or f"{command} lists no GPU")
        if all(t.endswith("not found on PATH") for t in tried):
            return Detection(
                (),
                "neither xpu-smi (Intel XPU Manager) nor sycl-ls (oneAPI) is on PATH: no "
                "Intel GPU tools on this host",
            )
        return Detection((), "; ".join(tried))
    except Exception as exc:  # detection must never take Prism down
        return Detection((), f"Intel GPU detection failed: {describe_exception(exc)}")
