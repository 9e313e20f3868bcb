"""Which CuPy is installed here, a CUDA build or a ROCm build, told from the names of the
installed distributions without importing CuPy.

CuPy's wheels are one distribution per platform, all of them installing the package ``cupy``:
``cupy-cuda12x`` and ``cupy-cuda13x`` (NVIDIA CUDA; ``cupy-cuda11x`` and the older per-release
``cupy-cuda102`` ... ``cupy-cuda117`` too), ``cupy-rocm-4-3``, ``cupy-rocm-5-0`` and
``cupy-rocm-7-0`` (AMD ROCm; in a ROCm build ``cupy.cuda.runtime.is_hip`` is True), and AMD's
own ``amd-cupy`` (ROCm 7, from AMD's package index).  ``cupy``, the source distribution, builds
for CUDA unless ``CUPY_INSTALL_USE_HIP=1`` was set, which its metadata does not record: it is
taken as a CUDA build.  (Names: CuPy's installation guide, docs.cupy.dev/en/stable/install.html,
and PyPI's project list; CuPy 14.2, the least the plugin takes, has ROCm wheels only as
``cupy-rocm-7-0``.)

The backend asks once per instance (:class:`CupyBuild` is cached there): the requirement of
its variants, the devices it drives and the reasons ``explain`` gives all follow from it.
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

__all__ = [
    "CUDA_WHEEL",
    "ROCM_WHEEL",
    "CupyBuild",
    "cupy_build",
    "installed_distributions",
]

#: The wheel to name for an NVIDIA GPU, and for an AMD GPU (the ROCm wheel of CuPy >= 14.2).
CUDA_WHEEL = "cupy-cuda12x"
ROCM_WHEEL = "cupy-rocm-7-0"
#: Distribution names (normalised: lowercase, ``-``) of CuPy's CUDA and ROCm builds.
_CUDA = re.compile(r"cupy-cuda\d+x?")
_ROCM = re.compile(r"cupy-rocm-\d+-\d+|amd-cupy")
#: The platform of each build, and the vendor of the GPUs it runs on.
_VENDOR = MappingProxyType({"cuda": "nvidia", "rocm": "amd"})
_PLATFORM_WORDS = MappingProxyType({"cuda": "a CUDA build", "rocm": "a ROCm build"})
_WHEEL_FOR = MappingProxyType({"nvidia": CUDA_WHEEL, "amd": ROCM_WHEEL})
_VENDOR_WORDS = MappingProxyType({"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"})


def installed_distributions() -> tuple[str, ...]:
    """The installed distributions this module reads (normalised names), without importing
    ``importlib.metadata`` (``prism_core.backend_kit.installed_distributions``); the one place
    that looks, which the tests replace to simulate another build."""
    return backend_kit.installed_distributions("cupy", "amd-cupy")


@dataclass(frozen=True)
class CupyBuild:
    """The CuPy distributions installed here and what they run on.

    ``platform`` is ``"cuda"``, ``"rocm"`` or ``None`` (no CuPy, or several builds at once,
    which overwrite each other's files: then nothing is driven, and :meth:`why_not` says
    why); ``distributions`` are the CuPy distributions found."""

    distributions: tuple[str, ...]
    platform: str | None

    @property
    def vendor(self) -> str:
        """The vendor whose GPUs this build drives: NVIDIA where no CuPy is installed (what
        the plugin depends on, ``cupy-cuda12x``)."""
        return _VENDOR.get(self.platform or "cuda", "nvidia")

    @property
    def requires(self) -> Mapping[str, object]:
        """The device requirement of the backend and its GPU variants, in description terms."""
        return MappingProxyType({"vendor": self.vendor, "kind": "gpu"})

    def describe(self) -> str:
        """The build in words: ``cupy-cuda12x, a CUDA build``."""
        if not self.distributions:
            return "no CuPy distribution is installed"
        names = ", ".join(self.distributions)
        if self.platform is None:
            return f"several CuPy distributions are installed ({names})"
        return f"{names}, {_PLATFORM_WORDS[self.platform]}"

    def why_not(self, device: DeviceDescription) -> str | None:
        """Why this build cannot run on ``device``, a GPU of another vendor than its own (or
        any GPU with several builds installed); ``None`` where it can, or where the device is
        no GPU of a vendor CuPy has a build for (the requirement says why)."""
        wanted = _WHEEL_FOR.get(str(device.vendor))
        if device.kind != "gpu" or wanted is None:
            return None
        what = _VENDOR_WORDS[str(device.vendor)]
        if self.platform is None and len(self.distributions) > 1:
            return (
                f"{self.describe()}, which overwrite each other's files; uninstall all but one "
                f"({wanted} for {what})"
            )
        if self.vendor == device.vendor:
            return None  # without CuPy too: the plugin's own dependency is the CUDA build
        if not self.distributions:
            return f"no CuPy is installed; {what} needs {wanted}"
        return f"CuPy here is {self.describe()}; {what} needs {wanted}"


def cupy_build(names: Iterable[str] | None = None) -> CupyBuild:
    """The CuPy build among ``names`` (normalised distribution names; default: those installed
    here, :func:`installed_distributions`)."""
    found = list(installed_distributions() if names is None else names)
    cuda = sorted(n for n in found if _CUDA.fullmatch(n))
    rocm = sorted(n for n in found if _ROCM.fullmatch(n))
    source = ["cupy"] if "cupy" in found else []
    distributions = tuple(cuda + rocm + source)
    if len(distributions) > 1:
        return CupyBuild(distributions, None)
    if rocm:
        return CupyBuild(distributions, "rocm")
    return CupyBuild(distributions, "cuda" if distributions else None)
