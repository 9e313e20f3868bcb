"""NumPy-style kernels for placed functions (``prism_core.function``), written as scientific
code is: a module-level ``np``, operators, slicing, in-place updates, loops of small calls.

Each module exposes ``kernel(...)`` and ``example(n, dtype="float64")`` (the kernel's arguments
at size ``n``, made with NumPy from a fixed seed), and says whether the kernel updates arrays in
place (``MUTATES``: JAX, whose arrays are immutable, declines such a kernel).  ``bind(module,
namespace)`` gives a copy of a kernel module whose ``np`` is ``namespace`` — by default
:class:`PrismFirst`, which looks each name up in ``prism_core`` first and NumPy second, the way
issue 34's held-out suite runs kernels; the module itself keeps NumPy (the reference).

Used by ``tests/test_function_kernels.py``, ``benchmarks/bench_function_kernels.py`` and the GPU
check's ``function-kernels`` step (``benchmarks/gpu/function_kernels.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Any

import numpy

#: The kernel modules, by name (``benchmarks.kernels.<name>``).
NAMES = (
    "heat",
    "trisolve",
    "nbody",
    "conv2d",
    "lowpass",
    "histogram",
    "power_iteration",
    "mandelbrot",
    "pairwise",
    "logsumexp",
    "prefix",
    "cg",
)


class PrismFirst:
    """A namespace that looks a name up in ``primary`` first and ``fallback`` second.

    ``np.linalg`` and ``np.fft`` are namespaces of the same kind over ``prism_core.linalg`` /
    ``numpy.linalg`` and ``prism_core.fft`` / ``numpy.fft``.  A name found once is kept on the
    instance, so that a kernel's loop of small calls pays for the lookup once.
    """

    SUBMODULES = ("linalg", "fft")

    def __init__(self, primary: Any = None, fallback: Any = numpy) -> None:
        if primary is None:
            import prism_core

            primary = prism_core
        self._primary = primary
        self._fallback = fallback

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value: Any
        if name in self.SUBMODULES and hasattr(self._fallback, name):
            value = PrismFirst(getattr(self._primary, name, None) or ModuleType(name),
                               getattr(self._fallback, name))  # fmt: skip
        else:
            try:
                value = getattr(self._primary, name)
            except AttributeError:
                value = getattr(self._fallback, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"<PrismFirst {getattr(self._primary, '__name__', self._primary)!r} then " \
               f"{getattr(self._fallback, '__name__', self._fallback)!r}>"  # fmt: skip


def load(name: str) -> ModuleType:
    """The kernel module ``name`` (its ``np`` is NumPy)."""
    return importlib.import_module(f"{__name__}.{name}")


def bind(module: ModuleType, namespace: Any = None) -> ModuleType:
    """A fresh copy of the kernel ``module`` whose ``np`` is ``namespace`` (by default a
    :class:`PrismFirst` namespace); ``module`` itself is left as it was."""
    spec = module.__spec__
    assert spec is not None and spec.loader is not None, module
    copy = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(copy)
    copy.np = PrismFirst() if namespace is None else namespace  # type: ignore[attr-defined]
    return copy
