"""The functions of the ``parasail`` variants: Prism's op signatures over
``prism_plugin_parasail.kernels``, returning Prism's result types.

``genomics.sw_align`` variants receive ``(query, target, matrix, gap_open, gap_extend,
traceback)`` and return an ``AlignmentResult`` with the score and the end positions (their
``can_run`` declines ``traceback=True``; called directly with it, they raise ``ValueError``).
``genomics.sw_align_batch`` variants receive ``(query, targets, offsets, matrix, gap_open,
gap_extend)`` and return a ``BatchResult``.  The ``.threads`` batch functions split the
targets over every CPU this process may run on.  The ``_<family>`` functions run one kernel
family (``striped``, ``scan`` or ``diag``) where the others choose it per call.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from prism_genomics.result import AlignmentResult, BatchResult

from . import kernels

__all__ = [
    "sw_align_avx2",
    "sw_align_avx2_diag",
    "sw_align_avx2_scan",
    "sw_align_avx2_striped",
    "sw_align_batch_avx2",
    "sw_align_batch_avx2_diag",
    "sw_align_batch_avx2_scan",
    "sw_align_batch_avx2_striped",
    "sw_align_batch_avx2_threads",
    "sw_align_batch_neon",
    "sw_align_batch_neon_diag",
    "sw_align_batch_neon_scan",
    "sw_align_batch_neon_striped",
    "sw_align_batch_neon_threads",
    "sw_align_batch_sse41",
    "sw_align_batch_sse41_diag",
    "sw_align_batch_sse41_scan",
    "sw_align_batch_sse41_striped",
    "sw_align_batch_sse41_threads",
    "sw_align_neon",
    "sw_align_neon_diag",
    "sw_align_neon_scan",
    "sw_align_neon_striped",
    "sw_align_sse41",
    "sw_align_sse41_diag",
    "sw_align_sse41_scan",
    "sw_align_sse41_striped",
]


def _pair(
    isa: str,
    query: Any,
    target: Any,
    matrix: Any,
    gap_open: int,
    gap_extend: int,
    traceback: bool = False,
    *,
    family: str | None = None,
) -> AlignmentResult:
    if traceback:
        raise ValueError(
            "traceback: parasail's variants give the score and end positions only; the "
            "reference (or use_backend('numpy')) traces back"
        )
    score, query_end, target_end = kernels.align(
        isa,
        np.asarray(query),
        np.asarray(target),
        np.asarray(matrix),
        gap_open,
        gap_extend,
        family,
    )
    return AlignmentResult(score, query_end, target_end)


def _batch(
    isa: str,
    threads: int,
    query: Any,
    targets: Any,
    offsets: Any,
    matrix: Any,
    gap_open: int,
    gap_extend: int,
    *,
    family: str | None = None,
) -> BatchResult:
    scores, query_ends, target_ends = kernels.align_batch(
        isa,
        np.asarray(query),
        np.asarray(targets),
        np.asarray(offsets),
        np.asarray(matrix),
        gap_open,
        gap_extend,
        threads=threads,
        family=family,
    )
    return BatchResult(scores=scores, query_ends=query_ends, target_ends=target_ends)


def sw_align_batch_avx2(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on parasail's AVX2 kernels, one thread."""
    return _batch("avx2", 1, *args)


def sw_align_batch_sse41(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on parasail's SSE4.1 kernels, one thread."""
    return _batch("sse41", 1, *args)


def sw_align_batch_neon(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on parasail's NEON kernels, one thread."""
    return _batch("neon", 1, *args)


def sw_align_batch_avx2_threads(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on parasail's AVX2 kernels, on every usable CPU."""
    return _batch("avx2", kernels.batch_threads(), *args)


def sw_align_batch_sse41_threads(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on parasail's SSE4.1 kernels, on every usable CPU."""
    return _batch("sse41", kernels.batch_threads(), *args)


def sw_align_batch_neon_threads(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on parasail's NEON kernels, on every usable CPU."""
    return _batch("neon", kernels.batch_threads(), *args)


def _pair_family(isa: str, family: str, *args: Any) -> AlignmentResult:
    return _pair(isa, *args, family=family)


def _batch_family(isa: str, family: str, *args: Any) -> BatchResult:
    return _batch(isa, 1, *args, family=family)


# ``genomics.sw_align`` on parasail's AVX2 (256-bit vectors), SSE4.1 and NEON (128-bit) kernels:
# partial objects, called without a frame of Python of their own.
sw_align_avx2 = functools.partial(_pair, "avx2")
sw_align_sse41 = functools.partial(_pair, "sse41")
sw_align_neon = functools.partial(_pair, "neon")
# ``genomics.sw_align`` and ``genomics.sw_align_batch`` (one thread) in one kernel family.
sw_align_avx2_striped = functools.partial(_pair_family, "avx2", "striped")
sw_align_avx2_scan = functools.partial(_pair_family, "avx2", "scan")
sw_align_avx2_diag = functools.partial(_pair_family, "avx2", "diag")
sw_align_sse41_striped = functools.partial(_pair_family, "sse41", "striped")
sw_align_sse41_scan = functools.partial(_pair_family, "sse41", "scan")
sw_align_sse41_diag = functools.partial(_pair_family, "sse41", "diag")
sw_align_neon_striped = functools.partial(_pair_family, "neon", "striped")
sw_align_neon_scan = functools.partial(_pair_family, "neon", "scan")
sw_align_neon_diag = functools.partial(_pair_family, "neon", "diag")
sw_align_batch_avx2_striped = functools.partial(_batch_family, "avx2", "striped")
sw_align_batch_avx2_scan = functools.partial(_batch_family, "avx2", "scan")
sw_align_batch_avx2_diag = functools.partial(_batch_family, "avx2", "diag")
sw_align_batch_sse41_striped = functools.partial(_batch_family, "sse41", "striped")
sw_align_batch_sse41_scan = functools.partial(_batch_family, "sse41", "scan")
sw_align_batch_sse41_diag = functools.partial(_batch_family, "sse41", "diag")
sw_align_batch_neon_striped = functools.partial(_batch_family, "neon", "striped")
sw_align_batch_neon_scan = functools.partial(_batch_family, "neon", "scan")
sw_align_batch_neon_diag = functools.partial(_batch_family, "neon", "diag")
