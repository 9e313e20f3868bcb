"""Which GPUs the installed JAX can use, told from the names of the installed distributions
without importing JAX.

Since JAX 0.4.32 (the least the plugin takes) a GPU comes from a PJRT plugin installed beside
``jaxlib``: ``jax-cuda12-plugin`` and ``jax-cuda13-plugin`` (with their ``jax-cuda12-pjrt``,
``jax-cuda13-pjrt``; ``pip install "jax[cuda12]"``) for NVIDIA GPUs, ``jax-rocm60-plugin`` and
``jax-rocm7-plugin`` (with ``jax-rocm60-pjrt``, ``jax-rocm7-pjrt``; AMD's ROCm wheels,
rocm.docs.amd.com "Install JAX for ROCm") for AMD GPUs.  Without either, JAX computes on the CPU
only; Prism then describes JAX's GPU as JAX's default GPU plugin would (NVIDIA's), so that a
simulated NVIDIA GPU decides as before, and on real hardware JAX itself says it has no GPU.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from prism_core import backend_kit

if TYPE_CHECKING:
    from prism_core.hardware import DeviceDescription

__all__ = ["CUDA_PLUGIN", "ROCM_PLUGIN", "JaxBuild", "installed_distributions", "jax_build"]

#: The plugin to name for an NVIDIA GPU, and for an AMD GPU.
CUDA_PLUGIN = "jax-cuda12-plugin"
ROCM_PLUGIN = "jax-rocm7-plugin"
#: Distribution names (normalised) of JAX's GPU plugins, for CUDA and for ROCm (each needs its
#: ``-pjrt`` wheel too, which it depends on: the plugin's name is the one to count).
_CUDA = re.compile(r"jax-cuda\d+-plugin")
_ROCM = re.compile(r"jax-rocm\d+-plugin")
_PLUGIN_FOR = MappingProxyType({"nvidia": CUDA_PLUGIN, "amd": ROCM_PLUGIN})
_VENDOR_WORDS = MappingProxyType({"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"})


def installed_distributions() -> tuple[str, ...]:
    """The installed distributions this module reads (normalised names), without importing
    ``importlib.metadata`` (``prism_core.backend_kit.installed_distributions``); the one place
    that looks, which the tests replace to simulate another build."""
    return backend_kit.installed_distributions("jax-")


@dataclass(frozen=True)
class JaxBuild:
    """JAX's GPU plugins installed here: ``cuda`` (for NVIDIA GPUs) and ``rocm`` (for AMD's)."""

    cuda: tuple[str, ...] = ()
    rocm: tuple[str, ...] = ()

    @property
    def vendors(self) -> tuple[str, ...]:
        """The vendors whose GPUs JAX drives here: NVIDIA's where no GPU plugin is installed
        (JAX's default GPU plugin is NVIDIA's)."""
        found = (("nvidia",) if self.cuda else ()) + (("amd",) if self.rocm else ())
        return found or ("nvidia",)

    @property
    def gpu_requires(self) -> Mapping[str, object]:
        """The requirement of JAX's GPU variants, in description terms."""
        vendors = self.vendors
        return MappingProxyType(
            {"kind": "gpu", "vendor": vendors[0] if len(vendors) == 1 else vendors}
        )

    def describe(self) -> str:
        """The plugins in words: ``jax-cuda12-plugin, for NVIDIA GPUs``."""
        parts = []
        if self.cuda:
            parts.append(f"{', '.join(self.cuda)}, for NVIDIA GPUs")
        if self.rocm:
            parts.append(f"{', '.join(self.rocm)}, for AMD GPUs")
        return "; ".join(parts) or "no GPU plugin"

    def why_not(self, device: DeviceDescription) -> str | None:
        """Why JAX here cannot run on ``device``, an NVIDIA or AMD GPU whose vendor's plugin is
        not installed; ``None`` where it can, or where the device is no such GPU (the
        variants' requirement says why)."""
        wanted = _PLUGIN_FOR.get(str(device.vendor))
        if device.kind != "gpu" or wanted is None or device.vendor in self.vendors:
            return None
        return f"JAX here has {self.describe()}; {_VENDOR_WORDS[str(device.vendor)]} needs {wanted}"


def jax_build(names: Iterable[str] | None = None) -> JaxBuild:
    """JAX's GPU plugins among ``names`` (normalised distribution names; default: those
    installed here, :func:`installed_distributions`)."""
    found = list(installed_distributions() if names is None else names)
    cuda = tuple(sorted(n for n in found if _CUDA.fullmatch(n)))
    rocm = tuple(sorted(n for n in found if _ROCM.fullmatch(n)))
    return JaxBuild(cuda, rocm)
