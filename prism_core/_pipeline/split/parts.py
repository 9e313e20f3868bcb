"""Running the parts of a split and joining their results.

Each part is a :class:`_Job`: its target's scope, its slice of the arguments, its share of the
host's threads.  :func:`_run_parts` runs them at once (:mod:`.threads`), each result brought to
the caller's array type, and waits for them all or the first failure; :func:`_gather` joins
them as the layout says.  Each part's record says what ran it and, where the data moved, the
modelled transfer along the path the topology gives.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prism_core._pipeline.split import pinned
from prism_core._pipeline.split.decision import figures_of, model_of
from prism_core._pipeline.split.layout import _is_array, _Layout
from prism_core._pipeline.split.records import PartRecord, SplitError
from prism_core._pipeline.split.targets import SplitTarget, _host_or_none, _plugins
from prism_core._pipeline.split.threads import _WORKERS, _thread_share
from prism_core.kernel.dispatch.ops import Op
from prism_core.kernel.dispatch.scope import SCOPE, Scope
from prism_core.kernel.errors import PrismError, describe_exception

if TYPE_CHECKING:
    from prism_core._transfer_paths import TransferPath
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.description.device import DeviceDescription


@dataclass
class _Job:
    """One part of a split call: what it runs, where, and (filled in by the run) what ran it."""

    index: int
    target: SplitTarget
    scope: Scope
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    start: int
    stop: int
    threads: int | None
    explain: bool
    #: Filled in by the run.
    seconds: float | None = None
    thread: str | None = None
    backend: str | None = None
    device: str | None = None
    kind: str | None = None
    variant: str | None = None
    #: Where the part's data goes (``_execute``) and how many bytes go and come back (the run).
    path: TransferPath | None = None
    moved_bytes: int | None = None
    #: The backend whose pinned memory the part's host arrays go through (``None``: not
    #: staged), and whether they went (the backend may give no buffer).
    pinned: Backend | None = None
    staged: bool = False


def _reference_backend(op: Op) -> str | None:
    ref = next((v for v in op.variants if v.reference), None)
    return ref.backend if ref is not None else None


def _decide(op: Op, job: _Job) -> None:
    """Which backend, variant and device run the job (explain, in the job's scope)."""
    from prism_core.kernel.dispatch.explain import explain

    decision = explain(op, *job.args, **job.kwargs)
    job.variant = decision.executed
    job.device = decision.chosen_device or job.target.device
    if decision.simulated:
        job.backend = _reference_backend(op)
    else:
        job.backend = decision.chosen_backend
    if job.device is not None and job.target.description is not None:
        job.kind = job.target.description.kind
    elif job.device is not None:
        from prism_core.kernel.devices import default_library

        with contextlib.suppress(Exception):
            job.kind = default_library().get(job.device).kind


def _to_home(value: Any, home: Backend, reference: Backend | None) -> Any:
    """``value`` (a part's result) as ``home``'s arrays: through the backend that owns it,
    to NumPy by ``to_numpy``, else by DLPack (``from_dlpack``)."""
    if isinstance(value, tuple):
        items = [_to_home(v, home, reference) for v in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    owner = _plugins().owner(value)
    if owner is None:
        return value
    owner.synchronize(value)  # the part's time is its work's, also on a device that runs async
    if owner is home:
        return value
    if home is reference:
        out = owner.to_numpy(value)
        return out[()] if getattr(out, "ndim", 1) == 0 else out  # NumPy gives 0-d as scalars
    return home.from_dlpack(value)


def _run_job(op: Op, job: _Job, home: Backend, reference: Backend | None) -> Any:
    """Run one part in its scope (this is the part's thread, in a copy of the caller's
    context), its result brought to the caller's array type."""
    SCOPE.set(job.scope)
    job.thread = threading.current_thread().name
    if job.explain or (
        job.threads is not None and job.target.backend is None and not job.target.simulated
    ):
        _decide(op, job)  # for the record, or to know which backend's threads to limit
    else:
        job.backend = _reference_backend(op) if job.target.simulated else job.target.backend
    with _thread_share(job.backend, job.threads):
        started = time.perf_counter()
        args, kwargs = job.args, job.kwargs
        buffers: list[Any] = []
        if job.pinned is not None:  # the copy into pinned memory is part of the part's time
            args, kwargs, buffers = pinned.stage(job.pinned, args, kwargs)
            job.staged = bool(buffers)
        out = op.function(*args, **kwargs)
        out = _to_home(out, home, reference)
        job.seconds = time.perf_counter() - started
    if job.pinned is not None and buffers:  # the result is home and synchronised: they are free
        pinned.unstage(job.pinned, buffers, out)
    if job.path is not None:
        job.moved_bytes = _moved_bytes(job.args, job.kwargs, out)
    return out


def _part_text(op: Op, job: _Job, layout: _Layout | None) -> str:
    where = "whole" if layout is None else f"[{job.start}:{job.stop}] of axis {layout.axis}"
    return f"{op.name}: part {job.index} ({where}) on {job.target.label}"


def _run_parts(
    op: Op,
    jobs: list[_Job],
    home: Backend,
    reference: Backend | None,
    timeout: float | None,
    layout: _Layout,
    ratios: Sequence[float],
) -> list[Any]:
    """Run the parts at once, each in a worker thread of its own and a copy of the caller's
    context.  Without a timeout the first runs in the calling thread instead (which would
    otherwise only wait: one hand-over fewer); with one, the caller only waits, so that it can
    stop waiting at the deadline (a thread cannot be interrupted)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    own = jobs[:1] if timeout is None else []
    futures = [
        worker.submit(
            functools.partial(contextvars.copy_context().run, _run_job, op, job, home, reference)
        )
        for worker, job in zip(_WORKERS.take(len(jobs) - len(own)), jobs[len(own) :], strict=True)
    ]
    if own:
        mine: Future[Any] = Future()  # the caller's part, failed or not, waited for as the others
        try:
            mine.set_result(contextvars.copy_context().run(_run_job, op, own[0], home, reference))
        except Exception as exc:
            mine.set_exception(exc)
        futures.insert(0, mine)
    return _wait(op, jobs, futures, deadline, timeout, layout, ratios)


def _whole_within(op: Op, job: _Job, run: Callable[[], Any], timeout: float) -> Any:
    """``run()`` (a call run whole) in a worker thread, waited for ``timeout`` seconds at most:
    its result or its own error, else :class:`SplitError`."""
    (worker,) = _WORKERS.take(1)
    future = worker.submit(functools.partial(contextvars.copy_context().run, run))
    if not wait([future], timeout=timeout).done:
        future.cancel()
        raise SplitError(
            f"{op.name}: part 0 on {job.target.label} did not finish within timeout={timeout:g} "
            "s; the result is discarded (the call runs on to its end in its thread: native code "
            "cannot be interrupted)",
            _part_record(job, None, 1.0),
        )
    return future.result()


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(deadline - time.monotonic(), 0.0)


def _wait(
    op: Op,
    jobs: list[_Job],
    futures: list[Future[Any]],
    deadline: float | None,
    timeout: float | None,
    layout: _Layout,
    ratios: Sequence[float],
) -> list[Any]:
    """The parts' results in order, or :class:`SplitError`: for the first part that failed (by
    index), or for the parts not finished by ``deadline`` (``timeout`` seconds after the
    start).  Parts not started are cancelled; parts running are waited for (within the
    deadline), so that nothing of the call runs on behind a failure."""
    done, pending = wait(futures, timeout=_left(deadline), return_when=FIRST_EXCEPTION)
    failed = [
        (job, fut.exception())
        for job, fut in zip(jobs, futures, strict=True)
        if fut in done and fut.exception() is not None
    ]
    if not failed and not pending:
        return [f.result() for f in futures]
    for fut in pending:
        fut.cancel()
    if not failed:  # the deadline passed
        late = [j for j, f in zip(jobs, futures, strict=True) if f in pending]
        running = [j for j, f in zip(jobs, futures, strict=True) if f in pending and f.running()]
        first = late[0]
        names = ", ".join(f"part {j.index} on {j.target.label}" for j in late)
        how = (
            "the result is discarded (the parts running run on to their end in their threads: "
            "native code cannot be interrupted)"
            if running
            else "the parts not started were cancelled"
        )
        raise SplitError(
            f"{op.name}: {names} did not finish within timeout={timeout:g} s; {how}",
            _part_record(first, layout, ratios[first.index]),
        )
    still = [f for f in pending if not f.cancelled()]
    if still:
        wait(still, timeout=_left(deadline))
    failed = [
        (job, fut.exception())
        for job, fut in zip(jobs, futures, strict=True)
        if fut.done() and not fut.cancelled() and fut.exception() is not None
    ]
    job, exc = failed[0]
    assert exc is not None
    others = "".join(
        f"; part {j.index} on {j.target.label} failed too ({type(e).__name__}: {e})"
        for j, e in failed[1:]
    )
    cancelled = sum(f.cancelled() for f in futures)
    raise SplitError(
        f"{_part_text(op, job, layout)} failed: {describe_exception(exc)}{others}"
        + (f" ({cancelled} part(s) not started were cancelled)" if cancelled else ""),
        _part_record(job, layout, ratios[job.index]),
    ) from exc


def _part_record(job: _Job, layout: _Layout | None, ratio: float) -> PartRecord:
    transfer_s = transfer = None
    if job.path is not None and job.path.hops:
        # The path also of a part that did not run (a declined split's): where its data
        # would have gone, which is often why it was declined.
        transfer = job.path.describe()
        if job.moved_bytes is not None:
            transfer_s = job.path.seconds(job.moved_bytes)
    return PartRecord(
        index=job.index,
        target=job.target.label,
        backend=job.backend or job.target.backend,
        device=job.device or job.target.device,
        kind=job.kind or (job.target.description.kind if job.target.description else None),
        simulated=job.target.simulated,
        start=job.start,
        stop=job.stop,
        ratio=ratio,
        seconds=job.seconds,
        thread=job.thread,
        threads=job.threads,
        variant=job.variant,
        transfer_s=transfer_s,
        transfer=transfer,
        pinned=job.staged,
    )


def _moved_bytes(args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> int:
    """The bytes a part's arrays (its arguments, its result) amount to: what moves to its
    target and back when the target computes elsewhere than the data is."""
    from prism_core.kernel.dispatch.movement import nbytes

    total = 0
    for value in (*args, *kwargs.values(), *(out if isinstance(out, tuple) else (out,))):
        for item in value if isinstance(value, (list, tuple)) else (value,):
            if _is_array(item):
                total += nbytes(item) or 0
    return total


def _data_source(
    args: tuple[Any, ...], kwargs: dict[str, Any], caller: Scope
) -> DeviceDescription | None:
    """Where the call's arrays are: ``None`` for host memory, or the accelerator of the
    caller's scope when an array argument is in device memory (then it is that device's)."""
    from prism_core.kernel.dispatch.movement import _in_host_memory

    device = caller.device
    if device is None or device.kind in (None, "cpu"):
        return None
    for value in (*args, *kwargs.values()):
        if _is_array(value) and not _in_host_memory(value):
            return device
    return None


def _path_to(source: DeviceDescription | None, target: SplitTarget) -> TransferPath | None:
    """The path of a part's data from ``source`` to ``target``'s device; ``None`` when the
    target names no device (a backend, on the device it chooses) or a link on the path is not
    described."""
    from prism_core._transfer_paths import transfer_path

    if target.description is None:
        return None
    return transfer_path(source, target.description)


def _gather(op: Op, layout: _Layout, results: list[Any], sizes: list[int], base: Scope) -> Any:
    """The parts' results joined, in order, in an automatic scope (the data stays in the
    caller's array type)."""
    from prism_core.kernel.dispatch.ops import get_op

    token = SCOPE.set(base.replace(device=None, simulated=False, backend=None))
    try:
        if len(results) == 1:
            return results[0]
        if layout.gather == "concat":
            concat = get_op("concat").function

            def join(items: list[Any]) -> Any:
                first = items[0]
                if isinstance(first, tuple):
                    joined = [join([r[k] for r in items]) for k in range(len(first))]
                    return type(first)(*joined) if hasattr(first, "_fields") else tuple(joined)
                return concat(list(items), axis=layout.out_axis)

            return join(results)
        if layout.gather == "add":
            out = results[0]
            for r in results[1:]:
                out = out + r
            return out
        if layout.gather == "mean":
            total = sum(sizes)
            out = results[0] * (sizes[0] / total)
            for r, n in zip(results[1:], sizes[1:], strict=True):
                out = out + r * (n / total)
            return out
        pick = get_op(layout.gather).function  # maximum, minimum
        out = results[0]
        for r in results[1:]:
            out = pick(out, r)
        return out
    finally:
        SCOPE.reset(token)


def _home(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Backend, Backend | None]:
    ps = _plugins()
    reference = ps.backends.get("numpy")
    for value in (*args, *kwargs.values()):
        if _is_array(value):
            owner = ps.owner(value)
            if owner is not None:
                return owner, reference
    if reference is None:
        raise PrismError(
            "the reference backend (numpy) is not loaded: a split has nowhere to gather"
        )
    return reference, reference


def _pinned_for(
    op: Op, job: _Job, source: DeviceDescription | None, known: str | None
) -> Backend | None:
    """The backend whose pinned memory ``job``'s host arrays should go through, or ``None``:
    only for a part bound for a GPU (a device present here, not simulated) from host memory,
    whose backend offers pinned memory, where the model predicts that staging pays for the
    part's size (``pinned.staging_pays``).  ``known``: the backend ``"auto"`` found."""
    target, desc = job.target, job.target.description
    if source is not None or target.simulated or desc is None or desc.kind == "cpu":
        return None
    in_bytes = pinned.host_bytes(job.args, job.kwargs)
    if not in_bytes:
        return None
    name = target.backend or known
    if name is None:
        from prism_core.kernel.dispatch.explain import explain

        def ask() -> str | None:
            SCOPE.set(job.scope)
            return explain(op, *job.args, **job.kwargs).chosen_backend

        name = contextvars.copy_context().run(ask)
    backend = _plugins().backends.get(name) if name is not None else None
    if backend is None or not pinned.offers_pinned(backend):
        return None
    from prism_core._tuning.tuning_records import records

    model = model_of(records())
    host = figures_of(model, _host_or_none())
    pays = pinned.staging_pays(backend, figures_of(model, desc), host, in_bytes)
    return backend if pays else None
