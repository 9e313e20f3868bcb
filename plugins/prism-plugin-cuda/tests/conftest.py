"""The tests load the plugin the way users get it: installed, through its entry point.

Every test runs with only this plugin loaded (``PRISM_PLUGINS=cuda`` with autoload off),
strictly (``PRISM_STRICT_PLUGINS=1``), with a private validation cache and no user search path,
and with Prism's plugin set and device library discovered afresh (before and after): so the
tests run the same on their own (``cd plugins/prism-plugin-cuda && pytest``) and inside the
repository's whole test run, whatever the tests before them did.

Shared here: :func:`numpy_as_cupy`, NumPy standing in for CuPy (what runs the plugin's own code
on a host without a GPU), and :func:`sample_call`, arguments for every op of the catalogue.
"""

from __future__ import annotations

import contextlib
import sys
import types
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

import prism_core
import prism_core.kernel.description.library as _library
import prism_core.kernel.plugins as _plugins
from prism_core.kernel.records.elementwise import ELEMENTWISE

#: The reason of every test that needs a GPU (followed by the backend's own reason).
NEEDS_GPU = "needs an NVIDIA GPU with CUDA"


def _forget_plugins() -> None:
    _plugins._current = None
    _library._default = None
    _plugins._warned.clear()  # each test sees the once-per-process plugin warnings afresh


@pytest.fixture(scope="session")
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A validation cache of the session's own: entries are keyed by what they depend on, so
    sharing one between tests changes no result, and spares validating every device file in
    each of them."""
    return str(tmp_path_factory.mktemp("prism-cache"))


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch: pytest.MonkeyPatch, _cache_dir: str) -> Iterator[None]:
    for name in ("PRISM_HARDWARE_PATH", "PRISM_BLOCK_PLUGINS", "PRISM_NO_CACHE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRISM_CACHE_DIR", _cache_dir)
    monkeypatch.setenv("PRISM_PLUGINS", "cuda")
    monkeypatch.setenv("PRISM_DISABLE_PLUGIN_AUTOLOAD", "1")
    monkeypatch.setenv("PRISM_STRICT_PLUGINS", "1")
    _forget_plugins()
    try:
        prism_core.extending.plugins()
    except prism_core.extending.PluginError as exc:
        _forget_plugins()
        pytest.skip(
            "install the plugin before testing it (pip install -e plugins/prism-plugin-cuda): "
            f"{exc}"
        )
    yield
    _forget_plugins()


@pytest.fixture
def library() -> prism_core.hardware.DeviceLibrary:
    """The device library users get: the shipped devices and this plugin's."""
    lib = prism_core.hardware.DeviceLibrary()
    assert not lib.problems, "\n".join(str(p) for p in lib.problems)
    return lib


@pytest.fixture
def cuda_backend() -> Any:
    """The backend instance dispatch uses (the one discovery created)."""
    from prism_plugin_cuda.backend import CudaBackend

    backend = prism_core.extending.plugins().backend("cuda")
    assert isinstance(backend, CudaBackend)
    return backend


# -- NumPy standing in for CuPy ---------------------------------------------------------------


class _NumpyAsCupy(types.ModuleType):
    """NumPy under CuPy's name, with what CuPy has besides NumPy's API: ``asnumpy``, a
    ``cuda.runtime`` seeing one device.  ``ndarray`` includes NumPy's scalars, which NumPy's
    reductions return where CuPy returns 0-d arrays."""

    def __init__(self) -> None:
        super().__init__("cupy")
        self.__version__ = f"{np.__version__} (NumPy standing in)"
        self.ndarray = (np.ndarray, np.generic)
        self.asnumpy = np.asarray
        self.cuda = types.SimpleNamespace(
            runtime=types.SimpleNamespace(
                getDeviceCount=lambda: 1,
                deviceSynchronize=lambda: None,
                runtimeGetVersion=lambda: 12080,
                driverGetVersion=lambda: 12080,
                getDeviceProperties=lambda i: {
                    "name": b"NumPy standing in",
                    "major": 9,
                    "minor": 0,
                    "totalGlobalMem": 1 << 30,
                },
            )
        )

    @staticmethod
    def unique_values(x: Any) -> Any:
        """CuPy's (``unique(x, equal_nan=False)``: sorted), where NumPy 2.3's are in no order."""
        return np.unique(x, equal_nan=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)


@pytest.fixture
def numpy_as_cupy(cuda_backend: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The dispatching backend running "CuPy", which is NumPy here (CuPy mirrors NumPy's API),
    and ``cupyx.errstate`` doing nothing: the plugin's own code runs, CuPy's does not."""
    cupy = _NumpyAsCupy()
    cupyx = types.ModuleType("cupyx")
    cupyx.errstate = lambda **kwargs: contextlib.nullcontext()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cupy", cupy)
    monkeypatch.setitem(sys.modules, "cupyx", cupyx)
    monkeypatch.setattr(cuda_backend, "_xp", cupy)
    monkeypatch.setattr(
        cuda_backend,
        "_availability",
        prism_core.extending.Availability(True, version=cupy.__version__),
    )
    return cuda_backend


# -- arguments for every op ---------------------------------------------------------------------

Call = tuple[tuple[Any, ...], dict[str, Any]]


def _sample_calls() -> dict[str, Call]:
    """One call of every op, on NumPy arrays large enough for the plugin's size threshold."""
    rng = np.random.default_rng(20261121)
    v = rng.standard_normal(4096)
    w = rng.standard_normal(4096)
    m = rng.standard_normal((64, 64))
    square = m + 68 * np.eye(64)
    spd = m @ m.T + 64 * np.eye(64)
    z = v + 1j * w
    return {
        "asarray": ((v,), {"dtype": "float32"}),
        "zeros": (((64, 64),), {"dtype": "int32"}),
        "ones": (((64, 64),), {}),
        "full": (((64, 64), 2.5), {"dtype": prism_core.float32}),
        "to_numpy": ((v,), {}),
        "from_dlpack": ((v,), {}),
        "requires_grad": ((v,), {}),
        "detach": ((v,), {}),
        "triu_indices": ((70,), {"k": 1, "m": 72}),
        "random.normal": (((64, 64), 1.0, 2.0), {"seed": 3, "dtype": "float32"}),
        "add": ((v, w), {}),
        "subtract": ((v, 2.0), {}),
        "multiply": ((m, v[:64]), {}),
        "divide": ((v, np.abs(w) + 1), {}),
        "power": ((np.abs(v) + 1, 0.5), {}),
        "square": ((v,), {}),
        "sqrt": ((np.abs(v),), {}),
        "exp": ((v,), {}),
        "log": ((np.abs(v) + 1,), {}),
        "abs": ((z,), {}),
        "real": ((z,), {}),
        "conj": ((z,), {}),
        "maximum": ((v, w), {}),
        "minimum": ((v, 0.0), {}),
        "where": ((v > 0, v, w), {}),
        "clip": ((v,), {"min": -0.5, "max": 0.5}),
        "sum": ((m,), {"axis": 0, "dtype": "float32"}),
        "mean": ((m,), {"axis": 1, "keepdims": True}),
        "std": ((m,), {"correction": 1}),
        "min": ((m,), {"axis": 0}),
        "max": ((m,), {}),
        "argmax": ((m,), {"axis": 1}),
        "argmin": ((m,), {"keepdims": True}),
        "cumulative_sum": ((m,), {"axis": 1, "include_initial": True}),
        "sort": ((m,), {"axis": 0, "descending": True}),
        "reshape": ((v, (64, 64)), {}),
        "transpose": ((m,), {}),
        "moveaxis": ((v.reshape(16, 16, 16), 0, -1), {}),
        "expand_dims": ((v,), {"axis": 1}),
        "stack": (([m, m.T],), {"axis": 1}),
        "concat": (([v, w],), {"axis": None}),
        "matmul": ((m, m), {}),
        "dot": ((m, v[:64]), {}),
        "einsum": (("ij,jk->ik", m, m), {}),
        "linalg.inv": ((square,), {}),
        "linalg.solve": ((square, v[:64]), {}),
        "linalg.svd": ((m,), {"full_matrices": False}),
        "linalg.eig": ((square,), {}),
        "linalg.eigh": ((spd,), {}),
        "linalg.qr": ((m,), {}),
        "linalg.cholesky": ((spd,), {"upper": True}),
        "linalg.norm": ((m, 1), {}),
        "linalg.vector_norm": ((m,), {"axis": 1, "ord": 3}),
        "linalg.matrix_norm": ((m,), {"ord": "nuc"}),
        "fft.fft": ((v,), {"norm": "ortho"}),
        "fft.ifft": ((z,), {}),
        "fft.rfft": ((v,), {"n": 4000}),
        "convolve": ((v, w[:64]), {"mode": "same"}),
        "cov": ((m,), {}),
        # The standard's other elementwise functions, in their domains.
        **{e.name: _elementwise_call(e, rng) for e in ELEMENTWISE},
    }


def _elementwise_call(e: Any, rng: Any) -> Call:
    """A call of a function of the elementwise table: floats in (0.1, 0.9) (``acosh``: plus
    one), small positive integers for the bitwise functions, bools for the logical ones."""
    if e.kinds in ("integer", "integer_or_boolean"):
        x, y = rng.integers(1, 8, 4096), rng.integers(1, 8, 4096)
    elif e.kinds == "boolean":
        x, y = rng.uniform(size=4096) > 0.5, rng.uniform(size=4096) > 0.5
    else:
        x, y = rng.uniform(0.1, 0.9, 4096), rng.uniform(0.1, 0.9, 4096)
        x = x + 1 if e.name == "acosh" else x
    return ((x,) if e.arity == 1 else (x, y)), {}


SAMPLE_CALLS = _sample_calls()


def _family_calls() -> dict[str, Call]:
    """The ops without a call above: each op's ``standard`` case of the conformance suite
    (large enough to pass the GPU's size check)."""
    from prism_core.kernel.records.families import RECORDS
    from prism_core.testing import input_cases

    calls: dict[str, Call] = {}
    for row in RECORDS:
        case = input_cases(row.name).get("standard")
        if case is not None:
            calls[row.name] = case
    return calls


SAMPLE_CALLS.update({op: call for op, call in _family_calls().items() if op not in SAMPLE_CALLS})


@pytest.fixture
def sample_call() -> Callable[[str], Call]:
    """``sample_call(op)``: ``(args, kwargs)`` of a call of ``op`` on NumPy arrays."""
    return lambda op: SAMPLE_CALLS[op]


def _move(backend: Any, op: Any, args: tuple[Any, ...]) -> list[Any]:
    """The arguments as dispatch passes them to a variant of ``backend``: every array argument
    the backend does not take as it is moved with ``to_device`` (item by item in sequences)."""

    def move(value: Any) -> Any:
        return value if backend.is_native(value) else backend.to_device(value)

    positions = (
        op.array_args
        if op.array_args is not None
        else tuple(i for i, a in enumerate(args) if hasattr(a, "dtype"))
    )
    moved = list(args)
    for i in positions:
        if i >= len(moved):
            continue
        if i in op.sequences:
            moved[i] = type(moved[i])(move(a) for a in moved[i])
        else:
            moved[i] = move(moved[i])
    return moved


@pytest.fixture
def run_cuda() -> Callable[..., Any]:
    """``run_cuda(op, *args, **kwargs)``: the ``cuda.OP`` variant called as dispatch calls it
    (arguments moved to the backend), without the dispatcher's choice (no GPU here to choose)."""

    def run(name: str, *args: Any, **kwargs: Any) -> Any:
        op = prism_core.get_op(name)
        variant = next(v for v in op.variants if v.name == f"cuda.{op.name}")
        backend = prism_core.extending.plugins().backend("cuda")
        return variant.resolve()(*_move(backend, op, args), **kwargs)

    return run


def reference(name: str, *args: Any, **kwargs: Any) -> Any:
    """The NumPy reference's result of op ``name``."""
    op = prism_core.get_op(name)
    variant = next(v for v in op.variants if v.reference)
    return variant.resolve()(*args, **kwargs)


def _close(expected: Any, actual: Any, what: str) -> None:
    expected, actual = np.asarray(expected), np.asarray(actual)
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, not {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, not {expected.shape}"
    single = expected.dtype in (np.float32, np.complex64)
    rtol = 1e-4 if single else 1e-9
    scale = float(np.max(np.abs(expected))) if expected.size else 1.0
    np.testing.assert_allclose(
        actual, expected, rtol=rtol, atol=rtol * max(scale, 1.0), err_msg=what
    )


def assert_agrees(name: str, args: tuple[Any, ...], expected: Any, actual: Any) -> None:
    """``actual`` (on the host) is ``expected`` (the NumPy reference's result of ``name`` on
    ``args``): values, dtypes and shapes, and the named tuples' types; decompositions, unique
    only up to signs and order, by what is unique."""
    if name in ("empty", "empty_like"):  # values not set: shape and dtype only
        e, got = np.asarray(expected), np.asarray(actual)
        assert (got.shape, got.dtype) == (e.shape, e.dtype), (got.shape, got.dtype)
        return
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), type(actual)
        fields = getattr(type(expected), "_fields", None)
        assert getattr(type(actual), "_fields", None) == fields, type(actual)
    a = args[0] if args else None
    if name == "linalg.svd":
        _close(expected.S, actual.S, "S")
        _close(a, (actual.U * actual.S) @ actual.Vh, "U @ diag(S) @ Vh")
    elif name == "linalg.eigh":
        _close(expected.eigenvalues, actual.eigenvalues, "eigenvalues")
        v = actual.eigenvectors
        _close(a @ v, v * actual.eigenvalues, "x @ v")
    elif name == "linalg.eig":
        w, v = actual
        _close(np.sort_complex(expected.eigenvalues), np.sort_complex(w), "eigenvalues")
        assert v.dtype == expected.eigenvectors.dtype, v.dtype
        _close(a @ v, v * w, "x @ v")
    elif name == "linalg.qr":
        q, r = actual
        _close(a, q @ r, "Q @ R")
        _close(np.abs(expected.R), np.abs(r), "|R| (the signs of the rows may differ)")
    elif isinstance(expected, tuple):
        for i, (e, got) in enumerate(zip(expected, actual, strict=True)):
            _close(e, got, f"result {i}")
    else:
        _close(expected, actual, name)


@pytest.fixture
def agrees() -> Callable[[str, tuple[Any, ...], Any, Any], None]:
    """:func:`assert_agrees`."""
    return assert_agrees


@pytest.fixture
def reference_of() -> Callable[..., Any]:
    """:func:`reference`."""
    return reference
