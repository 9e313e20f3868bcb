"""Where a call's arrays live, as part of its plan.

A plan is cached by the scope and the arguments' types (``arguments.plan_key``).  The arrays of
some backends live on several devices under one type (a ``torch.Tensor`` on the CPU or on a
GPU): for them the type says too little, and a plan made for tensors on the CPU would decline
every call on GPU tensors and fall back, per call.  Such a backend says where each of its
arrays lives (:meth:`Backend.where <prism_core.extending.Backend.where>`); the plan cached
under the type key is then a :class:`Router`, which reads where the call's arrays are and runs
the plan cached under the type key and those places::

    router = op._plans[(scope, Tensor, Tensor)]      # a Router: router.fn is None
    router.call(*args)  ->  op._plans[(router, ("cuda", "cuda"))]

Each located plan is built from a call whose arrays are there, so variants' ``placement``
(asked once per plan) and their ranking see where the data is.  Arrays of every other backend
(NumPy's among them) never reach a router: their plans are as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from prism_core.kernel.dispatch.arguments import array_args, array_positions, is_sequence

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op, PlanKey

__all__ = ["Router", "is_located", "locator"]

#: Where the located arrays of one call live, in argument order (``("cuda", "cuda")``).
Places = tuple[str, ...]
Locate = Callable[[tuple[Any, ...]], Places]


class Router:
    """The plan cached under a type key whose arrays may live in several places: the hot path
    finds no function in it (``fn`` and ``checked`` are ``None``) and calls :attr:`call`,
    which runs the plan of the places the call's arrays are in.

    A located plan's key is the router itself (hashed by identity, so that the hot path does
    not hash the type key again), then the places.  A router is replaced only when every plan
    is dropped (``registry.bump``), its located plans with it.
    """

    __slots__ = ("call", "key", "locate")

    fn = checked = None
    backend = ""

    def __init__(self, key: PlanKey, locate: Locate) -> None:
        self.key = key
        self.locate = locate
        #: Set by dispatch (``calls.plan_for``): runs the located plan.
        self.call: Callable[..., Any] = _unset

    def located_key(self, args: Sequence[Any]) -> PlanKey:
        """The key of the plan for this call, whose located arrays are where they are."""
        return (self, self.locate(tuple(args)))

    def __repr__(self) -> str:
        return f"<Router for {self.key!r}>"


def _unset(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("a router was used before dispatch gave it its call")


def locator(op: Op, args: Sequence[Any]) -> Locate | None:
    """How to read where this call's arrays live, for calls of the same plan key: ``None``
    when no array of it belongs to a backend whose arrays live in several places.

    The plan key fixes each array argument's type, so the backends are found once here; the
    function returned only asks each located array's backend where it is."""
    from prism_core.kernel.plugins import plugins

    found = plugins()
    wheres: list[tuple[int, Callable[[Any], str | None]]] = []
    sequences = False
    for i in array_positions(op, args):
        value = args[i]
        if is_sequence(op, i, value):
            sequences = sequences or any(_where(found.owner(a), a) is not None for a in value)
            continue
        owner = found.owner(value)
        if _where(owner, value) is not None:
            assert owner is not None
            wheres.append((i, owner.where))
    if sequences:
        return _every_array(op)
    if not wheres:
        return None
    if len(wheres) == 1:
        ((i, where),) = wheres

        def one(args: tuple[Any, ...]) -> Places:
            return (where(args[i]),)  # type: ignore[return-value]  # not None: located

        return one
    if len(wheres) == 2:
        (i, first), (j, second) = wheres

        def two(args: tuple[Any, ...]) -> Places:
            return (first(args[i]), second(args[j]))  # type: ignore[return-value]

        return two

    def several(args: tuple[Any, ...]) -> Places:
        return tuple(where(args[i]) or "" for i, where in wheres)

    return several


def is_located(key: PlanKey) -> bool:
    """Whether ``key`` is a located plan's (:meth:`Router.located_key`), not a type key (whose first
    item is the scope)."""
    return type(key[0]) is Router


def _where(owner: Any, array: Any) -> str | None:
    return None if owner is None else owner.where(array)


def _every_array(op: Op) -> Locate:
    """The places of every array of a call with sequences of arrays (``stack``), each asked
    of its owner (the sequence's length and its items' types are in the plan key)."""
    from prism_core.kernel.plugins import plugins

    def every(args: tuple[Any, ...]) -> Places:
        found = plugins()
        return tuple(_where(found.owner(a), a) or "" for a in array_args(op, args))

    return every
