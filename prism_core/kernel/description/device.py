"""Resolved device descriptions: the capability model that dispatch and users query."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.description.dtypes import DType
    from prism_core.kernel.description.numeric_formats import NumericFormat
    from prism_core.kernel.description.requirements import RequirementMatch
    from prism_core.kernel.description.sparsity import Sparsity
    from prism_core.kernel.description.throughput import Throughput
    from prism_core.kernel.description.topology import Link

__all__ = ["DeviceDescription", "Feature", "MemoryLevel", "Partition", "PartitionPart"]


@home("prism_core.hardware")
@dataclass(frozen=True)
class MemoryLevel:
    """One level of a device's memory hierarchy.

    ``size_bytes`` is what the level physically has, ``usable_bytes`` (format 2) what software
    can allocate of it where the vendor's driver or documentation says; ``bandwidth_gbps`` is
    the level's bandwidth to its own device, ``remote_bandwidth_gbps`` (format 2) as the other
    dies or partitions of the same package reach it (an MI250X GCD reading its sibling's HBM).
    """

    level: str
    size_bytes: int | None = None
    bandwidth_gbps: float | None = None
    scope: str = "device"
    technology: str | None = None
    remote_bandwidth_gbps: float | None = None
    usable_bytes: int | None = None


@home("prism_core.hardware")
@dataclass(frozen=True)
class Feature:
    """A versioned hardware feature and the data types it accelerates, per operation."""

    name: str
    version: int | str
    operations: Mapping[str, frozenset[str]] = field(default_factory=dict)
    description: str = ""

    def supports(self, op: str, dtype: str) -> bool:
        return dtype in self.operations.get(op, frozenset())

    def version_satisfies(self, spec: str | int | bool) -> bool:
        """Whether this feature's version meets ``spec`` (see
        :class:`prism_core.hardware.Requirement`)."""
        from prism_core.kernel.description.requirements import version_meets

        return version_meets(self.version, spec)


@home("prism_core.hardware")
@dataclass(frozen=True)
class PartitionPart:
    """One kind of device in a partition mode: ``count`` devices described by ``device_type``.

    ``host_link`` is false for devices that have no link of their own to the host and are
    reached through another part of the package (the R chip of a Wormhole n300).
    ``product_names`` are the names (regular expressions, matched whole and ignoring case)
    software gives these devices where they tell this part from the others (``"n300 R"``);
    empty where the part's description's own ``detection.product_names`` do.
    """

    device_type: str
    count: int
    host_link: bool = True
    product_names: tuple[str, ...] = ()
    description: str = ""


@home("prism_core.hardware")
@dataclass(frozen=True)
class Partition:
    """What software sees of a package in one partition mode: ``count`` devices, each described
    by ``device_type`` (an MI250X is two ``amd.mi250x-gcd``; a Max 1550 in FLAT mode is two
    ``intel.max-1550-stack``).

    ``parts`` lists the devices kind by kind, in the file's order; a mode of one kind (every
    format-1 entry) has one part.  A mode whose devices differ (an H100 in
    NVIDIA's ``all-balanced`` MIG layout: one 3g.40gb, one 2g.20gb and two 1g.10gb instances)
    has several, ``device_type`` is then ``None`` and ``count`` their total.  ``dimensions``
    maps each setting of a package partitioned along several (``compute``, ``memory`` for an
    MI300X) to this mode's value in it; empty where the vendor has one setting.
    """

    mode: str
    device_type: str | None
    count: int
    description: str = ""
    dimensions: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    parts: tuple[PartitionPart, ...] = ()

    def __post_init__(self) -> None:
        if not self.parts and self.device_type is not None:
            object.__setattr__(self, "parts", (PartitionPart(self.device_type, self.count),))
        object.__setattr__(self, "dimensions", MappingProxyType(dict(self.dimensions)))

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> Partition:
        """The partition of one entry of a resolved description's ``partitions``."""
        mode, text = entry["mode"], entry.get("description", "")
        dimensions = dict(entry.get("dimensions") or {})
        if "parts" not in entry:
            return cls(mode, entry["device_type"], entry["count"], text, dimensions)
        parts = tuple(
            PartitionPart(
                p["device_type"],
                p["count"],
                p.get("host_link", True),
                tuple(p.get("product_names", ())),
                p.get("description", ""),
            )
            for p in entry["parts"]
        )
        kinds = {p.device_type for p in parts}
        kind = next(iter(kinds)) if len(kinds) == 1 else None
        return cls(mode, kind, sum(p.count for p in parts), text, dimensions, parts)

    @property
    def device_types(self) -> tuple[str, ...]:
        """The device type of each device of the mode, in the driver's order (``count`` of
        them)."""
        return tuple(p.device_type for p in self.parts for _ in range(p.count))

    def matches(self, **dimensions: str) -> bool:
        """Whether this mode has each of these values (``matches(compute="cpx")``)."""
        return all(self.dimensions.get(k) == v for k, v in dimensions.items())


def _dimension_text(dimensions: Mapping[str, str]) -> str:
    """``compute='cpx', memory='nps4'``: dimensions as a selection names them."""
    return ", ".join(f"{k}={v!r}" for k, v in dimensions.items())


@home("prism_core.hardware")
@dataclass(frozen=True, eq=False)
class DeviceDescription:
    """A validated device description with its inheritance resolved.

    ``data`` is the resolved document (a private copy; use the properties or :meth:`to_dict`).
    ``provenance`` maps each inherited or own key (``peak_tflops.fp32``, ``features[tma]``) to
    the device type that supplied it.  ``lineage`` is the device type followed by its ancestors,
    nearest first.
    """

    device_type: str
    data: Mapping[str, Any] = field(repr=False)
    path: Path | None = None
    origin: str = "file"
    parents: tuple[str, ...] = ()
    lineage: tuple[str, ...] = ()
    provenance: Mapping[str, str] = field(default_factory=dict, repr=False)
    overrides: tuple[Path, ...] = ()

    @property
    def name(self) -> str:
        return str(self.data.get("name", self.device_type))

    @property
    def vendor(self) -> str | None:
        return self.data.get("vendor")

    @property
    def kind(self) -> str | None:
        return self.data.get("kind")

    @property
    def abstract(self) -> bool:
        return bool(self.data.get("abstract", False))

    @property
    def architecture(self) -> str | None:
        return self.data.get("architecture")

    @property
    def isa(self) -> str | None:
        return self.data.get("isa")

    @property
    def ancestors(self) -> tuple[str, ...]:
        return self.lineage[1:]

    def is_a(self, device_type: str) -> bool:
        """True when this is ``device_type`` or derives from it (``h100.is_a("nvidia.hopper")``)."""
        return device_type in self.lineage

    @property
    def succeeds(self) -> str | None:
        """The device type of the previous generation of this line (``succeeds`` in the file)."""
        return self.data.get("succeeds")

    @property
    def dropped_features(self) -> Mapping[str, str]:
        """Features of the predecessor this generation no longer has, each with the reason."""
        return dict(self.data.get("dropped_features", {}))

    @functools.cached_property
    def partitions(self) -> tuple[Partition, ...]:
        """What software sees of this package, per mode; the first is the driver's default.
        Empty for a description that software sees as one device."""
        return tuple(Partition.from_entry(p) for p in self.data.get("partitions", ()))

    def partition(self, mode: str | None = None, **dimensions: str) -> Partition | None:
        """The partition for ``mode`` (default: the driver's default mode), or ``None`` when the
        description has no partitions.  Raises :class:`LookupError` for a mode it does not have.

        ``dimensions`` select a mode by its values along the vendor's settings instead:
        ``partition(compute="cpx", memory="nps4")`` is the one mode with both values (with
        ``mode`` as well, that mode must have them).  :class:`LookupError` names the modes when
        none, or more than one, has them.
        """
        if not self.partitions:
            if dimensions:
                raise LookupError(
                    f"{self.device_type} has no partition modes to select by "
                    f"{_dimension_text(dimensions)}; software sees it as one device"
                )
            return None
        if not dimensions:
            if mode is None:
                return self.partitions[0]
            for part in self.partitions:
                if part.mode == mode:
                    return part
            modes = ", ".join(p.mode for p in self.partitions)
            raise LookupError(
                f"{self.device_type} has no partition mode {mode!r}; its modes: {modes}"
            )
        known = {name for p in self.partitions for name in p.dimensions}
        unknown = sorted(set(dimensions) - known)
        if unknown:
            names = ", ".join(sorted(known)) or "none"
            raise LookupError(
                f"{self.device_type} has no partition dimension {', '.join(map(repr, unknown))}; "
                f"its dimensions: {names}"
            )
        found = [
            p
            for p in self.partitions
            if p.matches(**dimensions) and (mode is None or p.mode == mode)
        ]
        if len(found) == 1:
            return found[0]
        wanted = _dimension_text(dimensions) + ("" if mode is None else f" and mode {mode!r}")
        if not found:
            modes = ", ".join(
                f"{p.mode} ({_dimension_text(p.dimensions)})" if p.dimensions else p.mode
                for p in self.partitions
            )
            raise LookupError(
                f"{self.device_type} has no partition mode with {wanted}; its modes: {modes}"
            )
        raise LookupError(
            f"{self.device_type} has {len(found)} partition modes with {wanted}: "
            f"{', '.join(p.mode for p in found)}; give the other dimensions too"
        )

    @property
    def compute_units(self) -> int | None:
        return self.data.get("compute_units")

    @property
    def clock_mhz(self) -> Mapping[str, float]:
        return dict(self.data.get("clock_mhz", {}))

    @functools.cached_property
    def memory(self) -> tuple[MemoryLevel, ...]:
        """The memory hierarchy, in the order the description lists it."""
        return tuple(MemoryLevel(**m) for m in self.data.get("memory_hierarchy", ()))

    def memory_level(self, level: str) -> MemoryLevel | None:
        return next((m for m in self.memory if m.level == level), None)

    @property
    def memory_bytes(self) -> int | None:
        """Size of the device's main (``global``) memory, when the description gives it."""
        glob = self.memory_level("global")
        return glob.size_bytes if glob else None

    @property
    def usable_memory_bytes(self) -> int | None:
        """What software can allocate of the main memory (``usable_bytes`` of the ``global``
        level), when the description says; ``memory_bytes`` is what the device has."""
        glob = self.memory_level("global")
        return glob.usable_bytes if glob else None

    @functools.cached_property
    def links(self) -> tuple[Link, ...]:
        """The device's links to the host and to peers (``links``); for a kind it lists none
        of, the one link format 1's ``host_link`` or ``device_link`` stands for."""
        from prism_core.kernel.description.topology import parse_links

        return parse_links(self.data)

    def host_bandwidth_per_direction(self) -> float | None:
        """GB/s the host links carry one way together (the peak of one host-to-device copy),
        ``None`` when no host link is described: not ``host_link``'s total of both ways."""
        from prism_core.kernel.description.topology import host_per_direction

        return host_per_direction(self.links)

    def peer_link(self, other: DeviceDescription, *, in_package: bool | None = None) -> Link | None:
        """The fastest peer link whose other end can be ``other`` (``in_package``: only links to
        siblings in the package, or only the others), ``None`` when none is described."""
        from prism_core.kernel.description.topology import peer_link

        return peer_link(self.links, self.device_type, other, in_package=in_package)

    @property
    def peak_tflops(self) -> Mapping[str, float]:
        return dict(self.data.get("peak_tflops", {}))

    def peak(self, dtype: str) -> float | None:
        """Peak dense throughput for ``dtype`` in TFLOP/s (TOPS for integers), or ``None``."""
        value = self.data.get("peak_tflops", {}).get(dtype)
        return None if value is None else float(value)

    @functools.cached_property
    def throughput(self) -> tuple[Throughput, ...]:
        """The rates per execution unit and data type (``throughput``), in the file's order;
        empty when the description gives none."""
        from prism_core.kernel.description.throughput import parse_throughput

        return parse_throughput(self.data.get("throughput", ()))

    def peak_for(self, dtype: str, unit: str) -> float | None:
        """Peak dense rate of ``unit`` (``"matrix"`` or ``"vector"``) in ``dtype``, TFLOP/s
        (TOPS for integers), or ``None``: the ``throughput`` entry for the pair, else the
        headline ``peak(dtype)``, else for ``"matrix"`` the vector rate (the rule of
        ``prism_core.kernel.description.throughput.rate_for``)."""
        from prism_core.kernel.description.throughput import by_unit, rate_for

        peaks = self.data.get("peak_tflops", {})
        found = rate_for(by_unit(self.throughput), peaks, dtype, unit)
        return None if found is None else found[0]

    @property
    def tdp_watts(self) -> float | None:
        return self.data.get("tdp_watts")

    @property
    def attributes(self) -> Mapping[str, object]:
        return dict(self.data.get("attributes", {}))

    def attribute(self, name: str, default: object = None) -> object:
        return self.data.get("attributes", {}).get(name, default)

    @functools.cached_property
    def sparsity(self) -> tuple[Sparsity, ...]:
        """The structured-sparsity patterns (``sparsity``), in the file's order; empty when
        the description gives none."""
        from prism_core.kernel.description.sparsity import parse_sparsity

        return parse_sparsity(self.data.get("sparsity", ()))

    @functools.cached_property
    def numeric_formats(self) -> Mapping[str, NumericFormat]:
        """Every floating-point format the device computes (its features, peaks, sparsity and
        ``numeric_formats`` name it), by vocabulary name, sorted: Prism's description of each
        with the description file's ``numeric_formats`` entry over it."""
        from prism_core.kernel.description.numeric_formats import computed_types, effective_format

        given = {e["name"]: e for e in self.data.get("numeric_formats", ())}
        return MappingProxyType(
            {n: effective_format(n, given.get(n)) for n in sorted(computed_types(self.data))}
        )

    def numeric_format(self, name: str | DType) -> NumericFormat | None:
        """The device's format ``name`` (a vocabulary name such as ``"bf16"``, or a Prism
        dtype: ``"bfloat16"``, ``prism_core.float8_e4m3fn``), or ``None`` where the device
        does not compute it.  A name that is no floating-point format raises ``ValueError``."""
        from prism_core.kernel.description.numeric_formats import vocabulary_name

        return self.numeric_formats.get(vocabulary_name(name))

    @functools.cached_property
    def features(self) -> Mapping[str, Feature]:
        # Built once: requirement matching asks for features many times per device.
        out: dict[str, Feature] = {}
        for f in self.data.get("features", ()):
            ops = {op["name"]: frozenset(op["data_types"]) for op in f.get("operations", ())}
            out[f["name"]] = Feature(f["name"], f["version"], ops, f.get("description", ""))
        return MappingProxyType(out)

    def feature(self, name: str) -> Feature | None:
        return self.features.get(name)

    @functools.cached_property
    def cpu_flags(self) -> frozenset[str]:
        """The CPU instruction-set flags the description lists (``detection.cpu.features``, as
        ``/proc/cpuinfo`` names them: ``avx512f``, ``sve``); empty for devices that are not
        CPUs.  Requirements match them by name (``{"avx512f": True}``, ``{"flag:sve": True}``).
        """
        cpu = (self.data.get("detection") or {}).get("cpu") or {}
        return frozenset(cpu.get("features") or ())

    def has_feature(self, name: str, version_spec: str | int | bool | None = None) -> bool:
        """Whether the device has feature ``name``, at a version meeting ``version_spec``.

        ``version_spec`` takes the value forms of a requirement clause: a specifier (``">=3"``,
        ``">=2,<4"``), a number (at least that version), ``True`` or ``None`` (present),
        ``False`` (absent), a string (equal to it) or a list of strings (equal to one of them).
        ``has_feature(name, spec)`` is ``satisfies({"feature:" + name: spec}).ok``, computed by
        the same code; a malformed ``spec`` raises :class:`RequirementError`.
        """
        from prism_core.kernel.description.requirements import Requirement
        from prism_core.kernel.errors import RequirementError

        if not isinstance(name, str):
            raise TypeError(
                "has_feature(): name must be a feature name such as 'tensor_cores', got "
                f"{name!r} ({type(name).__name__})"
            )
        spec = True if version_spec is None else version_spec
        try:
            requirement = Requirement({f"feature:{name}": spec})
        except RequirementError as exc:
            raise RequirementError(
                f"has_feature({name!r}, version_spec={version_spec!r}): {exc}"
            ) from None
        return requirement.match(self).ok

    def supports(self, op: str, dtype: str) -> bool:
        """Whether some feature of the device accelerates ``op`` in ``dtype``."""
        return any(f.supports(op, dtype) for f in self.features.values())

    def features_for(self, op: str, dtype: str) -> tuple[Feature, ...]:
        """The features that accelerate ``op`` in ``dtype``."""
        return tuple(f for f in self.features.values() if f.supports(op, dtype))

    def iter_supported(self) -> Iterator[tuple[str, str, str]]:
        """Every (feature, op, dtype) triple the description declares."""
        for f in self.features.values():
            for op, dtypes in f.operations.items():
                yield from ((f.name, op, dt) for dt in sorted(dtypes))

    def satisfies(self, requirements: Mapping[str, object]) -> RequirementMatch:
        """Match a requirement mapping against this device; never raises for unmet clauses."""
        from prism_core.kernel.description.requirements import Requirement

        req = requirements if isinstance(requirements, Requirement) else Requirement(requirements)
        return req.match(self)

    def to_dict(self) -> dict[str, Any]:
        """The resolved description as plain data (a deep copy)."""
        return copy.deepcopy(dict(self.data))

    def __repr__(self) -> str:
        return f"<DeviceDescription {self.device_type!r} ({self.name})>"
