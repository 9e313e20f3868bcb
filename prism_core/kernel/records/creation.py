"""The Array API's creation and data-type functions, declared as data: ``arange``,
``linspace``, ``eye``, ``empty``, the ``*_like`` functions, ``meshgrid``, ``tril``, ``triu`` and
``astype``.

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and no array
library.

The data-type functions that take dtypes rather than arrays (``result_type``, ``can_cast``,
``isdtype``, ``finfo``, ``iinfo``) are no ops: they are plain functions of
``prism_core._promotion`` and ``prism_core._dtype_info``.
"""

from __future__ import annotations

from prism_core.kernel.oprecord import REAL, OpRecord

__all__ = ["ROWS"]

#: Where the NumPy references that are not NumPy's own functions are.
_NP = "prism_core._builtin.numpy_creation"
#: What every creation function says of ``device=``.
_DEVICE = (
    "``device`` is where (the Array API's): ``None`` (the backend's default), ``'cpu'``, a "
    "backend's own device, "
    "or Prism's description of a device; a backend that cannot create there raises "
    "``ValueError`` naming the device and what it accepts."
)
#: What the ``*_like`` functions share.
_LIKE = (
    "of ``x``'s shape, in ``dtype`` (``x``'s when ``None``), in a new array of ``x``'s "
    "backend, on ``x``'s device unless ``device`` says otherwise.  " + _DEVICE
)

ROWS: tuple[OpRecord, ...] = (
    # -- the first ops Prism had ---------------------------------------------------------------
    OpRecord(
        "asarray",
        "(obj, /, *, dtype=None, device=None, copy=None)",
        """convert ``obj`` (an array, a Python scalar or a nested sequence) to an array, as the
        Array API's ``asarray``. ``dtype`` is a Prism dtype, a backend dtype or a name (``None``
        infers it from ``obj``); ``copy=True`` always copies, ``copy=False`` never does (raising
        ``ValueError`` when a copy is needed), ``None`` copies only when needed. ``obj`` counts
        as an array argument only when it is one (it has a ``dtype``): lists and scalars are
        data, not arrays to convert. ``device`` as in ``zeros``.""",
        None,
        "copy",
        "array",
        "prism_core._builtin.numpy_ops:asarray",
        creation="argument",
        numpy_note="or prism.to_numpy(x) at the boundary where NumPy itself is needed",
    ),
    OpRecord(
        "zeros",
        "(shape, dtype=None, *, device=None)",
        """a new array of ``shape`` (an int or a tuple of ints) filled with zeros, as the Array
        API's ``zeros``; ``dtype`` defaults to float64, and may be given by position as
        NumPy allows (``zeros((n, n), int32)``; the standard has it by keyword only).
        ``device`` is where: ``None`` (the
        backend's default), ``"cpu"``, a backend's own device, or Prism's description of a
        device (a GPU's runs the call as ``prism_core.device(...)`` of it would).""",
        (),
        "create",
        "array",
        "prism_core._builtin.numpy_ops:zeros",
        creation="float",
        numpy_positional=(1, "dtype"),
    ),
    OpRecord(
        "ones",
        "(shape, dtype=None, *, device=None)",
        """a new array of ``shape`` (an int or a tuple of ints) filled with ones, as the Array
        API's ``ones``; ``dtype`` defaults to float64 (by position too, as NumPy allows);
        ``device`` as in ``zeros``.""",
        (),
        "create",
        "array",
        "prism_core._builtin.numpy_ops:ones",
        creation="float",
        numpy_positional=(1, "dtype"),
    ),
    OpRecord(
        "full",
        "(shape, fill_value, dtype=None, *, device=None)",
        """a new array of ``shape`` filled with ``fill_value``, as the Array API's ``full``;
        without ``dtype`` the type is inferred from ``fill_value`` (bool, the default integer,
        float64 or complex128); ``dtype`` may be given by position, after ``fill_value``, as
        NumPy allows; ``device`` as in ``zeros``.""",
        (),
        "create",
        "array",
        "prism_core._builtin.numpy_ops:full",
        creation="values",
        numpy_positional=(2, "dtype"),
    ),
    OpRecord(
        "to_numpy",
        "(x, /)",
        """``x`` as a NumPy array (``numpy.asarray``), copied to the host when it lives on a
        device; the way out of Prism into NumPy code.""",
        (0,),
        "view",
        "numpy",
        "prism_core._builtin.numpy_ops:to_numpy",
        standard=False,
    ),
    OpRecord(
        "triu_indices",
        "(n, /, k=0, m=None)",
        """NumPy's ``triu_indices`` (not in the Array API): the row and column indices of the upper
        triangle of an ``(n, m)`` matrix (``m=None``: square, ``m = n``) from the ``k``-th
        diagonal up (``k < 0`` takes diagonals below the main one too), as a tuple of two int64
        arrays (NumPy's ``intp``) in row-major order; ``n = 0`` gives empty arrays. A creation
        op: it takes no array, so in automatic mode it runs on NumPy, and under ``use_backend``
        it creates that backend's arrays.""",
        (),
        "own",
        "tuple",
        "numpy:triu_indices",
        standard=False,
        dtypes=("int64",),
    ),
    OpRecord(
        "from_dlpack",
        "(x, /, *, device=None, copy=None)",
        """the backend's array for ``x``, an array of any library that speaks DLPack (it has
        ``__dlpack__``), sharing ``x``'s memory where the devices allow (NumPy and torch on the
        CPU do), as the Array API's ``from_dlpack``; ``copy=True`` always copies, ``device`` as
        in ``zeros``. An ``x`` without ``__dlpack__`` (a list, a scalar) is a ``TypeError``; an
        ``x`` on a device the backend cannot read is the backend's error (NumPy's
        ``BufferError`` or ``RuntimeError`` for a GPU array).""",
        (0,),
        "view",
        "array",
        "prism_core._builtin.numpy_ops:from_dlpack",
        creation="argument",
    ),
    # -- creating arrays from numbers: no array argument --------------------------------------
    OpRecord(
        "arange",
        "(start, /, stop=None, step=1, *, dtype=None, device=None)",
        "evenly spaced values in the half-open interval ``[start, stop)`` (``[0, start)`` "
        "without ``stop``), ``ceil((stop - start) / step)`` of them, as a 1-D array.  Without "
        "``dtype``, int64 when ``start``, ``stop`` and ``step`` are all integers, else float64 "
        "(the standard's defaults, on every platform; NumPy 1's was the C long).  With an "
        "integer ``dtype`` and a fractional bound or step, the values are computed in float64 "
        "and truncated (NumPy computes the step in the integer type).  ``step=0`` is a "
        "``ValueError`` naming ``step``.  " + _DEVICE,
        (),
        "create",
        "array",
        f"{_NP}:arange",
        dtypes=REAL,
        creation="values",
    ),
    OpRecord(
        "linspace",
        "(start, stop, /, num, *, dtype=None, device=None, endpoint=True)",
        "``num`` evenly spaced numbers from ``start`` to ``stop`` (included when ``endpoint``), "
        "as a 1-D array.  Without ``dtype``, complex128 when ``start`` or ``stop`` is complex, "
        "else float64.  With an integer ``dtype`` (the standard leaves it to the library) the "
        "values are computed in float64 and rounded towards minus infinity, as NumPy 2 does "
        "(NumPy 1 truncated).  A negative ``num`` is a ``ValueError`` naming ``num``.  " + _DEVICE,
        (),
        "create",
        "array",
        f"{_NP}:linspace",
        dtypes=("float64", "float32", "complex128", "complex64", "int64"),
        creation="float",
    ),
    OpRecord(
        "eye",
        "(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None)",
        "an ``n_rows`` x ``n_cols`` (``n_rows`` x ``n_rows`` without ``n_cols``) array with "
        "ones on the ``k``-th diagonal (``k > 0`` above the main one, ``k < 0`` below) and "
        "zeros elsewhere; float64 without ``dtype``.  " + _DEVICE,
        (),
        "create",
        "array",
        f"{_NP}:eye",
        creation="float",
    ),
    OpRecord(
        "empty",
        "(shape, dtype=None, *, device=None)",
        "a new array of ``shape`` (an int or a tuple of ints) whose values are not set (what "
        "the memory held: read none before writing it); float64 without ``dtype`` (which may be "
        "given by position, as NumPy allows).  " + _DEVICE,
        (),
        "create",
        "array",
        f"{_NP}:empty",
        creation="float",
        numpy_positional=(1, "dtype"),
    ),
    # -- creating arrays like another: its shape, dtype and device ----------------------------
    OpRecord(
        "empty_like",
        "(x, /, *, dtype=None, device=None)",
        "an array whose values are not set, " + _LIKE,
        (0,),
        "create",
        "array",
        f"{_NP}:empty_like",
        creation="argument",
    ),
    OpRecord(
        "zeros_like",
        "(x, /, *, dtype=None, device=None)",
        "zeros " + _LIKE,
        (0,),
        "create",
        "array",
        f"{_NP}:zeros_like",
        creation="argument",
    ),
    OpRecord(
        "ones_like",
        "(x, /, *, dtype=None, device=None)",
        "ones " + _LIKE,
        (0,),
        "create",
        "array",
        f"{_NP}:ones_like",
        creation="argument",
    ),
    OpRecord(
        "full_like",
        "(x, /, fill_value, *, dtype=None, device=None)",
        "``fill_value`` (a Python bool, int, float or complex; anything else is a "
        "``TypeError`` naming ``fill_value``) " + _LIKE,
        (0,),
        "create",
        "array",
        f"{_NP}:full_like",
        creation="argument",
    ),
    # -- from arrays ----------------------------------------------------------------------------
    OpRecord(
        "meshgrid",
        "(*arrays, indexing='xy')",
        "coordinate matrices from 1-D coordinate vectors: for N ``arrays`` of sizes ``n1..nN``, "
        "a list of N arrays of shape ``(n2, n1, n3, ..., nN)`` (``indexing='xy'``, Cartesian) or "
        "``(n1, ..., nN)`` (``'ij'``, matrix), as the standard says (a list; NumPy 2 gives a "
        "tuple).  The arrays must share one dtype (``ValueError`` otherwise, as in "
        "``array-api-strict``: NumPy would promote); an ``indexing`` other than ``'xy'`` or "
        "``'ij'`` is a ``ValueError`` naming ``indexing``.",
        None,
        "copy",
        "tuple",
        f"{_NP}:meshgrid",
        container="list",
    ),
    OpRecord(
        "tril",
        "(x, /, k=0)",
        "``x`` (of shape ``(..., M, N)``) with the elements above its ``k``-th diagonal zeroed, "
        "for each matrix of a stack; ``k`` may be given by position, as NumPy allows "
        "(``tril(x, 1)``; the standard has it by keyword only).  ``x`` must have two "
        "dimensions or more: a 1-D ``x`` is a ``ValueError`` naming ``x`` (NumPy would take it "
        "for the rows of a square matrix).",
        (0,),
        "copy",
        "array",
        f"{_NP}:tril",
        numpy_positional=(1, "k"),
    ),
    OpRecord(
        "triu",
        "(x, /, k=0)",
        "``x`` (of shape ``(..., M, N)``) with the elements below its ``k``-th diagonal zeroed, "
        "for each matrix of a stack; ``k`` may be given by position, as NumPy allows "
        "(``triu(x, 1)``; the standard has it by keyword only).  ``x`` must have two "
        "dimensions or more: a 1-D ``x`` is a ``ValueError`` naming ``x`` (NumPy would take it "
        "for the rows of a square matrix).",
        (0,),
        "copy",
        "array",
        f"{_NP}:triu",
        numpy_positional=(1, "k"),
    ),
    # -- the data-type function that takes an array -------------------------------------------
    OpRecord(
        "astype",
        "(x, dtype, /, *, copy=True, device=None)",
        "``x`` converted to ``dtype`` (a Prism dtype, a backend's dtype or a name), as a new "
        "array; with ``copy=False``, ``x`` itself when it has that dtype already (and is on "
        "``device``).  A complex ``x`` to a real ``dtype`` is a ``TypeError``, as the standard "
        "asks (NumPy would drop the imaginary parts: use ``real`` first); other casts are the "
        "backend's (floats to integers truncate; out-of-range values are the backend's).  "
        + _DEVICE,
        (0,),
        "copy",
        "array",
        f"{_NP}:astype",
        dtype_keyword=True,
    ),
)
