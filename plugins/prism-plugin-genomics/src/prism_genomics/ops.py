"""The Smith-Waterman ops, declared when this module is imported, with their work and the
example arguments ``prism bench`` and ``prism.tune`` measure them on.

Two ops, dispatched like every op (their variants come from plugins: this one's NumPy
references, parasail, Numba, torch):

* ``genomics.sw_align(query, target, matrix, gap_open, gap_extend, traceback)`` -> an
  :class:`~prism_genomics.AlignmentResult`: the best local alignment of one pair;
* ``genomics.sw_align_batch(query, targets, offsets, matrix, gap_open, gap_extend)`` -> a
  :class:`~prism_genomics.BatchResult`: one query against many targets, packed end to end
  (target ``i`` is ``targets[offsets[i]:offsets[i + 1]]``).

Every argument is already encoded: sequences are 1-d ``uint8`` arrays of codes, ``matrix`` the
``k x k`` ``int32`` substitution matrix over those codes, the penalties non-negative ints (a gap
of length ``L`` costs ``gap_open + (L - 1) * gap_extend``).  The front end
(``prism_genomics.align``) encodes letters and fills in the aligned rows.

Why here, at import: a plugin's variants join their op when dispatch first looks at the op
table, and a plugin whose variants name an op that is not declared yet fails as a whole.  The
plugin's entry point (``prism_genomics.plugin``) imports this module, and so does every plugin
whose variants extend these ops (parasail, numba, torch) before it makes them: whichever loads
first declares the ops, so the order in which plugins load does not matter.  The ops are
declared with ``prism_core.extending.operation(..., reference=False)``: the functions below give
them their signature and documentation only, and the NumPy references come through the plugin's
``prism_variants`` hook like every other variant.  Importing this module imports no NumPy:
discovery stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import prism_core
from prism_core.backend_kit import Examples

if TYPE_CHECKING:
    from prism_genomics.result import AlignmentResult, BatchResult

__all__ = [
    "BATCH",
    "CELL_OPS",
    "SW_ALIGN",
    "SW_ALIGN_BATCH",
    "TRACEBACK_LIMIT",
    "AlignmentError",
    "sw_align",
    "sw_align_batch",
]

SW_ALIGN = "genomics.sw_align"
SW_ALIGN_BATCH = "genomics.sw_align_batch"

#: The most cells (query length x target length) a traceback may cover: it keeps one byte of
#: directions per cell (256 MiB at this limit).  Score and ends need memory for one row only.
TRACEBACK_LIMIT = 1 << 28

#: Integer operations counted per cell update for the performance model: two subtractions and
#: a maximum for each gap state, an addition (and a table lookup) for the diagonal, three
#: maxima for the cell, one comparison for the best score.
CELL_OPS = 10

#: Targets in an example batch of ``genomics.sw_align_batch`` unless ``batch=`` says otherwise.
BATCH = 64


class AlignmentError(prism_core.PrismError, ValueError):
    """Arguments the alignment ops cannot take: a sequence that is not a 1-d array of codes, a
    code the matrix has no row for, negative penalties, packed targets whose offsets do not
    match, a traceback too large to keep."""

    __module__ = "prism_genomics"


# -- example arguments (prism bench genomics.align, prism.tune(op, sizes=...)) ----------------


def _example_pair(n: int, dtype: str, batch: int | None) -> tuple[Any, ...]:
    """Random DNA (codes of A, C, G, T) scored 2/-3 with gaps 5/2, the ops' defaults: a query
    of ``n`` letters and a target of ``10 n`` (``dtype`` and ``batch`` are not used: the
    arguments' types are fixed)."""
    import numpy as np

    from prism_genomics.scoring import Scoring

    rng = np.random.default_rng(n)
    scoring = Scoring.match_mismatch()
    query = rng.integers(0, 4, n, dtype=np.uint8)
    target = rng.integers(0, 4, 10 * n, dtype=np.uint8)
    return (query, target, scoring.matrix, scoring.gap_open, scoring.gap_extend, False)


def _example_batch(n: int, dtype: str, batch: int | None) -> tuple[Any, ...]:
    """A query of ``n`` letters and ``batch`` targets of ``n``, packed (see
    :func:`_example_pair`)."""
    import numpy as np

    from prism_genomics.scoring import Scoring

    targets = BATCH if batch is None else batch
    rng = np.random.default_rng(n)
    scoring = Scoring.match_mismatch()
    query = rng.integers(0, 4, n, dtype=np.uint8)
    packed = rng.integers(0, 4, n * targets, dtype=np.uint8)
    offsets = np.arange(0, n * targets + 1, n, dtype=np.int64)
    return (query, packed, offsets, scoring.matrix, scoring.gap_open, scoring.gap_extend)


#: Bytes of the example scoring matrix: 5 x 5 int32 (ACGTN).
_MATRIX_BYTES = 5 * 5 * 4


def _pair_bytes(n: int, dtype: str, batch: int | None) -> int:
    return n + 10 * n + _MATRIX_BYTES  # uint8 query and target; the result is a few numbers


def _batch_bytes(n: int, dtype: str, batch: int | None) -> int:
    targets = BATCH if batch is None else batch
    return n + n * targets + 8 * (targets + 1) + _MATRIX_BYTES  # uint8 codes, int64 offsets


def _cells(args: tuple[Any, ...]) -> int:
    """Cell updates of one call: the query's length times the target's (for a batch, times all
    targets' letters)."""
    return int(args[0].shape[0]) * int(args[1].shape[0])


#: What to install where only this plugin's NumPy references can align.
_FASTER = (
    "prism-plugin-parasail (SIMD kernels), prism-plugin-numba (compiled, multi-threaded) or "
    "prism-plugin-torch (the GPU kernel), from plugins/ in Prism's repository"
)
#: ``prism bench genomics.align``: both ops.
GROUP = "genomics.align"

PAIR_EXAMPLES = Examples(
    make=_example_pair,
    nbytes=_pair_bytes,
    size="a DNA query of n letters against a target of 10 n",
    # 1000 is the 1,000 x 10,000 alignment of docs/genomics.md's measurements.
    quick=(100, 1000),
    full=(30, 100, 300, 1000, 3000),
    axis="query length n (letters; target 10 n)",
    dtype_label="dna",
    group=GROUP,
    cells=_cells,
    model_dtype="int32",
    install=_FASTER,
)
BATCH_EXAMPLES = Examples(
    make=_example_batch,
    nbytes=_batch_bytes,
    size="a DNA query of n letters against a batch of targets of n",
    quick=((100, 64), (1000, 64)),
    full=((100, 16), (100, 1024), (1000, 16), (1000, 256)),
    axis="cell updates per call (n letters x batch targets of n)",
    dtype_label="dna",
    batch=BATCH,
    group=GROUP,
    cells=_cells,
    axis_cells=True,
    model_dtype="int32",
    install=_FASTER,
)


# -- the ops ---------------------------------------------------------------------------------


def _sw_align(
    query: Any,
    target: Any,
    matrix: Any,
    gap_open: int,
    gap_extend: int,
    traceback: bool = False,
) -> AlignmentResult:
    """The best local (Smith-Waterman) alignment of two encoded sequences with affine gaps.

    ``query`` and ``target`` are 1-d uint8 arrays of codes, ``matrix`` the k x k int32
    substitution matrix over those codes, ``gap_open``/``gap_extend`` non-negative penalties (a
    gap of length L costs gap_open + (L - 1) * gap_extend).  Returns an AlignmentResult: the
    score and the 0-based inclusive ends (-1 when the score is 0; ties go to the smallest
    target end, then the smallest query end, parasail's rule), and with ``traceback`` the
    starts and the CIGAR (M/I/D, the query as the read).  ``prism_genomics.align`` encodes
    letters and calls this op.
    """
    raise NotImplementedError  # never called: dispatch runs the op's variants


def _sw_align_batch(
    query: Any,
    targets: Any,
    offsets: Any,
    matrix: Any,
    gap_open: int,
    gap_extend: int,
) -> BatchResult:
    """The best local alignment of one encoded query with each of many targets packed end to
    end in ``targets``.

    Target i is ``targets[offsets[i]:offsets[i + 1]]``; ``offsets`` is int64 of length t + 1,
    starting at 0 and ending at len(targets).  Scoring as ``genomics.sw_align``.  Returns a
    BatchResult of int64 ``scores``, ``query_ends`` and ``target_ends``, one entry per target.
    ``prism_genomics.align_batch`` packs and encodes targets and calls this op.
    """
    raise NotImplementedError  # never called: dispatch runs the op's variants


#: What users call: ``prism_genomics.sw_align(...)`` dispatches to the best variant.
sw_align = prism_core.extending.operation(
    _sw_align, name=SW_ALIGN, array_args=(0, 1, 2), reference=False, examples=PAIR_EXAMPLES
)
sw_align_batch = prism_core.extending.operation(
    _sw_align_batch,
    name=SW_ALIGN_BATCH,
    array_args=(0, 1, 2, 3),
    reference=False,
    examples=BATCH_EXAMPLES,
)


# -- their work -----------------------------------------------------------------------------


@prism_core.extending.declare_work(SW_ALIGN)
def _pair_work(shapes: tuple[tuple[int, ...], ...], itemsize: int) -> prism_core.extending.Work:
    # n * m cell updates of CELL_OPS integer operations each; the bytes are the inputs (one
    # byte per letter, the int32 matrix) and a small result.  Itemsize is not used: the
    # arguments' types are fixed.
    (n,), (m,), matrix = _shapes(SW_ALIGN, shapes, 3)
    cells = n * m
    return prism_core.extending.Work(float(CELL_OPS * cells), float(n + m + 4 * _size(matrix) + 24))


@prism_core.extending.declare_work(SW_ALIGN_BATCH)
def _batch_work(shapes: tuple[tuple[int, ...], ...], itemsize: int) -> prism_core.extending.Work:
    (n,), (total,), (offsets,), matrix = _shapes(SW_ALIGN_BATCH, shapes, 4)
    targets = max(offsets - 1, 0)
    cells = n * total
    return prism_core.extending.Work(
        float(CELL_OPS * cells),
        float(n + total + 8 * offsets + 4 * _size(matrix) + 24 * targets),
    )


def _size(shape: tuple[int, ...]) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


def _shapes(op: str, shapes: tuple[tuple[int, ...], ...], count: int) -> Any:
    if len(shapes) != count:
        raise ValueError(f"{op} takes {count} array arguments; got {len(shapes)} shapes {shapes}")
    for i, shape in enumerate(shapes[:-1]):
        if len(shape) != 1:
            raise ValueError(f"{op}: array argument {i} must be 1-d, got shape {shape}")
    if len(shapes[-1]) != 2:
        raise ValueError(f"{op}: the matrix must be 2-d, got shape {shapes[-1]}")
    return shapes
