"""The scipy plugin's variants of the Array API's ``linalg`` functions that prism-core declares
as a table (issue 12).  SciPy-free at import: the implementations are named lazily."""

from __future__ import annotations

from prism_core import Variant

__all__ = ["variants"]


def variants() -> list[Variant]:
    """This module's variants, all on the ``scipy`` backend."""
    return []
