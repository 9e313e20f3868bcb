"""The thread-pool coordinator (prism_core/kernel/threads.py): behaviour, never timings.

Fake pools check the logic (which pools a change of backend releases, the safety check, the
switch, concurrency); NumPy's own OpenBLAS checks the real release; torch and SciPy, when
installed, run in a subprocess so that this process's threads stay as they are.
"""

from __future__ import annotations

import ctypes
import email  # a package every test process has: it stands for a framework
import functools
import json  # another one
import os
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterable

import numpy as np
import pytest

from prism_core.kernel import threads
from prism_core.kernel.errors import PrismWarning
from prism_core.kernel.threads import Pool, PoolRecord, ThreadPools

A, B = email.__name__, json.__name__
MODULES = {"alpha": (A,), "beta": (B,)}


class Fake:
    """Pools of two fake frameworks whose releases are counted."""

    def __init__(self, *, exclusive: bool = False, fail: bool = False) -> None:
        self.calls: list[str] = []
        self.scans = 0
        self.exclusive = exclusive
        self.fail = fail
        self.inside = 0
        self.overlaps = 0

    def release(self, module: str) -> int:
        self.inside += 1
        if self.inside > 1:
            self.overlaps += 1
        try:
            if self.fail:
                raise OSError("no such symbol")
            self.calls.append(module)
            return 0
        finally:
            self.inside -= 1

    def scan(self, modules: Iterable[str]) -> list[Pool]:
        self.scans += 1
        out = []
        for module in (*modules, None):
            record = PoolRecord(f"/lib/{module}.so", "openblas", "blas", module, "release")
            out.append(Pool(record, functools.partial(self.release, str(module)), self.exclusive))
        return out


def coordinator(fake: Fake) -> ThreadPools:
    return ThreadPools(MODULES, enabled=True, scanner=fake.scan, busy=lambda: "")


def test_a_change_of_backend_releases_the_other_backends_pools() -> None:
    fake = Fake()
    pools = coordinator(fake)
    pools.entering("alpha")
    assert fake.calls == [B]  # beta's pool; alpha's own and the unclaimed one stay
    pools.entering("alpha")
    pools.entering("alpha")
    assert fake.calls == [B]  # the same backend again: nothing
    pools.entering("beta")
    assert fake.calls == [B, A]
    assert pools.last == "beta"
    assert pools.switches == 2
    records = {r.module: r for r in pools.pools()}
    assert records[A].released == 1 and records[B].released == 1
    assert records[None].released == 0
    assert records[A].as_dict()["release"] == "release"


def test_a_backend_with_no_modules_releases_every_claimed_pool() -> None:
    fake = Fake()
    pools = coordinator(fake)
    pools.entering("cupy")
    assert sorted(fake.calls) == [A, B]


def test_declare_gives_a_backend_its_modules() -> None:
    fake = Fake()
    pools = coordinator(fake)
    pools.declare("gamma", [A, B])
    pools.entering("gamma")
    assert fake.calls == []
    assert pools.modules("gamma") == (A, B)


def test_nothing_is_scanned_while_one_framework_is_loaded() -> None:
    fake = Fake()
    pools = ThreadPools(
        {"alpha": (A,), "beta": ("surely_not_imported_framework",)},
        enabled=True,
        scanner=fake.scan,
    )
    pools.entering("alpha")
    pools.entering("beta")
    assert fake.scans == 0 and fake.calls == []


def test_pools_are_scanned_again_when_a_framework_is_imported_later(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake = Fake()
    pools = ThreadPools(
        {"alpha": (A,), "beta": (B,), "gamma": ("late_framework",)},
        enabled=True,
        scanner=fake.scan,
        busy=lambda: "",
    )
    pools.entering("alpha")
    assert fake.scans == 1
    pools.entering("beta")
    assert fake.scans == 1  # nothing new
    monkeypatch.setitem(sys.modules, "late_framework", type(sys)("late_framework"))
    pools.entering("gamma")
    assert fake.scans == 2
    assert "late_framework" in fake.calls or A in fake.calls


def test_an_exclusive_pool_is_left_alone_while_another_thread_may_be_inside() -> None:
    fake = Fake(exclusive=True)
    pools = ThreadPools(MODULES, enabled=True, scanner=fake.scan, busy=lambda: "thread 'w' runs")
    pools.entering("alpha")
    assert fake.calls == []
    record = next(r for r in pools.pools() if r.module == B)
    assert record.skipped == 1 and record.released == 0
    assert record.why == "thread 'w' runs"


def test_a_failing_release_is_recorded_never_raised() -> None:
    fake = Fake(fail=True)
    pools = coordinator(fake)
    pools.entering("alpha")  # must not raise
    record = next(r for r in pools.pools() if r.module == B)
    assert record.released == 0 and record.skipped == 1
    assert "OSError" in record.why and "no such symbol" in record.why


def test_off_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = Fake()
    pools = ThreadPools(MODULES, enabled=False, scanner=fake.scan)
    pools.entering("alpha")
    pools.entering("beta")
    assert fake.scans == 0 and fake.calls == []
    assert pools.last == "beta"  # it still knows where it is, so turning it on is consistent
    monkeypatch.setenv("PRISM_THREADS", "off")
    assert ThreadPools(MODULES).enabled is False
    monkeypatch.setenv("PRISM_THREADS", "ON")
    assert ThreadPools(MODULES).enabled is True
    monkeypatch.delenv("PRISM_THREADS")
    assert ThreadPools(MODULES).enabled is True


def test_a_bad_setting_warns_and_keeps_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRISM_THREADS", "sometimes")
    with pytest.warns(PrismWarning, match=r"PRISM_THREADS='sometimes'.*'on' or 'off'"):
        pools = ThreadPools(MODULES)
    assert pools.enabled is True


def test_prism_threads_is_documented() -> None:
    from prism_core.kernel import config as _config

    assert "PRISM_THREADS" in _config.ENVIRONMENT_VARIABLES
    assert "PRISM_THREADS" in (_config.__doc__ or "")


@pytest.mark.timeout(60)
def test_concurrent_entering_is_safe() -> None:
    fake = Fake()
    pools = coordinator(fake)
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def work(i: int) -> None:
        try:
            start.wait()
            for j in range(2000):
                pools.entering("alpha" if (i + j) % 3 else "beta")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert fake.overlaps == 0  # releases never ran concurrently
    assert pools.last in ("alpha", "beta")
    # Every switch released exactly the other backend's pool.
    assert len(fake.calls) == pools.switches
    assert fake.scans == 1


@pytest.mark.timeout(60)
def test_the_module_function_is_the_process_coordinator() -> None:
    saved = (threads.POOLS.last, threads.POOLS.enabled)
    threads.POOLS.enabled = False
    try:
        threads.entering("numpy")
        assert threads.POOLS.last == "numpy"
        assert threads.enabled() is False
        assert isinstance(threads.pools(), tuple)
    finally:
        threads.POOLS.last, threads.POOLS.enabled = saved


# -- the safety check ----------------------------------------------------------------------


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.timeout(60)
def test_others_busy_sees_a_thread_computing_and_not_one_sleeping() -> None:
    stop = threading.Event()

    def sleeper() -> None:
        stop.wait(30)

    def computing() -> None:
        a = np.ones((300, 300))
        while not stop.is_set():
            np.linalg.svd(a)  # releases the GIL and runs

    quiet = threading.Thread(target=sleeper, name="sleeper")
    quiet.start()
    try:
        time.sleep(0.05)
        assert threads.others_busy() == ""
        busy = threading.Thread(target=computing, name="computing")
        busy.start()
        try:
            reasons = [threads.others_busy() for _ in range(200)]
            assert any("'computing' is running" in r for r in reasons)
        finally:
            stop.set()
            busy.join()
    finally:
        stop.set()
        quiet.join()


# -- the real libraries --------------------------------------------------------------------


def _openblas_pthreads() -> dict[str, object] | None:
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

    np.ones((2, 2)) @ np.ones((2, 2))
    for info in threadpoolctl.threadpool_info():
        if (
            info.get("internal_api") == "openblas"
            and info.get("threading_layer") == "pthreads"
            and "numpy" in info["filepath"]
        ):
            return dict(info)
    return None


def _limits() -> dict[str, int]:
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

    return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}


@pytest.mark.timeout(120)
def test_numpys_openblas_pool_is_released_and_comes_back() -> None:
    info = _openblas_pthreads()
    if info is None:
        pytest.skip("NumPy is not linked to a pthreads OpenBLAS here")
    pools = ThreadPools({"numpy": ("numpy",), "other": ("json",)}, enabled=True)
    # json is a package in sys.modules: two "frameworks" are loaded, so the coordinator scans.
    a = np.random.default_rng(0).standard_normal((256, 256))
    expected = a @ a
    limits = _limits()
    pools.entering("numpy")
    a @ a  # a threaded call: the pool exists
    pools.entering("other")
    record = next(r for r in pools.pools() if r.module == "numpy")
    assert record.release == "blas_thread_shutdown_"
    if threading.active_count() == 1 or not threads.others_busy():
        assert record.released >= 1, record
    assert _limits() == limits  # thread limits are never changed
    pools.entering("numpy")
    np.testing.assert_allclose(a @ a, expected)  # the pool is rebuilt on the next call
    assert _limits() == limits


def test_limits_stay_as_they_were_with_a_user_limit() -> None:
    import threadpoolctl  # type: ignore[import-untyped, unused-ignore]

    if _openblas_pthreads() is None:
        pytest.skip("NumPy is not linked to a pthreads OpenBLAS here")
    pools = ThreadPools({"numpy": ("numpy",), "other": ("json",)}, enabled=True)
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        limits = _limits()
        pools.entering("numpy")
        np.ones((64, 64)) @ np.ones((64, 64))
        pools.entering("other")
        assert _limits() == limits


def _run(code: str, env: dict[str, str] | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.timeout(300)
def test_no_framework_is_ever_imported() -> None:
    result = _run(
        """
        import json, sys
        sys.modules["torch"] = None  # as if not installed: importing it raises
        from prism_core.kernel import threads
        for name in ("numpy", "torch", "scipy", "cupy", "torch", "numpy"):
            threads.entering(name)
        print(json.dumps({
            "loaded": sorted(m for m in ("scipy", "cupy") if m in sys.modules),
            "torch": sys.modules["torch"] is None,
            "switches": threads.POOLS.switches,
            "pools": len(threads.pools()),
        }))
        """
    )
    assert result == {"loaded": [], "torch": True, "switches": 6, "pools": 0}


@pytest.mark.timeout(300)
def test_torch_and_scipy_pools_are_released_in_turn() -> None:
    pytest.importorskip("scipy")
    pytest.importorskip("torch")
    result = _run(
        """
        import json, os
        import numpy as np, scipy.linalg, threadpoolctl, torch
        from prism_core.kernel import threads
        def limits():
            return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info()}
        before = limits()
        torch_threads = torch.get_num_threads()
        a = np.random.default_rng(0).standard_normal((256, 256))
        t = torch.from_numpy(a)
        threads.entering("scipy"); scipy.linalg.blas.dgemm(1.0, a, a)
        threads.entering("torch"); torch.matmul(t, t)
        threads.entering("scipy"); scipy.linalg.blas.dgemm(1.0, a, a)
        threads.entering("torch"); torch.matmul(t, t)
        print(json.dumps({
            "pools": {os.path.basename(r.filepath): r.as_dict() for r in threads.pools()},
            "limits_kept": limits() == before,
            "torch_threads_kept": torch.get_num_threads() == torch_threads,
        }))
        """
    )
    pools = result["pools"]
    assert isinstance(pools, dict)
    gomp = next(v for k, v in pools.items() if k.startswith("libgomp"))
    assert gomp["module"] == "torch" and gomp["release"] == "omp_pause_resource_all"
    assert gomp["released"] == 2  # on each entering of scipy (the first: no pool yet)
    scipy_blas = next(v for v in pools.values() if v["module"] == "scipy")
    assert scipy_blas["release"] == "blas_thread_shutdown_"
    assert scipy_blas["released"] == 2  # on each entering of torch
    assert result["limits_kept"] is True
    assert result["torch_threads_kept"] is True


# -- which pools can be released, and how ---------------------------------------------------


class _Controller:
    def __init__(self, internal_api: str, user_api: str, **extra: object) -> None:
        self.internal_api = internal_api
        self.user_api = user_api
        self.filepath = f"/site-packages/framework/lib/lib{internal_api}.so"
        libc = ctypes.CDLL(None)
        # Stand-ins with the right names (never called here): any function of the C library.
        self.dynlib = type(
            "Lib", (), {"omp_pause_resource_all": libc.getpid, "blas_thread_shutdown_": libc.getpid}
        )()
        for key, value in extra.items():
            setattr(self, key, value)


@pytest.mark.parametrize(
    ("controller", "release", "why"),
    [
        (_Controller("openmp", "openmp"), "omp_pause_resource_all", ""),
        (
            _Controller("openblas", "blas", threading_layer="openmp", version="0.3.30"),
            "",
            "released with that runtime",
        ),
        (
            _Controller("openblas", "blas", threading_layer="pthreads", version="0.2.20"),
            "",
            "0.3.0 or later needed",
        ),
        (_Controller("mkl", "blas", threading_layer="tbb"), "", "no release call known for mkl"),
    ],
)
def test_what_each_library_gets(controller: _Controller, release: str, why: str) -> None:
    pool = threads.describe(controller, "framework")
    assert pool.record.release == release
    assert why in pool.record.why
    assert (pool.call is not None) == bool(release)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="OpenBLAS pools: Linux only")
def test_a_recent_pthreads_openblas_is_shut_down_under_the_check() -> None:
    controller = _Controller("openblas", "blas", threading_layer="pthreads", version="0.3.31.188.0")
    pool = threads.describe(controller, "framework")
    assert pool.record.release == "blas_thread_shutdown_"
    assert pool.exclusive is True


def test_a_library_no_module_claims_is_never_released() -> None:
    pool = threads.describe(_Controller("openmp", "openmp"), None)
    assert pool.call is None and "no backend's module" in pool.record.why


# -- through dispatch ----------------------------------------------------------------------

_THROUGH_DISPATCH = """
    import json, os, threading
    import numpy as np, torch
    import prism_core as prism
    from prism_core.kernel import threads
    a = np.random.default_rng(0).standard_normal((256, 256))
    t = torch.from_numpy(a.copy())
    expected = a @ a
    for _ in range(3):
        np.testing.assert_allclose(prism.matmul(a, a), expected)
        assert isinstance(prism.matmul(t, t), torch.Tensor)
    report = {
        "switches": threads.POOLS.switches,
        "last": threads.POOLS.last,
        "modules": {b: list(threads.POOLS.modules(b)) for b in ("numpy", "torch")},
        "pools": [r.as_dict() for r in threads.pools()],
    }
    # Many threads racing both backends: every result right, no crash (the OpenBLAS shutdown
    # is made only when no other thread can be inside the library).
    errors = []
    def work(i):
        try:
            for _ in range(20):
                if i % 2:
                    np.testing.assert_allclose(prism.matmul(a, a), expected)
                else:
                    np.testing.assert_allclose(prism.matmul(t, t).numpy(), expected)
        except Exception as exc:
            errors.append(repr(exc))
    workers = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for w in workers: w.start()
    for w in workers: w.join()
    report["errors"] = errors
    report["switches_after_race"] = threads.POOLS.switches
    print(json.dumps(report))
"""


@pytest.mark.timeout(300)
def test_dispatch_enters_each_backend_it_runs() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("prism_plugin_torch")
    result = _run(_THROUGH_DISPATCH, env={"PRISM_PLUGINS": "torch"})
    # numpy, torch, numpy, torch, numpy, torch: each call changes backend.
    assert result["switches"] == 6 and result["last"] == "torch"
    # The modules come from each Backend's ``thread_modules``.
    assert result["modules"] == {"numpy": ["numpy"], "torch": ["torch"]}
    pools = result["pools"]
    assert isinstance(pools, list)
    by_module = {p["module"]: p for p in pools if p["release"]}
    assert by_module["torch"]["released"] >= 2  # released on each entering of numpy
    if "numpy" in by_module:  # NumPy on a pthreads OpenBLAS: released on entering torch
        assert by_module["numpy"]["released"] + by_module["numpy"]["skipped"] >= 2
    assert result["errors"] == []
    assert result["switches_after_race"] > result["switches"]


@pytest.mark.timeout(300)
def test_prism_threads_off_releases_nothing_through_dispatch() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("prism_plugin_torch")
    result = _run(_THROUGH_DISPATCH, env={"PRISM_PLUGINS": "torch", "PRISM_THREADS": "off"})
    assert result["switches"] == 6  # the changes are still seen ...
    pools = result["pools"]
    assert isinstance(pools, list)
    assert pools == []  # ... and no library is even looked at
    assert result["errors"] == []
