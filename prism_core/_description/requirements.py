"""Requirements: data clauses on a device, matched with a reason for every unmet clause.

A requirement is a mapping, each key one clause: identity (``vendor``, ``kind``,
``device_type``, ``architecture``, ``isa``, ``ancestry``), ``supports``, ``compute_units``,
``feature:NAME``, ``attribute:NAME``, ``flag:NAME`` or a bare ``NAME``, each with a value form
(``True``, ``False``, a number, a version specifier, a string, a list of strings).  The clauses
and value forms: docs/device-files.md, section 9 ("Requirements and the Python API").
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from prism_core._errors import RequirementError
from prism_core._public import home

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet


__all__ = ["Clause", "Requirement", "RequirementMatch", "version_meets"]


class _Versioned(Protocol):
    @property
    def version(self) -> int | str: ...


class Judged(Protocol):
    """What a requirement reads of a device: a
    :class:`~prism_core.hardware.DeviceDescription` (whose module imports this one, to offer
    ``satisfies``)."""

    @property
    def device_type(self) -> str: ...
    @property
    def data(self) -> Mapping[str, Any]: ...
    @property
    def lineage(self) -> tuple[str, ...]: ...
    @property
    def kind(self) -> str | None: ...
    @property
    def cpu_flags(self) -> frozenset[str]: ...
    def is_a(self, device_type: str) -> bool: ...
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


def _specifier(text: str, key: str) -> SpecifierSet:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(text, prereleases=True)
    except InvalidSpecifier:
        raise RequirementError(
            f"requirement {key!r}: {text!r} is not a valid version specifier; write e.g. "
            "'>=3', '>=8.0', '>=2,<4' or '==9.0'"
        ) from None


def _as_version(value: Any) -> Any:
    from packaging.version import InvalidVersion, Version

    if isinstance(value, bool):
        return None
    try:
        return Version(str(value))
    except InvalidVersion:
        return None


def version_meets(value: Any, spec: Any) -> bool:
    """Whether a version-like ``value`` (``None``: absent) meets ``spec``, a value form of a
    requirement clause (``None`` also means present): exactly what a ``feature:NAME`` clause
    decides for a feature of that version.  A malformed ``spec`` raises
    :class:`RequirementError`."""
    if spec is None:
        spec = True
    _check_value_form("version", spec)
    if value is None:
        return spec is False
    return _value_reason("version", value, spec) is None


@dataclass(frozen=True)
class Clause:
    """One key of a requirement mapping, parsed."""

    key: str
    namespace: str  # identity, ancestry, supports, numeric, feature, attribute, flag, auto
    name: str
    value: Any
    raw: Any = None

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


def _check_value_form(key: str, value: Any) -> None:
    if isinstance(value, bool) or value is None:
        if value is None:
            raise RequirementError(
                f"requirement {key!r} has no value; use true (present), false (absent), a number "
                "(at least), a specifier such as '>=3', or a string to equal"
            )
        return
    if isinstance(value, (int, float)):
        return
    if isinstance(value, str):
        if not value.strip():
            raise RequirementError(
                f"requirement {key!r}: an empty string is not a requirement value; use true "
                "(present), false (absent), a number (at least), a specifier such as '>=3', or "
                "a non-empty string to equal"
            )
        if _SPEC_START.match(value) and not _PLAIN_SPECIFIER.fullmatch(value):
            _specifier(value, key)
        return
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
        return
    raise RequirementError(
        f"requirement {key!r}: {value!r} is not accepted; use true, false, a number, a version "
        "specifier string such as '>=3', a string, or a list of strings"
    )


@home("prism_core.hardware")
class Requirement:
    """A parsed requirement mapping.  Construction checks its form and raises
    :class:`RequirementError` for a malformed one; :meth:`match` never raises.
    """

    __slots__ = ("clauses", "mapping")

    def __init__(self, mapping: Mapping[str, Any] | None = None) -> None:
        if mapping is not None and not isinstance(mapping, Mapping):
            raise RequirementError(
                "a requirement is a mapping of clause to value, such as {'vendor': 'nvidia', "
                f"'tensor_cores': '>=4'}}; got {mapping!r} ({type(mapping).__name__})"
            )
        mapping = dict(mapping or {})
        clauses: list[Clause] = []
        for key, value in mapping.items():
            clauses.append(self._parse_clause(key, value))
        self.mapping: Mapping[str, Any] = mapping
        self.clauses: tuple[Clause, ...] = tuple(clauses)

    @staticmethod
    def _parse_clause(key: Any, value: Any) -> Clause:
        if not isinstance(key, str) or not key:
            raise RequirementError(f"requirement keys are strings, got {key!r}")
        if key in IDENTITY_KEYS or key == "ancestry":
            ok = isinstance(value, str) or (
                isinstance(value, Sequence)
                and not isinstance(value, str)
                and value
                and all(isinstance(v, str) for v in value)
            )
            if not ok:
                raise RequirementError(
                    f"requirement {key!r}: expected a string or a list of strings, got {value!r}"
                )
            values = (value,) if isinstance(value, str) else tuple(value)
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
                dts_t = (dts,) if isinstance(dts, str) else tuple(dts)
                if (
                    not isinstance(op, str)
                    or not dts_t
                    or not all(isinstance(d, str) for d in dts_t)
                ):
                    raise RequirementError(
                        f"requirement 'supports': {op!r}: {dts!r} is not accepted; give a data "
                        "type or a list of data types per operation"
                    )
                pairs.extend((op, d) for d in dts_t)
            return Clause(key, "supports", key, tuple(pairs), value)
        if key == "compute_units":
            _check_value_form(key, value)
            return Clause(key, "numeric", key, value, value)
        namespace, _, name = key.rpartition(":")
        if namespace and namespace not in ("feature", "attribute", "flag"):
            raise RequirementError(
                f"requirement {key!r}: unknown prefix {namespace!r}; use 'feature:NAME', "
                "'attribute:NAME' or 'flag:NAME' (or a bare name, looked up as a feature, then "
                "an attribute, then a CPU flag)"
            )
        if not _NAME.match(name):
            raise RequirementError(
                f"requirement {key!r}: {name!r} is not a feature or attribute name "
                "(lowercase snake_case); identity keys are " + ", ".join(IDENTITY_KEYS)
            )
        _check_value_form(key, value)
        if namespace == "flag" and not isinstance(value, bool):
            raise RequirementError(
                f"requirement {key!r}: a CPU flag is present or absent; use true or false, "
                f"not {value!r}"
            )
        return Clause(key, namespace or "auto", name, value, value)

    @property
    def specificity(self) -> int:
        """How many clauses the requirement has: more clauses, more specific."""
        return len(self.clauses)

    def match(self, device: Judged) -> RequirementMatch:
        reasons: list[str] = []
        met: list[str] = []
        for clause in self.clauses:
            reason = _unmet(clause, device)
            if reason is None:
                met.append(clause.describe())
            else:
                reasons.append(reason)
        return RequirementMatch(not reasons, tuple(reasons), tuple(met))

    def __repr__(self) -> str:
        return f"Requirement({dict(self.mapping)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Requirement) and self.mapping == other.mapping

    def __hash__(self) -> int:
        return hash(repr(sorted(self.mapping.items(), key=lambda kv: kv[0])))


def _value_reason(what: str, actual: Any, wanted: Any) -> str | None:
    """None when ``actual`` (not None) meets ``wanted``, else why not."""
    if wanted is True:
        return None
    if wanted is False:
        return f"{what} is present ({actual!r}) but required absent"
    if isinstance(wanted, (int, float)) and not isinstance(wanted, bool):
        if isinstance(actual, (int, float)) and not isinstance(actual, bool):
            if actual >= wanted:
                return None
            return f"{what} is {actual!r}, required at least {wanted!r}"
        version = _as_version(actual)
        if version is not None and version >= _as_version(wanted):
            return None
        return f"{what} is {actual!r}, required at least {wanted!r}"
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


def _flag_reason(name: str, wanted: Any) -> str | None:
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
    attrs = device.data.get("attributes", {})
    if ns in ("attribute", "auto") and clause.name in attrs:
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
