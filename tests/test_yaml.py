"""The strict YAML reader: YAML 1.2 scalars, no aliases or tags, located problems for any input."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prism_core.kernel.description.schema import validate_parsed
from prism_core.kernel.description.yaml_loader import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_NODES,
    json_path,
    parse_yaml,
)
from prism_core.kernel.errors import Problem

from .conftest import HARDWARE, SEED


def only_problem(text: str | bytes) -> Problem:
    _, problems = parse_yaml(text, "f.yaml")
    assert len(problems) == 1, problems
    return problems[0]


def test_seed_example_parses_to_plain_values() -> None:
    parsed, problems = parse_yaml(SEED.read_bytes(), str(SEED))
    assert problems == []
    assert parsed is not None
    assert parsed.value["device_type"] == "aws.trainium2"
    assert parsed.value["compute_units"] == 128
    assert parsed.value["memory_hierarchy"][0]["size_bytes"] == 32_000_000_000
    assert parsed.value["features"][0]["operations"][0]["data_types"] == [
        "fp32",
        "fp16",
        "bf16",
        "int8",
    ]


def test_positions_of_keys_and_values_are_one_based() -> None:
    parsed, _ = parse_yaml("a: 1\nb:\n  - x\n  - {c: 2}\n", "f.yaml")
    assert parsed is not None
    assert parsed.key_positions[("b",)] == (2, 1)
    assert parsed.positions[("b", 0)] == (3, 5)
    assert parsed.positions[("b", 1, "c")] == (4, 9)
    assert parsed.locate(("b", 1, "missing")) == (4, 5)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("no", "no"),
        ("yes", "yes"),
        ("on", "on"),
        ("true", True),
        ("False", False),
        ("~", None),
        ("null", None),
        ("0x10", 16),
        ("0o17", 15),
        ("017", 17),
        ("1e3", 1000.0),
        ("-2.5", -2.5),
        ("2025-06-01", "2025-06-01"),
        ("'9.0'", "9.0"),
        ('"123"', "123"),
        ("1_000", "1_000"),
        ("!!str 123", "123"),
        ("!!float 3", 3.0),
    ],
)
def test_yaml_1_2_core_schema_scalars(text: str, value: object) -> None:
    parsed, problems = parse_yaml(f"k: {text}\n", "f.yaml")
    assert problems == []
    assert parsed is not None
    assert parsed.value["k"] == value
    assert type(parsed.value["k"]) is type(value)


def test_duplicate_keys_are_errors_naming_the_first() -> None:
    p = only_problem("a: 1\nb: 2\na: 3\n")
    assert (p.line, p.column, p.json_path) == (3, 1, "$.a")
    assert "duplicate key 'a'" in p.message
    assert "line 1" in p.message


def test_anchors_and_aliases_are_errors() -> None:
    _, problems = parse_yaml("a: &x [1, 2]\nb: *x\n", "f.yaml")
    messages = [str(p) for p in problems]
    assert messages == [
        "f.yaml:1:4: $.a: anchors (&x) are not allowed in device files; "
        "use `extends` to share values between devices",
        "f.yaml:2:4: $.b: aliases (*x) are not allowed in device files; "
        "use `extends` to share values between devices",
    ]


def test_alias_bomb_is_rejected_without_expansion() -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    parsed, problems = parse_yaml("\n".join(lines) + "\n", "bomb.yaml")
    assert problems
    assert all("not allowed" in p.message for p in problems)
    # Aliases were never expanded: each stands as a single null in what was built.
    assert parsed is not None
    assert parsed.value["i"] == [None] * 9
    assert all(p.line >= 1 for p in problems)


@pytest.mark.parametrize(
    "text",
    [
        "a: !!python/object/apply:os.system ['echo hi']\n",
        "a: !!python/name:os.system\n",
        "a: !custom 3\n",
        "a: !!set {x, y}\n",
        "a: !!binary aGk=\n",
    ],
)
def test_tags_other_than_core_ones_are_rejected(text: str) -> None:
    p = only_problem(text)
    assert (p.line, p.json_path) == (1, "$.a")
    assert "tag" in p.message and "not allowed" in p.message


def test_core_tag_with_wrong_value_is_an_error() -> None:
    p = only_problem("a: !!int abc\n")
    assert "not a valid value for the tag" in p.message


def test_multiple_documents_are_rejected_at_the_second() -> None:
    p = only_problem("a: 1\n---\nb: 2\n")
    assert p.line == 2
    assert "exactly one" in p.message


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "empty"),
        (b"   \n# only a comment\n", "empty"),
        (b"- 1\n- 2\n", "holds a list"),
        (b"just a string\n", "holds str"),
        (b"a: 1\n  b: 2\n", "invalid YAML"),
        (b"{", "invalid YAML"),
        (b"a:\n\t- 1\n", "invalid YAML"),
        (b"a: \x00\n", "not allowed"),
        (b"\xff\xfe garbage", "not UTF-8"),
        (b"a: .nan\n", "not a finite number"),
        (b"a: " + b"9" * 5000 + b"\n", "too large"),
        (b"[1, 2]: x\n", "keys must be strings"),
        (b"1: x\n", "keys must be strings"),
    ],
)
def test_bad_input_gets_one_located_problem(data: bytes, fragment: str) -> None:
    p = only_problem(data)
    assert fragment in p.message
    assert p.line >= 1 and p.column >= 1
    assert p.file == "f.yaml"


def test_utf8_error_points_at_the_byte() -> None:
    p = only_problem(b"a: 1\nb: caf\xe9\n")
    assert (p.line, p.column) == (2, 7)
    assert "0xe9" in p.message


def test_byte_order_mark_is_accepted() -> None:
    parsed, problems = parse_yaml("\ufeffa: 1\n".encode(), "f.yaml")
    assert problems == []
    assert parsed is not None and parsed.value == {"a": 1}


def test_size_limit() -> None:
    p = only_problem(b"a: '" + b"x" * (3 * 1024 * 1024) + b"'\n")
    assert f"{MAX_BYTES:,}" in p.message
    assert p.line == 1


def test_depth_limit_stops_deep_nesting() -> None:
    deep = "a: " + "[" * 10_000 + "]" * 10_000 + "\n"
    p = only_problem(deep)
    assert f"more than {MAX_DEPTH} levels" in p.message
    block = "a:\n" + "".join("  " * i + "k:\n" for i in range(1, 200))
    p = only_problem(block)
    assert f"more than {MAX_DEPTH} levels" in p.message


def test_node_limit_stops_huge_documents() -> None:
    text = "".join(f"k{i}: {i}\n" for i in range(MAX_NODES))
    p = only_problem(text.encode()[:MAX_BYTES])
    assert f"more than {MAX_NODES:,} values" in p.message


def test_json_path_rendering() -> None:
    assert json_path(()) == "$"
    assert json_path(("features", 0, "operations", 1, "name")) == "$.features[0].operations[1].name"
    assert json_path(("attributes", "a b")) == "$.attributes['a b']"


@pytest.mark.parametrize("path", sorted(HARDWARE.rglob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_files_parse_to_json_round_trippable_values(path: object) -> None:
    from pathlib import Path

    assert isinstance(path, Path)
    parsed, problems = parse_yaml(path.read_bytes(), str(path))
    assert problems == []
    assert parsed is not None
    assert json.loads(json.dumps(parsed.value)) == parsed.value


# -- property tests: whatever comes in, only located problems come out -----------------------

_seed_text = SEED.read_text(encoding="utf-8")
_h100_text = (HARDWARE / "nvidia" / "h100-sxm.yaml").read_text(encoding="utf-8")
_yaml_bits = st.sampled_from(
    [
        "\n",
        ": ",
        "- ",
        "[",
        "]",
        "{",
        "}",
        "&a ",
        "*a",
        "!!python/object ",
        "---\n",
        "'",
        '"',
        "\t",
        "  ",
        "no",
        "1e9",
        "0x1",
        "? ",
        "|\n",
        ">\n",
        "%YAML 1.1\n",
        "#",
        ",",
        "\x00",
        "é",
    ]
)


def _check_only_problems(data: bytes | str) -> None:
    parsed, problems = parse_yaml(data, "fuzz.yaml")
    for p in problems:
        assert isinstance(p, Problem)
        assert p.file == "fuzz.yaml" and p.message
    if parsed is not None and not problems:
        for p in validate_parsed(parsed, "fuzz.yaml"):
            assert isinstance(p, Problem) and p.message and p.line >= 1


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=2000))
def test_random_bytes_give_only_located_problems(data: bytes) -> None:
    _check_only_problems(data)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=500))
def test_random_text_gives_only_located_problems(text: str) -> None:
    _check_only_problems(text)


@settings(max_examples=400, deadline=None)
@given(
    st.sampled_from([_seed_text, _h100_text]),
    st.lists(
        st.tuples(st.integers(0, 4000), st.integers(0, 20), st.lists(_yaml_bits, max_size=4)),
        max_size=6,
    ),
)
def test_mutated_device_files_give_only_located_problems(
    base: str, edits: list[tuple[int, int, list[str]]]
) -> None:
    text = base
    for pos, cut, bits in edits:
        pos %= len(text) + 1
        text = text[:pos] + "".join(bits) + text[pos + cut :]
    _check_only_problems(text)


_json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "device_type",
                "compute_units",
                "features",
                "memory_hierarchy",
                "extends",
                "peak_tflops",
                "attributes",
                "detection",
                "kind",
                "vendor",
                "sources",
                "clock_mhz",
                "unknown",
            ]
        ),
        _json_values,
        max_size=8,
    )
)
def test_random_documents_validate_to_located_problems(doc: dict[str, object]) -> None:
    text = json.dumps(doc)  # JSON is YAML: exercises the schema with arbitrary shapes
    _check_only_problems(text)


@pytest.mark.parametrize(
    ("text", "line", "column"),
    [
        ("device_type: a.b\nclock_mhz:\n\tbase: 1\n", 3, 1),
        ("device_type: a.b\nclock_mhz:\n  \tbase: 1\n", 3, 3),
        ("device_type: a.b\nclock_mhz:\n  base: 1\n\tboost: 2\n", 4, 1),
        ("device_type: a.b\nsources:\n\t- https://example.com\n", 3, 1),
        ("\tdevice_type: a.b\n", 1, 1),
        ("device_type: a.b\nfeatures:\n  -\tname: x\n    version: 1\n", 3, 4),
    ],
)
def test_tab_in_indentation_is_named_and_located(text: str, line: int, column: int) -> None:
    problem = only_problem(text)
    assert problem.message == (
        "invalid YAML: tab characters are not allowed for indentation; use spaces"
    ), problem
    assert (problem.line, problem.column) == (line, column)


def test_tab_between_key_and_value_is_fine() -> None:
    parsed, problems = parse_yaml("device_type:\ta.b\n", "f.yaml")
    assert problems == [] and parsed is not None and parsed.value == {"device_type": "a.b"}
