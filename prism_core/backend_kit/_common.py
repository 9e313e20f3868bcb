"""What the bundled plugins share besides the namespace backend (the package docstring,
``prism_core.backend_kit``, lists it).  Cheap to import: no array framework."""

from __future__ import annotations

import importlib
import math
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any

from prism_core.kernel.contract.backend import Availability, Backend

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type's name when it has none."""
    text = str(exc).strip()
    line = text.splitlines()[0].strip() if text else ""
    return line or type(exc).__name__


def installed_distributions(*prefixes: str) -> tuple[str, ...]:
    """The names (lowercase, ``-`` for runs of ``-_.``) of the installed distributions that
    start with one of ``prefixes`` (every one without), as ``importlib.metadata`` finds them,
    read from the ``.dist-info`` directories' names where the environment is plain: a plugin
    asks on a process's first call which build of its framework is installed
    (``cupy-rocm-7-0`` or ``cupy-cuda12x``), and a first call does not import
    ``importlib.metadata`` (``tests/test_first_call.py``)."""
    from prism_core.kernel.distributions import distribution_names

    names = (name.replace("_", "-") for name in distribution_names())
    return tuple(sorted({n for n in names if not prefixes or n.startswith(prefixes)}))


def import_framework(name: str) -> tuple[ModuleType | None, str | None]:
    """Import a framework without raising: ``(module, None)``, or ``(None, why not)`` where
    ``why`` is a clause (``"not installed"``, or the error of an installed framework that
    cannot load, such as a missing CUDA library)."""
    try:
        return importlib.import_module(name), None
    except ModuleNotFoundError as exc:
        if exc.name == name:
            return None, "not installed"
        return None, f"cannot be imported: {type(exc).__name__}: {first_line(exc)}"
    except Exception as exc:
        return None, f"cannot be imported: {type(exc).__name__}: {first_line(exc)}"


def shape_of(value: Any) -> tuple[int, ...]:
    """The shape of an array of any framework (``()`` for scalars)."""
    return tuple(int(s) for s in getattr(value, "shape", ()))


def _shape_text(shape: Sequence[int]) -> str:
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """NumPy's broadcasting of shapes; ``ValueError`` in NumPy's words when they do not."""
    out: list[int] = []
    longest = max((len(s) for s in shapes), default=0)
    for i in range(1, longest + 1):
        size = 1
        for s in shapes:
            d = s[-i] if i <= len(s) else 1
            if d != 1:
                if size not in (1, d):
                    raise ValueError(
                        "operands could not be broadcast together with shapes "
                        + " ".join(_shape_text(t) for t in shapes)
                    )
                size = d
        out.append(size)
    return tuple(reversed(out))


def linalg_error(message: str) -> Exception:
    """NumPy's ``LinAlgError`` (a ``ValueError``) with ``message``: what every backend raises
    for a singular matrix or a decomposition that does not converge."""
    import numpy as np

    return np.linalg.LinAlgError(message)


def array_arguments(args: Sequence[Any], kwargs: Mapping[str, Any] | None = None) -> list[Any]:
    """The arrays of a call (real ones, or ``prism_core.ArraySpec`` for explain): the
    positional and keyword arguments that have a ``shape`` and a ``dtype``, and those in a
    list or tuple argument (``stack([a, b])``, ``clip(x, min=lo)``)."""
    found: list[Any] = []
    for a in (*args, *(kwargs.values() if kwargs else ())):
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            found.append(a)
        elif type(a) in (list, tuple):
            found.extend(x for x in a if hasattr(x, "shape") and hasattr(x, "dtype"))
    return found


def size_check(
    min_elements: int, on_device: Callable[[Any], bool] | None = None
) -> Callable[..., bool | str]:
    """A ``can_run`` that takes calls whose largest array argument has at least
    ``min_elements`` elements, or any array for which ``on_device(array)`` is true (data
    already there has no transfer to save), and declines the others with the reason."""

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        arrays = array_arguments(args)
        if on_device is not None and any(on_device(a) for a in arrays):
            return True
        largest = max((math.prod(shape_of(a)) for a in arrays), default=0)
        if largest < min_elements:
            return (
                f"too small to be worth a device transfer ({largest} elements, fewer than "
                f"{min_elements})"
            )
        return True

    can_run.__qualname__ = can_run.__name__ = f"size_check({min_elements})"
    return can_run


def probe_library(name: str, minimum: str, distribution: str) -> Availability:
    """Whether the library ``name`` imports here and is at least version ``minimum``; never
    raises.  The reason says what to do: install it (``distribution``, the plugin, depends on
    it), why an installed one cannot load (:func:`import_framework`), or upgrade it.  An
    unreadable version is let through: the variants try."""
    module, why = import_framework(name)
    if module is None:
        if why == "not installed":
            return Availability(
                False,
                f"{name} is not installed (pip install '{name}>={minimum}', or reinstall "
                f"{distribution}, which depends on it)",
            )
        return Availability(False, f"{name} {why}")
    version = str(getattr(module, "__version__", ""))
    outdated = too_old(name, version, minimum, name)
    return Availability(True, version=version) if outdated is None else outdated


def too_old(name: str, version: str, minimum: str, backend: str) -> Availability | None:
    """The unavailability of ``backend`` where ``name`` is installed at ``version``, older than
    ``minimum``, saying how to upgrade; ``None`` where it is recent enough or its version
    cannot be read (the variants try)."""
    try:
        from packaging.version import InvalidVersion, Version

        older = Version(version) < Version(minimum)
    except (ImportError, InvalidVersion):
        older = False
    if not older:
        return None
    return Availability(
        False,
        f"{name} {version} is installed; the {backend} backend needs {name}>={minimum} "
        f"(pip install -U '{name}>={minimum}')",
        version=version,
    )


#: What a host-library backend takes as it is besides NumPy's arrays.
_SCALARS = (bool, int, float, complex)


class HostLibraryBackend(Backend):
    """A backend that computes on NumPy arrays in host memory with a library of its own
    (SciPy, parasail, Numba): the library has no array type, so the backend owns nothing
    (:meth:`owns` is ``False``: data never "belongs" to it), takes NumPy arrays and Python
    scalars as they are (:meth:`is_native`), and its array methods are NumPy's.

    A subclass names the library (``library``, the module), the oldest version its variants
    are written for (``min_version``) and the distribution that depends on it
    (``distribution``), and says what it adds (``capabilities``).  Creating one is cheap:
    :meth:`availability` imports the library on first use (:func:`probe_library`) and keeps
    the answer; the array methods import NumPy."""

    transfer = "dlpack"  # NumPy arrays, shared through numpy.from_dlpack

    drives: Mapping[str, Any] = MappingProxyType({"kind": "cpu"})
    #: The library's module (``"scipy"``).
    library: str = ""
    #: The oldest version of it the variants are written for (``"1.10"``).
    min_version: str = "0"
    #: The distribution that depends on it (``"prism-plugin-scipy"``).
    distribution: str = ""

    def __init__(self) -> None:
        # Creating the backend must be cheap: nothing is imported or probed here.
        self._availability: Availability | None = None

    def availability(self) -> Availability:
        """Whether the library (at least ``min_version``) imports here; the reason says why
        not.  Never raises."""
        if self._availability is None:
            self._availability = probe_library(self.library, self.min_version, self.distribution)
        return self._availability

    def asarray(self, obj: Any, dtype: Any = None) -> Any:
        import numpy as np

        return np.asarray(obj, dtype=dtype)

    def to_numpy(self, array: Any) -> Any:
        import numpy as np

        return np.asarray(array)

    def is_native(self, value: Any) -> bool:
        """NumPy arrays (and NumPy's scalars) and Python scalars, taken as they are; other
        arrays (torch tensors, ...) are moved by the dispatcher through :meth:`from_dlpack`.
        Never imports NumPy: before NumPy is imported, no value can be a NumPy array."""
        if isinstance(value, _SCALARS):
            return True
        np = sys.modules.get("numpy")
        return np is not None and isinstance(value, (np.ndarray, np.generic))

    def owns(self, value: Any) -> bool:
        """Always ``False``: the library has no array type; NumPy arrays are the numpy
        backend's."""
        return False

    def from_dlpack(self, obj: Any) -> Any:
        """A NumPy array sharing memory with ``obj`` through DLPack where it can (host memory),
        else a copy; objects without DLPack go through ``numpy.asarray``."""
        import numpy as np

        if hasattr(obj, "__dlpack__"):
            try:
                return np.from_dlpack(obj)
            except BufferError:  # e.g. a tensor that requires grad, or a read-only export
                pass
        return np.asarray(obj)

    def empty(self, shape: Sequence[int], dtype: Any) -> Any:
        import numpy as np

        return np.empty(tuple(shape), dtype=dtype)


_pools: dict[tuple[str, int], ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def thread_pool(threads: int, name: str) -> ThreadPoolExecutor:
    """A pool of exactly ``threads`` threads named ``prism-<name>``, made once per ``(name,
    threads)`` and kept (starting threads per call would cost more than a small batch)."""
    key = (name, threads)
    pool = _pools.get(key)
    if pool is None:
        with _pools_lock:
            pool = _pools.get(key)
            if pool is None:
                # Imported here: it imports logging, which the first call does without.
                from concurrent.futures import ThreadPoolExecutor

                pool = ThreadPoolExecutor(threads, thread_name_prefix=f"prism-{name}")
                _pools[key] = pool
    return pool


def balanced_chunks(offsets: Any, parts: int) -> list[tuple[int, int]]:
    """A packed batch (item ``i`` is ``offsets[i]:offsets[i + 1]`` of one buffer) cut into
    contiguous runs of items with about equal elements each, ``parts`` of them at most:
    ``[(first, end), ...]`` item indices.  NumPy is imported when called."""
    import itertools

    import numpy as np

    t = int(offsets.shape[0]) - 1
    if parts <= 1 or t <= 1:
        return [(0, t)]
    total = int(offsets[-1] - offsets[0])
    cuts = np.searchsorted(
        offsets[1:] - offsets[0], np.linspace(0, total, parts + 1)[1:-1], side="left"
    )
    bounds = sorted({0, *(int(c) + 1 for c in cuts), t})
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]
