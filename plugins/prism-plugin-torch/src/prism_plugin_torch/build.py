"""What the installed torch was built for, and which accelerators that lets it drive.

One torch package drives one family of GPUs at most, fixed when it was built: ``torch.cuda`` is
an NVIDIA GPU on a CUDA build and an AMD GPU on a ROCm build (HIP keeps CUDA's names), an
Intel GPU needs an XPU build (``torch.xpu``), an Apple GPU a macOS build on Apple silicon
(``torch.backends.mps``), and a Huawei Ascend NPU the ``torch_npu`` adapter (``torch.npu``).
:func:`torch_build` says which, and :func:`lacks` says, per vendor, what the build lacks and
what to install instead.

The facts are read without importing torch wherever that can be done, because importing torch
takes one to three seconds and ``prism explain`` or ``prism doctor`` on a host without the
accelerator must not pay it:

* torch's ``version.py`` (``torch.version``: ``cuda``, ``hip``, ``xpu``), read as text and
  parsed with :mod:`ast`.  torch's build writes that file (``tools/generate_torch_version.py``)
  with the toolkit versions it compiled against, so it is right for every build: PyPI's default
  wheels (``2.5.1``, a CUDA build on Linux, with no local tag), conda's, a source build's;
* where it cannot be read, the local tag of the installed distribution's version
  (``importlib.metadata``: ``+cu121``, ``+rocm6.2``, ``+xpu``, ``+cpu``), a convention of
  PyTorch's own wheel indexes only;
* MPS is in every torch for macOS on arm64 (since 1.12), and in no other: the platform says it;
* ``torch_npu`` is a distribution of its own (``torch-npu``): its metadata says whether it is
  installed, and at which version.

Once torch is imported (a tensor exists, or a variant ran), torch itself is asked, and the GPU
architectures the build compiled kernels for (``torch._C._cuda_getArchFlags()``, which creates
no CUDA context) become known too.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

__all__ = ["INSTALL", "TorchBuild", "arch_lacks", "lacks", "target_of", "torch_build"]

#: What to install for each vendor's accelerators, said in every reason that needs it.
INSTALL: Mapping[str, str] = MappingProxyType(
    {
        "nvidia": (
            "a CUDA build of torch: pip install torch --index-url "
            "https://download.pytorch.org/whl/cuXYZ, XYZ a CUDA version the driver supports "
            "(https://pytorch.org/get-started/locally/)"
        ),
        "amd": (
            "a ROCm build of torch: pip install torch --index-url "
            "https://download.pytorch.org/whl/rocmX.Y, X.Y the host's ROCm version "
            "(https://pytorch.org/get-started/locally/)"
        ),
        "intel": (
            "an XPU build of torch: pip install torch --index-url "
            "https://download.pytorch.org/whl/xpu, with Intel's GPU driver "
            "(https://docs.pytorch.org/docs/stable/notes/get_start_xpu.html)"
        ),
        "apple": (
            "torch for macOS on Apple silicon: pip install torch, in an arm64 Python on macOS "
            "12.3 or later (https://developer.apple.com/metal/pytorch/)"
        ),
        "huawei": (
            "torch_npu, Ascend's adapter for torch: pip install torch-npu, of the installed "
            "torch's version, with Ascend's CANN toolkit (https://github.com/Ascend/pytorch)"
        ),
    }
)

#: The torch device type (and the variants' target) of each vendor's accelerators.
_TARGETS: Mapping[str, str] = MappingProxyType(
    {"nvidia": "cuda", "amd": "cuda", "intel": "xpu", "apple": "mps", "huawei": "npu"}
)


def target_of(vendor: str | None) -> str | None:
    """The torch device type of ``vendor``'s accelerators (``"cuda"`` for NVIDIA and AMD,
    ``"xpu"``, ``"mps"``, ``"npu"``); ``None`` for a vendor torch has no backend for."""
    return _TARGETS.get(vendor or "")


@dataclass(frozen=True)
class TorchBuild:
    """What the installed torch was built for (see the module docstring for where each fact
    comes from).  ``version`` is ``None`` where torch is not installed; ``cuda``, ``hip`` and
    ``xpu`` are ``torch.version``'s (the toolkit versions, ``None`` where the build lacks
    it); ``mps`` whether it has MPS; ``npu`` torch_npu's version where that is installed;
    ``arch_list`` the GPU architectures its CUDA or HIP kernels were compiled for (``sm_90``,
    ``gfx942``), known only once torch is imported; ``source`` where the facts were read."""

    version: str | None
    cuda: str | None = None
    hip: str | None = None
    xpu: str | None = None
    mps: bool = False
    npu: str | None = None
    arch_list: tuple[str, ...] | None = None
    source: str = ""

    @property
    def label(self) -> str:
        """``"torch 2.13.0+cpu"``, as reasons name it."""
        return f"torch {self.version}" if self.version else "torch"


def _distribution_version(name: str) -> str | None:
    import importlib.metadata

    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
    except Exception:  # a broken installation: as if absent
        return None


def _npu_version() -> str | None:
    """torch_npu's version where it is installed (its distribution is ``torch-npu``; asked of
    ``importlib.metadata`` only where it is)."""
    from prism_core.backend_kit import installed_distributions

    if not installed_distributions("torch-npu"):
        return None
    found = _distribution_version("torch-npu")
    if found is not None:
        return found
    import importlib.util

    try:
        return "(unknown version)" if importlib.util.find_spec("torch_npu") else None
    except (ImportError, ValueError):
        return None


def _apple_silicon_macos() -> bool:
    """Whether this is macOS on arm64, where every torch since 1.12 has MPS."""
    if sys.platform != "darwin":
        return False
    import platform

    return platform.machine() == "arm64"


def _platform() -> str:
    import platform

    return f"{platform.system() or sys.platform} on {platform.machine() or 'an unknown machine'}"


#: An assignment of a string or ``None`` in ``torch/version.py`` (``cuda: Optional[str] = None``,
#: ``__version__ = '2.13.0+cpu'``): what torch's build writes there.
_ASSIGNED = re.compile(r"""^(\w+)\s*(?::[^=\n]*)?=\s*(?:(['"])(.*?)\2|None)\s*$""", re.MULTILINE)


def _from_version_file() -> dict[str, Any] | None:
    """``torch/version.py``'s assignments of strings and ``None`` (``__version__``, ``cuda``,
    ``hip``, ``xpu``), read without importing torch (nor :mod:`ast`: a few milliseconds of a
    first call); ``None`` where it cannot be found or names no version."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("torch")
        if spec is None or not spec.submodule_search_locations:
            return None
        path = Path(next(iter(spec.submodule_search_locations))) / "version.py"
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError, ImportError, StopIteration):
        return None
    found: dict[str, Any] = {m[1]: (m[3] if m[2] else None) for m in _ASSIGNED.finditer(text)}
    return found if isinstance(found.get("__version__"), str) else None


def _from_local_tag(version: str) -> dict[str, str | None]:
    """``cuda``, ``hip`` and ``xpu`` as a version's local tag says them (``+cu121``: CUDA 12.1,
    ``+rocm6.2``, ``+xpu``); nothing for ``+cpu`` or no tag."""
    local = version.partition("+")[2].lower()
    if local.startswith("rocm"):
        return {"hip": local.removeprefix("rocm") or "(unknown version)"}
    if local.startswith("cu") and local[2:].isdigit():
        digits = local[2:]
        return {"cuda": f"{digits[:-1]}.{digits[-1]}" if len(digits) > 1 else digits}
    if local.startswith("xpu"):
        return {"xpu": local}
    return {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _from_torch(torch: Any) -> TorchBuild:
    """The facts as the imported torch says them."""
    version = getattr(torch, "version", None)
    cuda, hip, xpu = (_text(getattr(version, k, None)) for k in ("cuda", "hip", "xpu"))
    arch: tuple[str, ...] | None = None
    try:
        flags = getattr(torch._C, "_cuda_getArchFlags", None) if (cuda or hip) else None
        if flags is not None:
            arch = tuple(str(flags() or "").split())
    except Exception:  # a build without the flags, or a broken one: unknown
        arch = None
    try:
        mps = bool(torch.backends.mps.is_built())
    except Exception:
        mps = False
    return TorchBuild(
        str(getattr(torch, "__version__", "(unknown version)")),
        cuda=cuda,
        hip=hip,
        xpu=xpu,
        mps=mps,
        npu=_npu_version(),
        arch_list=arch or None,
        source="torch.version (torch is imported)",
    )


@functools.lru_cache(maxsize=2)
def _facts(imported: bool) -> TorchBuild:
    torch = sys.modules.get("torch") if imported else None
    if torch is not None:
        return _from_torch(torch)
    mps = _apple_silicon_macos()
    written = _from_version_file()
    if written is not None:
        return TorchBuild(
            str(written["__version__"]),
            cuda=_text(written.get("cuda")),
            hip=_text(written.get("hip")),
            xpu=_text(written.get("xpu")),
            mps=mps,
            npu=_npu_version(),
            source="torch/version.py",
        )
    version = _distribution_version("torch")
    if version is None:
        return TorchBuild(None, npu=_npu_version(), source="torch is not installed")
    tagged = _from_local_tag(version)
    return TorchBuild(
        version,
        cuda=tagged.get("cuda"),
        hip=tagged.get("hip"),
        xpu=tagged.get("xpu"),
        mps=mps,
        npu=_npu_version(),
        source="the installed torch's version",
    )


def torch_build() -> TorchBuild:
    """What the installed torch was built for: asked once per process before torch is
    imported (from its files) and once after (from torch itself).  Tests replace this
    function to simulate another build."""
    return _facts("torch" in sys.modules)


def lacks(
    vendor: str | None, facts: TorchBuild | None = None, *, simulated: bool = False
) -> str | None:
    """Why the installed torch (``facts``; default :func:`torch_build`) cannot drive
    ``vendor``'s accelerators whatever the hardware, naming what to install; ``None`` when its
    build has their backend, or for a vendor torch has no backend for.  On a ``simulated``
    device a build without CUDA (a CPU-only one) is taken for the CUDA build of its version on
    an NVIDIA GPU, as torch's GPU choices have always been checked without a GPU; a ROCm build
    is not (its ``torch.cuda`` is an AMD GPU), nor is any build for the other vendors."""
    if vendor is None or vendor not in _TARGETS:
        return None
    facts = torch_build() if facts is None else facts
    need = INSTALL[vendor]
    if facts.version is None:
        return f"torch is not installed; {vendor_name(vendor)} need {need}"
    label = facts.label
    if vendor == "nvidia":
        if facts.hip is not None:
            return (
                f"{label} is a ROCm build (torch.version.hip is {facts.hip!r}), whose "
                f"torch.cuda is an AMD GPU; NVIDIA GPUs need {need}"
            )
        if facts.cuda is not None or simulated:
            return None
        return f"{label} is not a CUDA build (torch.version.cuda is None); NVIDIA GPUs need {need}"
    if vendor == "amd":
        if facts.hip is not None:
            return None
        other = f"; it is a CUDA {facts.cuda} build" if facts.cuda else ""
        return (
            f"{label} is not a ROCm build (torch.version.hip is None{other}); AMD GPUs need {need}"
        )
    if vendor == "intel":
        if facts.xpu is not None:
            return None
        return f"{label} is not an XPU build (torch.version.xpu is None); Intel GPUs need {need}"
    if vendor == "apple":
        if facts.mps:
            return None
        return (
            f"{label} is not built with MPS (only torch for macOS on Apple silicon is; this is "
            f"{_platform()}); Apple GPUs need {need}"
        )
    if facts.npu is not None:
        return None
    return f"torch_npu is not installed beside {label}; Huawei Ascend NPUs need {need}"


def vendor_name(vendor: str) -> str:
    """How reasons name a vendor's accelerators."""
    return {
        "nvidia": "NVIDIA GPUs",
        "amd": "AMD GPUs",
        "intel": "Intel GPUs",
        "apple": "Apple GPUs",
        "huawei": "Huawei Ascend NPUs",
    }.get(vendor, f"{vendor} devices")


def _nvidia_arch(capability: str) -> tuple[int, int] | None:
    major, _, minor = capability.partition(".")
    try:
        return int(major), int(minor or 0)
    except ValueError:
        return None


def arch_lacks(device: Any, facts: TorchBuild | None = None) -> str | None:
    """Why the build has no kernels for ``device``'s architecture, where torch said which it
    compiled for (``arch_list``): an AMD GPU's ``isa`` (``gfx942``) must be among them; an
    NVIDIA GPU's ``compute_capability`` (an attribute, ``"9.0"``) needs a cubin of the same
    major version and no higher minor (``sm_90`` runs on 9.0) or PTX of no higher version
    (``compute_80``), which the driver compiles.  ``None`` where it has, or where that is not
    known (torch not imported, a description without the field)."""
    facts = torch_build() if facts is None else facts
    arch = facts.arch_list
    if not arch:
        return None
    vendor = getattr(device, "vendor", None)
    data = getattr(device, "data", {})
    listed = ", ".join(arch)
    if vendor == "amd":
        isa = data.get("isa")
        # An entry may carry target features ("gfx90a:xnack-"); the processor is what counts.
        if not isinstance(isa, str) or isa in {a.partition(":")[0] for a in arch}:
            return None
        return (
            f"{facts.label} has no kernels for {isa} ({device.device_type}'s isa; it was built "
            f"for {listed}); it needs a ROCm build compiled for {isa}"
        )
    if vendor == "nvidia":
        attrs = data.get("attributes")
        wanted = attrs.get("compute_capability") if isinstance(attrs, Mapping) else None
        have = _nvidia_arch(str(wanted)) if wanted is not None else None
        if have is None:
            return None
        for entry in arch:
            kind, _, digits = entry.partition("_")
            if not digits[:-1].isdigit() or not digits[-1:].isdigit():
                continue
            built = (int(digits[:-1]), int(digits[-1]))
            if kind == "sm" and built[0] == have[0] and built[1] <= have[1]:
                return None
            if kind == "compute" and built <= have:
                return None
        return (
            f"{facts.label} has no kernels for compute capability {wanted} "
            f"({device.device_type}; it was built for {listed}); it needs a CUDA build "
            "compiled for it"
        )
    return None
