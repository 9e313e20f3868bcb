"""Dispatch under concurrency and failure.

Every test here failed on an earlier dispatcher: blame went to the wrong variant under
threads or after a ``can_run`` declined, plans built for a superseded state were stored, scopes
piled up, an unimportable variant crashed calls and ``prism explain``, a plugin using the API
while discovered hung every command, and a ``can_run`` sent every call down the slow path.
"""

from __future__ import annotations

import gc
import itertools
import json
import os
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.contract.variant import Variant
from prism_core.kernel.dispatch import calls, registry, scope

from .conftest import autoload_env, autoload_settings, put_distribution_on_path

_names = itertools.count()


def unique(prefix: str) -> str:
    return f"{prefix}_{next(_names)}_{os.getpid()}"


def _records(op_name: str) -> list[prism.FallbackRecord]:
    return [r for r in prism.fallbacks() if r.op == op_name]


# -- 1. a failure is blamed on the variant that raised ---------------------------------------


@pytest.mark.timeout(60)
def test_concurrent_failures_are_blamed_on_the_variant_that_raised() -> None:
    name = unique("racy")
    ran: list[str] = []
    barrier = threading.Barrier(16)

    @prism.extending.operation(name=name, array_args=(0,))
    def racy(x: Any) -> Any:
        ran.append("reference")
        return x + 1

    @racy.variant(priority=5, name=f"{name}.broken")
    def broken(x: Any) -> Any:
        ran.append("broken")
        time.sleep(0.05)  # releases the GIL: every thread is inside the variant at once
        raise RuntimeError("device lost")

    x = np.zeros(3)
    assert prism.explain(racy, x).chosen == f"{name}.broken"  # the plan is cached
    results: list[Any] = []
    errors: list[BaseException] = []

    def call() -> None:
        barrier.wait()
        try:
            results.append(racy(x))
        except BaseException as exc:  # collected, asserted below
            errors.append(exc)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=call) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert len(results) == 16 and all(np.array_equal(r, np.ones(3)) for r in results)
    (record,) = _records(name)  # one record, for the variant that raised, none for '?'
    assert record.variant == f"{name}.broken"
    assert record.count == 16
    assert record.fell_back_to == f"{name}.reference"
    fallback_warnings = [w for w in caught if issubclass(w.category, prism.FallbackWarning)]
    assert len(fallback_warnings) == 1
    ran.clear()
    np.testing.assert_array_equal(racy(x), np.ones(3))
    assert ran == ["reference"]  # later calls run the next candidate directly
    assert prism.explain(racy, x).chosen == f"{name}.reference"


# -- 2. can_run decliners are never blamed ----------------------------------------------------


def _decline_then_raise() -> tuple[Any, list[str]]:
    name = unique("declined")
    ran: list[str] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        ran.append("reference")
        return x * 2

    def big_only(x: Any) -> bool | str:
        return True if x.size >= 100 else f"size {x.size} < 100"

    @op.variant(priority=10, can_run=big_only, name=f"{name}.big")
    def big(x: Any) -> Any:
        ran.append("big")
        return x + x

    @op.variant(priority=5, name=f"{name}.raises")
    def raises(x: Any) -> Any:
        ran.append("raises")
        raise RuntimeError("kernel launch failed")

    return op, ran


def test_a_decliner_is_never_blamed_and_each_variant_runs_once() -> None:
    op, ran = _decline_then_raise()
    small, large = np.ones(4), np.ones(200)
    with pytest.warns(prism.FallbackWarning, match=r"\.raises failed"):
        np.testing.assert_array_equal(op(small), small * 2)
    assert ran == ["raises", "reference"]  # the raising variant ran once
    assert [r.variant for r in _records(op.name)] == [f"{op.name}.raises"]
    ran.clear()
    # The decliner is not disabled: inputs it accepts still run on it.
    np.testing.assert_array_equal(op(large), large * 2)
    assert ran == ["big"]
    decision = prism.explain(op, small)
    verdicts = {c.variant: c for c in decision.candidates}
    assert verdicts[f"{op.name}.big"].reasons == ("can_run: size 4 < 100",)
    assert decision.chosen == f"{op.name}.reference"


def test_strict_mode_names_the_variant_that_raised() -> None:
    op, ran = _decline_then_raise()
    with prism.choosing(strict=True), pytest.raises(prism.BackendError) as info:
        op(np.ones(4))
    assert f"variant {op.name}.raises failed" in str(info.value)
    assert f"{op.name}.big failed" not in str(info.value)
    assert ran == ["raises"]


@pytest.fixture
def torch_and_jax(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The installed torch and jax plugins, through their entry points (torch itself given)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("jax")
    monkeypatch.setenv("PRISM_PLUGINS", "torch,jax,genomics")
    ps = prism.extending.reload_plugins()
    assert {ps.records[n].status for n in ("torch", "jax")} == {"loaded"}
    yield torch
    monkeypatch.delenv("PRISM_PLUGINS")
    prism.extending.reload_plugins()


def test_after_a_failure_the_reference_runs_next_not_the_next_name(torch_and_jax: Any) -> None:
    """A torch variant that fails falls back to the reference, whose semantics define the op,
    not to jax (the next by name): the tensors move to either, so only the order decides
    whose semantics the caller gets."""
    torch = torch_and_jax
    name = unique("semantics")
    ran: list[str] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        ran.append("reference")
        return x + 1

    @op.variant(backend="torch", name=f"{name}.torch")
    def on_torch(x: Any) -> Any:
        ran.append("torch")
        raise RuntimeError("kernel launch failed")

    @op.variant(backend="jax", name=f"{name}.jax")
    def on_jax(x: Any) -> Any:
        ran.append("jax")
        return x + 2

    try:
        x = torch.zeros(3)
        before = prism.explain(op, x)
        assert [c.variant for c in before.candidates if c.accepted][:3] == [
            f"{name}.torch",
            f"{name}.jax",
            f"{name}.reference",
        ]  # ranked: the tensors' own backend, then by name
        with pytest.warns(prism.FallbackWarning, match=rf"falling back to {name}\.reference"):
            out = op(x)
        assert ran == ["torch", "reference"]
        assert isinstance(out, torch.Tensor) and out.tolist() == [1.0, 1.0, 1.0]
        (record,) = _records(name)
        assert record.fell_back_to == f"{name}.reference"
        ran.clear()
        op(x)  # later calls go straight to the reference
        assert ran == ["reference"]
        assert prism.explain(op, x).chosen == f"{name}.reference"
    finally:  # a torch variant left behind would be checked by torch's conformance run
        registry.remove_variants(lambda v: v.op == name)


def test_when_the_reference_fails_too_the_rest_run_in_ranked_order() -> None:
    name = unique("ranked")
    ran: list[str] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        ran.append("reference")
        raise RuntimeError("reference failed")

    for label, priority in (("high", 9), ("mid", 5), ("low", 1)):

        def variant(x: Any, label: str = label) -> Any:
            ran.append(label)
            if label == "high":
                raise RuntimeError("high failed")
            return x

        op.variant(variant, priority=priority, name=f"{name}.{label}")

    with pytest.warns(prism.FallbackWarning):
        op(np.ones(2))
    assert ran == ["high", "reference", "mid"]


# -- 3. no plan built for a superseded state is stored ----------------------------------------


@pytest.mark.usefixtures("loopback")
def test_a_plan_built_while_the_default_backend_changes_is_not_stored(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Another thread's ``set_backend`` lands while this thread builds a plan: deterministic
    here by changing the default from inside the build."""
    a = np.ones((2, 2), np.float16)
    real_build = calls.build_plan
    changed: list[bool] = []

    def build_then_change(*args: Any, **kwargs: Any) -> Any:
        plan = real_build(*args, **kwargs)
        if not changed:
            changed.append(True)
            prism.set_backend("loopback")  # the state the plan was built from is superseded
        return plan

    monkeypatch.setattr(calls, "build_plan", build_then_change)
    name = unique("superseded")

    @prism.extending.operation(name=name, array_args=(0, 1))
    def op(x: Any, y: Any) -> Any:
        return x + y

    @op.variant(backend="loopback", priority=-5, name=f"{name}.loop")
    def loop(x: Any, y: Any) -> Any:
        return x - y

    try:
        op(a, a)  # built for the automatic default, which no longer holds when it is done
        decision = prism.explain(op, a, a)
        assert decision.chosen == f"{name}.loop", "a plan for the old default was stored"
        np.testing.assert_array_equal(op(a, a), np.zeros((2, 2)))
    finally:
        prism.set_backend(None)


@pytest.mark.timeout(120)
@pytest.mark.usefixtures("loopback")
def test_racing_set_backend_leaves_no_stale_plan() -> None:
    name = unique("raced")

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        return x

    @op.variant(backend="loopback", priority=-5, name=f"{name}.loop")
    def loop(x: Any) -> Any:
        return x

    x = np.ones(2)
    stop = threading.Event()

    def hammer() -> None:
        while not stop.is_set():
            op(x)
            prism.explain(op, x)

    try:
        for trial in range(20):
            stop.clear()
            threads = [threading.Thread(target=hammer) for _ in range(4)]
            for t in threads:
                t.start()
            for i in range(20):
                prism.set_backend("loopback" if i % 2 == 0 else None)
            final = "loopback" if trial % 2 == 0 else None
            prism.set_backend(final)
            stop.set()
            for t in threads:
                t.join()
            expected = f"{name}.loop" if final else f"{name}.reference"
            assert prism.explain(op, x).chosen == expected, f"trial {trial}"
    finally:
        prism.set_backend(None)


# -- 4. bounded memory ------------------------------------------------------------------------


def _live(kind: type) -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is kind)


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_reloading_devices_under_device_scopes_keeps_memory_flat() -> None:
    a = np.ones((2, 2))

    def cycle() -> None:
        prism.hardware.reload_devices()
        with prism.device("nvidia.h100-sxm", simulate=True):
            prism.matmul(a, a)

    for _ in range(20):
        cycle()
    scopes, descriptions = _live(prism.Scope), _live(prism.hardware.DeviceDescription)
    for _ in range(1000):
        cycle()
    assert _live(prism.Scope) <= scopes + 2
    assert _live(prism.hardware.DeviceDescription) <= descriptions + 2
    assert len(scope._interned) <= scopes + 2


def test_loading_a_device_file_again_and_again_keeps_one_scope(tmp_path: Path) -> None:
    path = tmp_path / "lab.yaml"
    path.write_text("device_type: lab.box\nkind: cpu\nvendor: lab\n", encoding="utf-8")
    a = np.ones(2)
    prism.add(a, a)  # the scopes any first call interns, whatever ran before this test
    gc.collect()
    before = len(scope._interned)
    for _ in range(200):
        with prism.device(prism.hardware.load_device_file(path), simulate=True):
            prism.add(a, a)
    gc.collect()
    assert len(scope._interned) <= before + 1


# -- 5. a variant that cannot be imported -----------------------------------------------------

UNIMPORTABLE = """
import prism_core

@prism_core.extending.hookimpl
def prism_variants():
    return [prism_core.extending.Variant("matmul", "prism_no_such_module:matmul", backend="numpy",
                               priority=50, name="ghost.matmul")]
"""


@pytest.fixture
def ghost(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A plugin whose variant names a module that does not exist, found by its entry point."""
    site = tmp_path / "ghost-site"
    site.mkdir()
    (site / "prism_ghost.py").write_text(UNIMPORTABLE, encoding="utf-8")
    put_distribution_on_path(
        monkeypatch, site, "prism-ghost", "1.0", "[prism.plugins]\nghost = prism_ghost\n"
    )
    with pytest.warns(
        prism.extending.PluginWarning, match="no module named 'prism_no_such_module'"
    ):
        prism.extending.reload_plugins(autoload_settings())  # type: ignore[arg-type]
    yield site
    sys.modules.pop("prism_ghost", None)
    prism.extending.reload_plugins()
    prism.reset_fallbacks()  # its matmul fallbacks are not the next test's


def test_an_unimportable_variant_is_skipped_with_a_warning(ghost: Path) -> None:
    a = np.arange(4.0).reshape(2, 2)
    with pytest.warns(prism.FallbackWarning) as caught:
        np.testing.assert_array_equal(prism.matmul(a, a), a @ a)
    message = str(caught[0].message)
    assert "ghost.matmul" in message and "plugin 'ghost'" in message
    assert "'prism_no_such_module:matmul'" in message and "falling back to numpy.matmul" in message
    decision = prism.explain("matmul", a, a)
    verdict = next(c for c in decision.candidates if c.variant == "ghost.matmul")
    assert not verdict.accepted and decision.chosen == "numpy.matmul"
    record = prism.extending.plugins().records["ghost"]
    assert any("prism_no_such_module" in p for p in record.problems)


def test_an_unimportable_variant_is_a_clear_error_when_named(ghost: Path) -> None:
    a = np.ones((2, 2))
    with prism.use_backend("numpy"), pytest.raises(prism.BackendError) as info:
        prism.matmul(a, a)
    message = str(info.value)
    assert "ghost.matmul" in message and "plugin 'ghost'" in message
    assert "prism_no_such_module:matmul" in message and "backend 'numpy' was named" in message
    assert isinstance(info.value.__cause__, prism.extending.VariantImportError)


@pytest.mark.timeout(120)
def test_the_cli_reports_an_unimportable_variant(ghost: Path) -> None:
    env = autoload_env(PYTHONPATH=os.pathsep.join([str(ghost), *sys.path]))
    run = [sys.executable, "-m", "prism_core"]
    explained = subprocess.run(
        [*run, "explain", "matmul", "--shape", "2x2,2x2", "--json"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert explained.returncode == 0, explained.stderr
    decision = json.loads(explained.stdout)
    assert decision["chosen"] == "numpy.matmul"
    ghost_verdict = next(c for c in decision["candidates"] if c["variant"] == "ghost.matmul")
    assert "prism_no_such_module" in ghost_verdict["reasons"][0]
    listed = subprocess.run(
        [*run, "plugins"], capture_output=True, text=True, env=env, timeout=60, check=False
    )
    assert "prism_no_such_module" in listed.stdout, listed.stdout + listed.stderr


# -- 6. nothing can hang ----------------------------------------------------------------------

AT_IMPORT = """
import numpy as np
import prism_core

@prism_core.extending.kernel(prism_core.matmul, priority=40, name="early.matmul")
def matmul(a, b):
    return np.matmul(a, b)
"""

IN_HOOK = """
import numpy as np
import prism_core

def add(a, b):
    return np.add(a, b)

@prism_core.extending.hookimpl
def prism_variants():
    prism_core.extending.kernel("add", priority=40, name="hooked.add")(add)
    return []
"""

CALLS_AN_OP = """
import numpy as np
import prism_core

prism_core.matmul(np.ones((2, 2)), np.ones((2, 2)))
"""

PROBE = """
import json, numpy as np, prism_core
a = np.ones((2, 2))
out = {name: {"status": r.status, "reason": r.reason}
       for name, r in prism_core.extending.plugins().records.items()}
out["matmul"] = prism_core.explain("matmul", a, a).chosen
out["add"] = prism_core.explain("add", a, a).chosen
prism_core.extending.reload_plugins()
out["matmul_after_reload"] = prism_core.explain("matmul", a, a).chosen
out["add_after_reload"] = prism_core.explain("add", a, a).chosen
print(json.dumps(out))
"""


@pytest.mark.timeout(180)
def test_plugins_that_use_the_api_while_discovered_never_hang(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    for module, text in (
        ("prism_early", AT_IMPORT),
        ("prism_hooked", IN_HOOK),
        ("prism_caller", CALLS_AN_OP),
    ):
        (site / f"{module}.py").write_text(textwrap.dedent(text), encoding="utf-8")
    info = site / "prism_hang_tests-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: prism-hang-tests\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[prism.plugins]\nearly = prism_early\nhooked = prism_hooked\ncaller = prism_caller\n"
    )
    env = autoload_env(PYTHONPATH=os.pathsep.join([str(site), *sys.path]))
    for command in (["plugins"], ["explain", "matmul"], ["devices"]):
        proc = subprocess.run(
            [sys.executable, "-m", "prism_core", *command],
            capture_output=True, text=True, env=env, timeout=60, check=False,
        )  # fmt: skip
        assert proc.returncode in (0, 1), (command, proc.stdout, proc.stderr)
        assert "internal error" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", PROBE],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["early"]["status"] == "loaded" and out["hooked"]["status"] == "loaded"
    assert out["matmul"] == out["matmul_after_reload"] == "early.matmul"
    assert out["add"] == out["add_after_reload"] == "hooked.add"
    assert out["caller"]["status"] == "failed"
    assert "used Prism's plugin set while being loaded" in out["caller"]["reason"]


# -- 7. can_run does not cost the slow path ---------------------------------------------------


def test_a_cached_call_with_can_run_takes_no_slow_path(monkeypatch: pytest.MonkeyPatch) -> None:
    name = unique("checked")
    checks: list[int] = []

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        return x

    def small_only(x: Any) -> bool | str:
        checks.append(x.size)
        return True if x.size < 100 else "too big"

    @op.variant(priority=5, can_run=small_only, name=f"{name}.small")
    def small(x: Any) -> Any:
        return x * 3

    x = np.ones(3)
    np.testing.assert_array_equal(op(x), x * 3)  # builds and caches the plan
    slow: list[str] = []
    for module, attr in ((calls, "call_slow"), (calls, "run_checked")):
        real = getattr(module, attr)

        def spy(*args: Any, _real: Any = real, _attr: str = attr, **kwargs: Any) -> Any:
            slow.append(_attr)
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, attr, spy)
    real_resolve = Variant.resolve
    monkeypatch.setattr(
        Variant, "resolve", lambda self: slow.append("resolve") or real_resolve(self)
    )
    checks.clear()
    for _ in range(5):
        np.testing.assert_array_equal(op(x), x * 3)
    assert checks == [3] * 5  # can_run runs once per call, and nothing else does
    assert slow == []
    np.testing.assert_array_equal(op(np.ones(200)), np.ones(200))  # declined: the next one


# -- 8. FallbackWarning points at the caller's line -------------------------------------------


def test_fallback_warnings_point_at_the_callers_line() -> None:
    name = unique("pointed")
    fail_now = [False]

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        if fail_now[0]:
            raise RuntimeError("a cached call fails")
        return x

    @op.variant(priority=6, name=f"{name}.first")
    def first(x: Any) -> Any:
        raise RuntimeError("first call fails")

    @op.variant(priority=5, name=f"{name}.later", requires={"kind": "cpu"})
    def later(x: Any) -> Any:
        return x

    x = np.ones(2)
    line = sys._getframe().f_lineno + 2
    with pytest.warns(prism.FallbackWarning) as caught:
        op(x)  # not cached yet: fails on the first call
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
    op(x)  # cached now, on the reference (the first to stand in after a failure)
    fail_now[0] = True
    line = sys._getframe().f_lineno + 2
    with pytest.warns(prism.FallbackWarning) as caught:
        op(x)  # a cached call that fails
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)


def test_the_registry_generation_advances_on_every_change() -> None:
    before = registry.generation()
    prism.hardware.reload_devices()
    assert registry.generation() > before


# -- 20. typos in a variant's backend or requirement keys -------------------------------------


def test_a_misspelt_backend_or_requirement_key_warns_at_registration() -> None:
    name = unique("typo")

    @prism.extending.operation(name=name, array_args=(0,))
    def op(x: Any) -> Any:
        return x

    def impl(x: Any) -> Any:
        return x

    with pytest.warns(prism.PrismWarning, match=r"backend 'numpi'.*did you mean 'numpy'"):
        op.variant(impl, backend="numpi", name=f"{name}.a")
    with pytest.warns(prism.PrismWarning, match=r"'knd'.*never be met.*did you mean 'kind'"):
        op.variant(impl, requires={"knd": "gpu"}, name=f"{name}.b")
    with pytest.warns(prism.PrismWarning, match=r"'tensor_core'.*did you mean 'tensor_cores'"):
        op.variant(impl, requires={"tensor_core": ">=3"}, name=f"{name}.c")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # known keys and an installed backend: nothing to say
        op.variant(impl, requires={"kind": "cpu", "avx2": True}, name=f"{name}.d")
    decision = prism.explain(op, np.ones(2))
    verdict = next(c for c in decision.candidates if c.variant == f"{name}.a")
    assert verdict.reasons == ("backend 'numpi' is not installed (did you mean 'numpy'?)",)


@pytest.mark.timeout(120)
def test_a_plugin_variant_for_a_misspelt_backend_is_a_plugin_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "typo-site"
    site.mkdir()
    (site / "prism_typo.py").write_text(
        textwrap.dedent(
            """
            import prism_core

            def add(a, b):
                return a + b

            @prism_core.extending.hookimpl
            def prism_variants():
                return [prism_core.extending.Variant("add", add, backend="nmpy", name="typo.add")]
            """
        ),
        encoding="utf-8",
    )
    put_distribution_on_path(
        monkeypatch, site, "prism-typo", "1.0", "[prism.plugins]\ntypo = prism_typo\n"
    )
    try:
        with pytest.warns(prism.extending.PluginWarning, match=r"'nmpy'.*did you mean 'numpy'"):
            ps = prism.extending.reload_plugins(autoload_settings())  # type: ignore[arg-type]
        assert any("did you mean 'numpy'" in p for p in ps.records["typo"].problems)
        with pytest.raises(prism.extending.PluginError, match=r"'nmpy'.*did you mean 'numpy'"):
            prism.extending.reload_plugins(autoload_settings(strict=True))  # type: ignore[arg-type]
    finally:
        sys.modules.pop("prism_typo", None)
        prism.extending.reload_plugins()


# -- 19. a plugin whose device files are invalid ----------------------------------------------

BAD_FILES = """
from pathlib import Path
import prism_core

@prism_core.extending.hookimpl
def prism_hardware_dirs():
    return [Path(__file__).parent / "prism_badfiles_hw"]
"""


@pytest.mark.timeout(180)
def test_a_plugin_with_invalid_device_files_shows_them_and_fails_when_strict(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    (site / "prism_badfiles_hw").mkdir(parents=True)
    (site / "prism_badfiles.py").write_text(textwrap.dedent(BAD_FILES), encoding="utf-8")
    (site / "prism_badfiles_hw" / "box.yaml").write_text(
        "device_type: lab.box\nkind: cpu\ncompute_units: many\n", encoding="utf-8"
    )
    info = site / "prism_badfiles-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: prism-badfiles\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[prism.plugins]\nbadfiles = prism_badfiles\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(site), *sys.path]),
        "PRISM_PLUGINS": "badfiles",
    }
    lenient = subprocess.run(
        [sys.executable, "-m", "prism_core", "plugins"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert lenient.returncode == 1, lenient.stdout + lenient.stderr
    assert "problem: badfiles (prism-badfiles 1.0): invalid device file:" in lenient.stdout
    assert "box.yaml" in lenient.stdout and "compute_units" in lenient.stdout
    strict = subprocess.run(
        [sys.executable, "-m", "prism_core", "plugins", "--json"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**env, "PRISM_STRICT_PLUGINS": "1"},
    )  # fmt: skip
    assert strict.returncode == 1
    record = next(r for r in json.loads(strict.stdout)["plugins"] if r["name"] == "badfiles")
    assert record["status"] == "failed"
    assert record["reason"].startswith("1 invalid device file: ") and "box.yaml" in record["reason"]
