"""Requirements matched against shipped devices: verdicts, and a reason for each unmet clause."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prism_core import Requirement, RequirementError, get_device


@pytest.fixture(scope="module")
def h100() -> Any:
    return get_device("nvidia.h100-sxm")


def test_met_requirement(h100: Any) -> None:
    match = h100.satisfies(
        {
            "vendor": "nvidia",
            "kind": ["gpu", "npu"],
            "ancestry": "nvidia.hopper",
            "compute_capability": ">=8.0",
            "tensor_cores": 3,
            "feature:tma": True,
            "attribute:warp_size": 32,
            "supports": {"matmul": ["bf16", "fp8_e4m3"]},
            "compute_units": ">=100",
            "sparse_magic": False,
        }
    )
    assert match.ok and bool(match)
    assert match.reasons == ()
    assert "vendor: 'nvidia'" in match.met


@pytest.mark.parametrize(
    ("clause", "reason"),
    [
        ({"vendor": "amd"}, "vendor is 'nvidia', required 'amd'"),
        ({"kind": ["cpu", "npu"]}, "kind is 'gpu', required 'cpu' or 'npu'"),
        (
            {"device_type": "nvidia.h200"},
            "device_type is 'nvidia.h100-sxm', required 'nvidia.h200'",
        ),
        (
            {"ancestry": "nvidia.ampere"},
            "nvidia.h100-sxm does not derive from 'nvidia.ampere' "
            "(lineage: nvidia.h100-sxm -> nvidia.hopper -> nvidia.gpu)",
        ),
        ({"tensor_cores": 5}, "feature tensor_cores version is 4, required at least 5"),
        ({"tensor_cores": ">=2,<4"}, "feature tensor_cores version is 4, required >=2,<4"),
        (
            {"compute_capability": ">=10.0"},
            "attribute compute_capability is '9.0', required >=10.0",
        ),
        (
            {"attribute:tensor_cores": True},
            "nvidia.h100-sxm has no attribute 'tensor_cores' (required True)",
        ),
        (
            {"feature:compute_capability": True},
            "nvidia.h100-sxm has no feature 'compute_capability' (required True)",
        ),
        ({"tma": False}, "feature tma version is present (1) but required absent"),
        ({"amx": True}, "nvidia.h100-sxm has no feature or attribute 'amx' (required True)"),
        (
            {"supports": {"matmul": "fp4"}},
            "no feature of nvidia.h100-sxm accelerates matmul in fp4",
        ),
        ({"compute_units": 200}, "compute_units is 132, required at least 200"),
        ({"architecture": "blackwell"}, "architecture is 'hopper', required 'blackwell'"),
    ],
)
def test_unmet_clause_has_a_sentence(h100: Any, clause: dict[str, Any], reason: str) -> None:
    match = h100.satisfies(clause)
    assert not match.ok
    assert match.reasons == (reason,)
    assert match.explain() == reason


def test_every_unmet_clause_is_reported(h100: Any) -> None:
    match = h100.satisfies({"vendor": "amd", "tensor_cores": 9, "supports": {"matmul": "fp4"}})
    assert len(match.reasons) == 3


def test_attribute_that_is_not_a_version() -> None:
    assert (
        Requirement({"attribute:compute_capability": "==9.0"})
        .match(get_device("nvidia.h100-sxm"))
        .ok
    )
    mi300x = get_device("amd.mi300x")
    assert mi300x.satisfies({"gfx_target": "gfx942"}).ok
    match = Requirement({"gfx_target": ">=9"}).match(mi300x)
    assert match.reasons == (
        "attribute gfx_target is 'gfx942', which is not a version to compare with '>=9'",
    )


def test_requirements_on_cpus_and_features_with_versions() -> None:
    epyc = get_device("amd.epyc-9654")
    assert epyc.satisfies({"kind": "cpu", "ancestry": "generic.x86-64-v3"}).ok
    graviton = get_device("aws.graviton3")
    assert not graviton.satisfies({"ancestry": "generic.x86-64"}).ok


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"tensor_cores": ">=three"}, "not a valid version specifier"),
        ({"tensor_cores": None}, "has no value"),
        ({"tensor_cores": {"a": 1}}, "is not accepted"),
        ({"vendor": 3}, "expected a string or a list of strings"),
        ({"supports": "matmul"}, "expected a mapping of operation to data type"),
        ({"supports": {"matmul": [1]}}, "give a data type or a list"),
        ({"Bad Name": True}, "is not a feature or attribute name"),
        ({"featur:x": True}, "unknown prefix 'featur'"),
        ({3: True}, "requirement keys are strings"),
    ],
)
def test_malformed_requirements_raise_clearly(mapping: dict[Any, Any], message: str) -> None:
    with pytest.raises(RequirementError, match=message):
        Requirement(mapping)


def test_requirement_value_semantics() -> None:
    req = Requirement({"vendor": "nvidia", "tensor_cores": 3})
    assert req == Requirement({"tensor_cores": 3, "vendor": "nvidia"})
    assert hash(req) == hash(Requirement({"tensor_cores": 3, "vendor": "nvidia"}))
    assert req.specificity == 2
    assert "tensor_cores" in repr(req)


_versions = st.lists(st.integers(0, 20), min_size=1, max_size=3).map(
    lambda v: ".".join(map(str, v))
)
_ops = st.sampled_from([">=", "<=", "==", "!=", ">", "<"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_ops, _versions), min_size=1, max_size=3))
def test_specifiers_agree_with_packaging(parts: list[tuple[str, str]]) -> None:
    """Any specifier set is accepted, and the verdict is packaging's for the device's version."""
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    spec = ",".join(op + v for op, v in parts)
    h100 = get_device("nvidia.h100-sxm")
    match = h100.satisfies({"compute_capability": spec})
    expected = Version("9.0") in SpecifierSet(spec, prereleases=True)
    assert match.ok is expected
    if not expected:
        assert match.reasons == (f"attribute compute_capability is '9.0', required {spec}",)
