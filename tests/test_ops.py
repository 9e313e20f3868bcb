"""The builtin ops against NumPy itself: values, dtypes, result types and errors.

Every op is called the way users call it (``call``: through the op, i.e. the dispatcher) and
compared with the NumPy function it stands for, on edge cases (empty and 0-d arrays,
non-contiguous and Fortran-ordered inputs, every floating and complex dtype, broadcasting);
a caller's mistake must raise NumPy's own exception, unchanged.  A few tests also call the
NumPy variants directly (``direct``), as the reference they are.
"""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import prism_core
from prism_core._builtin import numpy_ops
from prism_core.kernel.description import dtypes as _dtypes
from prism_core.kernel.dispatch.catalogue import ALIASES, CATALOGUE
from prism_core.kernel.dispatch.ops import Op, all_ops, get_op
from prism_core.kernel.records.elementwise import ELEMENTWISE
from prism_core.kernel.records.families import RECORDS

VARIANTS = {v.op: v for v in numpy_ops.variants()}


def direct(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the NumPy variant of ``name`` (or of the op it is an alias of), bypassing dispatch."""
    return VARIANTS[ALIASES.get(name, name)].resolve()(*args, **kwargs)


def dispatched(name: str, *args: Any, **kwargs: Any) -> Any:
    """Call the op ``name`` as users do: through the dispatcher."""
    return prism_core.get_op(name)(*args, **kwargs)


#: How the tests call ops: as users do.
call = dispatched
BOTH = pytest.mark.parametrize("via", [direct, dispatched], ids=["direct", "dispatched"])

FLOATS = [np.float16, np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
INTS = [np.int8, np.int32, np.int64, np.uint8]
INEXACT = [*FLOATS, *COMPLEX]
ALL_DTYPES = [np.bool_, *INTS, *INEXACT]
#: Relative tolerances for results computed by possibly different code paths (layouts).
RTOL = {"e": 2e-3, "f": 2e-6, "d": 1e-13, "F": 2e-6, "D": 1e-13}
LINALG_RTOL = {"e": 2e-2, "f": 1e-4, "d": 1e-10, "F": 1e-4, "D": 1e-10}


# -- helpers ---------------------------------------------------------------------------------
def assert_same(result: Any, expected: Any, *, rtol: dict[str, float] | None = None) -> None:
    """Same type (array, NumPy scalar, named tuple), dtype, shape and values (NaN equal to NaN;
    integers and booleans exactly, inexact types within ``rtol``)."""
    assert type(result) is type(expected), (type(result), type(expected))
    if isinstance(expected, tuple):
        assert len(result) == len(expected)
        for r, e in zip(result, expected, strict=True):
            assert_same(r, e, rtol=rtol)
        return
    assert result.dtype == expected.dtype
    assert result.shape == expected.shape
    if expected.dtype.kind in "fc":
        tol = (rtol or RTOL).get(expected.dtype.char, 1e-13)
        scale = float(np.max(np.abs(expected[np.isfinite(expected)]), initial=0.0))
        np.testing.assert_allclose(result, expected, rtol=tol, atol=tol * scale, equal_nan=True)
    else:
        np.testing.assert_array_equal(result, expected, strict=True)


def raised(fn: Callable[[], object]) -> BaseException:
    try:
        fn()
    except Exception as exc:
        return exc
    raise AssertionError("no exception raised")


def assert_same_error(expected: Callable[[], object], actual: Callable[[], object]) -> None:
    """``actual`` raises exactly the exception ``expected`` (NumPy) raises: type and message."""
    want, got = raised(expected), raised(actual)
    assert type(got) is type(want), (got, want)
    assert str(got) == str(want)


def check(name: str, reference: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    """``call(name, ...)`` gives what ``reference(...)`` gives, or raises what it raises."""
    with np.errstate(all="ignore"):
        try:
            expected = reference(*args, **kwargs)
        except Exception:
            assert_same_error(
                lambda: reference(*args, **kwargs), lambda: call(name, *args, **kwargs)
            )
            return
        assert_same(call(name, *args, **kwargs), expected)


def layouts(a: np.ndarray[Any, Any]) -> dict[str, np.ndarray[Any, Any]]:
    """``a`` (2-D, at least 2x2) in several memory layouts, all with the same values."""
    doubled = np.repeat(np.repeat(a, 2, axis=0), 2, axis=1)
    return {
        "C": np.ascontiguousarray(a),
        "F": np.asfortranarray(a),
        "transposed": np.ascontiguousarray(a.T).T,
        "strided": doubled[::2, ::2],
        "reversed": np.ascontiguousarray(a[::-1, ::-1])[::-1, ::-1],
    }


def sample(shape: tuple[int, ...], dtype: Any, seed: int = 0) -> np.ndarray[Any, Any]:
    rng = np.random.default_rng(seed)
    values = rng.uniform(-2, 2, shape)
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.uniform(-2, 2, shape)
    return np.asarray(values).astype(dtype)


def well_conditioned(n: int, dtype: Any, batch: tuple[int, ...] = (), seed: int = 0) -> Any:
    return (sample((*batch, n, n), dtype, seed) + 4 * np.eye(n)).astype(dtype)


def elements(dtype: Any) -> st.SearchStrategy[Any]:
    kind = np.dtype(dtype).kind
    if kind == "c":
        return st.complex_numbers(
            max_magnitude=1e3,
            allow_nan=False,
            allow_infinity=False,
            width=np.dtype(dtype).itemsize * 8,
        )
    if kind == "f":
        return hnp.from_dtype(np.dtype(dtype))  # NaN, infinities, subnormals included
    return hnp.from_dtype(np.dtype(dtype))


@st.composite
def arrays(
    draw: st.DrawFn, dtype: Any, shape: tuple[int, ...] | None = None
) -> np.ndarray[Any, Any]:
    """Small arrays of ``dtype`` in a random layout (C, Fortran, strided, transposed)."""
    if shape is None:
        shape = draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4))
    layout = draw(st.sampled_from(["C", "F", "strided", "transposed"]))
    if layout == "strided":
        big = draw(hnp.arrays(dtype, tuple(2 * n for n in shape), elements=elements(dtype)))
        strided: np.ndarray[Any, Any] = big[tuple(slice(None, None, 2) for _ in shape)]
        return strided
    if layout == "transposed":
        base: np.ndarray[Any, Any] = draw(hnp.arrays(dtype, shape[::-1], elements=elements(dtype)))
        return np.transpose(base)
    a = draw(hnp.arrays(dtype, shape, elements=elements(dtype)))
    return np.asfortranarray(a) if layout == "F" else a


UNARY: dict[str, Callable[..., Any]] = {
    "square": np.square,
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "abs": np.abs,
    "real": np.real,
    "conj": np.conj,
}
BINARY: dict[str, Callable[..., Any]] = {
    "add": np.add,
    "subtract": np.subtract,
    "multiply": np.multiply,
    "divide": np.divide,
    "power": np.power,
}
REDUCTIONS: dict[str, Callable[..., Any]] = {
    "sum": np.sum,
    "mean": np.mean,
    "std": np.std,
    "min": np.min,
    "max": np.max,
}


# -- the catalogue ---------------------------------------------------------------------------
EXPECTED_ARRAY_ARGS: dict[str, tuple[int, ...] | None] = {
    "asarray": None,
    "zeros": (),
    "ones": (),
    "full": (),
    "to_numpy": (0,),
    "triu_indices": (),
    "from_dlpack": (0,),
    **dict.fromkeys(BINARY, (0, 1)),
    "maximum": (0, 1),
    "minimum": (0, 1),
    "clip": (0, 1, 2),
    "where": (0, 1, 2),
    **dict.fromkeys(UNARY, (0,)),
    **dict.fromkeys(REDUCTIONS, (0,)),
    **dict.fromkeys(("argmax", "argmin", "sort", "cumulative_sum"), (0,)),
    "reshape": (0,),
    "transpose": (0,),
    "moveaxis": (0,),
    "expand_dims": (0,),
    "stack": (0,),  # a sequence of arrays (OpSpec.sequences)
    "concat": (0,),
    "matmul": (0, 1),
    "dot": (0, 1),
    "einsum": None,
    "linalg.inv": (0,),
    "linalg.solve": (0, 1),
    "linalg.svd": (0,),
    "linalg.eig": (0,),
    "linalg.eigh": (0,),
    **dict.fromkeys(("linalg.qr", "linalg.cholesky", "linalg.norm"), (0,)),
    **dict.fromkeys(("linalg.vector_norm", "linalg.matrix_norm"), (0,)),
    "fft.fft": (0,),
    "fft.ifft": (0,),
    "fft.rfft": (0,),
    "convolve": (0, 1),
    "random.normal": (),
    "requires_grad": (0,),
    "detach": (0,),
    # The standard's other elementwise functions, made from their table.
    **{e.name: tuple(range(e.arity)) for e in ELEMENTWISE},
}
#: The ops of the families added later, as their records say.
FAMILY_ROWS = [r for r in RECORDS if r.name not in EXPECTED_ARRAY_ARGS]
EXPECTED_ARRAY_ARGS.update({r.name: r.array_args for r in FAMILY_ROWS})
EXPECTED_ALIASES = {
    "vector_add": "add",
    "matrix_multiply": "matmul",
    "dot_product": "dot",
    "inverse": "linalg.inv",
    "eigendecomposition": "linalg.eig",
    "convolution": "convolve",
    "cumsum": "cumulative_sum",
    "concatenate": "concat",
    "pow": "power",
    # NumPy's names of the standard's functions, with the standard's meaning (issue 34).
    "absolute": "abs",
    "amax": "max",
    "amin": "min",
    "outer": "linalg.outer",
    **{f"arc{name[1:]}": name for name in ("acos", "acosh", "asin", "asinh", "atan", "atanh")},
    "arctan2": "atan2",
    "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift",
}


def test_catalogue_names() -> None:
    assert len(CATALOGUE) == len(set(CATALOGUE)) == 58 + len(ELEMENTWISE) + len(FAMILY_ROWS)
    assert set(CATALOGUE) == set(EXPECTED_ARRAY_ARGS)
    declared = all_ops()
    for name in CATALOGUE:
        op = get_op(name)
        assert isinstance(op, Op)
        assert op.name == name
        assert declared[name] is op
        assert op.__name__ == name.rpartition(".")[2]


@pytest.mark.parametrize("name", CATALOGUE)
def test_docs_are_one_paragraph(name: str) -> None:
    doc = get_op(name).__doc__ or ""
    assert doc.startswith((name.rpartition(".")[2], name))
    assert "\n" not in doc
    assert len(doc) > 80
    assert "Array API" in doc or "NumPy" in doc


@pytest.mark.parametrize(("alias", "target"), EXPECTED_ALIASES.items())
def test_aliases_resolve_to_the_same_op(alias: str, target: str) -> None:
    assert get_op(alias) is get_op(target)
    assert alias in get_op(target).aliases
    assert ALIASES == EXPECTED_ALIASES


@pytest.mark.parametrize(("alias", "target"), EXPECTED_ALIASES.items())
def test_aliases_are_public_names(alias: str, target: str) -> None:
    module, _, attribute = target.rpartition(".")
    namespace = getattr(prism_core, module) if module else prism_core
    assert getattr(prism_core, alias) is getattr(namespace, attribute) is get_op(target).function


@pytest.mark.parametrize("name", CATALOGUE)
def test_ops_are_public_names(name: str) -> None:
    module, _, attribute = name.rpartition(".")
    namespace = getattr(prism_core, module) if module else prism_core
    assert getattr(namespace, attribute) is get_op(name).function


@pytest.mark.parametrize("name", CATALOGUE)
def test_array_args(name: str) -> None:
    """Declared array arguments name positional parameters of the reference implementation."""
    op = get_op(name)
    assert op.array_args == EXPECTED_ARRAY_ARGS[name]
    fn = VARIANTS[name].resolve()
    if isinstance(fn, np.ufunc):  # NumPy's own ufunc, called directly: its inputs are arrays
        assert fn.nin == len(op.array_args or ())
        return
    params = list(inspect.signature(fn).parameters.values())
    positional = [
        p
        for p in params
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    for index in op.array_args or ():
        # Ours are positional-only; NumPy's own functions (called directly) take them by position.
        assert positional[index].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        )


def test_one_numpy_variant_per_op() -> None:
    variants = numpy_ops.variants()
    assert [v.op for v in variants] == list(numpy_ops.FUNCTIONS)
    assert {v.op for v in variants} == set(CATALOGUE)
    assert len(variants) == len(CATALOGUE)
    for v in variants:
        assert (v.backend, v.reference, v.source) == ("numpy", True, "plugin:numpy")
        assert v.name == f"numpy.{v.op}"
        assert v.priority == 0
        assert not v.requirement.specificity
    assert numpy_ops.variants() is not variants


def test_catalogue_and_variants_import_no_numpy() -> None:
    """Plugin discovery calls variants(): declaring ops and listing variants imports no NumPy."""
    code = (
        "import sys, json; import prism_core.kernel.dispatch.catalogue as c; "
        "from prism_core._builtin import numpy_ops as m; n = len(m.variants()); "
        "print(json.dumps([len(c.CATALOGUE), n, 'numpy' in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == [58 + len(ELEMENTWISE) + len(FAMILY_ROWS)] * 2 + [False]


# -- dtype arguments -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, None),
        (_dtypes.bool_, np.bool_),
        (_dtypes.int8, np.int8),
        (_dtypes.int16, np.int16),
        (_dtypes.int32, np.int32),
        (_dtypes.int64, np.int64),
        (_dtypes.uint8, np.uint8),
        (_dtypes.float16, np.float16),
        (_dtypes.float32, np.float32),
        (_dtypes.float64, np.float64),
        (_dtypes.complex64, np.complex64),
        (_dtypes.complex128, np.complex128),
        ("float32", np.float32),
        ("fp16", np.float16),
        ("bool", np.bool_),
        ("double", np.float64),
        ("f4", np.float32),
        ("<i2", np.int16),
        ("uint16", np.uint16),
        (np.float32, np.float32),
        (np.dtype("complex64"), np.complex64),
        (float, np.float64),
        (complex, np.complex128),
        (bool, np.bool_),
    ],
)
def test_numpy_dtype(given: Any, expected: Any) -> None:
    result = numpy_ops.numpy_dtype(given)
    if expected is None:
        assert result is None
    else:
        assert isinstance(result, np.dtype)
        assert result == np.dtype(expected)


@pytest.mark.parametrize("bf16", [_dtypes.bfloat16, "bfloat16", "bf16"])
@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("zeros", (3,)),
        ("ones", (3,)),
        ("full", (3, 1.0)),
        ("asarray", ([1.0],)),
        ("sum", (np.ones(3),)),
        ("random.normal", (3,)),
    ],
)
def test_bfloat16_is_a_type_error(bf16: Any, name: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(TypeError) as info:
        call(name, *args, dtype=bf16)
    assert str(info.value) == "numpy has no bfloat16; use float32 or a backend that has it"


@pytest.mark.parametrize("bad", ["flaot32", "float128x", object()])
def test_unknown_dtype_is_numpys_error(bad: Any) -> None:
    assert_same_error(lambda: np.zeros(3, dtype=bad), lambda: call("zeros", 3, dtype=bad))
    assert isinstance(raised(lambda: call("zeros", 3, dtype=bad)), TypeError)


# -- creation and conversion -----------------------------------------------------------------
SHAPES = [(), 0, 3, (0,), (0, 3), (2, 3), (2, 1, 4)]
DTYPE_ARGS = [
    (None, None),
    (_dtypes.float32, np.float32),
    ("float16", np.float16),
    (np.complex64, np.complex64),
    (np.dtype("complex128"), np.complex128),
    (_dtypes.int32, np.int32),
    ("bool", np.bool_),
    (int, np.int64),
]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize(("dtype", "np_dtype"), DTYPE_ARGS)
@pytest.mark.parametrize(("name", "reference"), [("zeros", np.zeros), ("ones", np.ones)])
def test_zeros_ones(
    name: str, reference: Callable[..., Any], shape: Any, dtype: Any, np_dtype: Any
) -> None:
    assert_same(call(name, shape, dtype=dtype), reference(shape, dtype=np_dtype))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("fill_value", [0, 7, -1.5, True, 2 + 3j, np.float32(0.25), np.nan])
def test_full_infers_the_dtype(shape: Any, fill_value: Any) -> None:
    assert_same(call("full", shape, fill_value), np.full(shape, fill_value))


@pytest.mark.parametrize(("dtype", "np_dtype"), DTYPE_ARGS[1:])
def test_full_with_dtype(dtype: Any, np_dtype: Any) -> None:
    assert_same(call("full", (2, 2), 1, dtype=dtype), np.full((2, 2), 1, dtype=np_dtype))


def test_creation_errors_are_numpys() -> None:
    assert_same_error(lambda: np.zeros(-1), lambda: call("zeros", -1))
    assert_same_error(lambda: np.ones((2, -3)), lambda: call("ones", (2, -3)))
    assert_same_error(
        lambda: np.full(3, 1000, dtype=np.int8), lambda: call("full", 3, 1000, dtype="int8")
    )


@pytest.mark.parametrize(
    "obj",
    [
        [1.0, 2.0],
        [[1, 2], [3, 4]],
        3,
        2.5,
        True,
        1j,
        [],
        [[], []],
        np.float32(1.5),
        np.arange(6).reshape(2, 3).T,
        np.asfortranarray(np.ones((2, 3), np.complex64)),
    ],
)
@pytest.mark.parametrize("dtype", [None, "float32", "complex64", "int8"])
def test_asarray(obj: Any, dtype: Any) -> None:
    """Values, dtypes, and NumPy's errors and warnings (complex to real) alike."""
    check("asarray", np.asarray, obj, dtype=dtype)


@BOTH
def test_asarray_copy(via: Callable[..., Any]) -> None:
    x = np.arange(6.0).reshape(2, 3)
    assert via("asarray", x) is x
    assert via("asarray", x, copy=False) is x
    copied = via("asarray", x, copy=True)
    assert not np.shares_memory(copied, x)
    np.testing.assert_array_equal(copied, x)
    assert_same_error(
        lambda: np.asarray(x, dtype=np.float32, copy=False),
        lambda: via("asarray", x, dtype=_dtypes.float32, copy=False),
    )
    assert_same_error(
        lambda: np.asarray([1, 2], copy=False), lambda: via("asarray", [1, 2], copy=False)
    )


def test_asarray_errors_are_numpys() -> None:
    assert_same_error(lambda: np.asarray([[1], [2, 3]]), lambda: call("asarray", [[1], [2, 3]]))
    assert_same_error(
        lambda: np.asarray(["a"], dtype=np.float64), lambda: call("asarray", ["a"], dtype=float)
    )


@pytest.mark.parametrize(
    "obj", [[1, 2], np.ones((0, 3)), np.array(2.5), np.ones((3, 2), order="F").T, 4]
)
def test_to_numpy(obj: Any) -> None:
    result = call("to_numpy", obj)
    assert type(result) is np.ndarray
    assert_same(result, np.asarray(obj))


# -- elementwise -----------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(sorted(UNARY)), dtype=st.sampled_from(ALL_DTYPES))
def test_unary_matches_numpy(data: st.DataObject, name: str, dtype: Any) -> None:
    x = data.draw(arrays(dtype))
    check(name, UNARY[name], x)


@settings(max_examples=80, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(sorted(BINARY)),
    dtypes=st.tuples(st.sampled_from(ALL_DTYPES), st.sampled_from(ALL_DTYPES)),
    shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=3, max_side=4),
)
def test_binary_matches_numpy_with_broadcasting(
    data: st.DataObject,
    name: str,
    dtypes: tuple[Any, Any],
    shapes: hnp.BroadcastableShapes,
) -> None:
    x1 = data.draw(arrays(dtypes[0], shapes.input_shapes[0]))
    x2 = data.draw(arrays(dtypes[1], shapes.input_shapes[1]))
    check(name, BINARY[name], x1, x2)


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    name=st.sampled_from(sorted(BINARY)),
    dtype=st.sampled_from(INEXACT),
    scalar=st.sampled_from([2, -1, 0.5, True, 1.5j]),
    scalar_first=st.booleans(),
)
def test_binary_with_python_scalars_keeps_weak_promotion(
    data: st.DataObject, name: str, dtype: Any, scalar: Any, scalar_first: bool
) -> None:
    x = data.draw(arrays(dtype))
    args = (scalar, x) if scalar_first else (x, scalar)
    check(name, BINARY[name], *args)


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("dtype", INEXACT)
@pytest.mark.parametrize("shape", [(0,), (0, 3), ()])
def test_unary_edge_shapes(name: str, dtype: Any, shape: tuple[int, ...]) -> None:
    x = sample(shape, dtype) + 3
    check(name, UNARY[name], x)
    if shape == ():
        assert isinstance(call(name, x), np.generic)  # NumPy gives 0-d results as scalars


@pytest.mark.parametrize("name", sorted(UNARY))
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided", "reversed"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_unary_layouts(name: str, layout: str, dtype: Any) -> None:
    x = layouts(sample((5, 4), dtype) + 3)[layout]
    check(name, UNARY[name], x)


@pytest.mark.parametrize("name", sorted(BINARY))
@pytest.mark.parametrize(
    ("s1", "s2"),
    [((0,), (0,)), ((0, 3), (3,)), ((0, 3), (1, 3)), ((), ()), ((), (2, 3)), ((4, 1), (1, 5))],
)
def test_binary_edge_shapes(name: str, s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    check(name, BINARY[name], sample(s1, np.float64, 1) + 3, sample(s2, np.complex64, 2))


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_layouts(name: str) -> None:
    a = layouts(sample((4, 6), np.float64, 1) + 3)
    b = layouts(sample((4, 6), np.float32, 2))
    for x1, x2 in zip(a.values(), reversed(list(b.values())), strict=True):
        check(name, BINARY[name], x1, x2)


def test_elementwise_on_lists_and_scalars() -> None:
    check("add", np.add, [1, 2, 3], 1.5)
    check("multiply", np.multiply, 2, 3)
    check("sqrt", np.sqrt, [4, 9])
    check("abs", np.abs, -3)
    check("real", np.real, [1 + 2j])
    check("power", np.power, np.float32(2), 3)


def test_elementwise_dtypes() -> None:
    c64 = np.array([3 + 4j], np.complex64)
    assert call("abs", c64).dtype == np.float32
    assert call("real", c64).dtype == np.float32
    assert call("conj", c64).dtype == np.complex64
    assert call("divide", np.array([1, 2]), np.array([2, 4])).dtype == np.float64
    assert call("sqrt", np.array([4], np.int8)).dtype == np.float16
    assert call("add", np.ones(2, np.float32), 1.0).dtype == np.float32
    assert call("add", np.ones(2, np.float32), np.ones(2, np.float16)).dtype == np.float32


@BOTH
def test_elementwise_errors_are_numpys(via: Callable[..., Any]) -> None:
    def same(reference: Callable[..., Any], name: str, *args: Any) -> None:
        assert_same_error(lambda: reference(*args), lambda: via(name, *args))

    same(np.add, "add", np.ones(3), np.ones(4))  # ValueError: broadcast
    same(np.add, "vector_add", np.ones((2, 3)), np.ones((3, 2)))
    same(np.power, "power", np.array([2]), np.array([-1]))  # integers to negative powers
    same(np.add, "add", np.array(["a"]), np.ones(1))  # no loop for these types
    same(np.add, "add", np.ones(2, np.int8), 1000)  # Python int out of bounds for int8
    same(np.sqrt, "sqrt", np.array(["x"]))
    assert isinstance(raised(lambda: via("add", np.ones(3), np.ones(4))), ValueError)


@BOTH
def test_warnings_reach_the_caller(via: Callable[..., Any]) -> None:
    """NumPy's warnings pass through; escalated to errors (``-W error``), they are the caller's
    errors: raised unchanged, never a reason to fall back."""
    c = np.array([2 + 1j])
    with pytest.warns(np.exceptions.ComplexWarning):
        result = via("asarray", c, dtype="float64")
    assert_same(result, np.array([2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same_error(
            lambda: np.asarray(c, dtype=np.float64), lambda: via("asarray", c, dtype="float64")
        )
        assert_same_error(lambda: np.log(np.zeros(1)), lambda: via("log", np.zeros(1)))


def test_elementwise_warnings_are_numpys() -> None:
    with pytest.warns(RuntimeWarning, match="divide by zero"):
        call("log", np.zeros(2))
    with pytest.warns(RuntimeWarning, match="invalid value"):
        call("sqrt", np.array([-1.0]))


# -- reductions ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided", "reversed"])
def test_reductions(name: str, axis: Any, keepdims: bool, layout: str) -> None:
    x = layouts(sample((5, 4), np.float64))[layout]
    check(name, REDUCTIONS[name], x, axis=axis, keepdims=keepdims)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@pytest.mark.parametrize("dtype", [*INEXACT, np.int32, np.uint8, np.bool_])
def test_reduction_dtypes(name: str, dtype: Any) -> None:
    x = sample((3, 4), dtype, 3)
    check(name, REDUCTIONS[name], x)
    check(name, REDUCTIONS[name], x, axis=0)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduction_of_0d_gives_numpys_scalar(name: str) -> None:
    check(name, REDUCTIONS[name], np.array(2.5))
    check(name, REDUCTIONS[name], np.array(2.5, np.float32), keepdims=True)
    assert isinstance(call(name, np.array(2.5)), np.float64)
    assert isinstance(call(name, [1.0, 2.0]), np.float64)


@pytest.mark.parametrize(("dtype", "np_dtype"), DTYPE_ARGS[1:])
def test_sum_dtype(dtype: Any, np_dtype: Any) -> None:
    x = np.arange(12, dtype=np.int8).reshape(3, 4)
    assert_same(call("sum", x, dtype=dtype), np.sum(x, dtype=np_dtype))
    assert_same(call("sum", x, axis=1, dtype=dtype), np.sum(x, axis=1, dtype=np_dtype))


@pytest.mark.parametrize("correction", [0, 1, 0.5, 2])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_std_correction(correction: float, axis: Any) -> None:
    x = sample((6, 5), np.float64)
    check("std", np.std, x, axis=axis, correction=correction)
    assert_same(
        call("std", x, axis=axis, correction=correction), np.std(x, axis=axis, ddof=correction)
    )


def test_reductions_of_empty_arrays() -> None:
    empty, empty2 = np.ones((0,)), np.ones((0, 3))
    check("sum", np.sum, empty)
    check("sum", np.sum, empty2, axis=0)
    check("sum", np.sum, empty2, axis=1)
    check("max", np.max, empty2, axis=1)
    check("min", np.min, empty)  # ValueError: zero-size array to reduction ...
    check("max", np.max, empty2, axis=0)
    assert isinstance(raised(lambda: call("min", empty)), ValueError)
    with pytest.warns(RuntimeWarning):
        result = call("mean", empty)
    assert isinstance(result, np.float64)
    assert np.isnan(result)
    with pytest.warns(RuntimeWarning):
        assert np.isnan(call("std", empty))


def test_reductions_propagate_nan() -> None:
    x = np.array([1.0, np.nan, 3.0])
    for name, reference in REDUCTIONS.items():
        check(name, reference, x)
        assert np.isnan(call(name, x))


def test_reduction_errors_are_numpys() -> None:
    x = np.ones((2, 3))
    for name, reference in REDUCTIONS.items():
        assert_same_error(lambda: reference(x, axis=2), lambda: call(name, x, axis=2))  # noqa: B023
        assert_same_error(
            lambda: reference(x, axis=(0, 0)),  # noqa: B023
            lambda: call(name, x, axis=(0, 0)),  # noqa: B023
        )
    assert isinstance(raised(lambda: call("sum", x, axis=2)), np.exceptions.AxisError)


# -- shape -----------------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided", "reversed"])
@pytest.mark.parametrize("shape", [(24,), (4, 6), (2, -1), (-1,), (2, 3, 4), (1, 24, 1)])
def test_reshape(layout: str, shape: tuple[int, ...]) -> None:
    x = layouts(np.arange(24.0).reshape(6, 4))[layout]
    check("reshape", np.reshape, x, shape)
    check("reshape", np.reshape, x, shape=shape)


@pytest.mark.parametrize("copy", [None, True, False])
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided"])
def test_reshape_copy(copy: bool | None, layout: str) -> None:
    """The Array API's ``copy``, as NumPy >= 2.1 implements it."""
    x = layouts(np.arange(24.0).reshape(6, 4))[layout]
    expected: Any
    try:
        expected = np.reshape(x, (4, 6), copy=copy)
    except ValueError:
        assert_same_error(
            lambda: np.reshape(x, (4, 6), copy=copy), lambda: call("reshape", x, (4, 6), copy=copy)
        )
        return
    result = call("reshape", x, (4, 6), copy=copy)
    assert_same(result, expected)
    assert np.shares_memory(result, x) == np.shares_memory(expected, x)


def test_reshape_edge_cases() -> None:
    check("reshape", np.reshape, np.array(3.0), (1, 1))
    check("reshape", np.reshape, np.ones((1, 1)), ())
    check("reshape", np.reshape, np.ones((0, 3)), (3, 0))
    check("reshape", np.reshape, np.ones((0, 3)), (-1, 0))
    check("reshape", np.reshape, [1, 2, 3, 4], (2, 2))
    check("reshape", np.reshape, np.ones(6), (4, -1))  # ValueError: cannot reshape
    check("reshape", np.reshape, np.ones(6), (-1, -1))  # ValueError: one unknown dimension
    assert isinstance(raised(lambda: call("reshape", np.ones(6), (4, -1))), ValueError)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [
        ((), None),
        ((0,), None),
        ((3,), None),
        ((0, 3), None),
        ((2, 3), None),
        ((2, 3), (1, 0)),
        ((2, 3, 4), None),
        ((2, 3, 4), (1, 0, 2)),
        ((2, 3, 4), (-1, 0, 1)),
        ((2, 3, 4), [2, 1, 0]),
        ((2, 3), (0, 0)),  # ValueError: repeated axis
        ((2, 3), (0,)),  # ValueError: axes don't match array
        ((2, 3), (0, 2)),  # AxisError
    ],
)
def test_transpose(shape: tuple[int, ...], axes: Any) -> None:
    x = sample(shape, np.complex64)
    check("transpose", np.transpose, x, axes)
    check("transpose", np.transpose, np.asfortranarray(x), axes=axes)


def test_transpose_is_a_view() -> None:
    x = np.arange(6.0).reshape(2, 3)
    result = call("transpose", x)
    assert np.shares_memory(result, x)
    assert_same(result, x.T)


@pytest.mark.parametrize(
    ("source", "destination"),
    [(0, -1), (-1, 0), (1, 1), ((0, 1), (-1, -2)), ([0, 2], [2, 0]), (3, 0), ((0, 0), (1, 2))],
)
def test_moveaxis(source: Any, destination: Any) -> None:
    x = layouts(sample((4, 6), np.float32))["F"].reshape(2, 2, 6, order="F")
    check("moveaxis", np.moveaxis, x, source, destination)
    check("moveaxis", np.moveaxis, x, source=source, destination=destination)


@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 3), (0, 3)])
@pytest.mark.parametrize("axis", [0, -1, 1, (0, 2), 5])
def test_expand_dims(shape: tuple[int, ...], axis: Any) -> None:
    x = sample(shape, np.float16)
    check("expand_dims", np.expand_dims, x, axis)
    check("expand_dims", np.expand_dims, x.T, axis=axis)
    if axis == 0:
        assert_same(call("expand_dims", x), np.expand_dims(x, 0))


# -- linear algebra --------------------------------------------------------------------------
def check_linalg(name: str, reference: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        expected = reference(*args, **kwargs)
    except Exception:
        assert_same_error(lambda: reference(*args, **kwargs), lambda: call(name, *args, **kwargs))
        return
    assert_same(call(name, *args, **kwargs), expected, rtol=LINALG_RTOL)


@pytest.mark.parametrize("dtype", [*INEXACT, np.int64])
@pytest.mark.parametrize("layout1", ["C", "F", "transposed", "strided", "reversed"])
@pytest.mark.parametrize("layout2", ["C", "F", "strided"])
@pytest.mark.parametrize("name", ["matmul", "matrix_multiply", "dot", "dot_product"])
def test_matrix_products(dtype: Any, layout1: str, layout2: str, name: str) -> None:
    a = layouts(sample((3, 4), dtype, 1) * 4)[layout1]
    b = layouts(sample((4, 5), dtype, 2) * 4)[layout2]
    reference = np.matmul if "mat" in name else np.dot
    check_linalg(name, reference, a, b)


@pytest.mark.parametrize(
    ("s1", "s2"),
    [
        ((3,), (3,)),
        ((3,), (3, 2)),
        ((2, 3), (3,)),
        ((2, 1, 3, 4), (5, 4, 2)),
        ((0, 3), (3, 2)),
        ((2, 0), (0, 3)),
        ((0,), (0,)),
        ((2, 3), (2, 3)),  # ValueError: mismatch in core dimension
        ((), (3,)),  # ValueError: not enough dimensions
        ((2, 2, 3), (3, 3, 2)),  # ValueError: batch shapes do not broadcast
    ],
)
def test_matmul_shapes(s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    check_linalg("matmul", np.matmul, sample(s1, np.float64, 1), sample(s2, np.float64, 2))


@pytest.mark.parametrize(
    ("s1", "s2"),
    [
        ((3,), (3,)),
        ((), (3, 2)),
        ((2, 3), ()),
        ((2, 3, 4), (4, 5)),
        ((0, 3), (3,)),
        ((2, 3), (2, 3)),  # ValueError: shapes not aligned
    ],
)
def test_dot_shapes(s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    check_linalg("dot", np.dot, sample(s1, np.complex128, 1), sample(s2, np.float32, 2))


@BOTH
def test_matmul_errors_are_numpys(via: Callable[..., Any]) -> None:
    a, b = np.ones((2, 3)), np.ones((2, 3))
    assert_same_error(lambda: np.matmul(a, b), lambda: via("matmul", a, b))
    assert_same_error(lambda: np.matmul(a, b), lambda: via("matrix_multiply", a, b))
    assert isinstance(raised(lambda: via("matmul", a, b)), ValueError)
    assert_same_error(lambda: np.matmul(a, np.array(["x"])), lambda: via("matmul", a, ["x"]))


def test_matmul_lists_and_vectors() -> None:
    check_linalg("matmul", np.matmul, [[1, 2], [3, 4]], [1, 1])
    assert isinstance(call("matmul", np.ones(3), np.ones(3)), np.float64)
    assert isinstance(call("dot", [1.0, 2.0], [3.0, 4.0]), np.float64)


@pytest.mark.parametrize(
    ("subscripts", "shapes"),
    [
        ("ij,jk->ik", [(3, 4), (4, 5)]),
        ("ij,jk", [(3, 4), (4, 5)]),
        ("ii->", [(4, 4)]),
        ("ii->i", [(4, 4)]),
        ("i,i->", [(4,), (4,)]),
        ("i,j->ij", [(3,), (0,)]),
        ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
        ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
        ("ij->ji", [(3, 4)]),
        ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),
        ("->", [()]),
        ("ij,jk->ik", [(3, 4), (5, 5)]),  # ValueError: size mismatch
        ("ij->k", [(3, 4)]),  # ValueError: output subscript not in input
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_einsum(subscripts: str, shapes: list[tuple[int, ...]], dtype: Any) -> None:
    operands = [
        layouts(sample(s, dtype, i))["F"] if len(s) == 2 else sample(s, dtype, i)
        for i, s in enumerate(shapes)
    ]
    check_linalg("einsum", np.einsum, subscripts, *operands)
    check_linalg("einsum", np.einsum, subscripts, *operands, optimize=True)


def test_einsum_options() -> None:
    a, b = sample((3, 4), np.float32, 1), sample((4,), np.float32, 2)
    expected = np.einsum("ij,j->i", a, b, dtype=np.float64)
    assert_same(call("einsum", "ij,j->i", a, b, dtype=_dtypes.float64), expected)
    assert_same(call("einsum", "ij,j->i", a, b, dtype="float64"), expected)
    check_linalg("einsum", np.einsum, "ij,j->i", [[1, 2], [3, 4]], [1, 1])
    check_linalg("einsum", np.einsum, a, [0, 1], b, [1], [0])  # NumPy's interleaved form
    assert isinstance(call("einsum", "i,i->", [1.0, 2.0], [3.0, 4.0]), np.float64)


@pytest.mark.parametrize("dtype", INEXACT[1:])
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided", "reversed"])
@pytest.mark.parametrize("name", ["linalg.inv", "inverse"])
def test_inv(dtype: Any, layout: str, name: str) -> None:
    x = layouts(well_conditioned(4, dtype))[layout]
    check_linalg(name, np.linalg.inv, x)
    result = call(name, x)
    np.testing.assert_allclose(result @ x, np.eye(4), atol=LINALG_RTOL[np.dtype(dtype).char])


def test_inv_edge_cases_and_errors() -> None:
    check_linalg("linalg.inv", np.linalg.inv, well_conditioned(3, np.float64, batch=(2, 5)))
    check_linalg("linalg.inv", np.linalg.inv, np.ones((0, 0)))
    check_linalg("linalg.inv", np.linalg.inv, np.ones((2, 0, 0), np.complex64))
    check_linalg("linalg.inv", np.linalg.inv, [[2, 0], [0, 4]])  # integers give float64
    check_linalg("linalg.inv", np.linalg.inv, np.ones((2, 2)))  # LinAlgError: singular
    check_linalg("linalg.inv", np.linalg.inv, np.ones((2, 3)))  # LinAlgError: not square
    check_linalg("linalg.inv", np.linalg.inv, np.ones(3))  # LinAlgError: 1-D
    assert isinstance(raised(lambda: call("inverse", np.ones((2, 2)))), np.linalg.LinAlgError)
    assert_same_error(
        lambda: np.linalg.inv(np.ones((2, 2), np.float16)),
        lambda: call("linalg.inv", np.ones((2, 2), np.float16)),
    )


@pytest.mark.parametrize("dtype", INEXACT[1:])
@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [
        ((4, 4), (4,)),
        ((4, 4), (4, 2)),
        ((3, 4, 4), (3, 4, 1)),
        ((3, 4, 4), (4, 2)),
        ((3, 4, 4), (4,)),
        ((4, 4), (4, 0)),
        ((4, 4), (3,)),  # ValueError: mismatch
        ((4, 4), (2, 3, 4)),  # ValueError: b is a stack of matrices, not of vectors
    ],
)
def test_solve(dtype: Any, a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    a = well_conditioned(a_shape[-1], dtype, batch=a_shape[:-2])
    b = sample(b_shape, dtype, 5)
    check_linalg("linalg.solve", np.linalg.solve, a, b)
    check_linalg("linalg.solve", np.linalg.solve, np.asfortranarray(a), b.T.copy().T)


def test_solve_errors() -> None:
    check_linalg("linalg.solve", np.linalg.solve, np.ones((2, 2)), np.ones(2))  # singular
    check_linalg("linalg.solve", np.linalg.solve, np.ones((2, 3)), np.ones(2))  # not square
    assert isinstance(
        raised(lambda: call("linalg.solve", np.ones((2, 2)), np.ones(2))), np.linalg.LinAlgError
    )


@pytest.mark.parametrize("dtype", INEXACT[1:])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (3, 3), (2, 5, 3), (0, 3), (3, 0)])
@pytest.mark.parametrize("full_matrices", [None, True, False])
def test_svd(dtype: Any, shape: tuple[int, ...], full_matrices: bool | None) -> None:
    x = sample(shape, dtype)
    if full_matrices is None:
        result, expected = call("linalg.svd", x), np.linalg.svd(x)
    else:
        result = call("linalg.svd", x, full_matrices=full_matrices)
        expected = np.linalg.svd(x, full_matrices=full_matrices)
    assert_same(result, expected, rtol=LINALG_RTOL)
    u, s, vh = result
    assert (result.U is u, result.S is s, result.Vh is vh) == (True, True, True)
    m, n = shape[-2:]
    k = min(m, n)
    full = full_matrices is not False
    assert u.shape[-2:] == ((m, m) if full else (m, k))
    assert vh.shape[-2:] == ((n, n) if full else (k, n))
    assert s.dtype.kind == "f"
    reconstructed = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    np.testing.assert_allclose(reconstructed, x, atol=LINALG_RTOL[np.dtype(dtype).char] * 10)


def test_svd_layouts_and_errors() -> None:
    for x in layouts(sample((4, 3), np.float64)).values():
        check_linalg("linalg.svd", np.linalg.svd, x)
    check_linalg("linalg.svd", np.linalg.svd, np.ones(3))  # LinAlgError: 1-D
    check_linalg("linalg.svd", np.linalg.svd, np.array([[np.nan, 1.0], [1.0, 1.0]]))


@pytest.mark.parametrize("name", ["linalg.eig", "eigendecomposition"])
@pytest.mark.parametrize(
    "x",
    [
        np.array([[0.0, -1.0], [1.0, 0.0]]),  # rotation: complex eigenvalues
        np.array([[2.0, 1.0], [1.0, 3.0]]),  # symmetric: real
        np.array([[2.0, 1.0], [1.0, 3.0]], np.float32),
        np.array([[1.0, 2.0], [3.0, 4.0]], np.complex64),
        np.asfortranarray(np.arange(9.0).reshape(3, 3)),
        np.arange(9.0).reshape(3, 3).T,
        np.ones((2, 3, 3)),
        np.ones((0, 0)),
    ],
)
def test_eig(name: str, x: Any) -> None:
    check_linalg(name, np.linalg.eig, x)
    result = call(name, x)
    assert result.eigenvalues is result[0]
    assert result.eigenvectors is result[1]
    w, v = result
    np.testing.assert_allclose(
        x @ v, v * w[..., None, :], atol=1e-4 * (1 + np.abs(x).max(initial=0))
    )


def test_eig_errors() -> None:
    check_linalg("linalg.eig", np.linalg.eig, np.ones((2, 3)))
    check_linalg("eigendecomposition", np.linalg.eig, np.array([[np.inf, 0.0], [0.0, 1.0]]))


@pytest.mark.parametrize("dtype", INEXACT[1:])
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided"])
def test_eigh(dtype: Any, layout: str) -> None:
    a = sample((4, 4), dtype)
    hermitian = a + a.conj().T
    x = layouts(hermitian)[layout]
    check_linalg("linalg.eigh", np.linalg.eigh, x)
    w, v = result = call("linalg.eigh", x)
    assert (result.eigenvalues is w, result.eigenvectors is v) == (True, True)
    assert w.dtype == np.empty(0, dtype).real.dtype
    assert np.all(np.diff(w) >= 0)


def test_eigh_reads_the_lower_triangle_and_errors() -> None:
    x = np.array([[1.0, 100.0], [2.0, 1.0]])
    check_linalg("linalg.eigh", np.linalg.eigh, x)
    np.testing.assert_allclose(call("linalg.eigh", x).eigenvalues, [-1.0, 3.0])
    check_linalg("linalg.eigh", np.linalg.eigh, np.ones((2, 3)))
    check_linalg("linalg.eigh", np.linalg.eigh, np.ones((3, 2, 2)))


# -- Fourier transforms ----------------------------------------------------------------------
FFTS = {"fft.fft": np.fft.fft, "fft.ifft": np.fft.ifft, "fft.rfft": np.fft.rfft}


@pytest.mark.parametrize("name", sorted(FFTS))
@pytest.mark.parametrize("dtype", [*INEXACT, np.int32])
@pytest.mark.parametrize("layout", ["C", "F", "transposed", "strided", "reversed"])
def test_fft(name: str, dtype: Any, layout: str) -> None:
    if name == "fft.rfft" and np.dtype(dtype).kind == "c":
        dtype = np.float64
    x = layouts(sample((4, 6), dtype))[layout]
    check_linalg(name, FFTS[name], x)
    check_linalg(name, FFTS[name], x, axis=0)


@pytest.mark.parametrize("name", sorted(FFTS))
@pytest.mark.parametrize(
    "kwargs",
    [{"n": 4}, {"n": 11}, {"n": 1}, {"norm": "ortho"}, {"norm": "forward"}, {"axis": -2, "n": 3}],
)
def test_fft_options(name: str, kwargs: dict[str, Any]) -> None:
    check_linalg(name, FFTS[name], sample((3, 8), np.float32), **kwargs)


def test_fft_dtypes_and_roundtrip() -> None:
    x = sample((16,), np.float32)
    assert call("fft.fft", x).dtype == np.complex64
    assert call("fft.rfft", x).shape == (9,)
    np.testing.assert_allclose(call("fft.ifft", call("fft.fft", x)), x, atol=1e-5)
    assert call("fft.fft", np.ones(4, np.float64)).dtype == np.complex128
    check_linalg("fft.fft", np.fft.fft, [1, 2, 3])
    check_linalg("fft.fft", np.fft.fft, np.ones((0, 4)))


@pytest.mark.parametrize("name", sorted(FFTS))
def test_fft_errors_are_numpys(name: str) -> None:
    reference = FFTS[name]
    check_linalg(name, reference, np.ones(0))  # ValueError: invalid number of points
    check_linalg(name, reference, np.ones(4), n=0)
    check_linalg(name, reference, np.ones(4), axis=1)  # AxisError
    check_linalg(name, reference, np.ones(4), norm="sideways")
    check_linalg(name, reference, np.array(1.0))
    assert isinstance(raised(lambda: call(name, np.ones(0))), ValueError)


def test_rfft_of_complex_is_numpys_error() -> None:
    check_linalg("fft.rfft", np.fft.rfft, np.ones(4, np.complex128))
    assert isinstance(raised(lambda: call("fft.rfft", np.ones(4, complex))), TypeError)


# -- convolve --------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["convolve", "convolution"])
@pytest.mark.parametrize("mode", [None, "full", "same", "valid"])
@pytest.mark.parametrize(("n", "m"), [(5, 3), (3, 5), (1, 1), (6, 6), (7, 1)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128, np.int64])
def test_convolve(name: str, mode: str | None, n: int, m: int, dtype: Any) -> None:
    a, v = sample((n,), dtype, 1) * 3, sample((m,), dtype, 2) * 3
    if mode is None:
        check_linalg(name, np.convolve, a, v)
    else:
        check_linalg(name, np.convolve, a, v, mode=mode)
        check_linalg(name, np.convolve, a, v, mode)
    expected_len = {None: n + m - 1, "full": n + m - 1, "same": max(n, m)}.get(
        mode, max(n, m) - min(n, m) + 1
    )
    assert call(name, a, v, **({} if mode is None else {"mode": mode})).shape == (expected_len,)


def test_convolve_inputs_and_errors() -> None:
    check_linalg("convolve", np.convolve, [1, 2, 3], [0, 1, 0.5])
    check_linalg("convolve", np.convolve, np.arange(10.0)[::3], np.arange(4.0)[::-1])
    check_linalg("convolve", np.convolve, np.ones(3, np.float32), np.ones(2, np.float16))
    check_linalg("convolve", np.convolve, np.ones(0), np.ones(3))  # ValueError: a is empty
    check_linalg("convolve", np.convolve, np.ones(3), np.ones(0))  # ValueError: v is empty
    check_linalg("convolve", np.convolve, np.ones(3), np.ones(2), mode="circular")
    check_linalg("convolve", np.convolve, np.ones((2, 2)), np.ones(2))  # ValueError: too deep
    assert isinstance(raised(lambda: call("convolve", np.ones(0), np.ones(3))), ValueError)


# -- random.normal ---------------------------------------------------------------------------
@BOTH
def test_normal_same_seed_same_numbers(via: Callable[..., Any]) -> None:
    a = via("random.normal", (3, 4), seed=42)
    b = via("random.normal", (3, 4), seed=42)
    np.testing.assert_array_equal(a, b, strict=True)
    assert (a.shape, a.dtype) == ((3, 4), np.float64)
    c = via("random.normal", (3, 4), seed=43)
    assert not np.array_equal(a, c)
    d, e = via("random.normal", (3, 4)), via("random.normal", (3, 4))
    assert not np.array_equal(d, e)
    np.testing.assert_array_equal(a, np.random.default_rng(42).normal(size=(3, 4)), strict=True)


@pytest.mark.parametrize(
    ("shape", "expected"), [(5, (5,)), ((2, 3), (2, 3)), ((), ()), ((0, 4), (0, 4)), ([2], (2,))]
)
def test_normal_shape(shape: Any, expected: tuple[int, ...]) -> None:
    result = call("random.normal", shape, seed=1)
    assert type(result) is np.ndarray
    assert result.shape == expected


@pytest.mark.parametrize(
    ("dtype", "np_dtype"),
    [
        (_dtypes.float32, np.float32),
        ("float32", np.float32),
        (np.float16, np.float16),
        (np.dtype("float64"), np.float64),
        (_dtypes.float64, np.float64),
        ("fp16", np.float16),
    ],
)
def test_normal_dtype(dtype: Any, np_dtype: Any) -> None:
    result = call("random.normal", (100,), 1.0, 2.0, seed=7, dtype=dtype)
    assert result.dtype == np_dtype
    reference = call("random.normal", (100,), 1.0, 2.0, seed=7)
    np.testing.assert_array_equal(result, reference.astype(np_dtype))


@pytest.mark.parametrize(("mean", "std"), [(0.0, 1.0), (3.0, 2.0), (-5.0, 0.1)])
@pytest.mark.parametrize("dtype", [_dtypes.float64, _dtypes.float32])
def test_normal_statistics(mean: float, std: float, dtype: Any) -> None:
    n = 100_000
    x = call("random.normal", n, mean, std, seed=2024, dtype=dtype).astype(np.float64)
    # Five standard errors: the mean's is std/sqrt(n), the standard deviation's std/sqrt(2n).
    assert abs(x.mean() - mean) < 5 * std / np.sqrt(n)
    assert abs(x.std() - std) < 5 * std / np.sqrt(2 * n)
    keyword = call("random.normal", n, mean=mean, std=std, seed=2024, dtype=dtype)
    np.testing.assert_array_equal(keyword, x.astype(keyword.dtype))


def test_normal_errors() -> None:
    for bad in (_dtypes.int32, "complex64", np.bool_):
        with pytest.raises(TypeError, match="real floating-point"):
            call("random.normal", 3, dtype=bad)
    assert_same_error(
        lambda: np.random.default_rng(0).normal(0.0, -1.0, size=3),
        lambda: call("random.normal", 3, 0.0, -1.0, seed=0),
    )
    assert_same_error(
        lambda: np.random.default_rng(0).normal(size=-1), lambda: call("random.normal", -1, seed=0)
    )
    assert_same_error(lambda: np.random.default_rng(-1), lambda: call("random.normal", 3, seed=-1))


# -- through the dispatcher ------------------------------------------------------------------
@BOTH
def test_direct_and_dispatched_agree(via: Callable[..., Any]) -> None:
    a = layouts(sample((3, 3), np.float32))["F"]
    assert_same(via("matmul", a, a), np.matmul(a, a))
    assert_same(via("add", a, 1.0), a + 1.0)
    assert_same(via("sum", a, axis=0), np.sum(a, axis=0))
    assert_same(
        via("linalg.inv", well_conditioned(3, np.float64)),
        np.linalg.inv(well_conditioned(3, np.float64)),
    )
    assert_same(via("einsum", "ij->j", a), np.einsum("ij->j", a))
    assert_same(via("zeros", (2,), dtype=_dtypes.float32), np.zeros(2, np.float32))
