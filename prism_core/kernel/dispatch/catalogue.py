"""The builtin operations: their names, documentation, aliases and array arguments.

Every op is declared once, as a record (``kernel/oprecord.py``) of its family
(``kernel/records/families.py``); ``registry.ensure_ready`` makes the ops on first use, and
plugins contribute their variants.  Each op's documentation starts with its signature, the one
``inspect.signature`` and ``help()`` show (:func:`parse_signature`).  docs/dispatch.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING

from prism_core.kernel.oprecord import OpRecord
from prism_core.kernel.records.families import RECORDS

if TYPE_CHECKING:
    import inspect

__all__ = ["ALIASES", "CATALOGUE", "SPECS", "parse_signature", "signature_text"]


def signature_text(name: str, doc: str) -> str | None:
    """The signature an op's documentation starts with, from the parenthesis on: ``"(x, /, *,
    axis=None)"`` of ``"sum(x, /, *, axis=None): the sum ..."``, the one place a builtin op's
    signature is written; ``None`` when ``doc`` does not start with ``name(`` and a ``): ``."""
    if not doc.startswith(name + "("):
        return None
    end = doc.find("): ", len(name))
    return None if end < 0 else doc[len(name) : end + 1]


class _Text:
    """A default that is not a literal (``dtype=float64``), shown as it is written."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def parse_signature(text: str) -> inspect.Signature:
    """``text``, a signature as Python writes it (``"(x, /, *, axis=None)"``), as an
    :class:`inspect.Signature`: literal defaults as their values, the others (``dtype=float64``)
    as objects whose repr is their text; ``SyntaxError`` for text that is no signature."""
    import ast
    import inspect

    tree = ast.parse(f"def f{text}: pass")
    function = tree.body[0]
    if len(tree.body) != 1 or not isinstance(function, ast.FunctionDef):
        raise SyntaxError(f"{text!r} is not a signature such as '(x, /, *, axis=None)'")
    arguments = function.args

    def default(node: ast.expr | None) -> object:
        if node is None:
            return inspect.Parameter.empty
        try:
            return ast.literal_eval(node)
        except ValueError:
            return _Text(ast.unparse(node))

    P = inspect.Parameter
    positional = [*arguments.posonlyargs, *arguments.args]
    defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
    parameters = [
        P(
            a.arg,
            P.POSITIONAL_ONLY if i < len(arguments.posonlyargs) else P.POSITIONAL_OR_KEYWORD,
            default=default(d),
        )
        for i, (a, d) in enumerate(zip(positional, defaults, strict=True))
    ]
    if arguments.vararg is not None:
        parameters.append(P(arguments.vararg.arg, P.VAR_POSITIONAL))
    parameters += [
        P(a.arg, P.KEYWORD_ONLY, default=default(d))
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg is not None:
        parameters.append(P(arguments.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(parameters)


#: Every builtin op's record, in family order.
SPECS: tuple[OpRecord, ...] = RECORDS
#: The names of the builtin ops, in family order.
CATALOGUE: tuple[str, ...] = tuple(s.name for s in SPECS)
#: Old names of builtin ops -> the op's name.
ALIASES: Mapping[str, str] = MappingProxyType({alias: s.name for s in SPECS for alias in s.aliases})
