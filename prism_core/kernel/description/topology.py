"""A device's links (the ``links`` key of a device file, format 2), to the host CPU or to other
devices; where ``links`` lists no link of a kind, format 1's total of both directions
(``host_link``, ``device_link``) stands for one link of that kind.  The path a copy takes over
them is ``prism_core._transfer_paths``'s.  The rules: docs/device-files.md, "links".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prism_core.kernel.public import home

__all__ = [
    "KINDS", "Link", "device_link_total", "host_link_total", "host_per_direction", "parse_links",
    "peer_link", "topology_problems",
]  # fmt: skip

#: What a link reaches: the host CPU and its memory, or another device.
KINDS = ("host", "peer")
#: How far a format-1 total may differ from the total of ``links`` (rounding in datasheets).
_TOLERANCE = 0.005


def _finite(value: float) -> float | None:
    """``value``, or ``None`` where it overflowed: a bandwidth too large to compute with is
    no figure (nothing is costed over it), never an infinite one that makes a copy free."""
    return value if math.isfinite(value) else None


def _sum(values: Iterable[float | None]) -> float | None:
    """The sum of the known ``values``; ``None`` when none is known or it overflows."""
    known = [v for v in values if v is not None]
    return _finite(sum(known)) if known else None


class _Device(Protocol):
    """What this module reads of a description (``DeviceDescription``, which imports this
    module: named by its shape to keep the imports one way)."""

    def is_a(self, device_type: str) -> bool: ...


@home("prism_core.hardware")
@dataclass(frozen=True)
class Link:
    """One kind of link of a device: an entry of its ``links``.

    ``kind`` is ``"host"`` or ``"peer"``; ``count`` links of ``interface`` (``pcie5-x16``),
    each carrying ``per_direction_gbps`` GB/s (10^9 B/s) one way (``None`` where not published:
    then no copy is costed over it).  ``peer`` (peer links only) is ``"in_package"`` or
    ``"external"`` (``None`` where a format-1 ``device_link`` does not say); ``peer_device_type``
    the device at the other end when not of this device's type.  ``derived_from`` names the
    format-1 key (``"host_link"``, ``"device_link"``) a link stands for, carrying half its total
    each way; ``None`` for an entry of ``links``.
    """

    kind: str
    interface: str
    count: int
    per_direction_gbps: float | None
    peer: str | None = None
    peer_device_type: str | None = None
    description: str = ""
    derived_from: str | None = None

    @property
    def one_way_gbps(self) -> float | None:
        """What all ``count`` links carry in one direction, GB/s; ``None`` when the bandwidth
        is not published."""
        per = self.per_direction_gbps
        return None if per is None else _finite(self.count * per)

    @property
    def total_gbps(self) -> float | None:
        """Both directions of all ``count`` links, GB/s: what format 1's ``host_link`` and
        ``device_link`` give (2 x count x per direction); ``None`` when not published."""
        one_way = self.one_way_gbps
        return None if one_way is None else _finite(2 * one_way)

    @property
    def in_package(self) -> bool:
        """Whether the other end is a sibling die of the same package."""
        return self.peer == "in_package"

    def seconds(self, nbytes: float) -> float:
        """Seconds to move ``nbytes`` one way over all the links at once (peak bandwidth);
        a ``ValueError`` for a link whose bandwidth is not published."""
        one_way = self.one_way_gbps
        if one_way is None:
            raise ValueError(f"{self.describe()}: no copy can be costed over it")
        return nbytes / 1e9 / one_way  # in GB first: one_way * 1e9 may overflow

    def describe(self) -> str:
        """``"18 x nvlink4 links to other packages (25 GB/s each way per link: 450 each way,
        900 both ways)"``, ``"pcie5-x16 host link (64 GB/s each way, 128 both ways)"``."""
        several = self.count != 1
        what = {
            "host": "host link",
            "in_package": "link in the package",
            "external": "link to another package",
        }.get(self.peer or self.kind, "device link")
        if several:
            what = what.replace("link", "links", 1).replace("another package", "other packages")
        head = f"{self.count} x {self.interface}" if several else self.interface
        head += f" {what}"
        if self.peer_device_type:
            head += f" (to {self.peer_device_type})"
        if self.derived_from:
            return (
                f"{head} ({self.one_way_gbps:g} GB/s each way: half of {self.derived_from} "
                f"{self.total_gbps:g})"
            )
        if self.per_direction_gbps is None:
            return f"{head} (bandwidth not published)"
        per = f"{self.per_direction_gbps:g} GB/s each way"
        if several:
            per += f" per link: {self.one_way_gbps:g} each way"
        return f"{head} ({per}, {self.total_gbps:g} both ways)"

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind, "interface": self.interface}
        out["count"] = self.count
        for key in (
            "per_direction_gbps",
            "peer",
            "peer_device_type",
            "derived_from",
            "description",
        ):
            if getattr(self, key) not in (None, ""):
                out[key] = getattr(self, key)
        return out


def _from_total(key: str, kind: str, value: object) -> Link | None:
    """The one link a format-1 ``host_link`` or ``device_link`` stands for."""
    if not isinstance(value, Mapping) or not value.get("bandwidth_gbps"):
        return None
    interface = str(value.get("interface") or key.replace("_", "-"))
    return Link(kind, interface, 1, float(value["bandwidth_gbps"]) / 2, derived_from=key)


def parse_links(data: Mapping[str, Any]) -> tuple[Link, ...]:
    """The links of a validated (resolved) document: the entries of ``links``, in the file's
    order; for a kind it lists none of, the link ``host_link`` or ``device_link`` stands for."""
    given = tuple(
        Link(
            kind=str(e["kind"]),
            interface=str(e["interface"]),
            count=int(e["count"]),
            per_direction_gbps=(
                float(e["per_direction_gbps"]) if "per_direction_gbps" in e else None
            ),
            peer=e.get("peer"),
            peer_device_type=e.get("peer_device_type"),
            description=str(e.get("description", "")),
        )
        for e in data.get("links") or ()
    )
    kinds = {link.kind for link in given}
    host = None if "host" in kinds else _from_total("host_link", "host", data.get("host_link"))
    peer = None if "peer" in kinds else _from_total("device_link", "peer", data.get("device_link"))
    return (*((host,) if host else ()), *given, *((peer,) if peer else ()))


def host_per_direction(links: Sequence[Link]) -> float | None:
    """GB/s the host links carry in one direction together (a host-to-device copy's peak);
    ``None`` when there is none."""
    return _sum(link.one_way_gbps for link in links if link.kind == "host")


def host_link_total(links: Sequence[Link]) -> float | None:
    """What ``host_link.bandwidth_gbps`` is when ``links`` is given: both directions of every
    host link; ``None`` without host links."""
    one_way = host_per_direction(links)
    return None if one_way is None else _finite(2 * one_way)


def _device_link_group(links: Sequence[Link]) -> list[Link]:
    peers = [link for link in links if link.kind == "peer"]
    external = [link for link in peers if link.peer != "in_package"]
    return external or peers


def device_link_total(links: Sequence[Link]) -> float | None:
    """What ``device_link.bandwidth_gbps`` is when ``links`` is given: both directions of the
    links to other packages, or, where there are none, of the links to siblings in the
    package; ``None`` without peer links."""
    return _sum(link.total_gbps for link in _device_link_group(links))


def peer_link(
    links: Sequence[Link], own_type: str, other: _Device, *, in_package: bool | None = None
) -> Link | None:
    """The fastest peer link (of a device of type ``own_type`` with ``links``) whose other end
    can be ``other``: one naming ``other``'s type or an ancestor of it in ``peer_device_type``,
    or naming none and ``other`` being of ``own_type``.  ``in_package=True`` takes only links
    to siblings in the package, ``False`` only the others, ``None`` any."""
    found = []
    for link in links:
        if link.kind != "peer":
            continue
        if in_package is not None and link.in_package != in_package:
            continue
        if other.is_a(link.peer_device_type or own_type):
            found.append(link)
    # A link of published bandwidth before one without.
    return max(found, key=lambda link: link.one_way_gbps or -1.0, default=None)


# -- checks of a file -------------------------------------------------------------------------


def topology_problems(
    doc: Mapping[str, object],
) -> Iterator[tuple[tuple[str | int, ...], str, bool]]:
    """What the schema cannot say of ``links`` and the memory levels: a ``peer`` or
    ``peer_device_type`` on a host link, a peer link that does not say where its other end is,
    ``host_link`` or ``device_link`` beside ``links`` with another total, and ``usable_bytes``
    over ``size_bytes``.  Yields (path, message, whether the key rather than its value is at
    fault)."""
    entries = doc.get("links")
    if isinstance(entries, list):
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict):
                continue
            if entry.get("kind") == "host":
                for key in ("peer", "peer_device_type"):
                    if key in entry:
                        yield (
                            ("links", i, key),
                            f"{key} is for links of kind peer; a host link ends at the host "
                            "CPU: drop it, or make the link kind: peer",
                            True,
                        )
            elif entry.get("kind") == "peer" and "peer" not in entry:
                yield (
                    ("links", i),
                    "a peer link says where its other end is: peer: in_package (a sibling die "
                    "of the same package) or peer: external (another package)",
                    False,
                )
        links = parse_links({"links": [e for e in entries if isinstance(e, dict)]})
        for key, total in (
            ("host_link", host_link_total(links)),
            ("device_link", device_link_total(links)),
        ):
            old = doc.get(key)
            given = old.get("bandwidth_gbps") if isinstance(old, dict) else None
            if total is None or not isinstance(given, (int, float)):
                continue
            if abs(given - total) > _TOLERANCE * max(given, total):
                what = (
                    "every host link"
                    if key == "host_link"
                    else "the peer links to other packages (to siblings in the package where "
                    "there are none)"
                )
                yield (
                    (key, "bandwidth_gbps"),
                    f"{key}.bandwidth_gbps is {given:g}, but links give {total:g} for it: both "
                    f"directions of {what}, 2 x count x per_direction_gbps; make them agree "
                    "(links is the truth, the format-1 key its total)",
                    False,
                )
    levels = doc.get("memory_hierarchy")
    if isinstance(levels, list):
        for i, level in enumerate(levels):
            if not isinstance(level, dict):
                continue
            usable, size = level.get("usable_bytes"), level.get("size_bytes")
            if isinstance(usable, int) and isinstance(size, int) and usable > size:
                yield (
                    ("memory_hierarchy", i, "usable_bytes"),
                    f"usable_bytes {usable} is more than size_bytes {size}: software cannot "
                    "allocate more than the level has",
                    False,
                )
