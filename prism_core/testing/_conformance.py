"""The checks of the conformance suite (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prism_core._knowledge.backend import Backend
    from prism_core._knowledge.variant import Variant

__all__ = ["CheckResult", "ConformanceReport", "check_backend", "standard_inputs"]

PASSED, FAILED, SKIPPED = "passed", "failed", "skipped"
#: Sizes large enough for the usual "worth a device transfer" thresholds of ``can_run``.
N1 = 4096
N2 = 64


@dataclass(frozen=True)
class CheckResult:
    """One check: its name, ``passed``/``failed``/``skipped``, and what was seen."""

    name: str
    status: str
    detail: str = ""

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
            if r.status != PASSED:
                lines.append(f"  {r.status}: {r.name}: {r.detail}")
        return "\n".join(lines)


# -- standard inputs ---------------------------------------------------------------------------


def standard_inputs(
    op: str, dtype: str = "float64"
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """NumPy arguments to call ``op`` with: ``[(args, kwargs), ...]``; ``[]`` when the suite has
    none for that op.  Arrays are large enough to pass the usual size thresholds and
    well-conditioned where it matters (solve, inv)."""
    import numpy as np

    rng = np.random.default_rng(20261121)
    dt = np.dtype(dtype)
    real_dt = (
        np.dtype("float32")
        if dt == np.dtype("complex64")
        else (np.dtype("float64") if dt.kind == "c" else dt)
    )

    def vec(n: int = N1, positive: bool = False) -> Any:
        x = rng.uniform(0.5, 2.0, n) if positive else rng.normal(size=n)
        return x.astype(dt)

    def mat(n: int = N2, positive: bool = False) -> Any:
        x = rng.uniform(0.5, 2.0, (n, n)) if positive else rng.normal(size=(n, n))
        return x.astype(dt)

    def well_conditioned() -> Any:
        return (rng.normal(size=(N2, N2)) + N2 * np.eye(N2)).astype(dt)

    x, y = vec(), vec()
    p, q = vec(positive=True), vec(positive=True)
    a, b = mat(), mat()
    sym = a + a.T
    table: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
        "asarray": [((x,), {})],
        "to_numpy": [((x,), {})],
        "zeros": [(((N2, N2),), {"dtype": dt})],
        "ones": [(((N2, N2),), {"dtype": dt})],
        "full": [(((N2, N2), 2.5), {"dtype": dt})],
        "add": [((x, y), {})],
        "subtract": [((x, y), {})],
        "multiply": [((x, y), {})],
        "divide": [((x, q), {})],
        "power": [((p, rng.uniform(0.5, 2.0, N1).astype(real_dt)), {})],
        "square": [((x,), {})],
        "sqrt": [((p,), {})],
        "exp": [((x,), {})],
        "log": [((p,), {})],
        "abs": [((x,), {})],
        "real": [((x,), {})],
        "conj": [((x,), {})],
        "sum": [((a,), {}), ((a,), {"axis": 0})],
        "mean": [((a,), {}), ((a,), {"axis": 1})],
        "std": [((a,), {})],
        "min": [((a,), {})],
        "max": [((a,), {})],
        "reshape": [((x, (N2, N2)), {})],
        "transpose": [((a,), {})],
        "moveaxis": [((a.reshape(8, 8, N2), 0, -1), {})],
        "expand_dims": [((x, 0), {})],
        "matmul": [((a, b), {})],
        "dot": [((a, b), {})],
        "einsum": [(("ij,jk->ik", a, b), {})],
        "linalg.inv": [((well_conditioned(),), {})],
        "linalg.solve": [((well_conditioned(), mat()), {})],
        "linalg.svd": [((a,), {})],
        "linalg.eig": [((well_conditioned(),), {})],
        "linalg.eigh": [((sym,), {})],
        "fft.fft": [((x,), {})],
        "fft.ifft": [((x,), {})],
        "fft.rfft": [((x.real.astype(real_dt),), {})],
        "convolve": [((x, vec(64)), {})],
    }
    return table.get(op, [])


# -- comparing results ---------------------------------------------------------------------------


def _to_numpy(backend: Backend, value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_numpy(backend, v) for v in value)
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

    # Results that are defined only up to order or sign are compared by what is unique.
    if op == "linalg.svd":
        u, s, vh = actual
        problem = _close(expected[1], s, dtype)
        if problem:
            return f"singular values: {problem}"
        rebuilt = (u[..., :, : s.shape[-1]] * s[..., None, :]) @ vh[..., : s.shape[-1], :]
        return _close(args[0], rebuilt, dtype)
    if op in ("linalg.eig", "linalg.eigh"):
        values, vectors = actual
        problem = _close(np.sort_complex(expected[0]), np.sort_complex(values), dtype)
        if problem:
            return f"eigenvalues: {problem}"
        return _close(args[0] @ vectors, vectors * values[..., None, :], dtype)
    if isinstance(expected, tuple):
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            problem = _close(e, a, dtype)
            if problem:
                return f"result {i}: {problem}"
        return None
    return _close(expected, actual, dtype)


# -- the checks ------------------------------------------------------------------------------


def _run(name: str, check: Callable[[], str | None]) -> CheckResult:
    try:
        problem = check()
    except _Skip as skip:
        return CheckResult(name, SKIPPED, str(skip))
    except Exception as exc:
        return CheckResult(name, FAILED, f"raised {type(exc).__name__}: {exc}")
    return CheckResult(name, FAILED, problem) if problem else CheckResult(name, PASSED)


class _Skip(Exception):
    pass


def _contract_checks(backend: Backend) -> Iterator[CheckResult]:
    import numpy as np

    from prism_core._description.requirements import Requirement

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

    yield _run("identity (name, priority, drives)", identity)

    rng = np.random.default_rng(7)
    for dtype in ("float64", "float32", "int32", "complex64"):
        data = rng.normal(size=(3, 4)).astype(dtype)

        def round_trip(data: Any = data, dtype: str = dtype) -> str | None:
            try:
                native = backend.asarray(data)
            except (TypeError, NotImplementedError) as exc:
                if dtype in ("int32", "complex64"):
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

        yield _run(f"asarray/to_numpy round trip [{dtype}]", round_trip)

    def edge_shapes() -> str | None:
        for x in (
            np.float64(3.5),
            np.zeros((0,)),
            np.zeros((0, 3)),
            np.arange(12.0).reshape(3, 4)[:, ::2],
        ):
            back = np.asarray(backend.to_numpy(backend.asarray(x)))
            if back.shape != np.shape(x) or not np.array_equal(back, x):
                return f"a {np.shape(x)} input came back as {back.shape} or with other values"
        return None

    yield _run("asarray/to_numpy: 0-d, empty and strided inputs", edge_shapes)

    def dlpack() -> str | None:
        x = np.arange(6.0).reshape(2, 3)
        back = np.asarray(backend.to_numpy(backend.from_dlpack(x)))
        return None if np.array_equal(back, x) else "to_numpy(from_dlpack(x)) differs from x"

    yield _run("from_dlpack of a NumPy array", dlpack)

    def empty() -> str | None:
        try:
            out = backend.empty((2, 5), np.float32)
        except NotImplementedError as exc:
            raise _Skip(str(exc)) from None
        shape = np.shape(backend.to_numpy(out))
        return None if shape == (2, 5) else f"empty((2, 5)) has shape {shape}"

    yield _run("empty", empty)

    yield _run("synchronize", lambda: backend.synchronize())


def _variant_checks(backend: Backend, variant: Variant) -> Iterator[CheckResult]:
    from prism_core._dispatch.ops import get_op

    op = get_op(variant.op)
    reference = next((v for v in op.variants if v.reference and v.backend == "numpy"), None)
    dtypes = ("float64", "float32")
    if variant.op in ("fft.fft", "fft.ifft"):
        dtypes = ("complex128", "complex64")
    if variant.op == "random.normal":
        yield CheckResult(f"{variant.name}", SKIPPED, "random numbers differ between backends")
        return
    for dtype in dtypes:
        cases = standard_inputs(variant.op, dtype)
        if not cases:
            yield CheckResult(
                f"{variant.name} [{dtype}]", SKIPPED, f"no standard inputs for {variant.op}"
            )
            continue
        if reference is None:
            yield CheckResult(f"{variant.name} [{dtype}]", SKIPPED, "the op has no NumPy reference")
            continue
        for i, (args, kwargs) in enumerate(cases):
            label = f"{variant.name} [{dtype}]" + (f" case {i + 1}" if len(cases) > 1 else "")

            def check(
                args: tuple[Any, ...] = args, kwargs: dict[str, Any] = kwargs, dtype: str = dtype
            ) -> str | None:
                positions = (
                    op.array_args
                    if op.array_args is not None
                    else tuple(k for k, a in enumerate(args) if hasattr(a, "dtype"))
                )
                native = list(args)
                for k in positions:
                    if k < len(native):
                        native[k] = backend.asarray(native[k])
                if variant.can_run is not None:
                    verdict = variant.can_run(*native, **kwargs)
                    if verdict is not True:
                        raise _Skip(f"can_run declined the standard inputs: {verdict}")
                expected = reference.resolve()(*args, **kwargs)
                actual = _to_numpy(backend, variant.resolve()(*native, **kwargs))
                backend.synchronize()
                return _compare(variant.op, expected, actual, args, dtype)

            yield _run(label, check)


def check_backend(backend: str | Backend) -> ConformanceReport:
    """Run the conformance suite on a backend (an instance, or the name of an installed one)."""
    from prism_core._dispatch.ops import all_ops
    from prism_core._knowledge.backend import Availability, Backend
    from prism_core._knowledge.plugins import plugins

    ps = plugins()
    target = ps.backend(backend) if isinstance(backend, str) else backend
    if not isinstance(target, Backend):
        raise TypeError(f"{backend!r} is not a prism_core.Backend")
    report = ConformanceReport(target.name)
    try:
        availability = target.availability()
    except Exception as exc:
        report.results.append(
            CheckResult(
                "availability", FAILED, f"availability() raised {type(exc).__name__}: {exc}"
            )
        )
        return report
    if not isinstance(availability, Availability):
        report.results.append(
            CheckResult("availability", FAILED, f"availability() returned {availability!r}")
        )
        return report
    if not availability:
        if not availability.reason:
            report.results.append(
                CheckResult("availability", FAILED, "unavailable without a reason")
            )
            return report
        report.results.append(CheckResult("availability", PASSED))
        why = f"backend unavailable: {availability.reason}"
        report.results.append(CheckResult("array contract and variants", SKIPPED, why))
        return report
    report.results.append(CheckResult("availability", PASSED))
    report.results.extend(_contract_checks(target))
    for op in all_ops().values():
        for variant in op.variants:
            if variant.backend == target.name:
                report.results.extend(_variant_checks(target, variant))
    return report
