"""The NumPy references of ``genomics.sw_align`` and ``genomics.sw_align_batch``: exact, and
what every other variant is compared with.  The plugin's ``prism_variants`` hook contributes
them (``prism_genomics.plugin``); dispatch imports this module when it first runs one, so
discovery imports no NumPy.

The reference (exact, ``int32`` arithmetic where the scores fit, ``int64`` otherwise) follows
Gotoh's recurrences, one row of the dynamic-programming matrix per NumPy step::

    F[i,j] = max(H[i-1,j] - open, F[i-1,j] - extend)          a gap going down (vectorised)
    D[i,j] = max(0, H[i-1,j-1] + S[a_i, b_j], F[i,j])
    E[i,j] = max(H[i,j-1] - open, E[i,j-1] - extend)          a gap going right (a scan)
    H[i,j] = max(D[i,j], E[i,j])

``E`` depends on the row being computed; it is a prefix maximum, ``E[i,j] = max_{k<j}
(D[i,k] + k extend) - open - (j-1) extend``: one ``np.maximum.accumulate``.  ``D`` suffices
because a gap opened from a cell whose best came from ``E`` never beats extending that ``E``,
as long as ``open >= extend`` -- which the ops require (with cheaper opening, closing and
reopening a gap beats extending it, and aligners disagree on what such a gap costs).

The pair kernel walks the shorter sequence and vectorises over the longer; the batch kernel
walks the query and vectorises over all targets at once, the scan kept inside each target by
adding an offset per target that exceeds any score within one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prism_genomics.ops import SW_ALIGN, SW_ALIGN_BATCH, TRACEBACK_LIMIT, AlignmentError
from prism_genomics.result import AlignmentResult, BatchResult

if TYPE_CHECKING:
    import numpy.typing as npt

    Array = npt.NDArray[Any]

__all__ = ["sw_align_batch_reference", "sw_align_reference"]


# -- checking the arguments -----------------------------------------------------------------


def _codes(value: Any, what: str) -> Array:
    import numpy as np

    if not isinstance(value, np.ndarray) or value.dtype != np.uint8 or value.ndim != 1:
        shown = (
            f"a {value.dtype} array of shape {value.shape}"
            if isinstance(value, np.ndarray)
            else type(value).__name__
        )
        raise AlignmentError(
            f"{what} must be a 1-d uint8 array of codes (prism_genomics.encode makes one "
            f"from letters); got {shown}"
        )
    return value


def _scoring_args(matrix: Any, gap_open: Any, gap_extend: Any, op: str) -> tuple[Array, int, int]:
    import numpy as np

    if (
        not isinstance(matrix, np.ndarray)
        or matrix.ndim != 2
        or matrix.shape[0] != matrix.shape[1]
        or matrix.shape[0] == 0
        or not np.issubdtype(matrix.dtype, np.integer)
    ):
        shown = (
            f"a {matrix.dtype} array of shape {matrix.shape}"
            if isinstance(matrix, np.ndarray)
            else type(matrix).__name__
        )
        raise AlignmentError(
            f"{op}: matrix must be a square k x k integer array (int32), got {shown}"
        )
    penalties = []
    for value, name in ((gap_open, "gap_open"), (gap_extend, "gap_extend")):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise AlignmentError(f"{op}: {name} must be an int >= 0 (a penalty), got {value!r}")
        penalties.append(int(value))
    if penalties[0] < penalties[1]:
        raise AlignmentError(
            f"{op}: gap_open ({penalties[0]}) must be >= gap_extend ({penalties[1]}): when opening "
            "a gap costs less than extending one, closing and reopening beats extending, and "
            "aligners disagree on what such a gap costs"
        )
    return matrix, penalties[0], penalties[1]


def _check_range(codes: Array, k: int, what: str) -> None:
    if codes.size and int(codes.max()) >= k:
        import numpy as np

        position = int(np.argmax(codes >= k))
        raise AlignmentError(
            f"{what}: code {int(codes[position])} at position {position} has no row in the "
            f"{k} x {k} matrix (codes 0..{k - 1})"
        )


def _dtype(cells_bound: int) -> Any:
    """int32 when every intermediate value fits (with room), else int64."""
    import numpy as np

    if cells_bound < 1 << 29:
        return np.int32
    if cells_bound < 1 << 60:
        return np.int64
    raise AlignmentError(
        f"scores could reach {cells_bound}, beyond what int64 arithmetic holds safely; align "
        "shorter sequences or use smaller scores"
    )


# -- one pair -------------------------------------------------------------------------------


def sw_align_reference(
    query: Any,
    target: Any,
    matrix: Any,
    gap_open: Any,
    gap_extend: Any,
    traceback: bool = False,
) -> AlignmentResult:
    """The NumPy reference of ``genomics.sw_align``: exact, vectorised along the longer
    sequence (see the module docstring for the recurrences)."""
    import numpy as np

    q = _codes(query, "query")
    t = _codes(target, "target")
    m_, o, e = _scoring_args(matrix, gap_open, gap_extend, SW_ALIGN)
    k = m_.shape[0]
    _check_range(q, k, "query")
    _check_range(t, k, "target")
    n, m = len(q), len(t)
    if traceback and n * m > TRACEBACK_LIMIT:
        raise AlignmentError(
            f"a traceback of {n} x {m} letters keeps {n * m:,} bytes of directions, more than "
            f"TRACEBACK_LIMIT ({TRACEBACK_LIMIT:,}); align without traceback (score and ends "
            "need one row of memory), or align the region around the ends"
        )
    if n == 0 or m == 0:
        return _empty(traceback)
    # Walk the shorter sequence, vectorise over the longer: fewer NumPy calls.
    rows_are_query = n <= m
    rows, cols = (q, t) if rows_are_query else (t, q)
    scores = np.asarray(m_, dtype=np.int64)
    if not rows_are_query:
        scores = scores.T
    best, row_end, col_end, dirs = _sweep_pair(rows, cols, scores, o, e, traceback, rows_are_query)
    if best == 0:
        return _empty(traceback)
    q_end, t_end = (row_end, col_end) if rows_are_query else (col_end, row_end)
    if not traceback:
        return AlignmentResult(best, q_end, t_end)
    assert dirs is not None
    row_start, col_start, cigar = _trace(dirs, row_end, col_end, rows_are_query)
    q_start, t_start = (row_start, col_start) if rows_are_query else (col_start, row_start)
    return AlignmentResult(best, q_end, t_end, q_start, t_start, cigar)


def _empty(traceback: bool) -> AlignmentResult:
    if traceback:
        return AlignmentResult(0, -1, -1, -1, -1, "")
    return AlignmentResult(0, -1, -1)


#: Use a k x C score profile (one row per letter) when it has at most this many entries;
#: above it, gather the scores of each row (one more pass per row, no k x C array).
_PROFILE_LIMIT = 1 << 22


def _sweep_pair(
    rows: Array,
    cols: Array,
    scores: Array,
    o: int,
    e: int,
    traceback: bool,
    rows_are_query: bool,
) -> tuple[int, int, int, Array | None]:
    """Fill the matrix row by row; the best score, its cell (row, col) by the tie rule, and
    the directions when asked."""
    import numpy as np

    R, C = len(rows), len(cols)
    ep = e  # open >= extend (checked)
    top = max(int(scores.max()), 0)
    low = min(int(scores.min()), 0)
    dt = _dtype(min(R, C) * top + C * ep + o + e - low + 1)
    neg = dt(-(1 << 28)) if dt is np.int32 else dt(-(1 << 58))
    sc = scores.astype(dt)
    profile = sc[:, cols] if sc.shape[0] * C <= _PROFILE_LIMIT else None
    h = np.zeros(C + 1, dtype=dt)  # h[1:] is the row's H; h[0] the boundary column
    f = np.full(C, neg, dtype=dt)
    ke = np.arange(C, dtype=dt) * dt(ep)
    keo = ke[:-1] + dt(o)
    d = np.empty(C, dtype=dt)
    tmp = np.empty(C, dtype=dt)
    scan = np.empty(C, dtype=dt)
    dirs = np.empty((R, C), dtype=np.uint8) if traceback else None
    best, best_row, best_col = 0, -1, -1
    for i in range(R):
        s = profile[rows[i]] if profile is not None else sc[rows[i]][cols]
        np.subtract(h[1:], o, out=tmp)
        if dirs is not None:
            f_ext = (f - e) > tmp  # a tie opens the gap (the shorter one)
        np.subtract(f, e, out=f)
        np.maximum(f, tmp, out=f)
        np.add(h[:-1], s, out=d)
        if dirs is not None:
            diag = d.copy()
        np.maximum(d, f, out=d)
        np.maximum(d, 0, out=d)
        np.add(d, ke, out=scan)
        np.maximum.accumulate(scan, out=scan)
        h[1] = d[0]
        if C > 1:
            np.subtract(scan[:-1], keo, out=tmp[1:])  # E[j] for j >= 1
            np.maximum(d[1:], tmp[1:], out=h[2:])
        row = h[1:]
        if dirs is not None:
            tmp[0] = neg
            dirs[i] = _directions(row, diag, f, tmp, f_ext, o, e, rows_are_query)
        j = int(row.argmax())
        v = int(row[j])
        # Ties: the smallest target end, then the smallest query end (parasail's rule).
        # Rows are the query: an equal maximum wins when its column (target) is smaller.
        # Rows are the target: the first row to reach the maximum has the smallest target
        # end, and argmax the smallest query end in it.
        if v > best or (rows_are_query and v == best and v > 0 and j < best_col):
            best, best_row, best_col = v, i, j
    return best, best_row, best_col, dirs


# Direction byte of a cell: bits 0-1 where H came from (0: nothing, H == 0; 1: the diagonal;
# 2: the vertical gap state F; 3: the horizontal gap state E), bit 2: F extended a gap (else
# opened it), bit 3: E extended a gap.
_STOP, _DIAG, _VERT, _HORZ = 0, 1, 2, 3


def _directions(
    h: Array,
    diag: Array,
    f: Array,
    e_state: Array,
    f_ext: Array,
    o: int,
    e: int,
    rows_are_query: bool,
) -> Array:
    """One row's direction bytes.  Preference among equal sources: the diagonal, then an
    insertion (a query letter against a gap), then a deletion, whichever way the matrix is
    walked, so that the traceback does not depend on which sequence is longer."""
    import numpy as np

    # Rows are the query: a vertical gap is an insertion (I); rows are the target: a deletion.
    first, second = (f, e_state) if rows_are_query else (e_state, f)
    first_code, second_code = (_VERT, _HORZ) if rows_are_query else (_HORZ, _VERT)
    src = np.where(h == first, first_code, second_code).astype(np.uint8)
    src[h == diag] = _DIAG
    src[h == 0] = _STOP
    del second
    e_ext = np.zeros(len(h), dtype=bool)
    if len(h) > 1:
        # E[j] extended when E[j-1] - extend beats H[j-1] - open (a tie opens).
        e_ext[1:] = (e_state[:-1] - e) > (h[:-1] - o)
    out: Array = src | (f_ext.astype(np.uint8) << 2) | (e_ext.astype(np.uint8) << 3)
    return out


def _trace(dirs: Array, row_end: int, col_end: int, rows_are_query: bool) -> tuple[int, int, str]:
    """Walk the directions back from (row_end, col_end): the start cell and the CIGAR."""
    i, j = row_end, col_end
    state = _DIAG  # in H
    ops: list[str] = []
    vert, horz = ("I", "D") if rows_are_query else ("D", "I")
    while i >= 0 and j >= 0:
        cell = int(dirs[i, j])
        if state == _DIAG:
            src = cell & 3
            if src == _STOP:
                break
            if src == _DIAG:
                ops.append("M")
                i -= 1
                j -= 1
                continue
            state = src  # into a gap state, same cell
            continue
        if state == _VERT:
            ops.append(vert)
            state = _VERT if cell & 4 else _DIAG
            i -= 1
        else:
            ops.append(horz)
            state = _HORZ if cell & 8 else _DIAG
            j -= 1
    ops.reverse()
    return i + 1, j + 1, _runs(ops)


def _runs(ops: list[str]) -> str:
    out: list[str] = []
    count, last = 0, ""
    for op in ops:
        if op == last:
            count += 1
        else:
            if count:
                out.append(f"{count}{last}")
            count, last = 1, op
    if count:
        out.append(f"{count}{last}")
    return "".join(out)


# -- one query, many targets ----------------------------------------------------------------

#: Targets are aligned in groups of at most this many letters (one target longer than that
#: makes a group of its own): the working arrays stay within a few MiB.
_GROUP_LETTERS = 1 << 20


def _offsets(offsets: Any, total: int) -> Array:
    import numpy as np

    if (
        not isinstance(offsets, np.ndarray)
        or offsets.ndim != 1
        or not np.issubdtype(offsets.dtype, np.integer)
        or len(offsets) == 0
    ):
        shown = (
            f"a {offsets.dtype} array of shape {offsets.shape}"
            if isinstance(offsets, np.ndarray)
            else type(offsets).__name__
        )
        raise AlignmentError(
            f"{SW_ALIGN_BATCH}: offsets must be a 1-d int64 array of t + 1 positions (0, the "
            f"end of each target); got {shown}"
        )
    off = offsets.astype(np.int64, copy=False)
    if off[0] != 0 or off[-1] != total or (len(off) > 1 and bool(np.any(np.diff(off) < 0))):
        raise AlignmentError(
            f"{SW_ALIGN_BATCH}: offsets must start at 0, never decrease and end at "
            f"len(targets) = {total}; got {off[:8].tolist()}"
            + (" ..." if len(off) > 8 else "")
            + f" (last {int(off[-1])})"
        )
    return off


def sw_align_batch_reference(
    query: Any,
    targets: Any,
    offsets: Any,
    matrix: Any,
    gap_open: Any,
    gap_extend: Any,
) -> BatchResult:
    """The NumPy reference of ``genomics.sw_align_batch``: one pass per query letter over all
    targets of a group at once (see the module docstring)."""
    import numpy as np

    q = _codes(query, "query")
    packed = _codes(targets, "targets")
    off = _offsets(offsets, len(packed))
    m_, o, e = _scoring_args(matrix, gap_open, gap_extend, SW_ALIGN_BATCH)
    k = m_.shape[0]
    _check_range(q, k, "query")
    _check_range(packed, k, "targets")
    t = len(off) - 1
    scores = np.zeros(t, dtype=np.int64)
    q_ends = np.full(t, -1, dtype=np.int64)
    t_ends = np.full(t, -1, dtype=np.int64)
    lengths = np.diff(off)
    if len(q) == 0 or t == 0:
        return BatchResult(scores, q_ends, t_ends)
    sc = np.asarray(m_, dtype=np.int64)
    first = 0
    while first < t:
        # A group: consecutive targets up to _GROUP_LETTERS letters (at least one target).
        last = int(np.searchsorted(off, off[first] + _GROUP_LETTERS, side="right")) - 1
        last = min(max(last, first + 1), t)
        members = np.arange(first, last)
        members = members[lengths[first:last] > 0]
        if len(members):
            lo, hi = int(off[first]), int(off[last])
            s, qe, te = _sweep_group(
                q, packed[lo:hi], off[members] - lo, lengths[members], sc, o, e
            )
            scores[members], q_ends[members], t_ends[members] = s, qe, te
        first = last
    return BatchResult(scores, q_ends, t_ends)


def _sweep_group(
    q: Array, cols: Array, starts: Array, lengths: Array, scores: Array, o: int, e: int
) -> tuple[Array, Array, Array]:
    """Align ``q`` with the non-empty targets at ``starts`` (lengths ``lengths``) of ``cols``.

    Each column keeps the best H it has seen and the first row that reached it; at the end,
    the best column of each target is the first one holding its maximum (the smallest target
    end), and that column's row the smallest query end: parasail's tie rule.
    """
    import numpy as np

    R, C, nseg = len(q), len(cols), len(starts)
    ep = e  # open >= extend (checked)
    top = max(int(scores.max()), 0)
    low = min(int(scores.min()), 0)
    longest = int(lengths.max())
    # The scan value D + k e' of a column lies in [0, span) within its target; adding
    # segment * span keeps a later target's values above every earlier one's, so the running
    # maximum restarts at each target.
    span = min(R, longest) * top + longest * ep + o + e - low + 1
    dt = _dtype(nseg * span + span)
    neg = dt(-(1 << 28)) if dt is np.int32 else dt(-(1 << 58))
    seg = np.repeat(np.arange(nseg, dtype=np.int64), lengths)
    pos = np.arange(C, dtype=np.int64) - np.repeat(starts, lengths)
    kb = (pos * ep + seg * span).astype(dt)
    kbo = kb[:-1] + dt(o)
    sc = scores.astype(dt)
    profile = sc[:, cols] if sc.shape[0] * C <= _PROFILE_LIMIT else None
    h = np.zeros(C, dtype=dt)
    f = np.full(C, neg, dtype=dt)
    d = np.empty(C, dtype=dt)
    tmp = np.empty(C, dtype=dt)
    scan = np.empty(C, dtype=dt)
    best_h = np.zeros(C, dtype=dt)
    best_row = np.zeros(C, dtype=np.int64)
    for i in range(R):
        s = profile[q[i]] if profile is not None else sc[q[i]][cols]
        np.subtract(h, o, out=tmp)
        np.subtract(f, e, out=f)
        np.maximum(f, tmp, out=f)
        d[1:] = h[:-1]
        d[starts] = 0  # the boundary column of each target
        np.add(d, s, out=d)
        np.maximum(d, f, out=d)
        np.maximum(d, 0, out=d)
        np.add(d, kb, out=scan)
        np.maximum.accumulate(scan, out=scan)
        np.subtract(scan[:-1], kbo, out=tmp[1:])
        tmp[starts] = neg  # no horizontal gap enters a target from the left
        np.maximum(d, tmp, out=h)
        better = h > best_h
        np.maximum(best_h, h, out=best_h)
        best_row[better] = i
    seg_best = np.maximum.reduceat(best_h, starts)
    at_best = best_h == np.repeat(seg_best, lengths)
    end = np.minimum.reduceat(np.where(at_best, pos, C), starts)
    q_end = best_row[starts + end]
    found = seg_best > 0
    return (
        seg_best.astype(np.int64),
        np.where(found, q_end, -1),
        np.where(found, end, -1),
    )
