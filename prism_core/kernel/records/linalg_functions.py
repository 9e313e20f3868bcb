"""The Array API's linear algebra functions and the ``linalg`` extension, declared as data (issue
12): ``matrix_transpose``, ``tensordot``, ``vecdot`` and the ``linalg`` functions Prism did not
have (``det``, ``slogdet``, ``pinv``, ...).

One :class:`~prism_core.kernel.oprecord.OpRecord` per op (``oprecord.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``oprecord`` and
``op_examples``, and no array library (the examples import NumPy when called).

The linalg functions Prism had before (``linalg.cholesky``, ``eigh``, ``inv``, ``matrix_norm``,
``qr``, ``solve``, ``svd``, ``vector_norm``) are declared in the catalogue; ``matmul`` too.
"""

from __future__ import annotations

from prism_core.kernel.op_examples import Examples
from prism_core.kernel.oprecord import FLOATING, OpRecord

__all__ = ["ROWS"]

#: Prism's NumPy references where NumPy's own function is not the standard's.
_REF = "prism_core._builtin.numpy_linalg"
_FLOATING = (
    "Integers give float64 on NumPy (the standard defines it for floating-point types only)."
)
_LINALG_ERROR = "a matrix or a stack of matrices (2 or more dimensions; fewer is a ``ValueError``)"


# The example arguments of ``prism bench`` and ``prism.tune(op, sizes=...)`` (``examples``):
# n x n matrices of standard normal numbers, seeded by n.
def _matrices(n: int, dtype: str, batch: int | None, count: int = 2) -> tuple[object, ...]:
    import numpy as np

    rng = np.random.default_rng(n)
    return tuple(rng.standard_normal((n, n)).astype(dtype) for _ in range(count))


def _system(n: int, dtype: str, batch: int | None) -> tuple[object, ...]:
    """A well-conditioned system: a matrix with ``n`` added to its diagonal, and a vector."""
    import numpy as np

    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(dtype) + n * np.eye(n, dtype=dtype)
    return a, rng.standard_normal(n).astype(dtype)


def _bytes(elements: int, dtype: str) -> int:
    import numpy as np

    return elements * np.dtype(dtype).itemsize


_MATMUL = Examples(
    make=_matrices,
    nbytes=lambda n, dtype, batch: _bytes(3 * n * n, dtype),  # a, b; a @ b
    size="(n, n) @ (n, n)",
    quick=(16, 128, 512),
    full=(4, 16, 64, 256, 1024, 2048),
    axis="matrix side n (n x n matrices)",
)
_SOLVE = Examples(
    make=_system,
    nbytes=lambda n, dtype, batch: _bytes(n * n + 2 * n, dtype),  # a, b; x
    size="(n, n) and a vector of n, well conditioned",
    quick=(16, 256, 1024),
    full=(8, 64, 256, 1024),
    axis="matrix side n (n x n system)",
)
_SVD = Examples(
    make=lambda n, dtype, batch: _matrices(n, dtype, batch, 1),
    nbytes=lambda n, dtype, batch: _bytes(3 * n * n + n, dtype),  # a; u, s, vh
    size="an (n, n) matrix",
    quick=(16, 128, 384),
    full=(8, 32, 128, 512, 1024),
    axis="matrix side n (n x n matrix)",
)

ROWS: tuple[OpRecord, ...] = (
    # -- the first ops Prism had ---------------------------------------------------------------
    OpRecord(
        "matmul",
        "(x1, x2, /)",
        """the matrix product, as the Array API's ``matmul``: 2-D operands multiply as matrices,
        higher-dimensional ones as stacks of matrices over broadcast batch dimensions, a 1-D
        operand is promoted to a matrix and the added axis removed again; 0-d operands and
        mismatched inner dimensions are a ``ValueError``.""",
        (0, 1), "own", "array", "numpy:matmul",
        aliases=("matrix_multiply",),
        promoted=(0, 1),
        probes=("shapes",),
        split="matmul",
        examples=_MATMUL,
    ),
    OpRecord(
        "dot",
        "(a, b, /)",
        """NumPy's ``dot`` (not in the Array API): the inner product of 1-D operands, the matrix
        product of 2-D ones, a product with a 0-d operand, and otherwise a sum product over the
        last axis of ``a`` and the second-to-last of ``b``; for stacks of matrices prefer
        ``matmul``.""",
        (0, 1), "own", "array", "numpy:dot",
        aliases=("dot_product",), standard=False,
        promoted=(0, 1),
        probes=("shapes",),
    ),
    OpRecord(
        "einsum",
        "(subscripts, /, *operands, dtype=None, optimize=False)",
        """NumPy's Einstein summation (not in the Array API): ``subscripts`` is a string such as
        ``"ij,jk->ik"`` and every further positional argument is an operand array; ``dtype``
        sets the computation and result type, ``optimize`` the contraction-order search. The
        subscripts string is not an array argument (arrays are recognised by their ``dtype``).""",
        None, "unknown", "array", "prism_core._builtin.numpy_ops:einsum",
        standard=False,
        probes=("shapes",),
    ),
    OpRecord(
        "linalg.inv",
        "(x, /)",
        """the multiplicative inverse of the square matrix (or stack of matrices) ``x``, as the
        Array API's ``linalg.inv``; integers give float64, and a singular matrix raises the
        backend's error (``numpy.linalg.LinAlgError``).""",
        (0,), "own", "array", "numpy.linalg:inv",
        aliases=("inverse",), dtypes=FLOATING,
        probes=("rank", "square", "singular"),
        split="batched",
    ),
    OpRecord(
        "linalg.solve",
        "(x1, x2, /)",
        """the solution ``x`` of ``x1 @ x = x2`` for the square matrix (or stack) ``x1``, as the
        Array API's ``linalg.solve``: ``x2`` is a vector only when it is 1-D, otherwise a matrix
        (or stack) whose batch dimensions broadcast against ``x1``'s.""",
        (0, 1), "own", "array", "numpy.linalg:solve",
        dtypes=FLOATING,
        promoted=(0, 1),
        probes=("shapes", "rank", "square", "singular"),
        examples=_SOLVE,
        split="batched",
    ),
    OpRecord(
        "linalg.svd",
        "(x, /, *, full_matrices=True)",
        """the singular value decomposition of the matrix (or stack) ``x``, as the Array API's
        ``linalg.svd``: a named tuple ``(U, S, Vh)`` with ``x == U @ diag(S) @ Vh``, ``S`` real
        and descending; ``full_matrices=False`` gives the reduced ``U`` and ``Vh``.""",
        (0,), "own", "tuple", "prism_core._builtin.numpy_ops:linalg_svd",
        dtypes=FLOATING,
        container="SVDResult",
        probes=("rank",),
        examples=_SVD,
        split="batched",
    ),
    OpRecord(
        "linalg.eig",
        "(x, /)",
        """the eigenvalues and right eigenvectors of the square matrix (or stack) ``x``, as the
        Array API's ``linalg.eig``: a named tuple ``(eigenvalues, eigenvectors)`` with ``x @
        v[:, i] == w[i] * v[:, i]``; the types are complex whenever an eigenvalue is (NumPy
        returns real types when all are real).""",
        (0,), "own", "tuple", "numpy.linalg:eig",
        aliases=("eigendecomposition",), standard=False, dtypes=FLOATING,
        probes=("rank", "square"),
        split="batched",
    ),
    OpRecord(
        "linalg.eigh",
        "(x, /)",
        """the eigenvalues (real, ascending) and orthonormal eigenvectors of the real symmetric or
        complex Hermitian matrix (or stack) ``x``, as the Array API's ``linalg.eigh``: a named
        tuple ``(eigenvalues, eigenvectors)``; only the lower triangle of ``x`` is read.""",
        (0,), "own", "tuple", "numpy.linalg:eigh",
        dtypes=FLOATING,
        container="EighResult",
        probes=("rank", "square", "singular", "hermitian"),
        split="batched",
    ),
    OpRecord(
        "linalg.qr",
        '(x, /, *, mode="reduced")',
        """the QR decomposition of the matrix (or stack) ``x``, as the Array API's ``linalg.qr``: a
        named tuple ``(Q, R)`` (NumPy's ``QRResult``) with ``x == Q @ R``, ``Q`` with
        orthonormal columns and ``R`` upper triangular. With ``mode="reduced"`` and ``K = min(M,
        N)``, ``Q`` is ``(M, K)`` and ``R`` ``(K, N)``; with ``"complete"``, ``Q`` is ``(M, M)``
        and ``R`` ``(M, N)``; any other mode is a ``ValueError``. The signs of ``Q``'s columns
        (and ``R``'s rows) may differ between backends; integers give float64.""",
        (0,), "own", "tuple", "prism_core._builtin.numpy_ops:linalg_qr",
        dtypes=FLOATING,
        container="QRResult",
        probes=("rank",),
        split="batched",
    ),
    OpRecord(
        "linalg.cholesky",
        "(x, /, *, upper=False)",
        """the Cholesky factor of the real symmetric or complex Hermitian positive-definite matrix
        (or stack) ``x``, as the Array API's ``linalg.cholesky``: the lower-triangular ``L``
        with ``x == L @ L.conj().T``, or with ``upper=True`` the upper-triangular ``U`` with ``x
        == U.conj().T @ U``; integers give float64. A matrix that is not positive definite
        raises the backend's error (``numpy.linalg.LinAlgError``, a ``ValueError``).""",
        (0,), "own", "array", "prism_core._builtin.numpy_ops:linalg_cholesky",
        dtypes=FLOATING,
        probes=("rank", "square", "singular", "hermitian"),
        split="batched",
    ),
    OpRecord(
        "linalg.norm",
        "(x, /, ord=None, axis=None, keepdims=False)",
        """NumPy's ``linalg.norm`` (the Array API splits it into ``linalg.vector_norm`` and
        ``linalg.matrix_norm``): with ``axis=None``, the 2-norm of the flattened ``x`` when
        ``ord`` is None, else the vector norm of a 1-D or the matrix norm of a 2-D ``x``; an int
        ``axis`` gives vector norms, a pair of axes matrix norms. ``ord`` is NumPy's (``inf``,
        ``-inf``, ``"fro"``, ``"nuc"`` or a number); the results are real floating point; an
        ``ord`` the shape has no norm of is a ``ValueError``.""",
        (0,), "own", "array", "numpy.linalg:norm",
        standard=False, dtypes=FLOATING,
    ),
    OpRecord(
        "linalg.vector_norm",
        "(x, /, *, axis=None, keepdims=False, ord=2)",
        """the vector norm of ``x`` over ``axis`` (an int, a tuple of ints treated as one vector,
        or ``None`` for all elements), as the Array API's ``linalg.vector_norm``: ``ord`` is a
        real number, ``inf`` or ``-inf`` (``0`` counts the non-zero elements); the results are
        real floating point (float32 for float32 and complex64 input, float64 for integers); a
        matrix ``ord`` such as ``"fro"`` is a ``ValueError``.""",
        (0,), "own", "array", "prism_core._builtin.numpy_ops:linalg_vector_norm",
        dtypes=FLOATING,
    ),
    OpRecord(
        "linalg.matrix_norm",
        '(x, /, *, keepdims=False, ord="fro")',
        """the matrix norm over the last two axes of ``x`` (a matrix or a stack), as the Array
        API's ``linalg.matrix_norm``: ``ord`` is ``"fro"``, ``"nuc"``, ``1``, ``-1``, ``2``,
        ``-2``, ``inf`` or ``-inf``; the results are real floating point; an ``x`` of fewer than
        two dimensions or another ``ord`` is a ``ValueError``.""",
        (0,), "own", "array", "prism_core._builtin.numpy_ops:linalg_matrix_norm",
        dtypes=FLOATING,
        probes=("rank",),
        split="batched",
    ),
    # -- the main namespace (repeated in the linalg extension) ---------------------------------
    OpRecord(
        "matrix_transpose", "(x, /)",
        f"``x`` with its last two axes swapped, as the Array API's ``matrix_transpose`` "
        f"(NumPy 2's; a view where the backend has views): ``x`` is {_LINALG_ERROR}.",
        (0,), "view", "array", f"{_REF}:matrix_transpose",
        probes=("rank",),
    ),
    OpRecord(
        "tensordot", "(x1, x2, /, *, axes=2)",
        "The tensor contraction of ``x1`` and ``x2`` over ``axes``: an int ``N`` contracts the "
        "last ``N`` axes of ``x1`` with the first ``N`` of ``x2`` (0: the outer product), a pair "
        "of sequences ``(x1_axes, x2_axes)`` of one length the axes named; contracted axes must "
        "have equal sizes (they are not broadcast).  The dtypes promote as in ``matmul``.  A "
        "negative int, or an ``axes`` of another form, is a ``ValueError`` naming ``axes`` "
        "(NumPy's ``tensordot`` reads a negative int as nonsense); mismatched sizes are "
        "NumPy's ``ValueError``.",
        (0, 1), "own", "array", f"{_REF}:tensordot",
        promoted=(0, 1),
        probes=("shapes",),
    ),
    OpRecord(
        "vecdot", "(x1, x2, /, *, axis=-1)",
        "The dot product of the vectors of ``x1`` and ``x2`` along ``axis``, ``sum(conj(x1) * "
        "x2)`` (``x1`` conjugated for complex types), the other axes broadcast, as the Array "
        "API's ``vecdot`` (NumPy 2's).  ``axis`` must "
        "be negative, in ``[-N, -1]`` for ``N`` the smaller number of dimensions (counted from "
        "the end, it names the same axis before and after broadcasting), and both operands "
        "must have one size along it: otherwise a ``ValueError`` naming ``axis``.  The dtypes "
        "promote as in ``multiply``; integers stay integers.",
        (0, 1), "own", "array", f"{_REF}:vecdot",
        promoted=(0, 1),
        probes=("shapes",),
    ),
    # -- the linalg extension: products ---------------------------------------------------------
    OpRecord(
        "linalg.cross", "(x1, x2, /, *, axis=-1)",
        "The cross product of the 3-element vectors of ``x1`` and ``x2`` along ``axis``, the "
        "other axes broadcast.  ``axis`` must be negative, in ``[-N, -1]`` for ``N`` the "
        "smaller number of dimensions, and both operands must have 3 elements along it "
        "(NumPy's ``cross`` also takes 2): otherwise a ``ValueError``.  The dtypes promote as "
        "in ``multiply``.",
        (0, 1), "own", "array", f"{_REF}:cross",
        promoted=(0, 1),
        probes=("shapes",),
    ),
    OpRecord(
        "linalg.outer", "(x1, x2, /)",
        "The outer product of the vectors ``x1`` (``N``) and ``x2`` (``M``), an ``(N, M)`` "
        "array with the dtypes promoted as in ``multiply``.  An operand that is not 1-D is a "
        "``ValueError`` naming it (NumPy's ``outer`` flattens it).  NumPy's ``outer`` is an "
        "alias (``prism_core.outer``), for vectors: flatten others first (``reshape(x, -1)``), "
        "or call ``multiply.outer``, NumPy's ufunc method, which takes any shapes (``add.outer`` "
        "and the other elementwise ops of two operands have it too).",
        (0, 1), "own", "array", f"{_REF}:outer", aliases=("outer",),
        promoted=(0, 1),
    ),
    OpRecord(
        "linalg.matrix_power", "(x, n, /)",
        "The square matrix (or stack) ``x`` raised to the integer power ``n`` by repeated "
        "squaring: ``n = 0`` gives identity matrices, a negative ``n`` powers of the inverse "
        "(a singular matrix is ``numpy.linalg.LinAlgError``).  Integer matrices stay integers "
        "for ``n >= 0``; a non-integer ``n`` is NumPy's ``TypeError``, a non-square ``x`` "
        "NumPy's ``LinAlgError``.",
        (0,), "own", "array", "numpy.linalg:matrix_power", dtypes=FLOATING,
        probes=("rank", "square", "singular"),
    ),
    # -- the linalg extension: parts of a matrix ------------------------------------------------
    OpRecord(
        "linalg.diagonal", "(x, /, *, offset=0)",
        f"The diagonals of the last two axes of ``x`` (NumPy's ``diagonal`` takes the first "
        f"two), {_LINALG_ERROR}: ``offset`` > 0 above the main one, < 0 below; a read-only "
        f"view on NumPy.  A non-int ``offset`` is a ``TypeError`` naming it.",
        (0,), "view", "array", f"{_REF}:diagonal",
        probes=("rank",),
    ),
    OpRecord(
        "linalg.trace", "(x, /, *, offset=0, dtype=None)",
        f"The sums of the diagonals of the last two axes of ``x`` ({_LINALG_ERROR}), "
        f"``offset`` as in ``linalg.diagonal``.  ``dtype`` sets the accumulator and result "
        f"type; by default, as in ``sum``: smaller signed integers give int64, smaller unsigned "
        f"ones uint64, other types their own.  A matrix gives a 0-d result (a NumPy scalar on "
        f"NumPy).",
        (0,), "own", "array", f"{_REF}:trace",
        dtype_keyword=True,
        probes=("rank",),
    ),
    # -- the linalg extension: determinants, spectra and ranks ----------------------------------
    OpRecord(
        "linalg.det", "(x, /)",
        f"The determinant of the square matrix (or stack) ``x``, by LU factorisation; a "
        f"singular matrix gives 0.  {_FLOATING}  A non-square ``x`` is NumPy's "
        f"``LinAlgError`` (a ``ValueError``).",
        (0,), "own", "array", "numpy.linalg:det", dtypes=FLOATING,
        probes=("rank", "square", "singular"),
    ),
    OpRecord(
        "linalg.slogdet", "(x, /)",
        f"The sign and the natural logarithm of the absolute value of the determinant of the "
        f"square matrix (or stack) ``x``, as a named tuple ``(sign, logabsdet)`` "
        f"(``prism_core.backend_kit.SlogdetResult``, NumPy's ``SlogdetResult``): accurate where "
        f"the determinant itself under- or overflows.  A singular matrix gives sign 0 and "
        f"``-inf``; ``sign`` is complex of modulus 1 for complex ``x``, ``logabsdet`` real.  "
        f"{_FLOATING}",
        (0,), "own", "tuple", f"{_REF}:slogdet", dtypes=FLOATING,
        container="SlogdetResult",
        probes=("rank", "square", "singular"),
    ),
    OpRecord(
        "linalg.eigvalsh", "(x, /)",
        f"The eigenvalues, real and ascending, of the real symmetric or complex Hermitian "
        f"matrix (or stack) ``x``, as ``linalg.eigh`` without the eigenvectors; only the lower "
        f"triangle is read.  {_FLOATING}",
        (0,), "own", "array", "numpy.linalg:eigvalsh", dtypes=FLOATING,
        probes=("rank", "square", "singular", "hermitian"),
    ),
    OpRecord(
        "linalg.svdvals", "(x, /)",
        f"The singular values of the matrix (or stack) ``x``, real and descending, ``min(M, "
        f"N)`` per matrix, as ``linalg.svd`` without ``U`` and ``Vh``.  {_FLOATING}",
        (0,), "own", "array", f"{_REF}:svdvals", dtypes=FLOATING,
        probes=("rank", "singular"),
    ),
    OpRecord(
        "linalg.matrix_rank", "(x, /, *, rtol=None)",
        "The rank of the matrix (or stack) ``x``: how many singular values exceed ``rtol`` "
        "times the largest.  ``rtol`` is a real number or an array broadcasting against the "
        "stack; ``None`` is ``max(M, N) * eps`` of ``x``'s floating-point type (NumPy's "
        "``tol`` is absolute).  The result is int64; an empty matrix has rank 0.  Fewer than "
        "two dimensions is a ``ValueError`` naming ``x``, a non-real ``rtol`` a ``TypeError`` "
        "naming it.",
        (0,), "own", "array", f"{_REF}:matrix_rank", dtypes=FLOATING,
        probes=("rank", "singular"),
    ),
    OpRecord(
        "linalg.pinv", "(x, /, *, rtol=None)",
        "The Moore-Penrose pseudo-inverse of the matrix (or stack) ``x`` (``(M, N)`` gives "
        "``(N, M)``), from its SVD with the singular values up to ``rtol`` times the largest "
        "taken as zero.  ``rtol`` is as in ``linalg.matrix_rank``, default ``max(M, N) * eps`` "
        "(NumPy's ``rcond`` defaults to 1e-15).  Integers give float64 on NumPy.",
        (0,), "own", "array", f"{_REF}:pinv", dtypes=FLOATING,
        probes=("rank", "singular"),
    ),
)  # fmt: skip
