"""Resolved device descriptions: the capability model that dispatch and users query."""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core._public import home

if TYPE_CHECKING:
    from prism_core._description.requirements import RequirementMatch

__all__ = ["DeviceDescription", "Feature", "MemoryLevel", "Partition"]


@home("prism_core.hardware")
@dataclass(frozen=True)
class MemoryLevel:
    """One level of a device's memory hierarchy."""

    level: str
    size_bytes: int | None = None
    bandwidth_gbps: float | None = None
    scope: str = "device"
    technology: str | None = None


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
        from prism_core._description.requirements import version_meets

        return version_meets(self.version, spec)


@home("prism_core.hardware")
@dataclass(frozen=True)
class Partition:
    """What software sees of a package in one partition mode: ``count`` devices, each described
    by ``device_type`` (an MI250X is two ``amd.mi250x-gcd``; a Max 1550 in FLAT mode is two
    ``intel.max-1550-stack``)."""

    mode: str
    device_type: str
    count: int
    description: str = ""


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

    # -- identity -------------------------------------------------------------------------
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

    # -- generations and partitions ---------------------------------------------------------
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
        return tuple(Partition(**p) for p in self.data.get("partitions", ()))

    def partition(self, mode: str | None = None) -> Partition | None:
        """The partition for ``mode`` (default: the driver's default mode), or ``None`` when the
        description has no partitions.  Raises :class:`LookupError` for a mode it does not have.
        """
        if not self.partitions:
            return None
        if mode is None:
            return self.partitions[0]
        for part in self.partitions:
            if part.mode == mode:
                return part
        modes = ", ".join(p.mode for p in self.partitions)
        raise LookupError(f"{self.device_type} has no partition mode {mode!r}; its modes: {modes}")

    # -- numbers --------------------------------------------------------------------------
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
        for m in self.memory:
            if m.level == level:
                return m
        return None

    @property
    def memory_bytes(self) -> int | None:
        """Size of the device's main (``global``) memory, when the description gives it."""
        glob = self.memory_level("global")
        return glob.size_bytes if glob else None

    @property
    def peak_tflops(self) -> Mapping[str, float]:
        return dict(self.data.get("peak_tflops", {}))

    def peak(self, dtype: str) -> float | None:
        """Peak dense throughput for ``dtype`` in TFLOP/s (TOPS for integers), or ``None``."""
        value = self.data.get("peak_tflops", {}).get(dtype)
        return None if value is None else float(value)

    @property
    def tdp_watts(self) -> float | None:
        return self.data.get("tdp_watts")

    @property
    def attributes(self) -> Mapping[str, Any]:
        return dict(self.data.get("attributes", {}))

    def attribute(self, name: str, default: Any = None) -> Any:
        return self.data.get("attributes", {}).get(name, default)

    # -- features -------------------------------------------------------------------------
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
        from prism_core._description.requirements import Requirement
        from prism_core._errors import RequirementError

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
                for dt in sorted(dtypes):
                    yield f.name, op, dt

    # -- requirements ---------------------------------------------------------------------
    def satisfies(self, requirements: Mapping[str, Any]) -> RequirementMatch:
        """Match a requirement mapping against this device; never raises for unmet clauses."""
        from prism_core._description.requirements import Requirement

        req = requirements if isinstance(requirements, Requirement) else Requirement(requirements)
        return req.match(self)

    # -- export ---------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The resolved description as plain data (a deep copy)."""
        return copy.deepcopy(dict(self.data))

    def __repr__(self) -> str:
        return f"<DeviceDescription {self.device_type!r} ({self.name})>"
