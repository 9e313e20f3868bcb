"""`prism_core.array_api.fft`: the Array API's ``fft`` extension, each function the Prism op
of its name (``fft.<name>``, or the main namespace's op where the extension repeats a function
of it, as ``linalg.matmul`` does), made on first use."""

from __future__ import annotations

from typing import Any

from prism_core._knowledge.families import TABLE_OPS

#: This extension's function name -> the Prism op that is it.
_OPS: dict[str, str] = {
    **{
        row.name.partition(".")[2]: row.name
        for row in TABLE_OPS
        if row.standard and row.name.startswith("fft.")
    },
    **{name: f"fft.{name}" for name in ("fft", "ifft", "rfft")},
}

__all__ = sorted(_OPS)


def __getattr__(name: str) -> Any:
    op = _OPS.get(name)
    if op is None:
        raise AttributeError(
            f"module 'prism_core.array_api.fft' has no attribute {name!r}: it has "
            f"{', '.join(sorted(_OPS))}"
        )
    from prism_core._dispatch.ops import get_op

    value = get_op(op).function
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return list(__all__)
