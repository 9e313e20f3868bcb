"""The ``torch`` backend: PyTorch on the host CPU and on NVIDIA GPUs through CUDA.

Importing this module, creating the backend and asking :meth:`TorchBackend.owns` or
:meth:`TorchBackend.is_native` import no torch: plugin discovery and ``prism plugins`` stay
cheap.  Importing torch takes about a second, so :meth:`TorchBackend.availability` and
:meth:`TorchBackend.capabilities` answer from the installed package where torch is not imported
yet and no NVIDIA driver is here (``prism doctor``, ``prism backends`` and ``prism explain`` stay
fast); the array methods import it, and so does a question about CUDA where a GPU may be.

Where arrays live: torch tensors stay where they are.  :meth:`TorchBackend.asarray` and
:meth:`TorchBackend.empty` make tensors on the device in scope (a GPU when
``prism_core.device(...)`` names one and CUDA is there, else the CPU);
:meth:`TorchBackend.to_device` puts an argument on the device of the variant that runs it.  On
the CPU, NumPy arrays and tensors share memory both ways (:meth:`TorchBackend.from_dlpack`,
:meth:`TorchBackend.to_numpy`); a copy is made only where memory cannot or must not be shared
(a GPU, a byte-swapped or read-only array, a view with negative strides).
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

import prism_core.backend_kit as backend_kit
from prism_core import Availability, Backend, RequirementMatch

if TYPE_CHECKING:
    from prism_core import DeviceDescription

__all__ = ["TorchBackend", "cuda_unavailable", "to_tensor", "torch_dtype"]

#: The devices the backend runs on, as a requirement: CPUs and GPUs; :meth:`can_drive` narrows
#: the GPUs to NVIDIA's, with CUDA available to torch.
_DRIVES: Mapping[str, Any] = MappingProxyType({"kind": ("cpu", "gpu")})
_CPU: Mapping[str, Any] = {"kind": "cpu"}
_NVIDIA_GPU: Mapping[str, Any] = {"vendor": "nvidia", "kind": "gpu"}
#: Python scalars (exactly: NumPy scalars subclass float and int, but are strongly typed).
_SCALARS = frozenset({bool, int, float, complex})


@functools.lru_cache(maxsize=1)
def cuda_unavailable() -> str | None:
    """``None`` when torch can use a CUDA GPU here, else why not, in torch's words where it has
    them (``"torch 2.13.0+cpu is a CPU-only build (torch.version.cuda is None)"``).  Asked once
    per process: a CUDA runtime does not appear while Python runs."""
    torch, why = backend_kit.import_framework("torch")
    if torch is None:
        return f"torch {why}"
    version = getattr(torch, "__version__", "(unknown version)")
    try:
        if getattr(getattr(torch, "version", None), "cuda", None) is None:
            return f"torch {version} is a CPU-only build (torch.version.cuda is None)"
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            available = bool(torch.cuda.is_available())
        if available:
            return None
        if caught:  # "CUDA initialization: The NVIDIA driver on your system is too old ..."
            return f"torch {version}: {backend_kit.first_line(RuntimeWarning(caught[0].message))}"
        try:
            torch.cuda.init()
        except Exception as exc:  # "Found no NVIDIA driver on your system. ..."
            return f"torch {version}: {backend_kit.first_line(exc)}"
        return f"torch {version} finds no CUDA device (torch.cuda.device_count() is 0)"
    except Exception as exc:
        return f"torch {version}: {type(exc).__name__}: {backend_kit.first_line(exc)}"


def _installed_torch() -> Availability | None:
    """What the installed packages say about torch without importing it: not installed, or
    available at its distribution's version; ``None`` where only importing it can tell (a
    module without metadata, an import hook that fails otherwise)."""
    import importlib.util

    try:
        if importlib.util.find_spec("torch") is None:
            return Availability(False, "torch not installed")
    except ModuleNotFoundError:
        return Availability(False, "torch not installed")
    except Exception:
        return None
    import importlib.metadata

    try:
        return Availability(True, version=importlib.metadata.version("torch"))
    except Exception:
        return None


def _torch() -> ModuleType:
    """torch, imported (the array methods run only where :meth:`availability` said yes)."""
    import torch

    return torch


@functools.cache
def _dtype_by_name(name: str) -> Any:
    torch = _torch()
    found = getattr(torch, "bool" if name in ("bool_", "bool") else name, None)
    if not isinstance(found, torch.dtype):
        raise TypeError(f"torch has no data type {name!r}")
    return found


def torch_dtype(value: Any) -> Any:
    """The torch dtype for a ``dtype=`` argument: a torch dtype, a Prism dtype, a NumPy dtype
    or scalar type, a Python type or a name (Prism's, ``"fp32"`` included, or NumPy's);
    ``None`` stays ``None``.  ``TypeError`` for what is no data type, or one torch lacks."""
    if value is None:
        return None
    torch = _torch()
    if isinstance(value, torch.dtype):
        return value
    import prism_core

    try:
        name = prism_core.dtype(value).name
    except (TypeError, ValueError):
        import numpy as np

        try:
            name = np.dtype(value).name  # NumPy's own names ("f4", "<i2"), uint16, ...
        except TypeError:
            raise TypeError(
                f"dtype: {value!r} is not a data type (give a Prism dtype such as "
                "prism_core.float32, a NumPy or torch dtype, or a name such as 'float32')"
            ) from None
    return _dtype_by_name(name)


def _host_tensor(obj: Any) -> Any:
    """A tensor with the contents of an object that is not a tensor: NumPy arrays and other
    DLPack exporters share their memory; read-only arrays (torch cannot protect them), what
    DLPack refuses (byte-swapped arrays, negative strides) and what is no array (lists,
    scalars: NumPy infers the dtype, as in NumPy) are copied."""
    torch = _torch()
    import numpy as np

    strides = getattr(obj, "strides", None)
    if isinstance(strides, tuple) and any(s < 0 for s in strides):
        # torch 2.13 aborts the process (a C++ error, not an exception) when DLPack hands it
        # negative strides (a reversed view, x[::-1]); a copy has positive ones.
        if not isinstance(obj, np.ndarray) and hasattr(obj, "copy"):
            return torch.from_dlpack(obj.copy())
        obj = np.array(obj, copy=True)
    if isinstance(obj, np.ndarray) and not obj.flags.writeable:
        # torch would share it and could write into it (tensors have no read-only flag).
        obj = obj.copy()
    if hasattr(obj, "__dlpack__"):
        try:
            return torch.from_dlpack(obj)
        except (BufferError, TypeError, RuntimeError):
            # Byte-swapped or otherwise unexportable: copy into native byte order below.
            pass
    array = np.asarray(obj)
    if array.dtype.byteorder not in ("=", "|"):
        array = array.astype(array.dtype.newbyteorder("="))
    if array.dtype.hasobject or array.dtype.kind in "OUSVMm":
        raise TypeError(f"torch cannot hold an array of dtype {array.dtype} ({obj!r:.60})")
    if not array.flags.writeable or array is obj:
        # Read-only memory torch cannot protect (it warns), or the caller's own array that
        # DLPack refused: a copy.
        array = array.copy()
    return torch.from_numpy(array)


def to_tensor(obj: Any, device: Any = None) -> Any:
    """``obj`` as a tensor (on ``device`` when given, else where it is: tensors stay on their
    device, anything else comes to the CPU)."""
    torch = _torch()
    tensor = obj if isinstance(obj, torch.Tensor) else _host_tensor(obj)
    if device is not None and tensor.device != device:
        tensor = tensor.to(device)
    return tensor


class TorchBackend(Backend):
    """PyTorch on the host CPU and on NVIDIA GPUs (CUDA).

    Arrays are ``torch.Tensor`` on the CPU or on the current CUDA device.  The variants take
    tensors and Python scalars as they are (:meth:`is_native`); dispatch moves every other
    array argument with :meth:`to_device`.
    """

    name = "torch"
    thread_modules = ("torch",)
    transfer = "dlpack"  # CPU tensors and NumPy arrays share memory both ways
    aliases = ("pytorch",)
    priority = 0
    description = "PyTorch on the host CPU and on NVIDIA GPUs (CUDA)"
    drives: Mapping[str, Any] = _DRIVES

    def __init__(self) -> None:
        # Creating the backend must be cheap: nothing is imported or probed here.
        self._availability: Availability | None = None

    # -- identity and availability ------------------------------------------------------------
    def availability(self) -> Availability:
        """Available where torch is installed; the reason says why not (not installed, or the
        error of an installed torch that cannot load).  CUDA is not needed: without it the
        backend runs on the CPU, and :meth:`can_drive` says why it does not drive the GPUs.

        Until something imports torch, an installed torch is taken at its package's word (the
        version of its metadata) instead of being imported; an installed torch that cannot load
        then fails at its first op, and dispatch falls back with the import error."""
        if self._availability is None and "torch" not in sys.modules:
            self._availability = _installed_torch()
        if self._availability is None:
            torch, why = backend_kit.import_framework("torch")
            if torch is None:
                self._availability = Availability(False, f"torch {why}")
            else:
                version = str(getattr(torch, "__version__", "(unknown version)"))
                self._availability = Availability(True, version=version)
        return self._availability

    def can_drive(self, device: DeviceDescription) -> RequirementMatch:
        """CPUs, and NVIDIA GPUs where torch can use CUDA.  On a simulated device (a
        ``prism_core.device(..., simulate=True)`` scope, ``prism explain --device``) the
        description alone decides, so that choices can be checked without the hardware."""
        from prism_core import Requirement, current_scope

        cpu = Requirement(_CPU).match(device)
        if cpu:
            return cpu
        gpu = Requirement(_NVIDIA_GPU).match(device)
        if not gpu:
            return RequirementMatch(
                False, (f"torch drives CPUs and NVIDIA GPUs; {'; '.join(gpu.reasons)}",)
            )
        if current_scope().simulated:
            return gpu
        why = cuda_unavailable()
        if why is not None:
            return RequirementMatch(False, (f"CUDA is not available: {why}",))
        return gpu

    def capabilities(self) -> dict[str, Any]:
        """torch's version, its CUDA (or that it is a CPU-only build), threads, devices, and
        the MKL/OpenMP summary of ``torch.__config__.parallel_info()``.

        Where torch is not imported yet and no NVIDIA driver is here, its version and that CUDA
        is unavailable (and why) only: torch is not imported to say so."""
        version = self.availability().version
        if "torch" not in sys.modules:
            from prism_core.nvidia_smi import driver_absent

            why_not = driver_absent()
            if why_not is not None:
                return {
                    "torch": version,
                    "imported": False,
                    "cuda_available": False,
                    "cuda_reason": why_not,
                }
        torch = _torch()
        why = cuda_unavailable()
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
        }

    # -- arrays -------------------------------------------------------------------------------
    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a torch tensor; imports nothing (a tensor cannot exist before
        torch is imported)."""
        if not type(value).__module__.startswith("torch"):
            return False
        torch = sys.modules.get("torch")
        return torch is not None and isinstance(value, torch.Tensor)

    def is_native(self, value: Any) -> bool:
        """Tensors (on any device: the variants' ``can_run`` decide by device) and Python
        scalars, which torch takes as they are (weakly typed, as in NumPy)."""
        return type(value) in _SCALARS or self.owns(value)

    def default_device(self) -> Any:
        """Where new tensors go: the GPU when the scope names one and CUDA is here, else the
        CPU."""
        from prism_core import current_scope

        torch = _torch()
        scope_device = current_scope().device
        if scope_device is not None and scope_device.kind == "gpu" and cuda_unavailable() is None:
            return torch.device("cuda")
        return torch.device("cpu")

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        """A tensor holding ``obj`` on the device in scope, sharing memory where it can (a
        NumPy array on the CPU); lists and scalars get NumPy's dtypes (float64, int64)."""
        tensor = to_tensor(obj, self.default_device())
        wanted = torch_dtype(dtype)
        return tensor if wanted is None else tensor.to(wanted)

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array with the contents of ``array``: a CPU tensor shares its memory (no
        copy), a GPU tensor is copied to the host.  bfloat16 and the float8 types, which NumPy
        lacks, are a ``TypeError``: convert them first (``asarray(x, dtype=float32)``)."""
        torch = sys.modules.get("torch")
        if torch is None or not isinstance(array, torch.Tensor):
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
        """``obj`` as a tensor through DLPack, sharing memory where the devices allow (a NumPy
        array on the CPU, a CuPy array on the GPU); what DLPack refuses (a byte-swapped array)
        and objects without DLPack (lists, scalars) are copied."""
        return to_tensor(obj)

    def to_device(self, value: Any, device: DeviceDescription | None = None) -> Any:
        """``value`` as a tensor on ``device``: the current CUDA device for a GPU
        (``device.kind == "gpu"``), else the CPU (also for ``None``)."""
        torch = _torch()
        on_gpu = device is not None and device.kind == "gpu"
        return to_tensor(value, torch.device("cuda" if on_gpu else "cpu"))

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        torch = _torch()
        return torch.empty(tuple(shape), dtype=torch_dtype(dtype), device=self.default_device())

    # -- the numerics protocol ------------------------------------------------------------------
    def requires_grad(self, x: Any, flag: bool = True) -> Any:
        """``x`` as a tensor that tracks gradients (``flag``) or does not.  A new leaf tensor
        sharing ``x``'s memory is returned; ``x`` itself is left as it is (a tensor that
        tracks gradients already is returned unchanged for ``flag=True``)."""
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
        """``fn``'s value and its gradients by torch.autograd.

        The returned function takes ``fn``'s arguments; those at ``argnums`` become tensors
        that track gradients (NumPy arrays and Python numbers as float64 tensors, complex128
        for complex data; tensors keep their floating-point dtype, integer tensors become
        float64), the others pass as they are.  ``fn`` must compute with Prism's ops (which
        dispatch to torch for tensors) or torch, and return a scalar.  It returns ``(value,
        grads)``: ``grads`` is one tensor when ``argnums`` is an int, a tuple when it is a
        tuple (as in JAX).
        """
        from .numerics import value_and_grad

        return value_and_grad(fn, argnums)

    def vmap(
        self, fn: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0
    ) -> Callable[..., Any]:
        """``fn`` vectorised with ``torch.func.vmap`` (``in_axes``/``out_axes`` as its
        ``in_dims``/``out_dims``); NumPy array arguments become tensors first."""
        from .numerics import vmap

        return vmap(fn, in_axes, out_axes)

    # -- execution ----------------------------------------------------------------------------
    def synchronize(self, *arrays: Any) -> None:
        """Wait for the GPU's queued work, ``arrays``' included (nothing to wait for on the CPU,
        or before CUDA is used)."""
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_initialized():
            torch.cuda.synchronize()
