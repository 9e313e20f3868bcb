"""The client side: :class:`PrismClient` routes tasks by capability over a Dask ``Client``.

``PrismClient`` wraps a plain ``distributed.Client`` (yours, or one :func:`connect` makes): a
task that asks for a capability goes only to the workers that have it, and one that no worker
can run fails at submission with every worker's reasons; everything else is the Dask client's.
It routes from a cached view of the workers' descriptions, read again when the cluster
announces a change, and leaves placement among the qualifying workers to Dask.
docs/distributed.md: "Routing", "Workers joining and leaving", "Placement, and what Prism leaves
to Dask".
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import math
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from distributed import Client, Future

from prism_core.distributed.advert import WorkerDescription
from prism_core.distributed.routing import ClusterView, NoWorkerError, Route, WorkerScope, route
from prism_core.distributed.scheduler import PrismSchedulerPlugin
from prism_core.distributed.task import PrismCall
from prism_core.distributed.worker import (
    PLUGIN_NAME,
    TOPIC,
    PrismWorkerPlugin,
    worker_description,
)
from prism_core.kernel.description.requirements import Requirement
from prism_core.kernel.errors import PrismError, RequirementError, describe_exception

if TYPE_CHECKING:
    from prism_core.kernel.dispatch.registry import Op

__all__ = ["PrismClient", "connect"]

logger = logging.getLogger("prism_core")

#: How often the view is read where the scheduler does not announce workers leaving (s).
_UNANNOUNCED_REFRESH = 2.0
#: Dask's own arguments of ``submit`` and ``map`` that a routed task's route sets.
_ROUTED = ("workers", "allow_other_workers")


def _describe(value: Any) -> str:
    return f"{value!r} ({type(value).__name__})"


def _seconds(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{name} is a number of seconds, zero or more; got {_describe(value)}")
    return float(value)


def _why_unread(exc: BaseException) -> str:
    """Why a worker's description could not be read, as a reason a person can act on."""
    text = describe_exception(exc)
    if isinstance(exc, ImportError) and "prism_core" in str(exc):
        return (
            f"cannot import Prism there ({text}); install prism-core[distributed] in the "
            "workers' environment"
        )
    return f"its description could not be read ({text})"


# One event handler per Dask client (Dask keeps one per topic), telling every PrismClient that
# wraps it.
_listeners: weakref.WeakKeyDictionary[Client, weakref.WeakSet[PrismClient]] = (
    weakref.WeakKeyDictionary()
)
_listeners_lock = threading.Lock()


def _subscribe(prism_client: PrismClient) -> None:
    client = prism_client.client
    with _listeners_lock:
        members = _listeners.get(client)
        if members is None:
            members = _listeners[client] = weakref.WeakSet()
            ref = weakref.ref(client)

            def handler(event: Any) -> None:
                owner = ref()
                for member in list(_listeners.get(owner, ())) if owner is not None else ():
                    member._stale = True

            untyped: Any = client  # distributed leaves these methods unannotated
            untyped.subscribe_topic(TOPIC, handler)
        members.add(prism_client)


def _unsubscribe(prism_client: PrismClient) -> None:
    client = prism_client.client
    with _listeners_lock:
        members = _listeners.get(client)
        if members is None:
            return
        members.discard(prism_client)
        if not members:
            del _listeners[client]
            if client.status not in ("closing", "closed"):
                # The connection may have gone away meanwhile: nothing is left to undo then.
                untyped: Any = client
                with contextlib.suppress(Exception):
                    untyped.unsubscribe_topic(TOPIC)


class _Routed(NamedTuple):
    """A route with what submitting by it takes, computed once per cached route."""

    route: Route
    #: The PrismCall's placement: one for every worker, or one per worker where they differ.
    placement: WorkerScope | dict[str, WorkerScope] | None
    #: Dask's arguments: ``resources=`` (the capability the qualifying workers share) or
    #: ``workers=``/``allow_other_workers=``, or none where every worker qualifies in
    #: automatic mode (a plain Dask task).
    placed: dict[str, Any]

    @classmethod
    def of(cls, found: Route, view: ClusterView) -> _Routed:
        uniform = found.uniform
        placement = uniform if uniform is not None else dict(found.accepted)
        capabilities = {view.workers[a].capability for a in found.accepted if a in view.workers}
        placed: dict[str, Any]
        if found.everywhere:
            placed = {}
        elif uniform is not None and len(capabilities) == 1 and None not in capabilities:
            placed = {"resources": {capabilities.pop(): 1.0}}
        else:
            placed = {"workers": list(found.workers), "allow_other_workers": False}
        return cls(found, placement, placed)


def _arguments(placed: Mapping[str, Any], kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """Dask's arguments of a routed task: its route's and the caller's, ``resources=`` of both."""
    if "resources" in placed and kwargs.get("resources"):
        return {**kwargs, "resources": {**kwargs["resources"], **placed["resources"]}}
    return {**placed, **kwargs}


def _register_scheduler_plugin(client: Client) -> bool:
    """Register :class:`PrismSchedulerPlugin` (kept where one is); whether it is there."""
    try:
        client.register_plugin(PrismSchedulerPlugin(), name=PLUGIN_NAME)
    except Exception as exc:  # Prism is not importable on the scheduler: routing still works
        logger.info(
            "the scheduler at %s does not announce workers leaving (%s: %s); a worker that "
            "dies is noticed by the next read of the cluster (refresh_interval)",
            _scheduler_address(client),
            type(exc).__name__,
            exc,
        )
        return False
    return True


class PrismClient:
    """Prism's helpers over a Dask ``Client``: capability routing, fail-fast, ops.

    :param client: a synchronous ``distributed.Client``.  Methods Prism does not define are
        the client's (``prism_client.gather(futures)``).
    :param simulate: passed to :class:`PrismWorkerPlugin`: device types the workers advertise
        as simulated (a list for all, or a mapping of worker name to a list).  ``None``: each
        worker's ``PRISM_SIMULATE_DEVICES``, and an already registered plugin is kept.
    :param register: register the worker plugin (default).  ``False`` when the workers load it
        themselves (``--preload prism_core.distributed.preload``).
    :param advert_timeout: how long a task that no advertised worker can run waits for live
        workers that have not advertised yet, before it fails (seconds).
    :param refresh_interval: the longest the client routes by a view of the cluster before it
        reads the workers' descriptions again, in seconds.  ``None`` (default): only when the
        cluster announces a change, where the scheduler announces workers leaving; else 2 s.
    """

    __module__ = "prism_core.distributed"

    def __init__(
        self,
        client: Client,
        *,
        simulate: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
        register: bool = True,
        advert_timeout: float = 10.0,
        refresh_interval: float | None = None,
    ) -> None:
        if not isinstance(client, Client):
            raise TypeError(
                "PrismClient(client): client must be a distributed.Client; got "
                f"{_describe(client)}; prism_core.distributed.connect(address) makes one"
            )
        if client.asynchronous:
            raise TypeError(
                "PrismClient needs a synchronous distributed.Client (asynchronous=False): its "
                "methods block while they read the cluster"
            )
        self.client = client
        #: The cluster :func:`connect` started for this client, closed with it; else ``None``.
        self.cluster: Any = None
        self._owns_client = False
        self.advert_timeout = _seconds(advert_timeout, "advert_timeout")
        interval = (
            None if refresh_interval is None else _seconds(refresh_interval, "refresh_interval")
        )
        self._lock = threading.RLock()
        self._view: ClusterView | None = None
        self._read_at = 0.0
        self._stale = False
        self._routes: dict[Any, _Routed] = {}
        self._requirements: dict[str, Requirement] = {}
        self._ops: dict[str, tuple[int, Op]] = {}
        self._closed = False
        plugin = PrismWorkerPlugin(simulate)  # checks `simulate` before anything happens
        _subscribe(self)
        #: Whether the scheduler announces workers leaving (PrismSchedulerPlugin is there).
        self.announces_departures = _register_scheduler_plugin(client)
        #: Seconds after which the view is read again even without an announcement.
        self.refresh_interval = (
            interval
            if interval is not None
            else (math.inf if self.announces_departures else _UNANNOUNCED_REFRESH)
        )
        if register:
            try:
                client.register_plugin(plugin, name=PLUGIN_NAME)
            except BaseException:
                _unsubscribe(self)
                raise

    # -- the view of the cluster --------------------------------------------------------------

    def _read(self) -> ClusterView:
        replies = self.client.run(worker_description, on_error="return")
        workers: dict[str, WorkerDescription] = {}
        problems: dict[str, str] = {}
        pending: set[str] = set()
        for address, reply in replies.items():
            if isinstance(reply, BaseException):
                problems[address] = _why_unread(reply)
            elif reply is None:
                problems[address] = (
                    "has not advertised: Prism's worker plugin is not set up there (yet)"
                )
                pending.add(address)
            else:
                try:
                    desc = WorkerDescription.from_dict(reply)
                except (PrismError, KeyError, TypeError, ValueError) as exc:
                    problems[address] = f"advertises a description this client cannot read: {exc}"
                    continue
                # The scheduler's name for the worker is what `workers=` takes.
                workers[address] = dataclasses.replace(desc, address=address)
        return ClusterView(
            scheduler=_scheduler_address(self.client),
            workers=workers,
            problems=problems,
            pending=frozenset(pending),
        )

    def view(self, refresh: bool = False) -> ClusterView:
        """What the client knows of the cluster: each worker's description, and why the live
        workers without one have none.  Read again when ``refresh``, when a worker announced a
        change, or when older than ``refresh_interval``."""
        self._check_open()
        with self._lock:
            now = time.monotonic()
            if (
                refresh
                or self._stale
                or self._view is None
                or now - self._read_at > self.refresh_interval
            ):
                self._stale = False  # before reading: an announcement meanwhile marks it again
                self._view = self._read()
                self._read_at = now
                self._routes.clear()
            return self._view

    def refresh(self) -> ClusterView:
        """Read the workers' descriptions now."""
        return self.view(refresh=True)

    def workers(self, refresh: bool = False) -> dict[str, WorkerDescription]:
        """What each worker advertises, by address (live workers that advertised)."""
        return dict(self.view(refresh).workers)

    # -- routing ------------------------------------------------------------------------------

    def _requirement(self, requires: Any) -> tuple[str | None, Requirement | None]:
        """The requirement of ``requires=`` and the text it is cached by (``None``, ``None``
        for no requirement); parsed once per distinct mapping."""
        if requires is None:
            return None, None
        if isinstance(requires, Requirement):
            mapping: Mapping[str, Any] = requires.mapping
        elif isinstance(requires, Mapping):
            mapping = requires
        else:
            raise RequirementError(
                "requires= takes a requirement mapping such as {'vendor': 'nvidia', "
                f"'tensor_cores': '>=4'}} (or None); got {_describe(requires)}"
            )
        if not mapping:
            return None, None
        try:
            key = json.dumps(mapping, sort_keys=True, default=repr)
        except (TypeError, ValueError):  # keys json cannot sort: Requirement says what is wrong
            key = repr(mapping)
        found = self._requirements.get(key)
        if found is None:
            try:
                found = requires if isinstance(requires, Requirement) else Requirement(mapping)
            except RequirementError as exc:
                raise RequirementError(f"requires={dict(mapping)!r}: {exc}") from None
            if len(self._requirements) > 1024:  # requirements built on the fly: bounded
                self._requirements.clear()
            self._requirements[key] = found
        return key, found

    def _op(self, op: Any) -> Op:
        from prism_core.kernel.dispatch.ops import get_op
        from prism_core.kernel.dispatch.registry import Op, generation

        if isinstance(op, Op):
            return op
        inner = getattr(op, "op", None)
        if isinstance(inner, Op):  # the function users call: prism.matmul
            return inner
        if isinstance(op, str):
            # Looked up once per name and dispatch generation (ops declared or reloaded since
            # move it on): run_op is called once per task.
            now = generation()
            cached = self._ops.get(op)
            if cached is not None and cached[0] == now:
                return cached[1]
            found = get_op(op)  # OperationError with close matches
            self._ops[op] = (now, found)
            return found
        raise TypeError(
            "op must be an op name such as 'linalg.svd', an op, or the function users call for "
            f"one (prism.matmul); got {_describe(op)}"
        )

    def _route(
        self,
        requirement: tuple[str | None, Requirement | None],
        op: Op | None,
        dtypes: tuple[str, ...] = (),
    ) -> _Routed:
        """The route of a task with what submitting by it needs; raises :class:`NoWorkerError`
        when no worker can run it.  Cached by (op, requirement text, data types) until the view
        of the cluster changes: routing a task is then one dictionary lookup."""
        key = (None if op is None else op.name, requirement[0], dtypes)
        with self._lock:  # a route is cached only against the view it was computed from
            view = self.view()
            found = self._routes.get(key)
            if found is None:
                found = self._routes[key] = _Routed.of(
                    route(view, requirement[1], op, dtypes), view
                )
        if found.route.ok:
            return found
        return self._settle(key, requirement[1], op, dtypes)

    def _settle(
        self,
        key: Any,
        requirement: Requirement | None,
        op: Op | None,
        dtypes: tuple[str, ...],
    ) -> _Routed:
        """No worker could run the task by the cached view: read the cluster again (a worker
        may have joined), and while live workers have not advertised, wait for them up to
        ``advert_timeout``; then route or fail."""
        view = self.view(refresh=True)
        found = route(view, requirement, op, dtypes)
        start = time.monotonic()
        waited = 0.0
        while not found.ok and view.pending and waited < self.advert_timeout:
            time.sleep(min(0.1, self.advert_timeout - waited))
            view = self.view(refresh=True)
            found = route(view, requirement, op, dtypes)
            waited = time.monotonic() - start
        if not found.ok:
            raise NoWorkerError(found, waited)
        routed = _Routed.of(found, view)
        with self._lock:
            self._routes[key] = routed
        return routed

    def explain(
        self, requires: Mapping[str, Any] | None = None, *, op: Any = None, refresh: bool = False
    ) -> Route:
        """Which workers a task asking for ``requires`` and/or ``op`` would go to, the device
        it would run under on each, and why every other worker would not take it.  Never
        raises for "no worker" (the route says so: ``not route.ok``)."""
        requirement = self._requirement(requires)[1]
        the_op = None if op is None else self._op(op)
        return route(self.view(refresh), requirement, the_op)

    def restrictions(
        self, requires: Mapping[str, Any] | None = None, *, op: Any = None
    ) -> dict[str, Any]:
        """The Dask arguments that place a plain Dask task where ``requires``/``op`` can run:
        ``{"resources": {"prism:capability:...": 1.0}}`` where the workers that can are alike,
        else ``{"workers": [...], "allow_other_workers": False}``, or ``{}`` when every worker
        can.
        For ``client.submit(f, x, **restrictions)``, ``dask.annotate(**restrictions)``;
        such tasks run without Prism's device scope.  Raises :class:`NoWorkerError`."""
        requirement = self._requirement(requires)
        the_op = None if op is None else self._op(op)
        if requirement[1] is None and the_op is None:
            return {}
        return dict(self._route(requirement, the_op).placed)

    @staticmethod
    def _check_dask_arguments(kwargs: Mapping[str, Any], requirement: Any, op: Any) -> None:
        if requirement is None and op is None:
            return
        given = [k for k in _ROUTED if k in kwargs]
        if given:
            raise TypeError(
                f"{', '.join(given)}= cannot be combined with requires= or an op: Prism places "
                "the task on the workers that qualify; drop it, or use the Dask client "
                "directly (prism_client.client.submit) to place a task by hand"
            )

    @staticmethod
    def _call(
        fn: Callable[..., Any] | None, op: Op | None, routed: _Routed | None, report: bool
    ) -> tuple[PrismCall, dict[str, Any]]:
        if routed is None:
            return PrismCall(fn, report=bool(report)), {}
        call = PrismCall(
            fn,
            op=None if op is None else op.name,
            placement=routed.placement,
            report=bool(report),
        )
        return call, routed.placed

    # -- tasks --------------------------------------------------------------------------------

    def submit(
        self,
        fn: Callable[..., Any],
        *args: Any,
        requires: Mapping[str, Any] | None = None,
        report: bool = False,
        **kwargs: Any,
    ) -> Future[Any]:
        """``client.submit(fn, *args, **kwargs)`` on a worker with a device that meets
        ``requires``, where ``fn`` runs under ``prism.device(that device)``.

        Without ``requires`` this is Dask's ``submit``.  ``kwargs`` are Dask's (``key``,
        ``pure``, ``retries``, ``priority``, ``resources``; not ``workers``: Prism places the
        task) and ``fn``'s, as with Dask.  ``report=True``: the future's result is a
        :class:`TaskResult` (the value, the worker, the device, whether it was simulated).
        Raises :class:`NoWorkerError` at once when no worker has such a device.
        """
        if not callable(fn):
            raise TypeError(f"submit(fn, ...): fn must be callable, got {_describe(fn)}")
        requirement = self._requirement(requires)
        self._check_dask_arguments(kwargs, requirement[1], None)
        if requirement[1] is None and not report:
            return self.client.submit(fn, *args, **kwargs)
        found = None if requirement[1] is None else self._route(requirement, None)
        call, placed = self._call(fn, None, found, report)
        return self.client.submit(call, *args, **_arguments(placed, kwargs))

    def map(
        self,
        fn: Callable[..., Any],
        *iterables: Iterable[Any],
        requires: Mapping[str, Any] | None = None,
        report: bool = False,
        **kwargs: Any,
    ) -> list[Future[Any]]:
        """``client.map(fn, *iterables, **kwargs)`` routed as :meth:`submit` routes one task
        (one route for all of them)."""
        if not callable(fn):
            raise TypeError(f"map(fn, ...): fn must be callable, got {_describe(fn)}")
        requirement = self._requirement(requires)
        self._check_dask_arguments(kwargs, requirement[1], None)
        columns = [list(it) for it in iterables]
        if requirement[1] is None and not report:
            return list(self.client.map(fn, *columns, **kwargs))
        found = None if requirement[1] is None else self._route(requirement, None)
        call, placed = self._call(fn, None, found, report)
        return list(self.client.map(call, *columns, **_arguments(placed, kwargs)))

    def _op_route(
        self,
        op: Op,
        requirement: tuple[str | None, Requirement | None],
        args: Sequence[Any],
    ) -> _Routed:
        dtypes: tuple[str, ...] = ()
        if any(v.dtype_support for v in op.variants):
            dtypes = _dtypes(op, args)
        return self._route(requirement, op, dtypes)

    def run_op(
        self,
        op: Any,
        *args: Any,
        requires: Mapping[str, Any] | None = None,
        report: bool = False,
        **kwargs: Any,
    ) -> Future[Any]:
        """Run Prism op ``op`` (``"linalg.svd"``, ``prism.matmul``) on a worker where it can run,
        as ``prism.<op>(*args, **kwargs)`` runs it there.

        Without ``requires``, the workers where some variant of the op can run on a present
        device qualify, and dispatch on the worker chooses as it would anywhere; with
        ``requires``, the workers with a device that meets it (and runs the op), and the op
        runs under that device (a simulated one executes the reference implementation).  The
        op must be declared in the workers' processes too (the builtin ops always are).
        ``kwargs`` are Dask's and the op's, as with :meth:`submit`; ``report`` likewise, with
        the variant that executed.
        """
        the_op = self._op(op)
        requirement = self._requirement(requires)
        self._check_dask_arguments(kwargs, requirement[1], the_op)
        found = self._op_route(the_op, requirement, args)
        call, placed = self._call(None, the_op, found, report)
        return self.client.submit(call, *args, **_arguments(placed, kwargs))

    def map_op(
        self,
        op: Any,
        *iterables: Iterable[Any],
        requires: Mapping[str, Any] | None = None,
        report: bool = False,
        **kwargs: Any,
    ) -> list[Future[Any]]:
        """:meth:`run_op` over ``iterables``, as ``client.map`` (one route for all of them,
        taken for the arguments of the first task)."""
        the_op = self._op(op)
        requirement = self._requirement(requires)
        self._check_dask_arguments(kwargs, requirement[1], the_op)
        columns = [list(it) for it in iterables]
        first = [col[0] for col in columns if col]
        found = self._op_route(the_op, requirement, first)
        call, placed = self._call(None, the_op, found, report)
        return list(self.client.map(call, *columns, **_arguments(placed, kwargs)))

    # -- life ---------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise PrismError("this PrismClient is closed; connect again")

    def close(self) -> None:
        """Stop listening to the workers' announcements, and close the client and the cluster
        if :func:`connect` made them.  A client you passed in stays open."""
        if self._closed:
            return
        self._closed = True
        _unsubscribe(self)
        if self._owns_client:
            untyped: Any = self.client
            untyped.close()
        if self.cluster is not None:
            self.cluster.close()

    def __enter__(self) -> PrismClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        # Client-compatible: what Prism does not define is the Dask client's.
        if name.startswith("__") or name == "client":
            raise AttributeError(name)
        return getattr(self.client, name)

    def __repr__(self) -> str:
        state = "closed" if self._closed else _scheduler_address(self.client)
        return f"<PrismClient {state}>"


def _scheduler_address(client: Client) -> str:
    return str(getattr(client.scheduler, "address", None) or "an unknown scheduler")


def _dtypes(op: Op, args: Sequence[Any]) -> tuple[str, ...]:
    """The device-file names of the data types of a call's array arguments (for variants that
    ask for ``dtype_support``)."""
    from prism_core.kernel.description.dtypes import dtype as to_dtype

    positions = (
        range(len(args)) if op.array_args is None else [i for i in op.array_args if i < len(args)]
    )
    out: list[str] = []
    for i in positions:
        dt = getattr(args[i], "dtype", None)
        if dt is None:
            continue
        try:
            out.append(to_dtype(dt).vocab)
        except (TypeError, ValueError):
            out.append(str(dt))
    return tuple(out)


def _probe(address: str, timeout: Any) -> None:
    """Ask the scheduler at ``address`` who it is, within ``timeout`` (Dask's ``timeout=``
    option, else its connect timeout): ``distributed.Client`` bounds the TCP connection but
    not the handshake after it, and waits forever on a server that accepts and never answers.
    Raises ``TimeoutError`` naming the address; a refused connection is left to the client,
    whose error says so."""
    import asyncio
    import concurrent.futures

    import dask
    from dask.utils import parse_timedelta
    from distributed.comm.core import connect

    open_comm: Any = connect  # distributed leaves it unannotated
    limit = parse_timedelta(timeout or dask.config.get("distributed.comm.timeouts.connect"))

    async def ask() -> None:
        comm = await open_comm(address, timeout=limit)
        try:
            await comm.write({"op": "identity", "reply": True})
            await comm.read()
        finally:
            await comm.close()

    def run() -> None:
        asyncio.run(asyncio.wait_for(ask(), limit))

    # Its own thread and event loop: the caller's thread may be running one (Jupyter).
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="prism-probe") as pool:
        try:
            pool.submit(run).result()
        except (asyncio.TimeoutError, TimeoutError):
            raise TimeoutError(
                f"connect({address!r}): the server accepted the connection but did not answer "
                f"as a Dask scheduler within {limit:g} s (timeout=); is a scheduler listening "
                "there?"
            ) from None
        except OSError:
            pass  # refused or unreachable: distributed.Client says so in its own words


def connect(
    address: Any = None,
    *,
    simulate: Sequence[str] | Mapping[str, Sequence[str]] | None = None,
    advert_timeout: float = 10.0,
    refresh_interval: float | None = None,
    **options: Any,
) -> PrismClient:
    """A :class:`PrismClient` on a Dask cluster.

    :param address: ``None`` (the default): a ``LocalCluster`` on this machine, one process per
        worker, started with ``options`` (``n_workers=2, threads_per_worker=1``...) and closed
        with the client.  A scheduler address (``"tcp://10.0.0.5:8786"``): a new
        ``distributed.Client(address, **options)``, closed with the client.  A cluster object
        (``LocalCluster``, ``SLURMCluster``...): a new client of it (the cluster stays yours).
        A ``distributed.Client``: that client (``options`` not accepted; it stays open).
    :param simulate: device types the workers advertise as simulated (see
        :class:`PrismWorkerPlugin`).

    ``advert_timeout`` and ``refresh_interval``: see :class:`PrismClient`.
    """
    import distributed

    # distributed leaves these constructors unannotated.
    new_cluster: Any = distributed.LocalCluster
    new_client: Any = Client
    cluster = None
    owns_client = True
    if address is None:
        options.setdefault("processes", True)
        cluster = new_cluster(**options)
        try:
            client = new_client(cluster)
        except BaseException:
            cluster.close()
            raise
    elif isinstance(address, Client):
        if options:
            raise TypeError(
                f"connect(client, ...): {', '.join(sorted(options))} cannot apply to a client "
                "that already exists"
            )
        client = address
        owns_client = False
    elif isinstance(address, str) or hasattr(address, "scheduler_address"):
        if isinstance(address, str):
            _probe(address, options.get("timeout"))
        client = new_client(address, **options)
    else:
        raise TypeError(
            "connect(address): address must be None (a LocalCluster here), a scheduler address "
            "such as 'tcp://10.0.0.5:8786', a Dask cluster object or a distributed.Client; "
            f"got {_describe(address)}"
        )
    try:
        prism_client = PrismClient(
            client,
            simulate=simulate,
            advert_timeout=advert_timeout,
            refresh_interval=refresh_interval,
        )
    except BaseException:
        if owns_client:
            untyped: Any = client
            untyped.close()
        if cluster is not None:
            cluster.close()
        raise
    prism_client._owns_client = owns_client
    prism_client.cluster = cluster
    return prism_client
