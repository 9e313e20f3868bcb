"""The backend interface, and what detection hooks report.  A backend is the runtime that
executes operations on a kind of device (NumPy on the host CPU, torch on CUDA GPUs, ...); it
takes and makes :class:`~prism_core.extending.Array` s."""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from prism_core.kernel.contract.array import Array
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.description.requirements import RequirementMatch

__all__ = ["Availability", "Backend", "DetectedDevice", "Detection"]

_A = TypeVar("_A")
_R = TypeVar("_R")


@home("prism_core.extending")
@dataclass(frozen=True)
class Availability:
    """Whether a backend can run on this host, and why not when it cannot."""

    available: bool
    reason: str = ""
    version: str | None = None

    def __bool__(self) -> bool:
        return self.available


@home("prism_core.extending")
@dataclass(frozen=True)
class DetectedDevice:
    """A device a plugin found on this host; ``device_type`` names its description.

    A description with ``partitions`` is a package (an MI250X module, a Trainium2 chip), which
    Prism turns into the devices software sees, in the driver's default partition mode unless
    ``partition_mode`` names another (``"lnc1"``); ``index`` and ``memory_bytes`` are the
    package's.  ``driver`` is its driver's version (``"550.54.15"``) where known: the tuning
    cache's fingerprint includes it, since a new driver may change which variant is fastest.
    """

    device_type: str
    index: int = 0
    name: str = ""
    uuid: str | None = None
    memory_bytes: int | None = None
    partition_mode: str | None = None
    driver: str | None = None


@home("prism_core.extending")
@dataclass(frozen=True)
class Detection:
    """What a plugin's ``prism_detect_devices`` found: devices, or the reason there are none."""

    devices: Sequence[DetectedDevice] = ()
    reason: str = ""


@home("prism_core.extending")
class Backend(abc.ABC):
    """A runtime that executes on devices.  Subclass it in a plugin and return an instance
    from the ``prism_backends`` hook.  Set ``name`` (unique, lowercase), ``priority`` (higher is
    preferred among eligible backends), ``description``, and ``drives``, a requirement mapping
    the devices it runs on meet (``{"kind": "cpu"}``, ``{"vendor": "nvidia"}``)."""

    name: str = ""
    #: Other names users may give the backend (``"pytorch"`` for ``"torch"``).
    aliases: tuple[str, ...] = ()
    priority: int = 0
    description: str = ""
    drives: Mapping[str, object] = MappingProxyType({})
    #: The top-level modules whose native thread pools (BLAS, OpenMP) this backend computes
    #: with (``("torch",)``): dispatch changing backend releases the other backends' idle pools,
    #: so that they do not spin on this one's cores (``kernel/threads.py``).  Empty: the name's
    #: entry in ``threads.DEFAULT_MODULES``, or none (a backend on a GPU).
    thread_modules: tuple[str, ...] = ()
    #: How the backend takes an array it does not own (:meth:`to_device`), as ``prism explain``
    #: says: ``"dlpack"`` shares its memory where the devices allow, ``"copy"`` copies it.
    transfer: str = "copy"
    #: Whether the backend compiles each op for each new input shape (JAX's ``jit``): tuning
    #: measures a first call's compilation and reports it apart from the steady time.
    compiles: bool = False

    @abc.abstractmethod
    def availability(self) -> Availability:
        """Whether the backend can run here (framework importable, driver present).  This is
        where the framework is imported.  Never raise: say why not."""

    def can_drive(self, device: DeviceDescription) -> RequirementMatch:
        """Whether this backend executes on ``device``, with the reasons when not."""
        from prism_core.kernel.description.requirements import Requirement

        return Requirement(dict(self.drives)).match(device)

    def dtypes(self, device: DeviceDescription | None = None) -> frozenset[str] | None:
        """The data types (Prism's names: ``"float64"``, ``"bool_"``) this backend holds on
        ``device`` (``None``: its default device), or ``None`` (the default): every dtype.
        Dispatch declines its variants, with the reason, for a call whose arrays are of another
        dtype, before converting anything; conformance tries only these (JAX without x64
        declares no float64 rather than compute in float32).  Must be cheap, and must not
        import the framework when it is not imported yet."""
        return None

    def capabilities(self) -> dict[str, object]:
        """Facts about the runtime (framework and driver versions, threads, devices) that
        ``prism doctor`` shows, as JSON-serialisable values (an exception is shown in their
        place).  Asked only of an available backend: it may import the framework."""
        return {}

    @abc.abstractmethod
    def asarray(self, obj: object, dtype: object = None) -> Any:
        """An array of this backend (an :class:`~prism_core.extending.Array`) holding ``obj``
        (copying only when needed)."""

    @abc.abstractmethod
    def to_numpy(self, array: object) -> Any:
        """A NumPy array with the contents of ``array``, one of this backend's (host copy where
        needed)."""

    def is_native(self, value: object) -> bool:
        """Whether ``value`` can be passed to this backend's variants as it is.  The default:
        anything without ``__dlpack__`` (scalars, lists); foreign arrays go through
        :meth:`from_dlpack`."""
        return not hasattr(value, "__dlpack__")

    def owns(self, value: object) -> bool:
        """Whether ``value`` is one of this backend's own arrays (``torch.Tensor`` for torch;
        none for a backend computing on another's arrays).  Dispatch asks it where a call's
        data lives: it must be cheap and never import the framework (compare
        ``type(value).__module__``, or look in ``sys.modules``)."""
        return False

    def where(self, array: object) -> str | None:
        """Where ``array`` (one of this backend's own) lives, for a backend whose arrays can
        live on several devices: a short name (``"cpu"``, ``"cuda"``), the same for every
        array on one device; ``None`` (the default): in one place.  Dispatch keys plans by it,
        so it must be as cheap as :meth:`owns` and never synchronise a device."""
        return None

    def pinned_empty(self, shape: Sequence[int], dtype: object) -> Array | None:
        """An uninitialised page-locked (pinned) host array, which the backend's devices copy
        to and from faster, usable where a NumPy array is (a ``numpy.ndarray`` over pinned
        memory, or the backend's CPU array); ``None`` (the default): none, or no device."""
        return None

    def from_dlpack(self, obj: object) -> Array:
        """Import ``obj`` through DLPack (zero copy where the devices allow)."""
        imported: Array = self.asarray(obj)
        return imported

    def to_device(self, value: object, device: DeviceDescription | None = None) -> Array:
        """``value`` as this backend's array on ``device`` (the chosen variant's; ``None``: the
        default device): how dispatch moves what :meth:`is_native` declines (default:
        :meth:`from_dlpack`)."""
        return self.from_dlpack(value)

    def empty(self, shape: Sequence[int], dtype: object) -> Array:
        """Allocate an uninitialised array on the backend's device."""
        raise NotImplementedError(f"backend {self.name!r} does not allocate arrays")

    def requires_grad(self, x: _A, flag: bool = True) -> _A:
        """``x`` with gradient tracking on (``flag``) or off; without autograd, ``x``."""
        return x

    def detach(self, x: _A) -> _A:
        """``x`` cut from the gradient graph; without autograd, ``x``."""
        return x

    def value_and_grad(
        self, fn: Callable[..., object], argnums: int | tuple[int, ...]
    ) -> Callable[..., tuple[object, object]] | None:
        """A function computing ``(fn(*args), gradient)`` with the backend's autograd, the
        gradient with respect to the positional argument(s) ``argnums`` (one array for an int,
        a tuple for a tuple); ``None`` (the default): Prism uses central finite differences."""
        return None

    def vmap(
        self, fn: Callable[..., object], in_axes: object, out_axes: object
    ) -> Callable[..., object] | None:
        """``fn`` vectorised over ``in_axes`` with the backend's own transform (torch's
        ``torch.func.vmap``); ``None`` (the default): Prism loops and stacks."""
        return None

    def jit(
        self,
        fn: Callable[..., _R],
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
    ) -> Callable[..., _R] | None:
        """``fn`` compiled whole by the backend's compiler (JAX's ``jax.jit``), the arguments
        at ``static_argnums`` / ``static_argnames`` held static (hashable Python values), the
        others traced; ``None`` (the default): a placed function (``prism_core.function``) runs
        its body eagerly.  Prism calls the result in the placement's scope; where that raises,
        the body runs eagerly, and one that then succeeds runs eagerly from then on."""
        return None

    def numpy_defaults(self) -> AbstractContextManager[object] | None:
        """A context in which the library's implicit choices are NumPy's, for the body of a
        placed function (``prism_core.function``) on this backend, whose operators are the
        library's own (torch: a Python float times an integer tensor is ``float32`` unless the
        default dtype is ``float64``); ``None`` (the default): they are NumPy's already.
        Entered and left around each call of the body, possibly in several threads at once."""
        return None

    def launch(self, fn: Callable[..., _R], *args: object, **kwargs: object) -> _R:
        """Run ``fn`` in the backend's execution context (stream, device) and return its result."""
        return fn(*args, **kwargs)

    def synchronize(self, *arrays: object) -> None:  # noqa: B027 - synchronous: nothing to do
        """Wait until the work submitted to the backend has finished: all of it, or at least
        what computes ``arrays`` where given (the results Prism is about to time or move).  A
        backend without a device-wide wait (JAX) waits on the arrays alone."""

    def settings(self) -> Mapping[str, str]:
        """The settings that change what the backend computes or how fast (a thread count,
        JAX's x64), by name, as text: part of the host fingerprint tuned choices are stored
        under (docs/performance.md).  Asked when the tuning records load, before any op runs:
        read them cheaply (environment variables, never by importing the framework)."""
        return {}

    def shutdown(self) -> None:  # noqa: B027 - optional: most backends hold nothing to release
        """Release the backend's resources; called once per backend of the plugins in use, at
        interpreter exit.  What it raises is reported on standard error, never stops the exit."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} backend {self.name!r}>"
