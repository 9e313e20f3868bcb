"""The Array API's searching, set and sorting functions, declared as data: ``argsort``,
``nonzero``, ``searchsorted``, ``count_nonzero`` and the ``unique_*`` family (``isin`` is the
2025.12 standard's, not 2024.12's).

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and no array
library.
"""

from __future__ import annotations

from prism_core.kernel.oprecord import REAL, OpRecord

__all__ = ["ROWS"]

#: Prism's NumPy references of this family (``prism_core/_builtin/numpy_searching.py``).
_REF = "prism_core._builtin.numpy_searching:"

#: The unique functions are checked in one complex dtype too.
_UNIQUE = (*REAL, "complex128")

ROWS: tuple[OpRecord, ...] = (
    # -- the first ops Prism had ---------------------------------------------------------------
    OpRecord(
        "argmax",
        "(x, /, *, axis=None, keepdims=False)",
        """the index of the largest element of ``x`` along ``axis`` (an int; ``None`` indexes the
        flattened array), the first one when several are equal and the first NaN where there is
        one, as the Array API's ``argmax``; ``keepdims=True`` keeps the reduced axis with size
        one. The indices are int64 (NumPy's ``intp``); an empty ``x`` or axis is a
        ``ValueError``, an ``axis`` out of range NumPy's ``AxisError`` (a ``ValueError``).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:argmax",
        dtypes=REAL,
        index_result=True,
        split="reduction",
    ),
    OpRecord(
        "argmin",
        "(x, /, *, axis=None, keepdims=False)",
        """the index of the smallest element of ``x`` along ``axis`` (an int; ``None`` indexes the
        flattened array), the first one when several are equal and the first NaN where there is
        one, as the Array API's ``argmin``; ``keepdims=True`` keeps the reduced axis with size
        one. The indices are int64 (NumPy's ``intp``); an empty ``x`` or axis is a
        ``ValueError``, an ``axis`` out of range NumPy's ``AxisError`` (a ``ValueError``).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:argmin",
        dtypes=REAL,
        index_result=True,
        split="reduction",
    ),
    OpRecord(
        "sort",
        "(x, /, *, axis=-1, descending=False, stable=True)",
        """a sorted copy of ``x`` along ``axis``, as the Array API's ``sort``: ascending unless
        ``descending=True``; ``stable=True`` keeps equal elements in their original order
        (descending too), ``False`` lets the backend pick a faster algorithm that may not. NaN
        sorts last ascending and first descending; NumPy sorts complex values lexicographically
        (the Array API defines only real ones); an ``axis`` out of range is NumPy's
        ``AxisError`` (a ``ValueError``).""",
        (0,), "sort", "array", "prism_core._builtin.numpy_ops:sort",
        dtypes=REAL,
        split="along",
    ),
    OpRecord(
        "where",
        "(condition, x1, x2, /)",
        """``x1`` where ``condition`` is true and ``x2`` elsewhere, elementwise, as the Array API's
        ``where``: the three broadcast against each other, ``condition`` is read as bool, and
        ``x1`` and ``x2`` promote as in ``add`` (either may be a Python scalar). All three are
        required: NumPy's one-argument ``where`` (the indices of the true elements) is not this
        op, and calling it so is a ``TypeError``.""",
        (0, 1, 2), "elementwise", "array", "prism_core._builtin.numpy_ops:where",
        kinds="all",
        promoted=(1, 2),
        probes=("shapes",),
        split="elementwise",
    ),
    # -- sorting ---------------------------------------------------------------------------------
    OpRecord(
        "argsort",
        "(x, /, *, axis=-1, descending=False, stable=True)",
        """the indices that sort ``x`` along ``axis`` (int64).  ``stable=True`` keeps equal
        elements in their order, in a ``descending`` sort too (the reversed array sorted stably
        ascending, indices counted back: not NumPy's ``argsort(-x)``, which is wrong for
        unsigned integers, bool and the smallest integer and reverses ties); ``stable=False``
        may give any order of ties.  NaN sorts last ascending, first descending.  The standard
        defines it for real numbers; complex numbers sort by real part, then imaginary part,
        as NumPy's.  An ``axis`` out of range is NumPy's ``AxisError``.""",
        (0,), "sort", "array", _REF + "argsort", dtypes=REAL,
        index_result=True,
    ),
    # -- searching -------------------------------------------------------------------------------
    OpRecord(
        "nonzero",
        "(x, /)",
        """the indices of the non-zero (true) elements of ``x``: a tuple of one int64 array per
        axis, in row-major order.  A 0-d ``x`` is a ``ValueError``, as the standard says (NumPy
        1.x accepted it with a deprecation warning).""",
        (0,), "scan", "tuple", _REF + "nonzero",
        index_result=True,
    ),
    OpRecord(
        "searchsorted",
        '(x1, x2, /, *, side="left", sorter=None)',
        """as the Array API's (and NumPy's) ``searchsorted``: the indices (int64, of ``x2``'s
        shape) where inserting each element of ``x2`` keeps
        the one-dimensional ``x1`` sorted ascending: the first such place with
        ``side="left"``, the last with ``"right"``; ``sorter`` (int64 indices that sort
        ``x1``, as from ``argsort``) stands for an ``x1`` not sorted itself.  The elements are
        compared in the two arrays' common dtype.  An ``x1`` that is not 1-D or a ``side``
        other than ``"left"`` and ``"right"`` is a ``ValueError``.""",
        (0, 1), "own", "array", _REF + "searchsorted", dtypes=REAL,
        index_result=True,
    ),
    OpRecord(
        "count_nonzero",
        "(x, /, *, axis=None, keepdims=False)",
        """the number of non-zero (true) elements of ``x`` over ``axis`` (an int, a tuple of
        ints, or ``None`` for every axis), in int64 (a 0-d array for every axis, where NumPy
        1.x gives a Python int), as the Array API's ``count_nonzero``; NaN counts as
        non-zero.""",
        (0,), "reduction", "array", _REF + "count_nonzero",
        index_result=True,
    ),
    # -- sets: the standard's unique_* (NumPy's unique split by what it returns) ------------------
    OpRecord(
        "unique_all",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted, as the Array API's (and NumPy
        2's) named tuple ``UniqueAllResult(values, indices, inverse_indices, counts)``:
        ``indices`` of each value's first occurrence in the flattened ``x``,
        ``inverse_indices`` (of ``x``'s shape) that rebuild ``x`` from ``values``, ``counts``
        of each value; the indices are int64.
        Equality is ``==``'s: each NaN is a value of its own (count 1), ``-0.0`` and ``0.0``
        are one (the first one met).""",
        (0,), "sort", "tuple", _REF + "unique_all", dtypes=_UNIQUE,
        index_result=True,
    ),
    OpRecord(
        "unique_counts",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted, and how often each occurs, as
        the Array API's named tuple ``UniqueCountsResult(values, counts)`` (counts int64);
        each NaN is a value of its own, as in ``unique_all``.""",
        (0,), "sort", "tuple", _REF + "unique_counts", dtypes=_UNIQUE,
        index_result=True,
    ),
    OpRecord(
        "unique_inverse",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted, and the int64 indices of ``x``'s
        shape that rebuild ``x`` from them, as the Array API's named tuple
        ``UniqueInverseResult(values, inverse_indices)``; each NaN is a value of its own, as
        in ``unique_all``.""",
        (0,), "sort", "tuple", _REF + "unique_inverse", dtypes=_UNIQUE,
        index_result=True,
    ),
    OpRecord(
        "unique_values",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted (the standard leaves the order to
        the library; Prism sorts on every backend, where NumPy 2.3's ``unique_values`` does
        not); each NaN is a value of its own, as in ``unique_all``.""",
        (0,), "sort", "array", _REF + "unique_values", dtypes=_UNIQUE,
    ),
)  # fmt: skip
