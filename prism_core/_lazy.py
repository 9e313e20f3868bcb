"""Namespaces whose names load on first access (PEP 562, as SciPy's SPEC 1 recommends): a
namespace lists each public name once, with the private module that defines it, and
:func:`attach` makes its ``__getattr__``, ``__dir__`` and ``__all__``.  Importing a namespace
then imports nothing else; its ``.pyi`` stub (generated, ``prism_core._api_reference``) gives
type checkers the names' types."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

__all__ = ["attach"]


def attach(
    namespace: str, names: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]], list[str]]:
    """``__getattr__``, ``__dir__`` and ``__all__`` of the module ``namespace``, whose public
    names are the keys of ``names``, each defined in ``prism_core.<names[name]>``."""
    package = namespace.partition(".")[0]
    module = importlib.import_module(namespace)

    def __getattr__(name: str) -> object:
        where = names.get(name)
        if where is None:
            raise AttributeError(f"module {namespace!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{where}"), name)
        setattr(module, name, value)  # later lookups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *names})

    return __getattr__, __dir__, list(names)
