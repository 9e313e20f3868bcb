"""The checks of the conformance suite (see the package docstring).

Each check's name reads as a test id: ``BACKEND-CHECK`` for the backend contract, and for a
variant ``VARIANT-values-DTYPE-SHAPE``, ``-dtype-DTYPE``, ``-type-DTYPE`` and ``-kwarg-NAME``
(``numpy.fft.fft-dtype-complex64``), then those of ``_promises``.  :func:`conformance_checks`
plans them without running anything (the pytest plugin makes one test of each);
:func:`check_backend` runs them, on the inputs of :data:`SHAPES` in every dtype the op is
defined in that the backend holds, against the op's NumPy reference.  What each check
compares: docs/writing-a-plugin.md, "Testing your plugin".
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prism_core.kernel.errors import describe_exception
from prism_core.testing import _promises
from prism_core.testing._inputs import Case
from prism_core.testing._judging import (
    FAILED,
    PASSED,
    SKIPPED,
    Check,
    CheckResult,
    _call,
    _case_dtypes,
    _decided,
    _declared,
    _Outcome,
    _Skip,
    _unheld,
)
from prism_core.testing._standard import (
    DTYPES,
    SHAPES,
    input_cases,
    keyword_cases,
    standard_inputs,
)

if TYPE_CHECKING:
    from prism_core.extending import Backend, Variant

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


class _Calls:
    """The calls of one variant in one dtype, made once and shared by its checks."""

    def __init__(
        self,
        backend: Backend,
        op: Any,
        variant: Variant,
        reference: Variant,
        dtype: str,
        declared: frozenset[str] | None,
    ) -> None:
        self.backend, self.op, self.variant, self.reference = backend, op, variant, reference
        self.dtype, self.declared = dtype, declared
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
                    self.declared,
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
        if what == "dtype" and all(o.unheld_result for o in ran.values()):
            raise _Skip(f"{next(iter(ran.values())).unheld_result} (in every shape)")
        for shape, o in ran.items():
            problem = getattr(o, what)
            if problem:
                return f"{shape}: {problem}"
        return None


def _absent(backend: Backend, variant: Variant) -> tuple[str, str] | None:
    """(status, reason) of the variant of a function the backend's library lacks (a namespace
    backend's variant of a function its namespace lacks: ``__prism_missing__``), asked with the
    library imported, since the suite runs it anyway; ``None`` when it has one.  Skipped as
    dispatch skips it, unless the backend tells availability from :attr:`installed_as` without
    importing the library and does not name the op in :attr:`lacks`: then, until something
    imports the library, dispatch cannot know and explain would name the variant chosen, so
    the check fails and says what to add."""
    ask = getattr(variant.fn, "__prism_missing__", None)
    if ask is None:
        return None
    from prism_core.backend_kit import NamespaceBackend

    if isinstance(backend, NamespaceBackend):
        with contextlib.suppress(Exception):  # one that cannot import fails its own checks
            backend.xp  # noqa: B018 - imports the namespace, which missing() never does
    why: str | None = ask()
    if why is None:
        return None
    if (
        isinstance(backend, NamespaceBackend)
        and backend.installed_as
        and variant.op not in backend.lacks
    ):
        return FAILED, (
            f"{why}; add {variant.op!r} to {type(backend).__name__}.lacks: with installed_as, "
            "availability imports nothing, so until the library is imported dispatch cannot "
            "tell, and explain names this variant chosen"
        )
    return SKIPPED, why


def _variant_checks(
    backend: Backend, variant: Variant, declared: frozenset[str] | None
) -> Iterator[Check]:
    import prism_core

    op = prism_core.get_op(variant.op)
    subject = variant.name
    reference = next((v for v in op.variants if v.reference and v.backend == "numpy"), None)
    if variant.op == "random.normal":
        yield _decided(
            subject, subject, "values", SKIPPED, "random numbers differ between backends"
        )
        return
    absent = _absent(backend, variant)
    if absent is not None:  # dispatch skips it with this reason: so does the suite
        yield _decided(subject, subject, "values", *absent)
        return
    if variant.op not in DTYPES:
        yield _decided(subject, subject, "values", SKIPPED, f"no standard inputs for {variant.op}")
        return
    if reference is None:
        yield _decided(subject, subject, "values", SKIPPED, "the op has no NumPy reference")
        return
    cases: dict[str, dict[str, Case]] = {}  # the values checks' inputs, by dtype held
    for dtype in DTYPES[variant.op]:
        unheld = _unheld(backend, declared, (dtype,))
        if unheld:  # never converted: the checks are planned, and skipped with the reason
            for shape in input_cases(variant.op, dtype):
                yield _decided(
                    f"{subject}-values-{dtype}-{shape}", subject, "values", SKIPPED, unheld
                )
            for what in ("dtype", "type"):
                yield _decided(f"{subject}-{what}-{dtype}", subject, what, SKIPPED, unheld)
            continue
        calls = _Calls(backend, op, variant, reference, dtype, declared)
        cases[dtype] = calls.cases
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
    held = [d for d in DTYPES[variant.op] if not _unheld(backend, declared, (d,))]
    first = held[0] if held else DTYPES[variant.op][0]
    for keyword in keyword_cases(variant.op):

        def kwarg(keyword: str = keyword) -> str | None:
            if not held:
                raise _Skip(_unheld(backend, declared, DTYPES[variant.op]))
            unheld = []
            for case in keyword_cases(variant.op, first)[keyword]:
                reason = _unheld(backend, declared, _case_dtypes(case))
                if reason:  # a call in a dtype the backend does not hold (sum's dtype=)
                    unheld.append(reason)
                    continue
                outcome = _call(backend, op, variant, reference, case, first, declared)
                said = ", ".join(f"{k}={v!r}" for k, v in case[1].items())
                if outcome.declined:
                    raise _Skip(outcome.declined)
                problem = outcome.error or outcome.values or outcome.dtype or outcome.type
                if problem:
                    return f"{said}: {problem}"
            if unheld and len(unheld) == len(keyword_cases(variant.op, first)[keyword]):
                raise _Skip(unheld[0])
            return None

        yield Check(f"{subject}-kwarg-{keyword}", subject, "kwarg", kwarg)
    yield from _promises.variant_checks(backend, op, variant, reference, declared, cases)


# -- the backend contract ---------------------------------------------------------------------


def _contract_checks(backend: Backend, declared: frozenset[str] | None) -> Iterator[Check]:
    import numpy as np

    from prism_core.hardware import Requirement

    name = backend.name

    def check(what: str, run: Callable[[], str | None]) -> Check:
        return Check(f"{name}-{what}", name, "contract", run)

    def _skip_unheld(*dtypes: str) -> None:
        unheld = _unheld(backend, declared, dtypes)
        if unheld:
            raise _Skip(unheld)

    #: The floating dtype of the checks of shapes and moves: float64, or float32 where the
    #: backend holds no float64 (JAX without x64).
    real = "float32" if _unheld(backend, declared, ("float64",)) else "float64"

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

    def dtypes() -> str | None:
        found = backend.dtypes()
        if found is None:
            return None
        if not isinstance(found, frozenset):
            return f"dtypes() returned {type(found).__qualname__}; expected a frozenset or None"
        import prism_core

        for item in sorted(found, key=str):
            try:
                known = prism_core.dtype(item).name
            except Exception:
                return f"dtypes() holds {item!r}, which is not a dtype's name"
            if known != item:
                return f"dtypes() holds {item!r}; Prism's name of that dtype is {known!r}"
        return None

    yield check("dtypes", dtypes)
    if declared is not None:
        # Dispatch declines, before converting anything, a call in a dtype the backend does
        # not hold: planned only for a backend that declares its dtypes.
        yield check("dtypes-declined", lambda: _promises.declined_problem(backend, declared))

    # Without a declaration (Backend.dtypes() is None), int32 and complex64 may be refused; a
    # dtype the backend declares it holds must be held.
    optional = ("int32", "complex64") if declared is None else ()
    for dtype in ("float64", "float32", "int32", "complex64"):

        def round_trip(dtype: str = dtype) -> str | None:
            _skip_unheld(dtype)
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
            _skip_unheld(dtype)
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
            np.asarray(3.5, dtype=real)[()],
            np.zeros((0,), real),
            np.zeros((0, 3), real),
            np.arange(12.0, dtype=real).reshape(3, 4)[:, ::2],
            np.asfortranarray(np.arange(12.0, dtype=real).reshape(3, 4)),
        ):
            back = np.asarray(backend.to_numpy(backend.asarray(x)))
            if back.shape != np.shape(x) or not np.array_equal(back, x):
                return f"a {np.shape(x)} input came back as {back.shape} or with other values"
        return None

    yield check("edge-shapes", edge_shapes)

    def dlpack() -> str | None:
        x = np.arange(6.0, dtype=real).reshape(2, 3)
        back = np.asarray(backend.to_numpy(backend.from_dlpack(x)))
        return None if np.array_equal(back, x) else "to_numpy(from_dlpack(x)) differs from x"

    yield check("from_dlpack", dlpack)

    def writable() -> str | None:
        # The guide's promise: to_numpy gives a NumPy array the caller may write to, as the
        # reference's arrays are (a read-only view of a device buffer is not one).
        for dtype in ("float64", "float32", "int32", "complex64"):
            if _unheld(backend, declared, (dtype,)):
                continue
            for x in (
                np.arange(12, dtype=dtype).reshape(3, 4),
                np.zeros((0, 3), dtype),
                np.asfortranarray(np.arange(12, dtype=dtype).reshape(3, 4)),
            ):
                try:
                    native = backend.asarray(x)
                except (TypeError, NotImplementedError):
                    if dtype in optional:
                        continue  # the roundtrip check says it is not supported
                    raise
                back = backend.to_numpy(native)
                said = f"to_numpy(asarray(x)) of a {dtype} array of shape {x.shape}"
                if not isinstance(back, np.ndarray):
                    return f"{said} is {type(back).__qualname__}, not a numpy.ndarray"
                if not back.flags.writeable:
                    return f"{said} is read-only (flags.writeable is False)"
        return None

    yield check("to_numpy-writable", writable)

    def empty() -> str | None:
        _skip_unheld("float32")
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

    ps = prism_core.extending.plugins()
    target = ps.backend(backend) if isinstance(backend, str) else backend
    if not isinstance(target, prism_core.extending.Backend):
        raise TypeError(f"{backend!r} is not a prism_core.extending.Backend")
    name = target.name
    availability_check = f"{name}-availability"
    try:
        availability = target.availability()
    except Exception as exc:
        why = f"availability() raised {describe_exception(exc)}"
        return [_decided(availability_check, name, "availability", FAILED, why)]
    if not isinstance(availability, prism_core.extending.Availability):
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
    declared = _declared(target)
    checks.extend(_contract_checks(target, declared))
    for op in prism_core.all_ops().values():
        for variant in op.variants:
            if variant.backend == name:
                checks.extend(_variant_checks(target, variant, declared))
    return checks


def check_backend(backend: str | Backend) -> ConformanceReport:
    """Run the conformance suite on a backend (an instance, or the name of an installed one)."""
    import prism_core

    ps = prism_core.extending.plugins()
    target = ps.backend(backend) if isinstance(backend, str) else backend
    if not isinstance(target, prism_core.extending.Backend):
        raise TypeError(f"{backend!r} is not a prism_core.extending.Backend")
    report = ConformanceReport(target.name)
    report.results.extend(check.run() for check in conformance_checks(target))
    return report
