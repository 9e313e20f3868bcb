"""The functions of the ``numba`` variants: Prism's op signatures over
``prism_plugin_numba.kernels``, returning Prism's result types.

``genomics.sw_align`` receives ``(query, target, matrix, gap_open, gap_extend, traceback)``
and returns an ``AlignmentResult`` with the score and the end positions (``can_run`` declines
``traceback=True``; called directly with it, the function raises ``ValueError``).
``genomics.sw_align_batch`` receives ``(query, targets, offsets, matrix, gap_open,
gap_extend)`` and returns a ``BatchResult``; the ``.threads`` function splits the targets over
every CPU this process may run on, the ``_cuda`` and ``_dpx`` ones run the GPU kernel of
``prism_plugin_numba.cuda_batch`` (imported on their first call).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from prism_genomics.result import AlignmentResult, BatchResult

from . import kernels

__all__ = [
    "sw_align",
    "sw_align_batch",
    "sw_align_batch_cuda",
    "sw_align_batch_dpx",
    "sw_align_batch_threads",
]


def sw_align(
    query: Any,
    target: Any,
    matrix: Any,
    gap_open: int,
    gap_extend: int,
    traceback: bool = False,
) -> AlignmentResult:
    """``genomics.sw_align`` on the compiled Gotoh kernel."""
    if traceback:
        raise ValueError(
            "traceback: the Numba variant gives the score and end positions only; the "
            "reference (or use_backend('numpy')) traces back"
        )
    score, query_end, target_end = kernels.align(
        np.asarray(query), np.asarray(target), np.asarray(matrix), gap_open, gap_extend
    )
    return AlignmentResult(score=score, query_end=query_end, target_end=target_end)


def _batch(threads: int, *args: Any) -> BatchResult:
    query, targets, offsets, matrix, gap_open, gap_extend = args
    scores, query_ends, target_ends = kernels.align_batch(
        np.asarray(query),
        np.asarray(targets),
        np.asarray(offsets),
        np.asarray(matrix),
        gap_open,
        gap_extend,
        threads=threads,
    )
    return BatchResult(scores=scores, query_ends=query_ends, target_ends=target_ends)


def sw_align_batch(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on the compiled kernel, one thread."""
    return _batch(1, *args)


def sw_align_batch_threads(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on the compiled kernel, on every usable CPU."""
    return _batch(kernels.batch_threads(), *args)


def _gpu(dpx: bool, *args: Any) -> BatchResult:
    from . import cuda_batch  # imports numba.cuda: only when a GPU variant runs

    query, targets, offsets, matrix, gap_open, gap_extend = args
    scores, query_ends, target_ends = cuda_batch.align_batch(
        np.asarray(query),
        np.asarray(targets),
        np.asarray(offsets),
        np.asarray(matrix),
        gap_open,
        gap_extend,
        dpx=dpx,
    )
    return BatchResult(scores=scores, query_ends=query_ends, target_ends=target_ends)


def sw_align_batch_cuda(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on the GPU kernel (``prism_plugin_numba.cuda_batch``)."""
    return _gpu(False, *args)


def sw_align_batch_dpx(*args: Any) -> BatchResult:
    """``genomics.sw_align_batch`` on the GPU kernel with Hopper's DPX maxima."""
    return _gpu(True, *args)
