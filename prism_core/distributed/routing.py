"""Routing: which workers of a cluster can run a task, and why each other one cannot.

A task asks for a requirement mapping, an op (some variant of it must be able to run there),
or both.  :func:`route` matches it, on the client, against what every worker advertised, by
dispatch's own rules (``kernel/dispatch/eligibility.py``), and returns a :class:`Route`: the workers
that qualify, each with the device the task runs under there, and every other worker's
reasons, clause by clause.  A route with no worker is an answer (the client raises
:class:`NoWorkerError`), not a task left waiting.  docs/distributed.md, "Routing".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core.distributed.advert import WorkerDescription, WorkerDevice
from prism_core.kernel.description.requirements import Requirement
from prism_core.kernel.errors import PrismError

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op

__all__ = ["ClusterView", "NoWorkerError", "Route", "WorkerScope", "route"]


@dataclass(frozen=True)
class WorkerScope:
    """Where a task runs on a worker: under ``prism.device(device_type, simulate=simulated)``,
    or in automatic mode (``device_type`` ``None``)."""

    device_type: str | None = None
    simulated: bool = False

    __module__ = "prism_core.distributed"

    def __str__(self) -> str:
        if self.device_type is None:
            return "automatic (dispatch picks among the worker's present devices)"
        return f"under device {self.device_type}" + (" (simulated)" if self.simulated else "")


AUTOMATIC = WorkerScope()


@dataclass(frozen=True)
class ClusterView:
    """What the client knows of the cluster: the descriptions of the workers that advertised,
    and for each live worker that did not, why (``problems``).  ``pending`` are those that may
    still advertise (the plugin is not set up there yet); the others failed (Prism not
    installed there, an incompatible version)."""

    scheduler: str
    workers: Mapping[str, WorkerDescription] = field(default_factory=lambda: MappingProxyType({}))
    problems: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    pending: frozenset[str] = frozenset()

    __module__ = "prism_core.distributed"

    @property
    def addresses(self) -> tuple[str, ...]:
        """Every live worker, advertised or not, sorted."""
        return tuple(sorted({*self.workers, *self.problems}))

    def name_of(self, address: str) -> str:
        desc = self.workers.get(address)
        return desc.name if desc is not None else ""


@dataclass(frozen=True)
class Route:
    """Where a task may run: ``accepted`` maps each qualifying worker to the :class:`WorkerScope`
    of the task there; ``rejected`` maps every other live worker to the reasons.  ``everywhere``
    is true when every live worker qualifies, in automatic mode (a plain Dask task, no
    restriction needed)."""

    scheduler: str
    requires: Mapping[str, Any] | None
    op: str | None
    accepted: Mapping[str, WorkerScope]
    rejected: Mapping[str, tuple[str, ...]]
    names: Mapping[str, str] = field(default_factory=dict)

    __module__ = "prism_core.distributed"

    @property
    def ok(self) -> bool:
        return bool(self.accepted)

    def __bool__(self) -> bool:
        return self.ok

    @property
    def workers(self) -> tuple[str, ...]:
        """The addresses of the qualifying workers, sorted."""
        return tuple(sorted(self.accepted))

    @property
    def everywhere(self) -> bool:
        return (
            bool(self.accepted)
            and not self.rejected
            and all(p == AUTOMATIC for p in self.accepted.values())
        )

    @property
    def uniform(self) -> WorkerScope | None:
        """The placement shared by every qualifying worker, or ``None`` when they differ."""
        placements = set(self.accepted.values())
        return placements.pop() if len(placements) == 1 else None

    @property
    def task(self) -> str:
        """What was asked: ``requires {...}``, ``op 'matmul'``, or both."""
        parts = []
        if self.op is not None:
            parts.append(f"op {self.op!r}")
        if self.requires is not None:
            parts.append(f"requires {dict(self.requires)!r}")
        return " with ".join(parts) or "no requirement"

    def _who(self, address: str) -> str:
        name = self.names.get(address, "")
        return f"{address} ({name})" if name and name != address else address

    def lines(self) -> list[str]:
        """One line per worker, qualifying ones first: ``+ ADDRESS (NAME): under device X``,
        ``- ADDRESS (NAME): DEVICE: reason; reason``."""
        out = [f"  + {self._who(a)}: {self.accepted[a]}" for a in sorted(self.accepted)]
        for address in sorted(self.rejected):
            reasons = self.rejected[address]
            out.append(f"  - {self._who(address)}: {reasons[0] if reasons else 'rejected'}")
            out.extend(f"      {r}" for r in reasons[1:])
        return out

    def __str__(self) -> str:
        n = len(self.accepted) + len(self.rejected)
        head = (
            f"route for {self.task} on {self.scheduler}: {len(self.accepted)} of {n} "
            f"worker{'s' if n != 1 else ''}"
        )
        return "\n".join([head, *self.lines()])

    def as_dict(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler,
            "requires": None if self.requires is None else dict(self.requires),
            "op": self.op,
            "accepted": {
                a: {"device": p.device_type, "simulated": p.simulated}
                for a, p in sorted(self.accepted.items())
            },
            "rejected": {a: list(r) for a, r in sorted(self.rejected.items())},
            "names": dict(self.names),
        }


class NoWorkerError(PrismError, LookupError):
    """No worker of the cluster can run a task: raised at submission, with every worker's
    reasons (``route.rejected``), where plain Dask would leave the task waiting forever."""

    __module__ = "prism_core.distributed"

    def __init__(self, route: Route, waited: float = 0.0) -> None:
        self.route = route
        self.waited = waited
        if not route.rejected:
            message = (
                f"no worker can run a task with {route.task}: the cluster at {route.scheduler} "
                "has no workers; start some (`dask worker "
                f"{route.scheduler} --preload prism_core.distributed.preload`) or wait for "
                "them first (client.wait_for_workers(n))"
            )
        else:
            n = len(route.rejected)
            waited_text = (
                f" (after waiting {waited:.1f} s for workers that had not advertised)"
                if waited > 0
                else ""
            )
            message = "\n".join(
                [
                    f"no worker can run a task with {route.task}: none of the {n} "
                    f"worker{'s' if n != 1 else ''} of the cluster at {route.scheduler} "
                    f"qualifies{waited_text}:",
                    *route.lines(),
                    "Dask would wait for such a worker forever; start a worker whose devices "
                    "qualify (docs/distributed.md), or change what the task asks for.",
                ]
            )
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        # Rebuilt from its route (its message is made from it), not from the message.
        return (type(self), (self.route, self.waited))

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


# -- matching -------------------------------------------------------------------------------


def _drive_requirement(drives: Mapping[str, Any]) -> Requirement | str:
    try:
        return Requirement(drives)
    except PrismError as exc:  # a worker's backend declares a malformed `drives`
        return f"its 'drives' cannot be read ({exc})"


def _variant_reasons(
    op: Op,
    dev: WorkerDevice,
    backends: Mapping[str, Mapping[str, Any]],
    dtypes: Sequence[str],
) -> list[str] | None:
    """``None`` when some variant of ``op`` can run on ``dev`` with these ``backends``, else
    why each variant cannot (dispatch's reasons, without availability, which only the worker
    can ask)."""
    desc = dev.description
    reasons: list[str] = []
    for variant in list(op.variants):
        drives = backends.get(variant.backend)
        if drives is None:
            reasons.append(f"{variant.name}: backend {variant.backend!r} is not installed there")
            continue
        drive = _drive_requirement(drives)
        if isinstance(drive, str):
            reasons.append(f"{variant.name}: backend {variant.backend!r}: {drive}")
            continue
        driven = drive.match(desc)
        if not driven:
            reasons.append(
                f"{variant.name}: {variant.backend!r} does not drive {desc.device_type} "
                f"({driven.explain()})"
            )
            continue
        match = variant.requirement.match(desc)
        if not match:
            reasons.append(f"{variant.name}: {match.explain()}")
            continue
        if variant.dtype_support:
            missing = [d for d in dict.fromkeys(dtypes) if not desc.supports(op.name, d)]
            if missing:
                reasons.append(
                    f"{variant.name}: no feature accelerates {op.name} in {', '.join(missing)}"
                )
                continue
        return None
    if not reasons:
        reasons.append(f"op {op.name!r} has no variants")
    return reasons


def _device_reasons(
    dev: WorkerDevice,
    worker: WorkerDescription,
    requirement: Requirement | None,
    op: Op | None,
    dtypes: Sequence[str],
) -> list[str] | None:
    """``None`` when ``dev`` can run the task, else why not."""
    if requirement is not None:
        match = requirement.match(dev.description)
        if not match:
            return list(match.reasons)
        if op is None:
            return None
        if dev.simulated:
            if any(v.reference for v in op.variants):
                return None
            return [
                f"a simulated device runs an op's reference implementation, and {op.name!r} "
                "has none"
            ]
        return _variant_reasons(op, dev, worker.backends, dtypes)
    if op is None:
        return None
    if dev.simulated:
        return [
            "simulated: considered only for tasks whose requirement it meets (automatic "
            "dispatch on the worker sees its present devices only)"
        ]
    return _variant_reasons(op, dev, worker.backends, dtypes)


def route(
    view: ClusterView,
    requirement: Requirement | None = None,
    op: Op | None = None,
    dtypes: Sequence[str] = (),
) -> Route:
    """Which workers of ``view`` can run a task that asks for ``requirement`` and/or ``op``
    (with arrays of ``dtypes``), and why each other one cannot; never raises.

    A worker qualifies through the first of its devices that can run the task, present devices
    before simulated ones, in the order the worker advertised them; with a requirement, the
    task runs there under that device.
    """
    accepted: dict[str, WorkerScope] = {}
    rejected: dict[str, tuple[str, ...]] = {}
    for address in view.addresses:
        worker = view.workers.get(address)
        if worker is None:
            rejected[address] = (view.problems.get(address, "has not advertised"),)
            continue
        why: list[str] = []
        for dev in worker.devices:
            reasons = _device_reasons(dev, worker, requirement, op, dtypes)
            if reasons is None:
                accepted[address] = (
                    WorkerScope(dev.device_type, dev.simulated)
                    if requirement is not None
                    else AUTOMATIC
                )
                break
            why.append(f"{dev.label}: {'; '.join(reasons)}")
        else:
            if not worker.devices:
                why.append("advertises no device")
            why.extend(f"note: {n}" for n in worker.notes)
            rejected[address] = tuple(why)
    # Plain dicts, not read-only views: a route travels pickled inside a NoWorkerError (raised
    # in a task that submits tasks), and mapping proxies cannot be pickled.
    return Route(
        scheduler=view.scheduler,
        requires=None if requirement is None else dict(requirement.mapping),
        op=None if op is None else op.name,
        accepted=accepted,
        rejected=rejected,
        names={a: w.name for a, w in view.workers.items()},
    )
