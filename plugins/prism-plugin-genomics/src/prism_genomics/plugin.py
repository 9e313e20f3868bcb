"""The hook implementations of the ``genomics`` plugin (entry point ``genomics`` in
``prism.plugins``).

Importing this module declares the Smith-Waterman ops (``prism_genomics.ops``); the
``prism_variants`` hook contributes their NumPy references, named as ``"module:function"``
strings, so that discovery imports no NumPy.  The plugin ships no device descriptions, no
backend (the references run on the builtin ``numpy`` one) and detects no devices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import prism_core
from prism_genomics.ops import SW_ALIGN, SW_ALIGN_BATCH

__all__ = ["prism_plugin_info", "prism_variants"]

_REFERENCE = "prism_genomics.reference"


@prism_core.extending.hookimpl
def prism_plugin_info() -> Mapping[str, Any]:
    return {
        "description": "Smith-Waterman ops (genomics.sw_align, genomics.sw_align_batch), their "
        "NumPy references, FASTA/FASTQ and `prism genomics align`"
    }


@prism_core.extending.hookimpl
def prism_variants() -> Sequence[prism_core.extending.Variant]:
    return [
        prism_core.extending.Variant(
            SW_ALIGN,
            f"{_REFERENCE}:sw_align_reference",
            backend="numpy",
            reference=True,
            name="numpy.genomics.sw_align",
        ),
        prism_core.extending.Variant(
            SW_ALIGN_BATCH,
            f"{_REFERENCE}:sw_align_batch_reference",
            backend="numpy",
            reference=True,
            name="numpy.genomics.sw_align_batch",
        ),
    ]
