"""Execution policies (prism_core._tuning.execution_policy): ranking, constraints, errors."""

from __future__ import annotations

import dataclasses

import pytest

import prism_core as prism
from prism_core._tuning.execution_policy import (
    PRIORITIES,
    ExecutionPolicy,
    PolicyError,
    choose,
)
from prism_core._tuning.model import PerformanceModel
from prism_core._tuning.predictions import PerformanceRow


def row(
    device: str,
    seconds: float,
    *,
    price: float | None = None,
    tdp: float | None = None,
    data: float = 1e9,
    count: int = 1,
) -> PerformanceRow:
    """A row as the model makes one: cost and energy from a price per hour and a TDP."""
    per_hour = None if price is None else price * count
    return PerformanceRow(
        device_type=device,
        count=count,
        seconds=seconds,
        throughput=data / seconds,
        cost_per_run=None if per_hour is None else per_hour * seconds / 3600,
        cost_per_hour=per_hour,
        energy_j=None if tdp is None else tdp * count * seconds,
        bound="compute",
        data_bytes=data,
    )


FAST = row("fast.gpu", 0.010, price=36.0, tdp=1000)  # $0.0001 a run, 10 J
CHEAP = row("cheap.gpu", 0.100, price=0.36, tdp=300)  # $0.00001 a run, 30 J
FRUGAL = row("frugal.gpu", 0.200, price=3.6, tdp=25)  # $0.0002 a run, 5 J
HOST = row("host.cpu", 0.050)  # no price, no TDP
ROWS = [HOST, FRUGAL, CHEAP, FAST]


# -- the policy object -----------------------------------------------------------------------------


def test_defaults_and_public_module() -> None:
    policy = ExecutionPolicy()
    assert policy.priority == "speed"
    assert (policy.max_latency_ms, policy.min_throughput, policy.max_cost_per_hour) == (
        None,
        None,
        None,
    )
    assert ExecutionPolicy.__module__ == "prism_core"
    assert PolicyError.__module__ == "prism_core"
    assert issubclass(PolicyError, prism.PrismError) and issubclass(PolicyError, ValueError)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.priority = "energy"  # type: ignore[misc]
    assert ExecutionPolicy("energy", max_latency_ms=5) == ExecutionPolicy(
        priority="energy", max_latency_ms=5.0
    )


def test_the_seeds_policies() -> None:
    time_critical = ExecutionPolicy(priority="speed", max_latency_ms=500, cost_constraint=None)
    budget = ExecutionPolicy(
        priority="cost_efficiency",
        min_throughput=100,
        max_cost_per_hour=10.0,
    )
    assert time_critical.max_latency_ms == 500.0
    assert time_critical.max_cost_per_run is None
    assert budget.describe() == "cost_efficiency, min_throughput=100, max_cost_per_hour=10"
    # cost_constraint is the seed's name for max_cost_per_run.
    assert ExecutionPolicy(cost_constraint=0.5).max_cost_per_run == 0.5


def test_arguments_are_validated_with_the_accepted_values() -> None:
    with pytest.raises(ValueError, match="priority") as info:
        ExecutionPolicy(priority="sped")
    assert str(info.value) == (
        "ExecutionPolicy(): priority must be one of 'speed', 'cost_efficiency', 'latency', "
        "'throughput', 'energy'; got 'sped' (did you mean 'speed'?)"
    )
    with pytest.raises(ValueError, match=r"max_latency_ms must be > 0 \(milliseconds\)"):
        ExecutionPolicy(max_latency_ms=-1)
    with pytest.raises(TypeError, match=r"min_throughput must be a number \(bytes per second\)"):
        ExecutionPolicy(min_throughput="fast")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"max_cost_per_hour must be a number"):
        ExecutionPolicy(max_cost_per_hour=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"give max_cost_per_run or cost_constraint"):
        ExecutionPolicy(max_cost_per_run=1, cost_constraint=2)
    with pytest.raises(TypeError):
        ExecutionPolicy("speed", 500)  # type: ignore[misc]  # constraints are keywords
    assert PRIORITIES == ("speed", "cost_efficiency", "latency", "throughput", "energy")


# -- ranking -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("priority", "expected"),
    [
        ("speed", [FAST, HOST, CHEAP, FRUGAL]),
        ("latency", [FAST, HOST, CHEAP, FRUGAL]),
        ("throughput", [FAST, HOST, CHEAP, FRUGAL]),
        # Rows without a price rank last.
        ("cost_efficiency", [CHEAP, FAST, FRUGAL, HOST]),
        ("energy", [FRUGAL, FAST, CHEAP, HOST]),
    ],
)
def test_each_priority_ranks_its_own_way(priority: str, expected: list[PerformanceRow]) -> None:
    chosen, ranked = choose(ROWS, ExecutionPolicy(priority))
    assert ranked == expected
    assert chosen is expected[0]


def test_throughput_differs_from_speed_when_data_differs() -> None:
    big = row("big.batch", 0.5, data=100e9)  # 200 GB/s
    small = row("small.batch", 0.1, data=1e9)  # 10 GB/s
    assert choose([big, small], ExecutionPolicy("speed"))[0] is small
    assert choose([big, small], ExecutionPolicy("throughput"))[0] is big


def test_ties_break_by_time_then_label() -> None:
    a = row("a.gpu", 0.1, price=36.0)
    b = row("b.gpu", 0.2, price=18.0)  # the same cost per run, slower
    c = row("c.gpu", 0.1, price=36.0)
    assert choose([c, b, a], ExecutionPolicy("cost_efficiency"))[1] == [a, c, b]


def test_constraints_filter_and_keep_the_rest_ranked() -> None:
    # The cheapest that finishes within 60 ms: the fast one (the cheap one takes 100 ms).
    policy = ExecutionPolicy("cost_efficiency", max_latency_ms=60)
    chosen, ranked = policy.choose(ROWS)
    assert chosen is FAST
    # Those meeting the constraint first (the unpriced host last of them), then the others.
    assert ranked == [FAST, HOST, CHEAP, FRUGAL]
    assert policy.misses(CHEAP) == (
        "cheap.gpu x1 takes 100 ms, 40 ms (67 %) over max_latency_ms=60",
    )
    assert policy.misses(HOST) == ()


def test_a_price_constraint_is_unmet_without_a_price() -> None:
    policy = ExecutionPolicy(max_cost_per_hour=10)
    assert policy.misses(HOST) == (
        "host.cpu x1 has no cloud_price, so max_cost_per_hour=10 is unmet",
    )
    assert policy.misses(FAST) == (
        "fast.gpu x1 costs $36 per hour, $26 (260 %) over max_cost_per_hour=10",
    )
    assert policy.choose(ROWS)[0] is CHEAP  # the fastest within budget


def test_min_throughput_and_cost_per_run() -> None:
    policy = ExecutionPolicy(min_throughput=20e9, max_cost_per_run=0.00015)
    assert policy.misses(CHEAP) == (
        "cheap.gpu x1 processes 10 GB/s, 10 GB/s (50 %) under min_throughput=2e+10 B/s",
    )
    assert policy.misses(FRUGAL) == (
        "frugal.gpu x1 processes 5 GB/s, 15 GB/s (75 %) under min_throughput=2e+10 B/s",
        "frugal.gpu x1 costs $0.0002 per run, $5e-05 (33 %) over max_cost_per_run=0.00015",
    )
    assert policy.choose(ROWS)[0] is FAST


def test_nothing_meets_the_constraints() -> None:
    l4 = row("nvidia.l4", 0.812)
    other = row("other.gpu", 0.9)
    with pytest.raises(PolicyError) as info:
        choose([other, l4], ExecutionPolicy(max_latency_ms=500))
    err = info.value
    assert str(err) == (
        "no candidate meets the policy (speed, max_latency_ms=500); the best under speed: "
        "nvidia.l4 x1 takes 812 ms, 312 ms (62 %) over max_latency_ms=500; none of the other 1 "
        "candidate meets them either"
    )
    assert err.best is l4
    assert err.rows == (l4, other)
    assert err.misses == ("nvidia.l4 x1 takes 812 ms, 312 ms (62 %) over max_latency_ms=500",)


def test_the_best_candidate_is_the_best_under_the_priority() -> None:
    policy = ExecutionPolicy("energy", max_latency_ms=5)
    with pytest.raises(PolicyError, match=r"the best under energy: frugal.gpu x1 takes 200 ms"):
        choose(ROWS, policy)


def test_choose_needs_rows_and_a_policy() -> None:
    with pytest.raises(ValueError, match="no candidates"):
        choose([])
    with pytest.raises(TypeError, match=r"policy must be a prism_core\.ExecutionPolicy"):
        choose(ROWS, "speed")  # type: ignore[arg-type]
    assert choose(ROWS)[0] is FAST  # speed by default


def test_rows_of_the_model_on_real_descriptions() -> None:
    """The model's rows for a 1 GB memory-bound pattern on three priced devices."""
    model = PerformanceModel(host_device_type=None)
    model.register_pattern("scan", compute_intensity=0.25)
    table = model.predict_performance(
        "scan", 1e9, ["nvidia.h100-sxm", "aws.trainium", "aws.inferentia2", "nvidia.l4"]
    )
    assert choose(table, ExecutionPolicy("speed"))[0].device_type == "nvidia.h100-sxm"
    # Trainium and Inferentia2 have the same figures; Inferentia2 costs less per hour.
    assert choose(table, ExecutionPolicy("cost_efficiency"))[0].device_type == "aws.inferentia2"
    # The L4's 72 W beat the H100's 700 W; the Neuron chips have no TDP.
    assert choose(table, ExecutionPolicy("energy"))[0].device_type == "nvidia.l4"


# -- a device of this host, which has no price ---------------------------------------------------


def test_the_seeds_budget_policy_runs_on_a_host_without_a_price(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The seed's budget policy (002, "Policy-Based Selection"), as the seed writes it, on a host
    whose devices have no cloud_price: a device of one's own is free to use."""
    import numpy as np

    import prism_core as pr

    monkeypatch.delenv("PRISM_HOST_PRICE", raising=False)
    rng = np.random.default_rng(0)
    routine_sequences, reference = rng.standard_normal((64, 64)), rng.standard_normal((64, 64))

    def analyze_variants(seq: np.ndarray, ref: np.ndarray) -> np.ndarray:
        return pr.matmul(seq, ref)

    # fmt: off
    budget_policy = pr.ExecutionPolicy(
        priority="cost_efficiency",
        min_throughput=100,  # sequences per minute
        max_cost_per_hour=10.0
    )
    # fmt: on

    with pr.execution_policy(budget_policy):
        batch_results = analyze_variants(routine_sequences, reference)
        decision = pr.explain("matmul", routine_sequences, reference)
    np.testing.assert_allclose(batch_results, routine_sequences @ reference)
    assert decision.basis.note.startswith("policy cost_efficiency")
    host = pr.hardware.present_devices().devices[0].device_type
    assert f"on {host} at $0/hour: a device of this host without a cloud_price is free" in (
        decision.basis.note
    )
    assert "PRISM_HOST_PRICE" in decision.basis.note


def test_prism_host_price_prices_this_hosts_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    a = np.ones((32, 32))
    monkeypatch.setenv("PRISM_HOST_PRICE", "25")
    with prism.execution_policy(ExecutionPolicy("cost_efficiency", max_cost_per_hour=11.0)):
        with pytest.raises(PolicyError, match=r"costs \$25 per hour.*over max_cost_per_hour=11"):
            prism.matmul(a, a)
    with prism.execution_policy(ExecutionPolicy("cost_efficiency", max_cost_per_hour=30.0)):
        decision = prism.explain("matmul", a, a)
    assert "at $25/hour (PRISM_HOST_PRICE)" in decision.basis.note
    monkeypatch.setenv("PRISM_HOST_PRICE", "cheap")
    with prism.execution_policy(ExecutionPolicy("cost_efficiency", max_cost_per_hour=12.0)):
        with pytest.raises(ValueError, match=r"PRISM_HOST_PRICE='cheap'.*US dollars per hour"):
            prism.explain("matmul", a, a)
