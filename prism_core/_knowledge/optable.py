"""One row of an op family's table: how the Array API's functions that are not elementwise are
declared as data.

Each family lists its ops in a module of its own (``_knowledge/creation.py``, ...), one
:class:`TableOp` per op, gathered by ``families.py``; the op catalogue, the NumPy plugin, the
performance model, the lint and ``prism_core.array_api`` all read the rows.  A pure module: it
imports nothing of Prism and no array library.  docs/array-api.md, "The other families".
"""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["RESULTS", "WORK_KINDS", "Result", "TableOp", "WorkKind"]

#: How the work of an op (``work.py``) follows from the shapes of its array arguments:
#:
#: * ``view``: nothing computed, nothing read (a view: ``permute_dims``, ``squeeze``); only
#:   moving the arguments to a device costs;
#: * ``copy``: every element of the arguments read and written once (``flip``, ``roll``);
#: * ``create``: the one "shape" is that of the array created (``eye``, ``linspace``);
#: * ``reduction``: one operation per element, to one element (``prod``, ``all``);
#: * ``scan``: one operation per element, to as many (``cumulative_prod``, ``diff``);
#: * ``sort``: ``n log2 n`` comparisons along the last axis (``argsort``, ``unique_*``);
#: * ``elementwise``: one operation per element of the broadcast shape of the arguments;
#: * ``own``: the op's own declaration in ``work.py`` (``linalg.det``: 2/3 n^3).
WorkKind = Literal["view", "copy", "create", "reduction", "scan", "sort", "elementwise", "own"]
WORK_KINDS: tuple[str, ...] = (
    "view", "copy", "create", "reduction", "scan", "sort", "elementwise", "own",
)  # fmt: skip

#: What a call returns: an ``array`` of the backend, a ``tuple`` of arrays (a named tuple such
#: as ``linalg.eigh``'s, or a list such as ``meshgrid``'s), or ``other`` (no array: a Python
#: value).
Result = Literal["array", "tuple", "other"]
RESULTS: tuple[str, ...] = ("array", "tuple", "other")


class TableOp(NamedTuple):
    """One op of a family's table."""

    #: The op's name: the standard's (``"flip"``), with its extension (``"linalg.det"``).
    name: str
    #: Its signature as the standard writes it, from the parenthesis on:
    #: ``"(x, /, *, axis=None)"``.
    signature: str
    #: What it computes, and where Prism's semantics are worth a word (one paragraph of
    #: sentences; the catalogue puts the signature before it).
    doc: str
    #: The positions of the positional parameters that are arrays (``()`` for a creation op,
    #: ``None`` when arrays are recognised by having a ``dtype``).
    array_args: tuple[int, ...] | None
    #: How its work follows from its arguments' shapes (:data:`WorkKind`).
    work: WorkKind
    #: What it returns (:data:`Result`).
    result: Result
    #: The NumPy reference: ``"module:attribute"``, NumPy's own function called with no wrapper
    #: in between (``"numpy:flip"``) or Prism's (``"prism_core._builtin.numpy_manipulation:roll"``)
    #: where NumPy's differs from the standard or is missing from older NumPy.
    numpy: str
    #: The positions in ``array_args`` that hold a sequence of arrays (``broadcast_arrays``).
    sequences: tuple[int, ...] = ()
    #: Other names of the op (seeds' names, NumPy's).
    aliases: tuple[str, ...] = ()
    #: Whether the Array API standard has it (``prism_core.array_api`` exposes only these).
    standard: bool = True
