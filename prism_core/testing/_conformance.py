"""The checks of the conformance suite (see the package docstring).

Every check has a name that reads as a test id: ``BACKEND-CHECK`` for the backend contract
(``numpy-roundtrip-float32``), and for a variant ``VARIANT-values-DTYPE-SHAPE``,
``VARIANT-dtype-DTYPE``, ``VARIANT-type-DTYPE`` and ``VARIANT-kwarg-NAME``
(``numpy.fft.fft-dtype-complex64``).  :func:`conformance_checks` plans them without running
anything (the pytest plugin makes one test of each); :func:`check_backend` runs them.

For each variant and each dtype the op is defined in, the suite calls the variant on inputs of
several shapes and layouts (:data:`SHAPES`: a standard size large enough for the usual size
thresholds of ``can_run``, empty, size one, odd sizes, non-contiguous, Fortran order) and compares
with the op's NumPy reference:

* ``values``: the results (to the dtype's tolerance; decompositions by what is unique: ``Q @ R``,
  the orthonormal columns of ``Q`` and the triangle of ``R`` for ``linalg.qr``);
* ``dtype``: the result's dtype is the reference's, on every shape;
* ``type``: an array of the backend (``Backend.is_native``, with ``shape`` and ``dtype``), or the
  named tuple the reference returns (``(U, S, Vh)``), on every shape;
* ``kwarg``: every keyword argument the op documents, with values, dtypes and types compared.

A variant *claims* an input when its ``can_run`` accepts it (given as the caller would give it,
or as the backend's own arrays); inputs it does not claim are skipped with its reason.  The
variant is called with the backend's own arrays: each array argument, and each array of an
argument that is a sequence of arrays (``stack``'s and ``concat``'s first), through
``Backend.asarray``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core._errors import describe_exception
from prism_core._knowledge.elementwise import ELEMENTWISE
from prism_core.testing import _cases
from prism_core.testing._inputs import N1, N2, Case, Maker, matrix_cases, vector_cases

if TYPE_CHECKING:
    from prism_core import Backend, Variant

__all__ = [
    "SHAPES",
    "Check",
    "CheckResult",
    "ConformanceReport",
    "check_backend",
    "conformance_checks",
    "input_cases",
    "keyword_cases",
    "standard_inputs",
]

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
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
    # The standard's other elementwise functions (issue 12), in the dtypes of the suite that
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


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, ``passed``/``failed``/``skipped``, and what was seen.

    ``subject`` is the variant checked (or the backend, for its contract) and ``check`` the kind
    of check: ``availability``, ``contract``, ``values``, ``dtype``, ``type`` or ``kwarg``.
    """

    name: str
    status: str
    detail: str = ""
    subject: str = ""
    check: str = ""

    __module__ = "prism_core.testing"


@dataclass
class ConformanceReport:
    """Every check of one backend."""

    backend: str
    results: list[CheckResult] = field(default_factory=list)

    __module__ = "prism_core.testing"

    @property
    def failed(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == FAILED]

    @property
    def passed(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == PASSED]

    @property
    def skipped(self) -> list[CheckResult]:
        return [r for r in self.results if r.status == SKIPPED]

    @property
    def ok(self) -> bool:
        return not self.failed

    def raise_for_failures(self) -> None:
        if self.failed:
            raise AssertionError(str(self))

    def __str__(self) -> str:
        lines = [
            f"conformance of backend {self.backend!r}: {len(self.passed)} passed, "
            f"{len(self.failed)} failed, {len(self.skipped)} skipped"
        ]
        for r in self.results:
            if r.status == FAILED:
                lines.append(f"  failed: {r.name}: {r.detail}")
        skipped = self.skipped
        if skipped:
            lines.append(f"  skipped ({len(skipped)}), for example {skipped[0].name}:")
            lines.append(f"    {skipped[0].detail}")
        return "\n".join(lines)


class _Skip(Exception):
    pass


@dataclass(frozen=True)
class Check:
    """One check of the suite, planned but not run: :meth:`run` runs it (once per call)."""

    name: str
    subject: str
    check: str
    _run: Callable[[], str | None] = field(repr=False, compare=False)

    __module__ = "prism_core.testing"

    def run(self) -> CheckResult:
        try:
            problem = self._run()
        except _Skip as skip:
            return CheckResult(self.name, SKIPPED, str(skip), self.subject, self.check)
        except Exception as exc:
            return CheckResult(
                self.name, FAILED, f"raised {describe_exception(exc)}", self.subject, self.check
            )
        status = FAILED if problem else PASSED
        return CheckResult(self.name, status, problem or "", self.subject, self.check)


def _decided(name: str, subject: str, check: str, status: str, detail: str = "") -> Check:
    def run() -> str | None:
        if status == SKIPPED:
            raise _Skip(detail)
        return detail if status == FAILED else None

    return Check(name, subject, check, run)


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
    for family in _FAMILIES:  # the families declared as tables (issue 12)
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
    for family in _FAMILIES:  # the families declared as tables (issue 12)
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


# -- comparing results ---------------------------------------------------------------------------


def _to_numpy(backend: Backend, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_numpy(backend, v) for v in value)
    if isinstance(value, list):  # meshgrid's list, as the standard says (issue 12)
        return [_to_numpy(backend, v) for v in value]
    return backend.to_numpy(value)


def _close(expected: Any, actual: Any, dtype: str) -> str | None:
    """None when ``actual`` matches ``expected`` within the dtype's tolerance, else why not."""
    import numpy as np

    e = np.asarray(expected)
    a = np.asarray(actual)
    if e.shape != a.shape:
        return f"shape {a.shape}, expected {e.shape}"
    single = np.dtype(dtype) in (np.dtype("float32"), np.dtype("complex64"))
    rtol = 1e-3 if single else 1e-8
    scale = float(np.max(np.abs(e))) if e.size else 0.0
    if e.size and not np.allclose(a, e, rtol=rtol, atol=rtol * max(scale, 1.0)):
        worst = float(np.max(np.abs(a - e)))
        return f"values differ from the NumPy reference by up to {worst:.3g} (rtol {rtol})"
    return None


def _compare(op: str, expected: Any, actual: Any, args: tuple[Any, ...], dtype: str) -> str | None:
    import numpy as np

    if op in ("empty", "empty_like"):  # values not set (issue 12): the shape is what is defined
        shape, want = np.shape(actual), np.shape(expected)
        return None if shape == want else f"shape {shape}, expected {want}"

    # Results that are defined only up to order or sign are compared by what is unique.
    if op == "linalg.svd":
        if not isinstance(actual, tuple) or len(actual) != 3:
            return f"returned {type(actual).__name__}, expected (U, S, Vh)"
        u, s, vh = actual
        problem = _close(expected[1], s, dtype)
        if problem:
            return f"singular values: {problem}"
        if np.shape(u) != np.shape(expected[0]) or np.shape(vh) != np.shape(expected[2]):
            return f"U, Vh of shapes {np.shape(u)}, {np.shape(vh)}, expected " + (
                f"{np.shape(expected[0])}, {np.shape(expected[2])}"
            )
        k = s.shape[-1]
        rebuilt = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
        return _close(args[0], rebuilt, dtype)
    if op == "linalg.qr":  # unique up to the signs (phases) of Q's columns and R's rows
        if not isinstance(actual, tuple) or len(actual) != 2:
            return f"returned {type(actual).__name__}, expected (Q, R)"
        q, r = actual
        if np.shape(q) != np.shape(expected[0]) or np.shape(r) != np.shape(expected[1]):
            return f"Q, R of shapes {np.shape(q)}, {np.shape(r)}, expected " + (
                f"{np.shape(expected[0])}, {np.shape(expected[1])}"
            )
        problem = _close(args[0], q @ r, dtype)
        if problem:
            return f"Q @ R: {problem}"
        k = q.shape[-1]
        problem = _close(np.eye(k), np.swapaxes(q.conj(), -1, -2) @ q, dtype)
        if problem:
            return f"the columns of Q are not orthonormal: {problem}"
        problem = _close(np.triu(r), r, dtype)
        return f"R is not upper triangular: {problem}" if problem else None
    if op in ("linalg.eig", "linalg.eigh"):
        if not isinstance(actual, tuple) or len(actual) != 2:
            return f"returned {type(actual).__name__}, expected (eigenvalues, eigenvectors)"
        values, vectors = actual
        problem = _close(np.sort_complex(expected[0]), np.sort_complex(values), dtype)
        if problem:
            return f"eigenvalues: {problem}"
        return _close(args[0] @ vectors, vectors * values[..., None, :], dtype)
    if isinstance(expected, (tuple, list)):  # a list: meshgrid's, as the standard says
        structure = list if isinstance(expected, list) else tuple  # named tuples come as tuples
        if not isinstance(actual, structure) or len(actual) != len(expected):
            return f"returned {type(actual).__name__}, expected {len(expected)} results"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            problem = _close(e, a, dtype)
            if problem:
                return f"result {i}: {problem}"
        return None
    return _close(expected, actual, dtype)


def _dtype_problem(expected: Any, actual: Any) -> str | None:
    """None when the dtypes of ``actual`` (NumPy, from ``to_numpy``) are the reference's."""
    import numpy as np

    if isinstance(expected, (tuple, list)):
        if not isinstance(actual, (tuple, list)) or len(actual) != len(expected):
            return None  # the values and type checks say what is wrong with the structure
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            problem = _dtype_problem(e, a)
            if problem:
                return f"result {i}: {problem}"
        return None
    want, got = np.asarray(expected).dtype, np.asarray(actual).dtype
    if want == got:
        return None
    return f"dtype {got}, expected {want} (the NumPy reference's)"


def _type_problem(backend: Backend, op: str, expected: Any, actual: Any) -> str | None:
    """None when ``actual`` is what the reference's result is, in the backend's terms."""
    import numpy as np

    if op == "to_numpy":
        if isinstance(actual, np.ndarray):
            return None
        return f"returned {type(actual).__qualname__}, not a NumPy array"
    if isinstance(expected, list):  # meshgrid returns a list, as the standard says
        if not isinstance(actual, list):
            return f"returned {type(actual).__qualname__}; expected a list of arrays"
        for i, item in enumerate(actual):
            problem = _array_problem(backend, item)
            if problem:
                return f"result {i}: {problem}"
        return None
    if isinstance(expected, tuple):
        fields = getattr(type(expected), "_fields", None)
        if not isinstance(actual, tuple):
            what = f"a named tuple with fields {', '.join(fields)}" if fields else "a tuple"
            return f"returned {type(actual).__qualname__}; expected {what}"
        if fields and getattr(type(actual), "_fields", None) != fields:
            return (
                f"returned a plain tuple; expected a named tuple with fields "
                f"{', '.join(fields)}, as the NumPy reference returns"
            )
        if len(actual) != len(expected):
            return f"returned {len(actual)} results, expected {len(expected)}"
        for i, item in enumerate(actual):
            problem = _array_problem(backend, item)
            if problem:
                return f"result {fields[i] if fields else i}: {problem}"
        return None
    return _array_problem(backend, actual)


def _array_problem(backend: Backend, value: Any) -> str | None:
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        return f"returned {type(value).__qualname__}, not an array of backend {backend.name!r}"
    if not backend.is_native(value):
        return (
            f"returned {type(value).__qualname__}, which backend {backend.name!r} does not take "
            "as its own (is_native() is False)"
        )
    return None


# -- calling a variant -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Outcome:
    """What one call of a variant gave, judged: ``declined`` (can_run's reason) or ``error``
    (the call raised), else the problems of the values, dtypes and type (``None``: right)."""

    declined: str | None = None
    error: str | None = None
    values: str | None = None
    dtype: str | None = None
    type: str | None = None


def _call(
    backend: Backend, op: Any, variant: Variant, reference: Variant, case: Case, dtype: str
) -> _Outcome:
    args, kwargs = case
    positions = (
        op.array_args
        if op.array_args is not None
        else tuple(k for k, a in enumerate(args) if hasattr(a, "dtype"))
    )
    sequences = _sequences(op)
    native = list(args)
    for k in positions:
        if k >= len(native):
            continue
        if k in sequences:  # a list (tuple) of arrays stays a list of the backend's arrays
            native[k] = type(native[k])(backend.asarray(a) for a in native[k])
        elif hasattr(native[k], "dtype"):
            # Only arrays: a Python scalar or None where an array may stand (clip's bounds) is
            # passed as it is, as dispatch passes it (an array would change the promotion).
            native[k] = backend.asarray(native[k])
    if variant.can_run is not None:
        # Claimed when it accepts the arguments as a caller gives them (NumPy arrays), or as
        # the backend's own arrays.
        verdict = variant.can_run(*args, **kwargs)
        if verdict is not True and variant.can_run(*native, **kwargs) is not True:
            return _Outcome(declined=f"can_run declines these inputs: {verdict or 'no'}")
    expected = reference.resolve()(*args, **kwargs)
    try:
        raw = variant.resolve()(*native, **kwargs)
        backend.synchronize(raw)
        actual = _to_numpy(backend, raw)
    except Exception as exc:
        return _Outcome(error=f"raised {describe_exception(exc)}")
    return _Outcome(
        values=_compare(variant.op, expected, actual, args, dtype),
        dtype=_dtype_problem(expected, actual),
        type=_type_problem(backend, variant.op, expected, raw),
    )


def _sequences(op: Any) -> tuple[int, ...]:
    """The positions of ``op``'s arguments that are sequences of arrays: the op's own
    ``sequences`` where it has them, else the catalogue's (``stack``, ``concat``)."""
    found = getattr(op, "sequences", None)
    if found is not None:
        return tuple(found)
    from prism_core._dispatch.catalogue import SPECS

    return next((spec.sequences for spec in SPECS if spec.name == op.name), ())


class _Calls:
    """The calls of one variant in one dtype, made once and shared by its checks."""

    def __init__(
        self, backend: Backend, op: Any, variant: Variant, reference: Variant, dtype: str
    ) -> None:
        self.backend, self.op, self.variant, self.reference = backend, op, variant, reference
        self.dtype = dtype
        self.cases = input_cases(variant.op, dtype)
        self._done: dict[str, _Outcome] = {}

    def outcome(self, shape: str) -> _Outcome:
        found = self._done.get(shape)
        if found is None:
            try:
                found = _call(
                    self.backend,
                    self.op,
                    self.variant,
                    self.reference,
                    self.cases[shape],
                    self.dtype,
                )
            except Exception as exc:  # converting the arguments, can_run or the reference
                found = _Outcome(error=f"raised {describe_exception(exc)}")
            self._done[shape] = found
        return found

    def values(self, shape: str) -> str | None:
        o = self.outcome(shape)
        if o.declined:
            raise _Skip(o.declined)
        return o.error or o.values

    def across_shapes(self, what: str) -> str | None:
        """The first problem of kind ``what`` (``dtype``, ``type``) over the shapes."""
        outcomes = {s: self.outcome(s) for s in self.cases}
        ran = {s: o for s, o in outcomes.items() if not o.declined and not o.error}
        if not ran:
            if all(o.declined for o in outcomes.values()):
                first = next(iter(outcomes.values()))
                raise _Skip(f"{first.declined} (in every shape)")
            errors = [f"{s}: {o.error}" for s, o in outcomes.items() if o.error]
            return f"no call succeeded ({errors[0]})"
        for shape, o in ran.items():
            problem = getattr(o, what)
            if problem:
                return f"{shape}: {problem}"
        return None


def _variant_checks(backend: Backend, variant: Variant) -> Iterator[Check]:
    import prism_core

    op = prism_core.get_op(variant.op)
    subject = variant.name
    reference = next((v for v in op.variants if v.reference and v.backend == "numpy"), None)
    if variant.op == "random.normal":
        yield _decided(
            subject, subject, "values", SKIPPED, "random numbers differ between backends"
        )
        return
    if variant.op not in DTYPES:
        yield _decided(subject, subject, "values", SKIPPED, f"no standard inputs for {variant.op}")
        return
    if reference is None:
        yield _decided(subject, subject, "values", SKIPPED, "the op has no NumPy reference")
        return
    for dtype in DTYPES[variant.op]:
        calls = _Calls(backend, op, variant, reference, dtype)
        for shape in calls.cases:
            yield Check(
                f"{subject}-values-{dtype}-{shape}",
                subject,
                "values",
                functools.partial(calls.values, shape),
            )
        yield Check(
            f"{subject}-dtype-{dtype}",
            subject,
            "dtype",
            functools.partial(calls.across_shapes, "dtype"),
        )
        yield Check(
            f"{subject}-type-{dtype}",
            subject,
            "type",
            functools.partial(calls.across_shapes, "type"),
        )
    first = DTYPES[variant.op][0]
    for keyword in keyword_cases(variant.op):

        def kwarg(keyword: str = keyword) -> str | None:
            for case in keyword_cases(variant.op)[keyword]:
                outcome = _call(backend, op, variant, reference, case, first)
                said = ", ".join(f"{k}={v!r}" for k, v in case[1].items())
                if outcome.declined:
                    raise _Skip(outcome.declined)
                problem = outcome.error or outcome.values or outcome.dtype or outcome.type
                if problem:
                    return f"{said}: {problem}"
            return None

        yield Check(f"{subject}-kwarg-{keyword}", subject, "kwarg", kwarg)


# -- the backend contract ---------------------------------------------------------------------


def _contract_checks(backend: Backend) -> Iterator[Check]:
    import numpy as np

    from prism_core import Requirement

    name = backend.name

    def check(what: str, run: Callable[[], str | None]) -> Check:
        return Check(f"{name}-{what}", name, "contract", run)

    def identity() -> str | None:
        if (
            not isinstance(backend.name, str)
            or not backend.name
            or backend.name != backend.name.lower()
        ):
            return f"name {backend.name!r} must be a non-empty lowercase string"
        if not isinstance(backend.priority, int):
            return f"priority {backend.priority!r} must be an integer"
        Requirement(dict(backend.drives))  # raises RequirementError for a malformed one
        return None

    yield check("identity", identity)

    optional = ("int32", "complex64")
    for dtype in ("float64", "float32", "int32", "complex64"):

        def round_trip(dtype: str = dtype) -> str | None:
            data = np.random.default_rng(7).normal(size=(3, 4)).astype(dtype)
            try:
                native = backend.asarray(data)
            except (TypeError, NotImplementedError) as exc:
                if dtype in optional:
                    raise _Skip(f"{dtype} not supported: {exc}") from None
                raise
            if not backend.is_native(native):
                return "is_native() is False for an array asarray() returned"
            back = np.asarray(backend.to_numpy(native))
            if back.dtype != data.dtype:
                return f"to_numpy(asarray(x)) has dtype {back.dtype}, expected {data.dtype}"
            if not np.array_equal(back, data):
                return "to_numpy(asarray(x)) differs from x"
            return None

        yield check(f"roundtrip-{dtype}", round_trip)

    for dtype in ("float32", "complex64"):

        def asarray_dtype(dtype: str = dtype) -> str | None:
            data = np.arange(12.0).reshape(3, 4)
            want = np.dtype(dtype)
            try:
                native = backend.asarray(data, dtype=want)
            except (TypeError, NotImplementedError) as exc:
                if dtype in optional:
                    raise _Skip(f"{dtype} not supported: {exc}") from None
                raise
            back = np.asarray(backend.to_numpy(native))
            if back.dtype != want:
                return f"asarray(x, dtype=numpy.dtype({dtype!r})) has dtype {back.dtype}"
            return None if np.array_equal(back, data) else "asarray(x, dtype=...) changed x"

        yield check(f"asarray-dtype-{dtype}", asarray_dtype)

    def edge_shapes() -> str | None:
        for x in (
            np.float64(3.5),
            np.zeros((0,)),
            np.zeros((0, 3)),
            np.arange(12.0).reshape(3, 4)[:, ::2],
            np.asfortranarray(np.arange(12.0).reshape(3, 4)),
        ):
            back = np.asarray(backend.to_numpy(backend.asarray(x)))
            if back.shape != np.shape(x) or not np.array_equal(back, x):
                return f"a {np.shape(x)} input came back as {back.shape} or with other values"
        return None

    yield check("edge-shapes", edge_shapes)

    def dlpack() -> str | None:
        x = np.arange(6.0).reshape(2, 3)
        back = np.asarray(backend.to_numpy(backend.from_dlpack(x)))
        return None if np.array_equal(back, x) else "to_numpy(from_dlpack(x)) differs from x"

    yield check("from_dlpack", dlpack)

    def empty() -> str | None:
        want = np.dtype("float32")
        try:
            out = backend.empty((2, 5), want)
        except NotImplementedError as exc:
            raise _Skip(str(exc)) from None
        back = np.asarray(backend.to_numpy(out))
        if back.shape != (2, 5):
            return f"empty((2, 5), numpy.dtype('float32')) has shape {back.shape}"
        if back.dtype != want:
            return f"empty((2, 5), numpy.dtype('float32')) has dtype {back.dtype}"
        return None

    yield check("empty", empty)

    def synchronize() -> None:
        backend.synchronize()

    yield check("synchronize", synchronize)


# -- the suite --------------------------------------------------------------------------------


def conformance_checks(backend: str | Backend) -> list[Check]:
    """Every check of the suite for a backend (an instance, or the name of an installed one),
    planned but not run.  Availability is asked now: an unavailable backend gets its
    availability check and one skipped check, with its reason, for everything else."""
    import prism_core

    ps = prism_core.plugins()
    target = ps.backend(backend) if isinstance(backend, str) else backend
    if not isinstance(target, prism_core.Backend):
        raise TypeError(f"{backend!r} is not a prism_core.Backend")
    name = target.name
    availability_check = f"{name}-availability"
    try:
        availability = target.availability()
    except Exception as exc:
        why = f"availability() raised {describe_exception(exc)}"
        return [_decided(availability_check, name, "availability", FAILED, why)]
    if not isinstance(availability, prism_core.Availability):
        why = f"availability() returned {availability!r}"
        return [_decided(availability_check, name, "availability", FAILED, why)]
    if not availability:
        if not availability.reason:
            why = "unavailable without a reason"
            return [_decided(availability_check, name, "availability", FAILED, why)]
        return [
            _decided(availability_check, name, "availability", PASSED),
            _decided(
                f"{name}-array-contract-and-variants",
                name,
                "contract",
                SKIPPED,
                f"backend unavailable: {availability.reason}",
            ),
        ]
    checks = [_decided(availability_check, name, "availability", PASSED)]
    checks.extend(_contract_checks(target))
    for op in prism_core.all_ops().values():
        for variant in op.variants:
            if variant.backend == name:
                checks.extend(_variant_checks(target, variant))
    return checks


def check_backend(backend: str | Backend) -> ConformanceReport:
    """Run the conformance suite on a backend (an instance, or the name of an installed one)."""
    import prism_core

    ps = prism_core.plugins()
    target = ps.backend(backend) if isinstance(backend, str) else backend
    if not isinstance(target, prism_core.Backend):
        raise TypeError(f"{backend!r} is not a prism_core.Backend")
    report = ConformanceReport(target.name)
    report.results.extend(check.run() for check in conformance_checks(target))
    return report
