"""The validation cache: device files already validated, keyed by the SHA-256 of their bytes.

A second start reads and hashes each file, but neither parses nor validates it.  Nothing in the
cache file is taken on trust: the key covers Prism's version, the schema and the validation
code (:func:`validation_code_digest`), and each entry must be the file's and still pass the
schema and the semantic checks; any failure only costs speed.  The schema check is this
module's own (:func:`_conforms`): jsonschema would add 64-70 ms to the first call
(benchmarks/results/reimplementations-2026-11-27.md).  The rules: docs/device-files.md,
section 8 ("Validation cache"); the cost: docs/performance.md, "Checking cached entries".
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from prism_core.kernel.errors import debug
from prism_core.kernel.version import __version__

__all__ = [
    "MAX_STALE_ENTRIES",
    "VALIDATION_SOURCES",
    "ValidationCache",
    "digest",
    "validation_code_digest",
]

_FILE = "device-files-v2.json"
#: Entries kept besides those of the files loaded in the run that writes the cache.
MAX_STALE_ENTRIES = 4096
#: The modules (in this package) whose code decides what a valid file's document is: read the
#: file, parse its YAML, validate it, and check and store cache entries.  Their source is part of
#: the cache key.  tests/test_validation_cache.py checks that every module validation imports is
#: either listed here or cannot change a document.
VALIDATION_SOURCES = (
    "yaml_loader.py",
    "schema.py",
    "library.py",
    "cache.py",
    "numeric_formats.py",
    "sparsity.py",
    "topology.py",
    "throughput.py",
)
_PACKAGE = Path(__file__).resolve().parent


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def validation_code_digest(directory: Path | None = None) -> str | None:
    """SHA-256 of the source of :data:`VALIDATION_SOURCES` in ``directory`` (this package's,
    read once per process, by default); ``None`` when one cannot be read (then nothing can be
    cached safely)."""
    if directory is None:
        return _own_code_digest()
    h = hashlib.sha256()
    for name in VALIDATION_SOURCES:
        try:
            data = (directory / name).read_bytes()
        except OSError:
            return None
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=1)
def _own_code_digest() -> str | None:
    return validation_code_digest(_PACKAGE)


class ValidationCache:
    """A JSON file mapping content digests to validated documents, each checked when used."""

    def __init__(self, directory: Path | None, schema_bytes: bytes) -> None:
        code = validation_code_digest()
        if code is None:
            debug("validation cache disabled: the source of %s is missing", _PACKAGE)
            directory = None
        self.directory = directory
        self.key = f"{__version__}:{digest(schema_bytes)[:16]}:{code}"
        self._entries: dict[str, Any] | None = None
        self._used: dict[str, None] = {}  # keys used in this run, in order of use
        self._dirty = False
        self.hits = 0
        self.misses = 0
        #: Entries found but refused by the checks (then validated again, as misses).
        self.dropped = 0

    @property
    def path(self) -> Path | None:
        return None if self.directory is None else self.directory / _FILE

    def _load(self) -> dict[str, Any]:
        if self._entries is not None:
            return self._entries
        self._entries = {}
        path = self.path
        if path is None:
            return self._entries
        try:
            raw = json.loads(path.read_bytes())
            if not isinstance(raw, dict) or raw.get("key") != self.key:
                return self._entries  # another Prism, schema or validation code: start afresh
            text = raw["entries"]
            if digest(text.encode("utf-8")) != raw["checksum"]:
                raise ValueError("checksum mismatch")
            entries = json.loads(text)
            if not isinstance(entries, dict):
                raise ValueError("entries are not a mapping")
        except FileNotFoundError:
            return self._entries
        except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            debug("ignoring damaged validation cache %s: %s", path, exc)
            return self._entries
        self._entries = entries
        return self._entries

    def get(self, key: str, data: bytes) -> dict[str, Any] | None:
        """The validated document of the file whose bytes are ``data`` (``key`` is their
        digest), or ``None``: not cached, or cached but refused by the checks (and dropped)."""
        entries = self._load()
        entry = entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        document = _checked(entry, key, data)
        if document is None:
            debug("dropping a validation-cache entry that does not check out: %s", key)
            del entries[key]
            self._dirty = True
            self.dropped += 1
            self.misses += 1
            return None
        self.hits += 1
        self._used[key] = None
        return document

    def put(self, key: str, data: bytes, document: Mapping[str, Any]) -> None:
        """Record ``document`` as the validated content of ``data`` (whose digest is ``key``)."""
        entries = self._load()
        entry = {"sha256": key, "size": len(data), "document": document}
        if entries.get(key) != entry:
            entries[key] = entry
            self._dirty = True
        self._used[key] = None

    def save(self) -> None:
        """Write the cache if it changed; atomically, and silently give up on any OS error."""
        path = self.path
        if not self._dirty or path is None or self._entries is None:
            return
        entries = self._entries
        # Least recently used first: entries not used in this run keep the order of the last
        # write (oldest first), and are followed by this run's, in order of use.
        stale = [k for k in entries if k not in self._used]
        keep = stale[max(0, len(stale) - MAX_STALE_ENTRIES) :]
        ordered = {k: entries[k] for k in keep}
        ordered.update((k, entries[k]) for k in self._used if k in entries)
        text = json.dumps(ordered, separators=(",", ":"))
        payload = json.dumps(
            {"key": self.key, "checksum": digest(text.encode("utf-8")), "entries": text}
        )
        import tempfile  # only when writing: keeps `import prism_core` light

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".device-files-", dir=path.parent)
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(payload)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            debug("could not write validation cache %s: %s", path, exc)
            return
        self._entries = ordered
        self._dirty = False


# -- the checks on one entry ------------------------------------------------------------------

#: A top-level ``device_type: NAME`` line (block style, as every device file is written), the
#: key and the value optionally quoted, a comment allowed.
_DEVICE_TYPE_LINE = re.compile(
    rb"""(?:\xef\xbb\xbf)?(["']?)device_type\1[ \t]*:[ \t]*(["']?)([a-z0-9._-]+)\2[ \t]*"""
    rb"""(?:#[^\n]*)?\r?"""
)


def _checked(entry: Any, key: str, data: bytes) -> dict[str, Any] | None:
    """The entry's document if the entry is for these bytes and its document is one that
    validating them could have produced (see the module docstring); else ``None``."""
    if not isinstance(entry, dict) or entry.keys() != {"sha256", "size", "document"}:
        return None
    document = entry["document"]
    if entry["sha256"] != key or entry["size"] != len(data) or not isinstance(document, dict):
        return None
    if not _belongs_to(document, data):
        return None
    from prism_core.kernel.description.schema import _semantic_problems, device_schema, unlocated

    try:
        if not _conforms(document, device_schema()):
            return None
        if next(_semantic_problems(unlocated(document), ""), None) is not None:
            return None
    except (_Unverifiable, RecursionError, re.error, TypeError, ValueError):
        return None
    return document


def _belongs_to(document: dict[str, Any], data: bytes) -> bool:
    """Whether the file declares the document's device type, and names its parents."""
    device_type = document.get("device_type")
    if not isinstance(device_type, str):
        return False
    declared = []
    at = data.find(b"device_type")
    while at >= 0:
        start = data.rfind(b"\n", 0, at) + 1
        end = data.find(b"\n", at)
        match = _DEVICE_TYPE_LINE.fullmatch(data, start, len(data) if end < 0 else end)
        if match is not None:
            declared.append(match.group(3))
        at = data.find(b"device_type", at + 11)
    if declared != [device_type.encode()]:
        return False  # a flow-style or unusual file is simply validated again
    parents = document.get("extends", [])
    parents = [parents] if isinstance(parents, str) else parents
    return isinstance(parents, list) and all(
        isinstance(p, str) and p.encode() in data for p in parents
    )


class _Unverifiable(Exception):
    """The schema uses something :func:`_conforms` does not implement: trust nothing."""


Check = Callable[[Any], bool]

#: Keywords that never make an instance invalid (jsonschema checks no ``format`` by default).
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "definitions",
        "$defs",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "markdownDescription",
    }
)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


_TYPES: dict[str, Check] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": _number,
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


def _equal(a: Any, b: Any) -> bool:
    """JSON equality as jsonschema has it: ``true`` is not ``1``, ``1`` is ``1.0``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if _number(a) and _number(b):
        return bool(a == b)
    return type(a) is type(b) and isinstance(a, (str, type(None))) and a == b


def _conforms(instance: Any, schema: Any) -> bool:
    """Whether ``instance`` is valid against ``schema`` (a whole schema, ``$ref`` resolved in it).

    The subset of JSON Schema 2020-12 the device schema uses, decided as jsonschema decides it
    (tests/test_validation_cache.py compares the two on mutated documents).  The schema is
    compiled into checks once.  A keyword outside the subset raises :class:`_Unverifiable`, so
    that a schema change can only make the cache validate again, never accept a document
    unchecked.  The checks follow the schema, which is shallow: no input can recurse deeply.
    """
    compiled = _COMPILED.get(id(schema))
    if compiled is None or compiled[0] is not schema:
        compiled = (schema, _compile(schema, schema, {}))
        _COMPILED[id(schema)] = compiled
    return compiled[1](instance)


_COMPILED: dict[int, tuple[Any, Check]] = {}


def _compile(schema: Any, root: Any, refs: dict[str, Check]) -> Check:
    if schema is True:
        return lambda v: True
    if schema is False:
        return lambda v: False
    if not isinstance(schema, dict):
        raise _Unverifiable(f"schema {schema!r}")
    # Keywords for one kind of instance (`maxLength`) hold for the others; their checks are
    # built for their kind and guarded here, once per kind (or not at all where `type` is that
    # one kind, and dropped where it is another).
    checks: list[Check] = []
    by_kind: dict[str, list[Check]] = {}
    for keyword, value in schema.items():
        if keyword in _ANNOTATIONS:
            continue
        build = _BUILDERS.get(keyword)
        if build is None:
            raise _Unverifiable(keyword)
        check = build(value, schema, root, refs)
        if check is None:
            continue
        kind = _KIND_OF_KEYWORD.get(keyword)
        if kind is None:
            checks.append(check)
        else:
            by_kind.setdefault(kind, []).append(check)
    declared = schema.get("type")
    only = _KIND_OF_TYPE.get(declared) if isinstance(declared, str) else None
    for kind, group in by_kind.items():
        if only is None:
            checks.append(_guarded(_KIND_TESTS[kind], _all(group)))
        elif kind == only:  # the `type` check, among `checks`, runs first
            checks.extend(group)
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    # Two and three checks (most nodes of the device schema) get closures of their own: a warm
    # start runs every cached document through these.
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        a, b = checks
        return lambda v: a(v) and b(v)
    if len(checks) == 3:
        a, b, c = checks
        return lambda v: a(v) and b(v) and c(v)

    def all_of(v: Any) -> bool:
        for check in checks:  # noqa: SIM110 - a loop is faster than all() over a generator
            if not check(v):
                return False
        return True

    return all_of


def _guarded(test: Check, check: Check) -> Check:
    return lambda v: not test(v) or check(v)


_KIND_TESTS: dict[str, Check] = {
    "object": _TYPES["object"],
    "array": _TYPES["array"],
    "string": _TYPES["string"],
    "number": _number,
}
_KIND_OF_TYPE = {
    "object": "object",
    "array": "array",
    "string": "string",
    "number": "number",
    "integer": "number",
}


Builder = Callable[[Any, dict[str, Any], Any, dict[str, Check]], Check | None]


def _ref(ref: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        raise _Unverifiable(f"$ref {ref!r}")
    if ref not in refs:
        node = root
        for part in ref[2:].split("/"):
            if not isinstance(node, dict) or part not in node:
                raise _Unverifiable(f"$ref {ref!r}")
            node = node[part]
        cell: list[Check] = []
        refs[ref] = lambda v: cell[0](v)  # a schema that refers to itself
        cell.append(_compile(node, root, refs))
        refs[ref] = cell[0]
    return refs[ref]


def _type(kinds: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    names = [kinds] if isinstance(kinds, str) else kinds
    if not isinstance(names, list) or not all(n in _TYPES for n in names):
        raise _Unverifiable(f"type {kinds!r}")
    tests = [_TYPES[n] for n in names]
    if len(tests) == 1:
        return tests[0]
    return lambda v: any(t(v) for t in tests)


def _enum(values: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    if not isinstance(values, list):
        raise _Unverifiable("enum")
    if all(isinstance(e, str) for e in values):
        allowed = frozenset(values)
        return lambda v: isinstance(v, str) and v in allowed
    return lambda v: any(_equal(v, e) for e in values)


def _subschemas(values: Any, root: Any, refs: dict[str, Check]) -> list[Check]:
    if not isinstance(values, list) or not values:
        raise _Unverifiable("a list of schemas")
    return [_compile(sub, root, refs) for sub in values]


def _any_of(values: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    subs = _subschemas(values, root, refs)
    return lambda v: any(c(v) for c in subs)


def _all_of(values: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    subs = _subschemas(values, root, refs)
    return lambda v: all(c(v) for c in subs)


def _one_of(values: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    subs = _subschemas(values, root, refs)
    return lambda v: sum(1 for c in subs if c(v)) == 1


def _not(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    sub = _compile(value, root, refs)
    return lambda v: not sub(v)


def _properties(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    """``properties``, ``patternProperties`` and ``additionalProperties`` together."""
    if not isinstance(value, dict):
        raise _Unverifiable("properties")
    named = {k: _compile(sub, root, refs) for k, sub in value.items()}
    patterns_in = schema.get("patternProperties", {})
    if not isinstance(patterns_in, dict):
        raise _Unverifiable("patternProperties")
    patterns = [(re.compile(p), _compile(sub, root, refs)) for p, sub in patterns_in.items()]
    extra = (
        _compile(schema["additionalProperties"], root, refs)
        if "additionalProperties" in schema
        else None
    )

    def check(v: dict[str, Any]) -> bool:
        for key, item in v.items():
            sub = named.get(key)
            matched = sub is not None
            if sub is not None and not sub(item):
                return False
            for pattern, pattern_check in patterns:
                if pattern.search(key):
                    matched = True
                    if not pattern_check(item):
                        return False
            if not matched and extra is not None and not extra(item):
                return False
        return True

    if patterns:
        return check
    # The same decisions without patterns, the common case, in fewer steps.
    get = named.get
    if extra is None:

        def check_named(v: dict[str, Any]) -> bool:
            for key, item in v.items():
                sub = get(key)
                if sub is not None and not sub(item):
                    return False
            return True

        return check_named

    def check_named_or_extra(v: dict[str, Any]) -> bool:
        for key, item in v.items():
            sub = get(key, extra)
            if not sub(item):
                return False
        return True

    return check_named_or_extra


def _joined_with_properties(
    value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]
) -> Check | None:
    # patternProperties and additionalProperties are checked by _properties when the schema
    # has `properties`; alone, they are checked as if `properties` were empty.
    if "properties" in schema:
        return None
    return _properties({}, schema, root, refs)


def _on_value(test: Callable[[Any, Any], bool]) -> Builder:
    """A keyword whose check compares the instance (of its kind) with the keyword's value."""

    def build(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
        return lambda v: test(v, value)

    return build


def _bound(test: Callable[[Any, Any], bool]) -> Builder:
    def build(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
        if not _number(value):
            raise _Unverifiable("a numeric bound")
        return lambda v: test(v, value)

    return build


def _every(sub: Check) -> Check:
    """``sub`` holds for every item of the instance (or key, for a mapping)."""

    def every(v: Any) -> bool:
        for item in v:  # noqa: SIM110 - a loop is faster than all() over a generator
            if not sub(item):
                return False
        return True

    return every


def _property_names(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    return _every(_compile(value, root, refs))


def _items(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    if "prefixItems" in schema or not isinstance(value, (dict, bool)):
        raise _Unverifiable("items")
    return _every(_compile(value, root, refs))


def _pattern(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    search = re.compile(value).search
    return lambda v: search(v) is not None


def _unique(items: list[Any], flag: Any) -> bool:
    if not flag:
        return True
    if all(isinstance(i, str) for i in items):
        return len(set(items)) == len(items)
    return not any(_equal(a, b) for n, a in enumerate(items) for b in items[n + 1 :])


def _const(value: Any, schema: dict[str, Any], root: Any, refs: dict[str, Check]) -> Check:
    return lambda v: _equal(v, value)


#: The kind of instance each type-specific keyword applies to (it holds for other kinds).
_KIND_OF_KEYWORD = {
    **dict.fromkeys(
        (
            "properties",
            "patternProperties",
            "additionalProperties",
            "propertyNames",
            "required",
            "minProperties",
            "maxProperties",
        ),
        "object",
    ),
    **dict.fromkeys(("items", "minItems", "maxItems", "uniqueItems"), "array"),
    **dict.fromkeys(("minLength", "maxLength", "pattern"), "string"),
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), "number"),
}
_BUILDERS: dict[str, Builder] = {
    "$ref": _ref,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "anyOf": _any_of,
    "allOf": _all_of,
    "oneOf": _one_of,
    "not": _not,
    "properties": _properties,
    "patternProperties": _joined_with_properties,
    "additionalProperties": _joined_with_properties,
    "propertyNames": _property_names,
    "required": _on_value(lambda v, keys: all(k in v for k in keys)),
    "minProperties": _on_value(lambda v, n: len(v) >= n),
    "maxProperties": _on_value(lambda v, n: len(v) <= n),
    "items": _items,
    "minItems": _on_value(lambda v, n: len(v) >= n),
    "maxItems": _on_value(lambda v, n: len(v) <= n),
    "uniqueItems": _on_value(_unique),
    "minLength": _on_value(lambda v, n: len(v) >= n),
    "maxLength": _on_value(lambda v, n: len(v) <= n),
    "pattern": _pattern,
    "minimum": _bound(lambda v, n: v >= n),
    "maximum": _bound(lambda v, n: v <= n),
    "exclusiveMinimum": _bound(lambda v, n: v > n),
    "exclusiveMaximum": _bound(lambda v, n: v < n),
}
