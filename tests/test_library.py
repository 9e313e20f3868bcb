"""The device library: shipped files, search path, inheritance, duplicates, the validation cache."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import prism_core
from prism_core import PrismWarning
from prism_core.hardware import (
    DeviceFileError,
    DeviceLibrary,
    SearchEntry,
    UnknownDeviceError,
    get_device,
    load_device_file,
    validate_paths,
)

from .conftest import HARDWARE, SEED

WriteYaml = Callable[[str, str], Path]
SHIPPED = sorted(HARDWARE.rglob("*.yaml"))
MODELINE = "# yaml-language-server: $schema=../../schemas/device.schema.json\n"


def test_shipped_library_loads_without_problems() -> None:
    lib = DeviceLibrary()
    assert lib.problems == []
    assert len(lib) == len(SHIPPED)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_shipped_file_conventions(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.startswith(MODELINE), "every shipped file starts with the editor schema line"
    (report,) = validate_paths([path])
    assert report.problems == []
    vendor_dir = path.parent.name
    assert report.device_type == f"{vendor_dir}.{path.stem}", "file name = device type"
    desc = get_device(report.device_type)
    assert desc.vendor and desc.kind, "vendor and kind are given or inherited"
    assert desc.data.get("sources"), "numbers have sources"
    if not desc.abstract and desc.vendor != "generic":
        assert desc.data.get("name"), "real devices have a display name"
        assert desc.compute_units, "real devices give their compute units"
        assert desc.memory, "real devices give their memory hierarchy"
        assert desc.peak_tflops, "real devices give peak throughput"
        assert all(s.startswith("https://") for s in desc.data["sources"])


REQUIRED_DEVICES = [
    "nvidia.a100-sxm-80gb",
    "nvidia.h100-sxm",
    "nvidia.h200",
    "nvidia.b200",
    "nvidia.l4",
    "amd.mi300x",
    "intel.max-1550",
    "aws.graviton2",
    "aws.graviton3",
    "aws.graviton4",
    "aws.trainium",
    "aws.trainium2",
    "aws.inferentia2",
    "google.tpu-v5e",
    "huawei.ascend-910b",
    "tenstorrent.wormhole-n300",
    "amd.epyc-9654",
    "intel.xeon-platinum-8480",
    "generic.x86-64",
    "generic.x86-64-v2",
    "generic.x86-64-v3",
    "generic.x86-64-v4",
    "generic.aarch64",
]


def test_library_has_the_required_devices_and_families() -> None:
    real = {d.device_type for d in prism_core.hardware.devices()}
    assert len(real) >= 24
    assert set(REQUIRED_DEVICES) <= real
    families = {d.device_type for d in prism_core.hardware.devices(include_abstract=True)} - real
    assert {"nvidia.hopper", "nvidia.ampere", "nvidia.blackwell", "amd.cdna3"} <= families
    assert get_device("nvidia.h100-sxm").is_a("nvidia.hopper")
    assert get_device("amd.epyc-9654").is_a("generic.x86-64-v4")
    assert get_device("aws.graviton3").is_a("generic.aarch64")


def test_devices_filters() -> None:
    cpus = prism_core.hardware.devices(kind="cpu")
    assert cpus and all(d.kind == "cpu" for d in cpus)
    nvidia = prism_core.hardware.devices(vendor="nvidia")
    assert {d.vendor for d in nvidia} == {"nvidia"}
    assert all(not d.abstract for d in nvidia)


def test_unknown_device_suggests_close_names() -> None:
    with pytest.raises(UnknownDeviceError, match=r"did you mean 'nvidia.h100-sxm'") as info:
        get_device("nvidia.h100-sx")
    assert isinstance(info.value, LookupError)
    assert info.value.device_type == "nvidia.h100-sx"


# -- inheritance ----------------------------------------------------------------------------

FAMILY = """\
device_type: lab.family
abstract: true
vendor: lab
kind: gpu
architecture: arch1
attributes: {compute_capability: "8.0", warp_size: 32}
peak_tflops: {fp32: 10, fp16: 20}
memory_hierarchy:
  - {level: global, size_bytes: 1000, bandwidth_gbps: 10}
  - {level: l2, size_bytes: 100}
features:
  - {name: tensor_cores, version: 3, operations: [{name: matmul, data_types: [fp16]}]}
  - {name: tma, version: 1}
host_link: {interface: pcie4-x16, bandwidth_gbps: 64}
"""

CHILD = """\
device_type: lab.child
extends: lab.family
name: Lab Child
attributes: {compute_capability: "9.0"}
peak_tflops: {fp32: 15}
memory_hierarchy:
  - {level: global, size_bytes: 2000}
  - {level: shared, size_bytes: 10, scope: compute_unit}
features:
  - {name: tensor_cores, version: 4, operations: [{name: matmul, data_types: [bf16]}]}
host_link: {bandwidth_gbps: 128}
"""


def lib_of(*dirs: Path) -> DeviceLibrary:
    return DeviceLibrary([SearchEntry(d, "user") for d in dirs], use_cache=False)


def test_inheritance_merges_by_the_documented_rules(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("lab/family.yaml", FAMILY)
    write_yaml("lab/child.yaml", CHILD)
    lib = lib_of(tmp_path / "lab")
    assert lib.problems == []
    child = lib.get("lab.child")
    # Not inherited: name, abstract, device_type.
    assert child.name == "Lab Child" and not child.abstract
    # Scalars inherited.
    assert (child.vendor, child.kind, child.architecture) == ("lab", "gpu", "arch1")
    # Mappings merged key by key, the child winning.
    assert child.attributes == {"compute_capability": "9.0", "warp_size": 32}
    assert child.peak_tflops == {"fp32": 15, "fp16": 20}
    # Keyed lists: entry by entry, a child's entry replacing its parent's whole.
    assert [m.level for m in child.memory] == ["global", "l2", "shared"]
    glob = child.memory_level("global")
    assert glob is not None and glob.size_bytes == 2000 and glob.bandwidth_gbps is None
    assert child.features["tensor_cores"].version == 4
    assert child.supports("matmul", "bf16") and not child.supports("matmul", "fp16")
    assert child.has_feature("tma")
    # Links are replaced whole.
    assert child.data["host_link"] == {"bandwidth_gbps": 128}
    # Provenance says where each value came from.
    assert child.provenance["vendor"] == "lab.family"
    assert child.provenance["attributes.warp_size"] == "lab.family"
    assert child.provenance["attributes.compute_capability"] == "lab.child"
    assert child.provenance["features[tma]"] == "lab.family"
    assert child.provenance["features[tensor_cores]"] == "lab.child"
    assert child.lineage == ("lab.child", "lab.family")


def test_first_parent_wins_over_later_parents(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/a.yaml", "device_type: lab.a\nvendor: lab\nattributes: {x: a, only_a: 1}\n")
    write_yaml("d/b.yaml", "device_type: lab.b\nkind: gpu\nattributes: {x: b, only_b: 2}\n")
    write_yaml("d/c.yaml", "device_type: lab.c\nextends: [lab.a, lab.b]\n")
    c = lib_of(tmp_path / "d").get("lab.c")
    assert c.attributes == {"x": "a", "only_a": 1, "only_b": 2}
    assert (c.vendor, c.kind) == ("lab", "gpu")
    assert c.lineage == ("lab.c", "lab.a", "lab.b")


def test_missing_parent_is_located_at_extends(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/x.yaml", "device_type: lab.x\nkind: gpu\nextends: nvidia.hoper\n")
    lib = lib_of(HARDWARE, tmp_path / "d")
    (problem,) = lib.problems
    assert (problem.line, problem.column, problem.json_path) == (3, 1, "$.extends")
    assert "parent device type 'nvidia.hoper' is not defined" in problem.message
    assert "did you mean 'nvidia.hopper'" in problem.message
    assert "lab.x" not in lib


def test_cycles_are_errors(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/a.yaml", "device_type: lab.a\nextends: lab.b\n")
    write_yaml("d/b.yaml", "device_type: lab.b\nextends: lab.c\n")
    write_yaml("d/c.yaml", "device_type: lab.c\nextends: lab.a\n")
    write_yaml("d/self.yaml", "device_type: lab.self\nextends: lab.self\n")
    lib = lib_of(tmp_path / "d")
    messages = sorted(str(p) for p in lib.problems)
    assert len(messages) == 4, "each member of a cycle is reported, at its own `extends`"
    assert (
        "a.yaml:2:1: $.extends: inheritance cycle: lab.a -> lab.b -> lab.c -> lab.a" in messages[0]
    )
    assert (
        "b.yaml:2:1: $.extends: inheritance cycle: lab.b -> lab.c -> lab.a -> lab.b" in messages[1]
    )
    assert (
        "c.yaml:2:1: $.extends: inheritance cycle: lab.c -> lab.a -> lab.b -> lab.c" in messages[2]
    )
    assert "self.yaml:2:1: $.extends: inheritance cycle: lab.self -> lab.self" in messages[3]
    assert len(lib) == 0


def test_child_of_an_invalid_parent_is_reported(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/a.yaml", "device_type: lab.a\nextends: lab.gone\n")
    write_yaml("d/b.yaml", "device_type: lab.b\nextends: lab.a\n")
    lib = lib_of(tmp_path / "d")
    messages = sorted(str(p) for p in lib.problems)
    assert any("a.yaml:2:1: $.extends: parent device type 'lab.gone'" in m for m in messages)
    assert any(
        "b.yaml:2:1: $.extends: parent device type 'lab.a' could not be loaded" in m
        for m in messages
    )


def test_duplicate_type_in_one_entry_names_both_files(
    tmp_path: Path, write_yaml: WriteYaml
) -> None:
    first = write_yaml("d/one.yaml", "device_type: lab.same\nkind: cpu\n")
    second = write_yaml("d/sub/two.yaml", "device_type: lab.same\nkind: gpu\n")
    lib = lib_of(tmp_path / "d")
    (problem,) = lib.problems
    assert problem.file.endswith("two.yaml") and problem.line == 1
    assert str(first.name) in problem.message
    assert lib.get("lab.same").path == first
    assert second.exists()


def test_later_entry_overrides_a_shipped_device(tmp_path: Path, write_yaml: WriteYaml) -> None:
    mine = write_yaml(
        "mine/h100.yaml", "device_type: nvidia.h100-sxm\nextends: nvidia.hopper\ncompute_units: 7\n"
    )
    lib = DeviceLibrary([SearchEntry(HARDWARE, "builtin"), SearchEntry(mine.parent, "user")])
    assert lib.problems == []
    h100 = lib.get("nvidia.h100-sxm")
    assert h100.compute_units == 7
    assert h100.path == mine and h100.origin == "user"
    assert h100.overrides == (HARDWARE / "nvidia" / "h100-sxm.yaml",)
    assert h100.has_feature("tensor_cores", ">=4")


def test_prism_hardware_path_is_searched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, write_yaml: WriteYaml
) -> None:
    write_yaml("a/mygpu.yaml", "device_type: lab.mygpu\nextends: nvidia.hopper\ncompute_units: 3\n")
    write_yaml("b/mycpu.yml", "device_type: lab.mycpu\nextends: generic.x86-64-v3\n")
    monkeypatch.setenv("PRISM_HARDWARE_PATH", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    prism_core.hardware.reload_devices()
    assert get_device("lab.mygpu").is_a("nvidia.gpu")
    assert get_device("lab.mycpu").kind == "cpu"


def test_broken_user_file_is_skipped_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, write_yaml: WriteYaml
) -> None:
    write_yaml("u/bad.yaml", "device_type: lab.bad\ncompute_units: many\n")
    write_yaml("u/good.yaml", "device_type: lab.good\nkind: cpu\n")
    monkeypatch.setenv("PRISM_HARDWARE_PATH", str(tmp_path / "u"))
    with pytest.warns(PrismWarning, match=r"bad.yaml:2:16: \$.compute_units: expected an integer"):
        prism_core.hardware.reload_devices()
    assert get_device("lab.good").kind == "cpu"
    assert get_device("nvidia.h100-sxm").compute_units == 132


def test_missing_search_path_entry_is_reported(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PRISM_HARDWARE_PATH", str(tmp_path / "nowhere"))
    with pytest.warns(PrismWarning, match="PRISM_HARDWARE_PATH entry .*nowhere.*: no such file"):
        prism_core.hardware.reload_devices()
    assert "nvidia.h100-sxm" in {d.device_type for d in prism_core.hardware.devices()}


# -- validate_paths and load_device_file ----------------------------------------------------


def test_validate_paths_resolves_against_the_library(tmp_path: Path, write_yaml: WriteYaml) -> None:
    ok = write_yaml("ok.yaml", "device_type: lab.ok\nextends: nvidia.hopper\n")
    bad = write_yaml("bad.yaml", "device_type: lab.bad\nextends: nvidia.nope\n")
    reports = {r.path.name: r for r in validate_paths([ok, bad])}
    assert reports["ok.yaml"].valid and reports["ok.yaml"].device_type == "lab.ok"
    assert not reports["bad.yaml"].valid
    assert "nvidia.nope" in reports["bad.yaml"].problems[0].message


def test_validate_paths_duplicates_among_given_files(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/a.yaml", "device_type: lab.dup\n")
    write_yaml("d/b.yaml", "device_type: lab.dup\n")
    reports = validate_paths([tmp_path / "d"])
    bad = [r for r in reports if not r.valid]
    assert len(bad) == 1
    assert "a.yaml" in bad[0].problems[0].message and bad[0].path.name == "b.yaml"


def test_validate_paths_missing_path_raises(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nowhere"):
        validate_paths([tmp_path / "nowhere"])


def test_load_device_file_is_strict(tmp_path: Path, write_yaml: WriteYaml) -> None:
    seed = load_device_file(SEED)
    assert seed.device_type == "aws.trainium2" and seed.compute_units == 128
    assert seed.has_feature("tensor_cores", 3) and seed.supports("attention", "bf16")
    bad = write_yaml("bad.yaml", "device_type: lab.bad\nkind: gpu\nkind: cpu\nfoo: 1\n")
    with pytest.raises(DeviceFileError) as info:
        load_device_file(bad)
    assert [p.line for p in info.value.problems] == [3]
    assert isinstance(info.value, ValueError)


# -- the validation cache -------------------------------------------------------------------


def test_second_load_comes_from_the_cache(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/a.yaml", FAMILY)
    entries = [SearchEntry(tmp_path / "d", "user")]
    cold = DeviceLibrary(entries)
    assert cold.cache is not None and (cold.cache.hits, cold.cache.misses) == (0, 1)
    warm = DeviceLibrary(entries)
    assert warm.cache is not None and (warm.cache.hits, warm.cache.misses) == (1, 0)
    assert warm.get("lab.family").data == cold.get("lab.family").data
    # A changed file is a different digest: validated again, and its errors are seen.
    write_yaml("d/a.yaml", FAMILY.replace("fp16: 20", "fp16: -1"))
    changed = DeviceLibrary(entries)
    assert changed.cache is not None and changed.cache.misses == 1
    assert [p.json_path for p in changed.problems] == ["$.peak_tflops.fp16"]


def test_corrupt_or_unwritable_cache_costs_only_speed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, write_yaml: WriteYaml
) -> None:
    write_yaml("d/a.yaml", FAMILY)
    entries = [SearchEntry(tmp_path / "d", "user")]
    cache_dir = tmp_path / "cache"
    monkeypatch.setenv("PRISM_CACHE_DIR", str(cache_dir))
    cache_dir.mkdir()
    (cache_dir / "device-files-v1.json").write_bytes(b"\x00garbage{")
    assert "lab.family" in DeviceLibrary(entries)
    assert DeviceLibrary(entries).cache.hits == 1  # type: ignore[union-attr]
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    monkeypatch.setenv("PRISM_CACHE_DIR", str(blocker / "sub"))
    assert "lab.family" in DeviceLibrary(entries)


def test_no_cache_switch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PRISM_NO_CACHE", "1")
    monkeypatch.setenv("PRISM_CACHE_DIR", str(tmp_path / "c"))
    lib = DeviceLibrary()
    assert lib.cache is None
    assert not (tmp_path / "c").exists()


# -- generations: succeeds and dropped_features ---------------------------------------------

GEN1 = """\
device_type: lab.gen1
abstract: true
vendor: lab
kind: gpu
features:
  - {name: tensor_cores, version: 1}
  - {name: mig, version: 1}
"""

GEN2 = """\
device_type: lab.gen2
abstract: true
extends: lab.gen1
succeeds: lab.gen1
dropped_features:
  mig: Gen 2 parts have no partitioning.
"""


def test_succeeds_and_dropped_features_are_read_and_not_inherited(
    tmp_path: Path, write_yaml: WriteYaml
) -> None:
    write_yaml("d/gen1.yaml", GEN1)
    write_yaml("d/gen2.yaml", GEN2)
    write_yaml("d/part.yaml", "device_type: lab.part\nextends: lab.gen2\n")
    lib = lib_of(tmp_path / "d")
    assert lib.problems == []
    gen2 = lib.get("lab.gen2")
    assert gen2.succeeds == "lab.gen1"
    assert gen2.dropped_features == {"mig": "Gen 2 parts have no partitioning."}
    part = lib.get("lab.part")
    assert part.succeeds is None and part.dropped_features == {}
    assert lib.get("lab.gen1").succeeds is None


def test_unknown_predecessor_is_located_at_succeeds(tmp_path: Path, write_yaml: WriteYaml) -> None:
    write_yaml("d/x.yaml", "device_type: lab.x\nkind: gpu\nsucceeds: nvidia.ampre\n")
    lib = lib_of(HARDWARE, tmp_path / "d")
    (problem,) = lib.problems
    assert (problem.line, problem.column, problem.json_path) == (3, 1, "$.succeeds")
    assert "predecessor 'nvidia.ampre' is not defined on the search path" in problem.message
    assert "did you mean 'nvidia.ampere'" in problem.message
    assert "lab.x" not in lib


# -- partitions: what software sees of a package ----------------------------------------------

PACKAGE = """\
device_type: lab.module
vendor: lab
kind: gpu
compute_units: 20
partitions:
  - {mode: split, device_type: lab.die, count: 2, description: each die is its own device}
  - {mode: whole, device_type: lab.module, count: 1}
"""
DIE = "device_type: lab.die\nvendor: lab\nkind: gpu\ncompute_units: 10\n"


def test_partitions_are_resolved_in_order_first_is_the_default(
    tmp_path: Path, write_yaml: WriteYaml
) -> None:
    write_yaml("d/module.yaml", PACKAGE)
    write_yaml("d/die.yaml", DIE)
    write_yaml("d/variant.yaml", "device_type: lab.variant\nextends: lab.module\n")
    lib = lib_of(tmp_path / "d")
    assert lib.problems == []
    module = lib.get("lab.module")
    assert isinstance(module.partitions[0], prism_core.hardware.Partition)
    assert [(p.mode, p.device_type, p.count) for p in module.partitions] == [
        ("split", "lab.die", 2),
        ("whole", "lab.module", 1),
    ]
    assert module.partitions[0].description == "each die is its own device"
    assert module.partition() == module.partitions[0]
    assert module.partition("whole") == module.partitions[1]
    with pytest.raises(LookupError, match=r"no partition mode 'flat'.*split, whole"):
        module.partition("flat")
    assert lib.get("lab.die").partitions == () and lib.get("lab.die").partition() is None
    # Inherited whole, like other lists.
    assert lib.get("lab.variant").partitions == module.partitions


@pytest.mark.parametrize(
    ("partitions", "message"),
    [
        (
            "[{mode: split, device_type: lab.dye, count: 2}]",
            "partition device type 'lab.dye' is not defined on the search path "
            "(did you mean 'lab.die'",
        ),
        (
            "[{mode: split, device_type: lab.family, count: 2}]",
            "partition device type 'lab.family' is abstract",
        ),
        (
            "[{mode: split, device_type: lab.module, count: 2}]",
            "a description can be its own partition only with count: 1",
        ),
        (
            "[{mode: split, device_type: lab.nested, count: 2}]",
            "partition device type 'lab.nested' is partitioned itself",
        ),
    ],
)
def test_bad_partitions_are_located(
    tmp_path: Path, write_yaml: WriteYaml, partitions: str, message: str
) -> None:
    write_yaml("d/die.yaml", DIE)
    write_yaml("d/family.yaml", "device_type: lab.family\nabstract: true\n")
    write_yaml(
        "d/nested.yaml",
        "device_type: lab.nested\npartitions: [{mode: m, device_type: lab.die, count: 2}]\n",
    )
    write_yaml("d/module.yaml", f"device_type: lab.module\nkind: gpu\npartitions: {partitions}\n")
    write_yaml("d/child.yaml", "device_type: lab.child\nextends: lab.module\n")
    lib = lib_of(tmp_path / "d")
    problem, child = sorted(lib.problems, key=lambda p: p.file)[::-1]
    assert child.file.endswith("child.yaml") and child.json_path == "$.extends"
    assert "parent device type 'lab.module' could not be loaded" in child.message
    assert problem.file.endswith("module.yaml")
    assert problem.json_path == "$.partitions[0].device_type"
    assert (problem.line, problem.column) == (3, 28)
    assert message in problem.message
    assert "lab.module" not in lib and "lab.child" not in lib, "the package and its children"
    assert "lab.die" in lib


def test_a_partition_mode_cannot_show_more_than_the_package_has(tmp_path: Path) -> None:
    """The devices of a mode share the package: their compute units, their global memory (each
    a level of its own, scope device) and their peaks add up to no more than the package's."""
    from .conftest import run_prism

    (tmp_path / "pkg.yaml").write_text(
        "format_version: 2\ndevice_type: acme.pkg\nkind: gpu\ncompute_units: 132\n"
        "peak_tflops: {fp64: 60}\n"
        "memory_hierarchy: [{level: global, size_bytes: 85899345920}]\n"  # 80 GiB
        "partitions:\n"  # 7
        "  - {mode: whole, device_type: acme.pkg, count: 1}\n"
        "  - {mode: many, device_type: acme.part, count: 1000}\n"  # 9
        "  - mode: mixed\n"  # 10
        "    parts:\n"  # 11
        "      - {device_type: acme.part, count: 2}\n"
        "      - {device_type: acme.big, count: 1}\n"
        "  - {mode: fits, device_type: acme.part, count: 8}\n",
        encoding="utf-8",
    )
    (tmp_path / "part.yaml").write_text(
        "device_type: acme.part\nkind: gpu\ncompute_units: 16\npeak_tflops: {fp64: 7}\n"
        "memory_hierarchy: [{level: global, size_bytes: 10737418240}]\n",  # 10 GiB
        encoding="utf-8",
    )
    (tmp_path / "big.yaml").write_text(
        "device_type: acme.big\nkind: gpu\ncompute_units: 120\n"
        "memory_hierarchy: [{level: global, size_bytes: 85899345920}]\n",
        encoding="utf-8",
    )
    proc = run_prism(tmp_path, "validate", "pkg.yaml", "part.yaml", "big.yaml")
    assert proc.returncode == 1
    problems = [line.strip() for line in proc.stdout.splitlines() if line.startswith("  ")]
    many = "pkg.yaml:9:49: $.partitions[1].count: mode 'many' shows 1000 x acme.part"
    mixed = "pkg.yaml:11:5: $.partitions[2].parts: mode 'mixed' shows 2 x acme.part, 1 x acme.big"
    assert problems == [
        f"{many}: 16000 compute units in all, more than the package's 132 (the devices "
        "software sees share them); give a count of at most 8",
        f"{many}: 7000 fp64 TFLOP/s in all, more than the package's 60 (the devices software "
        "sees share them); give a count of at most 8",
        f"{many}: 9.766 TiB of global memory in all, more than the package's 80 GiB (the "
        "devices software sees share it); give a count of at most 8",
        f"{mixed}: 100 GiB of global memory in all, more than the package's 80 GiB (the "
        "devices software sees share it); give parts that add up to at most 80 GiB",
        f"{mixed}: 152 compute units in all, more than the package's 132 (the devices "
        "software sees share them); give parts that add up to at most 132",
    ]
