"""The Array API's manipulation and indexing functions, declared as data:
``broadcast_arrays``, ``broadcast_to``, ``flip``, ``permute_dims``, ``repeat``, ``roll``,
``squeeze``, ``tile``, ``unstack``, ``take`` and ``take_along_axis``.

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and no array
library.
"""

from __future__ import annotations

from prism_core.kernel.oprecord import OpRecord

__all__ = ["ROWS"]

_N = "prism_core._builtin.numpy_manipulation:"

ROWS: tuple[OpRecord, ...] = (
    # -- the first ops Prism had ---------------------------------------------------------------
    OpRecord(
        "reshape",
        "(x, /, shape, *, copy=None)",
        """``x`` with a new ``shape`` (one entry may be -1) and the same elements in row-major
        order, as the Array API's ``reshape``; ``copy=True`` always copies, ``copy=False`` never
        does (``ValueError`` when the layout needs a copy), ``None`` returns a view when it can.""",
        (0,),
        "view",
        "array",
        "prism_core._builtin.numpy_ops:reshape",
    ),
    OpRecord(
        "transpose",
        "(x, /, axes=None)",
        """``x`` with its axes permuted, as the Array API's ``permute_dims`` under NumPy's name:
        ``axes`` is a permutation of ``range(x.ndim)``, and ``None`` (unlike the Array API,
        where it is required) reverses the axes. Returns a view where the backend can.""",
        (0,),
        "view",
        "array",
        "prism_core._builtin.numpy_ops:transpose",
        standard=False,
        numpy_note="axes= is a full permutation",
    ),
    OpRecord(
        "moveaxis",
        "(x, /, source, destination)",
        """``x`` with the axes ``source`` (an int or a tuple of ints) moved to the positions
        ``destination``, the other axes keeping their order, as the Array API's ``moveaxis``.""",
        (0,),
        "view",
        "array",
        "numpy:moveaxis",
    ),
    OpRecord(
        "expand_dims",
        "(x, /, axis=0)",
        """``x`` with a new axis of size one inserted at position ``axis`` (negative counts from
        the end of the result), as the Array API's ``expand_dims``; NumPy's tuple of axes is
        accepted as well.""",
        (0,),
        "view",
        "array",
        "prism_core._builtin.numpy_ops:expand_dims",
    ),
    OpRecord(
        "stack",
        "(arrays, /, *, axis=0)",
        """the arrays of the sequence ``arrays`` (a list or tuple of arrays of one shape) joined
        along a new axis ``axis`` of the result (negative counts from the end of the result), as
        the Array API's ``stack``; their dtypes promote as in ``add``. An empty sequence or
        arrays of different shapes are a ``ValueError``.""",
        (0,),
        "copy",
        "array",
        "prism_core._builtin.numpy_ops:stack",
        sequences=(0,),
        promoted=(0,),
        probes=("shapes",),
    ),
    OpRecord(
        "concat",
        "(arrays, /, *, axis=0)",
        """the arrays of the sequence ``arrays`` (a list or tuple of arrays) joined along their
        existing axis ``axis``, as the Array API's ``concat`` (NumPy's ``concatenate``, an
        alias): the arrays must agree in every other dimension, and ``axis=None`` flattens them
        first; their dtypes promote as in ``add``. An empty sequence, 0-d arrays or mismatched
        shapes are a ``ValueError``.""",
        (0,),
        "copy",
        "array",
        "prism_core._builtin.numpy_ops:concat",
        sequences=(0,),
        aliases=("concatenate",),
        promoted=(0,),
    ),
    # -- broadcasting ---------------------------------------------------------------------
    OpRecord(
        "broadcast_arrays",
        "(*arrays)",
        "the arrays broadcast against one another, as a tuple of arrays of one shape (views where "
        "the backend has them: read them, do not write to them), each keeping its dtype. A tuple "
        "on every backend, as the standard's next version and NumPy 2 have it (the 2024.12 text "
        "says a list). Shapes that do not broadcast are a ValueError naming them.",
        None,
        "view",
        "tuple",
        _N + "broadcast_arrays",
        container="tuple",
    ),
    OpRecord(
        "broadcast_to",
        "(x, /, shape)",
        "``x`` broadcast to ``shape`` (a tuple of ints), as the Array API's ``broadcast_to``: a "
        "read-only view where the backend has views; ``x``'s dimensions must each be 1 or the "
        "target's, counting from the last. A shape ``x`` cannot broadcast to, or a negative size, "
        "is a ValueError.",
        (0,),
        "view",
        "array",
        "numpy:broadcast_to",
    ),
    # -- axes and order -------------------------------------------------------------------
    OpRecord(
        "flip",
        "(x, /, *, axis=None)",
        "``x`` with the order of its elements reversed along ``axis`` (an int or a tuple of ints; "
        "``None``: every axis), the shape unchanged. NumPy and CuPy return a view, torch a copy. "
        "An axis out of range is NumPy's AxisError, a repeated one a ValueError.",
        (0,),
        "view",
        "array",
        "numpy:flip",
    ),
    OpRecord(
        "permute_dims",
        "(x, /, axes)",
        "``x`` with its axes permuted, as the Array API's ``permute_dims``: ``axes`` (required) "
        "is a permutation of ``range(x.ndim)`` (negative axes count from the end), and axis ``i`` "
        "of the result is axis ``axes[i]`` of ``x``. A view where the backend can. ``axes=None`` "
        "is a TypeError (Prism's ``transpose`` reverses the axes); a wrong length is a "
        "ValueError.",
        (0,),
        "view",
        "array",
        _N + "permute_dims",
    ),
    OpRecord(
        "squeeze",
        "(x, /, axis)",
        "``x`` without the axes ``axis`` (an int or a tuple of ints, required: unlike NumPy there "
        'is no "every axis of size 1"), each of which must have size 1: another size is a '
        "ValueError naming the axis and its size, ``axis=None`` a ValueError, an axis out of "
        "range NumPy's AxisError. A view where the backend can.",
        (0,),
        "view",
        "array",
        _N + "squeeze",
    ),
    OpRecord(
        "unstack",
        "(x, /, *, axis=0)",
        "the arrays along axis ``axis`` of ``x``, as a tuple of ``x.shape[axis]`` arrays of "
        "``x.ndim - 1`` dimensions (views where the backend has them). A 0-d ``x`` is a "
        "ValueError, an axis out of range NumPy's AxisError.",
        (0,),
        "view",
        "tuple",
        _N + "unstack",
    ),
    OpRecord(
        "roll",
        "(x, /, shift, *, axis=None)",
        "``x`` with its elements shifted by ``shift`` along ``axis`` (elements leaving one end "
        "come back at the other): ``shift`` an int or a tuple of ints, ``axis`` an int, a tuple "
        "of as many ints, or ``None`` (the flattened array, shape restored). As NumPy (the "
        "standard's superset): an int shift or axis pairs with each of a tuple, and shifts of one "
        "axis add up.",
        (0,),
        "copy",
        "array",
        "numpy:roll",
    ),
    # -- repetition -----------------------------------------------------------------------
    OpRecord(
        "repeat",
        "(x, repeats, /, *, axis=None)",
        "each element of ``x`` repeated along ``axis`` (``None``: of the flattened ``x``, a 1-D "
        "result), as the Array API's ``repeat``: ``repeats`` is an int, the times for every "
        "element, or a 1-D integer array of one count per element along the axis (or one, "
        "broadcast). Negative counts or a length that does not fit are a ValueError, a repeats "
        "that is not of integers a TypeError, both naming ``repeats``. Array repeats are moved "
        "with ``x``.",
        (0, 1),
        "copy",
        "array",
        _N + "repeat",
    ),
    OpRecord(
        "tile",
        "(x, repetitions, /)",
        "``x`` repeated ``repetitions[i]`` times along axis ``i``, as the Array API's ``tile`` "
        "(``repetitions`` a tuple of ints; with fewer entries than ``x.ndim`` the first axes are "
        "repeated once, with more ``x`` is given leading axes of size 1 first). A negative "
        "repetition is a ValueError.",
        (0,),
        "copy",
        "array",
        "numpy:tile",
    ),
    # -- indexing -------------------------------------------------------------------------
    OpRecord(
        "take",
        "(x, indices, /, *, axis=None)",
        "the elements of ``x`` at ``indices`` (an integer array; negative ones count from the "
        "end) along ``axis``: ``axis`` may be omitted only when ``x`` is 1-D (a ValueError "
        "otherwise, where NumPy would flatten ``x``). Indices out of range are an IndexError on "
        "every backend (on a GPU the check costs a synchronisation), indices that are not "
        "integers a TypeError naming ``indices``. As in NumPy, N-D indices give the result their "
        "shape at ``axis``.",
        (0, 1),
        "copy",
        "array",
        _N + "take",
    ),
    OpRecord(
        "take_along_axis",
        "(x, indices, /, *, axis=-1)",
        "the elements of ``x`` at ``indices`` along ``axis`` (an int), pairing each index with "
        "the positions of the other axes, as the Array API's ``take_along_axis``: ``indices`` has "
        "``x``'s number of dimensions, and the other axes broadcast against ``x``'s "
        "(``argsort``'s result sorts ``x``). Negative indices count from the end; out of range is "
        "an IndexError, indices that are not integers a TypeError naming ``indices``, another "
        "rank a ValueError.",
        (0, 1),
        "copy",
        "array",
        _N + "take_along_axis",
    ),
)
