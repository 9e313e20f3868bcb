"""The standard inputs of the conformance suite: the dtypes each op is checked in
(:data:`DTYPES`, from the op records), and the NumPy arguments each op is called with, by shape
and layout (:func:`input_cases`) and by keyword argument (:func:`keyword_cases`).

The cases are those of the op's family (``families.FAMILY_OF``), one module per family in
``_cases``; they share the arrays of ``_inputs``.
"""

from __future__ import annotations

from prism_core.kernel.records.families import FAMILY_OF, RECORDS
from prism_core.testing import _cases
from prism_core.testing._inputs import Case, Maker

__all__ = ["DTYPES", "SHAPES", "input_cases", "keyword_cases", "standard_inputs"]

#: The shapes and layouts every op is called with (where the op is defined on them).
SHAPES = ("standard", "empty", "one", "odd", "strided", "fortran")

#: The dtypes each op is checked in (its first: the dtype of the keyword-argument checks), as
#: its record declares them; an op whose record names none (``random.normal``) is not here.
DTYPES: dict[str, tuple[str, ...]] = {r.name: r.dtypes for r in RECORDS if r.dtypes}


def input_cases(op: str, dtype: str | None = None) -> dict[str, Case]:
    """NumPy arguments to call ``op`` with, by shape (:data:`SHAPES`, and ``vector`` for
    ``linalg.solve``, ``bounds`` for ``clip``): ``{shape: (args, kwargs)}``; ``{}`` when the
    suite has none for that op or that dtype.  ``dtype=None`` is float64, or the op's only
    dtype when it is not checked in float64 (``triu_indices``: int64).  The same numbers every
    time; well-conditioned where it matters."""
    dtype = _default_dtype(op) if dtype is None else dtype
    if dtype not in DTYPES.get(op, ()):
        return {}
    found: dict[str, Case] = _cases.module(FAMILY_OF[op]).input_cases(op, Maker(dtype))
    return found


def keyword_cases(op: str, dtype: str | None = None) -> dict[str, list[Case]]:
    """The calls that exercise each keyword argument ``op`` documents:
    ``{keyword: [(args, kwargs), ...]}``, in the op's first dtype unless ``dtype`` is given;
    ``{}`` when the suite has none for that op."""
    if op not in DTYPES:
        return {}
    hook = getattr(_cases.module(FAMILY_OF[op]), "keyword_cases", None)
    if hook is None:
        return {}
    calls: dict[str, list[Case]] = hook(op, Maker(dtype or DTYPES[op][0]))
    return calls


def standard_inputs(op: str, dtype: str | None = None) -> list[Case]:
    """NumPy arguments to call ``op`` with: ``[(args, kwargs)]``, the ``standard`` case of
    :func:`input_cases` (arrays large enough to pass the usual size thresholds; ``dtype`` as
    there); ``[]`` when the suite has none for that op."""
    case = input_cases(op, dtype).get("standard")
    return [case] if case else []


def _default_dtype(op: str) -> str:
    dtypes = DTYPES.get(op, ())
    return "float64" if "float64" in dtypes or not dtypes else dtypes[0]
