"""The path a copy takes between the host and devices, over the links their descriptions list
(``prism_core.kernel.description.topology``), and what it costs one way: the split's records and
its modelled ratio use it.  The rules: docs/device-files.md, "links".
"""

from __future__ import annotations

from dataclasses import dataclass

from prism_core.kernel.description.device import DeviceDescription
from prism_core.kernel.description.topology import Link, host_per_direction
from prism_core.kernel.public import home

__all__ = ["TransferPath", "transfer_path"]


def _host_hop(desc: DeviceDescription) -> Link | None:
    """The host links of ``desc`` as one hop (all of them carry a copy together)."""
    hosts = [link for link in desc.links if link.kind == "host" and link.one_way_gbps]
    if len(hosts) <= 1:
        return hosts[0] if hosts else None
    together = host_per_direction(hosts)
    if together is None:
        return None
    return Link("host", "+".join(f"{link.count} x {link.interface}" for link in hosts), 1, together)


@home("prism_core.hardware")
@dataclass(frozen=True)
class TransferPath:
    """The links a copy from ``source`` to ``destination`` crosses (``"host"`` or a device
    type), in order: none when nothing moves (host to host, a device to itself), one for a copy
    over a host link or a peer link, two for a copy between devices with no link between them
    (staged through host memory: out over one's host link, in over the other's)."""

    source: str
    destination: str
    hops: tuple[Link, ...] = ()

    @property
    def one_way_gbps(self) -> float | None:
        """The slowest hop's bandwidth in the direction of the copy, GB/s; ``None`` when
        nothing moves."""
        return min((hop.one_way_gbps or 0.0 for hop in self.hops), default=None)

    def seconds(self, nbytes: float) -> float:
        """Seconds to move ``nbytes`` along the path at peak bandwidth, each hop after the
        other; ``0.0`` when nothing moves."""
        return sum(hop.seconds(nbytes) for hop in self.hops)

    def describe(self) -> str:
        """``"host -> nvidia.h100-sxm over the pcie5-x16 host link (64 GB/s each way, 128 both
        ways)"``."""
        head = f"{self.source} -> {self.destination}"
        if not self.hops:
            return f"{head}: nothing moves"
        if len(self.hops) == 1:
            return f"{head} over the {self.hops[0].describe()}"
        hops = "; then the ".join(h.describe() for h in self.hops)
        return f"{head} through host memory: the {hops}"


def transfer_path(
    source: DeviceDescription | None, destination: DeviceDescription | None
) -> TransferPath | None:
    """The path of a copy from ``source`` to ``destination`` (``None``, or a CPU: host memory).

    Host to a device: its host links, one way.  A device to another of the same device type:
    nothing moves (it is taken to be the same device).  Between two devices: the fastest peer
    link of the source's that reaches the destination, in the package or not; without one,
    through host memory.  ``None`` when a hop it needs is not described (a device without a
    host link)."""
    src = "host" if source is None or source.kind == "cpu" else source.device_type
    dst = "host" if destination is None or destination.kind == "cpu" else destination.device_type
    if src == dst:
        return TransferPath(src, dst)
    if src == "host":
        assert destination is not None
        hop = _host_hop(destination)
        return None if hop is None else TransferPath(src, dst, (hop,))
    assert source is not None
    if dst == "host":
        hop = _host_hop(source)
        return None if hop is None else TransferPath(src, dst, (hop,))
    assert destination is not None
    direct = source.peer_link(destination)
    if direct is not None and direct.one_way_gbps is not None:
        return TransferPath(src, dst, (direct,))
    out, into = _host_hop(source), _host_hop(destination)
    if out is None or into is None:
        return None
    return TransferPath(src, dst, (out, into))
