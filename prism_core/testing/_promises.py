"""The checks of what the plugin guide promises of a variant beyond its values on good inputs
(docs/writing-a-plugin.md, "Computing an op the reference computes").

Each calls the variant with the backend's own arrays and compares with the op's NumPy
reference, judged as the suite judges (``_judging``): ``VARIANT-errors-MISTAKE`` (a caller's
mistake raises the reference's exception in its words), ``VARIANT-singular-DTYPE``,
``VARIANT-scalars-DTYPE``, ``VARIANT-promotion-DTYPE1-DTYPE2``, ``VARIANT-can_run``, and of the
backend ``BACKEND-dtypes-declined``.  The suite (``_conformance``) plans them with each
variant's others.  What each compares: docs/writing-a-plugin.md, "Testing your plugin".
"""

from __future__ import annotations

import contextlib
import copy
import functools
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from prism_core.kernel.errors import describe_exception
from prism_core.kernel.records import elementwise
from prism_core.kernel.records.families import RECORDS
from prism_core.testing._inputs import N1, N2, Case, Maker
from prism_core.testing._judging import (
    Check,
    _array_dtypes,
    _case_dtypes,
    _claimed,
    _compare,
    _dtype_problem,
    _prism_name,
    _result_dtypes,
    _Skip,
    _to_numpy,
    _type_problem,
    _unheld,
)
from prism_core.testing._standard import DTYPES, input_cases, keyword_cases

if TYPE_CHECKING:
    from prism_core import Op
    from prism_core.extending import Backend, Variant

__all__ = [
    "BINARY",
    "PAIRS",
    "SINGULAR",
    "declined_problem",
    "mistake_cases",
    "promotion_case",
    "promotion_dtypes",
    "scalar_cases",
    "scalar_dtypes",
    "singular_case",
    "variant_checks",
]

#: The binary elementwise ops: two operands that broadcast, and promote, together.
BINARY = frozenset(e.name for e in elementwise.RECORDS if e.arity == 2)
#: The binary ops of the standard that take booleans (their scalars are checked with bool too).
_BOOLEAN = frozenset(
    e.name
    for e in elementwise.RECORDS
    if e.arity == 2 and e.kinds in ("boolean", "integer_or_boolean", "all")
)
#: Every builtin op's record, by name.
_RECORDS = {r.name: r for r in RECORDS}
#: Ops checked on a singular matrix, in the records' order.
SINGULAR = tuple(r.name for r in RECORDS if "singular" in r.probes)
#: The pairs of dtypes of the promotion checks (``bool`` with ``int32``: where the op takes
#: integers).
PAIRS = (
    ("int32", "float32"),
    ("float32", "float64"),
    ("int32", "int64"),
    ("complex64", "float64"),
    ("bool", "int32"),
)
#: The ops checked in mixed dtypes, by name: those whose records say which operands promote
#: together (``OpRecord.promoted``: the binary elementwise ops, the products, ``where``, the
#: joins of arrays).
_PROMOTED = {r.name: r for r in RECORDS if r.promoted}


# -- inputs -----------------------------------------------------------------------------------

_F = TypeVar("_F", bound=Callable[..., Any])


def _fresh(fn: _F) -> _F:
    """``fn`` made once per arguments (its random arrays cost more than the calls they feed)
    and copied for each caller, so that a variant that writes into its inputs spoils no other
    check."""
    made = functools.lru_cache(maxsize=64)(fn)

    @functools.wraps(fn)
    def fresh(*args: Any) -> Any:
        return copy.deepcopy(made(*args))

    return fresh  # type: ignore[return-value]


@_fresh
def mistake_cases(op: str, dtype: str | None = None) -> dict[str, Case]:
    """A caller's mistakes with ``op``, by name: ``{mistake: (args, kwargs)}`` of NumPy
    arguments in ``dtype`` (the op's first by default), each a call the NumPy reference
    refuses.  ``shapes``: operands that do not broadcast or align; ``rank``: a vector where a
    matrix is due; ``square``: a 64 x 65 matrix where a square one is; ``axis``: axis 7;
    ``NAME``: an option (``norm``, ``mode``, ``side``, ...) given a word it does not know.
    ``{}`` for an op the suite has no inputs for."""
    if op not in DTYPES:
        return {}
    dtype = dtype or DTYPES[op][0]
    standard = _standard(op, dtype)
    if standard is None:
        return {}
    args, kwargs = standard
    m = Maker(dtype)
    found: dict[str, Case] = {}
    probes = _probes(op)
    if "shapes" in probes:
        found["shapes"] = (_shortened(op, args), kwargs)
    if "rank" in probes:
        found["rank"] = ((m(N2), *args[1:]), kwargs)
    if "square" in probes:
        found["square"] = ((m(N2, N2 + 1), *args[1:]), kwargs)
    keywords = keyword_cases(op, dtype)
    if "axis" in keywords:
        call_args, call_kwargs = keywords["axis"][0]
        found["axis"] = (call_args, {**call_kwargs, "axis": 7})
    for keyword, calls in keywords.items():
        # An option of words (not dtype=, whose names are many and spelled many ways).
        if keyword in ("axis", "dtype"):
            continue
        if all(isinstance(kw.get(keyword), str) for _, kw in calls):
            call_args, call_kwargs = calls[0]
            found[keyword] = (call_args, {**call_kwargs, keyword: f"no-such-{keyword}"})
    return found


def _probes(op: str) -> tuple[str, ...]:
    """The calls the suite makes with ``op`` beyond its cases (``OpRecord.probes``: the
    mistakes ``shapes``, ``rank`` and ``square``, a ``singular`` matrix, a ``hermitian`` one);
    none for an op Prism does not declare."""
    record = _RECORDS.get(op)
    return () if record is None else record.probes


def _shortened(op: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with the last array one element shorter along its first axis (for an op of a
    sequence of arrays, ``stack``, the second array of its list)."""
    if _RECORDS[op].sequences:
        arrays = list(args[0])
        arrays[1] = arrays[1][:-1]
        return (type(args[0])(arrays), *args[1:])
    last = max(k for k, a in enumerate(args) if hasattr(a, "shape"))
    changed = list(args)
    changed[last] = changed[last][:-1]
    return tuple(changed)


@_fresh
def singular_case(op: str, dtype: str) -> Case | None:
    """NumPy arguments of ``op`` (one of :data:`SINGULAR`) with a singular 64 x 64 matrix: its
    last column zero (exactly singular in every LU factorisation); for the ops of Hermitian
    matrices, its last row and column zero (so not positive definite).  ``None`` for another
    op or a dtype it is not checked in."""
    if op not in SINGULAR or dtype not in DTYPES.get(op, ()):
        return None
    m = Maker(dtype)
    if "hermitian" in _probes(op):
        matrix = m.hermitian(m.well_conditioned(N2))
        matrix[-1, :] = 0
    else:
        matrix = m.well_conditioned(N2) / (N2 + 4)  # a determinant of order one
    matrix[:, -1] = 0
    if op == "linalg.solve":
        return (matrix, m(N2, 3)), {}
    if op == "linalg.matrix_power":
        return (matrix, -2), {}
    return (matrix,), {}


def _scalars(dtype: str) -> tuple[Any, ...]:
    """The Python scalars the standard lets stand beside an array of ``dtype``."""
    import numpy as np

    kind = np.dtype(dtype).kind
    return {"b": (True,), "i": (2,), "u": (2,), "f": (2, 0.5), "c": (2, 0.5, 0.5 + 0.25j)}[kind]


def scalar_dtypes(op: str) -> tuple[str, ...]:
    """The dtypes the scalars of ``op`` are checked in: the op's, and bool for the ops of
    booleans (their logical and bitwise functions, comparisons)."""
    if op not in BINARY or op not in DTYPES:
        return ()
    return (*DTYPES[op], "bool") if op in _BOOLEAN else DTYPES[op]


@_fresh
def scalar_cases(op: str, dtype: str) -> list[tuple[str, Case]]:
    """Calls of the binary elementwise op ``op`` with a Python scalar for one operand and an
    array of ``dtype`` for the other: ``[(said, (args, kwargs))]``, ``said`` as
    ``"(x1, 0.5)"``.  The arrays are those of the op's standard inputs (in the op's domain:
    ``power``'s second operand is 0 or 1 in integers)."""
    if dtype not in scalar_dtypes(op):
        return []
    if dtype == "bool":
        m = Maker("int32")
        x1, x2 = (m(N1) > 0), (m(N1) > 0)
    else:
        standard = _standard(op, dtype)
        if standard is None:
            return []
        (x1, x2, *_), _ = standard
    found: list[tuple[str, Case]] = []
    for scalar in _scalars(dtype):
        found.append((f"(x1, {scalar!r})", ((x1, scalar), {})))
        found.append((f"({scalar!r}, x2)", ((scalar, x2), {})))
    return found


def promotion_dtypes(op: str) -> tuple[tuple[str, str], ...]:
    """The pairs of :data:`PAIRS` ``op`` is checked in: both dtypes among the op's (bool with
    an integer dtype of the op)."""
    if op not in _PROMOTED or op not in DTYPES:
        return ()
    dtypes = DTYPES[op]
    return tuple((d1, d2) for d1, d2 in PAIRS if (d1 == "bool" or d1 in dtypes) and d2 in dtypes)


@_fresh
def promotion_case(op: str, first: str, second: str) -> Case | None:
    """NumPy arguments of ``op`` whose first operand is of dtype ``first`` and whose other is
    of ``second`` (the operands its record promotes: for ``where``, ``x1`` and ``x2``; for
    ``stack`` and ``concat``, the second array of the list); ``None`` for a pair ``op`` is not
    checked in."""
    if (first, second) not in promotion_dtypes(op):
        return None
    a, b = _standard(op, first), _standard(op, second)
    if a is None or b is None:
        return None
    (a_args, kwargs), (b_args, _) = a, b
    at, *others = _PROMOTED[op].promoted
    args = list(a_args)
    if at in _PROMOTED[op].sequences:  # the second array of the sequence
        xs, ys = a_args[at], b_args[at]
        args[at] = [xs[0], ys[1], *xs[2:]]
    for i in others:
        args[i] = b_args[i]
    return tuple(args), kwargs


@functools.lru_cache(maxsize=16)
def _standard(op: str, dtype: str) -> Case | None:
    """The standard case of ``op`` in ``dtype``, shared (its callers copy what they return);
    for bool, the int32 one as booleans (the conditions of ``where`` as they are)."""
    if dtype != "bool":
        return input_cases(op, dtype).get("standard")
    standard = input_cases(op, "int32").get("standard")
    if standard is None:
        return None
    args, kwargs = standard

    def as_bool(a: Any) -> Any:
        if isinstance(a, list):
            return [as_bool(x) for x in a]
        return a.astype(bool) if hasattr(a, "astype") else a

    # The arguments before the first promoted operand keep theirs (where's condition is bool).
    record = _RECORDS.get(op)
    first = min(record.promoted, default=0) if record is not None else 0
    return (*args[:first], *(as_bool(a) for a in args[first:])), kwargs


# -- calling ----------------------------------------------------------------------------------


def _words(exc: BaseException) -> str:
    """An exception's message, whitespace normalised."""
    try:
        return " ".join(str(exc).split())
    except Exception:  # a message that cannot be shown compares as nothing
        return ""


def _raised(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """What ``fn(*args, **kwargs)`` raises, or ``None`` (its result is dropped)."""
    try:
        fn(*args, **kwargs)
    except Exception as exc:
        return exc
    return None


def _same_error(actual: BaseException, expected: BaseException, when: str = "") -> str | None:
    """None when ``actual`` is the reference's ``expected``: its class (or a subclass of it),
    in the same words; else what differs."""
    if isinstance(actual, type(expected)) and _words(actual) == _words(expected):
        return None
    return (
        f"{when}raised {describe_exception(actual)}; the NumPy reference raises "
        f"{describe_exception(expected)}"
    )


class _Run:
    """The reference's and the variant's outcome of one call: each raised (``error``) or
    returned (``value``; the variant's also as NumPy, ``host``)."""

    def __init__(
        self,
        backend: Backend,
        op: Op,
        variant: Variant,
        reference: Variant,
        case: Case,
        declared: frozenset[str] | None,
    ) -> None:
        args, kwargs = case
        self.expected_error: BaseException | None = None
        self.expected: Any = None
        try:
            self.expected = reference.resolve()(*args, **kwargs)
        except Exception as exc:
            self.expected_error = exc
        #: Why the call is not compared: the reference's result is of a dtype the backend
        #: does not hold (int32 with float32 is float64).
        self.unheld_result = _unheld(backend, declared, _result_dtypes(self.expected))
        if self.unheld_result:
            self.unheld_result = f"the NumPy reference's result: {self.unheld_result}"
        self.error: BaseException | None = None
        self.when = ""
        self.value: Any = None
        self.host: Any = None
        try:
            native, declined = _claimed(backend, op, variant, args, kwargs)
        except Exception as exc:  # what dispatch would raise to the caller, before the call
            self.declined: str | None = None
            self.error, self.when = exc, "before the call (can_run, or converting), "
            return
        self.declined = declined
        if declined:
            return
        try:
            self.value = variant.resolve()(*native, **kwargs)
            backend.synchronize(self.value)
            self.host = _to_numpy(backend, self.value)
        except Exception as exc:
            self.error = exc

    def problem(self, backend: Backend, op: str, case: Case, dtype: str) -> str | None:
        """What differs from the reference: the exception, or the values, dtype and type."""
        if self.declined or self.unheld_result:
            raise _Skip(self.declined or self.unheld_result)
        if self.expected_error is not None:
            if self.error is not None:
                return _same_error(self.error, self.expected_error, self.when)
            return (
                f"returned a result; the NumPy reference raises "
                f"{describe_exception(self.expected_error)}"
            )
        if self.error is not None:
            return f"{self.when}raised {describe_exception(self.error)}"
        return (
            _compare(op, self.expected, self.host, case[0], dtype)
            or _dtype_problem(self.expected, self.host)
            or _type_problem(backend, op, self.expected, self.value)
        )


# -- the checks -------------------------------------------------------------------------------


def variant_checks(
    backend: Backend,
    op: Op,
    variant: Variant,
    reference: Variant,
    declared: frozenset[str] | None,
    cases: Mapping[str, Mapping[str, Case]],
) -> Iterator[Check]:
    """The checks of this module for one variant, planned (see the module docstring);
    ``cases`` are the inputs of its values checks, by dtype held (``can_run`` is asked of
    them)."""
    subject = variant.name
    name = variant.op
    held = [d for d in DTYPES.get(name, ()) if not _unheld(backend, declared, (d,))]

    def skip_unheld(dtypes: Any) -> None:
        unheld = _unheld(backend, declared, dtypes)
        if unheld:
            raise _Skip(unheld)

    # Caller's mistakes, in the first dtype the backend holds.
    first = held[0] if held else DTYPES.get(name, ("float64",))[0]
    for mistake in mistake_cases(name, first):

        def errors(mistake: str = mistake) -> str | None:
            case = mistake_cases(name, first)[mistake]
            skip_unheld(_case_dtypes(case))
            run = _Run(backend, op, variant, reference, case, declared)
            if run.expected_error is None:
                raise _Skip("the NumPy reference takes this call: no mistake to compare")
            return run.problem(backend, name, case, first)

        yield Check(f"{subject}-errors-{mistake}", subject, "errors", errors)

    for dtype in DTYPES.get(name, ()) if name in SINGULAR else ():

        def on_singular(dtype: str = dtype) -> str | None:
            skip_unheld((dtype,))
            case = singular_case(name, dtype)
            assert case is not None
            run = _Run(backend, op, variant, reference, case, declared)
            return run.problem(backend, name, case, dtype)

        yield Check(f"{subject}-singular-{dtype}", subject, "singular", on_singular)

    for dtype in scalar_dtypes(name):

        def scalars(dtype: str = dtype) -> str | None:
            skip_unheld((dtype,))
            declined = []
            cases = scalar_cases(name, dtype)
            for said, case in cases:
                run = _Run(backend, op, variant, reference, case, declared)
                if run.declined or run.unheld_result:
                    declined.append(run.declined or run.unheld_result)
                    continue
                problem = run.problem(backend, name, case, dtype)
                if problem:
                    return f"{said}: {problem}"
            if declined and len(declined) == len(cases):
                raise _Skip(declined[0])
            return None

        yield Check(f"{subject}-scalars-{dtype}", subject, "scalars", scalars)

    for d1, d2 in promotion_dtypes(name):

        def promotion(d1: str = d1, d2: str = d2) -> str | None:
            skip_unheld((d1, d2))
            case = promotion_case(name, d1, d2)
            assert case is not None
            import numpy as np

            # The tolerance of the less precise dtype (float32 in float32 with float64).
            loose = "float32" if {d1, d2} & {"float32", "complex64"} else "float64"
            run = _Run(backend, op, variant, reference, case, declared)
            problem = run.problem(backend, name, case, loose)
            said = f"{np.dtype(d1)} with {np.dtype(d2)}"
            return f"{said}: {problem}" if problem else None

        yield Check(f"{subject}-promotion-{d1}-{d2}", subject, "promotion", promotion)

    if (variant.can_run is not None or variant.placement is not None) and held:
        yield Check(
            f"{subject}-can_run",
            subject,
            "can_run",
            lambda: _can_run_problem(backend, variant, cases),
        )


def _specs(args: tuple[Any, ...]) -> tuple[Any, ...]:
    """``args`` with each NumPy array (those in a list of arrays included) as its
    :class:`prism_core.ArraySpec`, as ``prism explain`` gives them to ``can_run``."""
    import numpy as np

    from prism_core import ArraySpec

    def spec(a: Any) -> Any:
        if isinstance(a, np.ndarray):
            return ArraySpec(a.shape, a.dtype)
        if isinstance(a, (list, tuple)):
            return type(a)(spec(x) for x in a)
        return a

    return tuple(spec(a) for a in args)


#: The methods of a backend that convert or make arrays: ``can_run`` calls none of them.
_CONVERTERS = ("asarray", "from_dlpack", "to_device", "empty")


@contextlib.contextmanager
def _conversions(backend: Backend) -> Iterator[list[str]]:
    """Within it, the list names each converting method of ``backend`` called (on this
    instance, which is the one dispatch uses); left empty where the instance cannot be
    instrumented (``__slots__``)."""
    called: list[str] = []
    patched: list[str] = []

    def recording(method: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def record(*args: Any, **kwargs: Any) -> Any:
            called.append(method)
            return original(*args, **kwargs)

        return record

    try:
        for method in _CONVERTERS:
            if method in vars(backend):
                continue  # an instance attribute of the backend's own: left alone
            try:
                setattr(backend, method, recording(method, getattr(backend, method)))
            except (AttributeError, TypeError):
                break
            patched.append(method)
        yield called
    finally:
        for method in patched:
            delattr(backend, method)


def _can_run_problem(
    backend: Backend, variant: Variant, cases: Mapping[str, Mapping[str, Case]]
) -> str | None:
    """What is wrong with ``variant.can_run`` (and its ``placement``) on ``cases`` (by dtype,
    then shape)."""
    can_run = variant.accepts
    tried = 0
    for dtype, by_shape in cases.items():
        for shape, (args, kwargs) in by_shape.items():
            tried += 1
            said = f"{dtype}, {shape}"
            with _conversions(backend) as converted:
                try:
                    on_arrays = can_run(*args, **kwargs)
                except Exception as exc:
                    return f"{said}: raised {describe_exception(exc)} for the caller's arrays"
                specs = _specs(args)
                try:
                    on_specs = can_run(*specs, **kwargs)
                except Exception as exc:
                    return (
                        f"{said}: raised {describe_exception(exc)} for ArraySpecs of the "
                        "arguments (prism explain asks with specs: shapes and dtypes, no data)"
                    )
            if converted:
                return (
                    f"{said}: called Backend.{converted[0]}(); can_run is asked before "
                    "anything is converted and must read shapes, dtypes and arguments only"
                )
            if (on_arrays is True) != (on_specs is True):
                return (
                    f"{said}: answered {on_arrays!r} for the caller's arrays but {on_specs!r} "
                    "for their ArraySpecs; the answer must follow from shapes, dtypes and "
                    "arguments alone"
                )
            if on_arrays is not True and not isinstance(on_arrays, str) and on_arrays:
                return f"{said}: answered {on_arrays!r}; expected True or a reason (a str)"
    if not tried:
        raise _Skip(f"no standard inputs for {variant.op}")
    return None


def declined_problem(backend: Backend, declared: frozenset[str]) -> str | None:
    """What is wrong with how dispatch takes the dtypes ``backend`` does not hold: for each op
    the backend has variants of, a call in the first such dtype must leave every variant of
    the backend declined, with the dtype in its reason (``prism explain``), and running the
    call must convert nothing through the backend."""
    import prism_core

    tried = 0
    for op in prism_core.all_ops().values():
        mine = [v for v in op.variants if v.backend == backend.name]
        unheld = [d for d in DTYPES.get(op.name, ()) if _unheld(backend, declared, (d,))]
        if not mine or not unheld:
            continue
        dtype = unheld[0]
        case = _standard(op.name, dtype)
        # Dispatch reads the dtypes of a call's arrays (a creation op's dtype= is its own).
        if case is None or dtype not in _array_dtypes(case[0]):
            continue
        args, kwargs = copy.deepcopy(case)
        decision = prism_core.explain(op.name, *args, **kwargs)
        for variant in mine:
            candidate = next((c for c in decision.candidates if c.variant == variant.name), None)
            if candidate is None:
                continue
            if candidate.accepted:
                return (
                    f"{op.name} of {dtype} arrays: dispatch accepts {variant.name} on "
                    f"{candidate.device}, though {backend.name} does not hold {dtype}: "
                    "Backend.dtypes(device) must say so for each device it drives"
                )
            if any(_prism_name(dtype) in reason for reason in candidate.reasons):
                tried += 1
        with _conversions(backend) as converted, contextlib.suppress(Exception):
            op(*args, **kwargs)  # whatever runs it: this backend must not be handed the arrays
        if converted:
            return (
                f"{op.name} of {dtype} arrays: the call converted them with "
                f"Backend.{converted[0]}(), though {backend.name} does not hold {dtype}"
            )
    if not tried:
        raise _Skip(
            f"no variant of {backend.name} is a candidate here for a dtype it does not hold"
        )
    return None
