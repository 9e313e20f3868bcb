"""Where a call's arrays live, as part of its plan.

The arrays of some backends live on several devices under one type (a ``torch.Tensor`` on the
CPU or a GPU): a plan keyed by type alone would decline every call on the other device and fall
back, per call.  Such a backend says where each array lives (:meth:`Backend.where
<prism_core.extending.Backend.where>`), and the plan under the type key is a :class:`Router`::

    router = op._plans[(scope, Tensor, Tensor)]      # a Router: router.fn is None
    router.call(*args)  ->  op._plans[(router, ("cuda", "cuda"))]

Each located plan is built from a call whose arrays are there, so variants' ``placement`` and
their ranking see where the data is.  Other backends' arrays (NumPy's) never reach a router.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from prism_core.kernel.dispatch.arguments import Args, array_args, array_positions, is_sequence

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.dispatch.registry import Op, PlanKey

__all__ = ["Router", "is_located", "locator"]

#: Where the located arrays of one call live, in argument order (``("cuda", "cuda")``).
Places = tuple[str, ...]
Locate = Callable[[Args], Places]


class Router:
    """The plan cached under a type key whose arrays may live in several places: the hot path
    finds no function in it and calls :attr:`call`, which runs the plan of the places the
    call's arrays are in.  A located plan's key is the router (hashed by identity), then the
    places; a router goes only when every plan is dropped (``registry.bump``)."""

    __slots__ = ("call", "key", "locate")

    fn = checked = None
    backend = ""

    def __init__(self, key: PlanKey, locate: Locate) -> None:
        self.key = key
        self.locate = locate
        #: Set by dispatch (``calls.plan_for``): runs the located plan.
        self.call: Callable[..., object] = _unset

    def located_key(self, args: Sequence[object]) -> PlanKey:
        """The key of the plan for this call, whose located arrays are where they are."""
        return (self, self.locate(tuple(args)))

    def __repr__(self) -> str:
        return f"<Router for {self.key!r}>"


def _unset(*args: object, **kwargs: object) -> object:
    raise AssertionError("a router was used before dispatch gave it its call")


def locator(op: Op, args: Sequence[object]) -> Locate | None:
    """How to read where the arrays of calls with this plan key live (the key fixes their
    types, so their backends are found once, here); ``None`` when no array of it belongs to a
    backend whose arrays live in several places."""
    from prism_core.kernel.plugins import plugins

    found = plugins()
    wheres: list[tuple[int, Callable[[object], str | None]]] = []
    sequences = False
    for i in array_positions(op, args):
        value = args[i]
        if is_sequence(value, op, i):
            sequences = sequences or any(_where(found.owner(a), a) is not None for a in value)
            continue
        owner = found.owner(value)
        if _where(owner, value) is not None:
            assert owner is not None
            wheres.append((i, owner.where))
    if sequences:  # the places of every array, each asked of its owner (the key has their types)

        def every(args: Args) -> Places:
            found = plugins()
            return tuple(_where(found.owner(a), a) or "" for a in array_args(op, args))

        return every
    if not wheres:
        return None
    if len(wheres) == 1:
        ((i, where),) = wheres

        def one(args: Args) -> Places:
            return (where(args[i]),)  # type: ignore[return-value]  # not None: located

        return one
    if len(wheres) == 2:
        (i, first), (j, second) = wheres

        def two(args: Args) -> Places:
            return (first(args[i]), second(args[j]))  # type: ignore[return-value]

        return two

    def several(args: Args) -> Places:
        return tuple(where(args[i]) or "" for i, where in wheres)

    return several


def is_located(key: PlanKey) -> bool:
    """Whether ``key`` is a located plan's (:meth:`Router.located_key`), not a type key."""
    return type(key[0]) is Router


def _where(owner: Backend | None, array: object) -> str | None:
    return None if owner is None else owner.where(array)
