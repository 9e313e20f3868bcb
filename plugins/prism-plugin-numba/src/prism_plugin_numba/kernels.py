"""Smith-Waterman with affine gaps (Gotoh), compiled by Numba, for one pair and for batches.

The recurrences, for query position ``i`` and target position ``j`` (gap of length ``L``
costs ``gap_open + (L - 1) * gap_extend``)::

    E[i, j] = max(E[i, j-1] - gap_extend, H[i, j-1] - gap_open)    # gap in the query
    F[i, j] = max(F[i-1, j] - gap_extend, H[i-1, j] - gap_open)    # gap in the target
    H[i, j] = max(0, H[i-1, j-1] + matrix[query[i], target[j]], E[i, j], F[i, j])

computed column by column over the target (the outer loop), down the query (the inner loop),
in O(n) memory: one column of ``H`` and of ``E``, ``F`` a scalar running down the column.  The
inner loop reads a *query profile*, ``profile[c, i] = matrix[query[i], c]`` made once per call
(one row per target letter), so that it walks two arrays in order.  Scores are int64, so no
length overflows them.

End positions: the first cell holding the maximum in target-major order (the smallest
``target_end``, then the smallest ``query_end``), because a cell replaces the best only when it
is strictly greater, and cells are visited in that order.  This is parasail's rule and the
reference's.

Compilation: ``@njit(cache=True, nogil=True)``.  The first call in a process compiles (about
1-2 s per signature) or loads the compiled code from Numba's cache (milliseconds).  Numba
writes its cache next to the module by default, which an installed package may not allow; so,
unless ``NUMBA_CACHE_DIR`` is set (Numba's own setting, then obeyed), the kernels are cached in
``numba/`` under Prism's cache directory (``PRISM_CACHE_DIR``; nowhere with
``PRISM_NO_CACHE=1``: they are then compiled in every process).  The directory is given to
these kernels only (Numba's locator is chosen when a function is decorated); the user's own
Numba functions keep Numba's defaults.

A cache in Prism's directory never costs a call, only a compilation and a
:class:`~prism_plugin_numba.NumbaCacheWarning`.  A kernel whose cache cannot be loaded
(truncated, random bytes, unreadable) has its index and data files renamed to
``<name>.damaged`` in the same directory (replacing an older damaged copy; Numba never reads
them), is compiled, and is cached anew.  A directory that cannot be written (read-only, a file
in the way) is warned of once per process and the kernels are compiled without a cache: never
cached beside the module or in the home directory, where Numba would otherwise fall back.

``nogil=True`` lets :func:`align_batch` run its targets on several Python threads at once.

This module imports Numba and NumPy; dispatch imports it when it first runs a Numba variant.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.core.caching import CompileResultCacheImpl, FunctionCache

from prism_core.backend_kit import balanced_chunks, thread_pool, usable_cpus

from . import NumbaCacheWarning

__all__ = [
    "align",
    "align_batch",
    "batch_threads",
    "cache_location",
    "checked_offsets",
    "validate",
]

_NEG = -(1 << 60)


def cache_location() -> str | None:
    """Where the kernels are cached: ``None`` when Numba decides (``NUMBA_CACHE_DIR`` is set,
    or Prism's caches are off), else ``numba/`` under Prism's cache directory."""
    if os.environ.get("NUMBA_CACHE_DIR", "").strip():
        return None
    from prism_core.kernel.config import cache_dir, cache_enabled

    if not cache_enabled():
        return None
    return str(cache_dir() / "numba")


class _GuardedCache(FunctionCache):
    """Numba's cache of one kernel in :func:`cache_location`, where a damaged entry or a failed
    write costs a compilation and a :class:`NumbaCacheWarning`, never the call."""

    class _Impl(CompileResultCacheImpl):
        # Numba's locator of config.CACHE_DIR only: where that directory cannot be written,
        # Numba would fall back to caching beside the module or in the user's home.
        _locator_classes = CompileResultCacheImpl._locator_classes[:1]

    _impl_class = _Impl

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return super().load_overload(sig, target_context)  # type: ignore[no-untyped-call]
        except Exception as exc:  # whatever the bytes made unpickling or rebuilding raise
            self._set_aside(exc)
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            super().save_overload(sig, data)  # type: ignore[no-untyped-call]
        except OSError as exc:
            self.disable()  # type: ignore[no-untyped-call]
            _warn_once(
                self.cache_path,
                f"{self.cache_path}: cannot write Numba's cache there ({_describe(exc)}); the "
                "kernels compiled in this process are not cached",
            )

    def _set_aside(self, exc: Exception) -> None:
        """Rename this kernel's index and data files to ``<name>.damaged`` (replacing an older
        one), and warn; the caller compiles, and saving writes a new cache."""
        folder, base = Path(self.cache_path), self._impl.filename_base
        mine = re.compile(rf"{re.escape(base)}\.(nbi|\d+\.nbc)")
        try:
            names = sorted(p.name for p in folder.iterdir() if mine.fullmatch(p.name))
            for name in names:
                with contextlib.suppress(FileNotFoundError):  # another process moved it first
                    os.replace(folder / name, folder / f"{name}.damaged")
            done = f"moved {', '.join(names)} aside (suffix .damaged)"
        except OSError as why:
            self.disable()  # type: ignore[no-untyped-call]
            done = f"cannot move its files aside ({_describe(why)}), so it is not cached"
        _warn(
            f"{folder}: Numba's cached kernel {base} is damaged ({_describe(exc)}); {done}, "
            "and compiled the kernel instead"
        )


#: The directories warned of in this process: one that cannot be written is warned of once.
_warned: set[str] = set()


def _warn_once(where: str, message: str) -> None:
    if where not in _warned:
        _warned.add(where)
        _warn(message)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _warn(message: str) -> None:
    """Warn ``message`` as a :class:`NumbaCacheWarning` at the user's line that ran the op: the
    first frame outside Prism, this plugin and Numba.  ``warnings.warn`` counts no frame of the
    import system (the kernels are decorated while dispatch imports them)."""
    frame, level = sys._getframe(1), 2
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in _OURS:
        frame = frame.f_back  # type: ignore[assignment]
        if frame is not None and not frame.f_code.co_filename.startswith("<frozen importlib"):
            level += 1
    warnings.warn(message, NumbaCacheWarning, stacklevel=level)


_OURS = frozenset({"prism_core", "prism_plugin_numba", "numba", "importlib"})


def _kernel(fn: Callable[..., Any]) -> Any:
    """``numba.njit(nogil=True)`` with the cache the module's docstring describes."""
    where = cache_location()
    if where is None:  # Numba's own NUMBA_CACHE_DIR, or Prism's caches are off
        numba_decides = bool(os.environ.get("NUMBA_CACHE_DIR", "").strip())
        return numba.njit(cache=numba_decides, nogil=True)(fn)
    kernel: Any = numba.njit(nogil=True)(fn)
    config: Any = numba.config
    before = config.CACHE_DIR
    config.CACHE_DIR = where  # read by Numba's locator when the cache is made
    try:
        # The attribute njit(cache=True) sets to a plain FunctionCache.
        kernel._cache = _GuardedCache(kernel.py_func)  # type: ignore[no-untyped-call]
    except RuntimeError as exc:  # Numba: "no locator available": it cannot write there
        _warn_once(
            where,
            f"{where}: cannot write Numba's cache there ({_unwritable(where) or exc}); the "
            "Smith-Waterman kernels are compiled in every process (1-2 s) until it can be "
            "written, or NUMBA_CACHE_DIR or PRISM_CACHE_DIR names a directory that can",
        )
    finally:
        config.CACHE_DIR = before
    return kernel


def _unwritable(where: str) -> str:
    """Why a file cannot be made in ``where``, as Numba's locator tries; ``""`` if it can."""
    try:
        os.makedirs(where, exist_ok=True)
        tempfile.TemporaryFile(dir=where).close()
    except OSError as exc:
        return _describe(exc)
    return ""


@_kernel
def _profile(query: Any, matrix: Any) -> Any:  # pragma: no cover - compiled
    k = matrix.shape[0]
    n = query.shape[0]
    out = np.empty((k, n), dtype=np.int64)
    for c in range(k):
        for i in range(n):
            out[c, i] = matrix[query[i], c]
    return out


@_kernel
def _sw(
    profile: Any, target: Any, lo: int, hi: int, gap_open: int, gap_extend: int
) -> Any:  # pragma: no cover - compiled
    n = profile.shape[1]
    h_col = np.zeros(n + 1, dtype=np.int64)
    e_col = np.full(n + 1, _NEG, dtype=np.int64)
    best = 0
    best_q = -1
    best_t = -1
    for j in range(lo, hi):
        row = profile[target[j]]
        diag = 0  # H[0, j-1]
        above = 0  # H[0, j]
        f = _NEG
        for i in range(1, n + 1):
            left = h_col[i]  # H[i, j-1]
            e = e_col[i] - gap_extend
            opened = left - gap_open
            if opened > e:
                e = opened
            e_col[i] = e
            f -= gap_extend
            opened = above - gap_open
            if opened > f:
                f = opened
            h = diag + row[i - 1]
            if e > h:
                h = e
            if f > h:
                h = f
            if h < 0:
                h = 0
            diag = left
            h_col[i] = h
            above = h
            if h > best:
                best = h
                best_q = i - 1
                best_t = j - lo
    return best, best_q, best_t


@_kernel
def _batch(
    profile: Any,
    targets: Any,
    offsets: Any,
    start: int,
    stop: int,
    gap_open: int,
    gap_extend: int,
    scores: Any,
    query_ends: Any,
    target_ends: Any,
) -> None:  # pragma: no cover - compiled
    for t in range(start, stop):
        s, q, e = _sw(profile, targets, offsets[t], offsets[t + 1], gap_open, gap_extend)
        scores[t] = s
        query_ends[t] = q
        target_ends[t] = e


def validate(
    matrix: np.ndarray[Any, Any], gap_open: int, gap_extend: int, **seqs: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any]:
    """The matrix as int64 after checking every argument (the error names the one at fault)."""
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] < 1:
        raise ValueError(f"matrix: expected a square k x k matrix; got shape {matrix.shape}")
    if matrix.dtype.kind not in "iu":
        raise TypeError(f"matrix: expected integer scores; got {matrix.dtype}")
    k = int(matrix.shape[0])
    for name, value in (("gap_open", gap_open), ("gap_extend", gap_extend)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name}: expected an integer penalty; got {value!r}")
        if not 0 <= int(value) < 2**40:
            raise ValueError(f"{name}: expected a penalty from 0 to 2**40 - 1; got {value!r}")
    if int(gap_open) < int(gap_extend):
        # The reference refuses it too: reopening a gap would beat extending it, and aligners
        # disagree on what such a gap costs.
        raise ValueError(
            f"gap_open ({gap_open}) must be >= gap_extend ({gap_extend}), as in Prism's reference"
        )
    for name, codes in seqs.items():
        if codes.ndim != 1 or codes.dtype != np.uint8:
            raise TypeError(f"{name}: expected 1-D uint8 codes; got {codes.dtype} {codes.shape}")
        if codes.size and int(codes.max()) >= k:
            raise ValueError(
                f"{name}: code {int(codes.max())} is outside the matrix's alphabet (codes 0 to "
                f"{k - 1} for a {k} x {k} matrix)"
            )
    return np.ascontiguousarray(matrix, dtype=np.int64)


def checked_offsets(offsets: np.ndarray[Any, Any], total: int) -> np.ndarray[Any, Any]:
    """``offsets`` as contiguous int64 after checking them against ``total`` packed codes."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    count = int(offsets.shape[0]) - 1
    if offsets.ndim != 1 or count < 0:
        raise ValueError(f"offsets: expected t + 1 positions, 1-D; got shape {offsets.shape}")
    if count and (
        int(offsets[0]) < 0 or int(offsets[-1]) > total or bool(np.any(np.diff(offsets) < 0))
    ):
        raise ValueError(
            f"offsets: expected non-decreasing positions within the {total} packed target "
            "codes (target i is targets[offsets[i]:offsets[i + 1]])"
        )
    return offsets


def align(
    query: np.ndarray[Any, Any],
    target: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
) -> tuple[int, int, int]:
    """``(score, query_end, target_end)`` of the best local alignment; ``(0, -1, -1)`` when
    nothing scores above 0."""
    m64 = validate(matrix, gap_open, gap_extend, query=query, target=target)
    if query.shape[0] == 0 or target.shape[0] == 0:
        return 0, -1, -1
    profile = _profile(np.ascontiguousarray(query), m64)
    score, q, t = _sw(
        profile, np.ascontiguousarray(target), 0, target.shape[0], int(gap_open), int(gap_extend)
    )
    return (int(score), int(q), int(t)) if score > 0 else (0, -1, -1)


def batch_threads() -> int:
    """How many threads a batch uses at most: the CPUs this process may run on."""
    return usable_cpus()


def align_batch(
    query: np.ndarray[Any, Any],
    targets: np.ndarray[Any, Any],
    offsets: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
    *,
    threads: int = 1,
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """One query against the packed ``targets`` (target ``i`` is
    ``targets[offsets[i]:offsets[i + 1]]``): int64 ``(scores, query_ends, target_ends)``.
    ``threads`` > 1 runs chunks of targets (about equal residues, four per thread) on that
    many threads; the compiled kernel releases the GIL."""
    m64 = validate(matrix, gap_open, gap_extend, query=query, targets=targets)
    offsets = checked_offsets(offsets, targets.shape[0])
    count = int(offsets.shape[0]) - 1
    scores = np.zeros(count, dtype=np.int64)
    query_ends = np.full(count, -1, dtype=np.int64)
    target_ends = np.full(count, -1, dtype=np.int64)
    if count == 0 or query.shape[0] == 0:
        return scores, query_ends, target_ends
    profile = _profile(np.ascontiguousarray(query), m64)
    packed = np.ascontiguousarray(targets)
    o, e = int(gap_open), int(gap_extend)
    run: Callable[[tuple[int, int]], None] = lambda span: _batch(  # noqa: E731
        profile, packed, offsets, span[0], span[1], o, e, scores, query_ends, target_ends
    )
    threads = max(1, min(int(threads), count))
    if threads == 1:
        run((0, count))
    else:
        for _ in thread_pool(threads, "numba").map(run, balanced_chunks(offsets, 4 * threads)):
            pass
    zero = scores == 0
    query_ends[zero] = -1
    target_ends[zero] = -1
    return scores, query_ends, target_ends
