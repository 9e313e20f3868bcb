"""The Array API's ``fft`` extension, declared as data (issue 12): the transforms Prism did not
have (``fftn``, ``irfft``, ``hfft``, ...) and ``fftfreq``, ``rfftfreq``, ``fftshift``,
``ifftshift``.

One :class:`~prism_core._knowledge.optable.TableOp` per op (``optable.py`` says what each field
means and who reads it).  A pure module: it imports nothing of Prism but ``optable`` and no array
library.
"""

from __future__ import annotations

from prism_core._knowledge.optable import TableOp

__all__ = ["ROWS"]

ROWS: tuple[TableOp, ...] = ()
