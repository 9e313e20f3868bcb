"""What a placed function would do with a call (``explain``) and what it did (``run``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prism_core._function.candidates import PlacementCandidate
    from prism_core.kernel.dispatch.fallback import FallbackRecord
    from prism_core.kernel.dispatch.movement import MoveRecord

__all__ = ["FunctionDecision", "FunctionReport"]


@dataclass(frozen=True)
class FunctionDecision:
    """Where a placed function would run a call, in the scope in force, without running it:
    every backend with why it can or cannot run the call, the one chosen and what decided."""

    function: str
    signature: str
    scope: dict[str, Any]
    candidates: tuple[PlacementCandidate, ...]
    chosen: str | None
    chosen_device: str | None
    #: What decided, in words: ``"backend 'torch' named by the scope"``, ``"measured: torch
    #: 1.2 ms vs numpy 3.4 ms"`` (a stored measurement, ``prism_core.tuning.tune(F, *args)``),
    #: ``"tie within the noise (...): where the arguments live"``, or untuned ``"where the
    #: arguments live"`` / ``"declared order: ..."`` (the arguments' backend,
    #: then NumPy, then by name).
    basis: str
    #: What the chosen placement moves, one sentence per array.
    data_movement: tuple[str, ...] = ()
    #: Which decided: ``"measured"``, ``"tie"`` (measured, no placement significantly faster
    #: than the declared first: the declared order stands), ``"declared"`` (untuned),
    #: ``"scope"`` or ``"fallback"``.
    decided_by: str = "declared"
    #: How the body runs on the chosen backend: ``"compiled whole (Backend.jit)"``, ``"eagerly:
    #: not traceable (...)"``, or empty where the backend has no compiler.
    compiled: str = ""

    def __str__(self) -> str:
        lines = [f"{self.function}({self.signature})"]
        where = (self.chosen or "nothing") + (
            f" on {self.chosen_device}" if self.chosen_device else ""
        )
        how = f", {self.compiled}" if self.compiled else ""
        lines.append(f"  runs on: {where} ({self.basis}){how}")
        lines += [f"  moves {m}" for m in self.data_movement]
        lines += [("  + " if c.ok else "  - ") + c.describe() for c in self.candidates]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "signature": self.signature,
            "scope": self.scope,
            "candidates": [c.as_dict() for c in self.candidates],
            "chosen": self.chosen,
            "chosen_device": self.chosen_device,
            "basis": self.basis,
            "decided_by": self.decided_by,
            "data_movement": list(self.data_movement),
            "compiled": self.compiled,
        }


@dataclass
class FunctionReport:
    """What one call of a placed function did (``F.run(*args)``): where it ran, each array it
    moved there and back, the arguments written back, the fallbacks, and the time."""

    function: str
    backend: str | None = None
    device: str | None = None
    seconds: float = 0.0
    moves: list[MoveRecord] = field(default_factory=list)
    #: One sentence per argument moved by copy and written back into the caller's array.
    write_backs: list[str] = field(default_factory=list)
    fallbacks: list[FallbackRecord] = field(default_factory=list)
    #: How the body ran where the backend compiles (``Backend.jit``): ``"compiled"``,
    #: ``"compiled: traced and compiled on this call"`` (the time includes the compilation), or
    #: ``"eager: not traceable (...)"``; empty where the backend has no compiler.
    compiled: str = ""

    def __str__(self) -> str:
        where = (self.backend or "nothing") + (f" on {self.device}" if self.device else "")
        how = f", {self.compiled}" if self.compiled else ""
        lines = [f"{self.function}: ran on {where} in {self.seconds * 1e3:.3f} ms{how}"]
        lines += [f"  moved {m.describe()}" for m in self.moves]
        lines += [f"  wrote back {w}" for w in self.write_backs]
        lines += [f"  fell back: {f.variant} failed ({f.error})" for f in self.fallbacks]
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {
            "function": self.function,
            "backend": self.backend,
            "device": self.device,
            "seconds": self.seconds,
            "moves": [m.as_dict() for m in self.moves],
            "write_backs": list(self.write_backs),
            "fallbacks": [vars(f) for f in self.fallbacks],
            "compiled": self.compiled,
        }
