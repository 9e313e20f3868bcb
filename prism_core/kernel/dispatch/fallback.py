"""Failing well: the errors dispatch raises, and the record of variants that failed for a
backend reason and what ran instead (warned once each, at the caller's line)."""

from __future__ import annotations

import contextlib
import contextvars
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

from prism_core.kernel.contract.variant import Variant, VariantImportError
from prism_core.kernel.errors import PrismError, PrismWarning, describe_exception, user_stacklevel

__all__ = [
    "CALLER_ERRORS",
    "BackendError",
    "DispatchError",
    "FallbackRecord",
    "FallbackWarning",
    "fallback_recording",
    "fallbacks",
    "note_plugin_problem",
    "record",
    "reset_fallbacks",
]

#: Exceptions that are the caller's (a shape mismatch, a wrong dtype; a warning raised as an
#: error, ``-W error``): they reach the caller unchanged and never cause a fallback.
CALLER_ERRORS: tuple[type[BaseException], ...] = (
    TypeError,
    ValueError,
    IndexError,
    KeyError,
    ArithmeticError,
    Warning,
)


class DispatchError(PrismError, RuntimeError):
    """No variant could run the call; the message lists every candidate's reason."""

    __module__ = "prism_core"


class BackendError(PrismError, RuntimeError):
    """A variant failed for a backend reason where falling back is not allowed (a device or
    backend was named, or strict mode); the original error is its ``__cause__``."""

    __module__ = "prism_core"


class FallbackWarning(PrismWarning):
    """A variant failed and dispatch fell back to the next candidate (warned once each)."""

    __module__ = "prism_core"


@dataclass
class FallbackRecord:
    """A variant that failed for a backend reason, and what ran instead."""

    op: str
    variant: str
    error: str
    fell_back_to: str | None
    count: int = 1

    __module__ = "prism_core"


#: One record per op and failing variant; a new one warns.
_fallbacks: dict[tuple[str, str], FallbackRecord] = {}
_lock = threading.Lock()
#: The list :func:`fallback_recording` appends to in this context (``None``: nothing records).
_FALLBACK_SINK: contextvars.ContextVar[list[FallbackRecord] | None] = contextvars.ContextVar(
    "prism_fallback_recording", default=None
)


@contextlib.contextmanager
def fallback_recording() -> Iterator[list[FallbackRecord]]:
    """Record the fallbacks that happen in this context: yields a list to which each fallback
    appends a :class:`FallbackRecord` of its own (``count`` 1), beside the process-wide
    records of :func:`fallbacks`.  The innermost recording gets them."""
    sink: list[FallbackRecord] = []
    token = _FALLBACK_SINK.set(sink)
    try:
        yield sink
    finally:
        with contextlib.suppress(ValueError):  # ended in another context: not ours to reset
            _FALLBACK_SINK.reset(token)


def fallbacks() -> list[FallbackRecord]:
    """Every fallback so far in this process (one record per op and failing variant)."""
    with _lock:
        return list(_fallbacks.values())


def reset_fallbacks() -> None:
    with _lock:
        _fallbacks.clear()


def record(op: str, variant: str, exc: Exception, fell_back_to: str | None) -> None:
    """``variant`` of ``op`` failed and ``fell_back_to`` runs instead: count it in the
    process's records and the recording in force, and warn the first time, at the caller's line."""
    error = describe_exception(exc)
    with _lock:
        known = _fallbacks.get((op, variant))
        if known is None:
            _fallbacks[(op, variant)] = FallbackRecord(op, variant, error, fell_back_to)
        else:
            known.count += 1
    sink = _FALLBACK_SINK.get()
    if sink is not None:
        sink.append(FallbackRecord(op, variant, error, fell_back_to))
    if known is None:  # the first time
        imported = isinstance(exc, VariantImportError)
        said = str(exc) if imported else f"variant {variant} failed ({error})"
        warnings.warn(
            f"{op}: {said}; "
            + (f"falling back to {fell_back_to}" if fell_back_to else "no other variant is left"),
            FallbackWarning,
            stacklevel=user_stacklevel(),
        )


def note_plugin_problem(variant: Variant, problem: str) -> None:
    if not variant.source.startswith("plugin:"):
        return
    from prism_core.kernel.plugins import plugins

    record = plugins().records.get(variant.source.partition(":")[2])
    if record is not None and problem not in record.problems:
        record.problems.append(problem)
