"""Validation of parsed device files against ``schemas/device.schema.json``.

jsonschema and the schema itself are loaded on first use only (``import prism_core`` stays
light), ``$ref`` is resolved from a local registry that never touches the network, and every
jsonschema error is turned into a :class:`Problem` at the line of the key at fault, with a
sentence saying what would be accepted.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from prism_core.kernel.config import data_dir
from prism_core.kernel.errors import Problem, did_you_mean

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
    from jsonschema.protocols import Validator

    from prism_core.kernel.description.yaml_loader import JSON, ParsedYAML, PathT

__all__ = ["device_schema", "device_schema_bytes", "schema_path", "validate_parsed"]

_DEVICE_SCHEMA = "device.schema.json"
#: Upper bound on the problems reported for one file; the rest are counted.
MAX_PROBLEMS = 100


def schema_path() -> Path:
    """Path of the device schema shipped with this installation."""
    return data_dir("schemas") / _DEVICE_SCHEMA


@functools.lru_cache(maxsize=1)
def device_schema_bytes() -> bytes:
    return schema_path().read_bytes()


@functools.lru_cache(maxsize=1)
def device_schema() -> dict[str, Any]:
    """The device JSON Schema as a dict (a fresh copy is not made: do not mutate it)."""
    schema: dict[str, Any] = json.loads(device_schema_bytes())
    return schema


@functools.lru_cache(maxsize=1)
def _validator() -> Validator:
    from jsonschema import Draft202012Validator
    from referencing import Registry, Resource
    from referencing.exceptions import NoSuchResource
    from referencing.jsonschema import DRAFT202012

    schema = device_schema()

    def no_network(uri: str) -> Resource[Any]:
        # Every $ref must resolve from the registry below; never fetch anything.
        raise NoSuchResource(ref=uri)  # type: ignore[call-arg]

    resource = Resource.from_contents(schema, default_specification=DRAFT202012)
    registry: Registry[Any] = Registry(retrieve=no_network).with_resource(  # type: ignore[call-arg]
        schema["$id"], resource
    )
    return Draft202012Validator(schema, registry=registry)


def _describe_value(value: object) -> str:
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if value is None:
        return "null (an empty value)"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the string {value!r}"
    if isinstance(value, int):
        return f"the integer {value}"
    return f"the number {value}"


_TYPE_WORDS = MappingProxyType(
    {
        "object": "a mapping",
        "array": "a list",
        "string": "a string",
        "integer": "an integer",
        "number": "a number",
        "boolean": "true or false",
        "null": "null",
    }
)


def _expected(schema: object, depth: int = 0, *, brief: bool = False) -> str:
    """A short phrase for what ``schema`` accepts."""
    if not isinstance(schema, dict) or depth > 3:
        return "a valid value"
    if "$ref" in schema:
        return _expected(_resolve_ref(schema["$ref"]), depth + 1, brief=brief)
    if "enum" in schema:
        values = ", ".join(str(v) for v in schema["enum"])
        return f"one of: {values}"
    if "anyOf" in schema:
        return " or ".join(_expected(s, depth + 1) for s in schema["anyOf"])
    kind = schema.get("type")
    phrase = _TYPE_WORDS.get(kind, "a valid value") if isinstance(kind, str) else "a valid value"
    if kind == "array" and isinstance(schema.get("items"), dict):
        phrase = f"a list of {_plural(_expected(schema['items'], depth + 1, brief=True))}"
    if "pattern" in schema and "description" in schema and not brief:
        phrase = f"{phrase} ({_first_sentence(schema['description'])})"
    elif "exclusiveMinimum" in schema:
        phrase = f"{phrase} greater than {schema['exclusiveMinimum']}"
    elif "minimum" in schema:
        phrase = f"{phrase} of at least {schema['minimum']}"
    return phrase


def _plural(phrase: str) -> str:
    for article in ("a ", "an "):
        if phrase.startswith(article):
            rest = phrase[len(article) :]
            word, _, tail = rest.partition(" ")
            return f"{word}s {tail}".strip()
    return phrase


def _first_sentence(text: str) -> str:
    # "e.g. nvidia" does not end a sentence; ". The" does.
    return re.split(r"(?<=[a-z0-9)])\. (?=[A-Z])", text)[0].rstrip(".")


def _resolve_ref(ref: str) -> object:
    node: object = device_schema()
    if not ref.startswith("#/"):
        return {}
    for part in ref[2:].split("/"):
        node = node.get(part, {}) if isinstance(node, dict) else {}
    return node


def _problems_of(error: ValidationError, parsed: ParsedYAML, filename: str) -> Iterator[Problem]:
    path: PathT = tuple(error.absolute_path)
    keyword = error.validator
    schema = error.schema if isinstance(error.schema, dict) else {}
    instance = cast("JSON", error.instance)  # a part of the document
    expected_value: Any = error.validator_value  # a part of the schema

    def at(p: PathT, message: str, *, key: bool = False) -> Problem:
        return _at(parsed, filename, p, message, key=key)

    if "propertyNames" in error.absolute_schema_path:
        # jsonschema checks each *name* as an instance of its own, at the mapping's path.
        name = str(instance)
        hint = did_you_mean(name, _enum_of(schema))
        yield at(
            (*path, name),
            f"{name!r} is not accepted as a key here{hint}; expected {_expected(schema)}",
            key=True,
        )
        return

    if keyword == "additionalProperties" and isinstance(instance, dict):
        allowed = sorted(schema.get("properties", {}))
        patterns = list(schema.get("patternProperties", {}))
        for key in instance:
            if key in allowed or any(re.search(p, key) for p in patterns):
                continue
            hint = did_you_mean(key, allowed)
            accepted = f"; accepted keys here: {', '.join(allowed)}" if allowed else ""
            yield at((*path, key), f"unknown key {key!r}{hint}{accepted}", key=True)
        return
    if keyword == "required" and isinstance(instance, dict):
        for key in expected_value:
            if key not in instance:
                yield at(path, f"missing required key {key!r}")
        return
    if keyword == "enum":
        kinds = schema.get("type") or ()
        kinds = [kinds] if isinstance(kinds, str) else kinds
        if kinds and not any(_validator().is_type(instance, k) for k in kinds):
            return  # the type's problem says it, and which value to write
        hint = did_you_mean(str(instance), [str(v) for v in expected_value])
        yield at(
            path, f"{_describe_value(instance)} is not accepted{hint}; expected {_expected(schema)}"
        )
        return
    if keyword == "type":
        meant = [v for v in schema.get("enum", ()) if str(v) == str(instance)]
        if meant:  # format_version: "2", the right text in quotes (or a text without them)
            fix = "not a string: write it without quotes"
            if not isinstance(instance, str):
                fix = "a string: write it in quotes"
            yield at(
                path,
                f"{_describe_value(instance)} is not accepted; expected "
                f"{_describe_value(meant[0])} ({_expected(schema)}), {fix}",
            )
            return
        yield at(path, f"expected {_expected(schema)}, found {_describe_value(instance)}")
        return
    if keyword == "pattern":
        yield at(path, f"{_describe_value(instance)} is not accepted; expected {_expected(schema)}")
        return
    if keyword == "anyOf":
        subs = expected_value
        if all(isinstance(s, dict) and set(s) == {"required"} for s in subs):
            if any(len(s["required"]) > 1 for s in subs):  # {device_type, count} or {parts}
                alternatives = ", or ".join(" and ".join(s["required"]) for s in subs)
                yield at(path, f"needs the keys {alternatives}")
                return
            names = [n for s in subs for n in s["required"]]
            yield at(path, f"needs at least one of the keys: {', '.join(names)}")
            return
        yield at(path, f"expected {_expected(schema)}, found {_describe_value(instance)}")
        return
    if keyword == "not" and isinstance(instance, dict) and isinstance(expected_value, dict):
        # {"not": {"anyOf": [{"required": [a, b]}, ...]}}: keys that exclude each other.
        groups = [
            s["required"]
            for s in expected_value.get("anyOf", [expected_value])
            if isinstance(s, dict) and set(s) == {"required"}
        ]
        given = [g for g in groups if all(k in instance for k in g)]
        if given:
            common = [k for k in given[0] if all(k in g for g in given)]
            others = [k for g in given for k in g if k not in common]
            if common and others:  # parts with device_type and with count
                message = f"{' and '.join(common)} cannot be given together with "
                message += f"{' and '.join(dict.fromkeys(others))}; give one or the other"
            else:
                message = f"{' and '.join(given[0])} cannot be given together; give one of them"
            yield at((*path, (common or given[0])[-1]), message, key=True)
            return
    if keyword in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum"):
        yield at(
            path,
            f"{_describe_value(instance)} is out of range; expected {_expected(schema)}"
            + (f" and at most {schema['maximum']}" if "maximum" in schema else ""),
        )
        return
    if keyword == "uniqueItems" and isinstance(instance, list):
        seen: set[str] = set()
        dups = []
        for item in instance:
            marker = json.dumps(item, sort_keys=True)
            if marker in seen:
                dups.append(item)
            seen.add(marker)
        yield at(
            path, f"the list repeats {', '.join(repr(d) for d in dups)}; each item may appear once"
        )
        return
    # minItems, maxItems, minLength, maxLength, minProperties, maxProperties, const: jsonschema's
    # own sentence says it well enough.
    yield at(path, error.message)


def _enum_of(schema: object) -> list[str]:
    if isinstance(schema, dict) and "$ref" in schema:
        schema = _resolve_ref(schema["$ref"])
    if isinstance(schema, dict) and "enum" in schema:
        return [str(v) for v in schema["enum"]]
    return []


#: What format 2 of the device-file format added, as paths into a document (``"*"``: every
#: item of a list): a file that uses one says ``format_version: 2``.
FORMAT_2_KEYS: tuple[tuple[str, ...], ...] = (
    ("throughput",),
    ("sparsity",),
    ("numeric_formats",),
    ("partitions", "*", "dimensions"),
    ("partitions", "*", "parts"),
    ("links",),
    ("memory_hierarchy", "*", "remote_bandwidth_gbps"),
    ("memory_hierarchy", "*", "usable_bytes"),
)


def _occurrences(node: JSON, path: tuple[str, ...], at: PathT = ()) -> Iterator[PathT]:
    """The paths in ``node`` that ``path`` names (``"*"`` stands for every item of a list)."""
    if not path:
        yield at
        return
    head, rest = path[0], path[1:]
    if head == "*":
        if isinstance(node, list):
            for i, item in enumerate(node):
                yield from _occurrences(item, rest, (*at, i))
    elif isinstance(node, dict) and head in node:
        yield from _occurrences(node[head], rest, (*at, head))


def _at(
    parsed: ParsedYAML, filename: str, path: PathT, message: str, *, key: bool = False
) -> Problem:
    """The problem ``message`` at ``path`` of ``parsed`` (at its key where ``key``)."""
    from prism_core.kernel.description.yaml_loader import json_path

    line, col = parsed.locate(path, key=key)
    return Problem(filename, line, col, json_path(path), message)


K = TypeVar("K")


def _repeats(keys: Sequence[K | None]) -> Iterator[tuple[int, int, K]]:
    """``(i, first, key)`` for each position ``i`` whose key (not ``None``) an earlier
    position ``first`` already had: the entries of a list that repeat one."""
    seen: dict[K, int] = {}
    for i, key in enumerate(keys):
        if key is None:
            continue
        if key in seen:
            yield i, seen[key], key
        else:
            seen[key] = i


def _version_problems(parsed: ParsedYAML, filename: str) -> Iterator[Problem]:
    """A key of format 2 in a file that does not say ``format_version: 2``."""
    doc = parsed.value
    if doc.get("format_version") == 2:
        return
    said = "says format_version: 1" if "format_version" in doc else "gives no format_version"
    for path in FORMAT_2_KEYS:
        for found in _occurrences(doc, path):
            yield _at(
                parsed,
                filename,
                found,
                f"{found[-1]} is a key of format 2 of the device-file format, and this file "
                f'{said}: add `format_version: 2` at its top (docs/device-files.md, "Format '
                'versions")',
                key=True,
            )


def _entries(node: JSON, key: str) -> list[dict[str, JSON]]:
    """The items of the list ``node[key]``, ``{}`` for one that is not a mapping (so that the
    indices stay); none where there is no such list."""
    items = node.get(key) if isinstance(node, dict) else None
    return [i if isinstance(i, dict) else {} for i in items] if isinstance(items, list) else []


def _names(items: list[dict[str, JSON]], key: str) -> list[str | None]:
    """The string ``key`` of each of ``items`` (``None`` where it has none)."""
    return [v if isinstance(v, str) else None for v in (item.get(key) for item in items)]


def _semantic_problems(parsed: ParsedYAML, filename: str) -> Iterator[Problem]:
    """What JSON Schema cannot say: unique names in keyed lists, regexes that compile,
    ``dropped_features`` only beside ``succeeds``, format 2's keys only in format 2."""
    doc = parsed.value
    yield from _version_problems(parsed, filename)

    def at(p: PathT, message: str, *, key: bool = False) -> Problem:
        return _at(parsed, filename, p, message, key=key)

    if "links" in doc or any("usable_bytes" in m for m in _entries(doc, "memory_hierarchy")):
        # imported for the files that use them, as sparsity and numeric_formats below
        from prism_core.kernel.description.topology import topology_problems

        for found, message, on_key in topology_problems(doc):
            yield at(found, message, key=on_key)
    if "dropped_features" in doc and "succeeds" not in doc:
        yield at(
            ("dropped_features",),
            "dropped_features needs `succeeds`: it lists features of the predecessor that this "
            "generation no longer has",
            key=True,
        )
    modes = _entries(doc, "partitions")
    patterns: list[tuple[PathT, JSON]] = []  # regular expressions, where they are
    for i, entry in enumerate(modes):
        for j, part in enumerate(_entries(entry, "parts")):
            names = part.get("product_names")
            for k, pattern in enumerate(names if isinstance(names, list) else ()):
                patterns.append((("partitions", i, "parts", j, "product_names", k), pattern))
    detection = doc.get("detection")
    names = detection.get("product_names") if isinstance(detection, dict) else None
    for i, pattern in enumerate(names if isinstance(names, list) else ()):
        patterns.append((("detection", "product_names", i), pattern))
    for found, pattern in patterns:
        try:
            re.compile(str(pattern))  # a string, by the schema
        except re.error as exc:
            yield at(found, f"{pattern!r} is not a valid regular expression: {exc}")
    dims = [m.get("dimensions") for m in modes]
    keys = [json.dumps(d, sort_keys=True) if isinstance(d, dict) and d else None for d in dims]
    for i, first, _ in _repeats(keys):
        line = parsed.locate(("partitions", first, "dimensions"))[0]
        yield at(
            ("partitions", i, "dimensions"),
            f"partitions has two entries with dimensions {dims[i]} (the first at line {line}); "
            "the dimensions of a mode tell it from the others",
        )
    for i, first, mode in _repeats(_names(modes, "mode")):
        line = parsed.locate(("partitions", first, "mode"))[0]
        yield at(
            ("partitions", i, "mode"),
            f"partitions has two entries with mode {mode!r} (the first at line {line}); "
            "give each mode one entry",
        )
    for list_key, name_key in (("features", "name"), ("memory_hierarchy", "level")):
        items = _entries(doc, list_key)
        names_of = _names(items, name_key)
        for i, first, name in _repeats(names_of):
            line = parsed.locate((list_key, first, name_key))[0]
            yield at(
                (list_key, i, name_key),
                f"{list_key} has two entries with {name_key} {name!r} (the first at line "
                f"{line}); merge them into one",
            )
        for i, item in enumerate(items if list_key == "features" else ()):
            ops = _names(_entries(item, "operations"), "name") if names_of[i] else []
            for j, _, op_name in _repeats(ops):
                yield at(
                    (list_key, i, "operations", j, "name"),
                    f"operation {op_name!r} is listed twice in feature {names_of[i]!r}; "
                    "merge its data_types into one entry",
                )
    pairs = [(str(e.get("unit")), str(e.get("data_type"))) for e in _entries(doc, "throughput")]
    for i, first, pair in _repeats(pairs):  # one entry per (unit, data_type)
        line = parsed.locate(("throughput", first))[0]
        yield at(
            ("throughput", i),
            f"throughput has two entries for unit {pair[0]!r} and data_type "
            f"{pair[1]!r} (the first at line {line}); give each pair one entry",
        )
    if "throughput" in doc and "peak_tflops" in doc:
        from prism_core.kernel.description.throughput import rates_above_peak

        for i, _, message in rates_above_peak(doc):
            yield at(("throughput", i, "tflops"), message)
    if "sparsity" in doc:  # imported for the files that use them (their classes cost ~1 ms)
        from prism_core.kernel.description.sparsity import sparsity_problems

        for found, message in sparsity_problems(doc):
            yield at(found, message)
    if "numeric_formats" in doc:
        from prism_core.kernel.description.numeric_formats import format_problems

        for found, message in format_problems(doc):
            yield at(found, message)


def validate_parsed(parsed: ParsedYAML, filename: str) -> list[Problem]:
    """Every problem of one parsed device file, sorted; at most :data:`MAX_PROBLEMS` of them."""
    problems: list[Problem] = []
    for error in _validator().iter_errors(parsed.value):
        problems.extend(_problems_of(error, parsed, filename))
    if not problems:
        problems.extend(_semantic_problems(parsed, filename))
    problems = sorted(set(problems))
    if len(problems) > MAX_PROBLEMS:
        rest = len(problems) - MAX_PROBLEMS
        problems = [
            *problems[:MAX_PROBLEMS],
            Problem(filename, 0, 0, "$", f"... and {rest} more problems"),
        ]
    return problems
