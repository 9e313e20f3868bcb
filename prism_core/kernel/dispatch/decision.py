"""What :func:`prism_core.explain` returns: a dispatch decision, each candidate's verdict and
what ordered them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from prism_core.kernel.public import home
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core.kernel.contract.variant import Variant

__all__ = ["HOW_DECIDED", "Basis", "Candidate", "Decision"]

#: How a choice was made: the one vocabulary of ``explain``, ``prism bench`` and ``prism tune``
#: (docs/performance.md, "How a choice was made").
HOW_DECIDED: Mapping[str, str] = MappingProxyType(
    {
        "measured": "timed on this host: the chosen variant was faster than the others by a "
        "significant gap",
        "tie": "timed on this host, and no variant was significantly faster than the declared "
        "first (the gap is within the noise), so the declared order stands",
        "modelled": "predicted by the performance model (nothing was timed for this size), with "
        "the figures `prism bench` measured on this host where it calibrated them",
        "declared": "the plugins' declared order (nothing timed or modelled applies)",
    }
)


@home("prism_core.tuning")
@dataclass(frozen=True)
class Basis:
    """What decided the order of a plan's candidates, for :func:`explain`: ``decided_by`` is
    one of :data:`HOW_DECIDED` (measured by the tuner for this op, device set, dtype and size
    bucket; modelled, the note saying which figures were calibrated on this host; declared);
    ``times`` are seconds per call by variant name."""

    decided_by: str = "declared"
    note: str = ""
    times: tuple[tuple[str, float], ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"decided_by": self.decided_by, "note": self.note, "times": dict(self.times)}


@dataclass(frozen=True)
class Candidate:
    """One variant's verdict in a decision."""

    variant: str
    backend: str
    accepted: bool
    device: str | None = None
    reasons: tuple[str, ...] = ()
    rank: tuple[int | str, ...] = ()
    priority: int = 0

    __module__ = "prism_core"

    @classmethod
    def rejected(cls, variant: Variant, reasons: Sequence[str]) -> Candidate:
        """``variant`` cannot run the call, for these reasons."""
        return cls(variant.name, variant.backend, False, None, tuple(reasons), (), variant.priority)

    def as_dict(self) -> dict[str, object]:
        return {
            "variant": self.variant,
            "backend": self.backend,
            "accepted": self.accepted,
            "device": self.device,
            "priority": self.priority,
            "reasons": list(self.reasons),
        }


@dataclass(frozen=True)
class Decision:
    """Why a call runs where it runs: every candidate, accepted or rejected with its reasons."""

    op: str
    scope: dict[str, object]
    candidates: tuple[Candidate, ...]
    chosen: str | None
    chosen_backend: str | None = None
    chosen_device: str | None = None
    executed: str | None = None
    from_cache: bool = False
    simulated: bool = False
    data_movement: tuple[str, ...] = ()
    signature: tuple[str, ...] = ()
    #: What ordered the candidates: ``basis.decided_by`` is one of :data:`HOW_DECIDED`.
    basis: Basis = Basis()

    __module__ = "prism_core"

    @property
    def decided_by(self) -> str:
        return self.basis.decided_by

    def as_dict(self) -> dict[str, object]:
        return {
            "op": self.op,
            "decided_by": self.basis.decided_by,
            "basis": self.basis.as_dict(),
            "scope": self.scope,
            "signature": list(self.signature),
            "chosen": self.chosen,
            "chosen_backend": self.chosen_backend,
            "chosen_device": self.chosen_device,
            "executed": self.executed,
            "simulated": self.simulated,
            "from_cache": self.from_cache,
            "data_movement": list(self.data_movement),
            "candidates": [c.as_dict() for c in self.candidates],
        }

    def __str__(self) -> str:
        lines = [f"{self.op}({', '.join(self.signature)})"]
        scope = self.scope
        # A spelling ("cpu", "cuda:1") says what it resolved to and names the device type.
        where = str(scope.get("device_asked") or scope.get("device") or "automatic")
        where += " (simulated)" if scope.get("simulated") else ""
        strict = ", strict" if scope.get("strict") else ""
        deferred = scope.get("check_errors") == "deferred"
        lines.append(
            f"  scope: device {where}, backend {scope.get('backend') or 'any'}, "
            f"prefer {scope.get('prefer')}{strict}"
            + (", errors deferred (the library's NaN or inf, no status read)" if deferred else "")
        )
        if self.chosen:
            device = f" for {self.chosen_device}" if self.chosen_device else ""
            cache = " (from cache)" if self.from_cache else ""
            lines.append(f"  chosen: {self.chosen} on {self.chosen_backend}{device}{cache}")
        else:
            lines.append("  chosen: none: no installed variant can run here")
        basis = self.basis
        note = f": {basis.note}" if basis.note else ""
        lines.append(f"  decided by: {basis.decided_by}{note}")
        if basis.times:
            times = ", ".join(f"{name} {seconds_text(t)}" for name, t in basis.times)
            lines.append(f"  times: {times}")
        if self.simulated and self.executed:
            lines.append(f"  executes: {self.executed} (the device is simulated)")
        lines.extend(f"  moves: {move}" for move in self.data_movement)
        lines.append("  candidates:")
        for c in self.candidates:
            mark = "+" if c.accepted else "-"
            on = f" on {c.device}" if c.device else ""
            why = f": {'; '.join(c.reasons)}" if c.reasons else ""
            lines.append(f"    {mark} {c.variant} [{c.backend}, priority {c.priority}]{on}{why}")
        return "\n".join(lines)
