"""The device JSON Schema: valid in both drafts, offline; its errors located and helpful."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest

from prism_core.hardware import device_schema
from prism_core.kernel.description.schema import MAX_PROBLEMS, validate_parsed
from prism_core.kernel.description.yaml_loader import parse_yaml

from .conftest import HARDWARE, SCHEMA, SEED, SHARED_SEED, problems_of, run_prism

SHIPPED = sorted(HARDWARE.rglob("*.yaml"))


def test_schema_is_valid_2020_12_and_draft_07() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].startswith("https://")
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft7Validator.check_schema(schema)
    assert device_schema() == schema


def _draft2020_only_keywords(node: object) -> set[str]:
    newer = {
        "$defs",
        "prefixItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "dependentRequired",
        "dependentSchemas",
        "$anchor",
        "$dynamicRef",
        "minContains",
    }
    found: set[str] = set()
    if isinstance(node, dict):
        found |= newer & set(node)
        for value in node.values():
            found |= _draft2020_only_keywords(value)
    elif isinstance(node, list):
        for value in node:
            found |= _draft2020_only_keywords(value)
    return found


def _validation_siblings_of_ref(node: object) -> list[str]:
    """Draft-07 ignores everything beside $ref: only annotations may stand there."""
    bad: list[str] = []
    if isinstance(node, dict):
        if "$ref" in node:
            bad.extend(k for k in node if k not in {"$ref", "description", "title", "$comment"})
        for value in node.values():
            bad.extend(_validation_siblings_of_ref(value))
    elif isinstance(node, list):
        for value in node:
            bad.extend(_validation_siblings_of_ref(value))
    return bad


def test_schema_uses_only_keywords_that_mean_the_same_in_draft_07() -> None:
    schema = json.loads(SCHEMA.read_text())
    assert _draft2020_only_keywords(schema) == set()
    assert _validation_siblings_of_ref(schema) == []


@pytest.mark.parametrize("path", [*SHIPPED, SEED], ids=lambda p: p.stem)
def test_every_file_gets_the_same_verdict_under_both_drafts(path: Path) -> None:
    import yaml

    schema = json.loads(SCHEMA.read_text())
    doc = yaml.safe_load(path.read_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(doc)) == []
    assert list(jsonschema.Draft7Validator(schema).iter_errors(doc)) == []


def test_seed_copy_is_the_shared_original() -> None:
    if not SHARED_SEED.exists():
        pytest.skip(f"{SHARED_SEED} is not beside this checkout; the in-repo copy is used")
    assert SEED.read_bytes() == SHARED_SEED.read_bytes()


def test_seed_example_validates_unchanged() -> None:
    parsed, problems = parse_yaml(SEED.read_bytes(), str(SEED))
    assert problems == [] and parsed is not None
    assert validate_parsed(parsed, str(SEED)) == []


def test_no_network_for_unknown_refs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A $ref outside the local registry fails to resolve instead of being fetched."""
    import urllib.request

    from referencing.exceptions import Unresolvable

    from prism_core.kernel.description import schema as _schema

    def no_urlopen(*args: object, **kwargs: object) -> None:
        raise AssertionError("the validator tried to use the network")

    monkeypatch.setattr(urllib.request, "urlopen", no_urlopen)
    validator = _schema._validator()
    evolved = validator.evolve(schema={"$ref": "https://example.com/remote.json"})
    with pytest.raises(Unresolvable):
        list(evolved.iter_errors({}))


def test_unknown_key_is_located_with_a_suggestion() -> None:
    found = problems_of("device_type: x.y\ncompute_unit: 4\n")
    assert len(found) == 1
    assert found[0].startswith(
        "d.yaml:2:1: $.compute_unit: unknown key 'compute_unit' (did you mean 'compute_units'"
    )
    assert "accepted keys here:" in found[0]


def test_missing_required_key() -> None:
    found = problems_of("compute_units: 4\n")
    assert found == ["d.yaml:1:1: missing required key 'device_type'"]


def test_all_errors_are_listed_sorted_by_line() -> None:
    text = (
        "device_type: Not Valid\n"  # 1
        "kind: gpus\n"  # 2
        "abstract: no\n"  # 3
        "features:\n"  # 4
        "  - name: tensor_cores\n"  # 5
        "    version: x\n"  # 6
        "    operations:\n"  # 7
        "      - name: matmul\n"  # 8
        "        data_types: [fp9]\n"  # 9
        "memory_hierarchy:\n"  # 10
        "  - level: global\n"  # 11
        "peak_tflops:\n"  # 12
        "  fp99: 1\n"  # 13
        "  fp32: 0\n"  # 14
    )
    found = problems_of(text)
    lines = [int(p.split(":")[1]) for p in found]
    assert lines == sorted(lines)
    assert lines == [1, 2, 3, 6, 9, 11, 13, 14]
    joined = "\n".join(found)
    assert (
        "$.device_type: the string 'Not Valid' is not accepted; "
        "expected a string (A device identifier" in joined
    )
    assert "$.kind: the string 'gpus' is not accepted (did you mean 'gpu'?)" in joined
    assert "$.abstract: expected true or false, found the string 'no'" in joined
    assert "$.features[0].version: expected an integer of at least 0 or a string" in joined
    assert "$.features[0].operations[0].data_types[0]: the string 'fp9' is not accepted" in joined
    assert (
        "$.memory_hierarchy[0]: needs at least one of the keys: size_bytes, bandwidth_gbps"
        in joined
    )
    assert "$.peak_tflops.fp99: 'fp99' is not accepted as a key here" in joined
    assert (
        "$.peak_tflops.fp32: the integer 0 is out of range; expected a number greater than 0"
        in joined
    )


def test_semantic_checks_duplicate_names_and_bad_regexes() -> None:
    text = (
        "device_type: x.y\n"
        "features:\n"
        "  - {name: a, version: 1}\n"
        "  - {name: a, version: 2}\n"
        "memory_hierarchy:\n"
        "  - {level: l2, size_bytes: 1}\n"
        "  - {level: l2, size_bytes: 2}\n"
        "detection:\n"
        "  product_names: ['H100(']\n"
    )
    found = problems_of(text)
    assert any(
        "d.yaml:4:12: $.features[1].name: features has two entries with name 'a'" in f
        for f in found
    )
    assert any(
        "$.memory_hierarchy[1].level: memory_hierarchy has two entries with level 'l2'" in f
        for f in found
    )
    assert any(
        "$.detection.product_names[0]: 'H100(' is not a valid regular expression" in f
        for f in found
    )


def test_duplicate_items_in_a_list() -> None:
    found = problems_of("device_type: x.y\nsources: ['https://a.example', 'https://a.example']\n")
    assert found == [
        "d.yaml:2:10: $.sources: the list repeats 'https://a.example'; each item may appear once"
    ]


def test_problem_count_is_capped(write_yaml: Callable[[str, str], Path]) -> None:
    text = "device_type: x.y\n" + "".join(f"unknown_{i}: 1\n" for i in range(MAX_PROBLEMS + 20))
    found = problems_of(text)
    assert len(found) == MAX_PROBLEMS + 1
    assert found[-1].endswith("... and 20 more problems")


def test_fnuz_fp8_types_are_in_the_vocabulary() -> None:
    assert problems_of("device_type: x.y\npeak_tflops: {fp8_e4m3fnuz: 1, fp8_e5m2fnuz: 1}\n") == []
    text = (
        "device_type: x.y\nfeatures:\n  - name: mfma\n    version: 3\n    operations:\n"
        "      - {name: matmul, data_types: [fp8_e4m3fnuz, fp8_e5m2fnuz]}\n"
    )
    assert problems_of(text) == []


def test_every_prism_dtype_names_a_vocabulary_type() -> None:
    from prism_core.kernel.description import dtypes

    vocabulary = set(device_schema()["definitions"]["data_type"]["enum"])
    assert {d.vocab for d in dtypes.ALL} <= vocabulary
    assert {"fp8_e4m3", "fp8_e5m2", "fp8_e4m3fnuz", "fp8_e5m2fnuz"} <= {d.vocab for d in dtypes.ALL}


class _NamedDType:
    """A dtype object as ml_dtypes gives NumPy (``.name``) or torch prints (``torch.<name>``)."""

    def __init__(self, name: str, *, torch: bool = False) -> None:
        self._name, self._torch = name, torch
        if not torch:
            self.name = name

    def __str__(self) -> str:
        return f"torch.{self._name}" if self._torch else self._name


@pytest.mark.parametrize(
    ("name", "vocab"),
    [
        ("float8_e4m3fn", "fp8_e4m3"),
        ("float8_e5m2", "fp8_e5m2"),
        ("float8_e4m3fnuz", "fp8_e4m3fnuz"),
        ("float8_e5m2fnuz", "fp8_e5m2fnuz"),
    ],
)
def test_fp8_dtypes_map_ml_dtypes_and_torch_names(name: str, vocab: str) -> None:
    import prism_core
    from prism_core.kernel.description import dtypes

    found = dtypes.dtype(name)
    assert found is getattr(prism_core, name) and found.vocab == vocab and found.itemsize == 1
    assert dtypes.dtype(vocab) is found
    assert dtypes.dtype(_NamedDType(name)) is found
    assert dtypes.dtype(_NamedDType(name, torch=True)) is found


def test_dropped_features_need_a_predecessor() -> None:
    found = problems_of("device_type: x.y\ndropped_features: {mig: no MIG on this part}\n")
    assert found == [
        "d.yaml:2:1: $.dropped_features: dropped_features needs `succeeds`: it lists features "
        "of the predecessor that this generation no longer has"
    ]
    ok = "device_type: x.y\nsucceeds: x.w\ndropped_features: {mig: no MIG on this part}\n"
    assert problems_of(ok) == []


def test_dropped_features_need_a_reason() -> None:
    found = problems_of("device_type: x.y\nsucceeds: x.w\ndropped_features: {mig: ''}\n")
    assert len(found) == 1 and "$.dropped_features.mig" in found[0]


def test_partition_modes_are_unique_and_counts_positive() -> None:
    text = (
        "device_type: x.y\npartitions:\n"
        "  - {mode: flat, device_type: x.die, count: 2}\n"
        "  - {mode: flat, device_type: x.y, count: 1}\n"
    )
    assert problems_of(text) == [
        "d.yaml:4:12: $.partitions[1].mode: partitions has two entries with mode 'flat' (the "
        "first at line 3); give each mode one entry"
    ]
    found = problems_of("device_type: x.y\npartitions: [{mode: m, device_type: x.die, count: 0}]\n")
    assert len(found) == 1 and "$.partitions[0].count" in found[0]
    found = problems_of("device_type: x.y\npartitions: [{mode: m, count: 2}]\n")
    assert len(found) == 1 and "device_type" in found[0]


def test_a_quoted_enum_value_is_one_problem_saying_what_to_write(tmp_path: Path) -> None:
    """A value of the right text but the wrong type gets one problem (not a type problem and
    an enum problem that suggests the value given), saying which value to write."""
    (tmp_path / "d.yaml").write_text('format_version: "2"\ndevice_type: x.y\n', encoding="utf-8")
    proc = run_prism(tmp_path, "validate", "d.yaml")
    assert proc.returncode == 1
    problems = [line.strip() for line in proc.stdout.splitlines() if line.startswith("  ")]
    assert problems == [
        "d.yaml:1:17: $.format_version: the string '2' is not accepted; expected the integer "
        "2 (one of: 1, 2), not a string: write it without quotes"
    ]
    # Another wrong type, or a value of the right type that is not listed: one problem each.
    assert problems_of("format_version: '3'\ndevice_type: x.y\n") == [
        "d.yaml:1:17: $.format_version: expected one of: 1, 2, found the string '3'"
    ]
    assert problems_of("format_version: 3\ndevice_type: x.y\n") == [
        "d.yaml:1:17: $.format_version: the integer 3 is not accepted; expected one of: 1, 2"
    ]
    found = problems_of(
        "device_type: x.y\nfeatures:\n"
        "  - {name: f, version: 1, operations: [{name: matmul, data_types: [16]}]}\n"
    )
    assert len(found) == 1 and "found the integer 16" in found[0], found
