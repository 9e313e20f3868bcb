"""An op's example arguments: what ``prism bench`` and ``prism.tune(op, sizes=[...])`` measure.

A builtin op's are a field of its record (``OpRecord.examples``, in its family's module); an op
a plugin declares carries its own, an :class:`Examples` given to
``prism_core.extending.operation(..., examples=...)`` (public as
``prism_core.backend_kit.Examples``), and the tuner, ``prism bench`` and its figure read it instead
of knowing the op.  A pure module, below the records: it imports nothing of Prism (nor NumPy:
``make`` imports it when called).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["Examples", "Size"]

#: A size of ``prism bench``: ``n``, or ``(n, batch)`` for an op whose examples are batches.
Size = int | tuple[int, int | None]


def _sizes(sizes: Sequence[Size], field: str) -> tuple[tuple[int, int | None], ...]:
    """``sizes`` as ``(n, batch)`` pairs, or a ``TypeError`` naming ``field`` and the size."""
    if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or not sizes:
        raise TypeError(
            f"Examples.{field}: expected a non-empty sequence of sizes n or (n, batch) pairs; "
            f"got {sizes!r}"
        )
    out: list[tuple[int, int | None]] = []
    for size in sizes:
        pair = (size, None) if isinstance(size, int) else size
        if not (
            isinstance(pair, tuple)
            and len(pair) == 2
            and _positive(pair[0])
            and (pair[1] is None or _positive(pair[1]))
        ):
            raise TypeError(
                f"Examples.{field}: each size is a positive int n or an (n, batch) pair of "
                f"positive ints (batch may be None); got {size!r}"
            )
        out.append(pair)
    return tuple(out)


def _positive(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


class Examples:
    """How to make an op's arguments at a size ``n``, for ``prism bench`` and
    ``prism.tune(op, sizes=[...])``: attached to the op when it is declared
    (``prism_core.extending.operation(..., examples=Examples(...))``).

    Every argument is a keyword; the record is read-only (make another to change it), and
    equal to another of the same fields.

    :param make: ``make(n, dtype, batch) -> args``, the positional arguments of one call at
        size ``n`` (NumPy arrays and plain values).  ``dtype`` is a NumPy dtype name
        (``"float64"``) for an op measured in each of ``prism bench --dtypes``, and the
        :attr:`dtype_label` (to be ignored) for one whose types are fixed; ``batch`` is the
        number of items of a batch (the :attr:`batch` default when none is asked for; ``None``
        for an op without batches).  Import NumPy inside it, not at the module's import.
    :param nbytes: ``nbytes(n, dtype, batch) -> int``, the bytes of those arguments and the
        result, without making them: a size that needs more memory than is available is
        refused before anything is allocated.
    :param size: what ``n`` means, as a phrase (``"a DNA query of n letters against a target
        of 10 n"``); the tuner's messages and ``prism tune --help`` show it.
    :param quick: the sizes ``prism bench`` measures by default: ``n``, or ``(n, batch)``.
    :param full: the sizes of ``prism bench --full``.
    :param axis: the x axis of the op's panel in ``prism bench --plot`` (what ``n`` counts).
    :param dtype_label: for an op whose arguments' types are fixed, the word the bench table
        shows in its dtype column (``"dna"``): it is measured once per size, whatever
        ``--dtypes`` says.  ``None``: the op is measured in each dtype.
    :param batch: the default number of items of an op whose examples are batches (``make``
        receives it when no ``batch`` is asked for), else ``None``.
    :param group: a name that stands for this op and every other op of the same group in
        ``prism bench NAME`` (``"genomics.align"``: both alignment ops).
    :param cells: ``cells(args) -> int``, the cell updates of one call, for ops whose work is
        counted in them (dynamic programming): the bench rows then give GCUPS (giga cell
        updates per second) besides the times.
    :param axis_cells: the plot puts the rows at their cell updates (a log-10 axis, each
        point's ``n x batch`` above it) rather than at ``n``.
    :param model_dtype: the dtype the performance model rates the op's work in
        (``"int32"`` for integer arithmetic); ``None``: the dtype of the call.
    :param install: what to install for faster variants, named in ``prism bench``'s note
        where only one variant of the op can run (nothing to compare).
    """

    __slots__ = (
        "axis",
        "axis_cells",
        "batch",
        "cells",
        "dtype_label",
        "full",
        "group",
        "install",
        "make",
        "model_dtype",
        "nbytes",
        "quick",
        "size",
    )
    __module__ = "prism_core.backend_kit"

    make: Callable[[int, str, int | None], tuple[Any, ...]]
    nbytes: Callable[[int, str, int | None], int]
    size: str
    #: ``(n, batch)`` pairs (``batch`` ``None`` for an op without batches).
    quick: tuple[tuple[int, int | None], ...]
    full: tuple[tuple[int, int | None], ...]
    axis: str
    dtype_label: str | None
    batch: int | None
    group: str | None
    cells: Callable[[tuple[Any, ...]], int] | None
    axis_cells: bool
    model_dtype: str | None
    install: str | None

    # A plain class, not a dataclass: a plugin makes its records at discovery, on the way to a
    # first call, where generating a dataclass's methods would cost a millisecond.
    def __init__(
        self,
        *,
        make: Callable[[int, str, int | None], tuple[Any, ...]],
        nbytes: Callable[[int, str, int | None], int],
        size: str,
        quick: Sequence[Size],
        full: Sequence[Size],
        axis: str = "size n",
        dtype_label: str | None = None,
        batch: int | None = None,
        group: str | None = None,
        cells: Callable[[tuple[Any, ...]], int] | None = None,
        axis_cells: bool = False,
        model_dtype: str | None = None,
        install: str | None = None,
    ) -> None:
        for name, fn in (("make", make), ("nbytes", nbytes)):
            if not callable(fn):
                raise TypeError(f"Examples: {name} must be a function; got {fn!r}")
        if cells is not None and not callable(cells):
            raise TypeError(f"Examples: cells must be a function or None; got {cells!r}")
        for name, text in (("size", size), ("axis", axis)):
            if not isinstance(text, str) or not text:
                raise TypeError(f"Examples: {name} must be a phrase (a str); got {text!r}")
        words = {"dtype_label": dtype_label, "group": group, "model_dtype": model_dtype}
        for name, word in {**words, "install": install}.items():
            if word is not None and (not isinstance(word, str) or not word):
                raise TypeError(f"Examples: {name} must be a non-empty str or None; got {word!r}")
        if batch is not None and not _positive(batch):
            raise TypeError(f"Examples: batch must be a positive int or None; got {batch!r}")
        if not isinstance(axis_cells, bool):
            raise TypeError(f"Examples: axis_cells must be True or False; got {axis_cells!r}")
        fields = {
            "make": make,
            "nbytes": nbytes,
            "size": size,
            "quick": _sizes(quick, "quick"),
            "full": _sizes(full, "full"),
            "axis": axis,
            "dtype_label": dtype_label,
            "batch": batch,
            "group": group,
            "cells": cells,
            "axis_cells": axis_cells,
            "model_dtype": model_dtype,
            "install": install,
        }
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Examples are read-only: make another to change {name!r}")

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Examples):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"Examples({shown})"

    def sizes(self, quick: bool = True) -> tuple[tuple[int, int | None], ...]:
        """``prism bench``'s sizes: ``(n, batch)`` pairs (``batch`` ``None`` for an op without
        batches), :attr:`quick` or :attr:`full`."""
        return self.quick if quick else self.full
