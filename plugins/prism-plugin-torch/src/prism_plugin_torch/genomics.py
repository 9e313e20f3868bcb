"""``genomics.sw_align_batch`` on an NVIDIA GPU: Smith-Waterman (Gotoh) as an anti-diagonal
wavefront, vectorised over the batch.

The kernel.  The cells of one anti-diagonal ``d = i + j`` (``i`` in the query, ``j`` in the
target) depend only on the two diagonals before it::

    E[i, j] = max(E[i, j-1] - gap_extend, H[i, j-1] - gap_open)      diagonal d-1, index i
    F[i, j] = max(F[i-1, j] - gap_extend, H[i-1, j] - gap_open)      diagonal d-1, index i-1
    H[i, j] = max(0, H[i-1, j-1] + matrix[query[i], target[j]],      diagonal d-2, index i-1
                  E[i, j], F[i, j])

so one step computes a whole diagonal of every target of the batch at once: tensors of shape
``(targets, n)`` indexed by the query position, a dozen elementwise operations per step and
``n + L - 1`` steps for targets of at most ``L`` letters.  Targets are sorted by length and run
in groups padded to the longest of the group (cells past a target's end are masked to 0; a
group takes targets at most twice as long as its shortest, and as many as fit in a step of
:data:`_GROUP_ELEMENTS`), so that short targets do not pay for long ones.  The substitution
scores of a diagonal are one gather from a query profile
(``profile[c, i] = matrix[query[i], c]``).  Scores are int32 when no alignment can exceed
2**30 (``n`` times the largest matrix entry), else int64.

End positions follow the rule every variant follows (``prism_genomics.result``): the
smallest ``target_end`` among the cells holding the maximum, then the smallest ``query_end``.
A later diagonal can hold an equal maximum at a smaller target position, so each step keeps,
per target, the best score and the smallest key ``target_end * n + query_end`` among the cells
holding it.

The same function runs on any torch device: the tests run it on CPU tensors against the
reference (no GPU on the development host), and on CUDA where there is one.  The variant that
dispatch sees is registered for NVIDIA GPUs only (:func:`variants`): on a CPU each of the
``n + L`` steps costs a dozen tensor operations' overhead, and parasail's SIMD kernels were
about 700 times faster (0.024 GCUPS against 17 on 16 targets of 1,000 letters).

Importing this module imports neither torch nor NumPy (the variant list is built at plugin
discovery); the kernel imports them when it runs.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import prism_core
from prism_core.extending import Variant

__all__ = [
    "GPU_MIN_CELLS",
    "GPU_PRIORITY",
    "GPU_REQUIRES",
    "on_gpu",
    "sw_align_batch_cuda",
    "sw_batch_wavefront",
    "variants",
]

#: What the kernel needs of the device: an NVIDIA GPU that current PyTorch CUDA builds compile
#: for (Turing, 7.5, and later: CUDA 13 dropped the older architectures); it uses int32/int64
#: elementwise arithmetic and gathers only, no tensor cores.
GPU_REQUIRES: dict[str, Any] = {"vendor": "nvidia", "kind": "gpu", "compute_capability": ">=7.5"}
#: Above the CPU variants (parasail 15-21): where the data is on the GPU or a GPU is named,
#: it runs there.  With host data in automatic mode dispatch ranks the variants that take NumPy
#: arrays as they are first anyway; tuning (``prism bench genomics.align``) reorders by
#: measured time.
GPU_PRIORITY = 30
#: A batch in host memory goes to the GPU from this many cell updates: the wavefront costs
#: about ``n + L`` kernel launches per group (some tens of microseconds each), which only a
#: large batch amortises.
GPU_MIN_CELLS = 1 << 26
#: Elements of one diagonal step of a group (targets x query length): a dozen int32 or int64
#: tensors of that size live on the device at once (about 0.5 GB at this limit on a GPU, in
#: int32); the CPU keeps them within its caches' reach.
_GROUP_ELEMENTS = {"cuda": 1 << 24, "cpu": 1 << 18}

_OP = "genomics.sw_align_batch"
_BATCH = ("query", "targets", "offsets", "matrix", "gap_open", "gap_extend")


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], name: str) -> Any:
    i = _BATCH.index(name)
    return args[i] if i < len(args) else kwargs.get(name)


def on_gpu(*args: Any, **kwargs: Any) -> bool | str:
    """``can_run`` of ``torch.cuda.genomics.sw_align_batch``: sequences already on the GPU, a
    device named in scope, or a batch of at least :data:`GPU_MIN_CELLS` cell updates where CUDA
    is available (the sequences are bytes; the work is their product)."""
    query, targets = _arg(args, kwargs, "query"), _arg(args, kwargs, "targets")
    for name, seq in (("query", query), ("targets", targets)):
        if len(getattr(seq, "shape", ())) != 1:
            return f"{name}: the wavefront aligns 1-D codes, not {type(seq).__name__}"
    if getattr(query, "is_cuda", False) is True or getattr(targets, "is_cuda", False) is True:
        return True
    if prism_core.current_scope().device is not None:
        return True
    cells = int(query.shape[0]) * int(targets.shape[0])
    if cells < GPU_MIN_CELLS:
        return (
            f"{cells} cell updates in host memory: too few to pay for the GPU's kernel launches "
            f"(it takes {GPU_MIN_CELLS} from host memory; name the device to force it)"
        )
    from .runtime import cuda_unavailable

    why = cuda_unavailable()
    return True if why is None else f"CUDA is not available: {why}"


def variants(ops: Collection[str] | None = None) -> list[Variant]:
    """``torch.cuda.genomics.sw_align_batch`` where the op is declared."""
    if ops is not None and _OP not in ops:
        return []
    return [
        Variant(
            _OP,
            "prism_plugin_torch.genomics:sw_align_batch_cuda",
            backend="torch",
            requires=GPU_REQUIRES,
            priority=GPU_PRIORITY,
            can_run=on_gpu,
            name="torch.cuda.genomics.sw_align_batch",
        )
    ]


def sw_batch_wavefront(
    query: Any,
    targets: Any,
    offsets: Any,
    matrix: Any,
    gap_open: int,
    gap_extend: int,
    *,
    device: Any = None,
) -> tuple[Any, Any, Any]:
    """One query against the packed ``targets`` on ``device`` (a torch device; default the
    query's, when it is a tensor, else the CPU).  Returns int64 NumPy arrays ``(scores,
    query_ends, target_ends)``, positions -1 where the score is 0."""
    import numpy as np
    import torch

    def host(x: Any) -> Any:
        return x.detach().cpu().numpy() if isinstance(x, torch.Tensor) else np.asarray(x)

    if device is None:
        device = query.device if isinstance(query, torch.Tensor) else torch.device("cpu")
    q = host(query)
    packed = host(targets)
    offs = host(offsets).astype(np.int64)
    mat = host(matrix)
    for name, seq in (("query", q), ("targets", packed)):
        if seq.ndim != 1 or seq.dtype != np.uint8:
            raise TypeError(f"{name}: expected 1-D uint8 codes; got {seq.dtype} {seq.shape}")
    if mat.ndim != 2 or mat.shape[0] != mat.shape[1] or mat.shape[0] < 1:
        raise ValueError(f"matrix: expected a square k x k matrix; got shape {mat.shape}")
    k = int(mat.shape[0])
    for name, seq in (("query", q), ("targets", packed)):
        if seq.size and int(seq.max()) >= k:
            raise ValueError(
                f"{name}: code {int(seq.max())} is outside the matrix's alphabet (codes 0 to "
                f"{k - 1} for a {k} x {k} matrix)"
            )
    for name, value in (("gap_open", gap_open), ("gap_extend", gap_extend)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name}: expected a non-negative integer penalty; got {value!r}")
    count = int(offs.shape[0]) - 1
    if (
        offs.ndim != 1
        or count < 0
        or (
            count and (offs[0] < 0 or offs[-1] > packed.shape[0] or bool(np.any(np.diff(offs) < 0)))
        )
    ):
        raise ValueError(
            "offsets: expected t + 1 non-decreasing positions within the "
            f"{packed.shape[0]} packed target codes"
        )
    scores = np.zeros(count, dtype=np.int64)
    query_ends = np.full(count, -1, dtype=np.int64)
    target_ends = np.full(count, -1, dtype=np.int64)
    n = int(q.shape[0])
    lengths = np.diff(offs)
    if n == 0 or count == 0:
        return scores, query_ends, target_ends
    wide = n * max(1, int(np.abs(mat).max())) + 2 * (int(gap_open) + int(gap_extend)) >= 1 << 30
    dtype = torch.int64 if wide else torch.int32
    profile = torch.from_numpy(mat[q.astype(np.int64)].T.astype(np.int64)).to(device, dtype)
    order = np.argsort(lengths, kind="stable")
    order = order[lengths[order] > 0]
    start = 0
    while start < len(order):
        # Ascending lengths, so a group pads to its last target; grow it while a diagonal
        # step of it fits, and while its padding stays below its work.
        stop = start + 1
        limit = _GROUP_ELEMENTS.get(torch.device(device).type, _GROUP_ELEMENTS["cpu"])
        while (
            stop < len(order)
            and (stop + 1 - start) * n <= limit
            and int(lengths[order[stop]]) <= 2 * int(lengths[order[start]]) + 64
        ):
            stop += 1
        group = order[start:stop]
        _group(
            torch,
            np,
            profile,
            packed,
            offs,
            group,
            n,
            int(gap_open),
            int(gap_extend),
            dtype,
            device,
            (scores, query_ends, target_ends),
        )
        start = stop
    return scores, query_ends, target_ends


def _group(
    torch: Any,
    np: Any,
    profile: Any,
    packed: Any,
    offs: Any,
    group: Any,
    n: int,
    gap_open: int,
    gap_extend: int,
    dtype: Any,
    device: Any,
    out: tuple[Any, Any, Any],
) -> None:
    """The wavefront over one group of targets (indices ``group``), results into ``out``."""
    b = len(group)
    lengths = (offs[group + 1] - offs[group]).astype(np.int64)
    longest = int(lengths.max())
    padded = np.zeros((b, longest), dtype=np.int64)
    for row, t in enumerate(group):
        padded[row, : lengths[row]] = packed[offs[t] : offs[t + 1]]
    tgt = torch.from_numpy(padded).to(device)
    lens = torch.from_numpy(lengths).to(device)
    neg = torch.iinfo(dtype).min // 2
    zero = torch.zeros((), dtype=dtype, device=device)
    rows = torch.arange(n, device=device)
    flat = profile.reshape(-1)  # profile[c, i] at c * n + i
    h1 = torch.zeros((b, n + 1), dtype=dtype, device=device)  # diagonal d-1, by i + 1
    h2 = torch.zeros_like(h1)  # diagonal d-2
    e1 = torch.full_like(h1, neg)
    f1 = torch.full_like(h1, neg)
    best = torch.zeros(b, dtype=dtype, device=device)
    key = torch.full((b,), -1, dtype=torch.int64, device=device)
    big = torch.iinfo(torch.int64).max
    for d in range(n + longest - 1):
        j = d - rows  # target position of each query row on this diagonal
        valid = (j >= 0) & (j.unsqueeze(0) < lens.unsqueeze(1))  # (b, n)
        jc = j.clamp(0, longest - 1)
        letters = tgt[:, jc]  # (b, n)
        sub = flat[letters * n + rows]
        e = torch.maximum(e1[:, 1:] - gap_extend, h1[:, 1:] - gap_open)
        f = torch.maximum(f1[:, :-1] - gap_extend, h1[:, :-1] - gap_open)
        h = torch.maximum(h2[:, :-1] + sub, zero)
        h = torch.maximum(torch.maximum(h, e), f)
        h = torch.where(valid, h, zero)
        e = torch.where(valid, e, neg)
        f = torch.where(valid, f, neg)
        step_best = h.max(dim=1).values
        cell_key = jc.to(torch.int64) * n + rows
        at_best = (h == step_best.unsqueeze(1)) & valid
        step_key = torch.where(at_best, cell_key.unsqueeze(0), big).min(dim=1).values
        better = step_best > best
        tie = (step_best == best) & (step_best > 0) & (step_key < key)
        key = torch.where(better | tie, step_key, key)
        best = torch.maximum(best, step_best)
        h2 = h1
        h1 = torch.cat([torch.zeros((b, 1), dtype=dtype, device=device), h], dim=1)
        e1 = torch.cat([torch.full((b, 1), neg, dtype=dtype, device=device), e], dim=1)
        f1 = torch.cat([torch.full((b, 1), neg, dtype=dtype, device=device), f], dim=1)
    scores, query_ends, target_ends = out
    got = best.to(torch.int64).cpu().numpy()
    keys = key.cpu().numpy()
    hit = got > 0
    scores[group] = got
    query_ends[group] = np.where(hit, keys % n, -1)
    target_ends[group] = np.where(hit, keys // n, -1)


def sw_align_batch_cuda(
    query: Any, targets: Any, offsets: Any, matrix: Any, gap_open: int, gap_extend: int
) -> Any:
    """``genomics.sw_align_batch`` on the current CUDA device (:func:`sw_batch_wavefront`)."""
    import torch
    from prism_genomics.result import BatchResult

    scores, query_ends, target_ends = sw_batch_wavefront(
        query, targets, offsets, matrix, gap_open, gap_extend, device=torch.device("cuda")
    )
    return BatchResult(scores=scores, query_ends=query_ends, target_ends=target_ends)
