"""The standard inputs of the conformance suite: the dtypes each op is checked in
(:data:`DTYPES`), and the NumPy arguments each op is called with, by shape and layout
(:func:`input_cases`) and by keyword argument (:func:`keyword_cases`).

The families declared as tables (``_cases``) bring their own ops, dtypes and cases, merged
here; they and this module share the arrays of ``_inputs``.
"""

from __future__ import annotations

from typing import Any

from prism_core._knowledge.elementwise import ELEMENTWISE
from prism_core.testing import _cases
from prism_core.testing._inputs import N1, N2, Case, Maker, matrix_cases, vector_cases

__all__ = ["DTYPES", "SHAPES", "input_cases", "keyword_cases", "standard_inputs"]

#: The shapes and layouts every op is called with (where the op is defined on them).
SHAPES = ("standard", "empty", "one", "odd", "strided", "fortran")

_ALL = ("float64", "float32", "complex128", "complex64", "int64", "int32")
_FLOATING = ("float64", "float32", "complex128", "complex64")
_REAL = ("float64", "float32", "int64", "int32")
_FLOAT = ("float64", "float32")
_FFT = ("complex128", "complex64", "float64", "float32")
#: The dtypes each op is checked in (its first: the dtype of the keyword-argument checks).
DTYPES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("asarray", "to_numpy", "zeros", "ones", "full", "from_dlpack"), _ALL),
    # A creation op of indices: the dtype names its results, not its inputs.
    "triu_indices": ("int64",),
    **dict.fromkeys(("add", "subtract", "multiply", "divide", "power", "square"), _ALL),
    **dict.fromkeys(("abs", "real", "conj", "where"), _ALL),
    # The Array API defines these on real numbers only (NumPy orders complex ones its own way).
    **dict.fromkeys(("maximum", "minimum", "clip"), _REAL),
    **dict.fromkeys(("sqrt", "exp", "log"), _FLOATING),
    **dict.fromkeys(("sum", "mean", "std", "cumulative_sum"), _ALL),
    **dict.fromkeys(("min", "max", "argmax", "argmin", "sort"), _REAL),
    **dict.fromkeys(("reshape", "transpose", "moveaxis", "expand_dims"), _ALL),
    **dict.fromkeys(("stack", "concat"), _ALL),
    **dict.fromkeys(("matmul", "dot", "einsum", "convolve"), _ALL),
    **dict.fromkeys(("linalg.inv", "linalg.solve", "linalg.svd"), _FLOATING),
    **dict.fromkeys(("linalg.eig", "linalg.eigh", "linalg.qr", "linalg.cholesky"), _FLOATING),
    **dict.fromkeys(("linalg.norm", "linalg.vector_norm", "linalg.matrix_norm"), _FLOATING),
    **dict.fromkeys(("fft.fft", "fft.ifft"), _FFT),
    "fft.rfft": _FLOAT,
    # Gradient tracking is for inexact types (torch refuses it on integers); detach is for all.
    "requires_grad": _FLOATING,
    "detach": _ALL,
    # The standard's other elementwise functions, in the dtypes of the suite that
    # the standard defines each for (logical functions in integers: NumPy reads them as bool).
    **{
        e.name: {
            "numeric": _ALL,
            "real": _REAL,
            "floating": _FLOATING,
            "real_floating": _FLOAT,
        }.get(e.kinds, ("int64", "int32"))
        for e in ELEMENTWISE
    },
}
#: The families declared as tables (``_cases``), which bring their own ops and dtypes.
_FAMILIES = _cases.modules()
for _family in _FAMILIES:
    DTYPES.update(_family.DTYPES)
#: The table's functions whose inputs must lie in (-1, 1) (their real domain), or be positive.
_UNIT_DOMAIN = frozenset({"acos", "asin", "atanh"})
_POSITIVE_DOMAIN = frozenset({"acosh", "log1p", "log2", "log10", "reciprocal"})
_POSITIVE_SECOND = frozenset(
    {"floor_divide", "remainder", "bitwise_left_shift", "bitwise_right_shift"}
)


# -- inputs -----------------------------------------------------------------------------------


def _pairs(m: Maker) -> dict[str, tuple[Any, Any]]:
    """Operands of matrix products, per shape."""
    return {
        "standard": (m(N2, N2), m(N2, N2)),
        "empty": (m(0, N2), m(N2, N2)),
        "one": (m(1, 1), m(1, 1)),
        "odd": (m(65, 67), m(67, 65)),
        "strided": (m.strided(N2, N2), m.strided(N2, N2)),
        "fortran": (m.fortran(N2, N2), m.fortran(N2, N2)),
    }


def _square_cases(m: Maker) -> dict[str, Any]:
    """Well-conditioned square matrices, per shape."""
    return {
        "standard": m.well_conditioned(N2),
        "empty": m.well_conditioned(0),
        "one": m.well_conditioned(1),
        "odd": m.well_conditioned(65),
        "strided": m.well_conditioned(2 * N2)[::2, ::2],
        "fortran": m.np.asfortranarray(m.well_conditioned(N2)),
    }


def input_cases(op: str, dtype: str | None = None) -> dict[str, Case]:
    """NumPy arguments to call ``op`` with, by shape (:data:`SHAPES`, and ``vector`` for
    ``linalg.solve``, ``bounds`` for ``clip``): ``{shape: (args, kwargs)}``; ``{}`` when the
    suite has none for that op or that dtype.  ``dtype=None`` is float64, or the op's only
    dtype when it is not checked in float64 (``triu_indices``: int64).  The same numbers every
    time; well-conditioned where it matters."""
    dtype = _default_dtype(op) if dtype is None else dtype
    if dtype not in DTYPES.get(op, ()):
        return {}
    m = Maker(dtype)
    for family in _FAMILIES:  # the families declared as tables
        found: dict[str, Case] | None = family.input_cases(op, m)
        if found is not None:
            return found
    one_arg: dict[str, Case] = {s: ((x,), {}) for s, x in vector_cases(m).items()}
    if op in ("asarray", "to_numpy", "square", "exp", "abs", "real", "conj"):
        return one_arg
    if op in ("from_dlpack", "requires_grad", "detach"):
        return one_arg
    if op in ("fft.fft", "fft.ifft", "fft.rfft"):
        return {s: c for s, c in one_arg.items() if s != "empty"}  # no transform of nothing
    if op in ("sqrt", "log"):
        return {s: ((x,), {}) for s, x in vector_cases(m, positive=True).items()}
    if op in ("zeros", "ones", "full"):
        fill = {"c": 2.5 + 0.5j, "f": 2.5}.get(m.dt.kind, 3)
        extra = (fill,) if op == "full" else ()
        shapes = {"standard": (N2, N2), "empty": (0,), "one": (1,), "odd": (65, 67)}
        return {s: ((shape, *extra), {"dtype": m.dt}) for s, shape in shapes.items()}
    if op == "triu_indices":  # (n,), (n, k) or (n, k, m): no arrays in
        return {
            "standard": ((N2,), {}),
            "empty": ((0,), {}),
            "one": ((1,), {}),
            "odd": ((65, 1, 67), {}),
        }
    if op in ("add", "subtract", "multiply", "divide", "power"):
        firsts = vector_cases(m, positive=op == "power")
        if op != "power":
            seconds = vector_cases(m, positive=op == "divide")
        elif m.dt.kind in "iu":  # integers to the powers 0 and 1
            seconds = vector_cases(m, positive=True)
            for y in seconds.values():
                y -= 1  # in place: the layouts stay what they are
        else:  # a real exponent in [0.5, 1.5), of the same precision
            seconds = vector_cases(Maker(str(m.real)), positive=True)
            for y in seconds.values():
                y *= 0.5
        return {s: ((firsts[s], seconds[s]), {}) for s in firsts}
    table = {e.name: e for e in ELEMENTWISE}.get(op)
    if table is not None and table.arity == 1:
        positive = op in _UNIT_DOMAIN or op in _POSITIVE_DOMAIN
        vectors = vector_cases(m, positive=positive)
        if op in _UNIT_DOMAIN:  # [1, 3) scaled into [0.3, 0.9)
            for x in vectors.values():
                x *= 0.3  # in place: the layouts stay what they are
        return {s: ((x,), {}) for s, x in vectors.items()}
    if table is not None:
        firsts = vector_cases(m)
        seconds = vector_cases(m, positive=op in _POSITIVE_SECOND)
        return {s: ((firsts[s], seconds[s]), {}) for s in firsts}
    if op in ("maximum", "minimum"):
        firsts, seconds = vector_cases(m), vector_cases(m)
        return {s: ((firsts[s], seconds[s]), {}) for s in firsts}
    if op == "clip":  # Python bounds of x's kind, then arrays of bounds (min <= max)
        low, high = (-1, 1) if m.dt.kind in "iu" else (-0.5, 0.5)
        bounded: dict[str, Case] = {s: ((x, low, high), {}) for s, x in vector_cases(m).items()}
        p, q = m(N1), m(N1)
        bounded["bounds"] = ((m(N1), m.np.minimum(p, q), m.np.maximum(p, q)), {})
        return bounded
    if op == "where":
        firsts, seconds = vector_cases(m), vector_cases(m)
        return {s: ((m.np.real(x) > 0, x, seconds[s]), {}) for s, x in firsts.items()}
    if op in ("sum", "mean", "std", "min", "max", "argmax", "argmin"):
        cases: dict[str, Case] = {s: ((x,), {}) for s, x in matrix_cases(m).items()}
        if op != "sum":  # the mean of nothing warns, the minimum of nothing is an error
            del cases["empty"]
        return cases
    if op == "sort":
        return {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op == "cumulative_sum":  # axis=None is for vectors only
        return {s: ((x,), {} if x.ndim == 1 else {"axis": 1}) for s, x in vector_cases(m).items()}
    if op == "reshape":
        return {
            "standard": ((m(N1), (N2, N2)), {}),
            "empty": ((m(0), (0, 3)), {}),
            "one": ((m(1), (1, 1)), {}),
            "odd": ((m(N1 + 1), (17, 241)), {}),
            "strided": ((m.strided(N1), (N2, N2)), {}),
            "fortran": ((m.fortran(N2, N2), (N1,)), {}),
        }
    if op == "transpose":
        return {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op == "moveaxis":
        arrays = {
            "standard": m(8, 8, N2),
            "empty": m(0, 2, 3),
            "one": m(1, 1, 1),
            "odd": m(5, 7, 117),
            "strided": m.strided(8, 8, N2),
            "fortran": m.fortran(8, 8, N2),
        }
        return {s: ((x, 0, -1), {}) for s, x in arrays.items()}
    if op == "expand_dims":
        return {s: ((x, 0), {}) for s, x in vector_cases(m).items()}
    if op in ("stack", "concat"):  # one argument: a list of arrays of one shape and layout
        firsts, seconds = vector_cases(m), vector_cases(m)
        return {s: (([x, seconds[s], x],), {}) for s, x in firsts.items()}
    if op in ("matmul", "dot"):
        return {s: (pair, {}) for s, pair in _pairs(m).items()}
    if op == "einsum":
        return {s: (("ij,jk->ik", *pair), {}) for s, pair in _pairs(m).items()}
    if op == "linalg.inv" or op == "linalg.eig":
        return {s: ((x,), {}) for s, x in _square_cases(m).items()}
    if op in ("linalg.eigh", "linalg.cholesky"):  # Hermitian; positive definite, as
        # well_conditioned's diagonal outweighs the rest
        cases = {s: ((m.hermitian(x),), {}) for s, x in _square_cases(m).items()}
        cases["strided"] = ((m.hermitian(m.well_conditioned(2 * N2))[::2, ::2],), {})
        cases["fortran"] = ((m.np.asfortranarray(m.hermitian(m.well_conditioned(N2))),), {})
        return cases
    if op == "linalg.solve":
        squares = _square_cases(m)
        rights = {
            "standard": m(N2, N2),
            "empty": m(0, 0),
            "one": m(1, 1),
            "odd": m(65, 3),
            "strided": m.strided(N2, N2),
            "fortran": m.fortran(N2, N2),
        }
        cases = {s: ((squares[s], rights[s]), {}) for s in squares}
        cases["vector"] = ((m.well_conditioned(N2), m(N2)), {})  # 1-D: a vector, not a matrix
        return cases
    if op in ("linalg.svd", "linalg.qr"):
        return {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op in ("linalg.norm", "linalg.vector_norm", "linalg.matrix_norm"):
        return {s: ((x,), {}) for s, x in matrix_cases(m).items()}
    if op == "convolve":
        return {
            "standard": ((m(N1), m(64)), {}),
            "one": ((m(1), m(1)), {}),
            "odd": ((m(N1 + 1), m(63)), {}),
            "strided": ((m.strided(N1), m.strided(64)), {}),
        }
    return {}


def keyword_cases(op: str, dtype: str | None = None) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents:
    ``{keyword: [(args, kwargs), ...]}``, in the op's first dtype unless ``dtype`` is given;
    ``{}`` when the suite has none for that op."""
    import prism_core

    if op not in DTYPES:
        return {}
    m = Maker(dtype or DTYPES[op][0])
    for family in _FAMILIES:  # the families declared as tables
        hook = getattr(family, "keyword_cases", None)
        calls: dict[str, list[Case]] | None = hook(op, m) if hook is not None else None
        if calls is not None:
            return calls
    x, a, b = m(N1), m(N2, N2), m(N2, N2)
    cube = m(8, 8, N2)
    if op == "asarray":
        return {
            "dtype": [((x,), {"dtype": "complex128"}), ((x,), {"dtype": prism_core.complex128})],
            "copy": [((x,), {"copy": True}), ((x,), {"copy": None})],
            # Each backend takes devices of its own: the one every backend takes is its default.
            "device": [((x,), {"device": None})],
        }
    if op in ("zeros", "ones"):
        return {
            "shape": [((), {"shape": (N2, N2)})],
            "dtype": [(((N2, N2),), {"dtype": "int32"}), (((N2, N2),), {"dtype": m.dt})],
            "device": [(((N2, N2),), {"device": None})],
        }
    if op == "full":
        return {
            "shape": [((), {"shape": (N2, N2), "fill_value": 2.5})],
            "fill_value": [(((N2, N2),), {"fill_value": 7})],
            "dtype": [(((N2, N2), 3), {"dtype": "float32"}), (((N2, N2), 3), {"dtype": m.dt})],
            "device": [(((N2, N2), 3), {"device": None})],
        }
    if op == "triu_indices":
        return {
            "k": [((N2,), {"k": 1}), ((N2,), {"k": -3})],
            "m": [((N2,), {"m": 67}), ((N2,), {"k": 2, "m": 10})],
        }
    if op == "from_dlpack":
        return {
            "copy": [((x,), {"copy": True}), ((x,), {"copy": None})],
            "device": [((x,), {"device": None})],
        }
    if op == "requires_grad":
        return {"flag": [((x,), {"flag": False}), ((x,), {"flag": True})]}
    if op == "clip":  # bounds by keyword are Python scalars: keywords are not moved
        low, high = (-1, 1) if m.dt.kind in "iu" else (-0.5, 0.5)
        return {
            "min": [((x,), {"min": low}), ((x,), {"min": low, "max": high})],
            "max": [((x,), {"max": high}), ((x, low), {"max": high})],
        }
    reduction: dict[str, list[Case]] = {
        "axis": [((a,), {"axis": 0}), ((a,), {"axis": (0, 1)}), ((a,), {"axis": -1})],
        "keepdims": [((a,), {"keepdims": True}), ((a,), {"axis": 1, "keepdims": True})],
    }
    if op in ("argmax", "argmin"):  # one axis, or None
        return {
            "axis": [((a,), {"axis": 0}), ((a,), {"axis": -1}), ((a,), {"axis": None})],
            "keepdims": [((a,), {"keepdims": True}), ((a,), {"axis": 1, "keepdims": True})],
        }
    if op == "sort":
        ties = Maker("int64")(N2, N2).astype(m.dt)  # small integers: many equal elements
        return {
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": 1})],
            "descending": [((a,), {"descending": True}), ((ties,), {"descending": True})],
            "stable": [((ties,), {"stable": True}), ((a,), {"stable": False})],
        }
    if op == "cumulative_sum":
        ints = Maker("int32")(N2, N2)
        return {
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": -1})],
            "dtype": [
                ((ints,), {"axis": 0, "dtype": "float64"}),
                ((x,), {"dtype": prism_core.complex128}),
            ],
            "include_initial": [
                ((x,), {"include_initial": True}),
                ((a,), {"axis": 1, "include_initial": True}),
            ],
        }
    if op in ("stack", "concat"):
        xs = [a, b, a]
        flat = {"axis": None} if op == "concat" else {"axis": -1}
        return {"axis": [((xs,), {"axis": 1}), ((tuple(xs),), flat)]}
    if op == "sum":
        ints = Maker("int32")(N2, N2)
        return {
            **reduction,
            "dtype": [((ints,), {"dtype": "float64"}), ((a,), {"dtype": prism_core.complex128})],
        }
    if op in ("mean", "min", "max"):
        return reduction
    if op == "std":
        return {**reduction, "correction": [((a,), {"correction": 1}), ((a,), {"correction": 0.5})]}
    if op == "reshape":
        return {
            "shape": [((x,), {"shape": (N2, N2)}), ((x,), {"shape": (-1, 32)})],
            "copy": [((x, (N2, N2)), {"copy": True}), ((x, (N2, N2)), {"copy": False})],
        }
    if op == "transpose":
        return {"axes": [((cube,), {"axes": (1, 0, 2)}), ((cube,), {"axes": None})]}
    if op == "moveaxis":
        return {
            "source": [((cube,), {"source": 0, "destination": -1})],
            "destination": [((cube, (0, 1)), {"destination": (2, 0)})],
        }
    if op == "expand_dims":
        return {"axis": [((a,), {"axis": 1}), ((a,), {"axis": -1})]}
    if op == "einsum":
        return {
            "dtype": [(("ij,jk->ik", a, b), {"dtype": "complex128"})],
            "optimize": [
                (("ij,jk,kl->il", a, b, a), {"optimize": True}),
                (("ij,jk,kl->il", a, b, a), {"optimize": "greedy"}),
            ],
        }
    if op == "linalg.qr":
        return {"mode": [((m(65, 67),), {"mode": "complete"}), ((m(67, 65),), {"mode": "reduced"})]}
    if op == "linalg.cholesky":
        return {"upper": [((m.hermitian(m.well_conditioned(N2)),), {"upper": True})]}
    if op == "linalg.norm":
        return {
            "ord": [((a,), {"ord": "nuc"}), ((x,), {"ord": 1}), ((a,), {"ord": float("inf")})],
            "axis": [((a,), {"axis": 0}), ((cube,), {"axis": (0, 2)})],
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"axis": 1, "keepdims": True})],
        }
    if op == "linalg.vector_norm":
        return {
            "axis": [((a,), {"axis": 1}), ((cube,), {"axis": (0, 2)})],
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"axis": -1, "keepdims": True})],
            "ord": [((x,), {"ord": o}) for o in (1, 0, 3, float("inf"), float("-inf"))],
        }
    if op == "linalg.matrix_norm":
        return {
            "keepdims": [((a,), {"keepdims": True}), ((cube,), {"keepdims": True})],
            "ord": [((a,), {"ord": o}) for o in ("nuc", 1, -1, 2, -2, float("inf"))],
        }
    if op == "linalg.svd":
        return {
            "full_matrices": [
                ((m(65, 67),), {"full_matrices": False}),
                ((a,), {"full_matrices": True}),
            ],
        }
    if op in ("fft.fft", "fft.ifft", "fft.rfft"):
        return {
            "n": [((x,), {"n": N1 - 5}), ((x,), {"n": N1 + 5})],
            "axis": [((a,), {"axis": 0}), ((a,), {"axis": -2})],
            "norm": [((x,), {"norm": "ortho"}), ((x,), {"norm": "forward"})],
        }
    if op == "convolve":
        v = m(64)
        return {"mode": [((x, v), {"mode": "same"}), ((x, v), {"mode": "valid"})]}
    return {}


def standard_inputs(op: str, dtype: str | None = None) -> list[Case]:
    """NumPy arguments to call ``op`` with: ``[(args, kwargs)]``, the ``standard`` case of
    :func:`input_cases` (arrays large enough to pass the usual size thresholds; ``dtype`` as
    there); ``[]`` when the suite has none for that op."""
    case = input_cases(op, dtype).get("standard")
    return [case] if case else []


def _default_dtype(op: str) -> str:
    dtypes = DTYPES.get(op, ())
    return "float64" if "float64" in dtypes or not dtypes else dtypes[0]
