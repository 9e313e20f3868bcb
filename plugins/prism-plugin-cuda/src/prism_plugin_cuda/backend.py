"""The ``cuda`` backend: NVIDIA GPUs through CuPy if it is importable, else torch with CUDA.

Neither framework is imported when this module is imported or when the backend is created: the
first call to :meth:`CudaBackend.availability` (or to an array method) imports them.  The
framework is chosen once per backend instance, and every array method uses that framework, as do
the plugin's variants (``prism_plugin_cuda.ops``, through :meth:`CudaBackend.framework_module`).

Arguments and results: the variants take the framework's own GPU arrays as they are
(:meth:`CudaBackend.is_native`); the dispatcher moves every other array (NumPy arrays, torch
tensors on the CPU, ...) to the GPU through :meth:`CudaBackend.from_dlpack` before calling them.
Results stay on the GPU as framework arrays; :meth:`CudaBackend.to_numpy` copies them back.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import Any

from prism_core import Availability, Backend

__all__ = ["CudaBackend", "CudaUnavailableError"]

#: DLPack device types of memory the host CPU owns (kDLCPU, kDLCUDAHost: pinned host memory).
_DLPACK_HOST_DEVICES = frozenset({1, 3})


class CudaUnavailableError(RuntimeError):
    """An array method of the ``cuda`` backend was called on a host where it cannot run."""


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    line = text.splitlines()[0].strip() if text else ""
    return line or type(exc).__name__


def _import(name: str) -> tuple[ModuleType | None, str | None]:
    """Import a framework: (module, None), or (None, why not) where ``why`` is a clause.

    A framework that is not installed gives ``"not installed"``; one that is installed but
    breaks on import (a missing CUDA library, a version clash) gives the error.
    """
    import importlib

    try:
        return importlib.import_module(name), None
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None, "not installed"
        return None, f"cannot be imported: {type(exc).__name__}: {_first_line(exc)}"
    except Exception as exc:  # an installed framework that cannot load (missing CUDA libraries)
        return None, f"cannot be imported: {type(exc).__name__}: {_first_line(exc)}"


def _probe_cupy(cupy: ModuleType) -> str | None:
    """``None`` when CuPy can use a GPU, else why not."""
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # cupy_backends.cuda.api.runtime.CUDARuntimeError
        return _first_line(exc)
    if count < 1:
        return "no CUDA device found"
    return None


def _probe_torch(torch: ModuleType) -> str | None:
    """``None`` when torch can use a GPU, else why not (torch's own words where it has them)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            available = bool(torch.cuda.is_available())
        if available:
            return None
        if getattr(getattr(torch, "version", None), "cuda", None) is None:
            return "this torch build has no CUDA support (a CPU-only build)"
        if caught:  # "CUDA initialization: The NVIDIA driver on your system is too old ..."
            return _first_line(RuntimeWarning(caught[0].message))
        try:
            torch.cuda.init()
        except Exception as exc:  # "Found no NVIDIA driver on your system. ..."
            return _first_line(exc)
        return "no CUDA device found (torch.cuda.device_count() is 0)"
    except Exception as exc:
        return f"{type(exc).__name__}: {_first_line(exc)}"


class CudaBackend(Backend):
    """NVIDIA GPUs: CuPy if it is importable and sees a GPU, else torch with CUDA.

    Arrays are CuPy arrays or torch tensors on the current CUDA device.  The chosen framework is
    :attr:`framework` (``"cupy"`` or ``"torch"``) once :meth:`availability` has been called.
    """

    name = "cuda"
    priority = 10
    description = "NVIDIA GPUs through CuPy, or torch with CUDA"
    drives: Mapping[str, Any] = MappingProxyType({"vendor": "nvidia", "kind": "gpu"})

    def __init__(self) -> None:
        # Creating the backend must be cheap: nothing is imported or probed here.
        self._availability: Availability | None = None
        self._module: ModuleType | None = None
        self.framework: str | None = None

    # -- availability -------------------------------------------------------------------------
    def availability(self) -> Availability:
        """Whether CuPy or torch can run on a GPU here; the reason says exactly why not."""
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def _probe(self) -> Availability:
        problems: list[str] = []  # what went wrong with the installed frameworks
        for framework, probe in (("cupy", _probe_cupy), ("torch", _probe_torch)):
            module, why = _import(framework)
            if module is None:
                if why != "not installed":
                    problems.append(f"{framework} {why}")
                continue
            version = str(getattr(module, "__version__", "(unknown version)"))
            why = probe(module)
            if why is None:
                self._module, self.framework = module, framework
                return Availability(True, version=f"{framework} {version}")
            problems.append(f"{framework} {version} is installed but CUDA is not available: {why}")
        if not problems:
            return Availability(False, "neither cupy nor torch is installed")
        # A framework that is not installed is no news when another one is there and failed.
        return Availability(False, "; ".join(problems))

    def _framework(self) -> tuple[str, ModuleType]:
        state = self.availability()
        if not state or self._module is None or self.framework is None:
            raise CudaUnavailableError(f"backend 'cuda' is not available: {state.reason}")
        return self.framework, self._module

    def framework_module(self) -> tuple[str, ModuleType]:
        """``("cupy", cupy)`` or ``("torch", torch)``: the framework the backend runs on (what
        the variants in ``prism_plugin_cuda.ops`` compute with); :class:`CudaUnavailableError`
        when there is none."""
        return self._framework()

    def capabilities(self) -> dict[str, Any]:
        state = self.availability()
        if not state:
            return {"available": False, "reason": state.reason}
        framework, module = self._framework()
        if framework == "torch":
            count = int(module.cuda.device_count())
            return {
                "framework": "torch",
                "version": module.__version__,
                "cuda": module.version.cuda,
                "devices": [module.cuda.get_device_name(i) for i in range(count)],
            }
        runtime = module.cuda.runtime
        count = int(runtime.getDeviceCount())
        names = []
        for i in range(count):
            raw = runtime.getDeviceProperties(i)["name"]
            names.append(raw.decode() if isinstance(raw, bytes) else str(raw))
        return {
            "framework": "cupy",
            "version": module.__version__,
            "cuda_runtime": int(runtime.runtimeGetVersion()),
            "devices": names,
        }

    # -- arrays -------------------------------------------------------------------------------
    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        """A device array holding ``obj`` (copied to the GPU when it is elsewhere)."""
        framework, module = self._framework()
        if framework == "torch":
            return module.as_tensor(obj, dtype=_torch_dtype(module, dtype), device="cuda")
        return module.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array with the contents of ``array`` (copied to the host)."""
        framework, module = self._framework()
        if framework == "torch":
            if isinstance(array, module.Tensor):
                return array.detach().cpu().numpy()
            import numpy as np

            return np.asarray(array)
        return module.asnumpy(array)

    def is_native(self, value: Any) -> bool:
        """Whether the variants take ``value`` as it is: only the framework's own arrays on the
        GPU (CuPy arrays; torch tensors with ``is_cuda``), and Python scalars, which both
        frameworks take as they are (keeping their weak type promotion, as in NumPy).

        Everything else (NumPy arrays, torch tensors on the CPU, other libraries' arrays) is
        moved to the GPU by the dispatcher through :meth:`from_dlpack`.  Never raises, and
        never imports a framework: before :meth:`availability` has found one, nothing but a
        scalar is native.
        """
        if isinstance(value, (bool, int, float, complex)):
            return True
        module = self._module
        if module is None:
            return False
        if self.framework == "torch":
            return isinstance(value, module.Tensor) and bool(value.is_cuda)
        return isinstance(value, module.ndarray)

    def from_dlpack(self, obj: Any) -> Any:
        """Import ``obj`` through DLPack: zero copy for GPU arrays, a copy to the GPU for host
        arrays (NumPy arrays, CPU tensors); objects without DLPack go through :meth:`asarray`."""
        framework, module = self._framework()
        if not hasattr(obj, "__dlpack__"):
            return self.asarray(obj)
        if framework == "torch":
            try:
                tensor = module.from_dlpack(obj)
            except BufferError:  # e.g. a read-only or byte-swapped NumPy array: copy instead
                return self.asarray(obj)
            return tensor if tensor.is_cuda else tensor.cuda()
        device = getattr(obj, "__dlpack_device__", None)
        if device is not None and int(device()[0]) in _DLPACK_HOST_DEVICES:
            import numpy as np

            try:
                host = np.from_dlpack(obj)
            except BufferError:
                host = np.asarray(obj)
            return module.asarray(host)
        return module.from_dlpack(obj)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        framework, module = self._framework()
        if framework == "torch":
            return module.empty(tuple(shape), dtype=_torch_dtype(module, dtype), device="cuda")
        return module.empty(tuple(shape), dtype=dtype)

    # -- execution ----------------------------------------------------------------------------
    def synchronize(self) -> None:
        framework, module = self._framework()
        if framework == "torch":
            module.cuda.synchronize()
        else:
            module.cuda.runtime.deviceSynchronize()


def _torch_dtype(torch: ModuleType, dtype: Any) -> Any:
    """The torch dtype for a NumPy dtype (or its name); torch dtypes and ``None`` pass through."""
    if dtype is None or isinstance(dtype, torch.dtype):
        return dtype
    import numpy as np

    name = np.dtype(dtype).name
    found = getattr(torch, name, None)
    if not isinstance(found, torch.dtype):
        raise TypeError(f"torch has no dtype matching {dtype!r}")
    return found
