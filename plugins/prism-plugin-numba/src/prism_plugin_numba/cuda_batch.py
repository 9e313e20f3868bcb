"""``genomics.sw_align_batch`` on an NVIDIA GPU: an inter-sequence Smith-Waterman (Gotoh)
kernel in CUDASW++'s class, compiled by ``numba.cuda``.

One thread aligns the query with one target (inter-sequence parallelism: no thread waits for
another).  Targets are sorted by length, longest first, so that the threads of a block have
about the same work and the longest ones start first.  Each thread walks the query in tiles of
:data:`TILE` rows kept in registers (``H`` and ``E`` of each row, ``F`` running down the tile)
and, for each tile, the target's letters left to right; the bottom row's ``H`` and ``F`` are
handed to the next tile through a scratch row in global memory, laid out ``[letter, thread]``
per block so that a warp's loads and stores are coalesced (one load and one store of each per
:data:`TILE` cells).  The query profile, ``profile[c, i] = matrix[query[i], c]`` for every
target letter ``c``, is in shared memory as int16, in chunks of query positions whose rows are
padded so that the threads of a warp, each reading the row of its own target letter, hit
different banks.

Scores: every value is kept at 0 or above (``E = max(E - extend, H - open, 0)``, likewise
``F``), which changes no ``H``: a gap value that is not positive never raises a cell above 0.
The first pass stores the scratch rows in 16 bits, saturated at 32,767; a target whose best
score exceeds it (the only way a stored value can saturate, since no value exceeds the best) is
aligned again in a 32-bit pass.  Penalties above the highest possible score are lowered to it
plus one, which changes nothing, so that no subtraction leaves 32 bits.  Arithmetic is int32
in registers (Numba has no 16x2 SIMD lanes): the 16-bit pass halves the scratch traffic.

The DPX kernel (:func:`kernel` with ``dpx=True``) is the same kernel with its maxima
(``max(a, b, 0)``, twice for ``H``'s four terms) taken by Hopper's DPX instruction
``max.s32.relu`` (what CUDA C's ``__vimax_s32_relu`` and ``__vimax3_s32_relu`` compile to), as
inline PTX in a Numba intrinsic: one instruction instead of two compare-and-selects, four per
cell.  PTX has it for compute capability 9.0 and later only, so its variant requires the
``dpx`` feature of the described device.

End positions follow the reference's rule: the smallest ``target_end`` among the cells holding
the best score, then the smallest ``query_end``.  Tiles are visited top to bottom, and within
a tile column by column, so a cell replaces the best when it is greater, or equal at a smaller
target position (an equal cell at the same target position is lower in the query).

The kernel's logic is checked without a GPU by running it in Numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1`` before ``numba.cuda`` is imported; the tests do it in a
subprocess), and its compilation to PTX for Hopper by ``numba.cuda.compile_ptx`` where libNVVM
is found.  This module imports ``numba.cuda`` and NumPy.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from typing import Any

import numba
import numba.cuda
import numpy as np
from llvmlite import ir  # type: ignore[import-untyped, unused-ignore]
from numba.core.extending import intrinsic

from . import kernels

# numba.cuda is untyped, and its kernel-side names (threadIdx, shared, syncthreads) exist only
# when compiled; its scalar types are called on values in the kernel.
cuda: Any = numba.cuda
int16: Any = numba.int16
int32: Any = numba.int32
uint64: Any = numba.uint64
types: Any = numba.types

__all__ = [
    "BLOCK",
    "INT16_LIMIT",
    "PROFILE_WORDS",
    "TILE",
    "align_batch",
    "kernel",
    "score_bound",
]

#: Query rows a thread keeps in registers: one scratch load and store of H and F per TILE
#: cells, and TILE substitution scores read from shared memory per target letter.
TILE = 8
#: Threads per block: a block's targets have neighbouring lengths once sorted.
BLOCK = 128
#: int16 entries of the shared query profile (24 KiB: nine blocks of an SM's 228 KiB).
PROFILE_WORDS = 12288
#: The largest best score the 16-bit pass keeps exactly; above it, a 32-bit pass.
INT16_LIMIT = 32767
#: Scratch entries (per array) of one launch at most: a batch beyond runs in several.
SCRATCH_ENTRIES = 1 << 26

_Arrays = tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]


def _relu_max(dpx: bool) -> Callable[..., int]:
    """``max(a, b, 0)`` of two int32 as a Numba intrinsic, inlined in the kernel: Hopper's DPX
    instruction ``max.s32.relu`` (inline PTX) with ``dpx``, else two compare-and-selects."""

    def typer(typingctx: object, a: object, b: object) -> tuple[object, Callable[..., object]]:
        def codegen(context: object, builder: Any, signature: object, args: Any) -> object:
            i32 = ir.IntType(32)
            if dpx:
                kind = ir.FunctionType(i32, [i32, i32])
                asm = ir.InlineAsm(kind, "max.s32.relu $0, $1, $2;", "=r,r,r")
                return builder.call(asm, args)
            a_, b_ = args
            high = builder.select(builder.icmp_signed(">", a_, b_), a_, b_)
            zero = ir.Constant(i32, 0)
            return builder.select(builder.icmp_signed(">", high, zero), high, zero)

        return types.int32(types.int32, types.int32), codegen

    typer.__name__ = "dpx_relu_max" if dpx else "relu_max"
    return intrinsic(typer)


def _simulated_relu_max(a: int, b: int) -> int:
    """``max(a, b, 0)`` where the simulator runs the kernel as Python."""
    return max(a, b, 0)


def _make(relu_max: Callable[..., int]) -> Callable[..., None]:
    """The kernel's Python function over ``relu_max`` (``max(a, b, 0)``: DPX or not)."""

    def sw_kernel(  # pragma: no cover - compiled
        profile: Any,  # int16 (k, n): matrix[query[i], c]
        n: int,
        chunk: int,  # query positions per shared chunk (a multiple of TILE)
        targets: Any,  # uint8, packed
        offsets: Any,  # int64, t + 1
        order: Any,  # int32 per thread: its target, or -1
        bases: Any,  # int64 per block: where its scratch starts
        gap_open: int,
        gap_extend: int,
        cap: int,  # the largest value the scratch holds
        hs: Any,  # scratch H of the tile's bottom row (int16 or int32)
        fs: Any,  # scratch F of it
        scores: Any,  # int32 per target
        query_ends: Any,
        target_ends: Any,
    ) -> None:
        shared = cuda.shared.array(PROFILE_WORDS, int16)
        hh = cuda.local.array(TILE, int32)
        ee = cuda.local.array(TILE, int32)
        tid = cuda.threadIdx.x
        width_b = cuda.blockDim.x
        slot = cuda.blockIdx.x * width_b + tid
        target = order[slot]
        # Indices are unsigned: Numba wraps signed ones around (Python's negative indices), a
        # dozen 64-bit instructions per access.
        start = uint64(0)
        m = 0
        if target >= 0:
            start = uint64(offsets[target])
            m = offsets[target + 1] - offsets[target]
        k = profile.shape[0]
        stride = chunk + 1
        ustride = uint64(stride)
        uwidth = uint64(width_b)
        base = uint64(bases[cuda.blockIdx.x]) + uint64(tid)
        cap = int32(cap)
        go = int32(gap_open)
        ge = int32(gap_extend)
        best = int32(0)
        best_q = int32(-1)
        best_t = int32(-1)
        for c0 in range(0, n, chunk):
            cuda.syncthreads()  # the previous chunk is no longer read
            width = n - c0
            if width > chunk:
                width = chunk
            for w in range(tid, k * chunk, width_b):
                c = w // chunk
                i = w - c * chunk
                value = int16(0)
                if i < width:
                    value = profile[c, c0 + i]
                shared[c * stride + i] = value
            cuda.syncthreads()
            for i0 in range(c0, c0 + width, TILE):
                for r in range(TILE):
                    hh[r] = 0
                    ee[r] = 0
                corner = int32(0)  # H[i0 - 1, j - 1]
                off = uint64(i0 - c0)
                for j in range(m):
                    at = base + uint64(j) * uwidth
                    up = int32(0)  # H[i0 - 1, j]
                    f = int32(0)  # F[i0 - 1, j]
                    if i0 > 0:
                        up = int32(hs[at])
                        f = int32(fs[at])
                    diag = corner
                    corner = up
                    row = uint64(targets[start + uint64(j)]) * ustride + off
                    for r in range(TILE):
                        left = hh[r]
                        e = relu_max(int32(ee[r] - ge), int32(left - go))
                        f = relu_max(int32(f - ge), int32(up - go))
                        h = relu_max(relu_max(int32(diag + shared[row + uint64(r)]), e), f)
                        diag = left
                        hh[r] = h
                        ee[r] = e
                        up = h
                        # h >= best is rare once a best is found: one comparison a cell.
                        if h >= best and (h > best or j < best_t) and i0 + r < n:
                            best = h
                            best_q = int32(i0 + r)
                            best_t = int32(j)
                    if up > cap:  # saturates in 16 bits; such a target's best exceeds cap
                        up = cap
                    if f > cap:
                        f = cap
                    hs[at] = up
                    fs[at] = f
        if target >= 0:
            scores[target] = best
            query_ends[target] = best_q
            target_ends[target] = best_t

    return sw_kernel


@cache
def kernel(dpx: bool = False) -> Any:
    """The kernel (``numba.cuda.jit``, compiled for each signature at its first launch); with
    ``dpx`` its maxima are Hopper's DPX instructions.  Under the simulator, the same Python
    function with Python's ``max`` (DPX or not)."""
    if simulated():
        return cuda.jit(_make(_simulated_relu_max))
    return cuda.jit(_make(_relu_max(dpx)))


def score_bound(query_length: int, longest_target: int, matrix: np.ndarray[Any, Any]) -> int:
    """The highest score any cell can reach: the shorter length times the matrix's highest
    entry (0 when no entry is positive)."""
    return min(query_length, longest_target) * max(int(matrix.max()), 0)


def _chunk(k: int) -> int:
    """Query positions per shared chunk for ``k`` letters: rows of ``chunk + 1`` int16 entries
    fit :data:`PROFILE_WORDS`; a multiple of 64, so that ``chunk + 1`` puts neighbouring
    letters' rows in different banks, where that leaves room, else of :data:`TILE`."""
    room = PROFILE_WORDS // k - 1
    return room // 64 * 64 if room >= 64 else room // TILE * TILE


def align_batch(
    query: np.ndarray[Any, Any],
    targets: np.ndarray[Any, Any],
    offsets: np.ndarray[Any, Any],
    matrix: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
    *,
    dpx: bool = False,
    narrow: bool = True,
    block: int = BLOCK,
) -> _Arrays:
    """One query against the packed ``targets`` on the current CUDA device (target ``i`` is
    ``targets[offsets[i]:offsets[i + 1]]``): int64 NumPy ``(scores, query_ends,
    target_ends)``, positions -1 where the score is 0.

    ``narrow`` runs the 16-bit pass first and the 32-bit pass on the targets whose best score
    exceeds :data:`INT16_LIMIT`; ``narrow=False`` runs the 32-bit pass only.  Raises
    ``ValueError`` (naming the argument) for what the CPU kernel refuses, and for a matrix
    entry beyond int16 or scores that could exceed int32."""
    m64 = kernels.validate(matrix, gap_open, gap_extend, query=query, targets=targets)
    offsets = kernels.checked_offsets(offsets, targets.shape[0])
    count = int(offsets.shape[0]) - 1
    scores = np.zeros(count, dtype=np.int64)
    query_ends = np.full(count, -1, dtype=np.int64)
    target_ends = np.full(count, -1, dtype=np.int64)
    n = int(query.shape[0])
    lengths = np.diff(offsets)
    if count == 0 or n == 0 or not lengths.any():
        return scores, query_ends, target_ends
    if int(m64.max()) > INT16_LIMIT or int(m64.min()) < -INT16_LIMIT - 1:
        raise ValueError(
            f"matrix: entries from {int(m64.min())} to {int(m64.max())}; the GPU kernel keeps "
            "its profile in int16 (-32768 to 32767); the CPU variants take any"
        )
    bound = score_bound(n, int(lengths.max()), m64)
    if bound >= 1 << 30:
        raise ValueError(
            f"scores could reach {bound}, beyond the GPU kernel's int32; the CPU variants "
            "(int64) take them"
        )
    # Above the highest score a penalty changes nothing more: lowered so no value leaves int32.
    go, ge = min(int(gap_open), bound + 1), min(int(gap_extend), bound + 1)
    profile = np.ascontiguousarray(m64[query.astype(np.intp)].T, dtype=np.int16)
    device = {
        "profile": cuda.to_device(profile),
        "targets": cuda.to_device(np.ascontiguousarray(targets)),
        "offsets": cuda.to_device(offsets),
    }
    run = kernel(dpx)
    chunk = _chunk(int(m64.shape[0]))
    everyone = np.flatnonzero(lengths > 0)
    wide = not narrow
    got = _launch(run, device, n, chunk, everyone, lengths, go, ge, wide, block)
    if not wide:
        over = everyone[got[0][everyone] > INT16_LIMIT]
        if over.size:  # the 16-bit scratch may have wrapped: these again in 32 bits
            again = _launch(run, device, n, chunk, over, lengths, go, ge, True, block)
            for mine, theirs in zip(got, again, strict=True):
                mine[over] = theirs[over]
    scores[:] = got[0]
    query_ends[:] = got[1]
    target_ends[:] = got[2]
    zero = scores == 0
    query_ends[zero] = -1
    target_ends[zero] = -1
    return scores, query_ends, target_ends


def _launch(
    run: Any,
    device: dict[str, Any],
    n: int,
    chunk: int,
    chosen: np.ndarray[Any, Any],
    lengths: np.ndarray[Any, Any],
    gap_open: int,
    gap_extend: int,
    wide: bool,
    block: int,
) -> _Arrays:
    """The kernel over the targets ``chosen`` (indices), longest first, in launches whose
    scratch fits :data:`SCRATCH_ENTRIES`; int32 results indexed by target (others 0/-1)."""
    count = lengths.shape[0]
    out = (
        cuda.to_device(np.zeros(count, dtype=np.int32)),
        cuda.to_device(np.full(count, -1, dtype=np.int32)),
        cuda.to_device(np.full(count, -1, dtype=np.int32)),
    )
    order = chosen[np.argsort(-lengths[chosen], kind="stable")].astype(np.int32)
    blocks = -(-order.shape[0] // block)
    padded = np.full(blocks * block, -1, dtype=np.int32)
    padded[: order.shape[0]] = order
    # A block's scratch holds its longest target (its first: sorted) for each of its threads.
    need = lengths[padded[::block]].astype(np.int64) * block
    dtype = np.int32 if wide else np.int16
    ends = np.cumsum(need)
    first = 0
    while first < blocks:
        before = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, before + SCRATCH_ENTRIES, "right")))
        bases = np.zeros(last - first, dtype=np.int64)
        np.cumsum(need[first : last - 1], out=bases[1:])
        entries = max(int(need[first:last].sum()), 1)
        hs = cuda.device_array(entries, dtype=dtype)
        fs = cuda.device_array(entries, dtype=dtype)
        run[last - first, block](
            device["profile"], n, chunk, device["targets"], device["offsets"],
            cuda.to_device(padded[first * block:last * block]), cuda.to_device(bases),
            gap_open, gap_extend, (1 << 31) - 1 if wide else INT16_LIMIT, hs, fs, *out,
        )  # fmt: skip
        first = last
    return out[0].copy_to_host(), out[1].copy_to_host(), out[2].copy_to_host()


def simulated() -> bool:
    """Whether ``numba.cuda`` is Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
