"""What the alignment ops return: :class:`AlignmentResult` for one pair, :class:`BatchResult`
for one query against many targets.

Positions are 0-based and *inclusive* at both ends (``query_end`` is the index of the last
aligned query letter), as parasail reports them.  A pair with no positive-scoring local
alignment (an empty sequence, nothing in common) has score 0 and every position -1.

Ties: when several cells reach the best score, the ends are those of the cell with the smallest
``target_end``, and among those the smallest ``query_end`` -- parasail's rule (its scalar and
striped kernels keep the first maximum and replace it only by an equal one of a smaller
reference index).  Every variant reports ends by this rule.

The CIGAR string is SAM's with the query as the read and the target as the reference: ``M``
an aligned pair (match or mismatch: ``=``/``X`` are not used), ``I`` a query letter against a
gap in the target, ``D`` a target letter against a gap in the query.  It covers the aligned
region only (local alignment: no clipping operations).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Ints = npt.NDArray[np.int64]

__all__ = ["AlignmentResult", "BatchResult", "Hit", "cigar_ops", "render"]

_CIGAR = re.compile(r"(\d+)([MID])")


def cigar_ops(cigar: str) -> list[tuple[int, str]]:
    """``"3M1I2M"`` as ``[(3, "M"), (1, "I"), (2, "M")]``; a ``ValueError`` for anything that
    is not a CIGAR of M, I and D operations with positive lengths."""
    ops = [(int(n), op) for n, op in _CIGAR.findall(cigar)]
    if "".join(f"{n}{op}" for n, op in ops) != cigar or any(n == 0 for n, _ in ops):
        raise ValueError(f"not a CIGAR string of M, I and D operations: {cigar!r}")
    return ops


def render(
    cigar: str, query: str, target: str, query_start: int, target_start: int
) -> tuple[str, str]:
    """The two rows of an alignment, gaps as ``-``: the letters of ``query`` and ``target``
    from their start positions, laid out by ``cigar``."""
    qi, ti = query_start, target_start
    q_parts: list[str] = []
    t_parts: list[str] = []
    for n, op in cigar_ops(cigar):
        if op == "M":
            q_parts.append(query[qi : qi + n])
            t_parts.append(target[ti : ti + n])
            qi += n
            ti += n
        elif op == "I":
            q_parts.append(query[qi : qi + n])
            t_parts.append("-" * n)
            qi += n
        else:
            q_parts.append("-" * n)
            t_parts.append(target[ti : ti + n])
            ti += n
    aligned_query, aligned_target = "".join(q_parts), "".join(t_parts)
    if len(aligned_query) != len(aligned_target) or qi > len(query) or ti > len(target):
        raise ValueError(
            f"CIGAR {cigar!r} from ({query_start}, {target_start}) runs past the sequences "
            f"(lengths {len(query)} and {len(target)})"
        )
    return aligned_query, aligned_target


@dataclass(frozen=True, init=False)
class AlignmentResult:
    """The best local alignment of one query with one target.

    ``score`` and the inclusive 0-based ``query_end``/``target_end`` are always there (-1 when
    ``score`` is 0).  With ``traceback=True``: ``query_start``/``target_start`` (inclusive,
    -1 when ``score`` is 0), the ``cigar`` (empty when ``score`` is 0) and, from
    :func:`prism_genomics.align`, the two rows ``aligned_query``/``aligned_target`` with
    ``-`` for gaps (the ops see codes, not letters: they leave those two ``None``).
    """

    score: int
    query_end: int
    target_end: int
    query_start: int | None = None
    target_start: int | None = None
    cigar: str | None = None
    aligned_query: str | None = None
    aligned_target: str | None = None

    __module__ = "prism_genomics"

    def __init__(
        self,
        score: int,
        query_end: int,
        target_end: int,
        query_start: int | None = None,
        target_start: int | None = None,
        cigar: str | None = None,
        aligned_query: str | None = None,
        aligned_target: str | None = None,
    ) -> None:
        # The dataclass's own __init__, in one dict update instead of eight
        # object.__setattr__ calls (frozen): every alignment makes one, and on a short pair
        # that was a tenth of Prism's cost beside the kernel.
        self.__dict__.update(
            score=score,
            query_end=query_end,
            target_end=target_end,
            query_start=query_start,
            target_start=target_start,
            cigar=cigar,
            aligned_query=aligned_query,
            aligned_target=aligned_target,
        )

    @property
    def has_traceback(self) -> bool:
        return self.cigar is not None

    @property
    def length(self) -> int | None:
        """Columns of the alignment (pairs and gap positions), ``None`` without traceback."""
        if self.cigar is None:
            return None
        return sum(n for n, _ in cigar_ops(self.cigar))

    def with_rows(self, query: str, target: str) -> AlignmentResult:
        """This result with ``aligned_query``/``aligned_target`` rendered from the letters of
        ``query`` and ``target`` (needs the traceback)."""
        if self.cigar is None or self.query_start is None or self.target_start is None:
            raise ValueError("the aligned rows need the traceback: align with traceback=True")
        if self.score == 0:
            rows = ("", "")
        else:
            rows = render(self.cigar, query, target, self.query_start, self.target_start)
        return AlignmentResult(
            self.score,
            self.query_end,
            self.target_end,
            self.query_start,
            self.target_start,
            self.cigar,
            *rows,
        )

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": self.score,
            "query_end": self.query_end,
            "target_end": self.target_end,
        }
        if self.cigar is not None:
            out.update(
                query_start=self.query_start,
                target_start=self.target_start,
                cigar=self.cigar,
                aligned_query=self.aligned_query,
                aligned_target=self.aligned_target,
            )
        return out


@dataclass(frozen=True, eq=False)
class BatchResult:
    """The best local alignment of one query with each of many targets: ``scores``,
    ``query_ends`` and ``target_ends``, one ``int64`` entry per target in the order given
    (positions -1 where the score is 0).  ``result[i]`` is target ``i``'s
    :class:`AlignmentResult`; :meth:`top` ranks them."""

    scores: Ints
    query_ends: Ints
    target_ends: Ints

    __module__ = "prism_genomics"

    def __post_init__(self) -> None:
        import numpy as np

        arrays = []
        for name in ("scores", "query_ends", "target_ends"):
            value = np.asarray(getattr(self, name))
            if value.ndim != 1 or not np.issubdtype(value.dtype, np.integer):
                raise TypeError(
                    f"BatchResult.{name} must be a 1-d integer array, got "
                    f"{value.dtype} of shape {value.shape}"
                )
            arrays.append(value)
            object.__setattr__(self, name, value.astype(np.int64, copy=False))
        if len({a.shape for a in arrays}) != 1:
            raise ValueError(
                "BatchResult: scores, query_ends and target_ends must have one entry per "
                f"target; got lengths {[len(a) for a in arrays]}"
            )

    def __len__(self) -> int:
        return len(self.scores)

    def __getitem__(self, index: int) -> AlignmentResult:
        return AlignmentResult(
            int(self.scores[index]), int(self.query_ends[index]), int(self.target_ends[index])
        )

    def __iter__(self) -> Iterator[AlignmentResult]:
        for i in range(len(self)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        import numpy as np

        return isinstance(other, BatchResult) and all(
            np.array_equal(getattr(self, n), getattr(other, n))
            for n in ("scores", "query_ends", "target_ends")
        )

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def top(self, k: int | None = None) -> list[int]:
        """The indices of the ``k`` best targets (all when ``None``), best first; equal scores
        keep the targets' order."""
        import numpy as np

        order = np.argsort(-self.scores, kind="stable")
        chosen = order if k is None else order[: max(0, int(k))]
        return [int(i) for i in chosen]

    def as_dict(self) -> dict[str, Any]:
        return {
            "scores": self.scores.tolist(),
            "query_ends": self.query_ends.tolist(),
            "target_ends": self.target_ends.tolist(),
        }


@dataclass(frozen=True)
class Hit:
    """One query's alignment with one target, named: what searches and
    :class:`~prism_genomics.SequenceAligner` return.  ``query``/``target`` are the record
    names (``"queries[2]"``, ``"targets[7]"`` for sequences given without one; ``target`` is
    ``None`` and ``target_index`` -1 when nothing aligned), ``target_index`` the target's
    position in its file or list, ``result`` the :class:`AlignmentResult`."""

    query: str
    target: str | None
    target_index: int
    result: AlignmentResult

    __module__ = "prism_genomics"

    @property
    def score(self) -> int:
        return self.result.score

    @property
    def cigar(self) -> str | None:
        return self.result.cigar

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "target": self.target,
            "target_index": self.target_index,
            **self.result.as_dict(),
        }
