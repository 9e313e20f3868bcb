"""A strict, safe YAML reader for device files that remembers where every key and value came from.

PyYAML's own constructors cannot do what device files need: they accept anchors and aliases
(the 'billion laughs' bomb), keep the last of duplicate keys silently, read ``no`` as ``False``
(YAML 1.1), and forget positions.  So this module consumes the *event stream* of PyYAML's parser
(libyaml's C parser where available) and builds plain JSON-compatible values itself, iteratively
(no recursion, so no input can exhaust the stack), with the YAML 1.2 core schema for plain
scalars.  Every problem is a :class:`~prism_core.kernel.errors.Problem` with file, line and column.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from prism_core.kernel.description import MAX_BYTES
from prism_core.kernel.errors import Problem

if TYPE_CHECKING:
    import yaml

__all__ = ["JSON", "MAX_BYTES", "MAX_DEPTH", "MAX_NODES", "ParsedYAML", "json_path", "parse_yaml"]

#: Deepest nesting of mappings and sequences accepted.  The format needs 5 levels.
MAX_DEPTH = 32
#: Most scalars, mappings and sequences in one file.  Real files have a few hundred.
MAX_NODES = 50_000
#: Longest scalar accepted, in characters.
MAX_SCALAR = 64 * 1024

_NULL = frozenset({"", "~", "null", "Null", "NULL"})
_TRUE = frozenset({"true", "True", "TRUE"})
_FALSE = frozenset({"false", "False", "FALSE"})
_INT = re.compile(r"[-+]?[0-9]+")
_OCT = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_SPECIAL_FLOAT = re.compile(r"[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
_CORE_TAG = "tag:yaml.org,2002:"
_ALLOWED_TAGS = frozenset(
    _CORE_TAG + t for t in ("str", "int", "float", "bool", "null", "map", "seq")
) | {"!"}
_MAX_INT_DIGITS = 100

PathT = tuple[str | int, ...]
#: A value of a document, as JSON has them.
JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"


@dataclass
class ParsedYAML:
    """A document and where each part of it was written (1-based line, column)."""

    value: dict[str, JSON]
    positions: dict[PathT, tuple[int, int]] = field(default_factory=dict)
    key_positions: dict[PathT, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: PathT, *, key: bool = False) -> tuple[int, int]:
        """Position of ``path`` (of its key when ``key``), else of its nearest located parent."""
        table = self.key_positions if key else self.positions
        if path in table:
            return table[path]
        while path:
            if path in self.positions:
                return self.positions[path]
            path = path[:-1]
        return self.positions.get((), (1, 1))


def json_path(path: PathT) -> str:
    """``("features", 0, "name")`` -> ``$.features[0].name``."""
    out = ["$"]
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            out.append(f".{part}")
        else:
            out.append(f"[{part!r}]")
    return "".join(out)


class _Fatal(Exception):
    """Stops building; the problem has been recorded."""


class _Frame:
    __slots__ = ("container", "key", "key_pos", "path", "seen")

    def __init__(self, container: dict[str, JSON] | list[JSON], path: PathT) -> None:
        self.container = container
        self.path = path
        self.key: str | object | None = _NO_KEY
        self.key_pos: tuple[int, int] = (0, 0)
        self.seen: dict[str, tuple[int, int]] = {}


_NO_KEY = object()
_BAD_KEY = object()


def _position(mark: yaml.events._Mark | None) -> tuple[int, int]:
    return (1, 1) if mark is None else (mark.line + 1, mark.column + 1)


def _line_col_of_offset(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def _decode(data: bytes, filename: str) -> str | Problem:
    """The text of ``data``, or the problem of bytes that are not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col_of_offset(data.decode("latin-1"), exc.start)  # a character a byte
        return Problem(
            filename,
            line,
            col,
            "$",
            f"the file is not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
            "cannot be decoded; save the file as UTF-8",
        )
    return text[1:] if text.startswith("\ufeff") else text


def _resolve_plain(value: str) -> JSON:
    """YAML 1.2 core schema for an untagged plain scalar."""
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.fullmatch(value):
        if len(value) > _MAX_INT_DIGITS:
            raise ValueError(f"integer with {len(value)} digits is too large")
        return int(value)
    if _OCT.fullmatch(value):
        return int(value[2:], 8)
    if _HEX.fullmatch(value):
        return int(value[2:], 16)
    if _FLOAT.fullmatch(value):
        return float(value)
    if _SPECIAL_FLOAT.fullmatch(value):
        raise ValueError(f"{value!r} is not a finite number; write a finite number or quote it")
    return value


def _scalar(event: yaml.ScalarEvent) -> JSON:
    tag = event.tag
    if tag is None:
        # implicit[0] is true for plain (unquoted) scalars, whose type the core schema resolves.
        return _resolve_plain(event.value) if event.implicit[0] else event.value
    if tag not in _ALLOWED_TAGS:
        raise ValueError(
            f"the tag {tag!r} is not allowed; device files use plain YAML values "
            "(strings, numbers, true/false, lists and mappings) without tags"
        )
    if tag == "!" or tag.endswith(":str"):
        return event.value
    value = _resolve_plain(event.value)
    if isinstance(value, bool) or value is None:
        if tag.endswith(":bool" if value is not None else ":null"):
            return value
    elif isinstance(value, (int, float)):
        if tag.endswith(":float"):
            return float(value)
        if tag.endswith(":int") and isinstance(value, int):
            return value
    raise ValueError(f"{event.value!r} is not a valid value for the tag {tag!r}")


def _indentation_tab(text: str, line: int) -> tuple[int, int] | None:
    """Where a tab is in the indentation of ``line`` (1-based), if one is.

    The indentation is the run of spaces, tabs and block-sequence dashes (``-``) that starts the
    line.  libyaml reports a tab there as "found character that cannot start any token" or "a
    tab character that violates indentation"; the user needs to hear the word *tab*.
    """
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    row = lines[line - 1]
    for column, char in enumerate(row, start=1):
        if char == "\t":
            return (line, column)
        if char not in " -":
            return None
    return None


def _describe(value: object) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    return f"{type(value).__name__} {value!r}"


def parse_yaml(data: bytes | str, filename: str) -> tuple[ParsedYAML | None, list[Problem]]:
    """Parse one device file.

    Returns the parsed document (``None`` when it could not be built at all) and the problems
    found, sorted.  Never raises for any input: every failure is a located :class:`Problem`.
    """
    import yaml  # on first use only: `import prism_core` stays light

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's C parser where built
    problems: list[Problem] = []

    def add(pos: tuple[int, int], path: PathT, message: str) -> None:
        problems.append(Problem(filename, pos[0], pos[1], json_path(path), message))

    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > MAX_BYTES:
        add((1, 1), (), f"the file is {size:,} bytes; device files may be at most {MAX_BYTES:,}")
        return None, problems
    text = data if isinstance(data, str) else _decode(data, filename)
    if isinstance(text, Problem):
        return None, [text]
    if not text.strip():
        add(
            (1, 1), (), "the file is empty; a device file is a mapping that starts with device_type"
        )
        return None, problems

    parsed = ParsedYAML({})
    root: JSON = None
    stack: list[_Frame] = []
    nodes = 0
    documents = 0

    def attach(value: JSON, pos: tuple[int, int]) -> None:
        nonlocal root
        if not stack:
            root = value
            parsed.positions[()] = pos
            return
        frame = stack[-1]
        container = frame.container
        if isinstance(container, list):
            path = (*frame.path, len(container))
            container.append(value)
            parsed.positions.setdefault(path, pos)
            return
        if frame.key is _NO_KEY:  # this node is a key
            if not isinstance(value, str):
                add(
                    pos,
                    frame.path,
                    f"keys must be strings, found {_describe(value)} as a key; quote it",
                )
                frame.key = _BAD_KEY
            elif value in frame.seen:
                first = frame.seen[value]
                add(
                    pos,
                    (*frame.path, value),
                    f"duplicate key {value!r} (first defined at line {first[0]}); "
                    "each key may appear once in a mapping",
                )
                frame.key = _BAD_KEY
            else:
                frame.seen[value] = pos
                frame.key = value
                frame.key_pos = pos
            return
        key = frame.key
        frame.key = _NO_KEY
        if key is _BAD_KEY:
            return
        assert isinstance(key, str)
        assert isinstance(container, dict)
        container[key] = value
        path = (*frame.path, key)
        parsed.key_positions[path] = frame.key_pos
        parsed.positions.setdefault(path, pos)

    def child_path() -> PathT:
        frame = stack[-1]
        if isinstance(frame.container, list):
            return (*frame.path, len(frame.container))
        if isinstance(frame.key, str):
            return (*frame.path, frame.key)
        return (*frame.path, "<key>")

    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    add(
                        _position(event.start_mark),
                        (),
                        "a second YAML document starts here; a device file holds exactly one "
                        "device (put each device in its own file)",
                    )
                    raise _Fatal
                continue
            if isinstance(
                event, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)
            ):
                continue
            pos = _position(event.start_mark)
            if isinstance(event, yaml.CollectionEndEvent):
                frame = stack.pop()
                attach(frame.container, parsed.positions.get(frame.path, pos))
                continue
            nodes += 1
            if nodes > MAX_NODES:
                add(pos, (), f"the file has more than {MAX_NODES:,} values; device files are small")
                raise _Fatal
            here = child_path() if stack else ()
            anchor = getattr(event, "anchor", None)
            if isinstance(event, yaml.AliasEvent):
                add(
                    pos,
                    here,
                    f"aliases (*{anchor}) are not allowed in device files; "
                    "use `extends` to share values between devices",
                )
                attach(None, pos)
                continue
            if anchor is not None:
                add(
                    pos,
                    here,
                    f"anchors (&{anchor}) are not allowed in device files; "
                    "use `extends` to share values between devices",
                )
            if isinstance(event, yaml.ScalarEvent):
                if len(event.value) > MAX_SCALAR:
                    add(
                        pos,
                        here,
                        f"a value of {len(event.value):,} characters is too long "
                        f"(at most {MAX_SCALAR:,})",
                    )
                    attach(None, pos)
                    continue
                try:
                    value = _scalar(event)
                except ValueError as exc:
                    add(pos, here, str(exc))
                    value = None
                if isinstance(value, float) and not math.isfinite(value):
                    add(pos, here, f"{event.value!r} is too large to be a finite number")
                    value = None
                attach(value, pos)
                continue
            assert isinstance(event, yaml.CollectionStartEvent)  # what is left: a collection
            tag = event.tag
            if tag is not None and tag not in _ALLOWED_TAGS:
                add(
                    pos,
                    here,
                    f"the tag {tag!r} is not allowed; device files use plain YAML values "
                    "without tags",
                )
            if len(stack) >= MAX_DEPTH:
                add(pos, here, f"values are nested more than {MAX_DEPTH} levels deep")
                raise _Fatal
            new: dict[str, JSON] | list[JSON] = (
                {} if isinstance(event, yaml.MappingStartEvent) else []
            )
            parsed.positions.setdefault(here, pos)
            stack.append(_Frame(new, here))
    except _Fatal:
        return None, sorted(problems)
    except yaml.MarkedYAMLError as exc:
        pos = _position(exc.problem_mark or exc.context_mark)
        tab = _indentation_tab(text, pos[0])
        if tab is not None:
            add(tab, (), "invalid YAML: tab characters are not allowed for indentation; use spaces")
            return None, sorted(problems)
        if exc.problem and "maximum nesting depth" in exc.problem:
            # libyaml's scanner looks ahead for simple keys and stops at its own limit (1,000
            # levels) before our parser sees the events that would reach ours.
            add(pos, (), f"values are nested more than {MAX_DEPTH} levels deep")
            return None, sorted(problems)
        what = exc.problem or "invalid YAML"
        if exc.context:
            what = f"{exc.context}: {what}"
        add(pos, (), f"invalid YAML: {what}")
        return None, sorted(problems)
    except yaml.reader.ReaderError as exc:
        line, col = _line_col_of_offset(text, exc.position)
        add((line, col), (), f"invalid YAML: character {exc.character!r} is not allowed in YAML")
        return None, sorted(problems)
    except yaml.YAMLError as exc:  # pragma: no cover - libyaml reports other errors as Marked
        add((1, 1), (), f"invalid YAML: {exc}")
        return None, sorted(problems)

    if root is None:
        add(
            (1, 1),
            (),
            "the document is empty (only comments or null); a device file is a mapping that "
            "starts with device_type",
        )
        return None, sorted(problems)
    if not isinstance(root, dict):
        add(
            parsed.positions.get((), (1, 1)),
            (),
            f"the file holds {_describe(root)}; a device file is a mapping of keys "
            "(device_type: ..., compute_units: ...)",
        )
        return None, sorted(problems)
    parsed.value = root
    return parsed, sorted(problems)
