"""Host detection: the real CPU (archspec), matching it to descriptions, and BLAS (threadpoolctl).

The real-host tests assert invariants, not this machine's answer.  The synthetic CPUs are
``CpuInfo`` values built directly: data as archspec would report it on those machines.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from prism_core._blas import blas_info, blas_threads
from prism_core._host_report import HostReport, describe_host
from prism_core.kernel import host_cpu
from prism_core.kernel.description.library import DeviceLibrary, SearchEntry
from prism_core.kernel.errors import PrismError
from prism_core.kernel.host import DeviceInstance, host_cpu_instance
from prism_core.kernel.host_cpu import (
    CpuInfo,
    CpuMatch,
    detect_cpu,
    detection_features,
    match_cpu,
    normalize_family,
)

from .conftest import HARDWARE
from .test_tuning import _as_unprivileged_user


def flags(text: str) -> list[str]:
    """CPU flags written as /proc/cpuinfo lists them: separated by spaces."""
    return text.split()


X86_BASE = flags("fpu cx8 cmov fxsr mmx sse sse2 pni cx16 lahf_lm ssse3 sse4_1 sse4_2 popcnt")
X86_V3 = [*X86_BASE, *flags("avx avx2 bmi1 bmi2 f16c fma abm movbe xsave")]
AVX512_V4 = flags("avx512f avx512bw avx512cd avx512dq avx512vl")
ICELAKE = [
    *X86_V3,
    *AVX512_V4,
    *flags("avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg avx512_vpopcntdq"),
    *flags("aes pclmulqdq vaes vpclmulqdq gfni sha_ni adx rdrand rdseed rdpid clwb"),
]
ZEN4 = [
    *X86_V3,
    *AVX512_V4,
    *flags("avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg avx512_vpopcntdq"),
    *flags("avx512_bf16 aes pclmulqdq vaes vpclmulqdq gfni sha_ni sse4a clzero"),
]
SAPPHIRERAPIDS = [*ICELAKE, *flags("avx_vnni avx512_bf16 avx512_fp16 amx_tile amx_bf16 amx_int8")]
# Neoverse V1 flags as Linux reports them (a Graviton3-like host).
NEOVERSE_V1 = flags(
    "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma "
    "lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg "
    "dcpodp svei8mm svebf16 i8mm bf16 dgh rng"
)


def cpu(
    name: str,
    vendor: str,
    family: str,
    host_flags: list[str],
    brand: str = "",
) -> CpuInfo:
    return CpuInfo(name, vendor, family, frozenset(host_flags), brand, logical_cpus=8)


@pytest.fixture(scope="module")
def lib() -> DeviceLibrary:
    library = DeviceLibrary(use_cache=False)
    assert not library.problems
    return library


def assert_honest(match: CpuMatch, info: CpuInfo) -> None:
    """The chosen description claims no detection flag the host lacks, and fits its family."""
    assert match.description is not None
    assert detection_features(match.description) <= info.features
    assert match.description.data["detection"]["cpu"]["family"] == info.family
    assert not match.description.abstract
    assert match.description.kind == "cpu"


# -- the real host --------------------------------------------------------------------------


def test_normalize_family() -> None:
    assert normalize_family("AMD64") == "x86_64"
    assert normalize_family("arm64") == "aarch64"
    assert normalize_family("x86_64") == "x86_64"
    assert normalize_family("riscv64") == "riscv64"


def test_detect_cpu_reads_this_host() -> None:
    info = detect_cpu()
    assert info.source == "archspec", info.note
    assert info.family == normalize_family(platform.machine())
    assert info.name
    assert info.logical_cpus is not None and info.logical_cpus >= 1
    if info.family in ("x86_64", "aarch64"):
        assert info.features
        assert info.vendor
    if info.family == "x86_64":
        assert info.has("sse2")
    assert info.brand == info.brand.strip()
    assert "  " not in info.brand
    json.dumps(info.as_dict())


def test_detect_cpu_features_are_the_hosts_flags() -> None:
    """Features are what the OS reports, a superset of archspec's list for the name it chose."""
    archspec_cpu = pytest.importorskip("archspec.cpu")
    info = detect_cpu()
    assert frozenset(archspec_cpu.host().features) <= info.features


def test_real_host_matches_honestly(lib: DeviceLibrary) -> None:
    info = detect_cpu()
    match = match_cpu(info, lib)
    if info.family not in ("x86_64", "aarch64"):
        pytest.skip(f"the library has no CPU descriptions for {info.family}")
    assert_honest(match, info)
    assert match.candidates[0] == match.device_type
    assert not match.fallback
    if info.family == "x86_64":
        # Every x86_64 CPU made since 2009 has SSE4.2 and POPCNT.
        assert match.description is not None
        assert match.description.is_a("generic.x86-64-v2")
    for device_type, missing in match.missing_features.items():
        assert missing <= detection_features(lib.get(device_type))
        assert not missing & info.features


def test_host_cpu_instance(lib: DeviceLibrary) -> None:
    info = detect_cpu()
    if info.family not in ("x86_64", "aarch64"):
        pytest.skip(f"the library has no CPU descriptions for {info.family}")
    inst = host_cpu_instance(lib)
    assert isinstance(inst, DeviceInstance)
    assert type(inst).__module__ == "prism_core.hardware"
    assert inst.index == 0
    assert inst.source == "archspec"
    assert not inst.simulated
    assert inst.uuid is None
    assert inst.description is match_cpu(info, lib).description
    assert inst.name == (info.brand or inst.description.name)
    if sys.platform.startswith("linux"):
        assert inst.memory_bytes is not None and inst.memory_bytes > 2**26
    json.dumps(inst.as_dict())


# -- synthetic hosts ----------------------------------------------------------------------


def test_vm_hiding_avx512_is_v3_not_v4(lib: DeviceLibrary) -> None:
    """archspec's name is not trusted: without the AVX-512 flags, an icelake is x86-64-v3."""
    hidden = [f for f in ICELAKE if not f.startswith("avx512")]
    info = cpu("icelake", "GenuineIntel", "x86_64", hidden, "Intel(R) Xeon(R) Platinum 8375C")
    match = match_cpu(info, lib)
    assert match.device_type == "generic.x86-64-v3"
    assert_honest(match, info)
    assert "generic.x86-64-v4" not in match.candidates
    assert match.missing_features["generic.x86-64-v4"] == frozenset(AVX512_V4)
    sentence = next(r for r in match.reasons if r.startswith("generic.x86-64-v4:"))
    assert sentence == (
        "generic.x86-64-v4: host lacks avx512bw, avx512cd, avx512dq, avx512f, avx512vl"
    )


def test_full_icelake_is_v4(lib: DeviceLibrary) -> None:
    info = cpu("icelake", "GenuineIntel", "x86_64", ICELAKE, "Intel(R) Xeon(R) Platinum 8375C")
    match = match_cpu(info, lib)
    assert match.device_type == "generic.x86-64-v4"
    assert_honest(match, info)
    assert match.candidates == (
        "generic.x86-64-v4",
        "generic.x86-64-v3",
        "generic.x86-64-v2",
        "generic.x86-64",
    )


def test_ryzen_zen4_is_not_an_epyc(lib: DeviceLibrary) -> None:
    info = cpu("zen4", "AuthenticAMD", "x86_64", ZEN4, "AMD Ryzen 9 7950X 16-Core Processor")
    match = match_cpu(info, lib)
    assert match.device_type != "amd.epyc-9654"
    assert match.device_type == "generic.x86-64-v4"
    assert_honest(match, info)
    assert "amd.epyc-9654" not in match.candidates
    assert match.missing_features["amd.epyc-9654"] == frozenset()
    sentence = next(r for r in match.reasons if r.startswith("amd.epyc-9654:"))
    assert "'AMD Ryzen 9 7950X 16-Core Processor' does not match" in sentence


def test_epyc_9654_brand_with_zen4_flags(lib: DeviceLibrary) -> None:
    info = cpu("zen4", "AuthenticAMD", "x86_64", ZEN4, "AMD EPYC 9654 96-Core Processor")
    match = match_cpu(info, lib)
    assert match.device_type == "amd.epyc-9654"
    assert_honest(match, info)
    # The brand is matched case-insensitively and against the whole string.
    shouty = cpu("zen4", "AuthenticAMD", "x86_64", ZEN4, "amd epyc 9654p 96-core processor")
    assert match_cpu(shouty, lib).device_type == "amd.epyc-9654"
    longer = cpu("zen4", "AuthenticAMD", "x86_64", ZEN4, "AMD EPYC 96541 96-Core Processor")
    assert match_cpu(longer, lib).device_type == "generic.x86-64-v4"


def test_epyc_brand_without_zen4_flags_is_not_claimed(lib: DeviceLibrary) -> None:
    """A VM that hides AVX-512 BF16 does not get a description that claims it."""
    info = cpu(
        "zen3",
        "AuthenticAMD",
        "x86_64",
        [f for f in ZEN4 if f != "avx512_bf16"],
        "AMD EPYC 9654 96-Core Processor",
    )
    match = match_cpu(info, lib)
    assert match.device_type == "generic.x86-64-v4"
    assert match.missing_features["amd.epyc-9654"] == {"avx512_bf16"}


def test_epyc_brand_on_another_vendor_is_not_claimed(lib: DeviceLibrary) -> None:
    info = cpu("zen4", "GenuineIntel", "x86_64", ZEN4, "AMD EPYC 9654 96-Core Processor")
    match = match_cpu(info, lib)
    assert match.device_type == "generic.x86-64-v4"
    sentence = next(r for r in match.reasons if r.startswith("amd.epyc-9654:"))
    assert "AuthenticAMD" in sentence and "GenuineIntel" in sentence


def test_xeon_8480_needs_its_brand_and_amx(lib: DeviceLibrary) -> None:
    brand = "Intel(R) Xeon(R) Platinum 8480+"
    full = cpu("sapphirerapids", "GenuineIntel", "x86_64", SAPPHIRERAPIDS, brand)
    assert match_cpu(full, lib).device_type == "intel.xeon-platinum-8480"
    no_amx = [f for f in SAPPHIRERAPIDS if not f.startswith("amx")]
    hidden = cpu("sapphirerapids", "GenuineIntel", "x86_64", no_amx, brand)
    assert match_cpu(hidden, lib).device_type == "generic.x86-64-v4"
    other = cpu(
        "sapphirerapids", "GenuineIntel", "x86_64", SAPPHIRERAPIDS, "Intel(R) Xeon(R) Gold 6430"
    )
    assert match_cpu(other, lib).device_type == "generic.x86-64-v4"


def _library_has_product_names(lib: DeviceLibrary, device_type: str) -> bool:
    return bool(lib.get(device_type).data.get("detection", {}).get("product_names"))


def test_neoverse_v1_with_graviton3_brand(lib: DeviceLibrary) -> None:
    info = cpu("neoverse_v1", "ARM", "aarch64", NEOVERSE_V1, "AWS Graviton3 Processor")
    match = match_cpu(info, lib)
    assert_honest(match, info)
    if _library_has_product_names(lib, "aws.graviton3"):
        assert match.device_type == "aws.graviton3"
    else:
        assert match.device_type == "generic.aarch64"


def test_neoverse_v1_without_a_brand_is_generic(lib: DeviceLibrary) -> None:
    """Linux shows no model name on aarch64: a bare Neoverse V1 may not be a Graviton3."""
    info = cpu("neoverse_v1", "ARM", "aarch64", NEOVERSE_V1)
    match = match_cpu(info, lib)
    assert match.device_type == "generic.aarch64"
    assert_honest(match, info)
    assert not any(c.startswith("aws.") for c in match.candidates)


def test_graviton_brands_need_their_cores(lib: DeviceLibrary) -> None:
    """A Graviton4 brand on Neoverse V1 flags (no SVE2) is not a Graviton4."""
    info = cpu("neoverse_v1", "ARM", "aarch64", NEOVERSE_V1, "AWS Graviton4 Processor")
    match = match_cpu(info, lib)
    assert match.device_type == "generic.aarch64"
    assert "sve2" in match.missing_features["aws.graviton4"]


def test_no_flags_falls_back_to_the_baseline(lib: DeviceLibrary) -> None:
    info = CpuInfo("x86_64", "", "x86_64", frozenset(), note="archspec is not available")
    match = match_cpu(info, lib)
    assert match.fallback
    assert match.device_type == "generic.x86-64"
    assert match.candidates == ()
    assert "falling back to generic.x86-64" in match.reasons[-1]


def test_unknown_family_matches_nothing(lib: DeviceLibrary) -> None:
    info = cpu("u74mc", "SiFive", "riscv64", ["rv64imafdc"])
    match = match_cpu(info, lib)
    assert match.description is None
    assert match.device_type is None
    assert not match.fallback
    assert match.candidates == ()
    assert "no CPU description matches this riscv64 host" in match.reasons[-1]
    # Every rejection of another family says so, and compares no flags.
    for reason in match.reasons[:-1]:
        assert "the host is riscv64" in reason
    assert all(not missing for missing in match.missing_features.values())
    json.dumps(match.as_dict())
    with pytest.raises(PrismError, match="riscv64"):
        host_cpu_instance(lib, cpu=info)


def test_only_concrete_cpu_descriptions_are_candidates(lib: DeviceLibrary) -> None:
    info = cpu("zen4", "AuthenticAMD", "x86_64", ZEN4, "AMD EPYC 9654 96-Core Processor")
    match = match_cpu(info, lib)
    rejected = set(match.missing_features)
    considered = rejected | set(match.candidates)
    assert considered == {d.device_type for d in lib.list(kind="cpu")}
    assert "amd.zen4" not in considered  # abstract
    assert len(match.reasons) == len(rejected)


def test_match_cpu_uses_the_default_library() -> None:
    info = cpu("icelake", "GenuineIntel", "x86_64", ICELAKE)
    assert match_cpu(info).device_type == "generic.x86-64-v4"


#: What the specific models call themselves (``model name`` in /proc/cpuinfo, lscpu).
BRANDS = {
    "amd.epyc-9654": "AMD EPYC 9654 96-Core Processor",
    "intel.xeon-platinum-8480": "Intel(R) Xeon(R) Platinum 8480+",
    "aws.graviton2": "AWS Graviton2 Processor",
    "aws.graviton3": "AWS Graviton3 Processor",
    "aws.graviton4": "AWS Graviton4 Processor",
    "apple.m4-max-cpu": "Apple M4 Max",
}


def test_shipped_cpu_descriptions_are_all_reachable(lib: DeviceLibrary) -> None:
    """Each concrete CPU description is what a host with exactly its detection data gets."""
    checked = 0
    for desc in lib.list(kind="cpu"):
        if desc.path is None or HARDWARE not in desc.path.parents:
            continue
        detection = desc.data["detection"]
        if detection.get("product_names") and desc.device_type not in BRANDS:
            continue  # a model this test does not know the brand string of
        family = detection["cpu"]["family"]
        vendor = detection["cpu"].get("vendor", "GenuineIntel" if family == "x86_64" else "ARM")
        flags = sorted(detection_features(desc))
        info = cpu("synthetic", vendor, family, flags, BRANDS.get(desc.device_type, ""))
        assert match_cpu(info, lib).device_type == desc.device_type
        checked += 1
    assert checked >= len(BRANDS) + 5


# -- BLAS -----------------------------------------------------------------------------------


def _blas_threads_now() -> list[int]:
    import threadpoolctl

    return [p["num_threads"] for p in threadpoolctl.threadpool_info() if p["user_api"] == "blas"]


def test_blas_info_lists_numpys_blas() -> None:
    pytest.importorskip("threadpoolctl")
    pytest.importorskip("numpy")
    pools = blas_info()
    assert isinstance(pools, list)
    blas = [p for p in pools if p["user_api"] == "blas"]
    assert blas, pools
    for pool in pools:
        assert pool["user_api"] in ("blas", "openmp")
        assert isinstance(pool["num_threads"], int) and pool["num_threads"] >= 1
        assert pool["internal_api"]
        assert "filepath" in pool
    json.dumps(pools)


def test_blas_threads_limits_and_restores() -> None:
    pytest.importorskip("threadpoolctl")
    blas_info()  # loads numpy's BLAS
    before = _blas_threads_now()
    assert before
    with blas_threads(1) as limiter:
        assert _blas_threads_now() == [1] * len(before)
        assert limiter is not None
    assert _blas_threads_now() == before


def test_blas_threads_applies_on_entry_only() -> None:
    pytest.importorskip("threadpoolctl")
    blas_info()
    before = _blas_threads_now()
    manager = blas_threads(1)
    assert _blas_threads_now() == before
    with manager:
        assert set(_blas_threads_now()) == {1}
    assert _blas_threads_now() == before


def test_blas_threads_leaves_the_environment_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("threadpoolctl")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    snapshot = dict(os.environ)
    with blas_threads(1):
        assert dict(os.environ) == snapshot
    assert dict(os.environ) == snapshot


@pytest.mark.parametrize("limit", [0, -1, True, 1.5, "2"])
def test_blas_threads_rejects_bad_limits(limit: object) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        blas_threads(limit)  # type: ignore[arg-type]


# -- the report -----------------------------------------------------------------------------


def test_describe_host_round_trips_through_json(lib: DeviceLibrary) -> None:
    report = describe_host(lib)
    assert isinstance(report, HostReport)
    data = report.as_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["cpu"]["family"] == normalize_family(platform.machine())
    assert data["match"]["device_type"] == report.match.device_type
    assert isinstance(data["blas"], list)
    assert report.description is report.match.description


def test_describe_host_with_a_synthetic_cpu(lib: DeviceLibrary) -> None:
    info = cpu("zen4", "AuthenticAMD", "x86_64", ZEN4, "AMD EPYC 9654 96-Core Processor")
    report = describe_host(lib, cpu=info)
    assert report.cpu is info
    assert report.as_dict()["match"]["device_type"] == "amd.epyc-9654"


def test_public_types_live_in_prism_core_hardware() -> None:
    for cls in (CpuInfo, DeviceInstance):
        assert cls.__module__ == "prism_core.hardware"


def test_importing_prism_core_host_is_light() -> None:
    """archspec, threadpoolctl and numpy are imported on use, not with the module."""
    code = (
        "import sys, prism_core.kernel.host\n"
        "heavy = {'archspec', 'threadpoolctl', 'numpy'} & {m.split('.')[0] for m in sys.modules}\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_present_devices_on_this_host() -> None:
    """The host CPU is present as an instance of its description; no plugin here finds more."""
    import prism_core

    found = prism_core.hardware.present_devices()
    assert isinstance(found, prism_core.hardware.PresentDevices)
    cpu = found.devices[0]
    assert isinstance(cpu, prism_core.hardware.DeviceInstance)
    assert cpu.description.kind == "cpu"
    assert cpu.index == 0 and cpu.source in ("archspec", "platform")
    assert (
        cpu.description.device_type
        == prism_core.hardware.get_device(cpu.description.device_type).device_type
    )
    # Anything beyond the CPU comes from a loaded plugin's detection, with a real description.
    loaded = {r.name for r in prism_core.extending.plugins().loaded}
    for dev in found.devices[1:]:
        assert dev.source in loaded
        assert dev.description.device_type in {d.device_type for d in prism_core.hardware.devices()}


# -- accelerators: detection hints and what software sees of a package ------------------------


def test_detection_hints_map_a_pci_function_to_its_own_description(lib: DeviceLibrary) -> None:
    from prism_core.kernel.host import match_detected_device

    h100 = match_detected_device(
        lib, vendor_id="0x10de", device_id="0x2330", product_name="NVIDIA H100 80GB HBM3"
    )
    assert h100 is not None and h100.device_type == "nvidia.h100-sxm"
    # The PCI id alone is not enough where the description names its products...
    assert match_detected_device(lib, vendor_id="0x10de", device_id="0x2330") is None
    # ...and a name that contradicts the description rules it out.
    assert (
        match_detected_device(lib, vendor_id="0x10de", device_id="0x2330", product_name="NVIDIA L4")
        is None
    )
    # A vendor id alone (a family's hint) identifies no device.
    assert match_detected_device(lib, vendor_id="0x10de") is None
    # Descriptions without product names are found by their PCI ids.
    trn2 = match_detected_device(lib, vendor_id="0x1d0f", device_id="0x7364")
    assert trn2 is not None and trn2.device_type == "aws.trainium2"
    assert match_detected_device(lib, vendor_id="0x1d0f", device_id="0x0000") is None


def test_inherited_hints_do_not_identify_a_device(
    tmp_path: Path, write_yaml: Callable[[str, str], Path]
) -> None:
    """A child that only inherits the H100's hints does not take its place in detection."""
    from prism_core.kernel.host import match_detected_device

    write_yaml("d/tuned.yaml", "device_type: lab.h100-tuned\nextends: nvidia.h100-sxm\n")
    lib = DeviceLibrary(
        [SearchEntry(HARDWARE, "builtin"), SearchEntry(tmp_path / "d", "user")], use_cache=False
    )
    found = match_detected_device(
        lib, vendor_id="0x10de", device_id="0x2330", product_name="NVIDIA H100 80GB HBM3"
    )
    assert found is not None and found.device_type == "nvidia.h100-sxm"


def test_software_devices_of_a_package(lib: DeviceLibrary) -> None:
    from prism_core.kernel.host import software_devices

    h100 = lib.get("nvidia.h100-sxm")
    assert software_devices(h100, lib) == (h100,)
    trn2 = lib.get("aws.trainium2")
    assert len(software_devices(trn2, lib)) == 4
    with pytest.raises(LookupError, match=r"no partition mode 'lnc3'.*lnc2, lnc1"):
        software_devices(trn2, lib, mode="lnc3")


DETECT_PLUGIN = """\
from prism_core.extending import DetectedDevice, Detection, hookimpl

@hookimpl
def prism_detect_devices(library):
    return Detection((
        DetectedDevice("aws.trainium2", index=1, name="Trainium2", uuid="chip-1",
                       memory_bytes=96 * 2**30),
        DetectedDevice("intel.max-1550", index=0, name="Max 1550", partition_mode="composite"),
        DetectedDevice("amd.mi250x-gcd", index=3, name="AMD Instinct MI250X"),
        DetectedDevice("aws.trainium2", index=2, name="Trainium2", partition_mode="lnc3"),
    ))
"""


def test_present_devices_expands_a_detected_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A plugin that reports a package gets the devices software sees, never the package
    twice over; one that names a partition mode gets that mode."""
    import prism_core

    from .conftest import put_distribution_on_path

    site = tmp_path / "site"
    site.mkdir()
    (site / "prism_test_detect_packages.py").write_text(DETECT_PLUGIN, encoding="utf-8")
    put_distribution_on_path(
        monkeypatch,
        site,
        "prism-test-detect-packages",
        "1.0",
        "[prism.plugins]\ndetect-packages = prism_test_detect_packages\n",
    )
    monkeypatch.setenv("PRISM_PLUGINS", "detect-packages")
    found = prism_core.hardware.present_devices()
    mine = [d for d in found.devices if d.source == "detect-packages"]
    assert [(d.device_type, d.index, d.package, d.partition) for d in mine] == [
        ("aws.trainium2-lnc2", 4, "aws.trainium2", 0),
        ("aws.trainium2-lnc2", 5, "aws.trainium2", 1),
        ("aws.trainium2-lnc2", 6, "aws.trainium2", 2),
        ("aws.trainium2-lnc2", 7, "aws.trainium2", 3),
        ("intel.max-1550", 0, None, None),
        ("amd.mi250x-gcd", 3, None, None),
    ]
    assert {d.memory_bytes for d in mine[:4]} == {24 * 2**30}
    assert {d.uuid for d in mine[:4]} == {"chip-1"}
    assert all(d.description.compute_units == 2 for d in mine[:4])
    assert "no partition mode 'lnc3'" in found.notes["detect-packages:aws.trainium2:2"]
    json.dumps([d.as_dict() for d in mine])


SAME_GPU_PLUGIN = """\
from prism_core.extending import DetectedDevice, Detection, hookimpl

@hookimpl
def prism_detect_devices(library):
    return Detection((
        DetectedDevice("nvidia.h100-sxm", index=0, name="NVIDIA H100 80GB HBM3", uuid="GPU-aaaa"),
        DetectedDevice("nvidia.h100-sxm", index=1, name="NVIDIA H100 80GB HBM3", uuid="{second}"),
    ))
"""


def test_a_gpu_two_plugins_report_is_present_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cuda and torch plugins both ask nvidia-smi: one instance per UUID, the first
    plugin's; GPUs with other UUIDs are all kept."""
    import prism_core

    from .conftest import put_distribution_on_path

    site = tmp_path / "site"
    site.mkdir()
    for name, second in (("one", "GPU-bbbb"), ("two", "GPU-cccc")):
        module = f"prism_test_same_gpu_{name}"
        text = SAME_GPU_PLUGIN.replace("{second}", second)
        (site / f"{module}.py").write_text(text, encoding="utf-8")
        put_distribution_on_path(
            monkeypatch, site, f"prism-test-same-gpu-{name}", "1.0",
            f"[prism.plugins]\nsame-gpu-{name} = {module}\n",
        )  # fmt: skip
    monkeypatch.setenv("PRISM_PLUGINS", "same-gpu-one,same-gpu-two")
    found = prism_core.hardware.present_devices()
    gpus = [(d.uuid, d.source) for d in found.devices if d.device_type == "nvidia.h100-sxm"]
    assert sorted(gpus) == [
        ("GPU-aaaa", "same-gpu-one"),
        ("GPU-bbbb", "same-gpu-one"),
        ("GPU-cccc", "same-gpu-two"),
    ]


# -- the CPU's identification, kept in the cache directory ---------------------------
#
# Real files in the test's own cache directory (conftest's PRISM_CACHE_DIR), the real
# /proc/cpuinfo and the real archspec; a CPU this host is not is an entry kept under the key of
# a /proc/cpuinfo this host does not have.

LINUX_CPUINFO = pytest.mark.skipif(
    host_cpu._first_processor() is None, reason="no readable /proc/cpuinfo: nothing is cached"
)


def _cache_file() -> Path:
    return Path(os.environ["PRISM_CACHE_DIR"]) / host_cpu.CPU_CACHE_FILE


def _entry(key: str, name: str) -> str:
    """A cache file whose entry, kept under ``key``, says the CPU is called ``name``."""
    cpu = {"name": name, "vendor": "Lab", "family": "x86_64", "features": ["sse2", "lab_flag"]}
    return json.dumps({"format": 1, "key": key, "cpu": cpu})


def _archspecs_answer() -> CpuInfo:
    return host_cpu._detect_cpu()


@LINUX_CPUINFO
def test_the_first_detection_keeps_archspecs_answer() -> None:
    pytest.importorskip("archspec.cpu")
    assert not _cache_file().exists()
    found = host_cpu._identify_cpu()
    assert found == _archspecs_answer()
    kept = json.loads(_cache_file().read_text())
    where = host_cpu._cpu_cache()
    assert where is not None and kept["key"] == where[1]
    assert kept["cpu"] == {
        "name": found.name,
        "vendor": found.vendor,
        "family": found.family,
        "features": sorted(found.features),
    }
    assert not list(_cache_file().parent.glob("*.tmp"))


@LINUX_CPUINFO
def test_a_kept_identification_is_used() -> None:
    """An entry under this host's key is the answer: archspec is not asked (its answer would
    not be called ``lab-cpu``); the brand and the CPU count are read afresh."""
    where = host_cpu._cpu_cache()
    assert where is not None
    _cache_file().write_text(_entry(where[1], "lab-cpu"))
    found = host_cpu._identify_cpu()
    assert (found.name, found.vendor, found.family) == ("lab-cpu", "Lab", "x86_64")
    assert found.features == frozenset({"sse2", "lab_flag"})
    assert found.source == "archspec" and found.note == ""
    assert found.logical_cpus == os.cpu_count()
    assert found.brand == host_cpu._brand()


@LINUX_CPUINFO
@pytest.mark.timeout(120)
def test_a_warm_process_does_not_import_archspec() -> None:
    """Two fresh interpreters: the first asks archspec and keeps its answer, the second takes
    it from the cache directory without importing archspec (or subprocess, which it imports)."""
    pytest.importorskip("archspec.cpu")
    code = (
        "import json, sys; from prism_core.kernel.host_cpu import detect_cpu; "
        "info = detect_cpu().as_dict(); "
        "print(json.dumps([info, 'archspec' in sys.modules, 'subprocess' in sys.modules]))"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
        for _ in range(2)
    ]
    assert runs[0][0] == runs[1][0]  # the same identification, brand and count included
    assert runs[0][1] is True
    assert runs[1][1:] == [False, False]


@LINUX_CPUINFO
def test_another_cpuinfo_is_a_miss(tmp_path: Path) -> None:
    """An entry kept for a /proc/cpuinfo that differs from this host's (another CPU, one flag
    fewer: a new kernel or microcode) is not used; archspec is asked and its answer replaces
    the entry."""
    block = host_cpu._first_processor()
    assert block is not None
    other = block.replace(b"sse2", b"sse2_gone", 1) if b"sse2" in block else block + b"\nx: 1"
    other_key = host_cpu._cpu_cache_key(other)
    where = host_cpu._cpu_cache()
    assert where is not None and other_key is not None and other_key != where[1]
    _cache_file().write_text(_entry(other_key, "another-cpu"))
    found = host_cpu._identify_cpu()
    assert found.name != "another-cpu"
    assert found == _archspecs_answer()
    assert json.loads(_cache_file().read_text())["key"] == where[1]


def test_the_clock_lines_are_not_part_of_the_key(tmp_path: Path) -> None:
    """``cpu MHz`` changes from one read to the next where the clock scales: two reads that
    differ only there give one key; any other byte of the first block gives another; the
    blocks of the other processors are not read."""
    first = (
        "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Lab CPU\n"
        "cpu MHz\t\t: {mhz}\nflags\t\t: fpu sse sse2 avx2\n\n"
        "processor\t: 1\ncpu MHz\t\t: {mhz}\n{more}\n"
    )
    reads = {}
    for name, mhz, more in (
        ("one", "2400.000", ""),
        ("two", "3187.553", "flags\t\t: fpu"),
        ("three", "2400.000", ""),
    ):
        path = tmp_path / name
        text = first.format(mhz=mhz, more=more)
        if name == "three":
            text = text.replace("avx2", "avx512f")
        path.write_text(text)
        reads[name] = host_cpu._first_processor(str(path))
    assert reads["one"] == reads["two"]
    assert reads["one"] is not None and b"MHz" not in reads["one"]
    assert b"avx2" in reads["one"] and b"processor\t: 1" not in reads["one"]
    assert host_cpu._cpu_cache_key(reads["one"]) == host_cpu._cpu_cache_key(reads["two"])
    assert reads["three"] is not None
    assert host_cpu._cpu_cache_key(reads["one"]) != host_cpu._cpu_cache_key(reads["three"])
    assert host_cpu._first_processor(str(tmp_path / "missing")) is None


@LINUX_CPUINFO
@pytest.mark.parametrize(
    "damage",
    [
        "{not json",
        "",
        "[1, 2]",
        '{"format": 2, "key": "KEY", "cpu": {}}',
        '{"format": 1, "key": "KEY"}',
        '{"format": 1, "key": "KEY", "cpu": {"name": "x", "vendor": "y", "family": "z"}}',
        '{"format": 1, "key": "KEY", "cpu": '
        '{"name": "x", "vendor": "y", "family": "z", "features": "sse2"}}',
        '{"format": 1, "key": "KEY", "cpu": '
        '{"name": 1, "vendor": "y", "family": "z", "features": []}}',
    ],
    ids=[
        "not-json",
        "empty",
        "a-list",
        "another-format",
        "no-cpu",
        "no-features",
        "features-not-a-list",
        "name-not-text",
    ],
)
def test_a_damaged_file_is_replaced(damage: str) -> None:
    where = host_cpu._cpu_cache()
    assert where is not None
    _cache_file().write_text(damage.replace("KEY", where[1]))
    assert host_cpu._identify_cpu() == _archspecs_answer()
    assert json.loads(_cache_file().read_text())["key"] == where[1]  # rewritten whole


@LINUX_CPUINFO
@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("PRISM_NO_CACHE", "1"),
        ("ARCHSPEC_CPU_DIR", "/nonexistent"),
        ("ARCHSPEC_EXTENSION_CPU_DIR", "/x"),
    ],
)
def test_no_cache_where_it_would_not_be_right(
    monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """PRISM_NO_CACHE turns it off; archspec's database replaced or extended through its
    variables is not covered by the key, so the cache is neither read nor written."""
    where = host_cpu._cpu_cache()
    assert where is not None
    _cache_file().write_text(_entry(where[1], "lab-cpu"))
    before = _cache_file().read_bytes()
    monkeypatch.setenv(variable, value)
    assert host_cpu._cpu_cache() is None
    if variable == "PRISM_NO_CACHE":
        assert host_cpu._identify_cpu() == _archspecs_answer()
        assert _cache_file().read_bytes() == before


@pytest.fixture
def read_only_dir() -> Iterator[Path]:
    """A directory nobody can write to that every user can read (pytest's tmp_path is private
    to its owner, and root writes anywhere: the test drops to another user)."""
    top = Path(tempfile.mkdtemp(prefix="prism-host-"))
    top.chmod(0o755)
    directory = top / "cache"
    directory.mkdir(mode=0o555)
    directory.chmod(0o555)
    yield directory
    directory.chmod(0o755)
    shutil.rmtree(top)


@LINUX_CPUINFO
@pytest.mark.timeout(60)
def test_a_read_only_cache_directory_is_not_an_error(
    read_only_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the cache directory cannot be written, archspec answers and nothing is kept.

    The cache's place and key are found here, before dropping privileges: the key names
    archspec's installed version, which a user without privileges cannot read where the
    environment lives under a private directory (so that what is tested is the read-only
    cache directory, not what that user may read elsewhere)."""
    pytest.importorskip("archspec.cpu")  # imported before the unprivileged child forks
    directory = read_only_dir
    monkeypatch.setenv("PRISM_CACHE_DIR", str(directory))
    for name in ("PRISM_NO_CACHE", *host_cpu._ARCHSPEC_VARIABLES):
        monkeypatch.delenv(name, raising=False)
    where = host_cpu._cpu_cache()
    assert where is not None and where[0] == str(directory / host_cpu.CPU_CACHE_FILE)
    monkeypatch.setattr(host_cpu, "_cpu_cache", lambda: where)
    expected = _archspecs_answer().as_dict()

    seen = _as_unprivileged_user(lambda: {"found": host_cpu._identify_cpu().as_dict()})
    assert seen["found"] == expected
    assert list(directory.iterdir()) == []
