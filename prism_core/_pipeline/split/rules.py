"""How each op is cut: its :class:`SplitRule`, one of five kinds, declared as data.

The built-in rules are those of the ops whose records say how they split (``OpRecord.split``);
:func:`declare_split_rule` adds one for an op of your own.  The kinds and how each joins its
parts: docs/split.md ("How each op splits").
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass
from typing import Any

from prism_core.kernel.dispatch.catalogue import SPECS, parse_signature
from prism_core.kernel.dispatch.ops import (  # (ops, not registry: it installs the op functions)
    Op,
    as_op,
)
from prism_core.kernel.errors import did_you_mean
from prism_core.kernel.public import home

__all__ = ["COMBINES", "KINDS", "SplitRule", "declare_split_rule", "split_rules"]


#: The kinds of split rules (docs/split.md, "How each op splits").
KINDS = ("elementwise", "matmul", "batched", "along", "reduction")
#: How partial results of a reduction over the split axis combine.
COMBINES = ("add", "mean", "maximum", "minimum")


@home("prism_core.pipelines")
@dataclass(frozen=True)
class SplitRule:
    """How calls of one op are cut along an axis and their parts joined again.

    ``kind`` is one of :data:`KINDS`.  ``arrays`` (``elementwise``) are the positions of the
    arguments that broadcast together, ``keywords`` keyword arguments that do too (``clip``'s
    ``min`` and ``max``).  ``along`` and ``along_default`` (``along``, ``reduction``) name the
    op's own axis keyword and its default.  ``combine`` (``reduction``) is how partial results
    over the split axis join: one of :data:`COMBINES`, or ``None`` when they cannot (``std``):
    such an op splits only along the axes it keeps.  ``core`` (``batched``) is how many
    trailing axes of the first argument are one problem (2: a matrix).
    """

    op: str
    kind: str
    arrays: tuple[int, ...] = (0,)
    keywords: tuple[str, ...] = ()
    along: str = "axis"
    along_default: int | None = -1
    combine: str | None = None
    core: int = 2

    def __post_init__(self) -> None:
        if not isinstance(self.op, str) or not self.op:
            raise TypeError(f"SplitRule: op must be an op name such as 'matmul', got {self.op!r}")
        if self.kind not in KINDS:
            raise ValueError(
                f"SplitRule({self.op!r}): kind={self.kind!r} is not a kind of rule"
                f"{did_you_mean(str(self.kind), KINDS)}; use one of {', '.join(KINDS)}"
            )
        if self.combine is not None and self.combine not in COMBINES:
            raise ValueError(
                f"SplitRule({self.op!r}): combine={self.combine!r} is not a way to combine "
                f"parts; use one of {', '.join(COMBINES)}, or None when they cannot be combined"
            )
        if not self.arrays or any(not isinstance(i, int) or i < 0 for i in self.arrays):
            raise ValueError(
                f"SplitRule({self.op!r}): arrays must be positions of arguments (ints >= 0), "
                f"got {self.arrays!r}"
            )
        if not isinstance(self.core, int) or self.core < 0:
            raise ValueError(f"SplitRule({self.op!r}): core must be an int >= 0, got {self.core!r}")

    def describe(self) -> str:
        """One line on how the op splits, for errors and docs."""
        if self.kind == "elementwise":
            return "elementwise: arguments broadcast together; cut where full along the axis"
        if self.kind == "matmul":
            return "matmul: a batch axis cuts both operands, the rows x1, the columns x2"
        if self.kind == "batched":
            return f"batched: along a batch axis (the last {self.core} axes are one problem)"
        if self.kind == "along":
            return f"along {self.along}: split along any other axis"
        how = f"combined by {self.combine}" if self.combine else "not combinable"
        return f"reduction: concatenated along kept axes; over the split axis {how}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "kind": self.kind,
            "arrays": list(self.arrays),
            "keywords": list(self.keywords),
            "along": self.along,
            "along_default": self.along_default,
            "combine": self.combine,
            "core": self.core,
        }


def _builtin_rules() -> dict[str, SplitRule]:
    """The rules of the builtin ops whose records say how they split (``OpRecord.split``): the
    kind (a reduction's combine after it), over the record's array arguments; an elementwise
    op's array arguments that may be given by keyword broadcast as keywords too (``clip``'s
    ``min`` and ``max``)."""
    rules: dict[str, SplitRule] = {}
    for record in SPECS:
        if record.split is None:
            continue
        kind, _, combine = record.split.partition(" ")
        arrays = record.array_args or (0,)
        keywords: tuple[str, ...] = ()
        if kind == "elementwise":
            parameters = list(parse_signature(record.signature).parameters.values())
            named = [parameters[i] for i in arrays]
            keywords = tuple(p.name for p in named if p.kind is not p.POSITIONAL_ONLY)
        rules[record.name] = SplitRule(
            record.name,
            kind,
            arrays,
            keywords=keywords,
            along_default=None if kind == "reduction" else -1,
            combine=combine or None,
        )
    return rules


_RULES: dict[str, SplitRule] = _builtin_rules()
_RULES_LOCK = threading.Lock()


def split_rules() -> dict[str, SplitRule]:
    """Every op that splits, by name, with its rule (a copy)."""
    with _RULES_LOCK:
        return dict(sorted(_RULES.items()))


def declare_split_rule(rule: SplitRule, *, replace: bool = False) -> SplitRule:
    """Declare how an op splits (an op of your own, made with ``prism.operation``).

    An op with a rule already is an error unless ``replace=True``.  Specs made before keep
    the rules they were made with only until their plans are rebuilt: declare rules first.
    """
    if not isinstance(rule, SplitRule):
        raise TypeError(
            "declare_split_rule(): rule must be a prism_core.pipelines.SplitRule such as "
            f"SplitRule('myop', 'elementwise', (0, 1)); got {type(rule).__name__}"
        )
    name = as_op(rule.op).name  # the op must exist; aliases give its own name
    if name != rule.op:
        rule = dataclasses.replace(rule, op=name)
    with _RULES_LOCK:
        if name in _RULES and not replace:
            raise ValueError(
                f"declare_split_rule(): {name!r} has a split rule already ({_RULES[name].kind}); "
                "pass replace=True to replace it"
            )
        _RULES[name] = rule
    return rule


def _rule_for(op: Op) -> SplitRule | None:
    return _RULES.get(op.name)


def _no_rule(op: Op) -> ValueError:
    names = sorted(_RULES)
    return ValueError(
        f"{op.name!r} has no split rule{did_you_mean(op.name, names)}; the ops that split: "
        f"{', '.join(names)} (declare one for your own op with "
        "prism_core.pipelines.declare_split_rule)"
    )
