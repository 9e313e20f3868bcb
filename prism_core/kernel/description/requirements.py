"""Requirements: data clauses on a device, matched with a reason for every unmet clause.

A requirement is a mapping, each key one clause: identity (``vendor``, ``kind``,
``device_type``, ``architecture``, ``isa``, ``ancestry``), ``supports``, ``compute_units``,
``sparsity`` (N:M patterns, per data type), ``numeric_format:NAME`` (a floating-point format
and its properties), ``feature:NAME``, ``attribute:NAME``, ``flag:NAME`` or a bare ``NAME``,
each with a value form (``True``, ``False``, a number, a version specifier, a string, a list of
strings).  The clauses and value forms: docs/device-files.md, section 9 ("Requirements and the
Python API").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

from prism_core.kernel.errors import RequirementError, did_you_mean
from prism_core.kernel.public import home

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet
    from packaging.version import Version

    from prism_core.kernel.description.numeric_formats import NumericFormat
    from prism_core.kernel.description.sparsity import Sparsity


__all__ = ["Clause", "Requirement", "RequirementMatch", "version_meets"]


class _Versioned(Protocol):
    @property
    def version(self) -> int | str: ...


class Judged(Protocol):
    """What a requirement reads of a device: a :class:`~prism_core.hardware.DeviceDescription`
    (whose module imports this one, to offer ``satisfies``)."""

    @property
    def device_type(self) -> str: ...
    @property
    def data(self) -> Mapping[str, object]: ...
    @property
    def lineage(self) -> tuple[str, ...]: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def cpu_flags(self) -> frozenset[str]: ...
    def is_a(self, device_type: str) -> bool: ...
    @property
    def sparsity(self) -> tuple[Sparsity, ...]: ...
    @property
    def numeric_formats(self) -> Mapping[str, NumericFormat]: ...
    def supports(self, op: str, dtype: str) -> bool: ...
    def feature(self, name: str) -> _Versioned | None: ...


IDENTITY_KEYS = ("vendor", "kind", "device_type", "architecture", "isa")
_SPEC_START = re.compile(r"^\s*(~=|==|!=|<=|>=|<|>|===)")
#: Specifiers of plain release numbers (``">=8.0"``, ``">=2,<4"``), which are always valid:
#: checked without importing ``packaging``, whose import and regular expressions cost about
#: 20 ms of a fresh process's first call.  Anything else is checked by packaging.
_PLAIN_SPECIFIER = re.compile(
    r"[ \t]*(?:==|!=|<=|>=|<|>)[ \t]*[0-9]+(?:\.[0-9]+)*[ \t]*"
    r"(?:,[ \t]*(?:==|!=|<=|>=|<|>)[ \t]*[0-9]+(?:\.[0-9]+)*[ \t]*)*"
)
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
#: The value forms of a clause: present or absent, at least a number, a version specifier or a
#: string to equal, one of a list of strings.
Form: TypeAlias = "bool | int | float | str | Sequence[str]"
#: What a ``sparsity`` clause requires: some pattern or none, or (pattern, data type or
#: ``None``) pairs, each of which must hold.
_SparsityWanted: TypeAlias = "bool | tuple[tuple[str, str | None], ...]"


def _specifier(text: str, key: str) -> SpecifierSet:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text, prereleases=True)
    except InvalidSpecifier:
        raise RequirementError(
            f"requirement {key!r}: {text!r} is not a valid version specifier; write e.g. "
            "'>=3', '>=8.0', '>=2,<4' or '==9.0'"
        ) from None


def _as_version(value: object) -> Version | None:
    from packaging.version import InvalidVersion, Version

    if isinstance(value, bool):
        return None
    try:
        return Version(str(value))
    except InvalidVersion:
        return None


def version_meets(value: object, spec: object) -> bool:
    """Whether a version-like ``value`` (``None``: absent) meets ``spec``, a value form of a
    requirement clause (``None`` also means present): exactly what a ``feature:NAME`` clause
    decides for a feature of that version.  A malformed ``spec`` raises
    :class:`RequirementError`."""
    form = _check_value_form("version", True if spec is None else spec)
    if value is None:
        return form is False
    return _value_reason("version", value, form) is None


@dataclass(frozen=True)
class Clause:
    """One key of a requirement mapping, parsed."""

    key: str
    # identity, ancestry, supports, numeric, sparsity, numeric_format, feature, attribute,
    # flag, auto
    namespace: str
    name: str
    #: What the namespace's matcher reads: identity and ancestry strings, supports (operation,
    #: data type) pairs, a sparsity clause's value, a numeric_format's True, False or
    #: (property, Form) pairs, else a Form.
    value: Any
    raw: object = None

    def describe(self) -> str:
        return f"{self.key}: {self.raw!r}"


@home("prism_core.hardware")
@dataclass(frozen=True)
class RequirementMatch:
    """The outcome of matching a requirement: ``ok`` and, per unmet clause, why not."""

    ok: bool
    reasons: tuple[str, ...] = ()
    met: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return self.ok

    def explain(self) -> str:
        if self.ok:
            return "all requirements met" + (f" ({'; '.join(self.met)})" if self.met else "")
        return "; ".join(self.reasons)


def _check_value_form(key: str, value: object) -> Form:
    """``value``, if it is a value form of a clause; else a :class:`RequirementError`."""
    if value is None:
        raise RequirementError(
            f"requirement {key!r} has no value; use true (present), false (absent), a number "
            "(at least), a specifier such as '>=3', or a string to equal"
        )
    if isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if not value.strip():
            raise RequirementError(
                f"requirement {key!r}: an empty string is not a requirement value; use true "
                "(present), false (absent), a number (at least), a specifier such as '>=3', or "
                "a non-empty string to equal"
            )
        if _SPEC_START.match(value) and not _PLAIN_SPECIFIER.fullmatch(value):
            _specifier(value, key)
        return value
    if isinstance(value, Sequence) and value and all(isinstance(v, str) for v in value):
        for item in value:
            if not item.strip():
                raise RequirementError(
                    f"requirement {key!r}: {value!r} holds an empty string, which equals nothing"
                )
            if _SPEC_START.match(item):
                raise RequirementError(
                    f"requirement {key!r}: {item!r} is a version specifier; a list means equal "
                    f"to one of its strings: give the specifier alone ({item!r}), joining "
                    "several with commas ('>=2,<4')"
                )
        return value
    raise RequirementError(
        f"requirement {key!r}: {value!r} is not accepted; use true, false, a number, a version "
        "specifier string such as '>=3', a string, or a list of strings"
    )


_SPARSITY_FORMS = (
    "true (some pattern), false (none), a pattern such as '2:4', a list of patterns (each of "
    "them), or a mapping of pattern to data type(s) such as {'2:4': ['fp16', 'bf16']}"
)


def _pattern(text: object) -> str:
    # The modules of the format-2 clauses are imported by the requirements that use them: their
    # classes cost a fresh process about 1.5 ms that no other requirement needs.
    from prism_core.kernel.description.sparsity import pattern_problem

    why = pattern_problem(text) if isinstance(text, str) else f"{text!r} is not a string"
    if why is not None:
        raise RequirementError(f"requirement 'sparsity': {why}; give {_SPARSITY_FORMS}")
    return str(text)


def _vocabulary_type(name: str, key: str = "sparsity") -> str:
    """``name`` if it is a data type of the device-file vocabulary, which sparsity entries and
    features name; else a :class:`RequirementError` for the clause ``key``, suggesting the
    vocabulary's name for it (``fp16`` for Prism's ``float16``): a clause that names no such
    type would never be met."""
    from prism_core.kernel.description import dtypes

    if name in dtypes.VOCABULARY:
        return name
    try:
        hint = f" (did you mean {dtypes.dtype(name).vocab!r}?)"
    except ValueError:
        hint = did_you_mean(name, dtypes.VOCABULARY)
    raise RequirementError(
        f"requirement {key!r}: {name!r} is not a data type of the device-file vocabulary"
        f"{hint}: device files name {', '.join(dtypes.VOCABULARY)}"
    )


def _sparsity_value(value: object) -> _SparsityWanted:
    """What a ``sparsity`` clause with ``value`` requires."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return ((_pattern(value), None),)
    if isinstance(value, Mapping) and value:
        pairs: list[tuple[str, str | None]] = []
        for pattern, dtypes in value.items():
            dts = (dtypes,) if isinstance(dtypes, str) else dtypes
            if not (
                isinstance(dts, Sequence) and dts and all(isinstance(d, str) and d for d in dts)
            ):
                raise RequirementError(
                    f"requirement 'sparsity': {pattern!r}: {dtypes!r} is not accepted; give a "
                    "data type or a list of data types per pattern, e.g. {'2:4': 'fp16'}"
                )
            pairs.extend((_pattern(pattern), _vocabulary_type(d)) for d in dts)
        return tuple(pairs)
    if isinstance(value, Sequence) and value and not isinstance(value, str):
        return tuple((_pattern(p), None) for p in value)
    raise RequirementError(
        f"requirement 'sparsity': {value!r} is not accepted; give {_SPARSITY_FORMS}"
    )


_BOOLEAN_PROPERTIES = ("infinities", "negative_zero")


def _format_clause(key: str, name: str, value: object) -> Clause:
    """A ``numeric_format:NAME`` clause: the format is computed (``True``), is not
    (``False``), or has the properties of a mapping such as ``{"denormals": "kept"}``."""
    from prism_core.kernel.description import numeric_formats as _formats

    if name not in _formats.FLOATING:
        raise RequirementError(
            f"requirement {key!r}: {name!r} is not a floating-point format of the "
            f"vocabulary{did_you_mean(name, _formats.FLOATING)}; the formats are "
            + ", ".join(sorted(_formats.FLOATING))
        )
    if isinstance(value, bool):
        return Clause(key, "numeric_format", name, value, value)
    if not isinstance(value, Mapping) or not value:
        raise RequirementError(
            f"requirement {key!r}: {value!r} is not accepted; give true (the device computes "
            f"{name}), false (it does not), or a mapping of properties such as "
            "{'denormals': 'kept', 'infinities': True}"
        )
    pairs: list[tuple[str, Form]] = []
    for prop, wanted in value.items():
        if prop not in _formats.PROPERTIES:
            raise RequirementError(
                f"requirement {key!r}: unknown property {prop!r}"
                f"{did_you_mean(str(prop), _formats.PROPERTIES)}; the properties are "
                + ", ".join(_formats.PROPERTIES)
            )
        where = f"{key}.{prop}"
        if prop in _BOOLEAN_PROPERTIES and not isinstance(wanted, bool):
            raise RequirementError(f"requirement {where}: use true or false, not {wanted!r}")
        kinds = {"nan": _formats.NAN_KINDS, "denormals": _formats.DENORMAL_KINDS}.get(prop)
        if kinds is not None:
            items = (wanted,) if isinstance(wanted, str) else wanted or ()
            for item in items if isinstance(items, Iterable) else (items,):
                if item not in kinds:
                    raise RequirementError(
                        f"requirement {where}: {item!r} is not one of "
                        f"{', '.join(kinds)}{did_you_mean(str(item), kinds)}"
                    )
        pairs.append((prop, _check_value_form(where, wanted)))
    return Clause(key, "numeric_format", name, tuple(pairs), value)


@home("prism_core.hardware")
class Requirement:
    """A parsed requirement mapping.  Construction checks its form and raises
    :class:`RequirementError` for a malformed one; :meth:`match` never raises.
    """

    __slots__ = ("clauses", "mapping")

    def __init__(self, mapping: Mapping[str, object] | None = None) -> None:
        if mapping is not None and not isinstance(mapping, Mapping):
            raise RequirementError(
                "a requirement is a mapping of clause to value, such as {'vendor': 'nvidia', "
                f"'tensor_cores': '>=4'}}; got {mapping!r} ({type(mapping).__name__})"
            )
        mapping = dict(mapping or {})
        self.mapping: Mapping[str, object] = mapping
        self.clauses = tuple(self._parse_clause(key, value) for key, value in mapping.items())

    @staticmethod
    def _parse_clause(key: object, value: object) -> Clause:
        if not isinstance(key, str) or not key:
            raise RequirementError(f"requirement keys are strings, got {key!r}")
        if key in IDENTITY_KEYS or key == "ancestry":
            values = tuple(value) if isinstance(value, Sequence) else ()
            if isinstance(value, str):
                values = (value,)
            if not values or not all(isinstance(v, str) for v in values):
                raise RequirementError(
                    f"requirement {key!r}: expected a string or a list of strings, got {value!r}"
                )
            ns = "ancestry" if key == "ancestry" else "identity"
            return Clause(key, ns, key, values, value)
        if key == "supports":
            if not isinstance(value, Mapping) or not value:
                raise RequirementError(
                    "requirement 'supports': expected a mapping of operation to data type(s), "
                    "e.g. {'matmul': 'bf16'} or {'matmul': ['fp16', 'bf16']}"
                )
            pairs: list[tuple[str, str]] = []
            for op, dts in value.items():
                types = (dts,) if isinstance(dts, str) else tuple(dts)
                if (
                    not isinstance(op, str)
                    or not types
                    or not all(isinstance(d, str) for d in types)
                ):
                    raise RequirementError(
                        f"requirement 'supports': {op!r}: {dts!r} is not accepted; give a data "
                        "type or a list of data types per operation"
                    )
                pairs.extend((op, _vocabulary_type(d, "supports")) for d in types)
            return Clause(key, "supports", key, tuple(pairs), value)
        if key == "compute_units":
            return Clause(key, "numeric", key, _check_value_form(key, value), value)
        if key == "sparsity":
            return Clause(key, "sparsity", key, _sparsity_value(value), value)
        if key.startswith("sparsity:"):
            pattern = key.partition(":")[2]
            raise RequirementError(
                f"requirement {key!r}: a pattern is a value of 'sparsity', not part of its key; "
                f"write {{'sparsity': {pattern!r}}}, or {{'sparsity': {{{pattern!r}: "
                f"{value!r}}}}} for data types"
            )
        namespace, _, name = key.rpartition(":")
        if namespace == "numeric_format":
            return _format_clause(key, name, value)
        if namespace and namespace not in ("feature", "attribute", "flag"):
            raise RequirementError(
                f"requirement {key!r}: unknown prefix {namespace!r}; use 'feature:NAME', "
                "'attribute:NAME', 'flag:NAME' or 'numeric_format:NAME' (or a bare name, looked "
                "up as a feature, then an attribute, then a CPU flag)"
            )
        if not _NAME.match(name):
            raise RequirementError(
                f"requirement {key!r}: {name!r} is not a feature or attribute name "
                "(lowercase snake_case); identity keys are " + ", ".join(IDENTITY_KEYS)
            )
        form = _check_value_form(key, value)
        if namespace == "flag" and not isinstance(value, bool):
            raise RequirementError(
                f"requirement {key!r}: a CPU flag is present or absent; use true or false, "
                f"not {value!r}"
            )
        return Clause(key, namespace or "auto", name, form, value)

    @property
    def specificity(self) -> int:
        """How many clauses the requirement has: more clauses, more specific."""
        return len(self.clauses)

    def match(self, device: Judged) -> RequirementMatch:
        unmet = [(clause, _unmet(clause, device)) for clause in self.clauses]
        reasons = tuple(reason for _, reason in unmet if reason is not None)
        met = tuple(clause.describe() for clause, reason in unmet if reason is None)
        return RequirementMatch(not reasons, reasons, met)

    def __repr__(self) -> str:
        return f"Requirement({dict(self.mapping)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirement) and self.mapping == other.mapping

    def __hash__(self) -> int:
        return hash(repr(sorted(self.mapping.items(), key=lambda kv: kv[0])))


def _value_reason(what: str, actual: object, wanted: Form) -> str | None:
    """None when ``actual`` (not None) meets ``wanted``, else why not."""
    if isinstance(wanted, bool):
        return None if wanted else f"{what} is present ({actual!r}) but required absent"
    if isinstance(wanted, (int, float)):
        if isinstance(actual, (int, float)) and not isinstance(actual, bool):
            met = actual >= wanted
        else:
            version, floor = _as_version(actual), _as_version(wanted)
            met = version is not None and floor is not None and version >= floor
        return None if met else f"{what} is {actual!r}, required at least {wanted!r}"
    if isinstance(wanted, str) and _SPEC_START.match(wanted):
        version = _as_version(actual)
        if version is None:
            return f"{what} is {actual!r}, which is not a version to compare with {wanted!r}"
        if version in _specifier(wanted, what):
            return None
        return f"{what} is {actual!r}, required {wanted}"
    if isinstance(wanted, str):
        return None if str(actual) == wanted else f"{what} is {actual!r}, required {wanted!r}"
    options = list(wanted)
    if str(actual) in options:
        return None
    return f"{what} is {actual!r}, required one of {', '.join(repr(o) for o in options)}"


def _flag_reason(name: str, wanted: object) -> str | None:
    """None when a listed CPU flag meets ``wanted``, else why not."""
    if wanted is True:
        return None
    if wanted is False:
        return f"CPU flag {name} is present but required absent"
    return (
        f"CPU flag {name} is present; a CPU flag is present or absent, so require true or "
        f"false, not {wanted!r}"
    )


def _unmet(clause: Clause, device: Judged) -> str | None:
    ns = clause.namespace
    if ns == "identity":
        actual = (
            device.device_type if clause.name == "device_type" else device.data.get(clause.name)
        )
        if actual in clause.value:
            return None
        wanted = " or ".join(repr(v) for v in clause.value)
        return f"{clause.name} is {actual!r}, required {wanted}"
    if ns == "ancestry":
        if any(device.is_a(v) for v in clause.value):
            return None
        wanted = " or ".join(repr(v) for v in clause.value)
        chain = " -> ".join(device.lineage) or device.device_type
        return f"{device.device_type} does not derive from {wanted} (lineage: {chain})"
    if ns == "supports":
        missing = [f"{op} in {dt}" for op, dt in clause.value if not device.supports(op, dt)]
        if not missing:
            return None
        return f"no feature of {device.device_type} accelerates {', '.join(missing)}"
    if ns == "sparsity":
        return _sparsity_reason(device, clause.value)
    if ns == "numeric_format":
        return _format_reason(device, clause.name, clause.value)
    if ns == "numeric":
        actual = device.data.get(clause.name)
        if actual is None:
            return (
                None
                if clause.value is False
                else f"{clause.name} is not given for {device.device_type}"
            )
        return _value_reason(clause.name, actual, clause.value)
    feature = device.feature(clause.name) if ns in ("feature", "auto") else None
    if feature is not None:
        return _value_reason(f"feature {clause.name} version", feature.version, clause.value)
    attrs = device.data.get("attributes")
    if ns in ("attribute", "auto") and isinstance(attrs, Mapping) and clause.name in attrs:
        return _value_reason(f"attribute {clause.name}", attrs[clause.name], clause.value)
    flags = device.cpu_flags if ns in ("flag", "auto") else frozenset()
    if clause.name in flags:
        return _flag_reason(clause.name, clause.value)
    if clause.value is False:
        return None
    if ns == "flag" or flags:
        if not flags:
            why = (
                f"it is a {device.kind}, not a CPU"
                if device.kind != "cpu"
                else "its description has no detection.cpu.features"
            )
            return f"{device.device_type} lists no CPU flags ({why}) (required {clause.name!r})"
        if ns == "flag":
            said = f"does not list the CPU flag {clause.name!r}"
        else:
            said = f"has no feature, attribute or CPU flag {clause.name!r}"
        # Only a spelling hint: flags differ from what users write mostly in underscores
        # (avx512bf16 / avx512_bf16); a flag that is simply absent gets no suggestion.
        bare = clause.name.replace("_", "")
        spelled = sorted(f for f in flags if f.replace("_", "") == bare)
        hint = f" (did you mean {spelled[0]!r}?)" if spelled else ""
        return f"{device.device_type} {said} (required {clause.value!r}){hint}"
    what = {"feature": "feature", "attribute": "attribute"}.get(ns, "feature or attribute")
    return f"{device.device_type} has no {what} {clause.name!r} (required {clause.value!r})"


def _sparsity_reason(device: Judged, wanted: _SparsityWanted) -> str | None:
    """None when the device's ``sparsity`` meets ``wanted`` (a parsed clause value), else
    why not, naming the patterns and data types it has."""
    from prism_core.kernel.description.sparsity import patterns_text

    entries = device.sparsity
    name = device.device_type
    if isinstance(wanted, bool):
        if bool(entries) is wanted:
            return None
        if wanted:
            return f"{name} has no structured sparsity (its description gives no patterns)"
        return f"{name} has structured sparsity ({patterns_text(entries)}), required absent"
    missing: list[str] = []
    for pattern, dtype in wanted:
        have = [e for e in entries if e.pattern == pattern]
        if not have:
            if entries:
                missing.append(
                    f"{name} has no sparsity pattern {pattern} (its patterns: "
                    f"{patterns_text(entries)})"
                )
            else:
                missing.append(f"{name} has no structured sparsity (required pattern {pattern})")
        elif dtype is not None and not any(dtype in e.data_types for e in have):
            types = ", ".join(dict.fromkeys(d for e in have for d in e.data_types))
            missing.append(f"{name} has sparsity pattern {pattern} for {types}, not {dtype}")
    return "; ".join(dict.fromkeys(missing)) or None


def _format_reason(
    device: Judged, name: str, wanted: bool | tuple[tuple[str, Form], ...]
) -> str | None:
    """None when the device's format ``name`` meets ``wanted`` (``True``, ``False`` or
    (property, value) pairs), else why not, naming the formats or properties it has."""
    from prism_core.kernel.description import numeric_formats as _formats

    formats = device.numeric_formats
    found = formats.get(name)
    who = device.device_type
    if found is None:
        if wanted is False:
            return None
        if not formats:
            return f"{who} computes no floating-point format (required {name})"
        width = _formats.element_bits(name)
        alike = _formats.formats_of_width(formats, name)
        same = _formats.element_bits(alike[0]) == width
        label = f"{width}-bit floating-point" if same else "floating-point"
        return f"{who} does not compute {name} (its {label} formats: {', '.join(alike)})"
    if wanted is True:
        return None
    if wanted is False:
        return f"{who} computes {name}, required absent"
    reasons = []
    for prop, value in wanted:
        actual = getattr(found, prop)
        what = f"{prop} of {name} on {who}"
        if actual is None:
            if value is not False or prop in _BOOLEAN_PROPERTIES:  # false: absent, or false
                reasons.append(
                    f"the description of {who} does not say the {prop} of {name} "
                    f"(required {value!r})"
                )
        elif prop in _BOOLEAN_PROPERTIES:
            if actual is not value:
                reasons.append(f"{what} is {actual}, required {value}")
        else:
            reason = _value_reason(what, actual, value)
            if reason is not None:
                reasons.append(reason)
    return "; ".join(reasons) or None
