"""Detection of the GPU of an Apple silicon Mac through macOS's own tools, for backend plugins.

A plugin on Apple GPUs (PyTorch's MPS device, MLX) returns :func:`detect` from its
``prism_detect_devices`` hook; neither Metal nor a framework is loaded.  Two commands are run:

- ``sysctl -n machdep.cpu.brand_string hw.memsize``: the chip (``Apple M4 Max``) and the
  machine's memory, which on Apple silicon is the unified memory the GPU uses;
- ``system_profiler SPDisplaysDataType -json``: the GPU, by the name Metal gives it
  (``sppci_model``: the chip's name) and its number of GPU cores (``sppci_cores``).

The GPU is mapped to the non-abstract Apple description of *kind gpu* whose own
``detection.product_names`` match its name (the chip's CPU description has the same name), and
among several, to the one with as many ``compute_units`` as the GPU has cores.  Without
system_profiler's answer, the chip's name stands for the GPU's.  Parsing takes the commands'
texts, so that it is tested on recorded output on any host; :data:`PLATFORM` says whether this
is macOS (tests set it).  docs/architecture.md, "Host detection".
"""

from __future__ import annotations

import json
import os
import sys
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
    "APPLE_TIMEOUT_S",
    "PLATFORM",
    "SYSCTL_COMMAND",
    "SYSTEM_DIRS",
    "SYSTEM_PROFILER_COMMAND",
    "AppleChip",
    "AppleGpu",
    "detect",
    "detection_from_macos",
    "match_apple_gpu",
    "parse_displays",
    "parse_sysctl",
]

#: The chip's name and the machine's memory in bytes, one a line.
SYSCTL_COMMAND = ("sysctl", "-n", "machdep.cpu.brand_string", "hw.memsize")
#: The graphics hardware as JSON: ``{"SPDisplaysDataType": [{"sppci_model": …}, …]}``.
SYSTEM_PROFILER_COMMAND = ("system_profiler", "SPDisplaysDataType", "-json")
#: How long each command may take, in seconds (system_profiler takes about a second; tests
#: lower it).
APPLE_TIMEOUT_S: float = TOOL_TIMEOUT_S
#: The platform detection runs on (``sys.platform``); only ``"darwin"`` has these tools.
PLATFORM: str = sys.platform
#: Where macOS keeps both commands, looked in when ``PATH`` lacks them (a daemon's ``PATH``
#: often has no ``/usr/sbin``).
SYSTEM_DIRS: tuple[str, ...] = ("/usr/sbin",)


@dataclass(frozen=True)
class AppleChip:
    """What ``sysctl`` says of the chip: its name and the machine's (unified) memory."""

    brand: str | None
    memory_bytes: int | None


@dataclass(frozen=True)
class AppleGpu:
    """One GPU of system_profiler's listing: its name (``Apple M4 Max``), its GPU cores where
    given, and whether it is Apple's own (an Intel Mac lists AMD and Intel GPUs)."""

    name: str
    cores: int | None
    apple: bool


def parse_sysctl(text: str) -> AppleChip:
    """Parse the output of :data:`SYSCTL_COMMAND`: the first line is the brand string, the second
    the memory in bytes; what is missing or unreadable is ``None``."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    brand = lines[0] if lines and not lines[0].isdigit() else None
    memory: int | None = None
    if len(lines) > 1 and lines[1].isdigit() and int(lines[1]) > 0:
        memory = int(lines[1])
    return AppleChip(brand, memory)


def _cores(value: object) -> int | None:
    """The GPU core count as system_profiler gives it (``"40"``), or ``None``."""
    text = str(value).strip() if isinstance(value, (str, int)) else ""
    return int(text) if text.isdigit() and int(text) > 0 else None


def parse_displays(text: str) -> tuple[list[AppleGpu], str]:
    """Parse the output of :data:`SYSTEM_PROFILER_COMMAND`: the GPUs it lists and ``""``, or
    none and a sentence saying what is wrong with the output."""
    try:
        data = json.loads(text)
    except ValueError:
        shown = " ".join(text.split())[:120] or "nothing"
        return [], (
            f'system_profiler printed no JSON (expected {{"SPDisplaysDataType": [...]}}): {shown!r}'
        )
    entries = data.get("SPDisplaysDataType") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return [], "system_profiler printed JSON without an SPDisplaysDataType list"
    gpus: list[AppleGpu] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        name = entry.get("sppci_model") or entry.get("_name")
        if not isinstance(name, str) or not name.strip():
            continue
        vendor = str(entry.get("spdisplays_vendor", "")).lower()
        name = " ".join(name.split())
        apple = "apple" in vendor or name.startswith("Apple ")
        gpus.append(AppleGpu(name, _cores(entry.get("sppci_cores")), apple))
    return gpus, ""


def match_apple_gpu(
    name: str, cores: int | None, library: Any
) -> tuple[DeviceDescription | None, str]:
    """The Apple GPU description for a GPU named ``name`` with ``cores`` GPU cores, and a note
    (``""`` when none is needed).

    Candidates are non-abstract Apple descriptions of kind ``gpu`` whose own product names
    match the whole name (the chip's CPU description, of kind ``cpu``, may have the same name).
    One with ``cores`` compute units wins, else the first by device type, with a note that it
    describes another configuration."""
    found = [
        desc
        for desc in library.list(vendor="apple", kind="gpu")
        if (names := own_product_names(desc)) and name_fits(names, name)
    ]
    if not found:
        return None, ""
    if cores is None:
        return found[0], ""
    for desc in found:
        if desc.compute_units == cores:
            return desc, ""
    best = found[0]
    return best, (
        f"the {cores}-core GPU of the {name} is described by {best.device_type} "
        f"({best.compute_units} cores): no description of its {cores}-core configuration"
    )


def detection_from_macos(
    sysctl_text: str | None, displays_text: str | None, library: Any
) -> Detection:
    """The :class:`prism_core.extending.Detection` for the outputs of :data:`SYSCTL_COMMAND`
    and :data:`SYSTEM_PROFILER_COMMAND` (``None``: the command gave none): the Apple GPU, with
    the machine's memory, or why there is none."""
    chip = parse_sysctl(sysctl_text or "")
    notes: list[str] = []
    gpus: list[AppleGpu] = []
    if displays_text is not None:
        gpus, problem = parse_displays(displays_text)
        if problem:
            notes.append(problem)
    apple = [gpu for gpu in gpus if gpu.apple]
    if not apple and chip.brand is not None and chip.brand.startswith("Apple "):
        # The GPU of an Apple chip has the chip's name: without system_profiler's listing the
        # chip still says which GPU it is (its core count unknown).
        apple = [AppleGpu(chip.brand, None, True)]
    if not apple:
        others = ", ".join(repr(gpu.name) for gpu in gpus)
        if others:
            notes.append(f"no Apple GPU here (system_profiler lists {others}: an Intel Mac?)")
        elif chip.brand is not None:
            notes.append(f"no Apple GPU here (the chip is {chip.brand!r})")
        else:
            notes.append("neither sysctl nor system_profiler named an Apple chip")
        return Detection((), "; ".join(notes))
    devices: list[DetectedDevice] = []
    unmatched: list[str] = []
    for gpu in apple:
        desc, note = match_apple_gpu(gpu.name, gpu.cores, library)
        if desc is None:
            unmatched.append(gpu.name)
            continue
        if note:
            notes.append(note)
        devices.append(
            DetectedDevice(
                desc.device_type,
                index=len(devices),
                name=gpu.name,
                memory_bytes=chip.memory_bytes,
            )
        )
    if unmatched:
        shown = ", ".join(repr(n) for n in dict.fromkeys(unmatched))
        notes.append(
            f"no Apple GPU description matches {shown} (a description of kind gpu needs a "
            "detection.product_names pattern for it)"
        )
    return Detection(tuple(devices), "; ".join(notes))


def _find(command: str) -> str | None:
    """``command`` on ``PATH``, else in :data:`SYSTEM_DIRS`."""
    found = _which(command)
    if found is not None:
        return found
    for directory in SYSTEM_DIRS:
        candidate = os.path.join(directory, command)
        if os.access(candidate, os.X_OK) and not os.path.isdir(candidate):
            return candidate
    return None


def _run(command: tuple[str, ...]) -> tuple[str | None, str]:
    """(the output of ``command``, "") or (None, why not)."""
    executable = _find(command[0])
    if executable is None:
        where = f" or in {', '.join(SYSTEM_DIRS)}" if SYSTEM_DIRS else ""
        return None, f"{command[0]} not found on PATH{where}"
    return run_tool(executable, command[1:], name=command[0], timeout=APPLE_TIMEOUT_S)


def detect(library: Any, *, platform: str | None = None) -> Detection:
    """The Apple GPU of this Mac.  ``platform`` defaults to :data:`PLATFORM`; anywhere but macOS
    the answer is that this is not macOS.  Never raises: an empty detection says why there is
    no GPU, naming what each command did."""
    try:
        where = PLATFORM if platform is None else platform
        if where != "darwin":
            return Detection((), f"not macOS (the platform is {where!r}): no Apple GPU")
        sysctl_text, sysctl_why = _run(SYSCTL_COMMAND)
        displays_text, displays_why = _run(SYSTEM_PROFILER_COMMAND)
        if sysctl_text is None and displays_text is None:
            return Detection((), f"{sysctl_why}; {displays_why}")
        found = detection_from_macos(sysctl_text, displays_text, library)
        failed = [why for why in (sysctl_why, displays_why) if why]
        if not failed:
            return found
        return Detection(
            found.devices, "; ".join([*failed, *([found.reason] if found.reason else [])])
        )
    except Exception as exc:  # detection must never take Prism down
        return Detection((), f"Apple GPU detection failed: {describe_exception(exc)}")
