"""JAX's GPU is the GPU of the plugin installed beside it: NVIDIA's with ``jax-cuda12-plugin``,
AMD's with ``jax-rocm7-plugin`` (or ``jax-rocm60-plugin``); ``explain`` says which plugin is
installed and which one a GPU of the other vendor needs.

The builds are a simulation here: JAX's GPU plugins cannot be installed on this host (they need
CUDA's or ROCm's libraries), so the one function that reads the installed distributions' names
(``prism_plugin_jax.build.installed_distributions``) is replaced by a list of real
distribution names (PyPI's, and AMD's "Install JAX for ROCm").  The GPUs are simulated from
their descriptions (``prism_core.device(name, simulate=True)``): dispatch decides as it would
on the hardware, and the NumPy reference computes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from prism_plugin_jax import build
from prism_plugin_jax import plugin as jax_plugin
from prism_plugin_jax.build import JaxBuild, jax_build

import prism_core
from prism_core import ArraySpec, amd_smi

A = ArraySpec((512, 512), "float32")
CUDA = ("jax", "jaxlib", "jax-cuda12-plugin", "jax-cuda12-pjrt")
ROCM = ("jax", "jaxlib", "jax-rocm7-plugin", "jax-rocm7-pjrt")


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``installed(*names)``: the distributions installed here are ``names`` (a simulation:
    see the module's docstring), and the plugins are discovered again."""

    def simulate(*names: str) -> None:
        monkeypatch.setattr(build, "installed_distributions", lambda: names)
        # The backend is the plugin's one instance: its build is read again.
        monkeypatch.setattr(jax_plugin.BACKEND, "_build", None)
        monkeypatch.setattr(jax_plugin.BACKEND, "_targets", None)
        jax_plugin.gpu_unavailable.cache_clear()
        prism_core.extending.reload_plugins()

    yield simulate
    jax_plugin.gpu_unavailable.cache_clear()


def _reasons(decision: prism_core.Decision) -> tuple[str, ...]:
    return next(c for c in decision.candidates if c.variant == "jax.gpu.matmul").reasons


@pytest.mark.parametrize(
    ("names", "vendor"),
    [
        (CUDA, "nvidia"),
        (("jax-cuda13-plugin", "jax-cuda13-pjrt"), "nvidia"),
        (ROCM, "amd"),
        (("jax-rocm60-plugin", "jax-rocm60-pjrt"), "amd"),
        (("jax", "jaxlib"), "nvidia"),  # no GPU plugin: described as JAX's default, NVIDIA's
        (("jax-cuda12-plugin", "jax-rocm7-plugin"), ("nvidia", "amd")),
    ],
)
def test_the_gpu_requirement_from_the_plugins(
    names: tuple[str, ...], vendor: str | tuple[str, ...]
) -> None:
    found = jax_build(names)
    assert dict(found.gpu_requires) == {"kind": "gpu", "vendor": vendor}
    assert jax_build(("jax-rocm7-pjrt",)) == JaxBuild()  # the runtime alone is no plugin


def test_a_rocm_plugin_puts_jax_on_the_mi300x(installed: Callable[..., None]) -> None:
    installed(*ROCM)
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", A, A)
    assert decision.chosen == "jax.gpu.matmul", str(decision)
    assert (decision.chosen_backend, decision.chosen_device) == ("jax", "amd.mi300x")
    variants = {v.name: v for v in prism_core.extending.plugins().records["jax"].variants}
    assert variants["jax.gpu.add"].requirement == prism_core.hardware.Requirement(
        {"kind": "gpu", "vendor": "amd"}
    )
    assert variants["jax.add"].requirement == prism_core.hardware.Requirement({"kind": "cpu"})


def test_a_rocm_plugin_refuses_nvidia_gpus_saying_why(installed: Callable[..., None]) -> None:
    installed(*ROCM)
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        decision = prism_core.explain("matmul", A, A)
    assert decision.chosen is None
    assert _reasons(decision) == (
        "'jax' does not drive nvidia.h100-sxm (JAX here has jax-rocm7-plugin, for AMD GPUs; an "
        "NVIDIA GPU needs jax-cuda12-plugin)",
    )


def test_a_cuda_plugin_refuses_the_mi300x_saying_why(installed: Callable[..., None]) -> None:
    """Before, JAX's GPU target took any GPU: a CUDA build was chosen on an AMD GPU."""
    installed(*CUDA)
    with prism_core.device("amd.mi300x", simulate=True):
        refused = prism_core.explain("matmul", A, A)
    assert refused.chosen is None
    assert _reasons(refused) == (
        "'jax' does not drive amd.mi300x (JAX here has jax-cuda12-plugin, for NVIDIA GPUs; an "
        "AMD GPU needs jax-rocm7-plugin)",
    )
    with prism_core.device("nvidia.h100-sxm", simulate=True):
        assert prism_core.explain("matmul", A, A).chosen == "jax.gpu.matmul"


def test_other_vendors_gpus_are_not_jaxs(installed: Callable[..., None]) -> None:
    installed(*CUDA, "jax-rocm7-plugin")
    with prism_core.device("intel.max-1550", simulate=True):
        decision = prism_core.explain("matmul", A, A)
    assert _reasons(decision) == ("intel.max-1550: vendor is 'intel', required 'nvidia' or 'amd'",)


def test_without_a_gpu_plugin_an_amd_gpu_is_refused(installed: Callable[..., None]) -> None:
    """This host's JAX has no GPU plugin: a simulated NVIDIA GPU decides as before (JAX's
    default GPU plugin is NVIDIA's), an AMD GPU names the plugin it needs."""
    installed("jax", "jaxlib")
    with prism_core.device("amd.mi300x", simulate=True):
        decision = prism_core.explain("matmul", A, A)
    assert _reasons(decision) == (
        "'jax' does not drive amd.mi300x (JAX here has no GPU plugin; an AMD GPU needs "
        "jax-rocm7-plugin)",
    )


def test_a_rocm_build_looks_for_the_amd_driver(
    installed: Callable[..., None], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Outside a simulation, with only the ROCm plugin, the AMD driver
    (``prism_core.amd_smi.driver_absent``: its device file, here, with no amd-smi on PATH) is
    what decides whether JAX is imported at all: absent, JAX is not asked (no NVIDIA check
    either); present, JAX itself is asked (the real JAX here, a CPU build, has no GPU)."""
    installed(*ROCM)
    monkeypatch.setattr(amd_smi, "DRIVER_FILES", (str(tmp_path / "kfd"),))
    monkeypatch.setenv("PATH", str(tmp_path))
    jax_plugin.gpu_unavailable.cache_clear()
    why = jax_plugin.gpu_unavailable()
    assert why is not None and why.startswith("no AMD GPU driver on this host ("), why
    assert "NVIDIA" not in why
    (tmp_path / "kfd").touch()
    jax_plugin.gpu_unavailable.cache_clear()
    why = jax_plugin.gpu_unavailable()
    assert why is not None and why.startswith("JAX has no GPU backend: "), why
