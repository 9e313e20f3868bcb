"""What moves for a variant to take a call's arrays, and how its result goes back to the
backend the arguments came from (automatic mode: NumPy in, NumPy out; docs/backends.md,
"Where a call runs")."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prism_core.kernel.dispatch.arguments import ArraySpec, array_positions, is_sequence

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.dispatch.arguments import Args, Kwargs
    from prism_core.kernel.dispatch.movement import Move
    from prism_core.kernel.dispatch.registry import Op
    from prism_core.kernel.plugins import PluginSet

__all__ = ["NO_MOVES", "Moves", "convert", "is_native", "moves_for", "reference_backend"]


@dataclass(frozen=True)
class Moves:
    """Arguments a variant's backend does not take as they are, how they move, and how the
    result comes back (automatic mode: to the backend the arguments came from)."""

    converters: tuple[tuple[int, Move], ...] = ()
    sentences: tuple[str, ...] = ()
    result: Move | None = None

    def run(self, fn: Callable[..., object], args: Args, kwargs: Kwargs) -> object:
        """``fn`` called with the arguments moved, and its result brought back if they were."""
        if not self.converters:
            return fn(*args, **kwargs)
        out = fn(*convert(args, self.converters), **kwargs)
        return out if self.result is None else self.result(out)


NO_MOVES = Moves()


def is_native(backend: Backend | None, value: object) -> bool:
    if backend is None:
        return True
    if isinstance(value, ArraySpec):
        # A described array stands for a NumPy array, the arrays a caller starts with: the
        # decision (and the moves it shows) is the one a call with NumPy arrays gets.
        if not _HOST_STAND_IN:
            import numpy as np

            _HOST_STAND_IN.append(np.empty(0))
        return backend.is_native(_HOST_STAND_IN[0])
    return backend.is_native(value)


_HOST_STAND_IN: list[object] = []


def moves_for(
    op: Op,
    backend: Backend | None,
    device: DeviceDescription | None,
    args: Sequence[object],
    home: Backend | None,
    *,
    bring_back: bool = False,
) -> Moves:
    """What must move for ``backend`` to take the call's arrays on ``device``, what that
    costs, and how the result goes back to ``home`` (``None``: it stays the backend's): only
    where arguments moved, unless ``bring_back`` (a call without any backend's arrays runs
    elsewhere only as a fallback, and its result is ``home``'s arrays all the same)."""
    if backend is None:
        return NO_MOVES
    from prism_core.kernel.dispatch import movement
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    converters: list[tuple[int, Move]] = []
    sentences: list[str] = []
    for i in array_positions(op, args):
        value = args[i]
        items = list(value) if is_sequence(value, op, i) else [value]
        foreign = [a for a in items if not is_native(backend, a)]
        if not foreign:
            continue
        move = movement.mover(
            backend, device, ps.owner, reference=reference_backend(op, ps), op=op.name, position=i
        )
        converters.append((i, movement.each(move) if is_sequence(value, op, i) else move))
        sentences.extend(movement.describe(i, a, ps.owner(a), backend, device) for a in foreign)
    if not converters and not (bring_back and home is not None and home is not backend):
        return NO_MOVES
    result = None
    if home is not None and home is not backend:
        result = movement.bring_back(
            backend, home, reference_backend(op, ps), op=op.name, device=device
        )
        sentences.append(f"result: {backend.name} -> {home.name} (the arguments' backend)")
    return Moves(tuple(converters), tuple(sentences), result)


def reference_backend(op: Op, ps: PluginSet) -> Backend | None:
    reference = next((v for v in op.variants if v.reference), None)
    return ps.backends.get(reference.backend) if reference is not None else None


def convert(args: Args, converters: Sequence[tuple[int, Move]]) -> Args:
    out = list(args)
    for i, convert in converters:
        out[i] = convert(out[i])
    return tuple(out)
