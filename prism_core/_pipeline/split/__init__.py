"""The heterogeneous data-parallel split: one op's work divided along an axis among targets.

``split(op, *args, targets=..., ratio=...)`` cuts a call into parts, runs each on its target
(a backend, a present or a simulated device) at the same time, each in a thread of its own, and
joins them into what the unsplit call returns; ``splitting([...])`` puts a :class:`SplitSpec`
in the scope, whose ``runner_for`` dispatch asks when it builds a plan.  How each op is cut is
data (:class:`SplitRule`, five kinds); every split makes a :class:`SplitRecord`.  The rules,
ratios, errors, and why threads: docs/split.md ("How each op splits", "Concurrency").

Layered, top to bottom: ``spec`` (what a scope splits, one call run as it says) > ``parts``
(running the parts, joining them) > ``threads`` (the parts' threads and shares of the cores) >
``decision`` (the ratio, and whether ``"auto"`` splits) > ``pinned`` (pinned host buffers),
``layout`` (how one call is cut), ``targets`` (where parts run), ``records`` > ``rules``.
"""

from __future__ import annotations

from prism_core._pipeline.split.records import (
    PartRecord,
    SplitError,
    SplitRecord,
    recording,
    split_recording,
)
from prism_core._pipeline.split.rules import KINDS, SplitRule, declare_split_rule, split_rules
from prism_core._pipeline.split.spec import SplitSet, SplitSpec, make_spec, split, splitting
from prism_core._pipeline.split.targets import SplitTarget, parse_target

__all__ = [
    "KINDS",
    "PartRecord",
    "SplitError",
    "SplitRecord",
    "SplitRule",
    "SplitSet",
    "SplitSpec",
    "SplitTarget",
    "declare_split_rule",
    "make_spec",
    "parse_target",
    "recording",
    "split",
    "split_recording",
    "split_rules",
    "splitting",
]
