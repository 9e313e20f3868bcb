"""Where a public class lives for its users: :func:`home` names the namespace that exports it
(``prism_core.hardware``), so that reprs, pickles and documentation name that module and not
the private one that defines it.  docs/api.md lists the namespaces."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

__all__ = ["home"]

_T = TypeVar("_T", bound=type)


def home(module: str) -> Callable[[_T], _T]:
    """Class decorator: ``cls.__module__ = module``, set after the class is made (a dataclass
    resolves its annotations in the module it names while it is made)."""

    def place(cls: _T) -> _T:
        cls.__module__ = module
        return cls

    return place
