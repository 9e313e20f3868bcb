"""How many threads the FFTs use (``scipy.fft``'s ``workers=``), and which BLAS is whose.

``scipy.fft`` runs a batch of one-dimensional transforms (the rows of a 2-D array, say) on
``workers`` threads; one transform always runs on one thread.  The plugin's ``workers`` is the
smallest of three numbers, decided once per process (:func:`fft_workers`):

* **the cores the host CPU's description declares** (``compute_units`` of the description the
  host matched, ``prism_core.hardware.present_devices()``), where it declares them: a described chip
  (a Graviton3 says 64) bounds what any process on it should ask for;
* **the CPUs this process may run on** (``os.sched_getaffinity``, else ``os.cpu_count``): a
  container or a batch job often gets fewer than the chip has, and more threads than CPUs only
  contend (the generic descriptions declare no cores, so this is often the deciding number);
* **the threads the BLAS pools are allowed** (threadpoolctl's ``num_threads``, the largest
  among the BLAS pools it sees): a user or a job scheduler who limited BLAS
  (``OMP_NUM_THREADS=1``, ``threadpool_limits(1)`` at start-up) wants no more threads from the
  FFTs either.

Per call, :func:`workers_for` uses fewer: one thread for a single transform (nothing to split)
or for a batch too small to pay for waking threads, and never more threads than transforms.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PARALLEL_MIN_ELEMENTS",
    "WorkersChoice",
    "blas_pools",
    "derive_workers",
    "fft_workers",
    "reset_fft_workers",
    "workers_for",
]

#: Below this many elements in the whole batch, FFTs run on one thread: waking a second thread
#: costs more than it saves.  Measured on the shared 2-core host (benchmarks/crossover.py,
#: "workers"): 2 workers were 0.2-0.9x of one up to 2**14 elements, 0.8-1.1x at 2**15, and
#: 1.2-1.6x on 64 to 1024 rows of 1024 points.
PARALLEL_MIN_ELEMENTS = 1 << 16

#: The threadpoolctl keys reported for each pool (those ``prism doctor`` shows for NumPy's).
_POOL_KEYS = ("user_api", "internal_api", "version", "num_threads", "prefix", "filepath")


@dataclass(frozen=True)
class WorkersChoice:
    """The FFT ``workers`` and the numbers it is the minimum of (``None``: not known)."""

    workers: int
    described_cores: int | None
    described_by: str | None
    usable_cpus: int | None
    blas_threads: int | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "described_cores": self.described_cores,
            "described_by": self.described_by,
            "usable_cpus": self.usable_cpus,
            "blas_threads": self.blas_threads,
        }


def derive_workers(
    described_cores: int | None, usable_cpus: int | None, blas_threads: int | None
) -> int:
    """The smallest of the known numbers, at least 1 (1 when none is known)."""
    known = [int(n) for n in (described_cores, usable_cpus, blas_threads) if n]
    return max(1, min(known)) if known else 1


def _described_cores() -> tuple[int | None, str | None]:
    """``compute_units`` of the host CPU's description, and the description's device type."""
    try:
        import prism_core

        for instance in prism_core.hardware.present_devices().devices:
            description = instance.description
            if description.kind == "cpu":
                return description.compute_units, description.device_type
    except Exception:  # detection never decides an FFT's fate; the other numbers still hold
        return None, None
    return None, None


def _usable_cpus() -> int | None:
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is not None:
        with contextlib.suppress(OSError):
            return len(affinity(0))
    return os.cpu_count()


def _pools() -> list[dict[str, Any]]:
    try:
        import threadpoolctl  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # threadpoolctl warns about some OpenMP mixes
            return list(threadpoolctl.threadpool_info())
    except Exception:
        return []


def _blas_threads() -> int | None:
    counts = [int(p["num_threads"]) for p in _pools() if p.get("user_api") == "blas"]
    return max(counts) if counts else None


def _owner(path: str) -> str:
    """``"scipy"`` or ``"numpy"`` for a library shipped inside that package's wheel
    (``site-packages/scipy.libs/``, ``numpy.libs/``), else ``"shared"`` (a system or conda
    BLAS both may use)."""
    import sys

    real = os.path.realpath(path)
    for name in ("scipy", "numpy"):
        module = sys.modules.get(name)
        where = getattr(module, "__file__", None)
        if where is None:
            continue
        package = os.path.dirname(os.path.realpath(where))
        if real.startswith((package + os.sep, package + ".libs" + os.sep)):
            return name
    return "shared"


def blas_pools() -> list[dict[str, Any]]:
    """The BLAS thread pools threadpoolctl sees, each with ``"of"``: ``"scipy"``, ``"numpy"``
    (a copy inside that package) or ``"shared"``.  Two private copies (the PyPI wheels) are two
    thread pools that may compete for the same cores."""
    return [
        {**{k: p[k] for k in _POOL_KEYS if k in p}, "of": _owner(str(p.get("filepath", "")))}
        for p in _pools()
        if p.get("user_api") == "blas"
    ]


_lock = threading.Lock()
_choice: WorkersChoice | None = None


def fft_workers() -> WorkersChoice:
    """The FFT ``workers`` of this process (decided on first use, then kept)."""
    global _choice
    choice = _choice
    if choice is None:
        with _lock:
            if _choice is None:
                import scipy.fft  # noqa: F401 - its pools are what threadpoolctl must see

                cores, described_by = _described_cores()
                usable = _usable_cpus()
                blas = _blas_threads()
                _choice = WorkersChoice(
                    derive_workers(cores, usable, blas), cores, described_by, usable, blas
                )
            choice = _choice
    return choice


def reset_fft_workers() -> None:
    """Forget the decision: the next FFT decides again (after a change of thread limits)."""
    global _choice
    with _lock:
        _choice = None


def workers_for(batch: int, length: int) -> int:
    """``workers`` for ``batch`` transforms of ``length`` points each: one thread for a single
    transform or fewer than :data:`PARALLEL_MIN_ELEMENTS` elements in all, else
    :func:`fft_workers`, but never more threads than transforms."""
    if batch <= 1 or batch * length < PARALLEL_MIN_ELEMENTS:
        return 1
    return min(fft_workers().workers, batch)
