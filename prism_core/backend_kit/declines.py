"""Declines said declaratively: which calls of an op a library must not take, as data.

A :class:`Decline` is a ``can_run``: a :class:`~prism_core.backend_kit.NamespaceBackend`'s
``declines`` maps an op to one, as it maps an op to any ``can_run``.  Cheap to import: NumPy
is imported on the first call that reads a dtype's kind.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from prism_core.backend_kit._common import array_arguments
from prism_core.kernel.description.dtypes import dtype_name

__all__ = ["Decline"]

#: NumPy's kind letters, as a Decline's ``kinds`` takes them.
_KIND_LETTERS = frozenset("biufc")


@dataclass(frozen=True)
class Decline:
    """A ``can_run`` said as data: which calls of an op a library must not take.

    It declines the calls that have any of:

    * an array whose dtype is of one of ``kinds`` (NumPy's letters: ``"b"`` bool, ``"i"``
      signed and ``"u"`` unsigned integers, ``"f"`` floating, ``"c"`` complex);
    * an array of one of ``dtypes`` (Prism's names: ``{"float64"}``);
    * one of ``keywords`` given, and not ``None`` (``{"stable"}``);
    * an empty array, where ``empty`` is true;

    with ``why`` as the reason (``"mlx.core.sort takes no empty array"``), after what was
    found (``"an int32 array: ..."``).  The others it takes.  Arrays are those of
    :func:`~prism_core.backend_kit.array_arguments` (explain's ``ArraySpec`` too); only dtypes,
    shapes and keywords are read, so it is cheap on every call.
    """

    why: str
    kinds: str = ""
    dtypes: Collection[str] = field(default_factory=frozenset)
    keywords: Collection[str] = field(default_factory=frozenset)
    empty: bool = False

    def __post_init__(self) -> None:
        unknown = set(self.kinds) - _KIND_LETTERS
        if unknown:
            raise ValueError(
                f"kinds: {''.join(sorted(unknown))!r} is no NumPy kind letter; the letters are "
                "b (bool), i (signed), u (unsigned), f (floating), c (complex)"
            )
        if isinstance(self.dtypes, str) or isinstance(self.keywords, str):
            raise TypeError("dtypes, keywords: a collection of names, not one string")
        object.__setattr__(self, "dtypes", frozenset(self.dtypes))
        object.__setattr__(self, "keywords", frozenset(self.keywords))

    def __call__(self, *args: Any, **kwargs: Any) -> bool | str:
        for keyword in sorted(self.keywords):
            if kwargs.get(keyword) is not None:
                return f"{keyword}= given: {self.why}"
        for a in array_arguments(args, kwargs):
            name = dtype_name(a.dtype)
            if name in self.dtypes or (self.kinds and (_kind(name) or "?") in self.kinds):
                article = "an" if name.startswith("int") else "a"
                return f"{article} {name} array: {self.why}"
            if self.empty and any(int(s) == 0 for s in a.shape):
                return f"an empty array: {self.why}"
        return True


def _kind(name: str) -> str | None:
    import numpy as np

    if name == "bfloat16":
        return "f"
    try:
        return str(np.dtype(name).kind)
    except TypeError:
        return None
