"""``SequenceAligner``: the seed's algorithm-family object (shared/seeds/002, section 6.3)::

    aligner = prism_genomics.SequenceAligner(
        algorithm="smith-waterman",
        adaptation_strategy="performance",
    )
    alignments = aligner.align(sequences, reference)

An aligner is a configuration -- the algorithm, the scoring, whether to trace back, how to
choose among variants -- and :meth:`SequenceAligner.align` runs it: every sequence against the
reference (one sequence, or every record of a FASTA file, a genome's chromosomes), one
``genomics.sw_align_batch`` call per sequence, the best record's alignment traced back with
``genomics.sw_align``.  Which variant runs is dispatch's choice, as for any op; the
``adaptation_strategy`` is the scope it runs in: ``"performance"`` (the fastest eligible
variant: tuned, modelled or by priority), ``"reference"`` (the NumPy reference, to check
results) or an :class:`~prism_core.ExecutionPolicy`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import prism_core
from prism_core.backend_kit import did_you_mean
from prism_genomics._align import _batch, _codes, _targets, _with_rows, named_sequences
from prism_genomics.ops import sw_align
from prism_genomics.result import AlignmentResult, Hit
from prism_genomics.scoring import Scoring, get_scoring

if TYPE_CHECKING:
    from prism_core import ExecutionPolicy

__all__ = ["ALGORITHMS", "SequenceAligner"]

#: The algorithms of the family, by name (and the other names they go by).
ALGORITHMS = {"smith-waterman": ("smith-waterman", "smith_waterman", "sw", "local")}
_STRATEGIES = ("performance", "reference")


def _algorithm(name: Any) -> str:
    if isinstance(name, str):
        key = name.strip().lower()
        for algorithm, names in ALGORITHMS.items():
            if key in names:
                return algorithm
    known = [n for names in ALGORITHMS.values() for n in names]
    hint = did_you_mean(name.lower(), known) if isinstance(name, str) else ""
    raise ValueError(
        f"unknown algorithm {name!r}{hint}; available: {', '.join(map(repr, ALGORITHMS))} "
        "(local alignment with affine gaps)"
    )


class SequenceAligner:
    """Align sequences against a reference with the best variant for the hardware.

    :param algorithm: ``"smith-waterman"`` (also ``"sw"``, ``"local"``); anything else is a
        ``ValueError`` naming the available algorithms.
    :param scoring: ``"dna"``, ``"dnafull"``, ``"blosum62"`` or a :class:`Scoring`.
    :param gap_open: replaces the scheme's gap-open penalty.
    :param gap_extend: replaces the scheme's gap-extend penalty.
    :param traceback: trace each best alignment back (starts, CIGAR, aligned rows).
    :param unknown: the letter unknown letters align as (``"N"``), or ``None``: an error.
    :param adaptation_strategy: ``"performance"``, ``"reference"`` or an
        :class:`~prism_core.ExecutionPolicy` (see the module docstring).
    """

    __module__ = "prism_genomics"

    def __init__(
        self,
        algorithm: str = "smith-waterman",
        *,
        scoring: str | Scoring = "dna",
        gap_open: int | None = None,
        gap_extend: int | None = None,
        traceback: bool = True,
        unknown: str | None = None,
        adaptation_strategy: str | ExecutionPolicy = "performance",
    ) -> None:
        self.algorithm = _algorithm(algorithm)
        self.scoring = get_scoring(scoring, gap_open, gap_extend)
        if not isinstance(traceback, bool):
            raise TypeError(f"traceback must be True or False, got {traceback!r}")
        self.traceback = traceback
        if unknown is not None:
            self.scoring.alphabet.code(unknown)  # a letter of the alphabet, or a clear error
        self.unknown = unknown
        if isinstance(adaptation_strategy, str):
            if adaptation_strategy not in _STRATEGIES:
                raise ValueError(
                    f"adaptation_strategy={adaptation_strategy!r} is not a strategy"
                    f"{did_you_mean(adaptation_strategy, _STRATEGIES)}; use "
                    f"{' or '.join(map(repr, _STRATEGIES))}, or a prism_core.ExecutionPolicy"
                )
        else:
            if not isinstance(adaptation_strategy, prism_core.ExecutionPolicy):
                raise TypeError(
                    "adaptation_strategy must be 'performance', 'reference' or a "
                    f"prism_core.ExecutionPolicy, got {adaptation_strategy!r}"
                )
        self.adaptation_strategy = adaptation_strategy

    def __repr__(self) -> str:
        return (
            f"SequenceAligner({self.algorithm!r}, scoring={self.scoring.name!r}, "
            f"gap_open={self.scoring.gap_open}, gap_extend={self.scoring.gap_extend}, "
            f"traceback={self.traceback}, adaptation_strategy={self.adaptation_strategy!r})"
        )

    def _scope(self) -> contextlib.AbstractContextManager[Any]:
        strategy = self.adaptation_strategy
        if isinstance(strategy, str):
            return prism_core.choosing(prefer=strategy)
        return prism_core.execution_policy(strategy)

    def align(self, sequences: Any, reference: Any) -> list[Hit]:
        """Each of ``sequences`` aligned with ``reference``: one :class:`Hit` per sequence, in
        order, for its best-scoring reference record (the earliest among equals).

        :param sequences: sequences (``str``, ``bytes``, arrays of codes, records), an iterable
            of them, or the path of a FASTA/FASTQ file (streamed).
        :param reference: one sequence, or the path of a FASTA file (every record is a
            candidate; they are held in memory, encoded, one byte per letter).
        :returns: a list of :class:`Hit`; a sequence that aligns nowhere has score 0, target
            ``None`` and index -1.
        """
        return list(self.iter_align(sequences, reference))

    def iter_align(self, sequences: Any, reference: Any) -> Iterator[Hit]:
        """:meth:`align`, one hit at a time (the sequences are read as they are needed)."""
        scheme = self.scoring
        names, packed, offsets = _targets(reference, scheme.alphabet, self.unknown, "reference")
        if not names:
            raise ValueError("reference holds no sequences")
        for i, (name, item) in enumerate(named_sequences(sequences, "sequences")):
            q = _codes(item, scheme.alphabet, self.unknown, f"sequences[{i}]", name)
            with self._scope():  # left before yielding: the caller's code runs in its own scope
                hit = self._best(name, q, names, packed, offsets)
            yield hit

    def _best(self, name: str, q: Any, names: list[str], packed: Any, offsets: Any) -> Hit:
        scheme = self.scoring
        batch = _batch(q, packed, offsets, scheme)
        index = batch.top(1)[0]
        if batch.scores[index] == 0:
            if self.traceback:
                return Hit(name, None, -1, AlignmentResult(0, -1, -1, -1, -1, "", "", ""))
            return Hit(name, None, -1, AlignmentResult(0, -1, -1))
        if not self.traceback:
            return Hit(name, names[index], index, batch[index])
        t = packed[offsets[index] : offsets[index + 1]]
        traced = sw_align(q, t, scheme.matrix, scheme.gap_open, scheme.gap_extend, True)
        return Hit(name, names[index], index, _with_rows(traced, q, t, scheme.alphabet))
