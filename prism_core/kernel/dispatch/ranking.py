"""The ranking extension point: a plan's eligible candidates, in the order eligibility gives
(``eligibility.rank_key``), reordered by the first ranker a plugin's ``prism_ranker`` hook
returns, else by Prism's own (:data:`DEFAULT_RANKER`: tuned times, the performance model,
execution policies).  A ranker is asked for only when a call has candidates to order, so a
first call with one candidate imports no ranking code.  The types are the contract's
(``kernel/contract/extension_points.py``); docs/architecture.md, "Extension points"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from prism_core.kernel.dispatch.arguments import array_args
from prism_core.kernel.dispatch.decision import Basis

if TYPE_CHECKING:
    from prism_core.kernel.contract.extension_points import FirstUse, Ranker
    from prism_core.kernel.dispatch.eligibility import Ranking
    from prism_core.kernel.dispatch.moves import Moves
    from prism_core.kernel.dispatch.registry import Op
    from prism_core.kernel.dispatch.scope import Scope

__all__ = ["RankRequest", "ensure_current", "first_use", "rank", "ranker", "set_first_use"]


@dataclass(frozen=True)
class RankRequest:
    """A call's eligible candidates to order: ``prism_core.extending.RankRequest``."""

    op: Op
    scope: Scope
    ranked: Ranking
    args: Sequence[object]
    dtypes: Sequence[str]
    moves: Mapping[str, Moves]

    @property
    def arrays(self) -> list[object]:
        return array_args(self.op, self.args)


class Outcome(NamedTuple):
    """A ranker's answer (``Ranked``) as a plan keeps it, with the basis ``explain`` shows."""

    order: Ranking
    basis: Basis = Basis()
    untuned: bool = False
    by_size: bool = False


#: Prism's own ranker, ``"module:class"``, made where no plugin's ``prism_ranker`` answers.
#: tests/test_extension_points.py checks that it names a ranker above the kernel.
DEFAULT_RANKER = "prism_core._tuning.ranking:MeasuredRanking"


#: The ranker in force and the plugin set it was asked of; the tuning-on-first-use hook in force.
_ranker: tuple[Ranker | None, object] = (None, None)
_first_use: FirstUse[Op] | None = None


def ranker() -> Ranker:
    """The ranker in force: the first answer of the plugins' ``prism_ranker`` hook, else
    :data:`DEFAULT_RANKER`; asked once per plugin set."""
    global _ranker
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    chosen, asked = _ranker
    if chosen is None or asked is not ps:
        chosen = ps.manager.hook.prism_ranker()
        if chosen is None:
            import importlib

            module, _, name = DEFAULT_RANKER.partition(":")
            chosen = getattr(importlib.import_module(module), name)()
        _ranker = (chosen, ps)
        _rekey(chosen)
    return chosen


def _rekey(chosen: Ranker) -> None:
    from prism_core.kernel.dispatch.registry import rekey

    rekey(chosen.revision(), chosen.sizes_matter)


def ensure_current(op: Op, scope: Scope) -> None:
    """Key the ops' plans as the ranker in force ranks now (``Ranker.revision``: a new one builds
    every plan again), before a plan is built, so that none is dropped while it is built; until
    a call of an op with several variants (or under a policy), there is no ranker to ask."""
    chosen = _ranker[0]
    if chosen is None and len(op.variants) < 2 and scope.execution is None:
        return
    _rekey(ranker() if chosen is None else chosen)


def rank(request: RankRequest) -> Outcome:
    """``request``'s candidates in the order of the ranker in force.  The declared order
    stands under ``prefer="reference"`` (which never reorders), and for a single candidate
    without an execution policy (nothing to order, nothing for a policy to refuse)."""
    scope = request.scope
    if scope.prefer == "reference" or (len(request.ranked) < 2 and scope.execution is None):
        return Outcome(request.ranked)
    answer = ranker().rank(request)
    basis = answer.basis or Basis()
    if not isinstance(basis, Basis):
        basis = Basis(basis.decided_by, basis.note, tuple(basis.times))
    return Outcome(answer.order, basis, answer.untuned, answer.by_size)


def set_first_use(hook: FirstUse[Op] | None) -> None:
    """Put tuning on first use in force (``hook``) or off (``None``): the extension point the
    tuner (``prism_core._tuning.tuner.set_autotune``) uses."""
    global _first_use
    _first_use = hook


def first_use() -> FirstUse[Op] | None:
    """The tuning-on-first-use hook in force, if any."""
    return _first_use
