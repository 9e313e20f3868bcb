"""One record per op: everything Prism knows about a builtin op, declared once as data.

Each family lists its ops in a module of its own (``elementwise.py``, ``creation.py``, ...),
one :class:`OpRecord` per op, gathered by ``families.py``.  The catalogue, dispatch, the NumPy
references and namespace backends, the performance model, the tuner and ``prism bench``,
splitting, the conformance suite and the lint read the records; none keeps a table of ops of
its own.  A pure module: it imports nothing of Prism but the examples' type, and no array
library.  docs/architecture.md, "One record per op", says who reads each field.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from prism_core.kernel.op_examples import Examples

__all__ = [
    "ALL",
    "FLOATING",
    "INTEGERS",
    "KINDS",
    "REAL",
    "REAL_FLOATING",
    "RESULTS",
    "WORK_KINDS",
    "Kinds",
    "OpRecord",
    "Result",
    "WorkKind",
]

#: How the work of an op (``work.py``) follows from the shapes of its array arguments:
#:
#: * ``view``: nothing computed, nothing read (a view: ``permute_dims``, ``squeeze``); only
#:   moving the arguments to a device costs;
#: * ``copy``: every element of the arguments read and written once (``flip``, ``roll``);
#: * ``create``: the one "shape" is that of the array created (``eye``, ``linspace``);
#: * ``reduction``: ``flops`` operations per element, to one element (``prod``, ``all``);
#: * ``scan``: one operation per element, to as many (``cumulative_prod``, ``diff``);
#: * ``sort``: ``n log2 n`` comparisons along the last axis (``argsort``, ``unique_*``);
#: * ``elementwise``: ``flops`` operations per element of the broadcast shape of the arguments;
#: * ``own``: the op's own declaration in ``work.py`` (``linalg.det``: 2/3 n^3);
#: * ``unknown``: none; the shapes do not say it (``einsum``'s depends on its subscripts).
WorkKind = Literal[
    "view", "copy", "create", "reduction", "scan", "sort", "elementwise", "own", "unknown"
]
WORK_KINDS: tuple[str, ...] = (
    "view", "copy", "create", "reduction", "scan", "sort", "elementwise", "own", "unknown",
)  # fmt: skip

#: What a call returns, the fact the lint reads: an ``array`` of the backend, a ``tuple`` of
#: arrays (a named tuple such as ``linalg.eigh``'s, or a list such as ``meshgrid``'s), a
#: ``numpy`` array (the way out of Prism: ``to_numpy``), or ``other`` (a Python value).
Result = Literal["array", "tuple", "numpy", "other"]
RESULTS: tuple[str, ...] = ("array", "tuple", "numpy", "other")

#: The dtypes the standard defines a function for: ``numeric`` (integers, real and complex
#: floating point), ``real`` (integers and real floating point), ``floating`` (real and complex
#: floating point), ``real_floating``, ``integer``, ``integer_or_boolean``, ``boolean``, and
#: ``all`` (every dtype, bool included).
Kinds = Literal[
    "numeric",
    "real",
    "floating",
    "real_floating",
    "integer",
    "integer_or_boolean",
    "boolean",
    "all",
]
KINDS: tuple[str, ...] = (
    "numeric", "real", "floating", "real_floating", "integer", "integer_or_boolean", "boolean",
    "all",
)  # fmt: skip

# The dtypes the conformance suite checks an op in (the first: the dtype of its keyword checks).
#: Every dtype of the suite but bool.
ALL: tuple[str, ...] = ("float64", "float32", "complex128", "complex64", "int64", "int32")
#: Real and complex floating point.
FLOATING: tuple[str, ...] = ("float64", "float32", "complex128", "complex64")
#: Integers and real floating point.
REAL: tuple[str, ...] = ("float64", "float32", "int64", "int32")
#: Real floating point.
REAL_FLOATING: tuple[str, ...] = ("float64", "float32")
#: Integers (bool ops are checked in integers too: NumPy reads them as bool).
INTEGERS: tuple[str, ...] = ("int64", "int32")


class OpRecord(NamedTuple):
    """One builtin op, as Prism declares it."""

    #: The op's name: the standard's (``"flip"``), with its extension (``"linalg.det"``).
    name: str
    #: Its signature as the standard writes it, from the parenthesis on:
    #: ``"(x, /, *, axis=None)"``; ``inspect.signature`` and ``help()`` show it.
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
    #: Whether the Array API standard has it (``prism_core.array_api`` exposes only these);
    #: the standard's name where it is not the op's (``"pow"`` for ``power``).
    standard: bool | str = True
    #: The dtypes the conformance suite checks it in, the first that of its keyword checks
    #: (``()``: not checked, as ``random.normal``, whose numbers are the backend's own).
    dtypes: tuple[str, ...] = ALL
    #: Operations per element, for the ``elementwise`` and ``reduction`` work (a
    #: transcendental function counts as the handful a vectorised libm spends).
    flops: float = 1.0
    #: The dtypes the standard defines it for (:data:`Kinds`), where the record says.
    kinds: Kinds | None = None
    #: ``True`` where the result is bool whatever the inputs (comparisons, ``isnan``, ...).
    boolean_result: bool = False
    #: ``True`` where the result holds indices or counts, in NumPy's index dtype (``argmax``).
    index_result: bool = False
    #: The positions of the operands NumPy promotes together (one in ``sequences``: its arrays),
    #: as a namespace backend does too; the conformance suite checks them in mixed dtypes.
    promoted: tuple[int, ...] = ()
    #: How NumPy computes integer arguments: in the widest integer (``"accumulate"``: ``sum``),
    #: in ``"float64"`` (``mean``), or each in a float of its own (``"float"``: ``sin``).
    widened: Literal["accumulate", "float64", "float"] | None = None
    #: A creation op's dtype without ``dtype=``: NumPy's ``"float"`` (``zeros``), the Python
    #: ``"values"``' (``full``, ``arange``) or its ``"argument"``'s (``asarray``, ``ones_like``).
    creation: Literal["float", "values", "argument"] | None = None
    #: Whether an op that creates nothing takes a ``dtype`` (``sum``, ``astype``).
    dtype_keyword: bool = False
    #: NumPy's ``(position, keyword)`` of a keyword-only parameter: ``zeros((n, n), int32)``.
    numpy_positional: tuple[int, str] | None = None
    #: The type of a result of several arrays in the reference: ``"tuple"``, ``"list"``, or a
    #: named tuple of ``kernel/contract/results.py`` (``"SVDResult"``).
    container: str | None = None
    #: What to check when moving a NumPy call to the op (the lint's note: ``ddof=``).
    numpy_note: str = ""
    #: The conformance suite's calls beyond its cases: the mistakes ``"shapes"``, ``"rank"`` (a
    #: vector), ``"square"`` (64 x 65), and a ``"singular"`` (and ``"hermitian"``) matrix.
    probes: tuple[Literal["shapes", "rank", "square", "singular", "hermitian"], ...] = ()
    #: How ``prism bench`` and ``prism.tune(op, sizes=...)`` make its arguments at a size.
    examples: Examples | None = None
    #: How its calls split along an axis (docs/split.md, "How each op splits"): the kind of rule,
    #: and for a reduction how its parts combine (``"reduction add"``; none: ``std``).
    split: str | None = None

    @property
    def arity(self) -> int:
        """How many array arguments it takes (its positions in :attr:`array_args`)."""
        return len(self.array_args or ())

    @property
    def standard_name(self) -> str | None:
        """Its name in the standard's namespace; ``None`` when the standard has no such op."""
        if isinstance(self.standard, str):
            return self.standard
        return self.name if self.standard else None

    @property
    def text(self) -> str:
        """Its documentation as the catalogue gives it: the signature, then what it does."""
        return f"{self.name}{self.signature}: {' '.join(self.doc.split())}"
