"""The ``torch`` backend: PyTorch on the host CPU and on the accelerators torch has a backend
for (NVIDIA GPUs through CUDA, AMD GPUs through ROCm, Intel GPUs through XPU, Apple GPUs
through MPS, Huawei Ascend NPUs through torch_npu), a
:class:`~prism_core.backend_kit.NamespaceBackend` over ``array_api_compat.torch``, with
:data:`OVERRIDES` (``prism_plugin_torch.overrides``) where torch or the compat layer still differ
from NumPy, and for the ops beyond the standard.

Importing this module, creating the backend and asking :meth:`TorchBackend.owns` import no
torch: plugin discovery stays cheap.  :meth:`TorchBackend.availability` and
:meth:`TorchBackend.capabilities` answer from the installed packages where torch is not imported
yet and no NVIDIA driver is here (``prism doctor`` stays fast); which accelerators the installed
build can drive is read from its files (``prism_plugin_torch.build``), not by importing it.
Tensors stay where they are; on the CPU NumPy arrays and tensors share memory both ways
(DLPack), copied only where memory cannot or must not be shared (a GPU, a byte-swapped or
read-only array, negative strides).
"""

from __future__ import annotations

import functools
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import prism_core.backend_kit as backend_kit
from prism_core.backend_kit import NamespaceBackend, Target
from prism_core.extending import Availability
from prism_core.hardware import RequirementMatch

from . import build as _build
from . import runtime as _runtime
from .runtime import import_torch_npu, target_unavailable

if TYPE_CHECKING:
    from prism_core.hardware import DeviceDescription

__all__ = [
    "ACCELERATORS",
    "MPS_HOLDS",
    "OVERRIDES",
    "TorchBackend",
    "target_unavailable",
    "to_tensor",
    "torch_dtype",
]

_CPU: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})
#: The accelerator targets, each a torch device type with the devices its variants require:
#: ``cuda`` is an NVIDIA GPU on a CUDA build and an AMD GPU on a ROCm build (HIP keeps CUDA's
#: names, so torch's ``torch.cuda.<op>`` runs on either; ``can_drive`` tells which the build
#: has), ``xpu`` an Intel GPU, ``mps`` an Apple GPU, ``npu`` a Huawei Ascend NPU (torch_npu).
ACCELERATORS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        "cuda": MappingProxyType({"vendor": ("nvidia", "amd"), "kind": "gpu"}),
        "xpu": MappingProxyType({"vendor": "intel", "kind": "gpu"}),
        "mps": MappingProxyType({"vendor": "apple", "kind": "gpu"}),
        "npu": MappingProxyType({"vendor": "huawei", "kind": "npu"}),
    }
)
#: The targets, made once: ``targets[0] is`` the CPU target, whichever build declared them.
_TARGETS: Mapping[str, Target] = MappingProxyType(
    {"cpu": Target("cpu", _CPU, 0)}
    | {name: Target(name, requires, 10) for name, requires in ACCELERATORS.items()}
)
#: What torch holds on an Apple GPU (Prism's names): Metal has no double, so MPS refuses
#: float64 and complex128 ("Cannot convert a MPS Tensor to float64 dtype as the MPS framework
#: doesn't support float64"); float8 has no MPS kernels, and uint16 to uint64 only a few
#: (torch 2.3 and later), so calls in them stay on the CPU.
MPS_HOLDS = frozenset(
    {"bool_", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32"}
    | {"complex64"}
)
#: How reasons name each target's device.
_RUNTIMES: Mapping[str, str] = MappingProxyType(
    {"cuda": "CUDA", "xpu": "XPU", "mps": "MPS", "npu": "torch_npu"}
)
_LABELS: Mapping[str, str] = MappingProxyType(
    {"cuda": "the GPU", "xpu": "the XPU", "mps": "the MPS device", "npu": "the NPU"}
)
#: Python scalars (exactly: NumPy scalars subclass float and int, but are strongly typed).
_SCALARS = frozenset({bool, int, float, complex})

#: The linalg functions, which NumPy computes in float64 for integers and booleans (torch
#: refuses them; the backend widens ``divide``, ``mean`` and the floating functions itself).
IN_DOUBLE = tuple(f"linalg.{name}" for name in (
    "cholesky", "det", "eigh", "eigvalsh", "inv", "matrix_norm", "matrix_rank", "pinv", "qr",
    "slogdet", "solve", "svd", "svdvals",
))  # fmt: skip
#: The Fourier transforms: integers in float64, half precision in single (torch transforms
#: neither), empty batches made here (torch's FFT libraries refuse them).
TRANSFORMS = tuple(f"fft.{name}" for name in (
    "fft", "ifft", "rfft", "fftn", "ifftn", "rfftn", "irfft", "irfftn", "hfft", "ihfft",
))  # fmt: skip
#: Creation ops whose default dtype is NumPy's float64 (torch's is float32).
FLOAT64_DEFAULT = ("zeros", "ones", "empty", "eye", "fft.fftfreq", "fft.rfftfreq")
#: The ops ``prism_plugin_torch.overrides`` defines one by one: beyond the standard, then where
#: torch (or array_api_compat.torch) computes otherwise than NumPy.
_OWN = (
    "dot", "einsum", "convolve", "transpose", "triu_indices", "random.normal", "linalg.eig",
    "linalg.norm", "requires_grad", "detach",
    "asarray", "from_dlpack", "full", "arange", "linspace", "astype", "imag", "abs", "square",
    "power", "where", "maximum", "minimum", "clip", "sum", "prod", "cumulative_sum",
    "cumulative_prod", "linalg.trace", "var", "std", "argsort", "sort", "argmax", "argmin",
    "max", "min", "searchsorted", "unique_all", "unique_counts", "unique_inverse",
    "unique_values", "roll", "matmul", "linalg.vector_norm", "vecdot", "linalg.cross",
    "fft.fftshift", "fft.ifftshift", "count_nonzero", "take", "take_along_axis", "repeat",
    "floor_divide", "remainder", "bitwise_left_shift", "bitwise_right_shift", "conj", "sign",
    "logaddexp", "cov", "histogram",
)  # fmt: skip


def attribute(op: str) -> str:
    """The name of ``op``'s function in ``prism_plugin_torch.overrides`` (``max_``, not a
    builtin's name)."""
    return op.replace(".", "_") + ("_" if op in ("abs", "max", "min", "sum") else "")


#: Op -> its override: every op of the tables above.
OVERRIDES: Mapping[str, str] = MappingProxyType(
    {
        op: f"prism_plugin_torch.overrides:{attribute(op)}"
        for op in (*_OWN, *IN_DOUBLE, *TRANSFORMS, *FLOAT64_DEFAULT)
    }
)


def _installed(module: str, distribution: str) -> Availability | None:
    """What the installed packages say about ``module`` without importing it: not installed,
    or available at its distribution's version; ``None`` where only importing it can tell."""
    import importlib.metadata
    import importlib.util

    try:
        if importlib.util.find_spec(module) is None:
            return Availability(False, f"{distribution} not installed")
        return Availability(True, version=importlib.metadata.version(distribution))
    except ModuleNotFoundError:
        return Availability(False, f"{distribution} not installed")
    except Exception:
        return None


def torch_dtype(value: Any) -> Any:
    """The torch dtype for a ``dtype=`` argument: torch's, Prism's, NumPy's (or its names,
    ``"f4"``) or a Python type; ``None`` stays ``None``.  ``TypeError`` for what is no dtype,
    or one torch lacks."""
    import torch

    if value is None or isinstance(value, torch.dtype):
        return value
    import numpy as np

    import prism_core

    try:
        name = prism_core.dtype(value).name
    except (TypeError, ValueError):
        try:
            name = np.dtype(value).name
        except TypeError:
            raise TypeError(
                f"dtype: {value!r} is not a data type (give a Prism dtype such as "
                "prism_core.float32, a NumPy or torch dtype, or a name such as 'float32')"
            ) from None
    found = getattr(torch, "bool" if name == "bool_" else name, None)
    if not isinstance(found, torch.dtype):
        raise TypeError(f"torch has no data type {name!r}")
    return found


def _host_tensor(obj: Any) -> Any:
    """A tensor sharing the memory of a NumPy array (or another DLPack exporter); read-only
    arrays, what DLPack refuses (byte-swapped ones) and what is no array (lists, scalars, in
    NumPy's dtype) are copied."""
    import numpy as np
    import torch

    strides = getattr(obj, "strides", None)
    if isinstance(strides, tuple) and any(s < 0 for s in strides):
        # torch 2.13 aborts the process (a C++ error, not an exception) when DLPack hands it
        # negative strides (a reversed view, x[::-1]); a copy has positive ones.
        if not isinstance(obj, np.ndarray) and hasattr(obj, "copy"):
            return torch.from_dlpack(obj.copy())
        obj = np.array(obj, copy=True)
    if isinstance(obj, np.ndarray) and not obj.flags.writeable:
        obj = obj.copy()  # torch would share it and could write into it (no read-only tensors)
    if hasattr(obj, "__dlpack__"):
        try:
            return torch.from_dlpack(obj)
        except (BufferError, TypeError, RuntimeError):
            pass  # byte-swapped or otherwise unexportable: copied into native order below
    array = np.asarray(obj)
    if array.dtype.byteorder not in ("=", "|"):
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype.hasobject or array.dtype.kind in "OUSVMm":
        raise TypeError(f"torch cannot hold an array of dtype {array.dtype} ({obj!r:.60})")
    if not array.flags.writeable or array is obj:
        array = array.copy()  # memory torch cannot protect, or the caller's own DLPack refused
    return torch.from_numpy(array)


def to_tensor(obj: Any, device: Any = None) -> Any:
    """``obj`` as a tensor (on ``device`` when given, else where it is: tensors stay on their
    device, anything else comes to the CPU)."""
    import torch

    tensor = obj if isinstance(obj, torch.Tensor) else _host_tensor(obj)
    if device is not None and tensor.device != device:
        tensor = tensor.to(device)
    return tensor


def torch_device(device: Any, default: Any) -> Any:
    """The torch device a ``device=`` names: ``default`` for ``None``, the CPU for ``"cpu"`` and
    Prism's CPUs, ``<type>:<index>`` for Prism's accelerators (``cuda`` for NVIDIA and AMD GPUs,
    ``xpu``, ``mps``, ``npu``), and torch's reading of anything else; ``ValueError`` for what
    torch cannot read, or a device of a vendor torch has no backend for, or one the installed
    build cannot drive (``build.lacks``)."""
    import torch

    what, value = backend_kit.requested_device(device)
    if what == "default":
        return default
    if what == "cpu":
        return torch.device("cpu")
    if what == "gpu":
        description = getattr(value, "description", value)
        target = _build.target_of(description.vendor)
        why = _build.lacks(description.vendor) if target else None
        if target is None or why is not None:
            raise ValueError(
                f"device={description.device_type!r}: "
                + (
                    why
                    or "torch computes on NVIDIA and AMD GPUs (cuda), Intel GPUs (xpu), Apple "
                    "GPUs (mps) and Huawei Ascend NPUs (npu), not on "
                    f"{description.vendor or 'an unknown vendor'}'s"
                )
            )
        return torch.device(target, getattr(value, "index", 0) or 0)
    try:
        return value if isinstance(value, torch.device) else torch.device(value)
    except (TypeError, RuntimeError):
        raise ValueError(
            f"device={value!r} is not a device torch knows; it takes None, 'cpu', 'cuda', "
            "'cuda:N', 'xpu', 'mps', 'npu', a torch.device, or Prism's description of a CPU or "
            "of an accelerator torch drives"
        ) from None


class Float64Default:
    """torch's default dtype as ``float64`` while at least one placed function's body runs:
    then a Python float or complex times an integer tensor is ``float64`` / ``complex128``, as
    NumPy makes it, where torch's own default gives ``float32`` / ``complex64``.  torch's
    default dtype is one setting for the whole process, so the bodies running at once share
    it: the first to enter sets it, the last to leave puts back what was there.  Other torch
    code running in other threads meanwhile sees ``float64`` as its default too."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._inside = 0
        self._before: Any = None

    def __enter__(self) -> None:
        import torch

        with self._lock:
            if self._inside == 0:
                self._before = torch.get_default_dtype()
                if self._before is not torch.float64:
                    torch.set_default_dtype(torch.float64)
            self._inside += 1

    def __exit__(self, *exc: object) -> None:
        import torch

        with self._lock:
            self._inside -= 1
            if self._inside == 0 and self._before is not torch.float64:
                torch.set_default_dtype(self._before)


class TorchBackend(NamespaceBackend):
    """PyTorch on the host CPU (``torch.<op>``), on NVIDIA and AMD GPUs (``torch.cuda.<op>``:
    CUDA or ROCm, whichever the build has), Intel GPUs (``torch.xpu.<op>``), Apple GPUs
    (``torch.mps.<op>``) and Huawei Ascend NPUs (``torch.npu.<op>``); its arrays are
    ``torch.Tensor`` on any of them, which the variants take as they are (with Python
    scalars); dispatch moves every other array argument with :meth:`to_device`."""

    name = "torch"
    thread_modules = ("torch",)
    transfer = "dlpack"  # CPU tensors and NumPy arrays share memory both ways
    aliases = ("pytorch",)
    priority = 0
    description = (
        "PyTorch on the host CPU, NVIDIA and AMD GPUs (CUDA, ROCm), Intel GPUs (XPU), Apple "
        "GPUs (MPS) and Huawei Ascend NPUs (torch_npu)"
    )
    #: CPUs, GPUs and NPUs; :meth:`can_drive` narrows them to the vendors the installed build
    #: has a backend for, with that backend available.
    drives: Mapping[str, Any] = MappingProxyType({"kind": ("cpu", "gpu", "npu")})
    namespace = "array_api_compat.torch"
    library = "torch"
    minimum = "2.1"
    distribution = "prism-plugin-torch"
    array_types = ("torch:Tensor",)
    overrides = OVERRIDES

    @property
    def targets(self) -> tuple[Target, ...]:  # type: ignore[override]
        """The CPU, ``cuda`` (NVIDIA's GPUs, or AMD's on a ROCm build; declared with every
        build, so that explain says what a device would need), and ``xpu``, ``mps`` and
        ``npu`` where the installed build has them: a build that cannot have a target declares
        no variants for it (870 variants instead of 350 cost a first call about 20 ms), and
        ``can_drive`` says what to install (:func:`prism_plugin_torch.build.lacks`)."""
        facts = _build.torch_build()
        if self._targets_of is not facts:
            has = {"xpu": facts.xpu is not None, "mps": facts.mps, "npu": facts.npu is not None}
            extra = [_TARGETS[name] for name, there in has.items() if there]
            self._targets = (_TARGETS["cpu"], _TARGETS["cuda"], *extra)
            self._targets_of = facts
        return self._targets

    def __init__(self) -> None:
        super().__init__()
        self._devices: dict[str, Any] = {}
        self._targets_of: object = None
        self._targets: tuple[Target, ...] = ()
        self._float64 = Float64Default()
        #: Whether the build has no accelerator but CUDA's (:meth:`where`); None: not asked.
        self._host_only: bool | None = None

    def numpy_defaults(self) -> Float64Default:
        """The body of a placed function runs with ``float64`` as torch's default dtype, so
        that integer tensors with Python floats promote as NumPy's arrays do."""
        return self._float64

    # -- identity and availability ------------------------------------------------------------
    def availability(self) -> Availability:
        """Available where torch and array-api-compat are installed, else why not (not
        installed, or the error of a torch that cannot load); CUDA is not needed (:meth:`can_drive`
        says why the GPUs are not driven).  Until something imports torch, an installed torch
        is taken at its package's word (a torch that cannot load then fails at its first op,
        and dispatch falls back with the import error)."""
        if self._availability is None:
            found = _installed("torch", "torch") if "torch" not in sys.modules else None
            if found is None:
                torch, why = backend_kit.import_framework("torch")
                version = str(getattr(torch, "__version__", "(unknown version)"))
                found = (
                    Availability(True, version=version)
                    if torch
                    else Availability(False, f"torch {why}")
                )
            compat = _installed("array_api_compat", "array-api-compat")
            if found and compat is not None and not compat:
                found = Availability(False, f"{compat.reason} (pip install array-api-compat)")
            self._availability = found
        return self._availability

    def can_drive(self, device: DeviceDescription) -> RequirementMatch:
        """CPUs, and the accelerators of the vendors the installed build has a backend for
        (``prism_plugin_torch.build``: an AMD GPU exactly where torch is a ROCm build, an
        NVIDIA GPU where it is not, an Intel GPU with an XPU build, an Apple GPU with MPS, an
        Ascend NPU with torch_npu), with kernels for the device's architecture where torch has
        said which it has, and that backend available at run time.  On a simulated device (a
        ``prism_core.device(..., simulate=True)`` scope, ``prism explain --device``) the run
        time is not asked: the description and the build decide, so that choices can be
        checked without the hardware (and a CPU-only build is checked as its CUDA build would
        be on an NVIDIA GPU; ``build.lacks``).  A build that lacks the vendor's backend is
        said without importing torch."""
        from prism_core import current_scope
        from prism_core.hardware import Requirement

        cpu = Requirement(_CPU).match(device)
        if cpu:
            return cpu
        target = _build.target_of(device.vendor)
        if target is None:
            return RequirementMatch(
                False,
                (
                    "torch drives CPUs, NVIDIA and AMD GPUs (cuda), Intel GPUs (xpu), Apple GPUs "
                    f"(mps) and Huawei Ascend NPUs (npu); vendor is {device.vendor!r}",
                ),
            )
        accelerator = Requirement({"kind": ACCELERATORS[target]["kind"]}).match(device)
        if not accelerator:
            return RequirementMatch(
                False,
                (
                    f"torch drives {_build.vendor_name(device.vendor or '')} only; "
                    + "; ".join(accelerator.reasons),
                ),
            )
        simulated = current_scope().simulated
        why = _build.lacks(device.vendor, simulated=simulated) or _build.arch_lacks(device)
        if why is not None:
            return RequirementMatch(False, (why,))
        if simulated:
            return accelerator
        why = target_unavailable(target)
        if why is not None:
            runtime = "ROCm" if device.vendor == "amd" else _RUNTIMES[target]
            return RequirementMatch(False, (f"{runtime} is not available: {why}",))
        return accelerator

    def dtypes(self, device: DeviceDescription | None = None) -> frozenset[str] | None:
        """Every dtype, but on an Apple GPU (MPS) :data:`MPS_HOLDS`: no float64 or complex128,
        which Metal lacks, so dispatch never sends them there."""
        if device is not None and device.vendor == "apple" and device.kind == "gpu":
            return MPS_HOLDS
        return None

    def accelerators(self) -> dict[str, str]:
        """Each accelerator present here (``prism_core.hardware.present_devices``) with what
        drives it (``"torch.cuda"``) or why torch cannot, naming what to install (an AMD GPU
        beside a CPU-only or CUDA build: the ROCm build): what ``prism doctor`` shows.  Imports
        torch only where the build has the device's backend (its run time is then asked)."""
        from prism_core.hardware import present_devices

        found: dict[str, str] = {}
        for instance in present_devices().devices:
            device = instance.description
            if device.kind == "cpu" or device.device_type in found:
                continue
            verdict = self.can_drive(device)
            target = _build.target_of(device.vendor)
            found[device.device_type] = (
                f"driven: torch.{target}" if verdict and target else "; ".join(verdict.reasons)
            )
        return found

    def capabilities(self) -> dict[str, Any]:
        """torch's version, what it was built for (``build``), the accelerators present and
        whether it drives them (:meth:`accelerators`), its CUDA (or that it is a CPU-only
        build), threads, devices and the MKL/OpenMP summary of
        ``torch.__config__.parallel_info()``; only the version, the build, the accelerators
        and why CUDA is unavailable where torch is not imported yet and no driver of the
        build's GPUs (NVIDIA's, AMD's on a ROCm build) is here."""
        version = self.availability().version
        facts = _build.torch_build()
        built = {
            "cuda": facts.cuda,
            "hip": facts.hip,
            "xpu": facts.xpu,
            "mps": facts.mps,
            "torch_npu": facts.npu,
            "read_from": facts.source,
        }
        accelerators = self.accelerators()
        if "torch" not in sys.modules:
            # The driver torch.cuda would use: AMD's on a ROCm build, else NVIDIA's.
            from prism_core import amd_smi, nvidia_smi

            why_not = (amd_smi if facts.hip else nvidia_smi).driver_absent()
            if why_not is not None:
                return {
                    "torch": version,
                    "imported": False,
                    "build": built,
                    "accelerators": accelerators,
                    "cuda_available": False,
                    "cuda_reason": why_not,
                }
        import torch

        why = _runtime.cuda_unavailable()
        devices = ["cpu"]
        if why is None:
            devices += [
                f"cuda:{i} {torch.cuda.get_device_name(i)}"
                for i in range(torch.cuda.device_count())
            ]
        # The libraries' lines of the summary, not its thread counts and environment variables
        # (threads are reported above).
        parallel = [
            line.strip()
            for line in torch.__config__.parallel_info().splitlines()
            if line.strip().startswith(("ATen parallel backend", "OpenMP", "Intel(R)"))
        ]
        return {
            "torch": torch.__version__,
            "build": built,
            "accelerators": accelerators,
            "namespace": self.namespace,
            "cuda": torch.version.cuda or "CPU-only build",
            "cuda_available": why is None,
            **({} if why is None else {"cuda_reason": why}),
            "threads": {
                "intra_op": torch.get_num_threads(),
                "inter_op": torch.get_num_interop_threads(),
            },
            "devices": devices,
            "mkl": bool(torch.backends.mkl.is_available()),
            "openmp": bool(torch.backends.openmp.is_available()),
            "parallel": parallel,
            "matmul_allow_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "transfer": self.transfer,
        }

    # -- arrays -------------------------------------------------------------------------------
    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a tensor; imports nothing (no tensor exists before torch)."""
        if not type(value).__module__.startswith("torch"):
            return False
        torch = sys.modules.get("torch")
        return torch is not None and isinstance(value, torch.Tensor)

    def where(self, array: Any) -> str:
        """The target a tensor lives on: ``"cuda"`` (an NVIDIA or AMD GPU), ``"xpu"``,
        ``"mps"``, ``"npu"``, else ``"cpu"`` (``is_cuda`` first: the common case, and cheaper
        than reading ``device.type``, which is read only where the build has another
        accelerator: its tensors cannot be elsewhere)."""
        if array.is_cuda:
            return "cuda"
        if self._host_only:
            return "cpu"  # a build without XPU, MPS or torch_npu: the hot path of CPU tensors
        if self._host_only is None:
            facts = _build.torch_build()
            self._host_only = not (facts.xpu or facts.mps or facts.npu)
        kind = array.device.type
        return kind if kind in ACCELERATORS else "cpu"

    def device_for(self, target: Target) -> Any:
        """The torch device of ``target``; for ``npu``, torch_npu is imported first (it
        registers the device type), and its absence is an ``ImportError`` saying to install
        it."""
        found = self._devices.get(target.name)
        if found is not None:
            return found
        import torch

        if target.name == "npu":
            import_torch_npu()
        # One object per target: place knows the CPU by identity (a torch.device's .type
        # costs a fifth of a microsecond, on every call).
        return self._devices.setdefault(target.name, torch.device(target.name))

    def native_dtype(self, value: Any) -> Any:
        return torch_dtype(value)

    def default_device(self) -> Any:
        """Where new tensors go: the accelerator the scope names where torch can use it here
        (``cuda``, ``xpu``, ``mps``, ``npu``), else the CPU."""
        import torch

        from prism_core import current_scope

        scope_device = current_scope().device
        target = _build.target_of(scope_device.vendor) if scope_device is not None else None
        if (
            target is not None
            and scope_device is not None
            and scope_device.kind != "cpu"
            and _build.lacks(scope_device.vendor) is None
            and target_unavailable(target) is None
        ):
            return torch.device(target)
        return torch.device("cpu")

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        """A tensor holding ``obj`` on the device in scope, sharing memory where it can (a
        NumPy array on the CPU); lists and scalars get NumPy's dtypes (float64, int64)."""
        tensor = to_tensor(obj, self.default_device())
        wanted = torch_dtype(dtype)
        return tensor if wanted is None else tensor.to(wanted)

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array sharing a CPU tensor's memory (a GPU tensor's copied to the host);
        ``TypeError`` for bfloat16 and the float8 types, which NumPy lacks."""
        if not self.owns(array):
            import numpy as np

            return np.asarray(array)
        tensor = array.detach()
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        tensor = tensor.resolve_conj().resolve_neg()
        try:
            return tensor.numpy()
        except TypeError as exc:  # "Got unsupported ScalarType BFloat16"
            name = backend_kit.dtype_name(tensor.dtype)
            raise TypeError(
                f"to_numpy: NumPy has no {name}; convert the tensor first, for example with "
                "prism_core.asarray(x, dtype=prism_core.float32)"
            ) from exc

    def from_dlpack(self, obj: Any) -> Any:
        """``obj`` as a tensor, sharing its memory through DLPack where it can."""
        return to_tensor(obj)

    def to_device(self, value: Any, device: DeviceDescription | None = None) -> Any:
        """``value`` as a tensor on the current device of ``device``'s target (``cuda`` for an
        NVIDIA or AMD GPU, ``xpu``, ``mps``, ``npu``), else on the CPU."""
        import torch

        target = None
        if device is not None and device.kind != "cpu":
            target = _build.target_of(device.vendor)
        return to_tensor(value, torch.device(target or "cpu"))

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        import torch

        return torch.empty(tuple(shape), dtype=torch_dtype(dtype), device=self.default_device())

    def pinned_empty(self, shape: Sequence[int], dtype: Any) -> Any | None:
        """A NumPy array over a CPU tensor's page-locked memory, which CUDA copies to and from
        without staging (torch finds a tensor made from it pinned: it asks CUDA about the
        pointer); ``None`` where torch has no CUDA device (nothing to pin memory for)."""
        if _runtime.cuda_unavailable() is not None:
            return None
        import torch

        return torch.empty(tuple(shape), dtype=torch_dtype(dtype), pin_memory=True).numpy()

    # -- how the namespace's functions are called ---------------------------------------------
    def creation_device(self, given: Any, device: Any) -> Any:
        # A creation function's device=: "cpu" and Prism's descriptions read as torch's
        # devices (the base passes only a library's own device objects through).
        import torch

        return torch_device(given, device if device is not None else torch.device("cpu"))

    def function(self, op: str, target: Target | None = None) -> Callable[..., Any]:
        fn = super().function(op, target)
        if op in ("triu_indices", "random.normal") and target not in (None, self.targets[0]):
            # Creation ops beyond the standard, which the base passes no device= to.
            return functools.partial(fn, device=self.device_for(target))
        return fn

    def place(self, args: tuple[Any, ...], kwargs: dict[str, Any], device: Any) -> Any:
        # Host arrays (also given directly, as the conformance suite gives keyword arrays)
        # enter through to_tensor, not torch.asarray, which aborts on a NumPy view with
        # negative strides (DLPack) and shares read-only memory writable; tensors on the CPU
        # stay where they are, and so do tensors on an accelerator for its target (checked
        # first: the common case; ``device`` is ``cuda``, the current GPU, which a tensor's
        # ``cuda:0`` does not equal, and a tensor on another GPU stays there, as torch computes
        # it).  ``is_cuda`` answers for the cuda target, cheaper than ``device.type``.
        tensor = sys.modules["torch"].Tensor
        cpu = device is self._devices.get("cpu")
        cuda = device is self._devices.get("cuda")
        if not kwargs:
            for a in args:
                if type(a) is tensor:
                    if not cpu and not (a.is_cuda if cuda else a.device.type == device.type):
                        break
                elif type(a) not in _SCALARS:
                    break
            else:
                return args, kwargs
        cpu = device.type == "cpu"
        kind = device.type

        def move(value: Any) -> Any:
            if type(value) is tensor and (cpu or value.device.type == kind):
                return value
            if hasattr(value, "shape") and hasattr(value, "dtype"):
                return to_tensor(value, device)
            if type(value) in (list, tuple) and any(hasattr(v, "dtype") for v in value):
                return type(value)(move(v) for v in value)
            return value

        moved = tuple(move(a) for a in args)
        return moved, ({k: move(v) for k, v in kwargs.items()} if kwargs else kwargs)

    def placement(self, op: str, target: Target) -> Callable[..., bool | str]:
        # torch's own words for where a call runs (and creation without a named device stays
        # on the CPU, as torch.zeros does): see prism_plugin_torch.variants.
        from .variants import accelerator_check, host_check

        return host_check(op) if target is self.targets[0] else accelerator_check(op, target.name)

    # -- the numerics protocol ------------------------------------------------------------------
    def requires_grad(self, x: Any, flag: bool = True) -> Any:
        """A new leaf tensor sharing ``x``'s memory that tracks gradients (``flag``) or not;
        ``x`` itself is left as it is (returned where it tracks them already)."""
        tensor = to_tensor(x)
        if not flag:
            return tensor.detach()
        if tensor.requires_grad:
            return tensor
        if not (tensor.is_floating_point() or tensor.is_complex()):
            raise TypeError(
                f"requires_grad: only floating-point and complex arrays can track gradients; "
                f"x is {backend_kit.dtype_name(tensor.dtype)}"
            )
        return tensor.detach().requires_grad_(True)

    def detach(self, x: Any) -> Any:
        """``x`` cut from the gradient graph (a tensor sharing its memory)."""
        return to_tensor(x).detach()

    def value_and_grad(
        self, fn: Callable[..., Any], argnums: int | tuple[int, ...]
    ) -> Callable[..., Any]:
        """``fn``'s value and gradients by torch.autograd (``numerics.value_and_grad``)."""
        from .numerics import value_and_grad

        return value_and_grad(fn, argnums)

    def vmap(
        self, fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0
    ) -> Callable[..., Any]:
        """``fn`` vectorised by ``torch.func.vmap`` (``numerics.vmap``)."""
        from .numerics import vmap

        return vmap(fn, in_axes, out_axes)

    # -- execution ----------------------------------------------------------------------------
    def synchronize(self, *arrays: Any) -> None:
        """Wait for the accelerators' queued work: the GPU's once CUDA (or ROCm) is in use, and
        that of the other devices ``arrays`` are on (XPU, MPS, NPU); none on the CPU."""
        torch = sys.modules.get("torch")
        if torch is None:
            return
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
        kinds = {a.device.type for a in arrays if self.owns(a)} - {"cpu", "cuda"}
        for kind in sorted(kinds):
            module = getattr(torch, kind, None)
            sync = getattr(module, "synchronize", None)
            if sync is not None:
                sync()
