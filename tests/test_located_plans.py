"""Plans keyed by where arrays live: a backend whose arrays live on several devices under one
type gets a plan per place, so a call on data on the second device runs there at once,
without a per-call check declining the first device's variant.

The backend is a namespace backend over array-api-strict, whose arrays carry a device
(``CPU_DEVICE``, ``device1``, ``device2``: the standard's own stand-ins for accelerators),
installed as a plugin and found through its entry point.  Both targets compute on this host's
CPU (there is no accelerator here); what is checked is which variant dispatch chooses for data
on each device, and that the choice is made once per plan."""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import prism_core as prism
from prism_core.kernel.dispatch.location import Router, is_located

from .conftest import put_distribution_on_path

strict = pytest.importorskip("array_api_strict", reason="the namespace of these tests")

PLUGIN = """
import array_api_strict
import prism_core
from prism_core.backend_kit import NamespaceBackend, Target

def negative(x):
    # Fails on device1 (a device that lost its context, say), computes on the CPU.
    if x.device != array_api_strict.Device("CPU_DEVICE"):
        raise RuntimeError("device1 is lost")
    return array_api_strict.negative(x)


#: How often each backend was asked where an array lives, by the place it answered.
ASKED = {}


class Placed(NamespaceBackend):
    name = "placed"
    description = "array-api-strict with arrays on its CPU device or on device1"
    drives = {"kind": "cpu"}
    namespace = "array_api_strict"
    library = "array_api_strict"
    minimum = "2.0"
    array_types = ("array_api_strict._array_object:Array",)
    targets = (Target("cpu", {"kind": "cpu"}), Target("device1", {"kind": "cpu"}, 10))
    overrides = {"negative": negative}

    def device_for(self, target):
        return array_api_strict.Device("CPU_DEVICE" if target.name == "cpu" else target.name)

    def to_numpy(self, array):
        return super().to_numpy(array.to_device(array_api_strict.Device("CPU_DEVICE")))

    def where(self, array):
        place = "cpu" if array.device == array_api_strict.Device("CPU_DEVICE") else "device1"
        ASKED[place] = ASKED.get(place, 0) + 1
        return place


@prism_core.extending.hookimpl
def prism_backends():
    return [Placed()]


@prism_core.extending.hookimpl
def prism_variants():
    return Placed().variants(set(prism_core.all_ops()))
"""


@pytest.fixture
def placed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    site = tmp_path / "site"
    put_distribution_on_path(
        monkeypatch, site, "prism-placed", "1.0", "[prism.plugins]\nplaced = placed_plugin\n"
    )
    (site / "placed_plugin.py").write_text(textwrap.dedent(PLUGIN))
    ps = prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("placed",)))
    assert ps.records["placed"].status == "loaded", ps.records["placed"].reason
    import placed_plugin  # type: ignore[import-not-found]

    placed_plugin.ASKED.clear()
    prism.reset_fallbacks()
    yield placed_plugin
    prism.extending.reload_plugins()


def _on(place: str, values: object) -> object:
    device = strict.Device("CPU_DEVICE" if place == "cpu" else place)
    return strict.asarray(np.asarray(values, dtype=np.float64), device=device)


def test_data_on_the_second_device_gets_its_plan_at_once(placed: object) -> None:
    x = _on("device1", [[1.0, 2.0], [3.0, 4.0]])
    decision = prism.explain(prism.matmul, x, x)
    assert decision.chosen == "placed.device1.matmul"
    reasons = {c.variant: c.reasons for c in decision.candidates}
    # The host variant is no candidate for this plan: placement said so once, at plan time.
    assert reasons["placed.matmul"] == (
        "the data is on device1; placed.device1.matmul runs it there",
    )
    out = prism.matmul(x, x)
    assert out.device == strict.Device("device1")
    assert np.array_equal(prism.to_numpy(out), [[7.0, 10.0], [15.0, 22.0]])
    assert prism.fallbacks() == []


def test_each_place_has_its_own_plan_and_neither_declines_per_call(placed: object) -> None:
    here, there = _on("cpu", [1.0, 2.0, 3.0]), _on("device1", [1.0, 2.0, 3.0])
    assert not prism.explain(prism.add, here, here).from_cache
    assert prism.explain(prism.add, here, here).from_cache
    assert not prism.explain(prism.add, there, there).from_cache  # its own plan, not cached yet
    assert prism.explain(prism.add, here, here).chosen == "placed.add"
    assert prism.explain(prism.add, there, there).chosen == "placed.device1.add"
    for _ in range(3):
        assert prism.add(here, here).device == strict.Device("CPU_DEVICE")
        assert prism.add(there, there).device == strict.Device("device1")
    keys = [k for k in prism.add.op._plans if is_located(k)]
    assert sorted(k[1] for k in keys) == [("cpu", "cpu"), ("device1", "device1")]
    # Each place's plan runs its variant directly: no per-call check stands in the way.
    for key in keys:
        plan = prism.add.op._plans[key]
        assert plan.fn is not None and plan.check is None
    assert prism.fallbacks() == []


def test_mixed_places_have_their_own_plan(placed: object) -> None:
    """One argument on each device: each variant's placement declines the data on the other
    device (the kit's rule: data stays where it is), so the reference runs the call; the plan
    for this mix is its own, and the places' plans are untouched."""
    here, there = _on("cpu", [1.0, 2.0]), _on("device1", [3.0, 4.0])
    decision = prism.explain(prism.add, here, there)
    reasons = {c.variant: c.reasons for c in decision.candidates}
    assert reasons["placed.add"] == ("the data is on device1; placed.device1.add runs it there",)
    assert reasons["placed.device1.add"] == ("the data is on cpu; placed.add runs it there",)
    assert decision.chosen == "numpy.add"
    assert np.array_equal(np.asarray(prism.to_numpy(prism.add(here, there))), [4.0, 6.0])
    assert prism.explain(prism.add, there, there).chosen == "placed.device1.add"
    places = [k[1] for k in prism.add.op._plans if is_located(k)]
    assert ("cpu", "device1") in places and ("device1", "device1") in places


def test_a_failure_on_one_device_replaces_that_places_plan_alone(placed: object) -> None:
    here, there = _on("cpu", [1.0, -2.0]), _on("device1", [1.0, -2.0])
    with pytest.warns(prism.FallbackWarning, match="device1 is lost"):
        out = prism.negative(there)
    assert np.array_equal(prism.to_numpy(out), [-1.0, 2.0])
    assert [(r.variant, r.fell_back_to) for r in prism.fallbacks()] == [
        ("placed.device1.negative", "numpy.negative")
    ]
    assert np.array_equal(prism.to_numpy(prism.negative(there)), [-1.0, 2.0])  # no new warning
    assert prism.explain(prism.negative, there).chosen == "numpy.negative"
    assert prism.explain(prism.negative, here).chosen == "placed.negative"
    assert prism.negative(here).device == strict.Device("CPU_DEVICE")
    assert [r.count for r in prism.fallbacks()] == [1]


def test_numpy_arrays_never_meet_a_router(placed: object) -> None:
    """Arrays of a backend with one place (NumPy's) keep their plans as they were."""
    a = np.ones(3)
    prism.add(a, a)

    assert not any(isinstance(p, Router) for p in prism.add.op._plans.values())
    assert placed.ASKED == {}  # type: ignore[attr-defined]


def test_stack_of_arrays_on_a_device_is_located_by_its_items(placed: object) -> None:
    there = _on("device1", [1.0, 2.0])
    assert prism.explain(prism.stack, [there, there]).chosen == "placed.device1.stack"
    assert prism.stack([there, there]).device == strict.Device("device1")


@pytest.mark.timeout(60)
def test_threads_on_both_devices_at_once_each_get_their_places_plan(placed: object) -> None:
    here, there = _on("cpu", [1.0, 2.0]), _on("device1", [1.0, 2.0])
    want = {"cpu": strict.Device("CPU_DEVICE"), "device1": strict.Device("device1")}
    problems: list[str] = []
    barrier = threading.Barrier(8)

    def work(i: int) -> None:
        place, x = ("cpu", here) if i % 2 else ("device1", there)
        barrier.wait()
        for _ in range(200):
            if i % 3 == 0 and _ % 25 == 0:
                prism.extending.reload_plugins(prism.extending.PluginSettings(allow=("placed",)))
            out = prism.multiply(x, x)
            if out.device != want[place]:
                problems.append(f"{place}: result on {out.device}")
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    assert prism.fallbacks() == []
