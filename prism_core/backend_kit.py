"""Helpers for backend authors: what the torch, CuPy and SciPy plugins share.

Importing this module is cheap and imports no array framework, so a plugin's hooks may use it
at discovery.  It holds what every GPU or framework backend needs and would otherwise copy:

* probing a framework without ever raising (:func:`import_framework`, :func:`first_line`);
* NumPy's words for the caller mistakes frameworks report differently
  (:func:`broadcast_shapes`, :func:`linalg_error`), so that a caller's mistake is the caller's
  ``ValueError`` on every backend and never looks like a backend failure to dispatch;
* ``can_run`` factories (:func:`size_check`);
* the result tuples of the decompositions, with NumPy's field names (:class:`SVDResult`, ...);
* the result tuples of the ``unique_*`` functions, with the standard's (and NumPy 2's) field
  names (:class:`UniqueAllResult`, :class:`UniqueCountsResult`, :class:`UniqueInverseResult`);
* :func:`dtype_name`, Prism's name for any framework's dtype;
* :func:`requested_device`, what a creation function's ``device=`` asks of a backend, and
  :func:`host_only`, the check of the backends that create in host memory only.

The pattern the bundled plugins follow (docs/writing-a-plugin.md, "Sharing code between
backends"): variants are named lazily (``"prism_plugin_torch.ops:matmul"``), the backend imports
its framework in :meth:`~prism_core.Backend.availability` and keeps the module, and op
functions check arguments in NumPy's words before calling the framework.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, NamedTuple

__all__ = [
    "EigResult",
    "EighResult",
    "QRResult",
    "SVDResult",
    "SlogdetResult",
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "broadcast_shapes",
    "dtype_name",
    "first_line",
    "host_only",
    "import_framework",
    "linalg_error",
    "requested_device",
    "shape_of",
    "size_check",
]


class SVDResult(NamedTuple):
    """``linalg.svd``'s result, named as NumPy's: ``(U, S, Vh)``."""

    U: Any
    S: Any
    Vh: Any


class EighResult(NamedTuple):
    """``linalg.eigh``'s result, named as NumPy's."""

    eigenvalues: Any
    eigenvectors: Any


class EigResult(NamedTuple):
    """``linalg.eig``'s result, named as NumPy's."""

    eigenvalues: Any
    eigenvectors: Any


class QRResult(NamedTuple):
    """``linalg.qr``'s result, named as NumPy's: ``(Q, R)``."""

    Q: Any
    R: Any


class SlogdetResult(NamedTuple):
    """``linalg.slogdet``'s result, named as NumPy's: ``(sign, logabsdet)``."""

    sign: Any
    logabsdet: Any


class UniqueAllResult(NamedTuple):
    """``unique_all``'s result, named as the Array API's (and NumPy 2's):
    ``(values, indices, inverse_indices, counts)``."""

    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


class UniqueCountsResult(NamedTuple):
    """``unique_counts``'s result, named as the Array API's: ``(values, counts)``."""

    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """``unique_inverse``'s result, named as the Array API's: ``(values, inverse_indices)``."""

    values: Any
    inverse_indices: Any


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message, or its type's name when it has none."""
    text = str(exc).strip()
    line = text.splitlines()[0].strip() if text else ""
    return line or type(exc).__name__


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


def dtype_name(dt: Any) -> str:
    """Prism's name of a dtype of any framework (``"float32"``), or its text when Prism does
    not know it."""
    from prism_core._description.dtypes import dtype

    try:
        return dtype(dt).name
    except (TypeError, ValueError):
        return str(dt).rpartition(".")[2]


def _arrays(args: Sequence[Any]) -> list[Any]:
    found: list[Any] = []
    for a in args:
        if hasattr(a, "shape") and hasattr(a, "dtype"):
            found.append(a)
        elif isinstance(a, (list, tuple)):
            found.extend(x for x in a if hasattr(x, "shape") and hasattr(x, "dtype"))
    return found


def size_check(
    min_elements: int, on_device: Callable[[Any], bool] | None = None
) -> Callable[..., bool | str]:
    """A ``can_run`` that takes calls whose largest array argument has at least
    ``min_elements`` elements, or any array for which ``on_device(array)`` is true (data
    already there has no transfer to save), and declines the others with the reason."""

    def can_run(*args: Any, **kwargs: Any) -> bool | str:
        arrays = _arrays(args)
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


#: The devices a host-memory backend (NumPy, SciPy) creates on, for its error messages.
_HOST_DEVICES = (
    "None, 'cpu' or Prism's description of a CPU "
    "(prism_core.array_api.__array_namespace_info__().default_device())"
)


def requested_device(device: Any) -> tuple[str, Any]:
    """What the ``device=`` argument of a creation function (``zeros``, ``arange``, ...) asks
    of a backend: ``("default", None)`` for ``None`` (the backend's own default);
    ``("cpu", None)`` for ``"cpu"`` and for Prism's description of a CPU (a
    :class:`~prism_core.DeviceInstance` or :class:`~prism_core.DeviceDescription` of kind
    ``cpu``); ``("gpu", instance)`` for Prism's description of any other device (the
    instance's ``index`` says which; a description alone means the first); and
    ``("native", device)`` for anything else: a backend's own device object or name
    (``torch.device("cuda:1")``, ``"cuda"``), which the backend reads itself.

    Dispatch has already chosen the backend by then (a ``device=`` naming an accelerator runs the
    call as ``prism_core.device(...)`` would); the variant only has to honour it."""
    if device is None:
        return "default", None
    if isinstance(device, str) and device == "cpu":
        return "cpu", None
    description = getattr(device, "description", device)
    kind = getattr(description, "kind", None)
    if kind is not None and hasattr(description, "device_type"):
        return ("cpu", None) if kind == "cpu" else ("gpu", device)
    return "native", device


def host_only(op: str, device: Any) -> None:
    """Raise ``ValueError`` unless ``device`` (a creation function's ``device=``) names host
    memory, where NumPy and SciPy create arrays; the message names the op, the device and what
    is accepted."""
    if requested_device(device)[0] not in ("default", "cpu"):
        raise ValueError(
            f"{op}: device={device!r} is not where this backend creates arrays (host memory); "
            f"it takes {_HOST_DEVICES}"
        )
