"""The backend interface, and what detection hooks report.

A backend is the runtime that executes operations on a kind of device (NumPy on the host CPU,
torch on CUDA GPUs, ...).  Its methods cover the lifecycle of the original design (capabilities,
allocate, copy to and from the device, launch, synchronize, shutdown) in array terms.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from prism_core.kernel.public import home

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from prism_core.kernel.description.device import DeviceDescription
    from prism_core.kernel.description.requirements import RequirementMatch

__all__ = ["Availability", "Backend", "DetectedDevice", "Detection"]


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

    A description with ``partitions`` is a package (an MI250X module, a Trainium2 chip): Prism
    turns it into the devices software sees, in the driver's default partition mode unless
    ``partition_mode`` names another (``"composite"``, ``"lnc1"``).  ``index`` and
    ``memory_bytes`` are then the package's.  ``driver`` is the version of the driver that
    runs it (``"550.54.15"``), where the detection knows it: the tuning cache's fingerprint
    includes it, since a new driver may change which variant is fastest.
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
    from the ``prism_backends`` hook.

    Class attributes to set: ``name`` (unique, lowercase), ``priority`` (higher is preferred
    among eligible backends), ``description``, and ``drives``, a requirement mapping that the
    devices this backend runs on meet (``{"kind": "cpu"}``, ``{"vendor": "nvidia"}``).
    """

    name: str = ""
    #: Other names users may give the backend (``"pytorch"`` for ``"torch"``).
    aliases: tuple[str, ...] = ()
    priority: int = 0
    description: str = ""
    drives: Mapping[str, Any] = MappingProxyType({})
    #: The top-level modules whose native thread pools (BLAS, OpenMP) this backend computes
    #: with, e.g. ``("torch",)``.  When dispatch changes backend it releases the idle pools of
    #: the other backends' modules so that they do not spin on the cores this one needs
    #: (``prism_core/kernel/threads.py``).  Empty: the name's entry in
    #: ``threads.DEFAULT_MODULES``, or none (a backend on a GPU).
    thread_modules: tuple[str, ...] = ()
    #: How the backend takes an array it does not own (:meth:`to_device`): ``"dlpack"`` shares
    #: its memory where the devices allow (zero copy; a copy only across devices), ``"copy"``
    #: copies it always.  ``prism explain`` says which a move is.
    transfer: str = "copy"
    #: Whether the backend compiles each op for each new input shape (JAX's ``jit``): the
    #: first call at a shape then costs a compilation, which tuning measures and reports
    #: apart from the steady time instead of hiding it in warm-up.
    compiles: bool = False

    # -- identity and availability ----------------------------------------------------------
    @abc.abstractmethod
    def availability(self) -> Availability:
        """Whether the backend can run here (framework importable, driver present).

        This is where the framework is imported.  Never raise: say why not.
        """

    def can_drive(self, device: DeviceDescription) -> RequirementMatch:
        """Whether this backend executes on ``device``, with the reasons when not."""
        from prism_core.kernel.description.requirements import Requirement

        return Requirement(dict(self.drives)).match(device)

    def dtypes(self, device: DeviceDescription | None = None) -> frozenset[str] | None:
        """The data types (Prism's names: ``"float64"``, ``"bool_"``) this backend holds on
        ``device`` (``None``: its default device), or ``None`` (the default) for every dtype
        it is given.  Dispatch declines a variant of this backend, with the reason, for a call
        whose arrays are of another dtype, before converting anything; conformance tries
        only these.  JAX without x64 holds no float64: it declares so, rather than computing
        in float32 what was asked in float64.  Must be cheap and must not import the
        framework when it is not imported yet."""
        return None

    def capabilities(self) -> dict[str, Any]:
        """Facts about the runtime (framework and driver versions, threads, devices), which
        ``prism doctor`` shows under the backend.

        Called only when :meth:`availability` says the backend is available, so it may import
        the framework.  Return JSON-serialisable values; an exception is shown in their place.
        """
        return {}

    # -- arrays -----------------------------------------------------------------------------
    @abc.abstractmethod
    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        """An array of this backend holding ``obj`` (copying only when needed)."""

    @abc.abstractmethod
    def to_numpy(self, array: Any) -> Any:
        """A NumPy array with the contents of ``array`` (host copy where needed)."""

    def is_native(self, value: Any) -> bool:
        """Whether ``value`` can be passed to this backend's variants as it is.

        The default treats anything without ``__dlpack__`` (scalars, lists) as native and
        converts foreign arrays through :meth:`from_dlpack`; backends override it.
        """
        return not hasattr(value, "__dlpack__")

    def owns(self, value: Any) -> bool:
        """Whether ``value`` is one of this backend's own arrays (``numpy.ndarray`` for NumPy,
        ``torch.Tensor`` for torch); a backend computing on another's arrays owns none.

        Dispatch calls it to learn where a call's data lives, so it must be cheap and must
        never import the framework (compare ``type(value).__module__``, or look the framework
        up in ``sys.modules``).
        """
        return False

    def where(self, array: Any) -> str | None:
        """Where ``array`` (one of this backend's own arrays) lives, for a backend whose arrays
        can live on several devices: a short name (``"cpu"``, ``"cuda"``) that is the same for
        every array on the same device.  ``None`` (the default): the backend's arrays live in
        one place.  Dispatch keys plans by it (a call on GPU tensors gets a GPU plan at once,
        without asking a CPU variant first), so it must be as cheap as :meth:`owns` and never
        synchronise a device."""
        return None

    def pinned_empty(self, shape: Sequence[int], dtype: Any) -> Any | None:
        """An uninitialised array in host memory of ``shape`` and ``dtype`` that is page-locked
        (pinned), which the backend's devices copy to and from faster (and without a staging
        copy); it must be usable where a NumPy array is (a ``numpy.ndarray`` backed by pinned
        memory, or the backend's CPU array).  ``None`` (the default): the backend has none,
        or no device to pin memory for."""
        return None

    def from_dlpack(self, obj: Any) -> Any:
        """Import ``obj`` through DLPack (zero copy where the devices allow)."""
        return self.asarray(obj)

    def to_device(self, value: Any, device: DeviceDescription | None = None) -> Any:
        """``value`` as this backend's array on ``device`` (the description the chosen variant
        runs on; ``None``: the backend's default device).  Dispatch moves every argument the
        backend does not take as it is (:meth:`is_native`) through this method; the default
        imports it with :meth:`from_dlpack`."""
        return self.from_dlpack(value)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        """Allocate an uninitialised array on the backend's device."""
        raise NotImplementedError(f"backend {self.name!r} does not allocate arrays")

    # -- the numerics protocol (all optional) ----------------------------------------------
    def requires_grad(self, x: Any, flag: bool = True) -> Any:
        """``x`` with gradient tracking on (``flag``) or off; a backend without autograd
        returns ``x`` as it is."""
        return x

    def detach(self, x: Any) -> Any:
        """``x`` cut from the gradient graph; a backend without autograd returns ``x``."""
        return x

    def value_and_grad(
        self, fn: Callable[..., Any], argnums: int | tuple[int, ...]
    ) -> Callable[..., Any] | None:
        """A function computing ``(fn(*args), gradient)`` with the backend's autograd, the
        gradient with respect to the positional argument(s) ``argnums`` (one array for an int,
        a tuple for a tuple); ``None`` (the default) when the backend has no autograd: Prism
        then uses central finite differences."""
        return None

    def vmap(
        self, fn: Callable[..., Any], in_axes: Any, out_axes: Any
    ) -> Callable[..., Any] | None:
        """``fn`` vectorised over ``in_axes`` with the backend's own transform (torch's
        ``torch.func.vmap``); ``None`` (the default): Prism loops and stacks."""
        return None

    def jit(
        self,
        fn: Callable[..., Any],
        static_argnums: tuple[int, ...],
        static_argnames: tuple[str, ...],
    ) -> Callable[..., Any] | None:
        """``fn`` compiled whole by the backend's compiler (JAX's ``jax.jit``), the arguments
        at ``static_argnums`` / ``static_argnames`` held static (Python values the body may
        branch on: they are hashable), the others traced; ``None`` (the default) when the
        backend has no compiler: a placed function (``prism_core.function``) then runs its body
        eagerly there.  Prism calls the result in the placement's scope with the placement's
        arrays; where it raises, Prism runs the body eagerly once, and a body that then
        succeeds is not traceable: it runs eagerly on this backend from then on."""
        return None

    def numpy_defaults(self) -> AbstractContextManager[Any] | None:
        """A context in which the library's implicit choices are NumPy's, for the body of a
        placed function (``prism_core.function``) that runs on this backend: operators and
        indexing there are the library's own, so its defaults decide what NumPy's rules would
        (torch: a Python float times an integer tensor is ``float32`` unless the default dtype
        is ``float64``).  ``None`` (the default): the library's defaults are NumPy's already.
        Entered and left around each call of the body, possibly from several threads at
        once."""
        return None

    # -- execution --------------------------------------------------------------------------
    def launch(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Run ``fn`` in the backend's execution context (stream, device) and return its result."""
        return fn(*args, **kwargs)

    def synchronize(self, *arrays: Any) -> None:  # noqa: B027 - a synchronous backend: nothing to do
        """Wait until the work submitted to the backend has finished: all of it, or at least
        the work that computes ``arrays`` where they are given (Prism passes the results it is
        about to time or move).  A backend without a device-wide wait (JAX) waits on the
        arrays alone."""

    def settings(self) -> Mapping[str, str]:
        """The settings of this backend that change what it computes or how fast (a thread
        count, a precision flag such as JAX's x64), by name, as text.  They are part of the
        host fingerprint that tuned choices are stored under (docs/performance.md), so that a
        choice measured under other settings is never reused.  Asked when the tuning records
        load, before any op of the backend runs: read them cheaply (environment variables,
        never by importing the framework).  Default: none."""
        return {}

    def shutdown(self) -> None:  # noqa: B027 - optional: most backends hold nothing to release
        """Release the backend's resources.  Prism calls it once, at interpreter exit, for each
        backend of the plugins in use; what it raises is reported on standard error and never
        stops the exit."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} backend {self.name!r}>"
