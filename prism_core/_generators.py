"""Generators that keep their scopes to themselves: :func:`scoped`.

A generator has no context of its own (PEP 568 was deferred): a ``with prism.device(...)``
around a ``yield`` sets the scope in the context of whoever resumed the generator, so the
consumer sees the generator's scope between steps.  :func:`scoped` gives a generator a context
of its own, copied where the generator is made (as asyncio does for a task), and runs each of
its steps in it.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import AsyncGenerator, Awaitable, Generator
from typing import Any, TypeVar

__all__ = ["scoped"]

_F = TypeVar("_F")


def scoped(fn: _F) -> _F:
    """Run every step of a generator in a context of its own.

    ``fn`` is a generator function or an async generator function (use ``scoped`` as a
    decorator), or a generator or async generator object.  Each generator gets a copy of the
    context in force where it is made (:func:`contextvars.copy_context`): it sees the scope in
    force there, and the scopes it enters stay inside it, never seen by the code that consumes
    it, in whatever thread or task that code runs.  ``send``, ``throw``, ``close`` (and
    ``asend``, ``athrow``, ``aclose``) and the return value are passed through.

    One step at a time: a context can be entered by one thread at a time, as a generator can be
    run by one.
    """
    if inspect.isgenerator(fn):
        return _steps(contextvars.copy_context(), fn)  # type: ignore[return-value]
    if inspect.isasyncgen(fn):
        return _async_steps(contextvars.copy_context(), fn)  # type: ignore[return-value]
    target = inspect.unwrap(fn) if callable(fn) else fn
    if inspect.isgeneratorfunction(target) or inspect.isasyncgenfunction(target):
        function: Any = fn

        @functools.wraps(function)
        def make(*args: Any, **kwargs: Any) -> Any:
            ctx = contextvars.copy_context()
            gen = ctx.run(function, *args, **kwargs)
            if inspect.isgenerator(gen):
                return _steps(ctx, gen)
            if inspect.isasyncgen(gen):
                return _async_steps(ctx, gen)
            raise TypeError(  # a wrapper around a generator function that returned something else
                f"scoped(): {function!r} returned {gen!r} ({type(gen).__name__}), not a generator"
            )

        return make  # type: ignore[return-value]
    raise TypeError(
        "scoped(): fn must be a generator function, an async generator function, or a "
        f"generator or async generator object; got {fn!r} ({type(fn).__name__})"
    )


def _steps(ctx: contextvars.Context, gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """``gen``, with each step run in ``ctx``."""
    try:
        value = ctx.run(next, gen)
    except StopIteration as stop:
        return stop.value
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            ctx.run(gen.close)
            raise
        except BaseException as exc:
            step: Any = gen.throw
            arg: Any = exc
        else:
            step, arg = gen.send, sent
        try:
            value = ctx.run(step, arg)
        except StopIteration as stop:
            return stop.value


async def _async_steps(
    ctx: contextvars.Context, agen: AsyncGenerator[Any, Any]
) -> AsyncGenerator[Any, Any]:
    """``agen``, with each step run in ``ctx``."""
    try:
        value = await _InContext(ctx, agen.asend(None))
    except StopAsyncIteration:
        return
    while True:
        try:
            sent = yield value
        except GeneratorExit:
            await _InContext(ctx, agen.aclose())
            raise
        except BaseException as exc:
            step: Awaitable[Any] = agen.athrow(exc)
        else:
            step = agen.asend(sent)
        try:
            value = await _InContext(ctx, step)
        except StopAsyncIteration:
            return


class _InContext:
    """An awaitable that runs ``awaitable`` in ``ctx``: each of its steps, whatever the event
    loop (the loop's futures pass through untouched)."""

    __slots__ = ("_awaitable", "_ctx")

    def __init__(self, ctx: contextvars.Context, awaitable: Awaitable[Any]) -> None:
        self._ctx = ctx
        self._awaitable = awaitable

    def __await__(self) -> Generator[Any, Any, Any]:
        ctx = self._ctx
        it = ctx.run(self._awaitable.__await__)
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                if error is None:
                    signal = ctx.run(it.send, value)
                else:
                    signal, error = ctx.run(it.throw, error), None
            except StopIteration as stop:
                return stop.value
            try:
                value = yield signal
            except GeneratorExit:
                ctx.run(it.close)
                raise
            except BaseException as exc:
                value, error = None, exc
