"""What a tuning measured, decided and stored: one call's :class:`TuneCase`, the
:class:`TuneReport` of a run of them, each in words, and the :class:`Keeper` that stores tuned
choices as they are measured.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core._tuning.measurements import Measurement
from prism_core.kernel.public import home
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core._tuning.candidates import Candidates

__all__ = ["Keeper", "TuneCase", "TuneReport", "choice_text", "stored_case"]


@home("prism_core.tuning")
@dataclass(frozen=True)
class TuneCase:
    """The tuning of one call: what was measured and what it decided.

    ``decided`` says how, in the words of ``HOW_DECIDED`` (docs/performance.md, "How a
    choice was made"): ``"measured"`` (``winner`` is faster than the others by a significant
    gap: dispatch runs it, declared first or not), ``"tie"`` (no variant is significantly
    faster than the declared first: the declared order stands and ``winner`` is the declared
    first), ``"only"`` (one variant only: nothing to choose) or ``"failed"`` (nothing could be
    timed).
    """

    op: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str | None
    bucket: int
    devices: str
    measurements: tuple[Measurement, ...]
    declared: str | None
    winner: str | None
    decided: str
    gap: float = 0.0
    skipped: tuple[str, ...] = ()

    def seconds(self, variant: str) -> float | None:
        for m in self.measurements:
            if m.variant == variant and m.error is None:
                return m.seconds
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "shapes": [list(s) for s in self.shapes],
            "dtype": self.dtype,
            "bucket": self.bucket,
            "devices": self.devices,
            "declared": self.declared,
            "winner": self.winner,
            "decided": self.decided,
            "gap": self.gap,
            "measurements": [m.as_dict() for m in self.measurements],
            "skipped": list(self.skipped),
        }


@home("prism_core.tuning")
@dataclass(frozen=True)
class TuneReport:
    """What :func:`tune` measured and stored.

    ``stored`` tuned choices are in the file ``path``; ``unstored`` could not be written there
    (``problems`` says why) and last only as long as the store that kept them in memory."""

    cases: tuple[TuneCase, ...]
    stored: int = 0
    path: str | None = None
    problems: tuple[str, ...] = ()
    seconds: float = 0.0
    unstored: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "cases": [c.as_dict() for c in self.cases],
            "stored": self.stored,
            "unstored": self.unstored,
            "path": self.path,
            "problems": list(self.problems),
            "seconds": self.seconds,
        }

    def __str__(self) -> str:
        lines = []
        for c in self.cases:
            shape = " ".join("x".join(map(str, s)) for s in c.shapes)
            times = ", ".join(
                f"{m.variant} {seconds_text(m.seconds)}{_first_call_text(m)}"
                for m in sorted(c.measurements, key=lambda m: m.seconds)
                if m.error is None
            )
            lines.append(f"{c.op} {c.dtype or ''} [{shape}]: {_verdict(c)}")
            if times:
                lines.append(f"    {times}")
            lines.extend(f"    {line}" for line in _untimed(c.measurements))
            lines.extend(f"    {s}" for s in c.skipped if ": declined: " in s)  # not timed
        where = f" in {self.path}" if self.path else ""
        took = f"({self.seconds:.1f} s)"
        if self.unstored:
            lines.append(
                f"{self.stored} of {self.stored + self.unstored} tuned choice(s) stored{where}; "
                f"{self.unstored} not stored, kept for this process only (see the problems) {took}"
            )
        else:
            lines.append(f"{self.stored} tuned choice(s) stored{where} {took}")
        lines.extend(f"problem: {p}" for p in self.problems)
        return "\n".join(lines)


def _untimed(measurements: Iterable[Measurement]) -> list[str]:
    """Why each variant without a time has none, in its ``error``'s words (those of the JSON):
    ``numpy.add, torch.add not timed: the time budget ran out``, ``jax.add failed: ...``."""
    why: dict[str, list[str]] = {}
    for m in measurements:
        if m.error is not None:
            why.setdefault(m.error, []).append(m.variant)
    return [
        f"{', '.join(names)} {error}" if error.startswith("not timed") else
        f"{', '.join(names)} failed: {error}"
        for error, names in why.items()
    ]  # fmt: skip


def _verdict(c: TuneCase) -> str:
    """What a case kept and what its measurements say of it: by how much the kept variant is
    faster than the declared first (measured) or than the fastest other (declared), or that the
    gap is within the noise (a tie)."""
    if c.decided == "only":
        return f"{c.winner} (only: the one variant that can run)"
    timed = {m.variant: m for m in c.measurements if m.error is None}
    kept = timed.get(c.winner or "")
    if c.decided == "failed" or kept is None:
        return "nothing could be timed"
    others = [m for m in timed.values() if m.variant != c.winner]
    if not others:
        return f"{c.winner} ({c.decided}: the others could not be timed)"
    rival = min(others, key=lambda m: (m.seconds, m.variant))
    if c.decided == "measured":
        faster = _ratio_text(rival.seconds, kept.seconds)
        return f"{c.winner} (measured: {faster} faster than {rival.variant})"
    apart = _apart(rival.variant, rival.seconds, kept.seconds)
    return f"{c.winner} (tie, the declared first: {apart})"


def choice_text(winner: str, decided: str, times: Mapping[str, float]) -> str:
    """A stored choice in words, from its times (the minima; the rounds are not stored): by how
    much ``winner`` is faster than the fastest other variant, or that they tie.

    ``decided`` is the entry's: ``"measured"`` (the tuner found the winner significantly faster
    than the others) or ``"tie"`` (none significantly faster than the declared first: the
    declared order stands)."""
    kept = times.get(winner)
    others = {v: t for v, t in times.items() if v != winner}
    if kept is None or not others:
        return decided
    rival, seconds = min(others.items(), key=lambda kv: (kv[1], kv[0]))
    if decided == "measured":
        return f"measured: {_ratio_text(seconds, kept)} faster than {rival}"
    return f"tie: {_apart(rival, seconds, kept)}"


def _apart(rival: str, seconds: float, kept: float) -> str:
    if seconds >= kept:
        return f"{rival} {_ratio_text(seconds, kept)} slower at the minimum"
    return f"{rival} {_ratio_text(kept, seconds)} faster at the minimum"


def _first_call_text(m: Measurement) -> str:
    """`` (first call 310 ms: compiles per shape)`` where the backend compiles, else empty."""
    if m.first_call is None:
        return ""
    return f" (first call {seconds_text(m.first_call)}: {m.backend} compiles per shape)"


def _ratio_text(slow: float, fast: float) -> str:
    """How much faster ``fast`` seconds are than ``slow``: ``12%`` below twice, ``40x`` above."""
    ratio = slow / max(fast, 1e-12)
    if ratio < 2:
        return f"{ratio - 1:.0%}"
    return f"{ratio:.3g}x" if ratio < 100 else f"{ratio:.0f}x"


# -- what is stored ----------------------------------------------------------------------------


def stored_case(found: Candidates, stored: Any) -> TuneCase | None:
    """The case the tuning records ``stored`` hold for the call whose candidates are ``found``
    (same op, devices, dtype, size bucket and variants, measured on this host with the same
    software and settings: the records' fingerprint), or ``None`` when they hold none."""
    if found.dtype is None or len(found.runners) < 2:
        return None
    entry = stored.lookup(found.op, found.devices, found.dtype, found.bucket, found.variants)
    if entry is None:
        return None
    by_name = {r.variant: r for r in found.runners}
    measurements = tuple(
        Measurement(v, by_name[v].backend, by_name[v].device, t, t)
        for v, t in sorted(entry.times.items(), key=lambda kv: kv[1])
        if v in by_name
    )
    declared = found.runners[0].variant
    first = entry.times.get(declared)
    gap = 1.0 - min(entry.times.values()) / first if first else 0.0
    return TuneCase(
        found.op, tuple(entry.shapes), found.dtype, found.bucket, found.devices, measurements,
        declared, entry.winner, entry.decided, gap, found.skipped,
    )  # fmt: skip


class Keeper:
    """Stores tuned choices as they are measured, one case at a time (the store reads, merges
    and replaces its small file under its lock), so that an interrupt loses none already
    measured; then says how many reached the file.

    ``store``: a ``TuningStore``; ``None``, a new one for the host (and this process's records
    are reloaded after each write); ``False``, store nothing."""

    def __init__(self, store: Any) -> None:
        self._given = store
        self.store: Any = None  # made on the first write
        self._keys: set[Any] = set()
        self._problems_before = 0

    def keep(self, entries: Sequence[Any], calibration: Mapping[str, Any] | None = None) -> None:
        from prism_core._tuning.tuning_records import TuningStore, reload

        if self._given is False or not (entries or calibration):
            return
        if self.store is None:
            self.store = self._given if self._given is not None else TuningStore()
            self._problems_before = len(self.store.problems)
        self.store.record(entries=entries, calibration=calibration or None)
        self._keys.update(e.key for e in entries)
        if self._given is None:
            reload()

    def outcome(self) -> tuple[int, int, str | None, tuple[str, ...]]:
        """``(stored, unstored, path, problems)``: the choices kept that are in the file and
        those only in memory (each counted once), the file, and what went wrong meanwhile."""
        if self.store is None:
            return 0, 0, None, ()
        unwritten = self.store.unwritten
        unstored = sum(1 for e in unwritten if e.key in self._keys)
        problems = list(self.store.problems[self._problems_before :])
        why = self.store.bypassed
        if (unstored or unwritten.calibration) and why and why not in problems:
            problems.append(why)  # reported before this tuning, or PRISM_NO_CACHE=1
        path = str(self.store.path) if self.store.enabled else None  # no file is written
        return len(self._keys) - unstored, unstored, path, tuple(problems)
