"""The ``cuda`` backend (alias ``cupy``): NVIDIA GPUs through CuPy.

CuPy is not imported when this module is imported, nor when the backend is created: the first
call to :meth:`CudaBackend.availability` (or to an array method) imports it, and the backend
keeps the module.  :meth:`CudaBackend.owns` and :meth:`CudaBackend.is_native` never import it.

Arguments and results: the variants (``prism_plugin_cuda.ops``) take CuPy arrays and Python
scalars as they are (:meth:`CudaBackend.is_native`); the dispatcher moves every other array
(NumPy arrays, torch tensors, ...) to the GPU through :meth:`CudaBackend.to_device` before
calling them.  Results are CuPy arrays on the GPU; :meth:`CudaBackend.to_numpy` copies them
back (in automatic mode the dispatcher does so for NumPy callers).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from prism_core import Availability, Backend
from prism_core.backend_kit import first_line, import_framework

if TYPE_CHECKING:
    from prism_core import DeviceDescription

__all__ = ["BFLOAT16_MESSAGE", "NOT_INSTALLED", "CudaBackend", "CudaUnavailableError", "cupy_dtype"]

#: The reason the backend gives where CuPy is not installed.
NOT_INSTALLED = "cupy is not installed (pip install cupy-cuda12x)"
BFLOAT16_MESSAGE = (
    "the cuda backend has no bfloat16 arrays (CuPy's support is experimental); use float16 or "
    "float32, or the torch backend"
)
#: DLPack device types of memory the host CPU owns (kDLCPU, kDLCUDAHost: pinned host memory).
_DLPACK_HOST_DEVICES = frozenset({1, 3})
_SCALARS = (bool, int, float, complex)


class CudaUnavailableError(RuntimeError):
    """An array method of the ``cuda`` backend was called on a host where it cannot run."""


def cupy_dtype(value: Any) -> Any:
    """The NumPy dtype (which CuPy uses) for a ``dtype=`` argument: a Prism dtype, a NumPy or
    torch dtype, a Python type or a name (Prism's, ``"fp32"`` included, or NumPy's); ``None``
    stays ``None``.  bfloat16 is a ``TypeError``; so is a name neither Prism nor NumPy knows."""
    if value is None:
        return None
    import numpy as np

    from prism_core import dtype as prism_dtype

    try:
        found = prism_dtype(value)
    except (TypeError, ValueError):
        return np.dtype(value)  # NumPy's own names ("f4"), or NumPy's TypeError
    if found.name == "bfloat16":
        raise TypeError(BFLOAT16_MESSAGE)
    return np.dtype("bool" if found.name == "bool_" else found.name)


def _is_cupy_type(value: Any) -> bool:
    return type(value).__module__.partition(".")[0] == "cupy"


class CudaBackend(Backend):
    """NVIDIA GPUs through CuPy: arrays are CuPy arrays on the current CUDA device."""

    name = "cuda"
    aliases = ("cupy",)
    priority = 10
    transfer = "dlpack"  # cupy.from_dlpack shares device memory (host arrays are copied over)
    description = "NVIDIA GPUs through CuPy"
    drives: Mapping[str, Any] = MappingProxyType({"vendor": "nvidia", "kind": "gpu"})

    def __init__(self) -> None:
        # Creating the backend must be cheap: nothing is imported or probed here.
        self._availability: Availability | None = None
        self._module: ModuleType | None = None
        #: Device types to_device has found this backend drives (dispatch moves every
        #: argument of every call through it: match each description once).
        self._driven: set[str] = set()

    # -- availability -------------------------------------------------------------------------
    def availability(self) -> Availability:
        """Whether CuPy is importable and sees a GPU; the reason says exactly why not: CuPy
        not installed, installed but failing to import (a missing CUDA library), or imported
        but without a device (CUDA's own message: no driver, a driver too old, no GPU)."""
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def _probe(self) -> Availability:
        module, why = import_framework("cupy")
        if module is None:
            return Availability(False, NOT_INSTALLED if why == "not installed" else f"cupy {why}")
        version = str(getattr(module, "__version__", "(unknown version)"))
        try:
            count = int(module.cuda.runtime.getDeviceCount())
        except Exception as exc:  # cupy_backends.cuda.api.runtime.CUDARuntimeError
            return Availability(
                False, f"cupy {version} is installed but CUDA is not available: {first_line(exc)}"
            )
        if count < 1:
            return Availability(False, f"cupy {version} is installed but found no CUDA device")
        self._module = module
        return Availability(True, version=version)

    def _cupy(self) -> ModuleType:
        state = self.availability()
        if not state or self._module is None:
            raise CudaUnavailableError(f"backend 'cuda' is not available: {state.reason}")
        return self._module

    def capabilities(self) -> dict[str, Any]:
        """CuPy's version, the CUDA runtime and driver versions, and each GPU CuPy sees."""
        state = self.availability()
        if not state:
            return {"available": False, "reason": state.reason}
        runtime = self._cupy().cuda.runtime
        devices = []
        for i in range(int(runtime.getDeviceCount())):
            props = runtime.getDeviceProperties(i)
            raw = props["name"]
            devices.append(
                {
                    "index": i,
                    "name": raw.decode() if isinstance(raw, bytes) else str(raw),
                    "compute_capability": f"{props['major']}.{props['minor']}",
                    "memory_bytes": int(props["totalGlobalMem"]),
                }
            )
        return {
            "framework": "cupy",
            "version": state.version,
            "cuda_runtime": int(runtime.runtimeGetVersion()),
            "cuda_driver": int(runtime.driverGetVersion()),
            "devices": devices,
        }

    # -- arrays -------------------------------------------------------------------------------
    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a CuPy array (its type comes from the ``cupy`` package); reads
        the type's module only, so it never imports CuPy."""
        return _is_cupy_type(value)

    def is_native(self, value: Any) -> bool:
        """Whether the variants take ``value`` as it is: CuPy arrays, and Python scalars (CuPy
        keeps their weak type promotion, as NumPy does).

        Everything else (NumPy arrays, torch tensors, lists) is moved to the GPU by the
        dispatcher through :meth:`to_device`.  Never raises, and never imports CuPy: before
        :meth:`availability` has found it, CuPy arrays are recognised by their type's module.
        """
        if isinstance(value, _SCALARS):
            return True
        module = self._module
        if module is None:
            return _is_cupy_type(value)
        return isinstance(value, module.ndarray)

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        """A CuPy array holding ``obj`` (copied to the GPU when it is elsewhere)."""
        return self._cupy().asarray(obj, dtype=cupy_dtype(dtype))

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array with the contents of ``array`` (copied to the host)."""
        return self._cupy().asnumpy(array)

    def from_dlpack(self, obj: Any) -> Any:
        """Import ``obj`` through DLPack: zero copy for arrays in GPU memory (a torch CUDA
        tensor shares its memory), a copy to the GPU for host arrays (NumPy arrays, CPU
        tensors); objects without DLPack (lists, scalars) go through :meth:`asarray`."""
        cupy = self._cupy()
        if not hasattr(obj, "__dlpack__"):
            return self.asarray(obj)
        device = getattr(obj, "__dlpack_device__", None)
        if device is not None and int(device()[0]) in _DLPACK_HOST_DEVICES:
            import numpy as np

            try:
                host = np.from_dlpack(obj)
            except (BufferError, TypeError):  # read-only or byte-swapped arrays: NumPy's copy
                host = np.asarray(obj)
            return cupy.asarray(host)
        return cupy.from_dlpack(obj)

    def to_device(self, value: Any, device: DeviceDescription | None = None) -> Any:
        """``value`` as a CuPy array on the current CUDA device (:meth:`from_dlpack`).

        ``device`` is the description the chosen variant runs on; it must be one this backend
        drives (an NVIDIA GPU).  Descriptions say which kind of GPU, not which of the host's
        GPUs, so arrays go to CuPy's current device (``cupy.cuda.Device()``; choose another
        with ``with cupy.cuda.Device(1): ...``).
        """
        if device is not None and device.device_type not in self._driven:
            match = self.can_drive(device)
            if not match:
                raise ValueError(
                    f"to_device: backend 'cuda' places arrays on NVIDIA GPUs; device "
                    f"{device.device_type!r} is not one ({match.explain()})"
                )
            self._driven.add(device.device_type)
        return self.from_dlpack(value)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        """An uninitialised CuPy array on the current CUDA device."""
        return self._cupy().empty(tuple(shape), dtype=cupy_dtype(dtype))

    # -- execution ----------------------------------------------------------------------------
    def synchronize(self, *arrays: Any) -> None:
        """Wait until the current CUDA device has finished all submitted work (``arrays``
        included)."""
        self._cupy().cuda.runtime.deviceSynchronize()
