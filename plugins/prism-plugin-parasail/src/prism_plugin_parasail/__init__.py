"""Prism plugin for Smith-Waterman local alignment on the host CPU through parasail.

* ``prism_plugin_parasail.plugin``: the hook implementations (entry point ``parasail`` in the
  group ``prism.plugins``);
* ``prism_plugin_parasail.backend``: :class:`~prism_plugin_parasail.backend.ParasailBackend`,
  the ``parasail`` backend (NumPy arrays on the host CPU; parasail is imported only when it is
  used);
* ``prism_plugin_parasail.variants``: the variants of ``genomics.sw_align`` and
  ``genomics.sw_align_batch``, one per instruction set (AVX2, SSE4.1, NEON), each requiring
  its CPU flag, and their per-call checks;
* ``prism_plugin_parasail.rule``: the rule that picks each call's kernel family and lane
  width (the instruction sets, the lanes' limits, the measured thresholds): decisions only;
* ``prism_plugin_parasail.kernels``: parasail's kernels bound per instruction set, the
  matrices, the kept queries, the alignments in the lanes the rule picks and the batch threads;
* ``prism_plugin_parasail.why``: the rule's choice in words, for ``prism explain`` (the family
  variants' checks);
* ``prism_plugin_parasail.ops``: the variants' functions, returning Prism's result types.

Importing this package, or any module of it but ``kernels``, ``why`` and ``ops``, imports
neither parasail nor NumPy.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
