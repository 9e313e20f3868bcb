"""prism_core.distributed on real Dask clusters.

``cluster`` starts a scheduler and two workers as separate processes on loopback, as
docs/distributed.md tells users to (``dask scheduler`` / ``dask worker --preload
prism_core.distributed.preload``): ``cpu-worker`` has this host's devices, ``gpu-worker`` also
*simulates* an NVIDIA H100 PCIe (``PRISM_SIMULATE_DEVICES``), since no GPU is here.  Tasks that
need the GPU must land on it, CPU tasks anywhere, and a task that no worker can run must fail at
submission with every worker's reasons.  The embedded ``LocalCluster`` of ``connect()`` is tested
at the end.  Ports are chosen by the system (port 0) and directories are the test's own, so
that the module runs beside others under ``pytest -n auto``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("distributed", reason="prism_core.distributed needs the distributed extra")

from distributed import Client

import prism_core as prism
from prism_core import OperationError, PrismError
from prism_core.distributed import (
    NoWorkerError,
    PrismClient,
    TaskResult,
    WorkerScope,
    connect,
)
from prism_core.hardware import RequirementError

GPU = "nvidia.h100-pcie"
START = 90  # seconds a process may take to start on a busy machine


def _environment(tmp: Path, **extra: str) -> dict[str, str]:
    """A worker's environment: its own caches, the builtin plugins only (as the tests here)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PRISM_")}
    env.update(
        PRISM_CACHE_DIR=str(tmp / "prism-cache"),
        PRISM_DISABLE_PLUGIN_AUTOLOAD="1",
    )
    env.update(extra)
    return env


class Processes:
    """Processes started for a test, each with its log; all ended by :meth:`stop`."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.started: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, args: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
        log = self.tmp / f"{name}.log"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", *args], stdout=out, stderr=subprocess.STDOUT, env=env
            )
        self.started.append((name, proc, log))
        return proc

    def logs(self) -> str:
        return "\n".join(
            f"--- {name} (exit {proc.poll()}) ---\n{log.read_text(errors='replace')[-3000:]}"
            for name, proc, log in self.started
        )

    def stop(self, proc: subprocess.Popen[bytes] | None = None) -> None:
        for _name, p, _log in list(self.started):
            if proc is not None and p is not proc:
                continue
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=15)


def start_worker(
    procs: Processes, address: str, name: str, simulate: str = "", *, nanny: bool = False
) -> subprocess.Popen[bytes]:
    extra = {"PRISM_SIMULATE_DEVICES": simulate} if simulate else {}
    return procs.start(
        name,
        [
            "distributed.cli.dask_worker",
            address,
            "--name",
            name,
            "--nthreads",
            "1",
            "--nanny" if nanny else "--no-nanny",
            "--no-dashboard",
            "--dashboard-address",
            "127.0.0.1:0",  # the HTTP server runs without a dashboard too: never on 8787
            "--host",
            "127.0.0.1",
            "--local-directory",
            str(procs.tmp / name),
            "--preload",
            "prism_core.distributed.preload",
        ],
        _environment(procs.tmp, **extra),
    )


def wait_for_worker(client: Client, name: str, procs: Processes) -> str:
    """The address of the worker called ``name``, once the scheduler knows it."""
    deadline = time.monotonic() + START
    while time.monotonic() < deadline:
        for address, info in client.scheduler_info()["workers"].items():
            if info.get("name") == name:
                return str(address)
        time.sleep(0.1)
    raise AssertionError(f"worker {name} did not join within {START} s\n{procs.logs()}")


class Cluster:
    def __init__(self, address: str, client: Client, procs: Processes, workers: dict[str, str]):
        self.address = address
        self.client = client
        self.procs = procs
        self.workers = workers  # name -> address


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("dask-cluster")
    procs = Processes(tmp)
    client = None
    try:
        scheduler_file = tmp / "scheduler.json"
        procs.start(
            "scheduler",
            [
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--dashboard-address",
                "127.0.0.1:0",
                "--scheduler-file",
                str(scheduler_file),
                "--preload",
                "prism_core.distributed.preload",
            ],
            _environment(tmp),
        )
        deadline = time.monotonic() + START
        while not scheduler_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert scheduler_file.exists(), f"the scheduler did not start\n{procs.logs()}"
        client = Client(scheduler_file=str(scheduler_file), timeout=START)
        address = str(client.scheduler.address)  # type: ignore[union-attr]
        start_worker(procs, address, "cpu-worker")
        start_worker(procs, address, "gpu-worker", simulate=GPU)
        workers = {n: wait_for_worker(client, n, procs) for n in ("cpu-worker", "gpu-worker")}
        yield Cluster(address, client, procs, workers)
    finally:
        if client is not None:
            client.close()
        procs.stop()


@pytest.fixture(scope="module")
def pc(cluster: Cluster) -> Iterator[PrismClient]:
    prism_client = PrismClient(cluster.client, advert_timeout=2.0)
    yield prism_client
    prism_client.close()


def on_which(pc: PrismClient, futures: list[Any]) -> set[str]:
    results = pc.gather(futures)
    assert all(isinstance(r, TaskResult) for r in results)
    return {r.worker_name for r in results}


@pytest.mark.timeout(180)
def test_preloaded_workers_advertise_resources_before_any_prism_client(cluster: Cluster) -> None:
    # Read with the plain Dask client: the preload set the resources at the workers' start.
    info = cluster.client.scheduler_info()["workers"]
    resources = {w["name"]: w["resources"] for w in info.values()}
    host = prism.hardware.present_devices().devices[0].device_type
    capability = {
        n: [k for k in r if k.startswith("prism:capability:")] for n, r in resources.items()
    }
    cpu, gpu = capability["cpu-worker"], capability["gpu-worker"]
    assert len(cpu) == len(gpu) == 1 and cpu != gpu  # what each can do, named by a digest
    assert resources["cpu-worker"] == {f"prism:{host}": 1, "prism:cpu": 1, cpu[0]: 2**31}
    assert resources["gpu-worker"] == {
        f"prism:{host}": 1,
        "prism:cpu": 1,
        f"prism:{GPU}": 1,
        "prism:gpu": 1,
        gpu[0]: 2**31,
    }


@pytest.mark.timeout(60)
def test_the_client_reads_what_each_worker_advertises(cluster: Cluster, pc: PrismClient) -> None:
    workers = pc.workers(refresh=True)
    assert {w.name for w in workers.values()} == {"cpu-worker", "gpu-worker"}
    gpu = workers[cluster.workers["gpu-worker"]]
    assert [(d.device_type, d.simulated) for d in gpu.devices][-1] == (GPU, True)
    assert gpu.devices[-1].names == (f"simulated {prism.hardware.get_device(GPU).name}",)
    assert not workers[cluster.workers["cpu-worker"]].simulated
    assert all(w.prism_version == prism.__version__ for w in workers.values())


@pytest.mark.timeout(60)
def test_a_gpu_task_lands_on_the_simulated_gpu_worker(cluster: Cluster, pc: PrismClient) -> None:
    a = np.arange(16.0).reshape(4, 4)
    futures = [
        pc.run_op("matmul", a, a + i, requires={"vendor": "nvidia"}, report=True) for i in range(6)
    ]
    results = pc.gather(futures)
    for i, result in enumerate(results):
        assert result.worker == cluster.workers["gpu-worker"]
        assert (result.device, result.simulated) == (GPU, True)
        assert result.variant == "numpy.matmul"  # a simulated device runs the reference
        np.testing.assert_allclose(result.value, a @ (a + i))
    # A user function runs under the device scope its route chose.
    scope = pc.submit(prism.current_scope, requires={"kind": "gpu", "tensor_cores": ">=4"})
    assert repr(scope.result()) == f"<Scope device='{GPU}' (simulated)>"


@pytest.mark.timeout(60)
def test_a_cpu_task_may_run_on_either_worker(cluster: Cluster, pc: PrismClient) -> None:
    route = pc.explain({"kind": "cpu"})
    assert set(route.workers) == set(cluster.workers.values())
    host = prism.hardware.present_devices().devices[0].device_type
    assert set(route.accepted.values()) == {WorkerScope(host, simulated=False)}
    futures = pc.map(lambda i: i * i, range(40), requires={"kind": "cpu"}, report=True)
    results = pc.gather(futures)
    assert [r.value for r in results] == [i * i for i in range(40)]
    assert {r.worker for r in results} <= set(cluster.workers.values())
    assert all(r.device == host and not r.simulated for r in results)
    # Without a requirement an op goes anywhere, in automatic mode, as a plain Dask task.
    assert pc.restrictions(op="matmul") == {}
    assert on_which(pc, [pc.run_op("add", i, 1, report=True) for i in range(4)]) <= {
        "cpu-worker",
        "gpu-worker",
    }


@pytest.mark.timeout(60)
def test_a_task_no_worker_can_run_fails_at_once_with_every_workers_reason(
    cluster: Cluster, pc: PrismClient
) -> None:
    with pytest.raises(NoWorkerError) as caught:
        pc.submit(sum, [1, 2], requires={"vendor": "amd", "kind": "gpu"})
    error = caught.value
    assert set(error.route.rejected) == set(cluster.workers.values())
    text = str(error)
    assert "none of the 2 workers" in text and cluster.address in text
    for name, address in cluster.workers.items():
        assert f"- {address} ({name}): " in text
    assert f"{GPU} (simulated): vendor is 'nvidia', required 'amd'" in text
    assert "kind is 'cpu', required 'gpu'" in text
    assert error.waited == 0.0  # every worker had advertised: nothing to wait for
    with pytest.raises(NoWorkerError, match="none of the 2 workers"):
        pc.run_op("matmul", np.ones((2, 2)), np.ones((2, 2)), requires={"vendor": "amd"})
    with pytest.raises(NoWorkerError):
        pc.restrictions({"vendor": "amd"})


@pytest.mark.timeout(60)
def test_plain_dask_leaves_such_a_task_waiting(cluster: Cluster) -> None:
    """What Prism's fail-fast replaces: Dask holds a task asking for a resource no worker has
    in its 'no-worker' state, without a word to the caller."""
    future = cluster.client.submit(sum, [1, 2], resources={"prism:amd.mi300x": 1}, pure=False)
    try:

        def state(dask_scheduler: Any, key: str = future.key) -> str | None:
            task = dask_scheduler.tasks.get(key)
            return None if task is None else str(task.state)

        while (seen := cluster.client.run_on_scheduler(state)) in (None, "released"):
            time.sleep(0.05)
        assert seen == "no-worker"
        assert future.status == "pending"
    finally:
        future.cancel()


@pytest.mark.timeout(60)
def test_restrictions_place_plain_dask_tasks(cluster: Cluster, pc: PrismClient) -> None:
    placed = pc.restrictions({"vendor": "nvidia"})
    gpu = pc.workers()[cluster.workers["gpu-worker"]]
    assert gpu.capability is not None
    assert placed == {"resources": {gpu.capability: 1.0}}  # what the GPU worker can do

    def where(_: int) -> str:
        from distributed import get_worker

        return str(get_worker().name)

    futures = [cluster.client.submit(where, i, **placed) for i in range(4)]
    assert set(cluster.client.gather(futures)) == {"gpu-worker"}


@pytest.mark.timeout(60)
def test_bad_input_is_refused_on_the_client_naming_what_is_wrong(pc: PrismClient) -> None:
    with pytest.raises(RequirementError, match=r"requires=\{'vendor': 3\}: .*'vendor'"):
        pc.submit(sum, [1], requires={"vendor": 3})
    with pytest.raises(RequirementError, match=r"requires=\{'kind': 'gpu', 3: 'x'\}: .*strings"):
        pc.submit(sum, [1], requires={"kind": "gpu", 3: "x"})
    with pytest.raises(RequirementError, match="requires= takes a requirement mapping"):
        pc.submit(sum, [1], requires="gpu")  # type: ignore[arg-type]
    with pytest.raises(OperationError, match="matmull"):
        pc.run_op("matmull", 1, 2)
    with pytest.raises(TypeError, match="workers= cannot be combined with requires="):
        pc.submit(sum, [1], requires={"kind": "cpu"}, workers=["tcp://127.0.0.1:1"])
    with pytest.raises(TypeError, match="fn must be callable"):
        pc.submit("sum", [1])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="op must be an op name"):
        pc.run_op(3)


@pytest.mark.timeout(120)
def test_a_worker_that_joins_is_routed_to_and_one_that_dies_is_not(cluster: Cluster) -> None:
    # Routes by what it read, read again only when the cluster announces a change (no ageing).
    pc = PrismClient(cluster.client, refresh_interval=600, advert_timeout=START)
    proc = None
    try:
        assert pc.announces_departures
        with pytest.raises(NoWorkerError):
            pc.submit(sum, [1], requires={"vendor": "amd"})
        proc = start_worker(cluster.procs, cluster.address, "amd-worker", simulate="amd.mi300x")
        address = wait_for_worker(cluster.client, "amd-worker", cluster.procs)
        # A route that finds no worker reads the cluster again, and waits for live workers that
        # have not advertised yet, before it fails: the new worker is found.
        result = pc.submit(prism.current_scope, requires={"vendor": "amd"}, report=True).result()
        assert (result.worker, result.device, result.simulated) == (address, "amd.mi300x", True)
        proc.kill()  # no goodbye: the scheduler notices, and announces it
        proc.wait(timeout=30)
        while address in pc.explain({"vendor": "amd"}).accepted:
            time.sleep(0.05)
        with pytest.raises(NoWorkerError) as caught:
            pc.submit(sum, [1], requires={"vendor": "amd"})
        assert address not in caught.value.route.rejected
    finally:
        pc.close()
        if proc is not None:
            cluster.procs.stop(proc)


def holding() -> Callable[[str, str], int]:
    """A task that writes its process id to the file ``started``, waits until the file ``go``
    exists, and returns its process id.  Made inside a function so that cloudpickle sends it by
    value: the workers cannot import the tests."""

    def hold(started: str, go: str) -> int:
        import os
        import pathlib
        import time

        pathlib.Path(started).write_text(str(os.getpid()))
        deadline = time.monotonic() + 120  # a guard: the test lets it go
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.05)
        return os.getpid()

    return hold


def kill_while_running(started: Path, go: Path, procs: Processes | None = None) -> int:
    """Wait until a :func:`holding` task started, SIGKILL its worker's process (not its nanny),
    let the task go (when it runs again) and return the killed process id."""
    deadline = time.monotonic() + START
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists(), f"the task did not start\n{procs.logs() if procs else ''}"
    killed = int(started.read_text())
    os.kill(killed, signal.SIGKILL)
    go.touch()
    return killed


@pytest.mark.timeout(4 * START)
def test_a_task_whose_worker_was_killed_runs_on_the_worker_its_nanny_started(
    cluster: Cluster, tmp_path: Path
) -> None:
    """SIGKILL the only worker that can run a task while it runs: its nanny starts a worker with
    the same devices (at another address), and the task runs there.  Restricted to the dead
    worker's address, as tasks were routed, it waited in ``no-worker`` for ever."""
    started, go = tmp_path / "started", tmp_path / "go"
    proc = start_worker(
        cluster.procs, cluster.address, "intel-worker", simulate="intel.max-1550-stack", nanny=True
    )
    prism_client = PrismClient(cluster.client, advert_timeout=START)
    try:
        wait_for_worker(cluster.client, "intel-worker", cluster.procs)
        needs = {"vendor": "intel", "kind": "gpu"}
        future = prism_client.submit(holding(), str(started), str(go), requires=needs, pure=False)
        killed = kill_while_running(started, go, cluster.procs)
        ran = future.result(timeout=2 * START)
        assert ran != killed
        info = cluster.client.scheduler_info()["workers"]
        assert [w["name"] for w in info.values()].count("intel-worker") == 1
    finally:
        prism_client.close()
        cluster.procs.stop(proc)


@pytest.mark.timeout(4 * START)
def test_a_killed_worker_without_preload_is_replaced_by_one_that_takes_its_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As above, on the embedded ``LocalCluster`` of ``connect()``, whose workers load no
    preload: the worker the nanny starts registers without Prism's resources and gets them from
    the plugin the client registered, after registering.  Dask looks for a worker for a waiting
    task when one registers, not when a worker's resources change: the task waited in
    ``no-worker`` for ever, although the new worker held the resource it asks for."""
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "cache"))  # the workers inherit it
    monkeypatch.setenv("PRISM_DISABLE_PLUGIN_AUTOLOAD", "1")
    started, go = tmp_path / "started", tmp_path / "go"
    with connect(
        n_workers=2,
        threads_per_worker=1,
        processes=True,  # each worker its own process, under a nanny
        simulate={"1": [GPU]},  # the worker named 1, and the one its nanny starts, only
        dashboard_address="127.0.0.1:0",
        local_directory=str(tmp_path),
        advert_timeout=START,
    ) as pc:
        future = pc.submit(
            holding(), str(started), str(go), requires={"vendor": "nvidia"}, report=True
        )
        killed = kill_while_running(started, go)
        try:
            result = future.result(timeout=2 * START)
        except TimeoutError:

            def state(dask_scheduler: Any, key: str = future.key) -> str:
                return str(dask_scheduler.tasks[key].state)

            held = {w["name"]: w["resources"] for w in pc.scheduler_info()["workers"].values()}
            pytest.fail(f"the task is still {pc.run_on_scheduler(state)!r}; workers: {held}")
        assert result.value != killed
        assert (result.worker_name, result.device, result.simulated) == ("1", GPU, True)


@pytest.mark.timeout(120)
def test_the_embedded_local_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "cache"))  # the workers inherit it
    options: dict[str, Any] = {
        "n_workers": 1,
        "threads_per_worker": 1,
        "dashboard_address": "127.0.0.1:0",  # None would still listen on 8787
        "local_directory": str(tmp_path),
    }
    with pytest.raises(PrismError, match=r"'nvidia.h100-pcei'.*did you mean"):
        connect(simulate=["nvidia.h100-pcei"], **options)  # explicit: strict
    with connect(simulate=[GPU], **options) as pc:
        assert pc.cluster is not None
        a = np.eye(3)
        result = pc.run_op(prism.matmul, a, a, requires={"vendor": "nvidia"}, report=True).result()
        assert (result.device, result.simulated) == (GPU, True)
        np.testing.assert_array_equal(result.value, a)
        assert pc.submit(lambda: 7).result() == 7  # plain Dask underneath
        cluster = pc.cluster
    assert cluster.status.name == "closed"  # connect() started it: closing closes it


@pytest.mark.timeout(120)
def test_workers_without_the_plugin_are_waited_for_then_explained(tmp_path: Path) -> None:
    from distributed import LocalCluster

    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=1,
            processes=False,
            dashboard_address="127.0.0.1:0",
            local_directory=str(tmp_path),
        ) as local,
        Client(local) as client,
    ):
        pc = PrismClient(client, register=False, advert_timeout=0.5)
        try:
            with pytest.raises(NoWorkerError, match="after waiting") as caught:
                pc.submit(sum, [1], requires={"kind": "cpu"})
            (reasons,) = caught.value.route.rejected.values()
            assert reasons == (
                "has not advertised: Prism's worker plugin is not set up there (yet)",
            )
            assert caught.value.waited >= 0.5
        finally:
            pc.close()
        assert client.status == "running"  # a client passed in stays open


@pytest.mark.timeout(120)
def test_connect_by_address_to_the_real_scheduler(cluster: Cluster) -> None:
    """An address string: the scheduler answers the probe, then a new client connects."""
    with connect(cluster.address, timeout=30) as pc:
        assert pc.submit(lambda: 5).result() == 5


@pytest.mark.timeout(60)
def test_connect_gives_up_on_a_server_that_accepts_and_never_answers() -> None:
    """Dask's client bounds the TCP connection, not the handshake after it: on a server that
    accepts and stays silent it waited forever.  The timeout holds for the whole handshake."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                accepted.append(server.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    try:
        # The server never answers: that connect returns at all is its giving up (a hang is
        # this test's timeout).
        with pytest.raises(TimeoutError, match=r"accepted the connection but did not answer as a "
                           r"Dask scheduler within 2 s"):  # fmt: skip
            connect(address, timeout=2)
    finally:
        server.close()
        for conn in accepted:
            conn.close()
