"""Quantities in words, for people: durations and sizes in memory."""

from __future__ import annotations

__all__ = ["bytes_text", "seconds_text"]


def seconds_text(seconds: float | None) -> str:
    """``0.000812`` -> ``"812 µs"``, three significant digits; ``None`` -> ``"?"``."""
    if seconds is None:
        return "?"
    if seconds == 0:
        return "0 s"
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds * 1e6:.3g} µs"


def bytes_text(n: int) -> str:
    """``3 << 30`` -> ``"3 GiB"``, four significant digits in binary units."""
    for unit, shift in (("PiB", 50), ("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)):
        size = 1 << shift
        if n >= size:
            return f"{n / size:.4g} {unit}"
    return f"{n} B"
