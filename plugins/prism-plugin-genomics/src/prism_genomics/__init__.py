"""``prism_genomics``: local sequence alignment (Smith-Waterman) on whatever hardware is there.

The ``prism-plugin-genomics`` distribution; one call aligns, Prism picks the implementation::

    import prism_genomics as genomics

    hit = genomics.align("ACGTTGCA", "TTACGTAGCATT", traceback=True)
    hit.score, hit.cigar, hit.aligned_query

The alignment itself is two dispatched ops, ``genomics.sw_align`` (one pair) and
``genomics.sw_align_batch`` (one query against many targets), declared when ``ops.py`` is
imported (by the plugin's entry point, ``plugin.py``, which contributes their NumPy references);
other plugins add faster variants (parasail's SIMD kernels, Numba, a GPU batch kernel) with
requirements on the device.  The front end (``align``, ``align_batch``, ``align_many``,
``search``, ``SequenceAligner``) encodes letters, reads FASTA/FASTQ files as streams, and calls
the ops; ``prism genomics align`` is its command line (``command.py``, entry point ``genomics``
in ``prism.commands``).

Names are loaded on first access, as ``prism_core``'s are: importing this package imports
neither NumPy nor any aligner library, and no variant's library (parasail, numba, torch,
Biopython) is imported before a variant of it runs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prism_genomics._align import align, align_batch, align_many, search
    from prism_genomics.aligner import SequenceAligner
    from prism_genomics.io import (
        Record,
        SequenceFileError,
        SequenceReader,
        read_fasta,
        read_fastq,
        read_sequences,
    )
    from prism_genomics.ops import (
        TRACEBACK_LIMIT,
        AlignmentError,
        sw_align,
        sw_align_batch,
    )
    from prism_genomics.result import AlignmentResult, BatchResult, Hit
    from prism_genomics.scoring import (
        BLOSUM62,
        DNA,
        DNAFULL,
        PROTEIN,
        Alphabet,
        Scoring,
        SequenceError,
        encode,
        get_scoring,
    )

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_LAZY = {
    "align": "_align",
    "align_batch": "_align",
    "align_many": "_align",
    "search": "_align",
    "AlignmentError": "ops",
    "TRACEBACK_LIMIT": "ops",
    "sw_align": "ops",
    "sw_align_batch": "ops",
    "AlignmentResult": "result",
    "BatchResult": "result",
    "Hit": "result",
    "SequenceAligner": "aligner",
    "Record": "io",
    "SequenceFileError": "io",
    "SequenceReader": "io",
    "read_fasta": "io",
    "read_fastq": "io",
    "read_sequences": "io",
    "Alphabet": "scoring",
    "BLOSUM62": "scoring",
    "DNA": "scoring",
    "DNAFULL": "scoring",
    "PROTEIN": "scoring",
    "Scoring": "scoring",
    "SequenceError": "scoring",
    "encode": "scoring",
    "get_scoring": "scoring",
}

__all__ = [
    "BLOSUM62",
    "DNA",
    "DNAFULL",
    "PROTEIN",
    "TRACEBACK_LIMIT",
    "AlignmentError",
    "AlignmentResult",
    "Alphabet",
    "BatchResult",
    "Hit",
    "Record",
    "Scoring",
    "SequenceAligner",
    "SequenceError",
    "SequenceFileError",
    "SequenceReader",
    "__version__",
    "align",
    "align_batch",
    "align_many",
    "encode",
    "get_scoring",
    "read_fasta",
    "read_fastq",
    "read_sequences",
    "search",
    "sw_align",
    "sw_align_batch",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
