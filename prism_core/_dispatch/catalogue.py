"""The builtin operations: their names, documentation, aliases and array arguments.

Every op is declared here as data (``registry.ensure_ready`` makes the ops on first use); the
implementations are variants contributed by plugins, the builtin NumPy one
(``backends/numpy_ops.py``) included.  Names and semantics follow the Python Array API standard
(https://data-apis.org/array-api/) where it has the operation, and NumPy where it does not
(``dot``, ``einsum``, ``convolve``, ``random.normal``).  Importing this module is cheap: it
imports no array library.

``array_args`` lists the indices of the positional parameters that are arrays; an op whose
positional arguments are not all arrays says so (``()`` for creation ops, ``None`` for ``einsum``
and ``asarray``, whose arrays are recognised by having a ``dtype``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

__all__ = ["ALIASES", "CATALOGUE", "SPECS", "OpSpec"]


class OpSpec(NamedTuple):
    """One builtin op: its name, documentation, array arguments and old names."""

    name: str
    doc: str
    array_args: tuple[int, ...] | None
    aliases: tuple[str, ...]


_SPECS: list[OpSpec] = []


def _declare(
    name: str,
    doc: str,
    array_args: Sequence[int] | None,
    aliases: Sequence[str] = (),
) -> None:
    _SPECS.append(
        OpSpec(
            name,
            " ".join(doc.split()),
            None if array_args is None else tuple(array_args),
            tuple(aliases),
        )
    )


# -- creation and conversion -----------------------------------------------------------------
_declare(
    "asarray",
    """asarray(obj, /, *, dtype=None, copy=None): convert ``obj`` (an array, a Python scalar or
    a nested sequence) to an array, as the Array API's ``asarray``.  ``dtype`` is a Prism dtype,
    a backend dtype or a name (``None`` infers it from ``obj``); ``copy=True`` always copies,
    ``copy=False`` never does (raising ``ValueError`` when a copy is needed), ``None`` copies
    only when needed.  ``obj`` counts as an array argument only when it is one (it has a
    ``dtype``): lists and scalars are data, not arrays to convert.""",
    None,
)
_declare(
    "zeros",
    """zeros(shape, *, dtype=None): a new array of ``shape`` (an int or a tuple of ints) filled
    with zeros, as the Array API's ``zeros``; ``dtype`` defaults to float64.""",
    (),
)
_declare(
    "ones",
    """ones(shape, *, dtype=None): a new array of ``shape`` (an int or a tuple of ints) filled
    with ones, as the Array API's ``ones``; ``dtype`` defaults to float64.""",
    (),
)
_declare(
    "full",
    """full(shape, fill_value, *, dtype=None): a new array of ``shape`` filled with
    ``fill_value``, as the Array API's ``full``; without ``dtype`` the type is inferred from
    ``fill_value`` (bool, the default integer, float64 or complex128).""",
    (),
)
_declare(
    "to_numpy",
    """to_numpy(x, /): ``x`` as a NumPy array (``numpy.asarray``), copied to the host when it
    lives on a device; the way out of Prism into NumPy code.""",
    (0,),
)

# -- elementwise -----------------------------------------------------------------------------
_BINARY = """({x1}, {x2}, /): {what}, elementwise, as the Array API's ``{api}``: the operands
broadcast against each other and their dtypes promote by the backend's rules (NumPy's, NEP 50);
either operand may be a Python scalar, which takes the other operand's dtype."""
_declare(
    "add",
    "add" + _BINARY.format(x1="x1", x2="x2", what="the sum ``x1 + x2``", api="add"),
    (0, 1),
    aliases=("vector_add",),
)
_declare(
    "subtract",
    "subtract"
    + _BINARY.format(x1="x1", x2="x2", what="the difference ``x1 - x2``", api="subtract"),
    (0, 1),
)
_declare(
    "multiply",
    "multiply" + _BINARY.format(x1="x1", x2="x2", what="the product ``x1 * x2``", api="multiply"),
    (0, 1),
)
_declare(
    "divide",
    "divide"
    + _BINARY.format(
        x1="x1",
        x2="x2",
        what="the true quotient ``x1 / x2`` (integers give floating-point results)",
        api="divide",
    ),
    (0, 1),
)
_declare(
    "power",
    "power"
    + _BINARY.format(
        x1="x1",
        x2="x2",
        what="``x1`` raised to ``x2`` (integers to negative integer powers are an error)",
        api="pow",
    ),
    (0, 1),
)
_UNARY = """(x, /): {what}, elementwise, as the Array API's ``{api}``; {dtypes}"""
_declare(
    "square",
    "square"
    + _UNARY.format(what="``x * x``", api="square", dtypes="the result has the dtype of ``x``."),
    (0,),
)
_declare(
    "sqrt",
    "sqrt"
    + _UNARY.format(
        what="the principal square root",
        api="sqrt",
        dtypes="integers give floating-point results, negative reals give NaN (use a complex "
        "input for complex roots).",
    ),
    (0,),
)
_declare(
    "exp",
    "exp"
    + _UNARY.format(
        what="``e`` raised to ``x``",
        api="exp",
        dtypes="integers give floating-point results.",
    ),
    (0,),
)
_declare(
    "log",
    "log"
    + _UNARY.format(
        what="the natural logarithm",
        api="log",
        dtypes="integers give floating-point results; zero gives -inf and negative reals NaN.",
    ),
    (0,),
)
_declare(
    "abs",
    "abs"
    + _UNARY.format(
        what="the absolute value",
        api="abs",
        dtypes="complex inputs give the magnitude in the matching real dtype.",
    ),
    (0,),
)
_declare(
    "real",
    "real"
    + _UNARY.format(
        what="the real part",
        api="real",
        dtypes="complex64 gives float32, complex128 float64, real inputs are returned as they are.",
    ),
    (0,),
)
_declare(
    "conj",
    "conj"
    + _UNARY.format(
        what="the complex conjugate",
        api="conj",
        dtypes="real inputs are returned unchanged in value and dtype.",
    ),
    (0,),
)

# -- reductions ------------------------------------------------------------------------------
_REDUCTION = """(x, /, *, axis=None{extra}, keepdims=False): {what} of ``x`` over ``axis`` (an
int, a tuple of ints, or ``None`` for all axes), as the Array API's ``{api}``; ``keepdims=True``
keeps the reduced axes with size one.  {more}  A reduction to 0-d gives what the backend gives
(a NumPy scalar for NumPy)."""
_declare(
    "sum",
    "sum"
    + _REDUCTION.format(
        extra=", dtype=None",
        what="the sum",
        api="sum",
        more="``dtype`` sets the accumulator and result type (default: the input's for "
        "floating-point types, the default integer for smaller integers); an empty sum is 0.",
    ),
    (0,),
)
_declare(
    "mean",
    "mean"
    + _REDUCTION.format(
        extra="",
        what="the arithmetic mean",
        api="mean",
        more="Integers give float64; the mean of nothing is NaN (with a RuntimeWarning).",
    ),
    (0,),
)
_declare(
    "std",
    "std"
    + _REDUCTION.format(
        extra=", correction=0.0",
        what="the standard deviation",
        api="std",
        more="``correction`` is subtracted from the number of elements in the divisor "
        "(Bessel's correction ``correction=1`` gives the sample standard deviation; NumPy "
        "calls it ``ddof``).",
    ),
    (0,),
)
_declare(
    "min",
    "min"
    + _REDUCTION.format(
        extra="",
        what="the minimum",
        api="min",
        more="NaN propagates; reducing an empty axis is a ``ValueError``.",
    ),
    (0,),
)
_declare(
    "max",
    "max"
    + _REDUCTION.format(
        extra="",
        what="the maximum",
        api="max",
        more="NaN propagates; reducing an empty axis is a ``ValueError``.",
    ),
    (0,),
)

# -- shape -----------------------------------------------------------------------------------
_declare(
    "reshape",
    """reshape(x, /, shape, *, copy=None): ``x`` with a new ``shape`` (one entry may be -1) and
    the same elements in row-major order, as the Array API's ``reshape``; ``copy=True`` always
    copies, ``copy=False`` never does (``ValueError`` when the layout needs a copy), ``None``
    returns a view when it can.""",
    (0,),
)
_declare(
    "transpose",
    """transpose(x, /, axes=None): ``x`` with its axes permuted, as the Array API's
    ``permute_dims`` under NumPy's name: ``axes`` is a permutation of ``range(x.ndim)``, and
    ``None`` (unlike the Array API, where it is required) reverses the axes.  Returns a view
    where the backend can.""",
    (0,),
)
_declare(
    "moveaxis",
    """moveaxis(x, /, source, destination): ``x`` with the axes ``source`` (an int or a tuple
    of ints) moved to the positions ``destination``, the other axes keeping their order, as the
    Array API's ``moveaxis``.""",
    (0,),
)
_declare(
    "expand_dims",
    """expand_dims(x, /, axis=0): ``x`` with a new axis of size one inserted at position
    ``axis`` (negative counts from the end of the result), as the Array API's
    ``expand_dims``; NumPy's tuple of axes is accepted as well.""",
    (0,),
)

# -- linear algebra --------------------------------------------------------------------------
_declare(
    "matmul",
    """matmul(x1, x2, /): the matrix product, as the Array API's ``matmul``: 2-D operands
    multiply as matrices, higher-dimensional ones as stacks of matrices over broadcast batch
    dimensions, a 1-D operand is promoted to a matrix and the added axis removed again; 0-d
    operands and mismatched inner dimensions are a ``ValueError``.""",
    (0, 1),
    aliases=("matrix_multiply",),
)
_declare(
    "dot",
    """dot(a, b, /): NumPy's ``dot`` (not in the Array API): the inner product of 1-D operands,
    the matrix product of 2-D ones, a product with a 0-d operand, and otherwise a sum product
    over the last axis of ``a`` and the second-to-last of ``b``; for stacks of matrices prefer
    ``matmul``.""",
    (0, 1),
    aliases=("dot_product",),
)
_declare(
    "einsum",
    """einsum(subscripts, /, *operands, dtype=None, optimize=False): NumPy's Einstein
    summation (not in the Array API): ``subscripts`` is a string such as ``"ij,jk->ik"`` and
    every further positional argument is an operand array; ``dtype`` sets the computation and
    result type, ``optimize`` the contraction-order search.  The subscripts string is not an
    array argument (arrays are recognised by their ``dtype``).""",
    None,
)
_declare(
    "linalg.inv",
    """linalg.inv(x, /): the multiplicative inverse of the square matrix (or stack of
    matrices) ``x``, as the Array API's ``linalg.inv``; integers give float64, and a singular
    matrix raises the backend's error (``numpy.linalg.LinAlgError``).""",
    (0,),
    aliases=("inverse",),
)
_declare(
    "linalg.solve",
    """linalg.solve(x1, x2, /): the solution ``x`` of ``x1 @ x = x2`` for the square matrix
    (or stack) ``x1``, as the Array API's ``linalg.solve``: ``x2`` is a vector only when it is
    1-D, otherwise a matrix (or stack) whose batch dimensions broadcast against ``x1``'s.""",
    (0, 1),
)
_declare(
    "linalg.svd",
    """linalg.svd(x, /, *, full_matrices=True): the singular value decomposition of the matrix
    (or stack) ``x``, as the Array API's ``linalg.svd``: a named tuple ``(U, S, Vh)`` with
    ``x == U @ diag(S) @ Vh``, ``S`` real and descending; ``full_matrices=False`` gives the
    reduced ``U`` and ``Vh``.""",
    (0,),
)
_declare(
    "linalg.eig",
    """linalg.eig(x, /): the eigenvalues and right eigenvectors of the square matrix (or stack)
    ``x``, as the Array API's ``linalg.eig``: a named tuple ``(eigenvalues, eigenvectors)``
    with ``x @ v[:, i] == w[i] * v[:, i]``; the types are complex whenever an eigenvalue is
    (NumPy returns real types when all are real).""",
    (0,),
    aliases=("eigendecomposition",),
)
_declare(
    "linalg.eigh",
    """linalg.eigh(x, /): the eigenvalues (real, ascending) and orthonormal eigenvectors of
    the real symmetric or complex Hermitian matrix (or stack) ``x``, as the Array API's
    ``linalg.eigh``: a named tuple ``(eigenvalues, eigenvectors)``; only the lower triangle of
    ``x`` is read.""",
    (0,),
)

# -- Fourier transforms ----------------------------------------------------------------------
_FFT = """(x, /, *, n=None, axis=-1, norm="backward"): {what} along ``axis``, as the Array API's
``{api}``: ``n`` crops or zero-pads that axis first, ``norm`` is ``"backward"``, ``"ortho"`` or
``"forward"``.  {dtypes}"""
_declare(
    "fft.fft",
    "fft.fft"
    + _FFT.format(
        what="the one-dimensional discrete Fourier transform",
        api="fft.fft",
        dtypes="float32 and complex64 give complex64, other types complex128.",
    ),
    (0,),
)
_declare(
    "fft.ifft",
    "fft.ifft"
    + _FFT.format(
        what="the one-dimensional inverse discrete Fourier transform",
        api="fft.ifft",
        dtypes="float32 and complex64 give complex64, other types complex128.",
    ),
    (0,),
)
_declare(
    "fft.rfft",
    "fft.rfft"
    + _FFT.format(
        what="the one-dimensional discrete Fourier transform of real input (the ``n // 2 + 1`` "
        "non-negative frequencies)",
        api="fft.rfft",
        dtypes="``x`` must be real; float32 gives complex64, other types complex128.",
    ),
    (0,),
)

# -- signal processing and random numbers ----------------------------------------------------
_declare(
    "convolve",
    """convolve(a, v, /, mode="full"): the discrete linear convolution of the 1-D arrays ``a``
    and ``v``, as NumPy's ``convolve`` (not in the Array API): ``mode`` is ``"full"`` (length
    ``N + M - 1``), ``"same"`` (length ``max(N, M)``) or ``"valid"`` (only where the arrays
    overlap completely, length ``max(N, M) - min(N, M) + 1``); empty operands are a
    ``ValueError``.""",
    (0, 1),
    aliases=("convolution",),
)
_declare(
    "random.normal",
    """random.normal(shape, mean=0.0, std=1.0, *, seed=None, dtype=float64): an array of
    ``shape`` drawn from the normal distribution with that ``mean`` and standard deviation
    ``std`` (not in the Array API).  The same integer ``seed`` gives the same numbers on every
    call (and the same numbers, rounded, in every floating-point ``dtype``); ``seed=None``
    draws fresh entropy.  ``dtype`` must be a real floating-point type.""",
    (),
)

#: Every builtin op, in declaration order.
SPECS: tuple[OpSpec, ...] = tuple(_SPECS)
#: The names of the builtin ops, in declaration order.
CATALOGUE: tuple[str, ...] = tuple(s.name for s in SPECS)
#: Old names of builtin ops -> the op's name.
ALIASES: Mapping[str, str] = {alias: s.name for s in SPECS for alias in s.aliases}
