"""Which partition of a package one device that a driver shows is.

A package (a description with ``partitions``) shows itself whole or split, as the driver is set:
an MI300X in CPX mode is eight devices of one XCD each, an H100 with MIG its MIG instances.
:func:`match_partition` compares what the driver reports of a device (its name, compute units,
memory) with the package's modes, so that a partition is described as itself, never as the
whole package.  A MIG *compute instance* (``1c.3g.40gb``: one of the three compute slices of a
``3g.40gb`` GPU instance) is described by :func:`compute_instance`.  docs/device-files.md,
"Packages and what software sees: partitions".
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prism_core.kernel.description.device import DeviceDescription, PartitionPart
from prism_core.kernel.host_cpu import library_or_default, name_fits
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.description.library import DeviceLibrary

__all__ = [
    "MEMORY_REPORTED",
    "PartitionMatch",
    "compute_instance",
    "match_partition",
    "own_product_names",
]

#: The range of (memory a driver reports) / (memory a description gives) that counts as the
#: same device: a driver reports a little less (an H100's 80 GiB shows as 79.6 GiB), never much
#: more; the partitions of one package differ by a factor of two or more, so it tells them apart.
MEMORY_REPORTED = (0.8, 1.05)


@home("prism_core.hardware")
@dataclass(frozen=True)
class PartitionMatch:
    """A device a driver shows, identified as part of a package.

    ``description`` describes the device: one partition (``amd.mi300x-xcd``), or the package
    where a mode shows it whole (``whole``).  ``part`` is the entry of the package's modes it
    is, ``modes`` every mode with such a part, in the package's order (``("cpx-nps1",
    "cpx-nps4")``).  ``evidence`` names what identified it: ``"name"``, ``"compute_units"``,
    ``"memory"``.  ``slices`` is ``(n, m)`` for a MIG compute instance, ``n`` of its GPU
    instance's ``m`` compute slices (``description`` is then :func:`compute_instance`'s).
    """

    package: DeviceDescription
    description: DeviceDescription
    part: PartitionPart
    modes: tuple[str, ...]
    evidence: tuple[str, ...]
    slices: tuple[int, int] | None = None

    @property
    def whole(self) -> bool:
        """Whether the device is the whole package (a mode that does not split it)."""
        return self.description.device_type == self.package.device_type


#: CUDA's and nvidia-smi's name of a MIG compute instance: ``<GPU> MIG <n>c.<m>g.<memory>``,
#: ``n`` of the ``m`` compute slices of the GPU instance ``<m>g.<memory>``.
_COMPUTE_INSTANCE = re.compile(r"(.* MIG )(\d+)c\.((\d+)g\..+)", re.IGNORECASE)


def compute_instance(gpu_instance: DeviceDescription, n: int, m: int) -> DeviceDescription:
    """The description of a MIG compute instance: ``n`` of the ``m`` compute slices of
    ``gpu_instance`` (a GPU instance's description, whose device type it keeps), with ``n/m`` of
    its compute units, ``peak_tflops`` and ``throughput`` and all of its memory, caches and
    links (shared).  ``mig_profile`` names it (``1c.3g.40gb``), ``mig_gpu_instance`` its GPU
    instance."""
    share = n / m
    data = gpu_instance.to_dict()
    if isinstance(data.get("compute_units"), int):
        data["compute_units"] = max(1, round(data["compute_units"] * share))
    if "peak_tflops" in data:
        data["peak_tflops"] = {k: v * share for k, v in data["peak_tflops"].items()}
    if "throughput" in data:
        data["throughput"] = [{**e, "tflops": e["tflops"] * share} for e in data["throughput"]]
    gi_profile = str(gpu_instance.attribute("mig_profile", f"{m}g"))
    profile = f"{n}c.{gi_profile}"
    data["attributes"] = {
        **(data.get("attributes") or {}),
        "mig_profile": profile,
        "mig_gpu_instance": gi_profile,
    }
    data["name"] = f"{gpu_instance.name} compute instance {profile}"
    data["description"] = (
        f"A MIG compute instance {profile}: {n} of the {m} compute slices of a "
        f"{gi_profile} GPU instance ({gpu_instance.device_type}), with {n}/{m} of its compute "
        "units and compute rates; its memory is the GPU instance's, shared with the GPU "
        "instance's other compute instances."
    )
    return dataclasses.replace(gpu_instance, data=data)


def own_product_names(description: DeviceDescription) -> tuple[str, ...]:
    """The ``detection.product_names`` written in ``description``'s own file (inherited names
    describe a family, not this device)."""
    if description.provenance.get("detection.product_names") != description.device_type:
        return ()
    detection = description.data.get("detection") or {}
    return tuple(detection.get("product_names") or ())


def _memory_distance(description: DeviceDescription, reported: int) -> float | None:
    """How far ``reported`` bytes are from the description's main memory (``|log ratio|``,
    against the physical or the usable size, whichever is nearer): ``None`` where it is out of
    :data:`MEMORY_REPORTED` of both, ``inf`` where the description gives no size."""
    glob = description.memory_level("global")
    sizes = [] if glob is None else [glob.size_bytes, glob.usable_bytes]
    known = [s for s in sizes if s]
    if not known:
        return math.inf
    low, high = MEMORY_REPORTED
    fits = [abs(math.log(reported / s)) for s in known if low <= reported / s <= high]
    return min(fits) if fits else None


def _evidence(
    description: DeviceDescription,
    part: PartitionPart,
    *,
    name: str | None,
    compute_units: int | None,
    memory_bytes: int | None,
) -> tuple[tuple[str, ...], float] | None:
    """What the reported facts confirm of a candidate and how near its memory is, or ``None``
    when one of them contradicts it."""
    confirmed: list[str] = []
    if name:
        patterns = part.product_names or own_product_names(description)
        if patterns:
            if not name_fits(patterns, name):
                return None
            confirmed.append("name")
    if compute_units is not None and description.compute_units is not None:
        if compute_units != description.compute_units:
            return None
        confirmed.append("compute_units")
    distance = math.inf
    if memory_bytes:
        found = _memory_distance(description, memory_bytes)
        if found is None:
            return None
        if found != math.inf:
            confirmed.append("memory")
            distance = found
    return tuple(confirmed), distance


def match_partition(
    package: DeviceDescription,
    library: DeviceLibrary | None = None,
    *,
    name: str | None = None,
    compute_units: int | None = None,
    memory_bytes: int | None = None,
    mode: str | None = None,
    **dimensions: str,
) -> PartitionMatch | None:
    """Which of ``package``'s partitions a device a driver shows is, from its reported ``name``,
    ``compute_units`` and ``memory_bytes``.

    Every part of every mode (only ``mode``, or the modes with these ``dimensions``, where
    given) is a candidate, the package itself for a mode that shows it whole.  A reported fact
    that contradicts a candidate rules it out: a name none of its names match (the part's
    ``product_names``, else its description's own; without names, not judged by name), another
    number of compute units, a memory outside :data:`MEMORY_REPORTED` of its size.  The most
    facts confirmed wins, then the nearest memory, then the first.  ``None`` without partitions
    or reports, when nothing is confirmed, or when two different devices fit equally.
    """
    if not package.partitions or (name is None and compute_units is None and not memory_bytes):
        return None
    lib = library_or_default(library)
    found: dict[tuple[object, ...], tuple[PartitionMatch, float]] = {}
    for entry in package.partitions:
        if (mode is not None and entry.mode != mode) or not entry.matches(**dimensions):
            continue
        for part in entry.parts:
            same = part.device_type == package.device_type
            if not same and part.device_type not in lib:
                continue
            description = package if same else lib.get(part.device_type)
            judged = _evidence(
                description, part, name=name, compute_units=compute_units, memory_bytes=memory_bytes
            )
            if judged is None or not judged[0]:
                continue
            key = (part.device_type, part.host_link, part.product_names)
            if key in found:
                earlier, distance = found[key]
                modes = (*earlier.modes, entry.mode)
                match = PartitionMatch(package, description, earlier.part, modes, earlier.evidence)
                found[key] = (match, distance)
            else:
                match = PartitionMatch(package, description, part, (entry.mode,), judged[0])
                found[key] = (match, judged[1])
    if not found:
        split = _COMPUTE_INSTANCE.fullmatch(" ".join(name.split())) if name else None
        if split is None:
            return None
        # A compute instance: the GPU instance its name names, then its share of it.
        n, m = int(split.group(2)), int(split.group(4))
        whole = match_partition(
            package,
            lib,
            name=split.group(1) + split.group(3),
            compute_units=None,
            memory_bytes=memory_bytes,
            mode=mode,
            **dimensions,
        )
        if whole is None or whole.whole or not 0 < n <= m:
            return None
        if n == m:
            return whole
        return dataclasses.replace(
            whole, description=compute_instance(whole.description, n, m), slices=(n, m)
        )
    ranked = sorted(found.values(), key=lambda item: (-len(item[0].evidence), item[1]))
    best, distance = ranked[0]
    for runner, runner_distance in ranked[1:]:
        if len(runner.evidence) != len(best.evidence) or runner_distance != distance:
            break
        if runner.description.device_type != best.description.device_type:
            return None  # two different devices fit: the report does not say which
    # Parts of one description that nothing reported tells apart (an n300's L and R chips
    # without their names): the first, in the package's order.
    return best
