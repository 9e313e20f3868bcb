"""The Array API's searching, set and sorting functions, declared as data: ``argsort``,
``nonzero``, ``searchsorted``, ``count_nonzero`` and the ``unique_*`` family (``isin`` is the
2025.12 standard's, not 2024.12's).

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

#: Prism's NumPy references of this family (``prism_core/_builtin/numpy_searching.py``).
_REF = "prism_core._builtin.numpy_searching:"

ROWS: tuple[TableOp, ...] = (
    # -- sorting ---------------------------------------------------------------------------------
    TableOp(
        "argsort",
        "(x, /, *, axis=-1, descending=False, stable=True)",
        """the indices that sort ``x`` along ``axis`` (int64).  ``stable=True`` keeps equal
        elements in their order, in a ``descending`` sort too (the reversed array sorted stably
        ascending, indices counted back: not NumPy's ``argsort(-x)``, which is wrong for
        unsigned integers, bool and the smallest integer and reverses ties); ``stable=False``
        may give any order of ties.  NaN sorts last ascending, first descending.  The standard
        defines it for real numbers; complex numbers sort by real part, then imaginary part,
        as NumPy's.  An ``axis`` out of range is NumPy's ``AxisError``.""",
        (0,), "sort", "array", _REF + "argsort",
    ),
    # -- searching -------------------------------------------------------------------------------
    TableOp(
        "nonzero",
        "(x, /)",
        """the indices of the non-zero (true) elements of ``x``: a tuple of one int64 array per
        axis, in row-major order.  A 0-d ``x`` is a ``ValueError``, as the standard says (NumPy
        1.x accepted it with a deprecation warning).""",
        (0,), "scan", "tuple", _REF + "nonzero",
    ),
    TableOp(
        "searchsorted",
        '(x1, x2, /, *, side="left", sorter=None)',
        """as the Array API's (and NumPy's) ``searchsorted``: the indices (int64, of ``x2``'s
        shape) where inserting each element of ``x2`` keeps
        the one-dimensional ``x1`` sorted ascending: the first such place with
        ``side="left"``, the last with ``"right"``; ``sorter`` (int64 indices that sort
        ``x1``, as from ``argsort``) stands for an ``x1`` not sorted itself.  The elements are
        compared in the two arrays' common dtype.  An ``x1`` that is not 1-D or a ``side``
        other than ``"left"`` and ``"right"`` is a ``ValueError``.""",
        (0, 1), "own", "array", _REF + "searchsorted",
    ),
    TableOp(
        "count_nonzero",
        "(x, /, *, axis=None, keepdims=False)",
        """the number of non-zero (true) elements of ``x`` over ``axis`` (an int, a tuple of
        ints, or ``None`` for every axis), in int64 (a 0-d array for every axis, where NumPy
        1.x gives a Python int), as the Array API's ``count_nonzero``; NaN counts as
        non-zero.""",
        (0,), "reduction", "array", _REF + "count_nonzero",
    ),
    # -- sets: the standard's unique_* (NumPy's unique split by what it returns) ------------------
    TableOp(
        "unique_all",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted, as the Array API's (and NumPy
        2's) named tuple ``UniqueAllResult(values, indices, inverse_indices, counts)``:
        ``indices`` of each value's first occurrence in the flattened ``x``,
        ``inverse_indices`` (of ``x``'s shape) that rebuild ``x`` from ``values``, ``counts``
        of each value; the indices are int64.
        Equality is ``==``'s: each NaN is a value of its own (count 1), ``-0.0`` and ``0.0``
        are one (the first one met).""",
        (0,), "sort", "tuple", _REF + "unique_all",
    ),
    TableOp(
        "unique_counts",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted, and how often each occurs, as
        the Array API's named tuple ``UniqueCountsResult(values, counts)`` (counts int64);
        each NaN is a value of its own, as in ``unique_all``.""",
        (0,), "sort", "tuple", _REF + "unique_counts",
    ),
    TableOp(
        "unique_inverse",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted, and the int64 indices of ``x``'s
        shape that rebuild ``x`` from them, as the Array API's named tuple
        ``UniqueInverseResult(values, inverse_indices)``; each NaN is a value of its own, as
        in ``unique_all``.""",
        (0,), "sort", "tuple", _REF + "unique_inverse",
    ),
    TableOp(
        "unique_values",
        "(x, /)",
        """the unique elements of ``x`` (flattened), sorted (the standard leaves the order to
        the library; Prism sorts on every backend, where NumPy 2.3's ``unique_values`` does
        not); each NaN is a value of its own, as in ``unique_all``.""",
        (0,), "sort", "array", _REF + "unique_values",
    ),
)  # fmt: skip
