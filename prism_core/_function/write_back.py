"""The caller's arrays around a placement: fresh copies of them, the body's in-place updates
written back into them where they were moved by copy, and a snapshot to undo a failed
placement's updates before another runs the call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prism_core._function.arguments import leaves
from prism_core._function.candidates import traits
from prism_core.kernel.dispatch import movement

if TYPE_CHECKING:
    from prism_core._function.report import FunctionReport
    from prism_core.kernel.contract.backend import Backend

__all__ = ["copy_array", "restore", "take_snapshot", "write_back"]


def copy_array(leaf: Any) -> Any:
    """A copy of an array on the same backend and device (a NumPy copy keeps a read-only
    array read-only; JAX's arrays are immutable: the array itself)."""
    import numpy as np

    if isinstance(leaf, np.ndarray):
        out = leaf.copy()
        out.flags.writeable = leaf.flags.writeable
        return out
    for method in ("clone", "copy"):  # torch's clone(); CuPy's and others' copy()
        make = getattr(leaf, method, None)
        if callable(make):
            return make()
    return leaf


def _writable(value: Any) -> bool:
    flags = getattr(value, "flags", None)
    return bool(getattr(flags, "writeable", True))


def write_back(
    original: Any, moved: Any, owner: Backend | None, runner: Backend, report: FunctionReport | None
) -> None:
    """Put ``moved``'s contents into the caller's ``original`` where it was moved by copy, so
    that the caller sees the body's in-place updates; a read-only original that the body
    changed raises, as NumPy would have."""
    a, b = movement.address(original), movement.address(moved)
    if a is not None and a == b:
        return  # zero copy: the caller's array is the one updated
    if owner is None or not traits(owner).mutable:
        return  # the caller's arrays cannot change (JAX's): nothing to show
    import numpy as np

    data = runner.to_numpy(moved)
    if not _writable(original):
        if not np.array_equal(np.asarray(original), data):
            raise ValueError(
                "the function updated a read-only argument (it cannot be written back)"
            )
        return
    if isinstance(original, np.ndarray):
        np.copyto(original, data, casting="unsafe")
    else:
        original[...] = owner.asarray(data)
    if report is not None:
        kind, shape, dtype = movement.what(original)
        size = movement.nbytes(original)
        report.write_backs.append(
            f"{kind} {dtype}[{'x'.join(map(str, shape or ()))}] ({size} bytes) from {runner.name}"
        )


def take_snapshot(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[Any, Any]]:
    """Copies of the caller's writable NumPy arrays, to undo a failed placement's updates
    before another runs the call (taken until a signature's placement has run once)."""
    import numpy as np

    return [
        (leaf, leaf.copy())
        for v in (*args, *kwargs.values())
        for leaf in leaves(v)
        if isinstance(leaf, np.ndarray) and leaf.flags.writeable
    ]


def restore(snapshot: list[tuple[Any, Any]]) -> None:
    import numpy as np

    for original, copy in snapshot:
        np.copyto(original, copy)
