"""`prism_core.array_api.fft`: the Array API's ``fft`` extension, each function the Prism op
of its name (``fft.<name>``), made on first use."""

from __future__ import annotations

from prism_core.array_api._extension import extension

#: This extension's function name -> the Prism op that is it.
_OPS, __getattr__ = extension("fft", (), globals())

__all__ = sorted(_OPS)


def __dir__() -> list[str]:
    return list(__all__)
