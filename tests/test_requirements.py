"""Requirements matched against shipped devices: verdicts, and a reason for each unmet clause."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prism_core.hardware import Requirement, RequirementError, get_device


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
        # never met: features name the device files' data types, not Prism's nor invented ones
        ({"supports": {"matmul": "float16"}}, r"'float16' is not .* \(did you mean 'fp16'\?\)"),
        ({"supports": {"matmul": ["bf16", "fp99"]}}, r"'supports': 'fp99' is not a data type"),
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


# -- CPU instruction-set flags --------------------------------------------------------------------


def _cpu_descriptions() -> list[Any]:
    from prism_core.hardware import devices

    return [d for d in devices(kind="cpu", include_abstract=True) if d.cpu_flags]


def test_every_shipped_cpu_description_lists_flags() -> None:
    from prism_core.hardware import devices

    cpus = devices(kind="cpu")
    assert cpus
    assert all(d.cpu_flags for d in cpus), [d.device_type for d in cpus if not d.cpu_flags]


@pytest.mark.parametrize("cpu", _cpu_descriptions(), ids=lambda d: d.device_type)
def test_isa_flags_match_on_every_shipped_cpu(cpu: Any) -> None:
    """Each flag a CPU description lists meets ``{flag: True}`` (bare or ``flag:``); each flag
    another CPU lists and this one does not is unmet, with a sentence naming it."""
    everything = frozenset().union(*(d.cpu_flags for d in _cpu_descriptions()))
    for flag in sorted(cpu.cpu_flags):
        assert cpu.satisfies({flag: True}).ok, flag
        assert cpu.satisfies({f"flag:{flag}": True}).ok, flag
        if cpu.feature(flag) is None and flag not in cpu.attributes:
            assert not cpu.satisfies({flag: False}).ok, flag
    for flag in sorted(everything - cpu.cpu_flags):
        if cpu.feature(flag) is not None or flag in cpu.attributes:
            continue  # a feature or attribute of that name answers a bare name
        assert cpu.satisfies({flag: True}).reasons == (
            f"{cpu.device_type} has no feature, attribute or CPU flag {flag!r} (required True)",
        )
        assert cpu.satisfies({flag: False}).ok
        assert cpu.satisfies({f"flag:{flag}": True}).reasons == (
            f"{cpu.device_type} does not list the CPU flag {flag!r} (required True)",
        )


def test_the_flag_names_users_know() -> None:
    for device_type in ("generic.x86-64-v4", "intel.xeon-platinum-8480", "amd.epyc-9654"):
        assert get_device(device_type).satisfies({"kind": "cpu", "avx512f": True}).ok
    v3 = get_device("generic.x86-64-v3")
    assert v3.satisfies({"avx2": True, "fma": True}).ok
    assert v3.satisfies({"avx512f": True}).reasons == (
        "generic.x86-64-v3 has no feature, attribute or CPU flag 'avx512f' (required True)",
    )
    assert get_device("aws.graviton3").satisfies({"sve": True}).ok
    assert get_device("aws.graviton4").satisfies({"sve2": True, "flag:sve2": True}).ok
    graviton2 = get_device("aws.graviton2")
    assert graviton2.satisfies({"flag:sve": True}).reasons == (
        "aws.graviton2 does not list the CPU flag 'sve' (required True)",
    )
    assert graviton2.satisfies({"flag:sve": False}).ok
    # A flag is present or absent: other values are unmet, saying so.
    assert get_device("generic.x86-64-v4").satisfies({"avx512f": ">=2"}).reasons == (
        "CPU flag avx512f is present; a CPU flag is present or absent, so require true or "
        "false, not '>=2'",
    )
    assert get_device("generic.x86-64-v4").satisfies({"flag:avx512f": False}).reasons == (
        "CPU flag avx512f is present but required absent",
    )
    # A spelling that differs only in underscores is named; an absent flag gets no guess.
    assert v3.satisfies({"flag:avx_2": True}).reasons == (
        "generic.x86-64-v3 does not list the CPU flag 'avx_2' (required True) "
        "(did you mean 'avx2'?)",
    )
    assert get_device("intel.xeon-platinum-8480").satisfies({"avx512bf16": True}).reasons == (
        "intel.xeon-platinum-8480 has no feature, attribute or CPU flag 'avx512bf16' "
        "(required True) (did you mean 'avx512_bf16'?)",
    )
    # Devices that are not CPUs have no flags.
    assert get_device("nvidia.h100-sxm").satisfies({"flag:avx512f": True}).reasons == (
        "nvidia.h100-sxm lists no CPU flags (it is a gpu, not a CPU) (required 'avx512f')",
    )


@pytest.mark.parametrize("value", [3, ">=1", "yes", ["a"]])
def test_flag_clauses_take_true_or_false(value: Any) -> None:
    with pytest.raises(RequirementError, match="a CPU flag is present or absent"):
        Requirement({"flag:avx512f": value})


def test_variants_share_the_requirements_they_ask_alike() -> None:
    """Plugins give hundreds of variants the same few mappings: each is parsed once.  A mapping
    with other values (a list) is parsed for each variant, ``True`` and ``1`` are told apart (a
    flag takes the one, not the other), and a malformed mapping is refused each time."""
    from prism_core.extending import Variant

    def make(requires: Any) -> Variant:
        return Variant("matmul", "numpy:matmul", requires=requires)

    cpu = make({"kind": "cpu"})
    assert make({"kind": "cpu"}).requirement is cpu.requirement
    assert make(None).requirement is make({}).requirement
    assert make({"flag:avx2": True}).requirement is make({"flag:avx2": True}).requirement
    listed = make({"vendor": ["nvidia", "amd"]})
    assert listed.requirement == make({"vendor": ["nvidia", "amd"]}).requirement
    assert listed.requirement is not make({"vendor": ["nvidia", "amd"]}).requirement
    for _ in range(2):
        with pytest.raises(RequirementError, match="a CPU flag is present or absent"):
            make({"flag:avx2": 1})
