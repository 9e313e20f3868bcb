"""The kernel's extension points (docs/architecture.md): what a ranker, tuning on first use, a
pipeline's planner and a lenient stage's rescuer are given and answer.  Dispatch puts them in
force (``dispatch/ranking.py``, ``interception.py``); its classes satisfy the views here."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeAlias, TypeVar

from prism_core.kernel.public import home

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.contract.variant import Variant
    from prism_core.kernel.description.device import DeviceDescription

__all__ = ["FirstUse", "Planner", "RankRequest", "Ranked", "Ranker", "Ranking", "Rescuer"]

#: Eligible candidates, best first: each the variant, the device it would run on, its backend.
Ranking: TypeAlias = "tuple[tuple[Variant, DeviceDescription | None, Backend | None], ...]"
#: The op as dispatch passes it (``prism_core.kernel.dispatch.registry.Op``).
_Op = TypeVar("_Op", contravariant=True)


class OpLike(Protocol):
    """An op, or a placed function (``prism_core.function``), as an extension sees it: its
    ``name`` and the ``function`` that runs it in the scope in force."""

    @property
    def name(self) -> str: ...
    @property
    def function(self) -> Callable[..., object]: ...


class ScopeView(Protocol):
    """The scope in force: the device named, the preference (``"reference"`` never reorders),
    whether the device is simulated, the execution policy (``prism_core.ExecutionPolicy``)."""

    @property
    def device(self) -> DeviceDescription | None: ...
    @property
    def prefer(self) -> str: ...
    @property
    def simulated(self) -> bool: ...
    @property
    def execution(self) -> object: ...


class MovesView(Protocol):
    @property
    def converters(self) -> Sequence[object]: ...  # the arguments that move; empty: none


class BasisView(Protocol):
    """What decided an order, as ``explain`` shows it (:class:`prism_core.tuning.Basis`)."""

    @property
    def decided_by(self) -> str: ...
    @property
    def note(self) -> str: ...
    @property
    def times(self) -> Sequence[tuple[str, float]]: ...


@home("prism_core.extending")
class RankRequest(Protocol):
    """What a ranker is asked to order: the eligible candidates of one call (``ranked``, best
    first by declaration), the call's op, scope, ``arrays`` (its array arguments, and the arrays
    in sequences of them) and their ``dtypes``, and each candidate's data ``moves`` by variant
    name."""

    @property
    def op(self) -> OpLike: ...
    @property
    def scope(self) -> ScopeView: ...
    @property
    def ranked(self) -> Ranking: ...
    @property
    def arrays(self) -> Sequence[object]: ...
    @property
    def dtypes(self) -> Sequence[str]: ...
    @property
    def moves(self) -> Mapping[str, MovesView]: ...


@home("prism_core.extending")
@dataclass(frozen=True)
class Ranked:
    """A ranker's answer: the candidates in its order, what decided it (``None``: the declared
    order), whether nothing was measured for the call (tuning on first use may measure it), and
    whether the order depends on the call's size (the op's plans are keyed by size bucket)."""

    order: Ranking
    basis: BasisView | None = None
    untuned: bool = False
    by_size: bool = False


@home("prism_core.extending")
class Ranker(Protocol):
    """What a ``prism_ranker`` hook returns: orders a call's eligible candidates beyond their
    declared priority."""

    def rank(self, request: RankRequest) -> Ranked: ...

    def revision(self) -> object:
        """An object that changes whenever what the ranker ranks by changes (new
        measurements): every cached plan is then built again."""
        ...

    def sizes_matter(self, op: str) -> bool:
        """Whether the order of ``op``'s candidates depends on the size of a call, as of the
        last ``revision()``.  Dispatch asks while it holds its locks: answer from what is at
        hand, never load anything."""
        ...


@home("prism_core.extending")
class FirstUse(Protocol[_Op]):
    """Tuning on first use (``prism_core.tuning.set_autotune(first_use=True)``): called with a
    call's op, plan key, arguments and keywords when its plan has no tuned times; measures
    within its budget and answers whether it stored any."""

    def __call__(
        self, op: _Op, key: tuple[object, ...], args: Sequence[object], kwargs: dict[str, object]
    ) -> bool: ...


@home("prism_core.extending")
class Planner(Protocol[_Op]):
    """Answers a call while a pipeline is planned, instead of running it: returns what stands
    for the result (an ``ArraySpec``)."""

    def __call__(self, op: _Op, args: tuple[object, ...], kwargs: dict[str, object]) -> object: ...


@home("prism_core.extending")
class Rescuer(Protocol):
    """Runs a call the scope in force cannot run (``error``: a ``DispatchError`` or
    ``BackendError``) somewhere else and returns its result, or raises ``error``."""

    def __call__(
        self, op: OpLike, args: tuple[object, ...], kwargs: dict[str, object], error: Exception
    ) -> object: ...
