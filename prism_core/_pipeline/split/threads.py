"""The threads of a split: each part in a thread of its own, host parts sharing the cores.

:class:`_Workers` keeps the threads parts run in (a part never waits for a free one);
:func:`_shares` gives the parts that run on the host at once their shares of its cores, and
:func:`_thread_share` holds a part's backend to its share while it runs.  Why threads:
docs/split.md ("Concurrency").
"""

from __future__ import annotations

import contextlib
import functools
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from typing import Any

from prism_core._pipeline.split.decision import sizes_of
from prism_core.kernel.config import usable_cpus

#: Modules with a thread count of their own that is set per calling thread, as
#: ``(getter, setter)`` (torch's applies to the calling thread's OpenMP and MKL settings, and
#: to threads that start torch work later).
_OWN_COUNT = {"torch": ("get_num_threads", "set_num_threads")}


class _Libraries:
    """The native thread pools of each backend's modules, found with threadpoolctl, and the
    process-wide limits splits put on them.

    A scan costs about 0.6 ms, more than a small part: it is cached per set of modules, and
    made again only when a module of the set still has no library and modules were imported
    since (``scipy.linalg`` loads SciPy's OpenBLAS after ``scipy``), at most once a second, as
    the thread-pool coordinator does."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: modules -> (len(sys.modules) at the scan, when, [(controller, module)])
        self._seen: dict[tuple[str, ...], tuple[int, float, list[tuple[Any, str]]]] = {}
        #: filepath -> (count of splits limiting it, the count before the first)
        self._limited: dict[str, tuple[int, int]] = {}

    def controllers(self, modules: Sequence[str]) -> list[tuple[Any, str]]:
        """``(threadpoolctl controller, module)`` of the libraries of ``modules``."""
        from prism_core.kernel.threads import module_roots, owner_of

        present = tuple(sorted(m for m in modules if m in sys.modules))
        if not present:
            return []
        size, now = len(sys.modules), time.monotonic()
        with self._lock:
            seen = self._seen.get(present)
        if seen is not None:
            complete = {m for _, m in seen[2]} >= set(present)
            if complete or size == seen[0] or now - seen[1] < 1.0:
                return list(seen[2])
        try:
            import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

            found = list(threadpoolctl.ThreadpoolController().lib_controllers)
        except Exception:  # threadpoolctl missing or failing: nothing is limited
            found = []
        roots = module_roots(present)
        owned = [(c, owner_of(str(c.filepath), roots)) for c in found]
        libraries = [(c, m) for c, m in owned if m is not None]
        with self._lock:
            self._seen[present] = (size, now, libraries)
        return list(libraries)

    def enter(self, controller: Any, count: int) -> None:
        """Limit a library with one count per process (OpenBLAS) while a split needs it."""
        key = str(controller.filepath)
        with self._lock:
            users, before = self._limited.get(key, (0, int(controller.num_threads)))
            if users == 0 and count < before:
                controller.set_num_threads(count)
            self._limited[key] = (users + 1, before)

    def leave(self, controller: Any) -> None:
        key = str(controller.filepath)
        with self._lock:
            users, before = self._limited[key]
            if users == 1:
                del self._limited[key]
                controller.set_num_threads(before)
            else:
                self._limited[key] = (users - 1, before)


_LIBRARIES = _Libraries()


def _modules_of(backend: str) -> tuple[str, ...]:
    from prism_core.kernel.threads import POOLS

    return POOLS.modules(backend)


@contextlib.contextmanager
def _thread_share(backend: str | None, count: int | None) -> Iterator[None]:
    """In the part's thread: its backend limited to ``count`` threads (``None``: untouched)
    while the part runs, and its counts put back afterwards."""
    modules = _modules_of(backend) if backend else ()
    undo: list[Callable[[], None]] = []
    try:
        if count is not None and modules:
            for module in modules:
                spec = _OWN_COUNT.get(module)
                framework = sys.modules.get(module)
                if spec is not None and framework is not None:
                    get, put = (getattr(framework, n) for n in spec)
                    before = int(get())
                    if count < before:
                        put(count)
                        undo.append(functools.partial(put, before))
            for controller, module in _LIBRARIES.controllers(modules):
                if module in _OWN_COUNT:
                    continue  # its own setter did it, for this thread
                if controller.user_api == "openmp":
                    before = int(controller.num_threads)  # this thread's setting
                    if count < before:
                        controller.set_num_threads(count)
                        undo.append(functools.partial(controller.set_num_threads, before))
                else:
                    _LIBRARIES.enter(controller, count)
                    undo.append(functools.partial(_LIBRARIES.leave, controller))
        yield
    finally:
        for action in reversed(undo):
            with contextlib.suppress(Exception):  # restoring must never fail the result
                action()


def _shares(sizes: Sequence[int], on_host: Sequence[bool]) -> list[int | None]:
    """Threads for each part that runs on the host at the same time as another such part: at
    least one each, the rest of the cores in proportion to their sizes; ``None`` for the rest."""
    host = [i for i, (n, h) in enumerate(zip(sizes, on_host, strict=True)) if n > 0 and h]
    out: list[int | None] = [None] * len(sizes)
    if len(host) < 2:
        return out
    spare = max(usable_cpus() - len(host), 0)
    extra = sizes_of(spare, [sizes[i] for i in host]) if spare else [0] * len(host)
    for i, more in zip(host, extra, strict=True):
        out[i] = 1 + more
    return out


class _Worker:
    """A thread that runs one part at a time, kept for the next split while idle."""

    def __init__(self, workers: _Workers, number: int) -> None:
        self._tasks: queue.SimpleQueue[tuple[Future[Any], Callable[[], Any]] | None] = (
            queue.SimpleQueue()
        )
        self._workers = workers
        self.thread = threading.Thread(target=self._loop, name=f"prism-split-{number}", daemon=True)
        self.thread.start()

    def submit(self, fn: Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        self._tasks.put((future, fn))
        return future

    def stop(self) -> None:
        self._tasks.put(None)

    def _loop(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn = task
            if future.set_running_or_notify_cancel():
                try:
                    result = fn()
                except BaseException as exc:  # the caller gets it, with the part named
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del task, future, fn  # no reference to the part's arrays while idle
            if not self._workers.release(self):
                return


class _Workers:
    """Threads for the parts of splits: each part gets a thread of its own (an idle one, or a
    new one), so that the parts of one split always run at the same time, and splits started
    from many threads at once never wait for each other's parts (no pool to exhaust).  Idle
    threads are kept, up to :attr:`keep`, for the next split; daemon threads, so that a part
    that never ends cannot keep the interpreter from exiting."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._made = 0

    def take(self, n: int) -> list[_Worker]:
        with self._lock:
            taken = self._idle[-n:] if n else []
            del self._idle[len(self._idle) - len(taken) :]
            missing = n - len(taken)
            numbers = range(self._made, self._made + missing)
            self._made += missing
        return taken + [_Worker(self, k) for k in numbers]

    def release(self, worker: _Worker) -> bool:
        """Keep ``worker`` for the next split; ``False``: enough are idle, let it end."""
        with self._lock:
            if len(self._idle) >= self.keep:
                return False
            self._idle.append(worker)
            return True

    @property
    def idle(self) -> int:
        with self._lock:
            return len(self._idle)


_WORKERS = _Workers(keep=max(8, 4 * usable_cpus()))
