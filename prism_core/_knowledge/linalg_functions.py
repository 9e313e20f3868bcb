"""The Array API's linear algebra functions and the ``linalg`` extension, declared as data (issue
12): ``matrix_transpose``, ``tensordot``, ``vecdot`` and the ``linalg`` functions Prism did not
have (``det``, ``slogdet``, ``pinv``, ...).

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.

The linalg functions Prism had before (``linalg.cholesky``, ``eigh``, ``inv``, ``matrix_norm``,
``qr``, ``solve``, ``svd``, ``vector_norm``) are declared in the catalogue; ``matmul`` too.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

#: Prism's NumPy references where NumPy's own function is not the standard's.
_REF = "prism_core._builtin.numpy_linalg"
_FLOATING = (
    "Integers give float64 on NumPy (the standard defines it for floating-point types only)."
)
_LINALG_ERROR = "a matrix or a stack of matrices (2 or more dimensions; fewer is a ``ValueError``)"

ROWS: tuple[TableOp, ...] = (
    # -- the main namespace (repeated in the linalg extension) ---------------------------------
    TableOp(
        "matrix_transpose", "(x, /)",
        f"``x`` with its last two axes swapped, as the Array API's ``matrix_transpose`` "
        f"(NumPy 2's; a view where the backend has views): ``x`` is {_LINALG_ERROR}.",
        (0,), "view", "array", f"{_REF}:matrix_transpose",
    ),
    TableOp(
        "tensordot", "(x1, x2, /, *, axes=2)",
        "The tensor contraction of ``x1`` and ``x2`` over ``axes``: an int ``N`` contracts the "
        "last ``N`` axes of ``x1`` with the first ``N`` of ``x2`` (0: the outer product), a pair "
        "of sequences ``(x1_axes, x2_axes)`` of one length the axes named; contracted axes must "
        "have equal sizes (they are not broadcast).  The dtypes promote as in ``matmul``.  A "
        "negative int, or an ``axes`` of another form, is a ``ValueError`` naming ``axes`` "
        "(NumPy's ``tensordot`` reads a negative int as nonsense); mismatched sizes are "
        "NumPy's ``ValueError``.",
        (0, 1), "own", "array", f"{_REF}:tensordot",
    ),
    TableOp(
        "vecdot", "(x1, x2, /, *, axis=-1)",
        "The dot product of the vectors of ``x1`` and ``x2`` along ``axis``, ``sum(conj(x1) * "
        "x2)`` (``x1`` conjugated for complex types), the other axes broadcast, as the Array "
        "API's ``vecdot`` (NumPy 2's).  ``axis`` must "
        "be negative, in ``[-N, -1]`` for ``N`` the smaller number of dimensions (counted from "
        "the end, it names the same axis before and after broadcasting), and both operands "
        "must have one size along it: otherwise a ``ValueError`` naming ``axis``.  The dtypes "
        "promote as in ``multiply``; integers stay integers.",
        (0, 1), "own", "array", f"{_REF}:vecdot",
    ),
    # -- the linalg extension: products ---------------------------------------------------------
    TableOp(
        "linalg.cross", "(x1, x2, /, *, axis=-1)",
        "The cross product of the 3-element vectors of ``x1`` and ``x2`` along ``axis``, the "
        "other axes broadcast.  ``axis`` must be negative, in ``[-N, -1]`` for ``N`` the "
        "smaller number of dimensions, and both operands must have 3 elements along it "
        "(NumPy's ``cross`` also takes 2): otherwise a ``ValueError``.  The dtypes promote as "
        "in ``multiply``.",
        (0, 1), "own", "array", f"{_REF}:cross",
    ),
    TableOp(
        "linalg.outer", "(x1, x2, /)",
        "The outer product of the vectors ``x1`` (``N``) and ``x2`` (``M``), an ``(N, M)`` "
        "array with the dtypes promoted as in ``multiply``.  An operand that is not 1-D is a "
        "``ValueError`` naming it (NumPy's ``outer`` flattens it).",
        (0, 1), "own", "array", f"{_REF}:outer",
    ),
    TableOp(
        "linalg.matrix_power", "(x, n, /)",
        "The square matrix (or stack) ``x`` raised to the integer power ``n`` by repeated "
        "squaring: ``n = 0`` gives identity matrices, a negative ``n`` powers of the inverse "
        "(a singular matrix is ``numpy.linalg.LinAlgError``).  Integer matrices stay integers "
        "for ``n >= 0``; a non-integer ``n`` is NumPy's ``TypeError``, a non-square ``x`` "
        "NumPy's ``LinAlgError``.",
        (0,), "own", "array", "numpy.linalg:matrix_power",
    ),
    # -- the linalg extension: parts of a matrix ------------------------------------------------
    TableOp(
        "linalg.diagonal", "(x, /, *, offset=0)",
        f"The diagonals of the last two axes of ``x`` (NumPy's ``diagonal`` takes the first "
        f"two), {_LINALG_ERROR}: ``offset`` > 0 above the main one, < 0 below; a read-only "
        f"view on NumPy.  A non-int ``offset`` is a ``TypeError`` naming it.",
        (0,), "view", "array", f"{_REF}:diagonal",
    ),
    TableOp(
        "linalg.trace", "(x, /, *, offset=0, dtype=None)",
        f"The sums of the diagonals of the last two axes of ``x`` ({_LINALG_ERROR}), "
        f"``offset`` as in ``linalg.diagonal``.  ``dtype`` sets the accumulator and result "
        f"type; by default, as in ``sum``: smaller signed integers give int64, smaller unsigned "
        f"ones uint64, other types their own.  A matrix gives a 0-d result (a NumPy scalar on "
        f"NumPy).",
        (0,), "own", "array", f"{_REF}:trace",
    ),
    # -- the linalg extension: determinants, spectra and ranks ----------------------------------
    TableOp(
        "linalg.det", "(x, /)",
        f"The determinant of the square matrix (or stack) ``x``, by LU factorisation; a "
        f"singular matrix gives 0.  {_FLOATING}  A non-square ``x`` is NumPy's "
        f"``LinAlgError`` (a ``ValueError``).",
        (0,), "own", "array", "numpy.linalg:det",
    ),
    TableOp(
        "linalg.slogdet", "(x, /)",
        f"The sign and the natural logarithm of the absolute value of the determinant of the "
        f"square matrix (or stack) ``x``, as a named tuple ``(sign, logabsdet)`` "
        f"(``prism_core.backend_kit.SlogdetResult``, NumPy's ``SlogdetResult``): accurate where "
        f"the determinant itself under- or overflows.  A singular matrix gives sign 0 and "
        f"``-inf``; ``sign`` is complex of modulus 1 for complex ``x``, ``logabsdet`` real.  "
        f"{_FLOATING}",
        (0,), "own", "tuple", f"{_REF}:slogdet",
    ),
    TableOp(
        "linalg.eigvalsh", "(x, /)",
        f"The eigenvalues, real and ascending, of the real symmetric or complex Hermitian "
        f"matrix (or stack) ``x``, as ``linalg.eigh`` without the eigenvectors; only the lower "
        f"triangle is read.  {_FLOATING}",
        (0,), "own", "array", "numpy.linalg:eigvalsh",
    ),
    TableOp(
        "linalg.svdvals", "(x, /)",
        f"The singular values of the matrix (or stack) ``x``, real and descending, ``min(M, "
        f"N)`` per matrix, as ``linalg.svd`` without ``U`` and ``Vh``.  {_FLOATING}",
        (0,), "own", "array", f"{_REF}:svdvals",
    ),
    TableOp(
        "linalg.matrix_rank", "(x, /, *, rtol=None)",
        "The rank of the matrix (or stack) ``x``: how many singular values exceed ``rtol`` "
        "times the largest.  ``rtol`` is a real number or an array broadcasting against the "
        "stack; ``None`` is ``max(M, N) * eps`` of ``x``'s floating-point type (NumPy's "
        "``tol`` is absolute).  The result is int64; an empty matrix has rank 0.  Fewer than "
        "two dimensions is a ``ValueError`` naming ``x``, a non-real ``rtol`` a ``TypeError`` "
        "naming it.",
        (0,), "own", "array", f"{_REF}:matrix_rank",
    ),
    TableOp(
        "linalg.pinv", "(x, /, *, rtol=None)",
        "The Moore-Penrose pseudo-inverse of the matrix (or stack) ``x`` (``(M, N)`` gives "
        "``(N, M)``), from its SVD with the singular values up to ``rtol`` times the largest "
        "taken as zero.  ``rtol`` is as in ``linalg.matrix_rank``, default ``max(M, N) * eps`` "
        "(NumPy's ``rcond`` defaults to 1e-15).  Integers give float64 on NumPy.",
        (0,), "own", "array", f"{_REF}:pinv",
    ),
)  # fmt: skip
