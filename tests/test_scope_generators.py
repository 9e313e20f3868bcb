"""Scopes and generators.

A generator has no context of its own: a ``with prism.device(...)`` inside one sets the scope in
whatever context runs the step, and the generator can be resumed or closed somewhere else. These
tests pin down what holds: the scope blocks never raise for that and never clobber the scope of
the code that resumes them; what cannot be helped (a plain generator's scope is seen by its
consumer between steps) is shown, and ``prism.scoped`` is the way around it.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import Any

import pytest

import prism_core as prism

H100 = "nvidia.h100-sxm"
MI300 = "amd.mi300x"


def device_type() -> str | None:
    dev = prism.current_scope().device
    return None if dev is None else dev.device_type


def on_h100() -> Iterator[str | None]:
    """A plain generator suspended inside a scope block."""
    with prism.device(H100, simulate=True):
        yield device_type()
        yield device_type()


# -- what a plain generator does ----------------------------------------------------------------


def test_a_plain_generator_shows_its_scope_to_its_consumer_between_steps() -> None:
    # This is Python's doing (a generator runs in its caller's context) and stays so: the
    # documented way around it is prism.scoped.
    base = prism.current_scope()
    g = on_h100()
    assert next(g) == H100
    assert device_type() == H100  # the consumer sees the generator's scope
    g.close()  # in order: the block ends, the consumer's scope is back
    assert prism.current_scope() is base


def test_closing_a_generator_inside_another_block_leaves_that_block_alone() -> None:
    base = prism.current_scope()
    g = on_h100()
    next(g)
    with prism.use_backend("numpy") as mine:
        g.close()  # the generator's block ends while the caller's is still open
        assert prism.current_scope() is mine  # not clobbered with what preceded the generator
    # ... and when the caller's block ends, the generator's ended block is not brought back.
    assert prism.current_scope() is base


def test_a_block_ending_in_another_context_raises_nothing_there() -> None:
    base = prism.current_scope()
    g = on_h100()
    ctx = contextvars.copy_context()
    assert ctx.run(next, g) == H100  # entered in ctx
    assert prism.current_scope() is base
    g.close()  # ends here, where it never was: nothing to undo, and no ValueError
    assert prism.current_scope() is base
    # The context the block was entered in keeps its scope: nothing in it ended the block.
    assert ctx.run(device_type) == H100


@pytest.mark.timeout(60)
def test_a_generator_closed_in_another_thread() -> None:
    base = prism.current_scope()
    g = on_h100()
    errors: list[BaseException] = []
    seen: list[Any] = []

    def advance() -> None:
        try:
            seen.append(next(g))
            seen.append(prism.current_scope())
        except BaseException as exc:  # pragma: no cover - the failure this test is about
            errors.append(exc)

    t = threading.Thread(target=advance)
    t.start()
    t.join()
    assert errors == [] and seen[0] == H100
    g.close()  # entered in the thread's context, closed in this one
    assert prism.current_scope() is base

    # The other way round: entered here (in a copy of this context, which keeps the scope:
    # nothing here ends the block), closed by a thread.
    g = on_h100()
    here = contextvars.copy_context()
    here.run(next, g)

    def close() -> None:
        try:
            g.close()
            seen.append(prism.current_scope().device)
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    t = threading.Thread(target=close)
    t.start()
    t.join()
    assert errors == []
    assert seen[-1] is None  # the thread's own scope was not touched
    assert here.run(device_type) == H100  # where it was entered, the block never ended
    assert prism.current_scope() is base


async def awaited(awaitable: Awaitable[Any]) -> Any:
    """A coroutine for ``asyncio.create_task``, which takes nothing else."""
    return await awaitable


async def ticks() -> AsyncIterator[str | None]:
    with prism.device(H100, simulate=True):
        for _ in range(3):
            await asyncio.sleep(0)
            yield device_type()


@pytest.mark.timeout(60)
def test_an_async_generator_closed_by_another_task() -> None:
    async def main() -> list[Any]:
        agen = ticks()
        first = await asyncio.create_task(awaited(agen.__anext__()))  # entered in a task
        await asyncio.create_task(awaited(agen.aclose()))  # ends in another
        return [first, prism.current_scope().device]

    assert asyncio.run(main()) == [H100, None]


@pytest.mark.timeout(60)
def test_an_abandoned_async_generator_is_finalized_without_errors() -> None:
    async def main() -> tuple[list[Any], Any]:
        errors: list[Any] = []
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: errors.append(ctx))

        async def consume() -> Any:
            async for _ in ticks():
                break  # abandoned inside its block: the event loop closes it, in a new task
            return prism.current_scope()

        seen = await asyncio.create_task(consume())
        gc.collect()
        for _ in range(5):
            await asyncio.sleep(0)
        return errors, seen

    errors, _seen = asyncio.run(main())
    assert errors == []


@pytest.mark.timeout(60)
def test_a_task_keeps_the_scope_it_was_made_in_after_that_block_ends() -> None:
    # A task's context is a copy: the block it was made in ending elsewhere changes nothing in
    # it, and a block of its own ends back to the scope it inherited.
    async def child() -> list[Any]:
        await asyncio.sleep(0)
        with prism.use_backend("numpy"):
            inner = prism.current_scope().backend
        return [inner, device_type(), prism.current_scope().backend]

    async def main() -> list[Any]:
        with prism.device(H100, simulate=True):
            task = asyncio.create_task(child())
        assert device_type() is None
        return await task

    assert asyncio.run(main()) == ["numpy", H100, None]


# -- prism.scoped -------------------------------------------------------------------------------


def test_scoped_generators_keep_their_scope_to_themselves() -> None:
    base = prism.current_scope()
    finished: list[Any] = []

    @prism.scoped
    def numbers(n: int) -> Iterator[Any]:
        try:
            with prism.device(H100, simulate=True):
                for i in range(n):
                    got = yield (i, device_type())
                    if got is not None:
                        yield ("got", got, device_type())
            return "done"
        finally:
            finished.append(device_type())

    g = numbers(2)
    assert next(g) == (0, H100)
    assert prism.current_scope() is base  # nothing leaks to the consumer
    with prism.use_backend("numpy") as mine:
        assert g.send("x") == ("got", "x", H100)
        assert prism.current_scope() is mine
        assert next(g) == (1, H100)
    assert prism.current_scope() is base
    with pytest.raises(StopIteration) as stop:
        next(g)
    assert stop.value.value == "done"
    assert finished == [None]  # its finally ran in its own context, after its block ended
    assert prism.current_scope() is base


def test_scoped_generators_see_the_scope_they_were_created_in() -> None:
    @prism.scoped
    def where() -> Iterator[str | None]:
        yield device_type()
        with prism.device(MI300, simulate=True):
            yield device_type()
        yield device_type()

    with prism.device(H100, simulate=True):
        g = where()  # the context is copied here, as asyncio does for a task
    assert device_type() is None
    assert list(g) == [H100, MI300, H100]
    assert device_type() is None


def test_scoped_forwards_throw_and_close() -> None:
    log: list[Any] = []

    def body() -> Iterator[int]:
        with prism.device(H100, simulate=True):
            try:
                yield 1
            except KeyError as exc:
                log.append(("caught", exc.args[0], device_type()))
                yield 2
            try:
                yield 3
            finally:
                log.append(("closing", device_type()))

    g = prism.scoped(body)()
    assert next(g) == 1
    assert g.throw(KeyError("k")) == 2
    assert next(g) == 3
    g.close()
    assert log == [("caught", "k", H100), ("closing", H100)]
    assert device_type() is None

    # A generator object can be wrapped too (its context is copied at the wrapping).
    g2 = prism.scoped(on_h100())
    assert next(g2) == H100 and device_type() is None
    with pytest.raises(ValueError, match="boom"):
        g2.throw(ValueError("boom"))
    assert device_type() is None


def test_scoped_refuses_what_is_not_a_generator() -> None:
    for bad in (len, lambda: 1, None, [1, 2]):
        with pytest.raises(TypeError, match=r"scoped\(\): fn must be a generator function"):
            prism.scoped(bad)  # type: ignore[arg-type]


@pytest.mark.timeout(60)
def test_scoped_generators_in_threads() -> None:
    barrier = threading.Barrier(2, timeout=30)
    results: dict[str, list[Any]] = {}
    errors: list[BaseException] = []

    @prism.scoped
    def steps(device_name: str) -> Iterator[str | None]:
        with prism.device(device_name, simulate=True):
            for _ in range(3):
                yield device_type()

    def worker(device_name: str) -> None:
        try:
            out: list[Any] = []
            for value in steps(device_name):
                barrier.wait()  # both threads are suspended inside their generator's block
                out.append((value, device_type()))
            results[device_name] = out
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(d,)) for d in (H100, MI300)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert results == {d: [(d, None)] * 3 for d in (H100, MI300)}

    # Made in one thread under a scope, consumed in another: the scope goes with it.
    with prism.device(H100, simulate=True):
        g = steps(MI300)
        outer = prism.scoped(on_h100)()
    seen: list[Any] = []
    t = threading.Thread(target=lambda: seen.extend([next(g), next(outer), device_type()]))
    t.start()
    t.join()
    assert seen == [MI300, H100, None]


@pytest.mark.timeout(60)
def test_scoped_async_generators_in_tasks() -> None:
    @prism.scoped
    async def steps(device_name: str) -> AsyncIterator[Any]:
        with prism.device(device_name, simulate=True):
            for _ in range(3):
                await asyncio.sleep(0)
                got = yield device_type()
                if got is not None:
                    yield ("got", got)

    async def consume(device_name: str) -> list[Any]:
        out = []
        async for value in steps(device_name):
            out.append((value, device_type()))
            await asyncio.sleep(0)
        return out

    async def main() -> None:
        first, second = await asyncio.gather(consume(H100), consume(MI300))
        assert first == [(H100, None)] * 3
        assert second == [(MI300, None)] * 3

        agen = steps(H100)
        assert await agen.__anext__() == H100
        assert device_type() is None
        assert await agen.asend("x") == ("got", "x")
        with pytest.raises(KeyError):
            await agen.athrow(KeyError("k"))
        # aclose from another task, and an abandoned one: no error, no leak.
        agen2 = steps(MI300)
        assert await agen2.__anext__() == MI300
        await asyncio.create_task(awaited(agen2.aclose()))
        errors: list[Any] = []
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: errors.append(ctx))
        async for _ in steps(H100):
            break
        gc.collect()
        for _ in range(5):
            await asyncio.sleep(0)
        assert errors == []
        assert device_type() is None

    asyncio.run(main())
