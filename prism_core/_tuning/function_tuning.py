"""What a placed function (``prism_core.function``) gives the tuner: the :class:`Tunable`
protocol, the :class:`FunctionTuning` of one call, and the :class:`PreparedRunner` that times
its body on fresh copies of the arguments.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from prism_core._tuning.candidates import Candidates, Runner

__all__ = ["FunctionTuning", "PreparedRunner", "Tunable"]


@dataclass(frozen=True)
class PreparedRunner(Runner):
    """A :class:`Runner` whose ``setup`` is called before each timed sample, outside the timed
    region: a placed function's runner makes fresh copies of the arguments there, so that a
    body updating its arguments is timed on copies and the caller's arrays never change."""

    setup: Callable[[], None] | None = None


@dataclass(frozen=True)
class FunctionTuning:
    """What a tunable object (:class:`Tunable`) gives the tuner for one call: its candidates,
    ready to run, and what the tuning entry is keyed by.

    ``key`` is the function's identity (qualified name and a hash of its code: an edited
    function is another key), stored as the entry's ``op``; ``signature`` the call's argument
    types, dtypes and where its arrays live, stored as the entry's ``dtype``; ``bucket`` the
    size bucket (``tuning_records.bucket_of`` of the arrays' element counts); ``devices`` the
    candidates' device types joined by ``+``.  ``runners`` are in the declared order (the
    first is what runs untuned), each named by its backend; ``skipped`` says why the other
    backends cannot run the call.  ``declined`` is filled while measuring with the backends
    that refused the body for good (JAX for a body that updates its arguments): they are
    reported as declined, not timed, and left out of the entry."""

    key: str
    signature: str
    bucket: int
    devices: str
    runners: tuple[Runner, ...]
    skipped: tuple[str, ...] = ()
    shapes: tuple[tuple[int, ...], ...] = ()
    declined: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def variants(self) -> tuple[str, ...]:
        return tuple(sorted(r.variant for r in self.runners))

    def candidates(self) -> Candidates:
        """The call's candidates as the ops' tuner takes them (:func:`tune_case`)."""
        return Candidates(
            self.key, self.runners, self.skipped, self.devices, self.variants, self.signature,
            self.bucket,
        )  # fmt: skip


@runtime_checkable
class Tunable(Protocol):
    """An object :func:`tune` measures as a whole rather than as an op: a placed function
    (``prism_core.function``).  ``__prism_tune__(args, kwargs)`` returns the call's
    :class:`FunctionTuning`; the object reads the stored winner itself (it is kept in the
    tuning records under the tuning's ``key``, ``signature``, ``bucket``, ``devices`` and
    variants, like an op's)."""

    def __prism_tune__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> FunctionTuning: ...
