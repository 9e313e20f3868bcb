"""Structured sparsity and numeric formats as data (format 2's ``sparsity`` and
``numeric_formats``): the schema and its checks, the shipped files' facts, Prism's table of the
standard formats, the ``sparsity`` and ``numeric_format:NAME`` requirement clauses, and their
reasons in ``prism_core.explain``.

Everything reads the real files of ``hardware/`` through the real library, and the CLI runs as a
subprocess.  Devices that are not on the machine running the tests are simulated from their
descriptions (``prism_core.device(NAME, simulate=True)``), with the test-only ``loopback``
backend (tests/loopback_plugin.py), which drives any device and computes with NumPy.  The
table of formats is checked against ml_dtypes where it is installed, and against values
derived from the OCP, IEEE 754 and Tenstorrent definitions, written out below, everywhere.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import prism_core as prism
from prism_core.hardware import (
    DeviceLibrary,
    NumericFormat,
    Requirement,
    RequirementError,
    SearchEntry,
    Sparsity,
    standard_format,
)
from prism_core.kernel.description import dtypes
from prism_core.kernel.description.numeric_formats import BUILTIN, FLOATING, STRUCTURAL
from prism_core.kernel.description.schema import FORMAT_2_KEYS, device_schema

from .conftest import HARDWARE, problems_of, shipped_library

LIB = shipped_library()
_names = itertools.count()


@pytest.fixture(scope="module")
def lib() -> DeviceLibrary:
    assert LIB.problems == []
    return LIB


V2 = "format_version: 2\ndevice_type: x.y\n"


# -- the schema: accepted, rejected at the right line ---------------------------------------


def test_both_keys_are_format_2_keys_with_described_fields() -> None:
    assert ("sparsity",) in FORMAT_2_KEYS and ("numeric_formats",) in FORMAT_2_KEYS
    schema = device_schema()
    for key, entry in (("sparsity", "sparsity_entry"), ("numeric_formats", "numeric_format")):
        assert "Format 2." in schema["properties"][key]["description"]
        fields = schema["definitions"][entry]["properties"]
        assert all("description" in f for name, f in fields.items() if name != "description")


def test_a_sparsity_and_formats_file_is_accepted() -> None:
    text = (
        V2 + "sparsity:\n"
        "  - {pattern: '2:4', data_types: [fp16, bf16], speedup: 2}\n"
        "  - pattern: '4:16'\n"
        "    data_types: [fp8_e4m3_ieee]\n"
        "    speedup: 2\n"
        "    operations: [matmul, conv2d]\n"
        "    description: with one operand sparse\n"
        "numeric_formats:\n"
        "  - {name: bf16, denormals: flushed}\n"
        "  - {name: bfp8}\n"
        "  - {name: fp8, exponent_bits: 5, mantissa_bits: 2, infinities: false, nan: none}\n"
    )
    assert problems_of(text) == []


def test_sparsity_entries_are_checked_at_their_lines() -> None:
    text = (
        V2 + "sparsity:\n"  # 3
        "  - {pattern: '2-4', data_types: [fp16], speedup: 2}\n"  # 4
        "  - {pattern: '4:2', data_types: [fp16], speedup: 2}\n"  # 5
        "  - {pattern: '4:4', data_types: [fp16], speedup: 2}\n"  # 6
        "  - {pattern: '1:2', data_types: [fp16], speedup: 1}\n"  # 7
        "  - {pattern: '1:2', data_types: [fp17], speedup: 2}\n"  # 8
        "  - {pattern: '1:2', data_types: [bf16]}\n"  # 9
    )
    found = problems_of(text)
    assert [int(p.split(":")[1]) for p in found] == [4, 7, 8, 9], found
    assert (
        "$.sparsity[0].pattern: the string '2-4' is not accepted; expected a string (N:M"
        in (found[0])
    )
    assert (
        "$.sparsity[3].speedup: the integer 1 is out of range; expected a number greater "
        in (found[1])
    )
    assert "the string 'fp17' is not accepted (did you mean 'fp16'?)" in found[2]
    assert "missing required key 'speedup'" in found[3]
    # N >= M passes the schema's pattern and is the semantic check's (run once the schema holds).
    semantic = problems_of(
        V2 + "sparsity:\n"
        "  - {pattern: '2:4', data_types: [fp16], speedup: 2}\n"  # 4
        "  - {pattern: '4:2', data_types: [fp16], speedup: 2}\n"  # 5
        "  - {pattern: '4:4', data_types: [fp16], speedup: 2}\n"  # 6
        "  - {pattern: '2:4', data_types: [bf16, fp16], speedup: 2}\n"  # 7
    )
    assert semantic == [
        "d.yaml:5:15: $.sparsity[1].pattern: sparsity pattern '4:2' keeps 4 of every 2 values, "
        "more than the group holds (N must be less than M; did you mean '2:4'?)",
        "d.yaml:6:15: $.sparsity[2].pattern: sparsity pattern '4:4' keeps every value of a "
        "group: it is dense, not sparse (N must be less than M)",
        "d.yaml:7:41: $.sparsity[3].data_types[1]: sparsity entries 1 and 4 both give pattern "
        "2:4 for matmul in fp16; give each one entry",
    ]


def test_numeric_format_entries_are_checked_at_their_lines() -> None:
    text = (
        V2 + "numeric_formats:\n"  # 3
        "  - {name: bf16, denormals: flush}\n"  # 4
        "  - {name: bf16, nan: some}\n"  # 5
        "  - {name: fp8_e4m3, block_size: 1}\n"  # 6
        "  - {name: fp8_e4m3, exponent_bit: 4}\n"  # 7
    )
    found = problems_of(text)
    assert [int(p.split(":")[1]) for p in found] == [4, 5, 6, 7], found
    assert "the string 'flush' is not accepted (did you mean 'flushed'?)" in found[0]
    assert "expected one of: ieee, single, none" in found[1]
    assert "$.numeric_formats[2].block_size" in found[2]
    assert "unknown key 'exponent_bit' (did you mean 'exponent_bits' or" in found[3]
    semantic = problems_of(
        V2 + "numeric_formats:\n"
        "  - {name: int8}\n"  # 4
        "  - {name: fp8_e4m3, exponent_bits: 5, mantissa_bits: 2}\n"  # 5
        "  - {name: fp8_e4m3, infinities: true}\n"  # 6
    )
    assert semantic[0].startswith(
        "d.yaml:4:12: $.numeric_formats[0].name: int8 is not a floating-point format; "
        "numeric_formats describes bf16, bfp2, bfp4, bfp8, fp16, fp32"
    )
    assert semantic[1:] == [
        "d.yaml:5:37: $.numeric_formats[1].exponent_bits: fp8_e4m3 has exponent_bits 4 by "
        "definition; values laid out with exponent_bits 5 are another data type (did you mean "
        "fp8_e5m2 or fp8_e5m2fnuz?)",
        "d.yaml:5:55: $.numeric_formats[1].mantissa_bits: fp8_e4m3 has mantissa_bits 3 by "
        "definition; values laid out with mantissa_bits 2 are another data type (did you mean "
        "fp8_e5m2 or fp8_e5m2fnuz?)",
        "d.yaml:6:12: $.numeric_formats[2].name: numeric_formats has two entries for "
        "fp8_e4m3; merge them into one",
    ]


@pytest.mark.parametrize(
    ("key", "body", "line"),
    [
        ("sparsity", "sparsity:\n  - {pattern: '2:4', data_types: [fp16], speedup: 2}\n", 3),
        ("numeric_formats", "numeric_formats:\n  - {name: bf16, denormals: flushed}\n", 3),
    ],
)
def test_a_format_1_file_using_a_key_gets_the_version_problem(
    key: str, body: str, line: int
) -> None:
    for head in ("format_version: 1\ndevice_type: x.y\n", "device_type: x.y\nkind: gpu\n"):
        found = problems_of(head + body)
        assert len(found) == 1, found
        assert found[0].startswith(f"d.yaml:{line}:1: $.{key}: {key} is a key of format 2")
        assert "add `format_version: 2`" in found[0]


def test_prism_validate_reports_the_version_problem(tmp_path: Path) -> None:
    """The real CLI, on a format-1 file that uses ``sparsity`` (line 4)."""
    path = tmp_path / "old.yaml"
    path.write_text(
        "format_version: 1\ndevice_type: acme.sparse\nkind: gpu\n"
        "sparsity: [{pattern: '2:4', data_types: [fp16], speedup: 2}]\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", "validate", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode != 0
    assert "old.yaml:4:1: $.sparsity: sparsity is a key of format 2" in proc.stdout + proc.stderr


def test_prism_schema_shows_both_keys() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", "schema"], capture_output=True, text=True, check=True
    )
    schema = json.loads(proc.stdout)
    for key in ("sparsity", "numeric_formats"):
        assert schema["properties"][key]["description"].startswith("Format 2.")
    assert schema["definitions"]["numeric_format"]["properties"]["denormals"]["enum"] == [
        "kept",
        "flushed",
    ]


# -- the shipped files -------------------------------------------------------------------------

#: The devices whose datasheets give 2:4 sparse figures at twice the dense ones.
TWO_FOUR = {
    "nvidia.a100-sxm-80gb": {"tf32", "bf16", "fp16", "int8", "int4"},
    "nvidia.h100-sxm": {"tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8"},
    "nvidia.h100-pcie": {"tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8"},
    "nvidia.h200": {"tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8"},
    "nvidia.l4": {"tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "int8", "int4"},
    "nvidia.b200": {"tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp6", "fp4", "int8"},
    "amd.mi300x": {"fp16", "bf16", "fp8_e4m3fnuz", "fp8_e5m2fnuz", "int8"},
}
NEURONCORE_V3 = ("aws.trainium2", "aws.trainium2-lnc1", "aws.trainium2-lnc2")


@pytest.mark.parametrize("device_type", sorted(TWO_FOUR))
def test_datasheet_two_four_sparsity(lib: DeviceLibrary, device_type: str) -> None:
    dev = lib.get(device_type)
    assert [e.pattern for e in dev.sparsity] == ["2:4"]
    (entry,) = dev.sparsity
    assert set(entry.data_types) == TWO_FOUR[device_type]
    assert entry.speedup == 2 and entry.operations == ("matmul",)
    assert entry.kept == 2 and entry.group == 4 and entry.density == 0.5
    assert "fp64" not in entry.data_types  # no datasheet gives FP64 a sparse figure


@pytest.mark.parametrize("device_type", NEURONCORE_V3)
def test_trainium2_patterns_and_speedups(lib: DeviceLibrary, device_type: str) -> None:
    """NeuronCore-v3 (AWS's NKI Trainium2 guide): sparse matmul runs at the dense BF16 rate
    (79 TFLOP/s a core) times the compression M/N, up to 4x, so up to 316 sparse TFLOP/s; FP8's
    double-rate mode (158 dense) cannot be combined with sparsity, so FP8 gains half of M/N and
    the 2x patterns do not speed it up at all."""
    dev = lib.get(device_type)
    bf16 = {"4:16": 4, "4:12": 3, "4:8": 2, "2:8": 4, "2:4": 2, "1:4": 4, "1:2": 2}
    fp8 = {"4:16": 2, "4:12": 1.5, "2:8": 2, "1:4": 2}
    for dtype, speedups in (("fp8_e4m3_ieee", fp8), ("fp8_e5m2", fp8), ("bf16", bf16),
                            ("tf32", bf16)):
        found = {e.pattern: e.speedup for e in dev.sparsity if e.applies("matmul", dtype)}
        assert found == speedups, dtype
    assert not any(e.applies(dtype="fp8_e3m4") for e in dev.sparsity)


#: The families whose files give ``sparsity``: every device of them has it (a partition too:
#: a MIG slice or an XCD has the same matrix units), and no other device does.
SPARSE_FAMILIES = (
    "nvidia.ampere",
    "nvidia.ada",
    "nvidia.hopper",
    "nvidia.blackwell",
    "amd.cdna3",
    "aws.neuroncore-v3",
)
WITH_SPARSITY = sorted(d.device_type for d in LIB.list() if any(d.is_a(f) for f in SPARSE_FAMILIES))


def test_sparsity_is_only_where_a_datasheet_gives_it(lib: DeviceLibrary) -> None:
    with_sparsity = {d.device_type for d in lib.list() if d.sparsity}
    assert with_sparsity == set(WITH_SPARSITY)
    assert set(TWO_FOUR) | set(NEURONCORE_V3) <= with_sparsity
    assert not {"amd.mi250x", "google.tpu-v5e", "tenstorrent.wormhole-n300"} & with_sparsity


@pytest.mark.parametrize("device_type", WITH_SPARSITY)
def test_sparsity_is_for_what_the_device_accelerates(lib: DeviceLibrary, device_type: str) -> None:
    """Every (op, data type) a pattern speeds up is one a feature of the device accelerates."""
    dev = lib.get(device_type)
    for entry in dev.sparsity:
        for op, dtype in itertools.product(entry.operations, entry.data_types):
            assert dev.supports(op, dtype), (entry.pattern, op, dtype)


def test_device_formats_where_they_differ(lib: DeviceLibrary) -> None:
    tpu = lib.get("google.tpu-v5e").numeric_format("bfloat16")  # a Prism dtype name works too
    assert tpu is not None and tpu.denormals == "flushed" and tpu.infinities is True
    assert lib.get("google.tpu-v5e").provenance["numeric_formats[bf16]"] == "google.tpu"
    for device_type in ("amd.mi250x", "amd.mi250x-gcd"):
        for name in ("fp16", "bf16"):
            found = lib.get(device_type).numeric_format(name)
            assert found is not None and found.denormals == "flushed", (device_type, name)
    assert lib.get("amd.mi300x").numeric_format("fp16").denormals == "kept"  # type: ignore[union-attr]
    for device_type in ("tenstorrent.wormhole-n300", "tenstorrent.wormhole-n300-chip"):
        dev = lib.get(device_type)
        for name, bits in (("bfp8", 7), ("bfp4", 3), ("bfp2", 1)):
            found = dev.numeric_format(name)
            assert found is not None
            assert (found.block_size, found.shared_exponent_bits) == (16, 8)
            assert (found.exponent_bits, found.mantissa_bits) == (0, bits)
        assert dev.numeric_format("bf16").denormals == "flushed"  # type: ignore[union-attr]
        assert dev.numeric_format("fp8_e5m2").nan == "none"  # type: ignore[union-attr]


def test_fp8_formats_per_vendor(lib: DeviceLibrary) -> None:
    def fp8(device_type: str) -> set[str]:
        return {n for n in lib.get(device_type).numeric_formats if n.startswith("fp8")}

    assert fp8("nvidia.h100-sxm") == {"fp8_e4m3", "fp8_e5m2"}
    assert lib.get("nvidia.h100-sxm").numeric_format("fp8_e4m3").infinities is False  # type: ignore[union-attr]
    assert fp8("amd.mi300x") == {"fp8_e4m3fnuz", "fp8_e5m2fnuz"}
    assert lib.get("amd.mi300x").numeric_format("fp8_e4m3fnuz").negative_zero is False  # type: ignore[union-attr]
    for device_type in ("aws.trainium", "aws.inferentia2", *NEURONCORE_V3):
        dev = lib.get(device_type)
        assert "fp8_e4m3" not in dev.numeric_formats, device_type  # E4M3FN: NCC_EVRF051
        ieee = dev.numeric_format("fp8_e4m3_ieee")
        assert ieee is not None and ieee.infinities is True and ieee.exponent_bias == 7
        assert dev.numeric_format("fp8_e3m4") is not None


def test_numeric_format_names_are_checked(lib: DeviceLibrary) -> None:
    dev = lib.get("nvidia.h100-sxm")
    assert dev.numeric_format("fp4") is None  # a format, but not Hopper's
    assert dev.numeric_format(prism.float8_e4m3fn) == dev.numeric_formats["fp8_e4m3"]
    with pytest.raises(ValueError, match=r"'fp8_e4m3fn' is not a floating-point format \(did you"):
        dev.numeric_format("fp8_e4m3fn")
    with pytest.raises(ValueError, match="'int8' is not a floating-point format"):
        dev.numeric_format("int8")


def test_numeric_formats_are_inherited_by_name(tmp_path: Path) -> None:
    """A child's entry replaces its parent's entry of the same name; the others stay."""
    (tmp_path / "tpu-lab.yaml").write_text(
        "format_version: 2\ndevice_type: google.tpu-lab\nextends: google.tpu-v5e\n"
        "numeric_formats:\n  - {name: bf16, description: a lab part that keeps subnormals}\n"
        "  - {name: fp8_e5m2}\n",
        encoding="utf-8",
    )
    lib = DeviceLibrary(
        [SearchEntry(HARDWARE, "builtin"), SearchEntry(tmp_path, "user")], use_cache=False
    )
    assert lib.problems == []
    dev = lib.get("google.tpu-lab")
    assert dev.numeric_format("bf16").denormals == "kept"  # type: ignore[union-attr]
    assert dev.numeric_format("fp8_e5m2") is not None
    assert dev.provenance["numeric_formats[bf16]"] == "google.tpu-lab"


# -- Prism's table of the standard formats -------------------------------------------------------


def _largest(f: NumericFormat) -> float:
    """The largest finite value of an element format, from its properties alone: the all-ones
    exponent is reserved where the format has infinities or IEEE NaNs; otherwise only the
    all-ones pattern is the NaN (with both zeros: E4M3FN) or nothing is reserved (FNUZ, FP4)."""
    assert f.exponent_bits is not None and f.mantissa_bits is not None and f.exponent_bias
    top = 2**f.exponent_bits - 1
    mantissa = 2**f.mantissa_bits - 1
    if f.infinities or f.nan == "ieee":
        top -= 1
    elif f.nan == "single" and f.negative_zero:
        mantissa -= 1
    return float(2.0 ** (top - f.exponent_bias) * (1 + mantissa / 2**f.mantissa_bits))


#: Largest finite values as the definitions give them: IEEE 754 (binary16 65504), the bfloat16
#: and TF32 ranges of binary32, the OCP 8-bit FP spec 1.0 (E4M3 448, E5M2 57344), Graphcore and
#: AMD's FNUZ (E4M3 240, E5M2 57344), the IEEE-style E4M3 and E3M4 of LLVM's APFloat (240, 15.5)
#: and OCP MX 1.0's FP4 E2M1 (6).
LARGEST = {
    "fp64": float(np.finfo(np.float64).max),
    "fp32": float(np.finfo(np.float32).max),
    "tf32": (2 - 2**-10) * 2.0**127,
    "fp16": 65504.0,
    "bf16": (2 - 2**-7) * 2.0**127,
    "fp8_e4m3": 448.0,
    "fp8_e5m2": 57344.0,
    "fp8_e4m3fnuz": 240.0,
    "fp8_e5m2fnuz": 57344.0,
    "fp8_e4m3_ieee": 240.0,
    "fp8_e3m4": 15.5,
    "fp4": 6.0,
    "mxfp4": 6.0,
    "nvfp4": 6.0,
}


@pytest.mark.parametrize("name", sorted(LARGEST))
def test_table_gives_each_definitions_largest_value(name: str) -> None:
    assert _largest(BUILTIN[name]) == LARGEST[name]


def test_table_covers_the_floating_vocabulary() -> None:
    vocabulary = set(device_schema()["definitions"]["data_type"]["enum"])
    floating = {v for v in vocabulary if not v.startswith(("int", "uint", "complex", "bool"))}
    assert floating == FLOATING
    assert set(BUILTIN) == FLOATING - {"fp8", "fp6"}  # which FP8 or FP6 those are is open
    assert standard_format("fp6") is None
    for name in ("bfp8", "bfp4", "bfp2"):
        bfp = BUILTIN[name]
        assert (bfp.block_size, bfp.shared_exponent_bits, bfp.exponent_bits) == (16, 8, 0)
    for name in ("mxfp8", "mxfp6", "mxfp4"):
        assert (BUILTIN[name].block_size, BUILTIN[name].scale_type) == (32, "fp8_e8m0")
    assert (BUILTIN["nvfp4"].block_size, BUILTIN["nvfp4"].scale_type) == (16, "fp8_ue4m3")
    assert set(STRUCTURAL) - set(BUILTIN["bfp8"].properties()) == {"scale_type"}


#: Prism's vocabulary name -> ml_dtypes' type name.
ML_DTYPES = {
    "bf16": "bfloat16",
    "fp8_e4m3": "float8_e4m3fn",
    "fp8_e5m2": "float8_e5m2",
    "fp8_e4m3fnuz": "float8_e4m3fnuz",
    "fp8_e5m2fnuz": "float8_e5m2fnuz",
    "fp8_e4m3_ieee": "float8_e4m3",
    "fp8_e3m4": "float8_e3m4",
    "fp4": "float4_e2m1fn",
}


def _patterns(kind: Any, bits: int) -> Iterator[tuple[int, float]]:
    raw = np.arange(2**bits, dtype=np.uint16 if bits == 16 else np.uint8)
    with np.errstate(invalid="ignore"):  # the NaN patterns
        values = raw.view(kind).astype(np.float64)
    yield from zip(raw.tolist(), values.tolist(), strict=True)


@pytest.mark.parametrize("name", sorted(ML_DTYPES))
def test_table_matches_ml_dtypes(name: str) -> None:
    ml_dtypes = pytest.importorskip("ml_dtypes")
    kind = getattr(ml_dtypes, ML_DTYPES[name])
    info = ml_dtypes.finfo(kind)
    ours = BUILTIN[name]
    assert (ours.exponent_bits, ours.mantissa_bits) == (info.nexp, info.nmant)
    assert ours.exponent_bias == 1 - info.minexp
    assert _largest(ours) == float(info.max)
    bits = info.bits
    values = list(_patterns(kind, bits))
    sign = 1 << (bits - 1)
    nans = sum(1 for _, v in values if np.isnan(v))
    assert ours.infinities == any(np.isinf(v) for _, v in values)
    assert ours.nan == {0: "none", 1: "single", 2: "single"}.get(nans, "ieee")
    if ours.nan == "ieee":
        assert nans == 2 * (2**info.nmant - 1)
    assert ours.negative_zero == any(r & sign and v == 0 for r, v in values)
    assert ours.denormals == ("kept" if info.smallest_subnormal < info.smallest_normal else None)


def test_table_matches_numpy_for_the_ieee_types() -> None:
    for name, kind in (("fp16", np.float16), ("fp32", np.float32), ("fp64", np.float64)):
        info = np.finfo(kind)
        ours = BUILTIN[name]
        assert (ours.exponent_bits, ours.mantissa_bits) == (info.nexp, info.nmant)
        assert ours.exponent_bias == 1 - info.minexp and _largest(ours) == float(info.max)
        assert (ours.infinities, ours.nan, ours.negative_zero) == (True, "ieee", True)


def test_the_new_fp8_dtypes() -> None:
    assert dtypes.dtype("fp8_e4m3_ieee") is dtypes.float8_e4m3
    assert dtypes.dtype("float8_e4m3") is dtypes.float8_e4m3
    assert dtypes.dtype("fp8_e3m4") is dtypes.dtype("float8_e3m4") is dtypes.float8_e3m4
    assert {dtypes.float8_e4m3, dtypes.float8_e3m4} <= set(dtypes.ALL)
    assert all(d.itemsize == 1 and d.kind == "f" for d in (dtypes.float8_e4m3, dtypes.float8_e3m4))
    assert dtypes.float8_e4m3 != dtypes.float8_e4m3fn  # IEEE-style E4M3 is not E4M3FN
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert dtypes.dtype(np.dtype(ml_dtypes.float8_e4m3)) is dtypes.float8_e4m3
    assert dtypes.dtype(np.dtype(ml_dtypes.float8_e3m4)) is dtypes.float8_e3m4


# -- requirements --------------------------------------------------------------------------------


def test_sparsity_clauses_met_and_unmet(lib: DeviceLibrary) -> None:
    h100, mi250x, trn2 = (lib.get(t) for t in ("nvidia.h100-sxm", "amd.mi250x", "aws.trainium2"))
    assert h100.satisfies({"sparsity": True}).ok and not h100.satisfies({"sparsity": False}).ok
    assert h100.satisfies({"sparsity": {"2:4": ["fp16", "fp8_e4m3"]}}).ok
    assert trn2.satisfies({"sparsity": ["4:16", "1:2"]}).ok
    assert mi250x.satisfies({"sparsity": False}).ok
    assert h100.satisfies({"sparsity": "4:16"}).reasons == (
        "nvidia.h100-sxm has no sparsity pattern 4:16 (its patterns: 2:4)",
    )
    assert h100.satisfies({"sparsity": {"2:4": "fp64"}}).reasons == (
        "nvidia.h100-sxm has sparsity pattern 2:4 for tf32, bf16, fp16, fp8_e4m3, fp8_e5m2, "
        "int8, not fp64",
    )
    assert h100.satisfies({"sparsity": False}).reasons == (
        "nvidia.h100-sxm has structured sparsity (2:4), required absent",
    )
    assert mi250x.satisfies({"sparsity": "2:4"}).reasons == (
        "amd.mi250x has no structured sparsity (required pattern 2:4)",
    )
    assert mi250x.satisfies({"sparsity": True}).reasons == (
        "amd.mi250x has no structured sparsity (its description gives no patterns)",
    )
    assert trn2.satisfies({"sparsity": {"4:16": "fp8_e3m4"}}).reasons == (
        "aws.trainium2 has sparsity pattern 4:16 for fp8_e4m3_ieee, fp8_e5m2, bf16, fp16, tf32, "
        "not fp8_e3m4",
    )


def test_numeric_format_clauses_met_and_unmet(lib: DeviceLibrary) -> None:
    mi300x, trn2, tpu = (lib.get(t) for t in ("amd.mi300x", "aws.trainium2", "google.tpu-v5e"))
    assert mi300x.satisfies({"numeric_format:fp8_e4m3fnuz": True}).ok
    assert mi300x.satisfies({"numeric_format:fp8_e4m3": False}).ok
    assert mi300x.satisfies({"numeric_format:fp8_e4m3": True}).reasons == (
        "amd.mi300x does not compute fp8_e4m3 (its 8-bit floating-point formats: fp8_e4m3fnuz, "
        "fp8_e5m2fnuz)",
    )
    assert trn2.satisfies({"numeric_format:fp8_e4m3": True}).reasons == (
        "aws.trainium2 does not compute fp8_e4m3 (its 8-bit floating-point formats: fp8_e3m4, "
        "fp8_e4m3_ieee, fp8_e5m2)",
    )
    assert trn2.satisfies({"numeric_format:fp8_e4m3_ieee": {"infinities": True, "nan": "ieee"}}).ok
    assert trn2.satisfies({"numeric_format:fp8_e5m2": False}).reasons == (
        "aws.trainium2 computes fp8_e5m2, required absent",
    )
    assert tpu.satisfies({"numeric_format:bf16": {"denormals": "kept"}}).reasons == (
        "denormals of bf16 on google.tpu-v5e is 'flushed', required 'kept'",
    )
    assert tpu.satisfies({"numeric_format:bf16": {"denormals": ["kept", "flushed"]}}).ok
    assert lib.get("nvidia.h100-sxm").satisfies(
        {"numeric_format:fp8_e4m3": {"infinities": True, "mantissa_bits": 3}}
    ).reasons == ("infinities of fp8_e4m3 on nvidia.h100-sxm is False, required True",)
    n300 = lib.get("tenstorrent.wormhole-n300")
    assert n300.satisfies({"numeric_format:bfp8": {"block_size": "==16"}}).ok
    assert n300.satisfies({"numeric_format:bfp8": {"mantissa_bits": 8}}).reasons == (
        "mantissa_bits of bfp8 on tenstorrent.wormhole-n300 is 7, required at least 8",
    )
    assert lib.get("nvidia.b200").satisfies(
        {"numeric_format:mxfp8": {"exponent_bits": 4}}
    ).reasons == (
        "the description of nvidia.b200 does not say the exponent_bits of mxfp8 (required 4)",
    )
    # A property the table leaves open meets no boolean (false is a value there, not "absent").
    b200 = lib.get("nvidia.b200")
    assert b200.satisfies({"numeric_format:mxfp8": {"infinities": False}}).reasons == (
        "the description of nvidia.b200 does not say the infinities of mxfp8 (required False)",
    )
    assert b200.satisfies({"numeric_format:fp8_e4m3": {"scale_type": False}}).ok


@pytest.mark.parametrize(
    ("mapping", "message"),
    [
        ({"sparsity": "2-4"}, "'2-4' is not an N:M pattern such as '2:4'"),
        ({"sparsity": "4:2"}, r"did you mean '2:4'\?"),
        ({"sparsity": {"2:4": 16}}, "give a data type or a list of data types per pattern"),
        ({"sparsity": 2}, "is not accepted; give true"),
        ({"sparsity:2:4": "fp16"}, r"write \{'sparsity': '2:4'\}"),
        ({"numeric_format:fp8_e4m3fn": True}, r"did you mean .*'fp8_e4m3'"),
        ({"numeric_format:int8": True}, "'int8' is not a floating-point format"),
        ({"numeric_format:bf16": "kept"}, "give true .* or a mapping of properties"),
        ({"numeric_format:bf16": {"denormal": "kept"}}, r"did you mean 'denormals'\?"),
        ({"numeric_format:bf16": {"denormals": "flush"}}, r"did you mean 'flushed'\?"),
        ({"numeric_format:bf16": {"infinities": "yes"}}, "use true or false"),
        ({"format:bf16": True}, "'numeric_format:NAME'"),
    ],
)
def test_malformed_clauses_raise(mapping: dict[str, Any], message: str) -> None:
    with pytest.raises(RequirementError, match=message):
        Requirement(mapping)


def test_public_classes() -> None:
    entry = Sparsity("2:4", ("fp16",), 2.0)
    assert entry.applies("matmul", "fp16") and not entry.applies("conv2d", "fp16")
    assert prism.hardware.NumericFormat is NumericFormat
    assert BUILTIN["bf16"].properties()["exponent_bits"] == 8


# -- explain: the reasons on simulated devices ---------------------------------------------------


@pytest.mark.usefixtures("loopback")
def test_explain_shows_the_sparsity_and_format_reasons() -> None:
    """A variant that needs 2:4 sparsity in fp16 and bf16 that keeps subnormals is chosen on a
    simulated H100 and rejected, with the clause's reason, on a simulated MI250X GCD and TPU."""
    name = f"sparse_mm_{next(_names)}"

    @prism.extending.operation(name=name, array_args=(0, 1))
    def sparse_mm(a: Any, b: Any) -> Any:
        return a @ b

    sparse_mm.variant(
        lambda a, b: a @ b,
        backend="loopback",
        requires={"sparsity": {"2:4": "fp16"}, "numeric_format:bf16": {"denormals": "kept"}},
        priority=5,
        name=f"{name}.sparse",
    )
    a = np.ones((4, 4), np.float16)
    verdicts = {}
    for device_type in ("nvidia.h100-sxm", "amd.mi250x-gcd", "google.tpu-v5e"):
        with prism.device(device_type, simulate=True):
            decision = prism.explain(sparse_mm, a, a)
        verdicts[device_type] = next(c for c in decision.candidates if c.variant.endswith("sparse"))
        if device_type == "nvidia.h100-sxm":
            assert decision.chosen == f"{name}.sparse"
        else:
            assert decision.chosen != f"{name}.sparse"
            assert verdicts[device_type].reasons[0] in str(decision)
    assert verdicts["nvidia.h100-sxm"].accepted
    assert verdicts["amd.mi250x-gcd"].reasons == (
        "amd.mi250x-gcd: amd.mi250x-gcd has no structured sparsity (required pattern 2:4)",
        "amd.mi250x-gcd: denormals of bf16 on amd.mi250x-gcd is 'flushed', required 'kept'",
    )
    assert verdicts["google.tpu-v5e"].reasons == (
        "google.tpu-v5e: google.tpu-v5e has no structured sparsity (required pattern 2:4)",
        "google.tpu-v5e: denormals of bf16 on google.tpu-v5e is 'flushed', required 'kept'",
    )


@pytest.mark.parametrize(
    ("value", "message"),
    [
        # Prism's own dtype names are refused, with the vocabulary's name for the same type.
        (
            {"2:4": "float16"},
            r"'float16' is not a data type of the device-file vocabulary "
            r"\(did you mean 'fp16'\?\): device files name",
        ),
        ({"2:4": ["bf16", "bfloat16"]}, r"'bfloat16' .*\(did you mean 'bf16'\?\)"),
        ({"2:4": "float8_e4m3fn"}, r"did you mean 'fp8_e4m3'\?"),
        ({"2:4": "fp99"}, r"'fp99' is not a data type of the device-file vocabulary"),
        ({"4:16": ["fp8_e4m3_ieee", "fp8_e4m3_ieeee"]}, r"did you mean 'fp8_e4m3_ieee'"),
    ],
)
def test_sparsity_clause_refuses_unknown_data_types(value: Any, message: str) -> None:
    with pytest.raises(RequirementError, match=message) as raised:
        Requirement({"sparsity": value})
    assert "fp64, fp32, tf32" in str(raised.value)  # the names it takes
    # ... so a variant declaring it is refused when declared, not left never to run.
    with pytest.raises(RequirementError, match=message):
        prism.extending.Variant("matmul", np.matmul, requires={"sparsity": value})


def test_sparsity_clause_takes_every_vocabulary_data_type() -> None:
    assert tuple(device_schema()["definitions"]["data_type"]["enum"]) == dtypes.VOCABULARY
    for name in dtypes.VOCABULARY:
        Requirement({"sparsity": {"2:4": name}})


def test_numeric_formats_must_be_able_to_be_their_type() -> None:
    """Bits that do not make the name's width, and a bias the exponent cannot reach, are
    refused at their keys, saying what would be accepted."""
    found = problems_of(
        V2 + "numeric_formats:\n"  # 3
        "  - {name: fp6, exponent_bits: 9, mantissa_bits: 9}\n"  # 4
        "  - {name: fp8, exponent_bits: 7, mantissa_bits: 7}\n"  # 5
        "  - {name: fp16, exponent_bias: 127}\n"  # 6
        "  - {name: mxfp8, exponent_bits: 4, mantissa_bits: 3, exponent_bias: 16}\n"  # 7
        "  - {name: mxfp6, exponent_bits: 6}\n"  # 8
        "  - {name: fp8_e4m3, exponent_bias: 8}\n"  # 9
    )
    assert found == [
        "d.yaml:4:50: $.numeric_formats[0].mantissa_bits: fp6 values are 6 bits: a sign bit, "
        "exponent_bits 9 and mantissa_bits 9 make 19; give exponent_bits and mantissa_bits "
        "that add up to 5",
        "d.yaml:5:50: $.numeric_formats[1].mantissa_bits: fp8 values are 8 bits: a sign bit, "
        "exponent_bits 7 and mantissa_bits 7 make 15; give exponent_bits and mantissa_bits "
        "that add up to 7",
        "d.yaml:6:33: $.numeric_formats[2].exponent_bias: fp16 has exponent_bias 15 by "
        "definition; values read with exponent_bias 127 are another data type (did you mean "
        "bf16?)",
        "d.yaml:7:70: $.numeric_formats[3].exponent_bias: exponent_bias 16 does not fit "
        "exponent_bits 4: the bias is one of the 16 stored exponents, 0 to 15 (IEEE 754 "
        "formats use 7, 2**(e-1)-1; FNUZ formats 8, 2**(e-1))",
        "d.yaml:8:34: $.numeric_formats[4].exponent_bits: mxfp6 values are 6 bits: a sign bit "
        "and exponent_bits 6 make 7; give exponent_bits and mantissa_bits that add up to 5",
        "d.yaml:9:37: $.numeric_formats[5].exponent_bias: fp8_e4m3 has exponent_bias 7 by "
        "definition; values read with exponent_bias 8 are another data type (did you mean "
        "fp8_e4m3fnuz?)",
    ]
    accepted = (
        V2 + "numeric_formats:\n"
        "  - {name: fp6, exponent_bits: 2, mantissa_bits: 3, exponent_bias: 1}\n"
        "  - {name: fp8, exponent_bits: 4, mantissa_bits: 3, exponent_bias: 8}\n"
        "  - {name: mxfp6, exponent_bits: 3, mantissa_bits: 2, exponent_bias: 3}\n"
        "  - {name: fp16, exponent_bias: 15, denormals: flushed}\n"
        "  - {name: bfp8, exponent_bias: 127}\n"
        "  - {name: tf32}\n"
    )
    assert problems_of(accepted) == []
    # Every format of the table is consistent with the same rules.
    every = "".join(
        f"  - {json.dumps({'name': name, **f.properties()})}\n" for name, f in BUILTIN.items()
    )
    assert problems_of(V2 + "numeric_formats:\n" + every) == []


def test_a_speedup_above_m_over_n_is_refused() -> None:
    """N:M keeps N of every M values: skipping the zeros saves at most (M-N)/M of the work, so
    the pattern speeds up at most M/N times."""
    found = problems_of(
        V2 + "sparsity:\n"  # 3
        "  - {pattern: '2:4', data_types: [fp16], speedup: 4}\n"  # 4
        "  - {pattern: '4:12', data_types: [fp16], speedup: 3.5}\n"  # 5
        "  - {pattern: '1:2', data_types: [fp16], speedup: 2.01}\n"  # 6
    )
    assert found == [
        "d.yaml:4:51: $.sparsity[0].speedup: speedup 4 is more than pattern 2:4 can give: "
        "it keeps 2 of every 4 values, so skipping the zeros makes it at most 2 times (M/N) "
        "as fast as dense; give a speedup of at most 2",
        "d.yaml:5:52: $.sparsity[1].speedup: speedup 3.5 is more than pattern 4:12 can give: "
        "it keeps 4 of every 12 values, so skipping the zeros makes it at most 3 times (M/N) "
        "as fast as dense; give a speedup of at most 3",
        "d.yaml:6:51: $.sparsity[2].speedup: speedup 2.01 is more than pattern 1:2 can give: "
        "it keeps 1 of every 2 values, so skipping the zeros makes it at most 2 times (M/N) "
        "as fast as dense; give a speedup of at most 2",
    ]
    at_most = (
        V2 + "sparsity:\n"
        "  - {pattern: '2:4', data_types: [fp16], speedup: 2}\n"
        "  - {pattern: '4:12', data_types: [fp16], speedup: 3}\n"
        "  - {pattern: '2:3', data_types: [fp16], speedup: 1.5}\n"
        "  - {pattern: '4:16', data_types: [fp16], speedup: 1.9}\n"
    )
    assert problems_of(at_most) == []
