"""The ``cuda`` backend: identity, its reasons where it cannot run, and what it does without
importing CuPy.

The reasons are tested with stand-in ``cupy`` modules put in ``sys.modules`` (the real one, if
any, is put back afterwards), and once with the real CuPy installed in a throwaway virtual
environment on this host, which has no GPU.  The array methods on a real GPU are in
``test_cuda_gpu.py``.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from prism_plugin_cuda import ops
from prism_plugin_cuda.backend import NOT_INSTALLED, CudaBackend, CudaUnavailableError

import prism_core

INSUFFICIENT_DRIVER = (
    "cudaErrorInsufficientDriver: CUDA driver version is insufficient for CUDA runtime version"
)
PLUGIN = Path(__file__).resolve().parents[1]
REPO = PLUGIN.parents[1]
#: Guards against a hung install or interpreter, not performance expectations: the whole of
#: the real-CuPy test (a virtual environment, a 140 MB install, a probe) gets this long, and
#: skips, saying which step ran out, when a busy machine or a slow index takes longer.
INSTALL_BUDGET_S = 720


# -- stand-ins for CuPy -----------------------------------------------------------------------


def fake_cupy(version: str, *, error: Exception | None = None, count: int = 1) -> types.ModuleType:
    """A ``cupy`` whose runtime raises ``error`` or counts ``count`` devices."""

    def get_device_count() -> int:
        if error is not None:
            raise error
        return count

    cupy = types.ModuleType("cupy")
    cupy.__version__ = version  # type: ignore[attr-defined]
    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    cupy.cuda = types.SimpleNamespace(runtime=runtime)  # type: ignore[attr-defined]
    return cupy


@pytest.fixture
def cupy_is(monkeypatch: pytest.MonkeyPatch) -> Callable[[types.ModuleType | None], None]:
    """Set what ``import cupy`` gives: a module, or ``None`` (not installed: ImportError)."""

    def install(module: types.ModuleType | None) -> None:
        monkeypatch.setitem(sys.modules, "cupy", module)

    return install


#: An object whose type comes from the ``cupy`` package, as ``cupy.ndarray``'s does.
CupyLike = type("ndarray", (), {"__module__": "cupy"})
#: A type of CuPy's sister package (sparse matrices), which is no CuPy array.
CupyxLike = type("csr_matrix", (), {"__module__": "cupyx.scipy.sparse._csr"})


# -- identity ---------------------------------------------------------------------------------


def test_backend_identity(library: prism_core.hardware.DeviceLibrary) -> None:
    backend = prism_core.extending.plugins().backend("cuda")
    assert isinstance(backend, CudaBackend)
    assert isinstance(backend, prism_core.extending.Backend)
    assert (backend.name, backend.aliases, backend.priority) == ("cuda", ("cupy",), 10)
    assert dict(backend.drives) == {"vendor": "nvidia", "kind": "gpu"}
    assert backend.description == "NVIDIA GPUs through CuPy (AMD GPUs with a ROCm build of CuPy)"
    assert backend.can_drive(library.get("nvidia.h100-sxm"))
    assert backend.can_drive(library.get("nvidia.rtx-4090"))
    assert not backend.can_drive(library.get("amd.mi300x"))
    assert not backend.can_drive(library.get("intel.sapphirerapids"))


def test_the_alias_cupy_names_the_backend() -> None:
    ps = prism_core.extending.plugins()
    assert ps.backend("cupy").name == "cuda"
    assert ps.backend("cupy") is ps.backend("cuda")
    assert ps.backend_name("cupy") == "cuda"
    assert set(ps.records["cuda"].backends) == {"cuda"}  # an alias is no second backend


def test_creating_the_backend_imports_nothing(cupy_is: Callable[..., None]) -> None:
    cupy_is(None)  # an import of CuPy would fail
    backend = CudaBackend()
    assert backend._availability is None
    assert backend._xp is None


# -- reasons ----------------------------------------------------------------------------------


def test_cupy_not_installed(cupy_is: Callable[..., None]) -> None:
    cupy_is(None)
    state = CudaBackend().availability()
    assert isinstance(state, prism_core.extending.Availability)
    assert not state
    assert state.reason == NOT_INSTALLED == "cupy is not installed (pip install cupy-cuda12x)"
    assert state.version is None


def test_cupy_without_a_driver(cupy_is: Callable[..., None]) -> None:
    """What CuPy says on a host without the NVIDIA driver (as on this one: see
    test_real_cupy_installed_without_a_gpu)."""
    cupy_is(fake_cupy("14.2.0", error=RuntimeError(INSUFFICIENT_DRIVER)))
    state = CudaBackend().availability()
    assert not state
    assert state.reason == (
        f"cupy 14.2.0 is installed but CUDA is not available: {INSUFFICIENT_DRIVER}"
    )


def test_cupy_without_a_device(cupy_is: Callable[..., None]) -> None:
    cupy_is(fake_cupy("13.3.0", count=0))
    state = CudaBackend().availability()
    assert not state
    assert state.reason == "cupy 13.3.0 is installed but found no CUDA device"


def test_cupy_with_a_device(cupy_is: Callable[..., None]) -> None:
    cupy = fake_cupy("14.2.0", count=2)
    cupy_is(cupy)
    backend = CudaBackend()
    state = backend.availability()
    assert state and state.version == "14.2.0" and state.reason == ""
    assert backend._xp is cupy
    assert backend.availability() is state  # probed once


def test_a_cupy_older_than_14_2(cupy_is: Callable[..., None]) -> None:
    """CuPy 14.1 lacks functions of the standard the backend calls (``cumulative_sum``)."""
    cupy_is(fake_cupy("14.1.1"))
    backend = CudaBackend()
    state = backend.availability()
    assert not state and state.version == "14.1.1"
    assert state.reason == (
        "cupy 14.1.1 is installed; the cuda backend needs cupy>=14.2 (pip install -U cupy-cuda12x)"
    )
    assert backend._xp is None
    with pytest.raises(CudaUnavailableError, match=r"needs cupy>=14\.2"):
        backend.asarray([1.0])


def test_a_cupy_that_breaks_on_import(
    cupy_is: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "cupy"
    package.mkdir()
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            raise ImportError(
                "CuPy failed to load libcublas.so.12: OSError: libcublas.so.12: cannot open "
                "shared object file: No such file or directory"
            )
            """
        )
    )
    cupy_is(None)
    monkeypatch.delitem(sys.modules, "cupy")
    monkeypatch.syspath_prepend(str(tmp_path))
    state = CudaBackend().availability()
    assert not state
    assert state.reason == (
        "cupy cannot be imported: ImportError: CuPy failed to load libcublas.so.12: OSError: "
        "libcublas.so.12: cannot open shared object file: No such file or directory"
    )
    assert "cupy" not in sys.modules


def test_array_methods_say_why_they_cannot_run(cupy_is: Callable[..., None]) -> None:
    cupy_is(None)
    backend = CudaBackend()
    calls: list[Callable[[], Any]] = [
        lambda: backend.asarray([1.0]),
        lambda: backend.to_numpy(np.zeros(1)),
        lambda: backend.from_dlpack(np.zeros(1)),
        lambda: backend.to_device(np.zeros(1)),
        lambda: backend.empty((2,), "float32"),
        backend.synchronize,
    ]
    for call in calls:
        with pytest.raises(CudaUnavailableError, match=r"cupy is not installed \(pip install"):
            call()
    assert backend.capabilities() == {"available": False, "reason": NOT_INSTALLED}


def test_availability_on_this_host() -> None:
    """Whatever this host has, the backend answers without raising, with a reason when not."""
    state = CudaBackend().availability()
    if state:
        assert state.version
    elif importlib.util.find_spec("cupy") is None:
        assert state.reason == NOT_INSTALLED
    else:
        assert state.reason.startswith("cupy "), state.reason


@pytest.mark.slow
@pytest.mark.timeout(INSTALL_BUDGET_S + 60)
def test_real_cupy_installed_without_a_gpu(tmp_path: Path) -> None:
    """The real CuPy (``pip install cupy-cuda12x``, about 140 MB) in a throwaway environment:
    where there is no NVIDIA driver, the backend's reason is CUDA's own message.  Also checks,
    without a GPU, every CuPy function the plugin names: the function of each op (CuPy's of
    the standard's name, or the override) and each ``cupy.X`` / ``cupyx.X`` attribute
    ``prism_plugin_cuda/ops.py`` uses exists in that CuPy."""
    if importlib.util.find_spec("cupy") is not None:
        pytest.skip("CuPy is installed here: test_availability_on_this_host covers its reason")
    deadline = time.monotonic() + INSTALL_BUDGET_S

    def run(step: str, argv: list[str], **options: Any) -> subprocess.CompletedProcess[str]:
        left = deadline - time.monotonic()
        try:
            return subprocess.run(
                argv, capture_output=True, text=True, timeout=max(left, 1), check=False, **options
            )
        except subprocess.TimeoutExpired:
            pytest.skip(f"{step} did not finish within this test's {INSTALL_BUDGET_S} s")

    venv = tmp_path / "venv"
    made = run("python -m venv", [sys.executable, "-m", "venv", str(venv)])
    if made.returncode != 0:
        pytest.skip(f"cannot create a virtual environment with `python -m venv`: {made.stderr}")
    python = venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    installed = run(
        "pip install cupy-cuda12x",
        [str(python), "-m", "pip", "install", "-q", "cupy-cuda12x>=14.2"],
    )
    if installed.returncode != 0:
        tail = (installed.stderr or installed.stdout).strip().splitlines()[-1:]
        pytest.skip(f"cannot install cupy-cuda12x here (no package index?): {tail}")
    probe = textwrap.dedent(
        """
        import json, sys
        from prism_plugin_cuda.backend import CudaBackend
        from prism_plugin_cuda import ops
        import cupy, cupyx

        def has(module, dotted):
            for part in dotted.split("."):
                if not hasattr(module, part):
                    return False
                module = getattr(module, part)
            return True

        state = CudaBackend().availability()
        names = json.loads(sys.argv[1])
        backend = CudaBackend()
        backend._xp = cupy  # no GPU: the functions are made, not called
        unresolved = []
        for v in backend.variants():
            try:
                backend.function(v.op)
            except Exception as exc:
                unresolved.append(f"{v.op}: {exc}")
        print(json.dumps({
            "available": state.available,
            "reason": state.reason,
            "version": cupy.__version__,
            "ndarray_module": cupy.ndarray.__module__,
            "unresolved": unresolved,
            "missing": sorted(n for n in names if not has(cupy if n.startswith("cupy.")
                              else cupyx, n.partition(".")[2])),
        }))
        """
    )
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), str(PLUGIN / "src")])
    proc = run(
        "the probe of the installed CuPy",
        [str(python), "-c", probe, json.dumps(sorted(_cupy_names_in_ops()))],
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found = json.loads(proc.stdout)
    if found["available"]:
        pytest.skip("this host has a GPU after all: test_cuda_gpu.py runs the backend on it")
    assert found["reason"].startswith(f"cupy {found['version']} is installed but "), found
    assert "cuda" in found["reason"].lower(), found["reason"]
    assert found["ndarray_module"] == "cupy"  # what CudaBackend.owns reads
    assert found["unresolved"] == []
    assert found["missing"] == []


def _cupy_names_in_ops() -> set[str]:
    """Every ``cupy.a.b`` and ``cupyx.a`` attribute chain the source of ``ops.py`` uses."""
    tree = ast.parse(Path(ops.__file__).read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            parts = []
            inner: ast.expr = node
            while isinstance(inner, ast.Attribute):
                parts.append(inner.attr)
                inner = inner.value
            if isinstance(inner, ast.Name) and inner.id in ("cupy", "cupyx"):
                names.add(".".join([inner.id, *reversed(parts)]))
    # Only the longest chains matter (cupy.linalg.norm covers cupy.linalg); array attributes
    # read off CuPy's results (.ndim, .dtype) are not module attributes and not listed here.
    return {n for n in names if not any(m.startswith(n + ".") for m in names)}


# -- without importing CuPy -------------------------------------------------------------------


def test_owns_reads_the_type_only(cupy_is: Callable[..., None]) -> None:
    cupy_is(None)  # an import of CuPy would fail
    backend = CudaBackend()
    assert backend.owns(CupyLike())
    assert not backend.owns(CupyxLike())
    assert not backend.owns(np.ones(3))
    assert not backend.owns(np.float64(1.0))
    assert not backend.owns(1.5)
    assert not backend.owns([1.0])


def test_is_native_before_cupy_is_imported(cupy_is: Callable[..., None]) -> None:
    cupy_is(None)
    backend = CudaBackend()  # not probed: nothing imported
    assert backend.is_native(1.5) and backend.is_native(3) and backend.is_native(True)
    assert backend.is_native(1j)
    assert backend.is_native(CupyLike())
    assert not backend.is_native(np.ones(3))
    assert not backend.is_native([1.0, 2.0])
    assert backend._xp is None


def test_is_native_after_the_probe(cupy_is: Callable[..., None]) -> None:
    cupy = fake_cupy("14.2.0")
    cupy.ndarray = CupyLike  # type: ignore[attr-defined]
    cupy_is(cupy)
    backend = CudaBackend()
    assert backend.availability()
    assert backend.is_native(CupyLike())
    assert not backend.is_native(CupyxLike())
    assert not backend.is_native(np.ones(3))
    assert backend.is_native(2.0)


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("float32", "float32"),
        ("fp32", "float32"),
        ("f4", "float32"),
        (prism_core.complex64, "complex64"),
        (prism_core.bool_, "bool"),
        (np.dtype("int16"), "int16"),
        (np.float64, "float64"),
        (int, "int64"),
    ],
)
def test_native_dtype(numpy_as_cupy: CudaBackend, given: Any, expected: str) -> None:
    assert numpy_as_cupy.native_dtype(given) == np.dtype(expected)


def test_native_dtype_refuses_what_cupy_has_not(numpy_as_cupy: CudaBackend) -> None:
    assert numpy_as_cupy.native_dtype(None) is None
    with pytest.raises(TypeError, match="no bfloat16"):
        numpy_as_cupy.native_dtype(prism_core.bfloat16)
    with pytest.raises(TypeError, match="no bfloat16"):
        numpy_as_cupy.native_dtype("bf16")
    with pytest.raises(TypeError):
        numpy_as_cupy.native_dtype("float33")


def test_to_device_refuses_a_device_it_does_not_drive(
    library: prism_core.hardware.DeviceLibrary,
) -> None:
    backend = CudaBackend()
    with pytest.raises(
        ValueError, match=r"^to_device: backend 'cuda' places arrays on NVIDIA"
    ) as e:
        backend.to_device(np.ones(3), library.get("amd.mi300x"))
    assert "'amd.mi300x' is not one (" in str(e.value)


# -- with NumPy standing in for CuPy ----------------------------------------------------------


def test_array_methods_on_the_stand_in(
    numpy_as_cupy: CudaBackend, library: prism_core.hardware.DeviceLibrary
) -> None:
    backend = numpy_as_cupy
    data = [[1, 2], [3, 4]]
    array = backend.asarray(data, dtype="fp32")
    assert array.dtype == np.float32
    np.testing.assert_array_equal(backend.to_numpy(array), np.array(data, dtype=np.float32))
    host = np.arange(6.0)
    np.testing.assert_array_equal(backend.from_dlpack(host), host)
    np.testing.assert_array_equal(backend.from_dlpack([1.0, 2.0]), [1.0, 2.0])  # no DLPack
    np.testing.assert_array_equal(backend.to_device(host, library.get("nvidia.l4")), host)
    assert backend.empty((2, 3), prism_core.int16).dtype == np.int16
    backend.synchronize()


def test_capabilities(numpy_as_cupy: CudaBackend) -> None:
    caps = numpy_as_cupy.capabilities()
    assert caps["framework"] == "cupy"
    assert caps["version"] == numpy_as_cupy.availability().version
    assert (caps["cuda_runtime"], caps["cuda_driver"]) == (12080, 12080)
    assert caps["devices"] == [
        {
            "index": 0,
            "name": "NumPy standing in",
            "compute_capability": "9.0",
            "memory_bytes": 1 << 30,
        }
    ]
    json.dumps(caps)  # what prism doctor shows
