"""The front end: align letters, not codes.

``align`` (one pair), ``align_batch`` (one query, many targets), ``align_many`` (many against
many) and ``search`` (many queries against a stream of targets, keeping the best hits) encode
their inputs with the scoring's alphabet, call the dispatched ops (``genomics.sw_align``,
``genomics.sw_align_batch``), and give results back in letters.

Inputs may be ``str``, ``bytes``, 1-d NumPy arrays of codes, :class:`Record` objects, or --
where a function takes many -- any iterable of those or the path of a FASTA/FASTQ file
(a ``pathlib.Path``, or a ``str`` ending in a FASTA/FASTQ extension such as ``.fa`` or
``.fastq.gz``: a string of letters is a sequence, a string with such an extension a file).

``search`` streams its targets: they are read, encoded and packed in groups of about
``batch_letters`` letters, each group aligned with every query by one ``sw_align_batch`` call,
and only the best ``top`` hits per query are kept (with their targets' codes when the traceback
is asked for, to align them again with it at the end).
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prism_genomics.io import Record, SequenceFileError, is_sequence_path, read_sequences
from prism_genomics.ops import AlignmentError, sw_align, sw_align_batch
from prism_genomics.result import AlignmentResult, BatchResult, Hit
from prism_genomics.scoring import Alphabet, Scoring, encode, get_scoring

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Codes = npt.NDArray[np.uint8]

__all__ = ["align", "align_batch", "align_many", "named_sequences", "pack", "search"]


def named_sequences(source: Any, what: str) -> Iterator[tuple[str, Any]]:
    """``(name, sequence)`` for each sequence of ``source``: a path of a FASTA/FASTQ file (its
    records, streamed), a :class:`Record`, one sequence, or an iterable of sequences/records.
    Sequences without a name are called ``what[i]``."""
    import numpy as np

    if isinstance(source, (os.PathLike, Path)) or is_sequence_path(source):
        with read_sequences(source) as reader:
            for record in reader:
                yield record.name, record
        return
    if isinstance(source, (str, bytes, bytearray, memoryview, np.ndarray, Record)):
        yield _name(source, f"{what}[0]"), source
        return
    if not isinstance(source, Iterable):
        raise TypeError(
            f"{what} must be sequences (str, bytes, arrays of codes, records), an iterable of "
            f"them or the path of a FASTA/FASTQ file; got {type(source).__name__}"
        )
    for i, item in enumerate(source):
        if isinstance(item, (os.PathLike, Path)) or is_sequence_path(item):
            raise TypeError(
                f"{what}[{i}] is a file name ({item!s}); give the file itself as {what}, or "
                "chain the records of several files"
            )
        yield _name(item, f"{what}[{i}]"), item


def _name(item: Any, default: str) -> str:
    return item.name if isinstance(item, Record) else default


def _codes(
    item: Any, alphabet: Alphabet, unknown: str | None, what: str, name: str | None = None
) -> Codes:
    if isinstance(item, Record):
        return encode(item.sequence, alphabet, unknown=unknown, what=what, record=item.name)
    return encode(item, alphabet, unknown=unknown, what=what, record=name)


def _single(value: Any, what: str, alphabet: Alphabet, unknown: str | None) -> Codes:
    """One sequence (or a file of exactly one record) as codes."""
    if isinstance(value, (os.PathLike, Path)) or is_sequence_path(value):
        records = []
        for name, record in named_sequences(value, what):
            records.append((name, record))
            if len(records) > 1:
                raise SequenceFileError(
                    f"{what}: {value!s} holds more than one record ({records[0][0]!r}, "
                    f"{name!r}, ...); align(...) takes one sequence: use align_many or search "
                    "for files of many"
                )
        if not records:
            raise SequenceFileError(f"{what}: {value!s} holds no records")
        return _codes(records[0][1], alphabet, unknown, what)
    return _codes(value, alphabet, unknown, what)


def _with_rows(result: Any, q: Codes, t: Codes, alphabet: Alphabet) -> AlignmentResult:
    """The aligned rows in letters, from the op's traceback (the ops see codes only)."""
    if not isinstance(result, AlignmentResult) or result.cigar is None:
        raise AlignmentError(
            f"genomics.sw_align returned {result!r} for traceback=True; a variant must return "
            "an AlignmentResult with its cigar, query_start and target_start"
        )
    if result.score == 0:
        return AlignmentResult(0, -1, -1, -1, -1, "", "", "")
    qs, ts = result.query_start, result.target_start
    if qs is None or ts is None:
        raise AlignmentError(f"genomics.sw_align returned a traceback without starts: {result!r}")
    letters_q = alphabet.decode(q[qs : result.query_end + 1])
    letters_t = alphabet.decode(t[ts : result.target_end + 1])
    shifted = AlignmentResult(result.score, result.query_end, result.target_end, 0, 0, result.cigar)
    rows = shifted.with_rows(letters_q, letters_t)
    return AlignmentResult(
        result.score,
        result.query_end,
        result.target_end,
        qs,
        ts,
        result.cigar,
        rows.aligned_query,
        rows.aligned_target,
    )


def align(
    query: Any,
    target: Any,
    *,
    scoring: str | Scoring = "dna",
    gap_open: int | None = None,
    gap_extend: int | None = None,
    traceback: bool = False,
    unknown: str | None = None,
) -> AlignmentResult:
    """The best local (Smith-Waterman) alignment of ``query`` with ``target``.

    :param query: a ``str``, ``bytes``, 1-d array of codes, a :class:`Record`, or the path of
        a FASTA/FASTQ file holding one record.
    :param target: the same.
    :param scoring: ``"dna"`` (match 2, mismatch -3, gaps 5/2), ``"dnafull"`` (NUC.4.4,
        gaps 10/1), ``"blosum62"`` (gaps 11/1) or a :class:`Scoring`.
    :param gap_open: replaces the scheme's gap-open penalty (a gap of length ``L`` costs
        ``gap_open + (L - 1) * gap_extend``).
    :param gap_extend: replaces the scheme's gap-extend penalty.
    :param traceback: also compute the starts, the CIGAR and the two aligned rows (one byte of
        memory per cell: see ``TRACEBACK_LIMIT``).
    :param unknown: a letter of the alphabet to align unknown letters as (``"N"``, ``"X"``);
        ``None``: an unknown letter is a :class:`SequenceError`.
    :returns: an :class:`AlignmentResult` (0-based inclusive positions; score 0 and positions
        -1 when nothing aligns).
    """
    scheme = get_scoring(scoring, gap_open, gap_extend)
    q = _single(query, "query", scheme.alphabet, unknown)
    t = _single(target, "target", scheme.alphabet, unknown)
    result = sw_align(q, t, scheme.matrix, scheme.gap_open, scheme.gap_extend, bool(traceback))
    if traceback:
        return _with_rows(result, q, t, scheme.alphabet)
    return result  # type: ignore[no-any-return]


def pack(codes: list[Codes]) -> tuple[Codes, Any]:
    """Sequences of codes end to end, and the ``t + 1`` int64 offsets that delimit them (what
    ``genomics.sw_align_batch`` takes)."""
    import numpy as np

    offsets = np.zeros(len(codes) + 1, dtype=np.int64)
    if codes:
        np.cumsum([len(c) for c in codes], out=offsets[1:])
        packed = np.concatenate(codes) if offsets[-1] else np.zeros(0, dtype=np.uint8)
    else:
        packed = np.zeros(0, dtype=np.uint8)
    return packed, offsets


def _targets(
    targets: Any, alphabet: Alphabet, unknown: str | None, what: str = "targets"
) -> tuple[list[str], Codes, Any]:
    names: list[str] = []
    codes: list[Codes] = []
    for name, item in named_sequences(targets, what):
        codes.append(_codes(item, alphabet, unknown, f"{what}[{len(names)}]", name))
        names.append(name)
    packed, offsets = pack(codes)
    return names, packed, offsets


def align_batch(
    query: Any,
    targets: Any,
    *,
    scoring: str | Scoring = "dna",
    gap_open: int | None = None,
    gap_extend: int | None = None,
    unknown: str | None = None,
) -> BatchResult:
    """The best local alignment of ``query`` with each of ``targets`` (an iterable of sequences
    or a FASTA/FASTQ path), in one ``genomics.sw_align_batch`` call: a :class:`BatchResult`
    with one score and pair of ends per target, in order.  Scoring as :func:`align`."""
    scheme = get_scoring(scoring, gap_open, gap_extend)
    q = _single(query, "query", scheme.alphabet, unknown)
    _, packed, offsets = _targets(targets, scheme.alphabet, unknown)
    return _batch(q, packed, offsets, scheme)


def _batch(q: Codes, packed: Codes, offsets: Any, scheme: Scoring) -> BatchResult:
    result = sw_align_batch(q, packed, offsets, scheme.matrix, scheme.gap_open, scheme.gap_extend)
    if not isinstance(result, BatchResult) or len(result) != len(offsets) - 1:
        raise AlignmentError(
            f"genomics.sw_align_batch returned {result!r}; a variant must return a BatchResult "
            f"with one entry per target ({len(offsets) - 1})"
        )
    return result


def align_many(
    queries: Any,
    targets: Any,
    *,
    scoring: str | Scoring = "dna",
    gap_open: int | None = None,
    gap_extend: int | None = None,
    unknown: str | None = None,
) -> list[BatchResult]:
    """Every query against every target: one :class:`BatchResult` per query (in order), each
    with one entry per target.  ``queries`` are streamed; ``targets`` are encoded and packed
    once (for a stream of targets too long to hold, use :func:`search`)."""
    scheme = get_scoring(scoring, gap_open, gap_extend)
    _, packed, offsets = _targets(targets, scheme.alphabet, unknown)
    out = []
    for i, (name, item) in enumerate(named_sequences(queries, "queries")):
        q = _codes(item, scheme.alphabet, unknown, f"queries[{i}]", name)
        out.append(_batch(q, packed, offsets, scheme))
    return out


class _Best:
    """The ``top`` best hits of one query: a min-heap of (score, -index), so that the worst
    (lowest score, then latest target) is at the root and an equal score never displaces an
    earlier target."""

    __slots__ = ("heap", "top")

    def __init__(self, top: int) -> None:
        self.top = top
        self.heap: list[tuple[int, int, int, int]] = []  # (score, -index, query_end, target_end)

    def offer(self, batch: BatchResult, first_index: int) -> None:
        import numpy as np

        scores = batch.scores
        positive = np.flatnonzero(scores > 0)
        if not len(positive):
            return
        if len(positive) > self.top:  # only the best few of this group can enter
            order = np.lexsort((positive, -scores[positive]))[: self.top]
            positive = positive[order]
        heap = self.heap
        for i in positive.tolist():
            entry = (
                int(scores[i]),
                -(first_index + i),
                int(batch.query_ends[i]),
                int(batch.target_ends[i]),
            )
            if len(heap) < self.top:
                heapq.heappush(heap, entry)
            elif entry[:2] > heap[0][:2]:
                heapq.heapreplace(heap, entry)

    def indices(self) -> set[int]:
        return {-entry[1] for entry in self.heap}

    def ranked(self) -> list[tuple[int, int, int, int]]:
        return sorted(self.heap, key=lambda entry: (-entry[0], -entry[1]))


def search(
    queries: Any,
    targets: Any,
    *,
    scoring: str | Scoring = "dna",
    gap_open: int | None = None,
    gap_extend: int | None = None,
    top: int = 5,
    traceback: bool = False,
    unknown: str | None = None,
    batch_letters: int = 1 << 22,
    on_group: Callable[[int], None] | None = None,
) -> list[list[Hit]]:
    """Align every query with every target and keep each query's ``top`` best hits.

    ``queries`` are read and encoded first (they are aligned with every group of targets);
    ``targets`` are streamed in groups of about ``batch_letters`` letters, never held all at
    once.  Hits with score 0 are not hits.  Returns one list per query (in order), best first;
    equal scores keep the targets' order.  ``traceback=True`` aligns each kept hit again with
    its traceback.  ``on_group(targets_done)`` is called after each group (a progress bar).
    """
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise ValueError(f"top must be an int >= 1 (hits kept per query), got {top!r}")
    if isinstance(batch_letters, bool) or not isinstance(batch_letters, int) or batch_letters < 1:
        raise ValueError(f"batch_letters must be an int >= 1, got {batch_letters!r}")
    scheme = get_scoring(scoring, gap_open, gap_extend)
    alphabet = scheme.alphabet
    query_names: list[str] = []
    query_codes: list[Codes] = []
    for i, (name, item) in enumerate(named_sequences(queries, "queries")):
        query_names.append(name)
        query_codes.append(_codes(item, alphabet, unknown, f"queries[{i}]", name))
    best = [_Best(top) for _ in query_codes]
    names: dict[int, str] = {}
    kept: dict[int, Codes] = {}  # targets in some query's top, for the traceback
    group_names: list[str] = []
    group_codes: list[Codes] = []
    letters = 0
    done = 0

    def flush() -> None:
        nonlocal letters, done
        if not group_codes:
            return
        packed, offsets = pack(group_codes)
        for q, keeper in zip(query_codes, best, strict=True):
            keeper.offer(_batch(q, packed, offsets, scheme), done)
        wanted = set().union(*(keeper.indices() for keeper in best)) if best else set()
        for j, (name, codes) in enumerate(zip(group_names, group_codes, strict=True)):
            if done + j in wanted:
                names[done + j] = name
                if traceback:
                    kept[done + j] = codes
        for index in [i for i in names if i not in wanted]:
            del names[index]
            kept.pop(index, None)
        done += len(group_codes)
        group_names.clear()
        group_codes.clear()
        letters = 0
        if on_group is not None:
            on_group(done)

    for name, item in named_sequences(targets, "targets"):
        codes = _codes(item, alphabet, unknown, f"targets[{done + len(group_codes)}]", name)
        group_names.append(name)
        group_codes.append(codes)
        letters += len(codes)
        if letters >= batch_letters:
            flush()
    flush()

    out: list[list[Hit]] = []
    for q_name, q, keeper in zip(query_names, query_codes, best, strict=True):
        hits = []
        for score, negative_index, q_end, t_end in keeper.ranked():
            index = -negative_index
            if traceback:
                t = kept[index]
                result = _with_rows(
                    sw_align(q, t, scheme.matrix, scheme.gap_open, scheme.gap_extend, True),
                    q,
                    t,
                    alphabet,
                )
            else:
                result = AlignmentResult(score, q_end, t_end)
            hits.append(Hit(q_name, names[index], index, result))
        out.append(hits)
    return out
