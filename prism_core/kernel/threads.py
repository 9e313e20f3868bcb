"""Thread pools of several backends in one process: the idle pools kept from competing.

Every CPU framework's pool busy-waits after a parallel call, and while one spins, the next
library's threads wait for a core at every barrier.  When dispatch enters a backend other than
the one it entered last (:func:`entering`), :class:`ThreadPools` releases the pools of the other
backends' libraries with each runtime's own call; it never changes thread counts nor imports a
framework.  ``PRISM_THREADS=off`` turns it off.  Details and measurements: docs/backends.md,
"Several backends in one process".
"""

from __future__ import annotations

import ctypes
import itertools
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from types import MappingProxyType
from typing import Protocol

from prism_core.kernel.config import threads_enabled
from prism_core.kernel.errors import PrismWarning, describe_exception

__all__ = [
    "DEFAULT_MODULES",
    "POOLS",
    "Pool",
    "PoolRecord",
    "ThreadPools",
    "enabled",
    "entering",
    "pools",
]

#: The top-level modules whose bundled native libraries each known backend computes with.
DEFAULT_MODULES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"numpy": ("numpy",), "scipy": ("scipy",), "torch": ("torch",), "pytorch": ("torch",)}
)

#: ``omp_pause_soft`` of ``omp_pause_resource_t`` (OpenMP 5.0): threads released, state kept.
_OMP_PAUSE_SOFT = 1


@dataclass(frozen=True)
class PoolRecord:
    """One native thread pool loaded in this process and what the coordinator did with it.

    ``module`` is the top-level module the library belongs to (``None``: never released);
    ``release`` names the call that releases it, or is empty with ``why`` saying why not.
    ``released`` counts the releases, ``skipped`` those refused (``why`` then holds the last
    reason), ``seconds`` the time spent in release calls.
    """

    filepath: str
    internal_api: str
    user_api: str
    module: str | None
    release: str
    why: str = ""
    released: int = 0
    skipped: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, object]:
        return {**asdict(self), "seconds": round(self.seconds, 6)}


@dataclass
class Pool:
    """A pool the coordinator may release: its record, the call and whether it needs the check
    that no other Python thread is inside the library (``exclusive``)."""

    record: PoolRecord
    call: Callable[[], int] | None = None
    exclusive: bool = False


class _Controller(Protocol):
    """What is read of a threadpoolctl library controller (the others by ``getattr``)."""

    filepath: str
    version: str | None

    def info(self) -> dict[str, object]: ...


def _release_call(
    dynlib: object, name: str, prototype: Callable[[int], Callable[..., int]], *args: int
) -> Callable[[], int] | None:
    """The library's function ``name`` of type ``prototype``, as a call of ``args`` giving its
    status; ``None`` where the library has no such function."""
    try:
        symbol = getattr(dynlib, name)
    except (AttributeError, OSError):
        return None
    address = ctypes.cast(symbol, ctypes.c_void_p).value
    if not address:
        return None
    function = prototype(address)
    return lambda: int(function(*args))


def module_roots(modules: Iterable[str]) -> list[tuple[str, str]]:
    """``(root directory + separator, module)`` for each package already imported."""
    roots: list[tuple[str, str]] = []
    for name in modules:
        module = sys.modules.get(name)
        file = getattr(module, "__file__", None)
        if not file or not hasattr(module, "__path__"):
            continue  # only packages: a plain module's directory is everyone's
        package = os.path.dirname(os.path.realpath(file))
        roots.append((package + os.sep, name))
        roots.append((package + ".libs" + os.sep, name))
    # The longest root first: a library in ``torch/lib`` is torch's even if a module's root
    # were a parent of it.
    roots.sort(key=lambda r: len(r[0]), reverse=True)
    return roots


def owner_of(filepath: str, roots: Sequence[tuple[str, str]]) -> str | None:
    real = os.path.realpath(filepath)
    for root, name in roots:
        if real.startswith(root):
            return name
    return None


def _version(text: object) -> tuple[int, ...]:
    return tuple(map(int, itertools.takewhile(str.isdigit, str(text or "").split(".")[:3])))


def describe(controller: _Controller, module: str | None) -> Pool:
    """A :class:`Pool` for one threadpoolctl library controller."""
    internal = str(getattr(controller, "internal_api", ""))
    user = str(getattr(controller, "user_api", ""))
    record = PoolRecord(str(controller.filepath), internal, user, module, "")
    if module is None:
        why = "no backend's module holds this library (it may be shared): left alone"
        return Pool(replace(record, why=why))
    dynlib = getattr(controller, "dynlib", None)
    if user == "openmp":
        prototype = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int)
        call = _release_call(dynlib, "omp_pause_resource_all", prototype, _OMP_PAUSE_SOFT)
        if call is None:
            return Pool(replace(record, why="no omp_pause_resource_all (before OpenMP 5.0)"))
        return Pool(replace(record, release="omp_pause_resource_all"), call)
    if internal == "openblas":
        layer = getattr(controller, "threading_layer", "")
        if layer != "pthreads":
            why = f"threads of OpenBLAS's {layer or 'unknown'} layer: released with that runtime"
            return Pool(replace(record, why=why))
        # The pool must come back by itself at the next threaded call (``exec_blas`` rebuilds it,
        # as after a fork, since before 0.3.0); checked on Linux with 0.3.30 and 0.3.31.
        version = _version(getattr(controller, "version", None))
        if version < (0, 3, 0):
            why = f"OpenBLAS {controller.version or '(version unknown)'}: 0.3.0 or later needed"
            return Pool(replace(record, why=why))
        if not sys.platform.startswith("linux"):
            return Pool(replace(record, why="OpenBLAS pools are released on Linux only"))
        # PYFUNCTYPE keeps the GIL for the whole call: no Python thread can start a call into the
        # library while its pool is shut down (see others_busy for the threads already inside).
        call = _release_call(dynlib, "blas_thread_shutdown_", ctypes.PYFUNCTYPE(ctypes.c_int))
        if call is None:
            return Pool(replace(record, why="no blas_thread_shutdown_ in this OpenBLAS"))
        return Pool(replace(record, release="blas_thread_shutdown_"), call, exclusive=True)
    return Pool(replace(record, why=f"no release call known for {internal or user}"))


def controllers() -> list[_Controller]:
    """threadpoolctl's controllers of the native thread pools loaded now; empty without
    threadpoolctl, or where it fails."""
    try:
        import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # threadpoolctl warns about odd OpenMP mixes
            return list(threadpoolctl.ThreadpoolController().lib_controllers)
    except Exception:  # ImportError: not installed
        return []


def scan(modules: Iterable[str]) -> list[Pool]:
    """The pools of the libraries loaded now, each with its module (threadpoolctl)."""
    roots = module_roots(modules)
    return [describe(c, owner_of(str(c.filepath), roots)) for c in controllers()]


def _state(native_id: int) -> str:
    try:
        with open(f"/proc/self/task/{native_id}/stat", "rb") as f:
            text = f.read()
    except OSError:
        return "?"
    # The command name is in parentheses and may hold spaces: the state follows the last ')'.
    return text[text.rfind(b")") + 2 : text.rfind(b")") + 3].decode("ascii", "replace")


def others_busy() -> str:
    """Why another Python thread may be inside a native library now; ``""`` when none can: no
    other Python thread exists, or (Linux) every other one is blocked in the kernel (not ``R``
    in ``/proc``).  A thread inside a BLAS call is running (it spins while its workers compute);
    one waiting for the GIL, a lock or I/O cannot start a BLAS call while the caller holds the
    GIL."""
    me = threading.get_ident()
    others = [t for t in threading.enumerate() if t.ident != me]
    if not others:
        return ""
    if not sys.platform.startswith("linux"):
        return f"{len(others)} other Python thread(s), and no /proc to see what they do"
    for t in others:
        native = getattr(t, "native_id", None)
        if native is None:
            return f"thread {t.name!r} has no native id"
        state = _state(native)
        if state not in ("S", "D", "T", "t", "I"):
            return f"thread {t.name!r} is running (state {state!r}): it may be inside the library"
    return ""


def _setting() -> bool:
    try:
        return threads_enabled()
    except ValueError as exc:  # a typo in a variable must not break every call: say it, go on
        warnings.warn(PrismWarning(f"{exc}; using on"), stacklevel=3)
        return True


class ThreadPools:
    """Releases the thread pools of the backends not running now (see the module docstring).

    ``modules`` maps each backend name to the top-level modules whose libraries it computes
    with (default :data:`DEFAULT_MODULES`).  ``enabled`` defaults to ``PRISM_THREADS``;
    ``scanner`` (tests) replaces :func:`scan`; ``busy`` (tests) replaces :func:`others_busy`.
    """

    __slots__ = (
        "_busy",
        "_lock",
        "_modules",
        "_pools",
        "_scanned",
        "_scanner",
        "enabled",
        "last",
        "switches",
    )

    def __init__(
        self,
        modules: Mapping[str, Sequence[str]] | None = None,
        *,
        enabled: bool | None = None,
        scanner: Callable[[Iterable[str]], list[Pool]] | None = None,
        busy: Callable[[], str] | None = None,
    ) -> None:
        source = DEFAULT_MODULES if modules is None else modules
        self._modules: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in source.items()}
        self.enabled: bool = _setting() if enabled is None else enabled
        #: The backend entered last (``None`` before the first); read without the lock.
        self.last: str | None = None
        #: How many times a different backend was entered.
        self.switches = 0
        self._scanner = scan if scanner is None else scanner
        self._busy = others_busy if busy is None else busy
        self._lock = threading.Lock()
        self._pools: list[Pool] = []
        self._scanned: tuple[tuple[str, ...], int, float] | None = None

    # -- the hot path -------------------------------------------------------------------------
    def entering(self, backend: str) -> None:
        """Dispatch is about to run a variant of ``backend``: one comparison when it ran last."""
        if backend != self.last:
            self.switch(backend)

    # -- a different backend ----------------------------------------------------------------
    def switch(self, backend: str) -> None:
        """Release the pools of every module that is not ``backend``'s (thread-safe)."""
        with self._lock:
            if backend == self.last:
                return  # another thread switched meanwhile
            self.switches += 1
            if self.enabled:
                self._release_others(backend)
            self.last = backend

    def declare(self, backend: str, modules: Sequence[str]) -> None:
        """``backend`` computes with the native libraries of ``modules`` (top-level names)."""
        with self._lock:
            self._modules[backend] = tuple(modules)
            self._scanned = None

    def adopt(self, backend: str, modules: Sequence[str]) -> None:
        """Dispatch learnt that ``backend`` declares ``modules`` (``Backend.thread_modules``):
        record them unless empty or already known (cheap: called once per plan)."""
        wanted = tuple(modules)
        if wanted and self._modules.get(backend) != wanted:
            self.declare(backend, wanted)

    def modules(self, backend: str) -> tuple[str, ...]:
        return self._modules.get(backend, ())

    def pools(self) -> tuple[PoolRecord, ...]:
        """The pools seen at the last switch, with what was done to each."""
        with self._lock:
            return tuple(p.record for p in self._pools)

    # -- under the lock -----------------------------------------------------------------------
    def _present(self) -> tuple[str, ...]:
        known = {m for ms in self._modules.values() for m in ms}
        return tuple(sorted(m for m in known if m in sys.modules))

    def _current(self) -> list[Pool]:
        present = self._present()
        if len(present) < 2:
            return []  # one framework loaded: nothing can compete with it
        # Scan again (a few ms) when a framework was imported since, or when one still has no
        # pool and modules were imported since (``scipy.linalg`` loads SciPy's OpenBLAS after
        # ``scipy``), at most once a second for the latter.
        size = len(sys.modules)
        now = time.monotonic()
        if self._scanned is not None:
            names, seen_size, when = self._scanned
            if names == present:
                owned = {p.record.module for p in self._pools}
                if all(m in owned for m in present) or size == seen_size or now - when < 1.0:
                    return self._pools
        old = {p.record.filepath: p.record for p in self._pools}
        pools = self._scanner(present)
        for p in pools:  # keep the counts of pools seen before
            before = old.get(p.record.filepath)
            if before is not None:
                p.record = replace(
                    p.record,
                    released=before.released,
                    skipped=before.skipped,
                    seconds=before.seconds,
                    why=p.record.why or before.why,
                )
        self._pools = pools
        self._scanned = (present, size, now)
        return pools

    def _release_others(self, backend: str) -> None:
        mine = set(self._modules.get(backend, ()))
        busy: str | None = None
        for pool in self._current():
            module = pool.record.module
            if module is None or module in mine or pool.call is None:
                continue
            if pool.exclusive:
                if busy is None:
                    busy = self._busy()
                if busy:
                    pool.record = replace(pool.record, skipped=pool.record.skipped + 1, why=busy)
                    continue
            start = time.perf_counter()
            try:
                status = pool.call()
            except Exception as exc:  # a failing release must never fail the user's call
                status = -1
                why = f"{pool.record.release} raised {describe_exception(exc)}"
            else:
                why = "" if status == 0 else f"{pool.record.release} returned {status}"
            spent = time.perf_counter() - start
            pool.record = replace(
                pool.record,
                released=pool.record.released + (status == 0),
                skipped=pool.record.skipped + (status != 0),
                seconds=pool.record.seconds + spent,
                why=why or pool.record.why,
            )


#: The process's coordinator, which dispatch calls.
POOLS = ThreadPools()


#: Dispatch is about to run a variant of ``backend``: release the other backends' pools if a
#: different backend ran last (:meth:`ThreadPools.entering`, one comparison when it is the same).
entering = POOLS.entering


def enabled() -> bool:
    """Whether the coordinator acts (``PRISM_THREADS``, or ``POOLS.enabled`` set since)."""
    return POOLS.enabled


def pools() -> tuple[PoolRecord, ...]:
    """The pools of this process's coordinator and what it did with each."""
    return POOLS.pools()
