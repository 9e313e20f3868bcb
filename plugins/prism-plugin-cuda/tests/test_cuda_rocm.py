"""CuPy's ROCm build: the ``cuda`` backend drives AMD GPUs exactly when the installed CuPy is a
ROCm build (``cupy-rocm-7-0``, AMD's ``amd-cupy``), NVIDIA GPUs when it is a CUDA build
(``cupy-cuda12x``), and says which build is installed and which one the GPU needs otherwise.

The build is a simulation here: a ROCm wheel of CuPy cannot be installed on this host (it needs
ROCm's libraries, and it would replace the CUDA build's files, since both install the package
``cupy``), so the one function that reads the installed distributions' names
(``prism_plugin_cuda.build.installed_distributions``) is replaced by a list of real distribution
names (PyPI's, CuPy's installation guide).  The GPUs are simulated from their descriptions
(``prism_core.device(name, simulate=True)``): dispatch decides as it would on the hardware,
and the NumPy reference computes.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from prism_plugin_cuda import build, plugin
from prism_plugin_cuda.backend import CudaBackend
from prism_plugin_cuda.build import CupyBuild, cupy_build

import prism_core
from prism_core import ArraySpec

BIG = ArraySpec((4096, 4096), "float32")
ROCM = ("cupy-rocm-7-0", "fastrlock", "numpy")
CUDA = ("cupy-cuda12x", "fastrlock", "numpy")


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Callable[..., CudaBackend]:
    """``installed(*names)``: the distributions installed here are ``names`` (a simulation:
    see the module's docstring); the plugins are discovered again, and the backend that
    discovery made (the one dispatch uses) is returned."""

    def simulate(*names: str) -> CudaBackend:
        monkeypatch.setattr(build, "installed_distributions", lambda: names)
        prism_core.extending.reload_plugins()
        backend = prism_core.extending.plugins().backend("cuda")
        assert isinstance(backend, CudaBackend)
        return backend

    return simulate


def _candidate(decision: prism_core.Decision, variant: str) -> prism_core.Candidate:
    return next(c for c in decision.candidates if c.variant == variant)


@pytest.mark.parametrize(
    ("names", "platform", "vendor"),
    [
        (("cupy-cuda12x",), "cuda", "nvidia"),
        (("cupy-cuda13x",), "cuda", "nvidia"),
        (("cupy-cuda11x",), "cuda", "nvidia"),
        (("cupy-rocm-7-0",), "rocm", "amd"),
        (("cupy-rocm-5-0",), "rocm", "amd"),
        (("amd-cupy",), "rocm", "amd"),
        (("cupy",), "cuda", "nvidia"),  # built from source: CUDA unless told otherwise
        ((), None, "nvidia"),  # no CuPy: the plugin's own dependency is the CUDA build
        (("cupy-cuda12x", "cupy-rocm-7-0"), None, "nvidia"),  # both: neither is trusted
    ],
)
def test_the_build_from_the_distribution_names(
    names: tuple[str, ...], platform: str | None, vendor: str
) -> None:
    found = cupy_build((*names, "numpy", "cupy-xarray", "fastrlock"))
    assert found == CupyBuild(tuple(sorted(names)) if len(names) > 1 else names, platform)
    assert found.vendor == vendor
    assert dict(found.requires) == {"vendor": vendor, "kind": "gpu"}


def test_the_names_are_read_from_this_environment() -> None:
    """The real reading (no simulation): normalised names of the installed distributions
    named like CuPy's, as importlib.metadata names them (none here: no CuPy is installed)."""
    import importlib.metadata
    import re

    names = build.installed_distributions()
    every = {
        re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower()
        for d in importlib.metadata.distributions()
    }
    assert names == tuple(sorted(n for n in every if n.startswith(("cupy", "amd-cupy"))))
    assert prism_core.backend_kit.installed_distributions() == tuple(sorted(every))


def test_a_rocm_build_drives_the_mi300x(installed: Callable[..., CudaBackend]) -> None:
    """ROCm build (simulated), MI300X (simulated from its description): explain picks the CuPy
    variant on the AMD GPU; the tensor-core variant stays NVIDIA's."""
    backend = installed(*ROCM)
    assert dict(backend.drives) == {"vendor": "amd", "kind": "gpu"}
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", BIG, BIG)
    assert decision.chosen == "cuda.matmul", str(decision)
    assert (decision.chosen_backend, decision.chosen_device) == ("cuda", "amd.mi300x")
    assert decision.executed == "numpy.matmul"  # simulated: the reference computes
    assert "amd.mi300x: vendor is 'amd', required 'nvidia'" in (
        _candidate(decision, "cuda.tensor_core_matmul").reasons
    )
    variants = {v.name: v for v in prism_core.extending.plugins().records["cuda"].variants}
    assert variants["cuda.add"].requirement == prism_core.hardware.Requirement(
        {"vendor": "amd", "kind": "gpu"}
    )


@pytest.mark.parametrize("op", ["add", "linalg.svd", "fft.fft", "zeros"])
def test_a_rocm_build_takes_every_kind_of_op_on_amd(
    installed: Callable[..., CudaBackend], op: str
) -> None:
    installed(*ROCM)
    args = {"zeros": ((64, 64),), "fft.fft": (ArraySpec((8192,), "complex64"),)}.get(
        op, (ArraySpec((128, 128), "float64"),) * (2 if op == "add" else 1)
    )
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain(op, *args)
    assert decision.chosen == f"cuda.{op}", str(decision)


def test_a_cuda_build_refuses_the_mi300x_saying_why(installed: Callable[..., CudaBackend]) -> None:
    installed(*CUDA)
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", BIG, BIG)
    assert decision.chosen is None
    for name in ("cuda.matmul", "cuda.tensor_core_matmul"):
        assert _candidate(decision, name).reasons == (
            "'cuda' does not drive amd.mi300x (CuPy here is cupy-cuda12x, a CUDA build; an AMD "
            "GPU needs cupy-rocm-7-0)",
        )


def test_a_rocm_build_refuses_nvidia_gpus_saying_why(installed: Callable[..., CudaBackend]) -> None:
    installed(*ROCM)
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", BIG, BIG)
    assert decision.chosen is None
    assert _candidate(decision, "cuda.matmul").reasons == (
        "'cuda' does not drive nvidia.h100-sxm (CuPy here is cupy-rocm-7-0, a ROCm build; an "
        "NVIDIA GPU needs cupy-cuda12x)",
    )


def test_without_cupy_nvidia_stays_the_default(installed: Callable[..., CudaBackend]) -> None:
    """No CuPy installed (as on this host): a simulated NVIDIA GPU decides as before, an AMD GPU
    is refused naming the wheel it needs."""
    installed("numpy")
    with prism_core.device("nvidia.l4", simulate=True):
        assert prism_core.explain("matmul", BIG, BIG).chosen == "cuda.matmul"
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", BIG, BIG)
    assert _candidate(decision, "cuda.matmul").reasons == (
        "'cuda' does not drive amd.mi300x (no CuPy is installed; an AMD GPU needs cupy-rocm-7-0)",
    )


def test_two_builds_at_once_drive_nothing(installed: Callable[..., CudaBackend]) -> None:
    installed("cupy-cuda12x", "cupy-rocm-7-0")
    with prism_core.device("nvidia.l4", simulate=True):
        decision = prism_core.explain("matmul", BIG, BIG)
    (reason,) = _candidate(decision, "cuda.matmul").reasons
    assert "several CuPy distributions are installed (cupy-cuda12x, cupy-rocm-7-0)" in reason
    assert "uninstall all but one (cupy-cuda12x for an NVIDIA GPU)" in reason


def test_to_device_names_the_gpus_of_the_build(installed: Callable[..., CudaBackend]) -> None:
    backend = installed(*ROCM)
    with pytest.raises(ValueError, match=r"places arrays on AMD GPUs; device 'nvidia\.l4'"):
        backend.to_device([1.0], prism_core.hardware.get_device("nvidia.l4"))


@pytest.mark.timeout(60)
def test_detection_follows_the_build(
    installed: Callable[..., CudaBackend], library: prism_core.hardware.DeviceLibrary
) -> None:
    """A ROCm build asks ``prism_core.amd_smi`` (or says this prism-core lacks it), a CUDA build
    ``nvidia-smi``; on this host neither finds a GPU, and each says why."""
    installed(*ROCM)
    rocm = plugin.prism_detect_devices(library)
    assert rocm.devices == () and rocm.reason
    assert "nvidia-smi" not in rocm.reason, rocm.reason
    installed(*CUDA)
    cuda = plugin.prism_detect_devices(library)
    assert cuda.devices == () and "nvidia-smi" in cuda.reason, cuda.reason
