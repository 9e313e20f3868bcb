"""The capability model of resolved descriptions, on shipped devices."""

from __future__ import annotations

import pytest

import prism_core
from prism_core.hardware import DeviceDescription, Feature, MemoryLevel, get_device


def test_h100_capabilities() -> None:
    h100 = get_device("nvidia.h100-sxm")
    assert isinstance(h100, DeviceDescription)
    assert (h100.vendor, h100.kind, h100.architecture) == ("nvidia", "gpu", "hopper")
    assert h100.parents == ("nvidia.hopper",)
    assert h100.ancestors == ("nvidia.hopper", "nvidia.gpu")
    assert h100.has_feature("tensor_cores")
    assert h100.has_feature("tensor_cores", ">=4")
    assert h100.has_feature("tensor_cores", 3)
    assert not h100.has_feature("tensor_cores", ">=5")
    assert not h100.has_feature("amx")
    assert h100.has_feature("amx", False)
    assert h100.supports("matmul", "bf16") and h100.supports("matmul", "fp8_e4m3")
    assert not h100.supports("matmul", "fp4")
    assert [f.name for f in h100.features_for("matmul", "fp8_e4m3")] == [
        "tensor_cores",
        "transformer_engine",
    ]
    assert h100.peak("bf16") == pytest.approx(989.4)
    assert h100.peak("fp4") is None
    assert h100.attribute("compute_capability") == "9.0"
    assert h100.attribute("nope", "default") == "default"
    glob = h100.memory_level("global")
    assert isinstance(glob, MemoryLevel)
    assert glob.size_bytes == 80 * 2**30 and glob.bandwidth_gbps == 3350
    assert h100.memory_bytes == 80 * 2**30
    assert h100.memory_level("l9") is None
    tc = h100.feature("tensor_cores")
    assert isinstance(tc, Feature) and tc.version == 4 and tc.supports("matmul", "tf32")
    assert ("tensor_cores", "matmul", "bf16") in set(h100.iter_supported())


def test_to_dict_is_a_deep_copy() -> None:
    h100 = get_device("nvidia.h100-sxm")
    d = h100.to_dict()
    d["attributes"]["compute_capability"] = "1.0"
    d["features"].clear()
    assert h100.attribute("compute_capability") == "9.0"
    assert h100.has_feature("tensor_cores")


def test_every_shipped_device_answers_the_capability_api() -> None:
    for dev in prism_core.hardware.devices(include_abstract=True):
        assert dev.lineage[0] == dev.device_type
        for name, feat in dev.features.items():
            assert dev.has_feature(name, True)
            assert dev.has_feature(name, f"=={feat.version}")
        for _, op, dt in dev.iter_supported():
            assert dev.supports(op, dt)
        for dt, value in dev.peak_tflops.items():
            assert dev.peak(dt) == pytest.approx(value) and value > 0
        if dev.memory_bytes is not None:
            assert dev.memory_bytes > 0


def test_public_names_show_the_public_module() -> None:
    for name in prism_core.__all__:
        obj = getattr(prism_core, name)
        if isinstance(obj, type):
            assert obj.__module__ == "prism_core", name
    assert len(prism_core.__all__) == len(set(prism_core.__all__))  # ruff (RUF022) keeps it sorted
