"""How the conformance suite judges: a check and its result (:class:`Check`,
:class:`CheckResult`, a skip with its reason), a variant's call as dispatch makes it
(``can_run`` asked with the caller's arguments before anything is converted, then the
backend's arrays), its result against the NumPy reference's, and the dtypes a backend holds
(``Backend.dtypes``).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core.kernel.errors import describe_exception
from prism_core.testing._inputs import Case

if TYPE_CHECKING:
    from prism_core.extending import Backend, Variant

__all__ = ["FAILED", "PASSED", "SKIPPED", "Check", "CheckResult"]

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, ``passed``/``failed``/``skipped``, and what was seen.

    ``subject`` is the variant checked (or the backend, for its contract) and ``check`` the kind
    of check: ``availability``, ``contract``, ``values``, ``dtype``, ``type``, ``kwarg``,
    ``errors``, ``singular``, ``scalars``, ``promotion`` or ``can_run``.
    """

    name: str
    status: str
    detail: str = ""
    subject: str = ""
    check: str = ""

    __module__ = "prism_core.testing"


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


# -- comparing results ---------------------------------------------------------------------------


def _to_numpy(backend: Backend, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_numpy(backend, v) for v in value)
    if isinstance(value, list):  # meshgrid's list, as the standard says
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
    # The scale of the finite values: a logarithm of zero (slogdet of a singular matrix) is
    # -inf, which is compared as such, not as a scale.
    finite = e[np.isfinite(e)] if e.dtype.kind in "fc" else e
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    if e.size and not np.allclose(a, e, rtol=rtol, atol=rtol * max(scale, 1.0)):
        worst = float(np.max(np.abs(a - e)))
        return f"values differ from the NumPy reference by up to {worst:.3g} (rtol {rtol})"
    return None


def _compare(op: str, expected: Any, actual: Any, args: tuple[Any, ...], dtype: str) -> str | None:
    import numpy as np

    if op in ("empty", "empty_like"):  # values not set: the shape is what is defined
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
    #: Why the result's dtype is not compared: the reference's is one the backend does not
    #: hold (an int64 argmax of a backend without int64).
    unheld_result: str | None = None


def _native(backend: Backend, op: Any, args: tuple[Any, ...]) -> list[Any]:
    """``args`` as the variant receives them: each array argument, and each array of an
    argument that is a sequence of arrays, through ``Backend.asarray``."""
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
        if k in sequences and isinstance(native[k], (list, tuple)):
            # A list (tuple) of arrays stays a list of the backend's arrays.
            native[k] = type(native[k])(
                backend.asarray(a) if hasattr(a, "dtype") else a for a in native[k]
            )
        elif hasattr(native[k], "dtype"):
            # Only arrays: a Python scalar or None where an array may stand (clip's bounds) is
            # passed as it is, as dispatch passes it (an array would change the promotion).
            native[k] = backend.asarray(native[k])
    return native


def _claimed(
    backend: Backend, op: Any, variant: Variant, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[Any], str | None]:
    """The arguments as the variant receives them, and ``None``; or ``can_run``'s reason when
    it claims neither the caller's arguments nor the backend's own arrays.

    ``can_run`` is asked first with the caller's arguments (NumPy arrays), before anything is
    converted, as dispatch asks it; only where it declines them is it asked again with the
    backend's arrays (a variant of a device backend claims data already on its device)."""
    if variant.can_run is None and variant.placement is None:
        return _native(backend, op, args), None
    verdict = variant.accepts(*args, **kwargs)
    if verdict is True:
        return _native(backend, op, args), None
    declined = f"can_run declines these inputs: {verdict or 'no'}"
    try:
        native = _native(backend, op, args)
    except Exception:  # the backend cannot take them either: the variant claims nothing here
        return [], declined
    return (native, None) if variant.accepts(*native, **kwargs) is True else ([], declined)


def _call(
    backend: Backend,
    op: Any,
    variant: Variant,
    reference: Variant,
    case: Case,
    dtype: str,
    declared: frozenset[str] | None = None,
) -> _Outcome:
    """One call of ``variant`` on ``case``, judged against ``reference`` (in ``dtype``'s
    tolerance).  A call with arrays (or a ``dtype=``) of a dtype the backend does not hold
    (``declared``) is not made: it is declined with that reason."""
    args, kwargs = case
    unheld = _unheld(backend, declared, _case_dtypes(case))
    if unheld:
        return _Outcome(declined=unheld)
    native, declined = _claimed(backend, op, variant, args, kwargs)
    if declined:
        return _Outcome(declined=declined)
    expected = reference.resolve()(*args, **kwargs)
    # A result the backend cannot hold (an int32 mean is float64): refusing it is declining;
    # computed, its values are compared in single precision's tolerance, its dtype is not.
    unheld = _unheld(backend, declared, _result_dtypes(expected))
    if unheld:
        unheld = f"the NumPy reference's result: {unheld}"
    try:
        raw = variant.resolve()(*native, **kwargs)
        backend.synchronize(raw)
        actual = _to_numpy(backend, raw)
    except Exception as exc:
        if unheld:
            return _Outcome(declined=f"{unheld}; the variant raised {describe_exception(exc)}")
        return _Outcome(error=f"raised {describe_exception(exc)}")
    if unheld:
        return _Outcome(
            values=_compare(variant.op, expected, actual, args, "complex64"),
            type=_type_problem(backend, variant.op, expected, raw),
            unheld_result=unheld,
        )
    return _Outcome(
        values=_compare(variant.op, expected, actual, args, dtype),
        dtype=_dtype_problem(expected, actual),
        type=_type_problem(backend, variant.op, expected, raw),
    )


def _result_dtypes(value: Any) -> list[str]:
    """The dtypes of a result: of an array, or of each array of a tuple or list."""
    if isinstance(value, (tuple, list)):
        return [d for item in value for d in _result_dtypes(item)]
    dtype = getattr(value, "dtype", None)
    return [] if dtype is None else [str(dtype)]


def _sequences(op: Any) -> tuple[int, ...]:
    """The positions of ``op``'s arguments that are sequences of arrays: the op's own
    ``sequences`` where it has them, else the catalogue's (``stack``, ``concat``)."""
    found = getattr(op, "sequences", None)
    if found is not None:
        return tuple(found)
    from prism_core.kernel.dispatch.catalogue import SPECS

    return next((spec.sequences for spec in SPECS if spec.name == op.name), ())


# -- the dtypes a backend holds ----------------------------------------------------------------


@functools.cache
def _prism_name(dtype: str) -> str:
    """Prism's name of a dtype of the suite (``"bool_"`` for ``"bool"``)."""
    import prism_core

    return prism_core.dtype(dtype).name


def _declared(backend: Backend) -> frozenset[str] | None:
    """Prism's names of the dtypes ``backend`` declares it holds (``Backend.dtypes``), or
    ``None`` for every dtype; also ``None`` where ``dtypes()`` is broken (its contract check,
    ``BACKEND-dtypes``, says how), so that the other checks still run."""
    try:
        found = backend.dtypes()
        return None if found is None else frozenset(_prism_name(str(d)) for d in found)
    except Exception:
        return None


def _unheld(backend: Backend, declared: frozenset[str] | None, dtypes: Iterable[str]) -> str:
    """Why a call in ``dtypes`` is not tried on ``backend`` (``""``: it is)."""
    if declared is None:
        return ""
    for dtype in dtypes:
        if _prism_name(dtype) not in declared:
            return f"{backend.name} does not hold {dtype} (Backend.dtypes)"
    return ""


def _array_dtypes(args: tuple[Any, ...]) -> list[str]:
    """The dtypes of the arrays among ``args`` (those in a list of arrays included): what
    dispatch reads a call's dtypes from."""
    found = []
    for arg in args:
        for item in arg if isinstance(arg, (list, tuple)) else (arg,):
            dtype = getattr(item, "dtype", None)
            if dtype is not None and hasattr(item, "shape"):
                found.append(str(dtype))
    return found


def _case_dtypes(case: Case) -> list[str]:
    """The dtypes of a call: of its arrays, and those it asks for (``dtype=``, or a dtype
    given by position, as ``astype``'s)."""
    import numpy as np

    import prism_core

    args, kwargs = case
    found = _array_dtypes(args)
    asked = [a for a in args if isinstance(a, (str, np.dtype, prism_core.DType))]
    if kwargs.get("dtype") is not None:
        asked.append(kwargs["dtype"])
    for dtype in asked:
        with contextlib.suppress(Exception):  # not a dtype (einsum's subscripts, a mode)
            found.append(prism_core.dtype(dtype).name)
    return found
