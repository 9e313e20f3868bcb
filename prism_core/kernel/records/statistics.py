"""The Array API's statistical and utility functions, declared as data: ``prod``,
``var``, ``cumulative_prod``, ``all``, ``any`` and ``diff``.

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and no array
library.
"""

from __future__ import annotations

from prism_core.kernel.oprecord import ALL, REAL, OpRecord

__all__ = ["ROWS"]

#: Prism's NumPy references of this family (``prism_core/_builtin/numpy_statistics.py``).
_REF = "prism_core._builtin.numpy_statistics:"

ROWS: tuple[OpRecord, ...] = (
    # -- the first ops Prism had ---------------------------------------------------------------
    OpRecord(
        "sum",
        "(x, /, *, axis=None, dtype=None, keepdims=False)",
        """the sum of ``x`` over ``axis`` (an int, a tuple of ints, or ``None`` for all axes), as
        the Array API's ``sum``; ``keepdims=True`` keeps the reduced axes with size one.
        ``dtype`` sets the accumulator and result type (default: the input's for floating-point
        types, the default integer for smaller integers); an empty sum is 0. A reduction to 0-d
        gives what the backend gives (a NumPy scalar for NumPy).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:sum_",
        widened="accumulate", dtype_keyword=True,
        split="reduction add",
    ),
    OpRecord(
        "mean",
        "(x, /, *, axis=None, keepdims=False)",
        """the arithmetic mean of ``x`` over ``axis`` (an int, a tuple of ints, or ``None`` for all
        axes), as the Array API's ``mean``; ``keepdims=True`` keeps the reduced axes with size
        one. Integers give float64; the mean of nothing is NaN (with a RuntimeWarning). A
        reduction to 0-d gives what the backend gives (a NumPy scalar for NumPy).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:mean",
        widened="float64", dtype_keyword=True,
        split="reduction mean",
    ),
    OpRecord(
        "std",
        "(x, /, *, axis=None, correction=0.0, keepdims=False)",
        """the standard deviation of ``x`` over ``axis`` (an int, a tuple of ints, or ``None`` for
        all axes), as the Array API's ``std``; ``keepdims=True`` keeps the reduced axes with
        size one. ``correction`` is subtracted from the number of elements in the divisor
        (Bessel's correction ``correction=1`` gives the sample standard deviation; NumPy calls
        it ``ddof``). A reduction to 0-d gives what the backend gives (a NumPy scalar for
        NumPy).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:std",
        flops=4.0,
        widened="float64", numpy_note="NumPy's ddof= is correction=",
        split="reduction",
    ),
    OpRecord(
        "min",
        "(x, /, *, axis=None, keepdims=False)",
        """the minimum of ``x`` over ``axis`` (an int, a tuple of ints, or ``None`` for all axes),
        as the Array API's ``min``; ``keepdims=True`` keeps the reduced axes with size one. NaN
        propagates; reducing an empty axis is a ``ValueError``. A reduction to 0-d gives what
        the backend gives (a NumPy scalar for NumPy). NumPy's ``amin`` is an alias (``axis``
        by keyword, as the standard has it).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:min_",
        dtypes=REAL,
        aliases=("amin",),
        split="reduction minimum",
    ),
    OpRecord(
        "max",
        "(x, /, *, axis=None, keepdims=False)",
        """the maximum of ``x`` over ``axis`` (an int, a tuple of ints, or ``None`` for all axes),
        as the Array API's ``max``; ``keepdims=True`` keeps the reduced axes with size one. NaN
        propagates; reducing an empty axis is a ``ValueError``. A reduction to 0-d gives what
        the backend gives (a NumPy scalar for NumPy). NumPy's ``amax`` is an alias (``axis``
        by keyword, as the standard has it).""",
        (0,), "reduction", "array", "prism_core._builtin.numpy_ops:max_",
        dtypes=REAL,
        aliases=("amax",),
        split="reduction maximum",
    ),
    OpRecord(
        "cumulative_sum",
        "(x, /, *, axis=None, dtype=None, include_initial=False)",
        """the running sums of ``x`` along ``axis``, as the Array API's ``cumulative_sum`` (also
        named ``cumsum``, with these semantics, not those of NumPy's ``cumsum``, which flattens
        when ``axis`` is None): ``axis=None`` is allowed only for a 1-D (or 0-d) ``x``, a
        ``ValueError`` otherwise; ``dtype`` sets the accumulator and result type (default: as
        ``sum``'s, the default integer for smaller integers and bool); ``include_initial=True``
        starts with a zero, so that the axis is one longer.""",
        (0,), "scan", "array", "prism_core._builtin.numpy_ops:cumulative_sum",
        aliases=("cumsum",),
        widened="accumulate",
        dtype_keyword=True,
        numpy_note="give axis= for arrays of more than one dimension",
    ),
    # -- reductions ------------------------------------------------------------------------------
    OpRecord(
        "prod",
        "(x, /, *, axis=None, dtype=None, keepdims=False)",
        """the product of the elements of ``x`` over ``axis`` (an int, a tuple of ints, or
        ``None`` for every axis; the product of nothing is 1).  With ``dtype=None`` the
        standard's rule, which is NumPy's: signed integers (and bool) multiply in int64,
        unsigned ones in uint64, floating-point types in their own type; ``dtype`` (a Prism
        dtype, a backend dtype or a name) sets the type to multiply and return in.""",
        (0,), "reduction", "array", _REF + "prod",
        widened="accumulate", dtype_keyword=True,
    ),
    OpRecord(
        "var",
        "(x, /, *, axis=None, correction=0.0, keepdims=False)",
        """the variance of the elements of ``x`` over ``axis``: the mean squared deviation from
        the mean, divided by ``N - correction`` (``correction=1`` for the sample variance;
        NumPy's ``ddof``), a real floating-point result (float64 for integers, float32 for
        complex64).  ``N - correction <= 0`` gives inf or NaN, as NumPy (with its warning).""",
        (0,), "reduction", "array", _REF + "var",
        widened="float64",
    ),
    OpRecord(
        "all",
        "(x, /, *, axis=None, keepdims=False)",
        """whether every element of ``x`` over ``axis`` is true (non-zero; NaN counts as
        true): a bool array (0-d for every axis); ``True`` for an empty reduction.  NumPy's
        ``all``, which is the Array API's.""",
        (0,), "reduction", "array", "numpy:all", dtypes=("bool", *ALL),
    ),
    OpRecord(
        "any",
        "(x, /, *, axis=None, keepdims=False)",
        """whether any element of ``x`` over ``axis`` is true (non-zero; NaN counts as true):
        a bool array (0-d for every axis); ``False`` for an empty reduction.  NumPy's ``any``,
        which is the Array API's.""",
        (0,), "reduction", "array", "numpy:any", dtypes=("bool", *ALL),
    ),
    # -- running products and differences -----------------------------------------------------
    OpRecord(
        "cumulative_prod",
        "(x, /, *, axis=None, dtype=None, include_initial=False)",
        """the running product of ``x`` along ``axis`` (required unless ``x`` is 1-D, else a
        ``ValueError``; a 0-d ``x`` is a vector of one element, as in NumPy 2.1), in the dtype
        ``prod`` would use (small integers in int64 or uint64) unless ``dtype`` says;
        ``include_initial=True`` puts the product of nothing (1) first.""",
        (0,), "scan", "array", _REF + "cumulative_prod",
        widened="accumulate", dtype_keyword=True,
    ),
    OpRecord(
        "diff",
        "(x, /, *, axis=-1, n=1, prepend=None, append=None)",
        """the ``n``-th forward difference of ``x`` along ``axis``
        (``out[i] = x[i + 1] - x[i]``, ``n`` times; ``n=0`` gives ``x``), after ``prepend`` and
        ``append`` (arrays of ``x``'s shape but along ``axis``, or scalars) are joined to
        ``x`` at either end; the axis shrinks by ``n``.  Of booleans it is ``!=`` (a bool
        array); integers wrap around as NumPy's.  A 0-d ``x`` or a negative ``n`` is a
        ``ValueError``, an ``n`` that is not an integer a ``TypeError``.""",
        (0,), "scan", "array", _REF + "diff",
    ),
    # -- NumPy's, beyond the standard ------------------------------------------------------
    OpRecord(
        "cov",
        "(m, /, y=None, rowvar=True, bias=False, ddof=None)",
        """NumPy's ``cov`` (not in the Array API), with NumPy's defaults: the covariance matrix
        of the variables in the rows of ``m`` (1-D: one variable; ``rowvar=False``: in its
        columns), ``y`` (optional) holding more variables in the same layout; normalised by
        ``N - 1`` (``bias=True``: ``N``; ``ddof`` overrides both).  The result is float64
        (complex128 for complex input: NumPy computes in ``result_type(m, float64)``), of shape
        ``(V, V)`` for ``V`` variables, 0-d for one.  NumPy's weights (``fweights``,
        ``aweights``) are the reference's only.""",
        (0, 1), "own", "array", "numpy:cov",
        standard=False, dtypes=ALL,
    ),
    OpRecord(
        "histogram",
        "(a, /, bins=10, range=None, weights=None, density=None)",
        """NumPy's ``histogram`` (not in the Array API): the counts of the elements of ``a``
        (flattened) in ``bins`` equal bins spanning ``range`` (``(a.min(), a.max())`` without
        it), or in the bins whose edges the 1-D array ``bins`` gives, as a tuple ``(counts,
        edges)``: each bin is half-open but the last, which includes its right edge.  The
        counts are int64 (float64 with ``weights``, an array of ``a``'s shape, or ``density=True``,
        which divides by the total and the bin widths); the edges float64 (float32 for float32
        ``a``), as NumPy gives them.""",
        (0,), "reduction", "tuple", "numpy:histogram",
        standard=False, dtypes=REAL, flops=8.0,
    ),
)  # fmt: skip
