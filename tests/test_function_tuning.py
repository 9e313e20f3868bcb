"""Choosing a placed function's backend by measurement (docs/functions.md, "Choosing by
measurement"): ``prism.tuning.tune(F, *args)``, the stored winner, ``explain``'s basis, tuning
on first use, and ``prism tune --show``.

The placements are real (NumPy, torch, JAX); the tuner's clock is a virtual one
(``VirtualClock``) on which only what the body declares for the backend it runs on takes time,
so the winner is certain however busy the machine is, and no test asserts a time.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core._tuning import tuner
from prism_core._tuning import tuning_records as tuning

from .conftest import run_prism
from .virtual_clock import VirtualClock

#: The installed torch and jax plugins, JAX in its default 32-bit mode (tests/conftest.py).
pytestmark = pytest.mark.usefixtures("jax_without_x64", "torch_and_jax")

CLOCK = VirtualClock()

#: Seconds one call of a body costs on the tuner's clock, by the kind of array it runs on.
COSTS = {"numpy": 1e-3, "torch": 1e-4, "jax": 5e-4}


def _cost(x: Any) -> None:
    """A body's work on the tuner's clock: what ``COSTS`` says for ``x``'s backend."""
    module = type(x).__module__
    kind = "jax" if module.startswith("jax") else module.partition(".")[0]
    CLOCK.advance(COSTS.get(kind, 0.0))


torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")


@pytest.fixture(autouse=True)
def _fresh_tuning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(tuner, "time", CLOCK)
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(COSTS, "numpy", 1e-3)
    monkeypatch.setitem(COSTS, "torch", 1e-4)
    tuning.reload()
    yield
    tuner.set_autotune(False)
    tuning.reload()


@pytest.fixture
def scaled() -> Any:
    @prism.function(backends=["numpy", "torch"])
    def scaled(x: Any, factor: float) -> Any:
        _cost(x)
        return x * factor

    return scaled


def _has(backend: str) -> None:
    from prism_core.kernel.dispatch.eligibility import available
    from prism_core.kernel.plugins import plugins

    found = plugins().backends.get(backend)
    if found is None or not available(found):
        pytest.skip(f"the {backend} backend is not available here")


def test_untuned_a_function_runs_where_its_arguments_live(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    decision = scaled.explain(x, 2.0)
    assert (decision.chosen, decision.decided_by) == ("numpy", "declared")
    assert decision.basis == "where the arguments live"
    out, report = scaled.run(x, 2.0)
    assert report.backend == "numpy" and report.moves == []  # no surprise copies
    assert out.tolist() == (x * 2).tolist()


def test_tune_stores_the_winner_and_calls_run_on_it(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    report = prism.tuning.tune(scaled, x, 2.0)
    (case,) = report.cases
    assert (case.winner, case.decided, case.declared) == ("torch", "measured", "numpy")
    assert {m.variant for m in case.measurements} == {"numpy", "torch"}
    assert report.stored == 1

    decision = prism.explain(scaled, x, 2.0)
    assert (decision.chosen, decision.decided_by) == ("torch", "measured")
    assert decision.basis.startswith("measured: torch ") and " vs numpy " in decision.basis
    assert decision.as_dict()["decided_by"] == "measured"
    out, ran = scaled.run(x, 2.0)
    assert ran.backend == "torch"
    assert isinstance(out, np.ndarray) and out.tolist() == (x * 2).tolist()  # NumPy in, out

    # The entry: the function's identity, the signature and the size bucket.
    (entry,) = [e for e in tuning.records() if e.op.startswith("function:")]
    assert entry.op.startswith("function:") and "scaled@" in entry.op
    assert entry.dtype == "numpy.ndarray float64, float"
    assert entry.bucket == tuning.bucket_of(8)
    assert entry.variants == ("numpy", "torch") and entry.winner == "torch"


def test_a_tie_within_the_noise_keeps_where_the_arguments_live(
    scaled: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _has("torch")
    monkeypatch.setitem(COSTS, "torch", COSTS["numpy"])
    x = np.arange(8.0)
    (case,) = prism.tuning.tune(scaled, x, 2.0).cases
    assert (case.winner, case.decided) == ("numpy", "tie")
    decision = scaled.explain(x, 2.0)
    assert (decision.chosen, decision.decided_by) == ("numpy", "tie")
    assert decision.basis.startswith("tie within the noise")
    assert decision.basis.endswith("where the arguments live")


def test_the_size_bucket_is_part_of_the_signature(scaled: Any) -> None:
    _has("torch")
    prism.tuning.tune(scaled, np.arange(8.0), 2.0)
    assert scaled.explain(np.arange(9.0), 2.0).decided_by == "measured"  # same bucket
    bigger = scaled.explain(np.arange(64.0), 2.0)
    assert (bigger.chosen, bigger.decided_by) == ("numpy", "declared")
    assert scaled.run(np.arange(64.0), 2.0)[1].backend == "numpy"
    assert scaled.run(np.arange(8.0), 2.0)[1].backend == "torch"


def test_a_scope_naming_a_backend_overrides_the_measurement(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    prism.tuning.tune(scaled, x, 2.0)
    with prism.use_backend("numpy"):
        decision = scaled.explain(x, 2.0)
        _out, report = scaled.run(x, 2.0)
    assert decision.decided_by == "scope" and report.backend == "numpy"


def _compiled(source: str) -> Any:
    namespace: dict[str, Any] = {"_cost": _cost, "__name__": __name__}
    exec(source, namespace)  # the same module and qualified name, another body
    return namespace["kernel"]


def test_an_edited_function_is_measured_again() -> None:
    _has("torch")
    first = _compiled("def kernel(x):\n    _cost(x)\n    return x + 1\n")
    edited = _compiled("def kernel(x):\n    _cost(x)\n    return x + 2\n")
    x = np.arange(8.0)
    placed = prism.function(first, backends=["numpy", "torch"])
    prism.tuning.tune(placed, x)
    assert placed.explain(x).decided_by == "measured"
    # The same code placed again keeps its measurement ...
    again = prism.function(_compiled("def kernel(x):\n    _cost(x)\n    return x + 1\n"))
    assert prism.function(again.fn, backends=["numpy", "torch"]).explain(x).decided_by == (
        "measured"
    )
    # ... an edited body does not inherit it.
    changed = prism.function(edited, backends=["numpy", "torch"])
    assert changed.explain(x).decided_by == "declared"
    prism.tuning.tune(changed, x)
    assert changed.explain(x).decided_by == "measured"
    ops = {e.op for e in tuning.records() if e.op.startswith("function:")}
    assert len(ops) == 2 and all(".kernel@" in op for op in ops)


def test_tuning_a_mutating_function_leaves_the_callers_arrays_alone() -> None:
    _has("torch")
    _has("jax")

    @prism.function
    def smooth(a: Any) -> Any:
        _cost(a)
        a[1:-1] = 0.5 * (a[:-2] + a[2:])
        return a.sum()

    a = np.arange(16, dtype=np.float32) ** 2
    before = a.copy()
    report = prism.tuning.tune(smooth, a)
    assert np.array_equal(a, before)  # every round ran on fresh copies
    (case,) = report.cases
    assert "jax" not in {m.variant for m in case.measurements}  # declined, not timed
    assert "jax: declined: updates arrays in place; jax arrays are immutable" in case.skipped
    assert "jax declined" in str(report) or "jax: declined" in str(report)
    assert smooth.declined == {"jax": "updates arrays in place; jax arrays are immutable"}
    assert case.winner == "torch"
    decision = smooth.explain(a)
    assert (decision.chosen, decision.decided_by) == ("torch", "measured")
    result = smooth(a)  # the call itself updates the caller's array, on torch
    assert a.tolist()[1] == pytest.approx(0.5 * (before[0] + before[2]))
    assert float(result) == pytest.approx(float(a.sum()))


def test_a_function_updating_with_plus_equals_is_declined_up_front_for_jax() -> None:
    _has("jax")

    @prism.function(backends=["numpy", "jax"])
    def bump(a: Any) -> Any:
        _cost(a)
        a += 1
        return a

    a = np.zeros(4, dtype=np.float32)
    (case,) = prism.tuning.tune(bump, a).cases
    assert a.tolist() == [0.0] * 4
    assert case.decided == "only" or not any(m.variant == "jax" for m in case.measurements)
    assert any(s.startswith("jax: updates arrays in place") for s in case.skipped)


def test_tuning_on_first_use_follows_set_autotune(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    _out, report = scaled.run(x, 2.0)  # autotune off: nothing measured
    assert report.backend == "numpy" and scaled.explain(x, 2.0).decided_by == "declared"

    @prism.function(backends=["numpy", "torch"])
    def fresh(x: Any, factor: float) -> Any:
        _cost(x)
        return x + factor

    prism.tuning.set_autotune(True)
    out, report = fresh.run(x, 1.0)  # measured, stored, then run on the winner
    assert report.backend == "torch" and out.tolist() == (x + 1).tolist()
    assert fresh.explain(x, 1.0).decided_by == "measured"


def test_threads_racing_to_tune_and_call(scaled: Any) -> None:
    _has("torch")
    prism.tuning.set_autotune(True)
    arrays = [np.arange(8.0) + i for i in range(8)]
    copies = [a.copy() for a in arrays]
    results: list[Any] = [None] * 16
    errors: list[BaseException] = []
    start = threading.Barrier(16)

    def work(i: int) -> None:
        try:
            start.wait()
            a = arrays[i % 8]
            if i % 2:
                prism.tuning.tune(scaled, a, 3.0, record=i % 4 == 1)
            results[i] = scaled(a, 3.0)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for i, out in enumerate(results):
        assert isinstance(out, np.ndarray) and out.tolist() == (copies[i % 8] * 3).tolist()
    assert all(np.array_equal(a, c) for a, c in zip(arrays, copies, strict=True))
    decision = scaled.explain(arrays[0], 3.0)
    assert decision.decided_by in ("measured", "tie")
    assert decision.chosen in ("numpy", "torch")


def test_prism_tune_show_lists_a_function(scaled: Any, tmp_path: Path) -> None:
    _has("torch")
    # `prism tune --show` runs without plugins (run_prism): another fingerprint, so the
    # function is tuned into that host's file.
    shown = run_prism(tmp_path, "tune", "--show", "--json")
    assert shown.returncode == 0, shown.stderr
    fingerprint = tuning.Fingerprint.of(json.loads(shown.stdout)["fingerprint"])
    store = tuning.TuningStore(tmp_path / "cache" / "tuning", fingerprint)
    report = prism.tuning.tune(scaled, np.arange(8.0), 2.0, store=store)
    assert report.stored == 1
    shown = run_prism(tmp_path, "tune", "--show")
    assert shown.returncode == 0, shown.stderr
    (line,) = [ln for ln in shown.stdout.splitlines() if "function:" in ln]
    assert ".scaled@" in line and "numpy.ndarray float64, float" in line
    assert "torch" in line and "measured" in line


def test_an_execution_policy_ranks_the_measured_placements(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    prism.tuning.tune(scaled, x, 2.0)  # torch 0.1 ms, numpy 1 ms on the tuner's clock
    policy = prism.ExecutionPolicy(priority="energy", max_latency_ms=0.5)
    with prism.execution_policy(policy):
        decision = scaled.explain(x, 2.0)
        out, report = scaled.run(x, 2.0)
    assert (decision.chosen, decision.decided_by) == ("torch", "policy")
    assert decision.basis.startswith("execution policy (energy, max_latency_ms=0.5): torch")
    assert report.backend == "torch" and out.tolist() == (x * 2).tolist()


def test_a_policy_no_measured_placement_meets_raises_naming_the_best(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    prism.tuning.tune(scaled, x, 2.0)
    with (
        prism.execution_policy(prism.ExecutionPolicy(max_latency_ms=0.01)),
        pytest.raises(prism.PolicyError, match=r"torch .* over max_latency_ms=0\.01") as caught,
    ):
        scaled(x, 2.0)
    assert caught.value.best.label.startswith("torch")


def test_untuned_a_policy_says_it_has_nothing_to_rank(scaled: Any) -> None:
    _has("torch")
    x = np.arange(8.0)
    with prism.execution_policy(prism.ExecutionPolicy(max_latency_ms=0.01)):
        decision = scaled.explain(x, 2.0)
        out = scaled(x, 2.0)  # runs: no measurement to hold against the limit
    assert (decision.chosen, decision.decided_by) == ("numpy", "declared")
    assert "not applied: no placement of this call was measured" in decision.basis
    assert out.tolist() == (x * 2).tolist()


def test_every_timed_call_gets_fresh_arguments() -> None:
    """A body that updates its argument cannot be run twice on what it left (here it refuses
    to): the tuner gives every call, warm-up included, fresh copies, so both placements are
    timed and none is discarded as failing."""
    _has("torch")

    @prism.function(backends=["numpy", "torch"])
    def once(a: Any) -> Any:
        _cost(a)
        if float(a[0]) != 0.0:
            raise RuntimeError("run again on the arguments it had updated")
        a[0] = 1.0
        return a.sum()

    x = np.zeros(8)
    (case,) = prism.tuning.tune(once, x).cases
    assert all(m.error is None for m in case.measurements), case.measurements
    assert (case.winner, case.decided) == ("torch", "measured")
    assert x[0] == 0.0  # the caller's array is as it was
