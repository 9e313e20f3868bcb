"""The ranking extension point: how a plan's eligible candidates are ordered beyond their
declared priority.

Eligibility orders the candidates by the scope's preference, data moves, priority,
specificity and name (``eligibility.rank_key``).  A ranker may reorder them by what it knows:
the first a plugin's ``prism_ranker`` hook returns, else Prism's own (:data:`DEFAULT_RANKER`:
tuned times, the performance model, execution policies).  A ranker is asked for only when a
call has candidates to order, so a first call with one candidate imports no ranking code.
docs/architecture.md, "Extension points".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from prism_core.kernel.dispatch.decision import Basis

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.eligibility import Ranking
    from prism_core.kernel.dispatch.moves import Moves
    from prism_core.kernel.dispatch.registry import Op, PlanKey
    from prism_core.kernel.dispatch.scope import Scope

__all__ = [
    "FirstUse",
    "RankRequest",
    "Ranked",
    "Ranker",
    "ensure_current",
    "first_use",
    "rank",
    "ranker",
    "set_first_use",
]


@dataclass(frozen=True)
class RankRequest:
    """What a ranker is asked to order: the eligible candidates of one call, best first by
    declaration, with the call's arguments, their dtypes and each candidate's data moves."""

    op: Op
    scope: Scope
    ranked: Ranking
    args: Sequence[Any]
    dtypes: Sequence[str]
    moves: Mapping[str, Moves]


@dataclass(frozen=True)
class Ranked:
    """A ranker's answer: the candidates in its order and what decided it."""

    order: Ranking
    basis: Basis = field(default_factory=Basis)
    #: Nothing was measured for this call: tuning on first use, when on, may measure it now.
    untuned: bool = False
    #: The order depends on the call's size: the op's plans are keyed by size bucket.
    by_size: bool = False


class Ranker(Protocol):
    """What a ``prism_ranker`` hook returns."""

    def rank(self, request: RankRequest) -> Ranked:
        """The candidates of ``request`` in this ranker's order."""
        ...

    def revision(self) -> object:
        """An object that changes whenever what the ranker ranks by changes (new
        measurements): every cached plan is then built again."""
        ...

    def sizes_matter(self, op: str) -> bool:
        """Whether the order of ``op``'s candidates depends on the size of a call (its plans
        are then keyed by size bucket), as of the last ``revision()``.  Dispatch asks while it
        holds its locks: answer from what is at hand, never load anything."""
        ...


class FirstUse(Protocol):
    """Tuning on first use (``prism_core.tuning.set_autotune(first_use=True)``): called with
    ``(op, key, args, kwargs)`` when a call's plan has no tuned times; measures within its
    budget and returns whether it stored any."""

    def __call__(
        self, op: Op, key: PlanKey, args: Sequence[Any], kwargs: dict[str, Any]
    ) -> bool: ...


#: Prism's own ranker, ``"module:class"``, made where no plugin's ``prism_ranker`` answers.
DEFAULT_RANKER = "prism_core._tuning.ranking:MeasuredRanking"


class _Installed:
    """The ranker of the current plugin set, and the tuning-on-first-use hook in force."""

    __slots__ = ("first_use", "plugins", "ranker")

    def __init__(self) -> None:
        self.plugins: object = None
        self.ranker: Ranker | None = None
        self.first_use: FirstUse | None = None


_installed = _Installed()


def ranker() -> Ranker:
    """The ranker in force: the first answer of the plugins' ``prism_ranker`` hook, else
    :data:`DEFAULT_RANKER`; asked once per plugin set."""
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    chosen = _installed.ranker
    if chosen is None or _installed.plugins is not ps:
        chosen = ps.manager.hook.prism_ranker()
        if chosen is None:
            import importlib

            module, _, name = DEFAULT_RANKER.partition(":")
            chosen = getattr(importlib.import_module(module), name)()
        _installed.ranker, _installed.plugins = chosen, ps
        _rekey(chosen)
    return chosen


def _rekey(chosen: Ranker) -> None:
    from prism_core.kernel.dispatch.registry import rekey

    rekey(chosen.revision(), chosen.sizes_matter)


def ensure_current(op: Op, scope: Scope) -> None:
    """Key the ops' plans as the ranker in force ranks now (``Ranker.revision``): a new revision
    (tuning stored, records reloaded) builds every plan again.  Called before a plan is built,
    so that no plan is dropped while it is built; until a call of an op with several variants
    (or under an execution policy), there is no ranker to ask."""
    chosen = _installed.ranker
    if chosen is None and len(op.variants) < 2 and scope.execution is None:
        return
    _rekey(ranker() if chosen is None else chosen)


def rank(request: RankRequest) -> Ranked:
    """``request``'s candidates in the order of the ranker in force.  The declared order
    stands under ``prefer="reference"`` (which never reorders), and for a single candidate
    without an execution policy (nothing to order, nothing for a policy to refuse)."""
    scope = request.scope
    if scope.prefer == "reference" or (len(request.ranked) < 2 and scope.execution is None):
        return Ranked(request.ranked)
    return ranker().rank(request)


def set_first_use(hook: FirstUse | None) -> None:
    """Put tuning on first use in force (``hook``) or off (``None``): the extension point the
    tuner (``prism_core._tuning.tuner.set_autotune``) uses."""
    _installed.first_use = hook


def first_use() -> FirstUse | None:
    """The tuning-on-first-use hook in force, if any."""
    return _installed.first_use
