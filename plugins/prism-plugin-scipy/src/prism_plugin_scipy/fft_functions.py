"""The scipy plugin's variants of the Array API's ``fft`` functions that prism-core declares
as a table: ``scipy.fft``'s ``fftn``, ``ifftn``, ``rfftn``, ``irfftn``, ``irfft``,
``hfft`` and ``ihfft``, with ``workers`` (:mod:`prism_plugin_scipy.workers`), as ``fft.fft``
is (``ops.py``).  The shifts and frequencies are NumPy's own in SciPy too: no variant.

Each variant takes what its ``can_run`` accepts, as ``fft.fft``'s does: a NumPy array of a type
pocketfft computes in (float32, float64, complex64, complex128; real ones only for ``rfftn``
and ``ihfft``).  The implementations check ``s`` and ``axes`` with the NumPy references' own
function (``prism_core.reference.transform_sizes``: the standard's rules, the same
errors) and hand anything else (a subclass, an unknown ``norm``, nothing to transform, an empty
batch) to the reference, so the caller gets its result or its exception.  SciPy keeps single
precision, as the standard does.

Priority: :data:`~prism_plugin_scipy.variants.PRIORITY_NAMED`, below NumPy's, until measured:
SciPy's transforms are pocketfft, as NumPy's are (``variants.py`` says what was measured for
``fft.fft``: the gain there is ``workers`` on batches); they run where the ``scipy`` backend is
named.  SciPy-free at import: the implementations are named lazily, and import SciPy and
NumPy when called.
"""

from __future__ import annotations

import math
from typing import Any

from prism_core.extending import Variant

__all__ = ["fftn", "hfft", "ifftn", "ihfft", "irfft", "irfftn", "rfftn", "variants"]

_NORMS = frozenset({None, "backward", "ortho", "forward"})


def _plain(x: Any, real: bool) -> bool:
    """A plain NumPy array of a type pocketfft computes in (real ones only where ``real``)."""
    import numpy as np

    return type(x) is np.ndarray and x.dtype.isnative and x.dtype.char in ("fd" if real else "fdFD")


def _nd(name: str, kind: Any, x: Any, s: Any, axes: Any, norm: Any) -> Any:
    from prism_core.reference import implementation, transform_sizes

    reference = implementation(f"fft.{name}")
    if not _plain(x, real=kind == "real") or norm not in _NORMS:
        return reference(x, s=s, axes=axes, norm=norm)
    sizes, found = transform_sizes(f"fft.{name}", x.shape, s, axes, kind)
    if not found or x.size == 0:
        return reference(x, s=s, axes=axes, norm=norm)
    from scipy import fft

    from .workers import workers_for

    # One pass per axis, each over every line along it: the fewest lines of any pass decide.
    length = max(sizes)
    lines = math.prod(x.shape) // x.shape[found[sizes.index(length)]]
    workers = workers_for(lines, length)
    return getattr(fft, name)(x, s=sizes, axes=found, norm=norm, workers=workers)


def fftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("fftn", "complex", x, s, axes, norm)


def ifftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("ifftn", "complex", x, s, axes, norm)


def rfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("rfftn", "real", x, s, axes, norm)


def irfftn(x: Any, /, *, s: Any = None, axes: Any = None, norm: str = "backward") -> Any:
    return _nd("irfftn", "half", x, s, axes, norm)


def _one(name: str, real: bool, x: Any, n: Any, axis: Any, norm: Any) -> Any:
    """``scipy.fft.<name>`` of the 1-D transforms through ``ops._transform`` (its checks and
    its ``workers``), the NumPy reference for anything else."""
    from scipy import fft

    from prism_core.reference import implementation

    from .ops import LAPACK_DTYPES, REAL_DTYPES, _transform

    reference = implementation(f"fft.{name}")
    dtypes = REAL_DTYPES if real else LAPACK_DTYPES
    return _transform(getattr(fft, name), reference, dtypes, x, n, axis, norm)


def irfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _one("irfft", False, x, n, axis, norm)


def hfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _one("hfft", False, x, n, axis, norm)


def ihfft(x: Any, /, *, n: Any = None, axis: int = -1, norm: str = "backward") -> Any:
    return _one("ihfft", True, x, n, axis, norm)


def variants() -> list[Variant]:
    """This module's variants, all on the ``scipy`` backend."""
    from .variants import PRIORITY_NAMED, takes_fft, takes_rfft

    real = ("rfftn", "ihfft")
    return [
        Variant(
            f"fft.{name}",
            f"prism_plugin_scipy.fft_functions:{name}",
            backend="scipy",
            requires={"kind": "cpu"},
            priority=PRIORITY_NAMED,
            can_run=takes_rfft if name in real else takes_fft,
            name=f"scipy.fft.{name}",
        )
        for name in ("fftn", "ifftn", "rfftn", "irfftn", "irfft", "hfft", "ihfft")
    ]
