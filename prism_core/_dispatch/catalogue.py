"""The builtin operations: their names, documentation, aliases and array arguments.

Every op is declared here as data (``registry.ensure_ready`` makes the ops on first use); the
implementations are variants contributed by plugins, the builtin NumPy one included.  The
standard's elementwise functions that are alike come from ``_knowledge/elementwise.py``, its
other families from ``_knowledge/families.py``.  Each op's documentation starts with its
signature, the one ``inspect.signature`` and ``help()`` show (:func:`parse_signature`).
Importing this module imports no array library.  docs/dispatch.md ("The operations") and
docs/array-api.md ("The other families").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from prism_core._knowledge.elementwise import ELEMENTWISE
from prism_core._knowledge.families import TABLE_OPS

if TYPE_CHECKING:
    import inspect

__all__ = ["ALIASES", "CATALOGUE", "SPECS", "OpSpec", "parse_signature", "signature_text"]


class OpSpec(NamedTuple):
    """One builtin op: its name, documentation, array arguments and old names, and which of its
    array arguments are sequences of arrays."""

    name: str
    doc: str
    array_args: tuple[int, ...] | None
    aliases: tuple[str, ...]
    #: The positions in ``array_args`` that hold a sequence of arrays, not one array.
    sequences: tuple[int, ...] = ()


_SPECS: list[OpSpec] = []


def signature_text(name: str, doc: str) -> str | None:
    """The signature an op's documentation starts with, from the parenthesis on: ``"(x, /, *,
    axis=None)"`` of ``"sum(x, /, *, axis=None): the sum ..."``, the one place a builtin op's
    signature is written; ``None`` when ``doc`` does not start with ``name(`` and a ``): ``."""
    if not doc.startswith(name + "("):
        return None
    end = doc.find("): ", len(name))
    return None if end < 0 else doc[len(name) : end + 1]


class _Text:
    """A default that is not a literal (``dtype=float64``), shown as it is written."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def parse_signature(text: str) -> inspect.Signature:
    """``text``, a signature as Python writes it (``"(x, /, *, axis=None)"``), as an
    :class:`inspect.Signature`: defaults that are literals as their values, the others
    (``dtype=float64``) as objects whose repr is their text.  Text that is no signature is a
    ``SyntaxError``."""
    import ast
    import inspect

    tree = ast.parse(f"def f{text}: pass")
    function = tree.body[0]
    if len(tree.body) != 1 or not isinstance(function, ast.FunctionDef):
        raise SyntaxError(f"{text!r} is not a signature such as '(x, /, *, axis=None)'")
    arguments = function.args

    def default(node: ast.expr | None) -> object:
        if node is None:
            return inspect.Parameter.empty
        try:
            return ast.literal_eval(node)
        except ValueError:
            return _Text(ast.unparse(node))

    P = inspect.Parameter
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    parameters = [
        P(
            a.arg,
            P.POSITIONAL_ONLY if i < len(arguments.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
            default=default(d),
        )
        for i, (a, d) in enumerate(zip(positional, defaults, strict=True))
    ]
    if arguments.vararg is not None:
        parameters.append(P(arguments.vararg.arg, P.VAR_POSITIONAL))
    parameters += [
        P(a.arg, P.KEYWORD_ONLY, default=default(d))
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg is not None:
        parameters.append(P(arguments.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(parameters)


def _declare(
    name: str,
    doc: str,
    array_args: Sequence[int] | None,
    aliases: Sequence[str] = (),
    *,
    sequences: Sequence[int] = (),
) -> None:
    if not set(sequences) <= set(array_args or ()):
        raise ValueError(f"{name}: sequences {tuple(sequences)} must be among its array_args")
    _SPECS.append(
        OpSpec(
            name,
            " ".join(doc.split()),
            None if array_args is None else tuple(array_args),
            tuple(aliases),
            tuple(sequences),
        )
    )


# -- creation and conversion -----------------------------------------------------------------
_declare(
    "asarray",
    """asarray(obj, /, *, dtype=None, device=None, copy=None): convert ``obj`` (an array, a Python
    scalar or a nested sequence) to an array, as the Array API's ``asarray``. ``dtype`` is a
    Prism dtype, a backend dtype or a name (``None`` infers it from ``obj``); ``copy=True``
    always copies, ``copy=False`` never does (raising ``ValueError`` when a copy is needed),
    ``None`` copies only when needed. ``obj`` counts as an array argument only when it is one
    (it has a ``dtype``): lists and scalars are data, not arrays to convert. ``device`` as in
    ``zeros``.""",
    None,
)
_declare(
    "zeros",
    """zeros(shape, *, dtype=None, device=None): a new array of ``shape`` (an int or a tuple of
    ints) filled with zeros, as the Array API's ``zeros``; ``dtype`` defaults to float64.
    ``device`` is where: ``None`` (the backend's default), ``"cpu"``, a backend's own device, or
    Prism's description of a device (a GPU's runs the call as ``prism_core.device(...)`` of it
    would).""",
    (),
)
_declare(
    "ones",
    """ones(shape, *, dtype=None, device=None): a new array of ``shape`` (an int or a tuple of
    ints) filled with ones, as the Array API's ``ones``; ``dtype`` defaults to float64;
    ``device`` as in ``zeros``.""",
    (),
)
_declare(
    "full",
    """full(shape, fill_value, *, dtype=None, device=None): a new array of ``shape`` filled with
    ``fill_value``, as the Array API's ``full``; without ``dtype`` the type is inferred from
    ``fill_value`` (bool, the default integer, float64 or complex128); ``device`` as in
    ``zeros``.""",
    (),
)
_declare(
    "to_numpy",
    """to_numpy(x, /): ``x`` as a NumPy array (``numpy.asarray``), copied to the host when it
    lives on a device; the way out of Prism into NumPy code.""",
    (0,),
)
_declare(
    "triu_indices",
    """triu_indices(n, /, k=0, m=None): NumPy's ``triu_indices`` (not in the Array API): the row
    and column indices of the upper triangle of an ``(n, m)`` matrix (``m=None``: square, ``m =
    n``) from the ``k``-th diagonal up (``k < 0`` takes diagonals below the main one too), as a
    tuple of two int64 arrays (NumPy's ``intp``) in row-major order; ``n = 0`` gives empty
    arrays.  A creation op: it takes no array, so in automatic mode it runs on NumPy, and under
    ``use_backend`` it creates that backend's arrays.""",
    (),
)
_declare(
    "from_dlpack",
    """from_dlpack(x, /, *, device=None, copy=None): the backend's array for ``x``, an array of
    any library that speaks DLPack (it has ``__dlpack__``), sharing ``x``'s memory where the
    devices allow (NumPy and torch on the CPU do), as the Array API's ``from_dlpack``;
    ``copy=True`` always copies, ``device`` as in ``zeros``.  An ``x`` without ``__dlpack__``
    (a list, a scalar) is a ``TypeError``; an ``x`` on a device the backend cannot read is the
    backend's error (NumPy's ``BufferError`` or ``RuntimeError`` for a GPU array).""",
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
    aliases=("pow",),
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
_declare(
    "maximum",
    "maximum"
    + _BINARY.format(
        x1="x1",
        x2="x2",
        what="the larger of ``x1`` and ``x2`` (NaN where either is NaN)",
        api="maximum",
    ),
    (0, 1),
)
_declare(
    "minimum",
    "minimum"
    + _BINARY.format(
        x1="x1",
        x2="x2",
        what="the smaller of ``x1`` and ``x2`` (NaN where either is NaN)",
        api="minimum",
    ),
    (0, 1),
)
_declare(
    "clip",
    """clip(x, /, min=None, max=None): ``x`` with each element limited to ``[min, max]``, as the
    Array API's ``clip``: ``min`` and ``max`` are Python scalars or arrays broadcasting against
    ``x``, and ``None`` leaves that side open (both ``None`` gives a copy of ``x``); where
    ``min > max`` the result is ``max``, and NaN propagates.  The result has ``x``'s dtype for
    bounds of ``x``'s kind (a float bound promotes an integer ``x``, as NumPy does).  Array
    bounds are array arguments when given by position (moved between backends with ``x``);
    by keyword they are passed as they are.""",
    (0, 1, 2),
)
_declare(
    "where",
    """where(condition, x1, x2, /): ``x1`` where ``condition`` is true and ``x2`` elsewhere,
    elementwise, as the Array API's ``where``: the three broadcast against each other,
    ``condition`` is read as bool, and ``x1`` and ``x2`` promote as in ``add`` (either may be a
    Python scalar).  All three are required: NumPy's one-argument ``where`` (the indices of the
    true elements) is not this op, and calling it so is a ``TypeError``.""",
    (0, 1, 2),
)

# The other elementwise functions of the Array API standard, declared from their table
# (``_knowledge/elementwise.py``): one row each, documented by the phrases below.
_KINDS = {
    "numeric": "numeric dtypes (integer, real and complex floating point)",
    "real": "real dtypes (integer and real floating point)",
    "floating": "floating-point dtypes (real and complex); integers give floating-point results "
    "on NumPy",
    "real_floating": "real floating-point dtypes; integers give floating-point results on NumPy",
    "integer": "integer dtypes",
    "integer_or_boolean": "integer and bool dtypes",
    "boolean": "bool (other dtypes are read as true where non-zero, as NumPy does)",
    "all": "every dtype, bool included",
}
for _e in ELEMENTWISE:
    _signature = "(x, /)" if _e.arity == 1 else "(x1, x2, /)"
    _operands = (
        ""
        if _e.arity == 1
        else " The operands broadcast against each other and promote as in ``add``; either may "
        "be a Python scalar, which takes the other operand's dtype."
    )
    _result = " The result is bool." if _e.boolean_result else ""
    _declare(
        _e.name,
        f"{_e.name}{_signature}: {_e.what}, elementwise, as the Array API's ``{_e.name}`` "
        f"(NumPy's ``{_e.numpy}``); the standard defines it for {_KINDS[_e.kinds]}."
        f"{_operands}{_result}",
        tuple(range(_e.arity)),
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

# -- searching, sorting and running sums -----------------------------------------------------
_ARGEXTREMUM = """(x, /, *, axis=None, keepdims=False): the index of the {which} element of ``x``
along ``axis`` (an int; ``None`` indexes the flattened array), the first one when several are
equal and the first NaN where there is one, as the Array API's ``{api}``; ``keepdims=True``
keeps the reduced axis with size one.  The indices are int64 (NumPy's ``intp``); an empty ``x``
or axis is a ``ValueError``, an ``axis`` out of range NumPy's ``AxisError`` (a ``ValueError``)."""
_declare("argmax", "argmax" + _ARGEXTREMUM.format(which="largest", api="argmax"), (0,))
_declare("argmin", "argmin" + _ARGEXTREMUM.format(which="smallest", api="argmin"), (0,))
_declare(
    "sort",
    """sort(x, /, *, axis=-1, descending=False, stable=True): a sorted copy of ``x`` along
    ``axis``, as the Array API's ``sort``: ascending unless ``descending=True``;
    ``stable=True`` keeps equal elements in their original order (descending too), ``False``
    lets the backend pick a faster algorithm that may not.  NaN sorts last ascending and first
    descending; NumPy sorts complex values lexicographically (the Array API defines only real
    ones); an ``axis`` out of range is NumPy's ``AxisError`` (a ``ValueError``).""",
    (0,),
)
_declare(
    "cumulative_sum",
    """cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False): the running sums
    of ``x`` along ``axis``, as the Array API's ``cumulative_sum`` (also named ``cumsum``, with
    these semantics, not those of NumPy's ``cumsum``, which flattens when ``axis`` is None):
    ``axis=None`` is allowed only for a 1-D (or 0-d) ``x``, a ``ValueError`` otherwise;
    ``dtype`` sets the accumulator and result type (default: as ``sum``'s, the default integer
    for smaller integers and bool); ``include_initial=True`` starts with a zero, so that the
    axis is one longer.""",
    (0,),
    aliases=("cumsum",),
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
_declare(
    "stack",
    """stack(arrays, /, *, axis=0): the arrays of the sequence ``arrays`` (a list or tuple of
    arrays of one shape) joined along a new axis ``axis`` of the result (negative counts from
    the end of the result), as the Array API's ``stack``; their dtypes promote as in ``add``.
    An empty sequence or arrays of different shapes are a ``ValueError``.""",
    (0,),
    sequences=(0,),
)
_declare(
    "concat",
    """concat(arrays, /, *, axis=0): the arrays of the sequence ``arrays`` (a list or tuple of
    arrays) joined along their existing axis ``axis``, as the Array API's ``concat`` (NumPy's
    ``concatenate``, an alias): the arrays must agree in every other dimension, and
    ``axis=None`` flattens them first; their dtypes promote as in ``add``.  An empty sequence,
    0-d arrays or mismatched shapes are a ``ValueError``.""",
    (0,),
    aliases=("concatenate",),
    sequences=(0,),
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
_declare(
    "linalg.qr",
    """linalg.qr(x, /, *, mode="reduced"): the QR decomposition of the matrix (or stack) ``x``,
    as the Array API's ``linalg.qr``: a named tuple ``(Q, R)`` (NumPy's ``QRResult``) with
    ``x == Q @ R``, ``Q`` with orthonormal columns and ``R`` upper triangular.  With
    ``mode="reduced"`` and ``K = min(M, N)``, ``Q`` is ``(M, K)`` and ``R`` ``(K, N)``; with
    ``"complete"``, ``Q`` is ``(M, M)`` and ``R`` ``(M, N)``; any other mode is a
    ``ValueError``.  The signs of ``Q``'s columns (and ``R``'s rows) may differ between
    backends; integers give float64.""",
    (0,),
)
_declare(
    "linalg.cholesky",
    """linalg.cholesky(x, /, *, upper=False): the Cholesky factor of the real symmetric or
    complex Hermitian positive-definite matrix (or stack) ``x``, as the Array API's
    ``linalg.cholesky``: the lower-triangular ``L`` with ``x == L @ L.conj().T``, or with
    ``upper=True`` the upper-triangular ``U`` with ``x == U.conj().T @ U``; integers give
    float64.  A matrix that is not positive definite raises the backend's error
    (``numpy.linalg.LinAlgError``, a ``ValueError``).""",
    (0,),
)
_declare(
    "linalg.norm",
    """linalg.norm(x, /, ord=None, axis=None, keepdims=False): NumPy's ``linalg.norm`` (the
    Array API splits it into ``linalg.vector_norm`` and ``linalg.matrix_norm``): with
    ``axis=None``, the 2-norm of the flattened ``x`` when ``ord`` is None, else the vector norm
    of a 1-D or the matrix norm of a 2-D ``x``; an int ``axis`` gives vector norms, a pair of
    axes matrix norms.  ``ord`` is NumPy's (``inf``, ``-inf``, ``"fro"``, ``"nuc"`` or a
    number); the results are real floating point; an ``ord`` the shape has no norm of is a
    ``ValueError``.""",
    (0,),
)
_declare(
    "linalg.vector_norm",
    """linalg.vector_norm(x, /, *, axis=None, keepdims=False, ord=2): the vector norm of ``x``
    over ``axis`` (an int, a tuple of ints treated as one vector, or ``None`` for all
    elements), as the Array API's ``linalg.vector_norm``: ``ord`` is a real number, ``inf`` or
    ``-inf`` (``0`` counts the non-zero elements); the results are real floating point
    (float32 for float32 and complex64 input, float64 for integers); a matrix ``ord`` such as
    ``"fro"`` is a ``ValueError``.""",
    (0,),
)
_declare(
    "linalg.matrix_norm",
    """linalg.matrix_norm(x, /, *, keepdims=False, ord="fro"): the matrix norm over the last
    two axes of ``x`` (a matrix or a stack), as the Array API's ``linalg.matrix_norm``: ``ord``
    is ``"fro"``, ``"nuc"``, ``1``, ``-1``, ``2``, ``-2``, ``inf`` or ``-inf``; the results are
    real floating point; an ``x`` of fewer than two dimensions or another ``ord`` is a
    ``ValueError``.""",
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

# -- gradients -------------------------------------------------------------------------------
_declare(
    "requires_grad",
    """requires_grad(x, /, flag=True): ``x`` with gradient tracking switched on (``flag=True``)
    or off for the backend's autograd (torch's ``requires_grad_``), the op of the numerics hook
    ``Backend.requires_grad`` (not in the Array API nor NumPy).  A backend without autograd,
    NumPy among them, returns ``x`` itself, unchanged: ``value_and_grad`` then differentiates by
    central finite differences.""",
    (0,),
)
_declare(
    "detach",
    """detach(x, /): ``x`` cut from the gradient graph (an array sharing ``x``'s data that tracks
    no gradient, torch's ``detach``), the op of the numerics hook ``Backend.detach`` (not in the
    Array API nor NumPy).  A backend without autograd, NumPy among them, returns ``x`` itself.""",
    (0,),
)

# -- the standard's other families, declared from their tables ---------------------
for _row in TABLE_OPS:
    _declare(
        _row.name,
        f"{_row.name}{_row.signature}: {_row.doc}",
        _row.array_args,
        _row.aliases,
        sequences=_row.sequences,
    )

#: Every builtin op, in declaration order.
SPECS: tuple[OpSpec, ...] = tuple(_SPECS)
#: The names of the builtin ops, in declaration order.
CATALOGUE: tuple[str, ...] = tuple(s.name for s in SPECS)
#: Old names of builtin ops -> the op's name.
ALIASES: Mapping[str, str] = {alias: s.name for s in SPECS for alias in s.aliases}
