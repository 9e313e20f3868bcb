"""The ``cuda`` backend (alias ``cupy``): NVIDIA GPUs through CuPy, a namespace backend, and
AMD GPUs where the installed CuPy is a ROCm build (``prism_plugin_cuda.build``).

CuPy 14.2 has the Array API's functions under the standard's names: ``cuda.add`` is ``cupy.add``
with Prism's semantics around it (``prism_core.backend_kit.NamespaceBackend``).
:data:`OVERRIDES` are where CuPy's function differs from the NumPy reference
(``prism_plugin_cuda.ops``, each saying how) and the ops beyond the standard.

Per call, ``can_run`` keeps host arrays of fewer than :data:`MIN_ELEMENTS` elements on NumPy
(the copies cost more than the GPU saves) and the dtypes the GPU path does not take; data
already on the GPU is always taken; creation ops and conversions (:data:`NO_CAN_RUN`) run
wherever the backend is chosen.  Nothing here imports CuPy: availability does, and the
variants' functions when first called.  Which GPUs it drives (NVIDIA with a CUDA build of CuPy,
AMD with a ROCm build) is told from the installed distributions' names
(:func:`prism_plugin_cuda.build.cupy_build`): the variants' requirement and ``can_drive``'s
reasons follow from it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

import prism_core
from prism_core.backend_kit import (
    NamespaceBackend,
    Target,
    dtype_name,
    first_line,
    import_framework,
    requested_device,
    size_check,
)
from prism_core.extending import Availability, Variant
from prism_core.hardware import RequirementMatch

from .build import CupyBuild, cupy_build

if TYPE_CHECKING:
    from prism_core.hardware import DeviceDescription

__all__ = ["MIN_ELEMENTS", "NOT_INSTALLED", "NO_CAN_RUN", "OVERRIDES", "CudaBackend"]

#: The reason the backend gives where CuPy is not installed.
NOT_INSTALLED = "cupy is not installed (pip install cupy-cuda12x)"
#: The least CuPy: 13 lacks 23 of the standard's functions (``acos``, ``concat``,
#: ``unique_all``), 14.1 still ``cumulative_sum``, ``cumulative_prod`` and ``matrix_transpose``.
MINIMUM = "14.2"
#: Arrays with fewer elements than this (the largest array argument counts) stay on NumPy: the
#: copy to the GPU and back costs more than the GPU saves.
MIN_ELEMENTS = 4096
#: The requirement of every variant but ``cuda.tensor_core_matmul`` with a CUDA build of CuPy
#: (a ROCm build's: ``{"vendor": "amd", "kind": "gpu"}``, :attr:`CupyBuild.requires`).
GPU_REQUIRES = MappingProxyType({"vendor": "nvidia", "kind": "gpu"})
#: The data types the GPU's dense linear algebra (cuSOLVER) takes.
LINALG_DTYPES = frozenset({"float32", "float64", "complex64", "complex128"})
#: Ops without array arguments (creation) and the conversions: no ``can_run``.
NO_CAN_RUN = frozenset(
    {"asarray", "zeros", "ones", "full", "arange", "linspace", "eye", "empty", "from_dlpack"}
    | {"triu_indices", "random.normal", "fft.fftfreq", "fft.rfftfreq"}
    | {"to_numpy", "requires_grad", "detach"}
)
#: Ops whose variant takes only the data types cuSOLVER takes.
_LINALG = frozenset(
    "linalg." + name
    for name in (
        "inv", "solve", "svd", "eig", "eigh", "qr", "cholesky", "det", "slogdet", "eigvalsh",
        "svdvals", "matrix_rank", "pinv", "matrix_power",
    )
)  # fmt: skip
#: Creation ops: CuPy's take no ``device=`` (they create on the current GPU, chosen here).
_CREATES = NO_CAN_RUN - {"triu_indices", "random.normal", "to_numpy", "requires_grad", "detach"}
_CREATES |= {"zeros_like", "ones_like", "full_like", "empty_like", "astype"}
#: DLPack device types of GPU memory (kDLCUDA, kDLROCM, kDLCUDAManaged).
_DLPACK_GPU_DEVICES = frozenset({2, 10, 13})

#: The ops computed by ``prism_plugin_cuda.ops`` (``linalg.inv`` by ``ops.linalg_inv``): where
#: CuPy's function differs from the reference, each saying how.
_FIXED = (
    "arange", "linspace", "astype", "tril", "triu", "power", "clip", "where", "std", "var",
    "sort", "argsort", "count_nonzero", "searchsorted", "reshape", "expand_dims", "repeat",
    "take", "take_along_axis", "unstack", "vecdot", "tensordot", "convolve", "histogram",
    "random.normal",
    "requires_grad", "detach", "linalg.inv", "linalg.solve", "linalg.svd", "linalg.svdvals",
    "linalg.eig", "linalg.eigh", "linalg.qr", "linalg.cholesky", "linalg.slogdet",
    "linalg.matrix_power", "linalg.matrix_rank", "linalg.pinv", "linalg.cross",
    "linalg.outer", "linalg.diagonal", "linalg.trace", "linalg.vector_norm",
    "linalg.matrix_norm", "fft.rfft", "fft.ihfft", "fft.fftn", "fft.ifftn", "fft.rfftn",
    "fft.irfftn", "fft.fftfreq", "fft.rfftfreq",
)  # fmt: skip
#: Op -> the function computing it instead of ``cupy``'s of the standard's name.
OVERRIDES: Mapping[str, str] = MappingProxyType(
    {
        **{op: f"prism_plugin_cuda.ops:{op.replace('.', '_')}" for op in _FIXED},
        # Beyond the standard: CuPy's own, with NumPy's semantics.
        **{op: f"cupy:{op}" for op in ("cov", "dot", "einsum", "transpose", "triu_indices")},
        "linalg.norm": "cupy.linalg:norm",
    }
)


class CudaUnavailableError(RuntimeError):
    """An array method of the ``cuda`` backend was called on a host where it cannot run."""


def on_gpu(value: Any) -> bool:
    """Whether ``value`` is already in GPU memory: a CuPy array, or any DLPack exporter on a
    CUDA device (a torch CUDA tensor).  Reads attributes only."""
    if type(value).__module__.partition(".")[0] == "cupy":
        return True
    device = getattr(value, "__dlpack_device__", None)
    if device is None:
        return False
    try:
        return int(device()[0]) in _DLPACK_GPU_DEVICES
    except Exception:  # not a DLPack exporter after all: a host object
        return False


#: ``can_run`` of the ops that take any data type: large enough, or already on the GPU.
worth_a_gpu = size_check(MIN_ELEMENTS, on_device=on_gpu)


def _of_dtypes(takes: Callable[[str, str], bool], what: str) -> Callable[..., bool | str]:
    """Data on the GPU, or :func:`worth_a_gpu` and dtypes (name, kind) that ``takes``."""

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        arrays = [a for a in args if hasattr(a, "shape") and hasattr(a, "dtype")]
        if any(on_gpu(a) for a in arrays):
            return True  # data on the GPU stays there, whatever its size
        verdict = worth_a_gpu(*args, **kwargs)
        if verdict is not True:
            return verdict
        for a in arrays:
            try:
                found = prism_core.dtype(a.dtype)
                name, kind = found.name, found.kind
            except (TypeError, ValueError):
                name, kind = dtype_name(a.dtype), "?"
            if not takes(name, kind):
                return f"{what}, not {name}"
        return True

    return can_run


#: ``can_run`` of both matmul variants: large enough, floating-point or complex.
can_run_matmul = _of_dtypes(
    lambda name, kind: kind in ("f", "c"),
    "matmul on the GPU takes floating-point or complex arrays",
)
#: ``can_run`` of the decompositions and solvers: large enough, in a dtype cuSOLVER takes.
can_run_linalg = _of_dtypes(
    lambda name, kind: name in LINALG_DTYPES,
    "linear algebra on the GPU takes float32, float64, complex64 or complex128 arrays",
)


def _can_run(op: str) -> Callable[..., bool | str]:
    return can_run_matmul if op == "matmul" else can_run_linalg if op in _LINALG else worth_a_gpu


class CudaBackend(NamespaceBackend):
    """NVIDIA GPUs through CuPy (AMD GPUs with a ROCm build of CuPy): arrays are CuPy arrays
    on the current device."""

    name = "cuda"
    aliases = ("cupy",)
    priority = 10
    transfer = "dlpack"  # cupy.from_dlpack shares device memory (host arrays are copied over)
    description = "NVIDIA GPUs through CuPy (AMD GPUs with a ROCm build of CuPy)"
    namespace = library = "cupy"
    minimum = MINIMUM
    distribution = "prism-plugin-cuda"
    overrides = OVERRIDES

    def __init__(self) -> None:
        super().__init__()
        #: Device types to_device has found this backend drives (dispatch moves every
        #: argument of every call through it: match each description once).
        self._driven: set[str] = set()
        self._build: CupyBuild | None = None
        self._targets: tuple[Target, ...] | None = None

    # -- the build: which GPUs ------------------------------------------------------------------
    @property
    def build(self) -> CupyBuild:
        """The installed CuPy's build (CUDA or ROCm), from the distributions' names: read once
        (about 25 ms), never importing CuPy."""
        if self._build is None:
            self._build = cupy_build()
        return self._build

    @property
    def drives(self) -> Mapping[str, Any]:  # type: ignore[override]  # read-only: the build's
        """The GPUs of the build's vendor: ``{"vendor": "nvidia", "kind": "gpu"}`` with a CUDA
        build (and without CuPy), ``{"vendor": "amd", "kind": "gpu"}`` with a ROCm build."""
        return self.build.requires

    @property
    def targets(self) -> tuple[Target, ...]:  # type: ignore[override]  # read-only: the build's
        """One target, the GPUs :attr:`drives` names: every variant but the tensor cores' has
        that requirement."""
        # One tuple, kept: the kit names a variant by its first target's identity.
        if self._targets is None:
            self._targets = (Target("gpu", self.build.requires, 10),)
        return self._targets

    def can_drive(self, device: DeviceDescription) -> RequirementMatch:
        """The GPUs of the installed build's vendor; for another vendor's GPU the reason names
        the build installed and the one that GPU needs (``CuPy here is cupy-cuda12x, a CUDA
        build; an AMD GPU needs cupy-rocm-7-0``)."""
        why = self.build.why_not(device)
        if why is not None:
            return RequirementMatch(False, (why,))
        return super().can_drive(device)

    # -- availability -------------------------------------------------------------------------
    def availability(self) -> Availability:
        """Whether CuPy imports, sees a GPU and is 14.2 or later; the reason says why not (a
        missing CUDA library, CUDA's own message: no driver, a driver too old, no GPU)."""
        if self._availability is None:
            self._availability = self._probe()
        return self._availability

    def _probe(self) -> Availability:
        module, why = import_framework("cupy")
        if module is None:
            return Availability(False, NOT_INSTALLED if why == "not installed" else f"cupy {why}")
        version = str(getattr(module, "__version__", "(unknown version)"))
        runtime = "ROCm (HIP)" if self.build.platform == "rocm" else "CUDA"
        try:
            count = int(module.cuda.runtime.getDeviceCount())
        except Exception as exc:  # cupy_backends.cuda.api.runtime.CUDARuntimeError
            return Availability(
                False,
                f"cupy {version} is installed but {runtime} is not available: {first_line(exc)}",
            )
        if count < 1:
            return Availability(False, f"cupy {version} is installed but found no {runtime} device")
        from packaging.version import InvalidVersion, Version

        with contextlib.suppress(InvalidVersion):  # an unreadable version: the variants try
            if Version(version) < Version(MINIMUM):
                return Availability(
                    False,
                    f"cupy {version} is installed; the cuda backend needs cupy>={MINIMUM} "
                    "(pip install -U cupy-cuda12x)",
                    version=version,
                )
        self._xp = module
        return Availability(True, version=version)

    @property
    def xp(self) -> ModuleType:
        """CuPy, once found with a GPU; else :class:`CudaUnavailableError`, saying why not."""
        if self._xp is None and not self.availability():
            raise CudaUnavailableError(
                f"backend 'cuda' is not available: {self.availability().reason}"
            )
        assert self._xp is not None
        return self._xp

    def capabilities(self) -> dict[str, Any]:
        """CuPy's version, the CUDA runtime and driver versions, and each GPU CuPy sees."""
        state = self.availability()
        if not state:
            return {"available": False, "reason": state.reason}
        runtime = self.xp.cuda.runtime
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
            "build": self.build.describe(),
            "version": state.version,
            "cuda_runtime": int(runtime.runtimeGetVersion()),
            "cuda_driver": int(runtime.driverGetVersion()),
            "devices": devices,
        }

    # -- arrays -------------------------------------------------------------------------------
    def owns(self, value: Any) -> bool:
        """Whether ``value`` is a CuPy array, by its type's module: CuPy is never imported."""
        return type(value).__module__.partition(".")[0] == "cupy"

    def is_native(self, value: Any) -> bool:
        """Python scalars and CuPy's arrays (``cupy.ndarray``'s, once imported: the tests'
        stand-in for CuPy makes NumPy's its own)."""
        if super().is_native(value):
            return True
        return self._xp is not None and isinstance(value, self._xp.ndarray)

    def to_numpy(self, array: Any) -> Any:
        """A NumPy array with the contents of ``array``, copied to the host (CuPy refuses
        ``numpy.asarray`` of its arrays)."""
        return self.xp.asnumpy(array)

    def from_dlpack(self, obj: Any) -> Any:
        """``obj`` on the GPU: shared through DLPack where it is in GPU memory (a torch CUDA
        tensor), copied over from the host otherwise (``cupy.from_dlpack`` refuses host
        memory: "CPU arrays cannot be directly imported to CuPy")."""
        return self.xp.from_dlpack(obj) if on_gpu(obj) else self.asarray(obj)

    def to_device(self, value: Any, device: DeviceDescription | None = None) -> Any:
        """``value`` on CuPy's current device (descriptions say which kind of GPU, not which
        of the host's: ``with cupy.cuda.Device(1):`` chooses); ``device`` must be a GPU the
        installed build drives (NVIDIA's with a CUDA build, AMD's with a ROCm build)."""
        if device is not None and device.device_type not in self._driven:
            match = self.can_drive(device)
            if not match:
                gpus = "AMD GPUs" if self.build.vendor == "amd" else "NVIDIA GPUs"
                raise ValueError(
                    f"to_device: backend 'cuda' places arrays on {gpus}; device "
                    f"{device.device_type!r} is not one ({match.explain()})"
                )
            self._driven.add(device.device_type)
        return self.from_dlpack(value)

    def synchronize(self, *arrays: Any) -> None:
        """Wait until the current CUDA device has finished all submitted work."""
        self.xp.cuda.runtime.deviceSynchronize()

    def pinned_empty(self, shape: Collection[int], dtype: Any) -> Any | None:
        """A NumPy array in page-locked memory (``cupyx.empty_pinned``), which the GPU copies
        to and from without staging; ``None`` where CuPy is not available (or a stand-in for
        it without ``cupyx``)."""
        if not self.availability():
            return None
        try:
            import cupyx
        except ImportError:
            return None
        return cupyx.empty_pinned(tuple(shape), dtype=dtype)

    # -- the variants -------------------------------------------------------------------------
    def function(self, op: str, target: Target | None = None) -> Callable[..., Any]:
        """The namespace backend's function of ``op``; for the creation ops with the
        standard's ``device=``, which CuPy's lack (they create on the current GPU: the one
        ``device=`` names is made current for the call)."""
        fn = super().function(op, target)
        if op not in _CREATES:
            return fn

        def create(*args: Any, device: Any = None, **kwargs: Any) -> Any:
            with self._current(op, device):
                return fn(*args, **kwargs)

        create.__name__ = create.__qualname__ = fn.__name__
        return create

    def _current(self, op: str, device: Any) -> Any:
        """A context making ``device`` (``None``, Prism's description of a GPU, an index or a
        ``cupy.cuda.Device``) current; host memory is a ``ValueError``."""
        kind, value = requested_device(device)
        if kind == "default":
            return contextlib.nullcontext()
        if kind == "cpu":
            raise ValueError(
                f"{op}: device={device!r} is host memory; CuPy creates arrays on a GPU: give "
                "None, a GPU index, a cupy.cuda.Device or Prism's description of an NVIDIA GPU"
            )
        if kind == "gpu":
            value = getattr(value, "index", 0) or 0
        return self.xp.cuda.Device(value if isinstance(value, int) else value.id)

    def variants(self, ops: Collection[str] | None = None) -> list[Variant]:
        """A variant of each op (``cuda.<op>``), and ``cuda.tensor_core_matmul``: the same
        matmul, preferred on devices with third-generation tensor cores or newer where a
        feature accelerates the call's dtype, so that ``prism explain`` shows where the
        tensor cores work (cuBLAS picks their kernels itself: fp16, bf16, fp64 on data-center
        GPUs from Ampere on, fp32 only as TF32)."""
        found = super().variants(ops)
        for v in found:  # can_run: every op's but the creation ops' and the conversions'
            v.can_run = None if v.op in NO_CAN_RUN else _can_run(v.op)
        matmul = next((v for v in found if v.name == "cuda.matmul"), None)
        if matmul is not None:
            found.append(
                Variant(
                    "matmul",
                    matmul.fn,
                    backend=self.name,
                    requires={"vendor": "nvidia", "tensor_cores": ">=3"},
                    dtype_support=True,
                    priority=20,
                    can_run=can_run_matmul,
                    name="cuda.tensor_core_matmul",
                )
            )
        return found
