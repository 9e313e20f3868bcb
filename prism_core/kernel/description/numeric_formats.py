"""Numeric formats as data: how each floating-point type of the device-file vocabulary is
encoded (exponent and mantissa bits, bias, infinities, NaN, negative zero, subnormals, and the
block and scale of block and scaled formats), Prism's built-in table of the standard ones, and
a device's own entries (``numeric_formats``, format 2), which override the table where the
hardware differs (flushed subnormals) or where the vocabulary leaves a property open.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, fields, replace
from types import MappingProxyType
from typing import Any

from prism_core.kernel.public import home

__all__ = [
    "BUILTIN", "FLOATING", "PROPERTIES", "NumericFormat", "computed_types", "effective_format",
    "format_problems", "formats_of_width", "standard_format", "vocabulary_name",
]  # fmt: skip

#: The values of the two enumerated properties.
NAN_KINDS = ("ieee", "single", "none")
DENORMAL_KINDS = ("kept", "flushed")


@home("prism_core.hardware")
@dataclass(frozen=True)
class NumericFormat:
    """How a device encodes and treats one floating-point format.  ``None`` means not known:
    neither Prism's table nor the device file says it.

    ``exponent_bits`` and ``mantissa_bits`` are those of each value (the mantissa without the
    implicit leading bit; block floating point has no exponent per value, and its mantissa is
    the value's magnitude).  ``nan`` is ``"ieee"`` (every pattern with an all-ones exponent and
    a non-zero mantissa), ``"single"`` (one reserved pattern, up to the sign) or ``"none"``;
    ``denormals`` is ``"kept"`` (subnormal values exist) or ``"flushed"`` (read or written as
    zero).  ``block_size`` values share one exponent (``shared_exponent_bits``, block floating
    point) or one scale (``scale_type``, scaled formats such as OCP MX).
    """

    name: str
    exponent_bits: int | None = None
    mantissa_bits: int | None = None
    exponent_bias: int | None = None
    infinities: bool | None = None
    nan: str | None = None
    negative_zero: bool | None = None
    denormals: str | None = None
    block_size: int | None = None
    shared_exponent_bits: int | None = None
    scale_type: str | None = None
    description: str = ""

    def properties(self) -> dict[str, object]:
        """The known properties, by name (``None`` ones left out)."""
        return {name: getattr(self, name) for name in PROPERTIES if getattr(self, name) is not None}


#: The properties a device file and a requirement can state, in the order they are shown.
PROPERTIES: tuple[str, ...] = tuple(
    f.name for f in fields(NumericFormat) if f.name not in ("name", "description")
)
#: The properties that define a format's layout and how its bits are read: a device whose
#: values are laid out or read otherwise computes another data type, so a file cannot change
#: them where the table gives them.
STRUCTURAL = (
    *("exponent_bits", "mantissa_bits", "exponent_bias", "block_size", "shared_exponent_bits"),
    "scale_type",
)


def _ieee(name: str, e: int, m: int, text: str, *, denormals: str | None = "kept") -> NumericFormat:
    """An IEEE 754-style binary format: bias 2**(e-1)-1, infinities, every all-ones-exponent
    pattern with a non-zero mantissa a NaN, both zeros, subnormals."""
    return NumericFormat(
        name, e, m, 2 ** (e - 1) - 1, True, "ieee", True, denormals, description=text
    )


_MX = "OCP Microscaling Formats (MX) v1.0"
#: Prism's description of each format whose definition is published: IEEE 754 binary64/32/16,
#: bfloat16 and TF32, the OCP FP8 formats (E4M3 "FN", E5M2) and their FNUZ variants (as
#: ml_dtypes implements them: float8_e4m3fnuz, float8_e5m2fnuz), the IEEE-style E4M3 and E3M4
#: (ml_dtypes float8_e4m3, float8_e3m4), OCP FP4 E2M1 and the MX formats, NVIDIA's NVFP4 and
#: Tenstorrent's BFP8/BFP4/BFP2 (tt-isa-documentation, WormholeB0 "Floating-point bit
#: patterns").  Left out: ``fp8`` and ``fp6``, which name no single format.
BUILTIN: Mapping[str, NumericFormat] = MappingProxyType({
    f.name: f
    for f in (
        _ieee("fp64", 11, 52, "IEEE 754 binary64."),
        _ieee("fp32", 8, 23, "IEEE 754 binary32."),
        _ieee(
            "tf32", 8, 10, "NVIDIA TensorFloat-32: binary32's exponent, binary16's 10 mantissa "
            "bits, stored in 32 bits; its subnormal handling is not published.", denormals=None,
        ),
        _ieee("fp16", 5, 10, "IEEE 754 binary16."),
        _ieee("bf16", 8, 7, "bfloat16: binary32 with the mantissa cut to 7 bits."),
        NumericFormat(
            "fp8_e4m3", 4, 3, 7, False, "single", True, "kept",
            description="OCP FP8 E4M3 (ml_dtypes float8_e4m3fn): no infinities, NaN only at "
            "S.1111.111, largest 448.",
        ),
        NumericFormat(
            "fp8_e5m2", 5, 2, 15, True, "ieee", True, "kept",
            description="OCP FP8 E5M2 (ml_dtypes float8_e5m2): IEEE 754-style, largest 57344.",
        ),
        NumericFormat(
            "fp8_e4m3fnuz", 4, 3, 8, False, "single", False, "kept",
            description="E4M3 FNUZ (ml_dtypes float8_e4m3fnuz): no infinities, no negative "
            "zero, its pattern 0x80 the one NaN; largest 240.",
        ),
        NumericFormat(
            "fp8_e5m2fnuz", 5, 2, 16, False, "single", False, "kept",
            description="E5M2 FNUZ (ml_dtypes float8_e5m2fnuz): no infinities, no negative "
            "zero, its pattern 0x80 the one NaN; largest 57344.",
        ),
        _ieee(
            "fp8_e4m3_ieee", 4, 3,
            "IEEE 754-style E4M3 (ml_dtypes float8_e4m3, LLVM f8E4M3): infinities, largest 240.",
        ),
        _ieee(
            "fp8_e3m4", 3, 4,
            "IEEE 754-style E3M4 (ml_dtypes float8_e3m4, LLVM f8E3M4): largest 15.5.",
        ),
        NumericFormat(
            "fp4", 2, 1, 1, False, "none", True, "kept",
            description=f"OCP FP4 E2M1 ({_MX}; ml_dtypes float4_e2m1fn): largest 6.",
        ),
        NumericFormat(
            "mxfp8", block_size=32, scale_type="fp8_e8m0",
            description=f"{_MX}: 32 FP8 values (E5M2 or E4M3, which the name leaves open) "
            "sharing one E8M0 scale, a power of two.",
        ),
        NumericFormat(
            "mxfp6", block_size=32, scale_type="fp8_e8m0",
            description=f"{_MX}: 32 FP6 values (E3M2 or E2M3, which the name leaves open) "
            "sharing one E8M0 scale.",
        ),
        NumericFormat(
            "mxfp4", 2, 1, 1, False, "none", True, "kept", block_size=32, scale_type="fp8_e8m0",
            description=f"{_MX}: 32 FP4 E2M1 values sharing one E8M0 scale.",
        ),
        NumericFormat(
            "nvfp4", 2, 1, 1, False, "none", True, "kept", block_size=16,
            scale_type="fp8_ue4m3",
            description="NVIDIA NVFP4: 16 FP4 E2M1 values sharing an unsigned E4M3 scale, "
            "under a per-tensor FP32 scale.",
        ),
        NumericFormat(
            "bfp8", 0, 7, 127, False, "none", False, None, 16, 8,
            description="Tenstorrent BFP8 (tt-metal bfloat8_b): a sign and a 7-bit magnitude "
            "per value, 16 values sharing an 8-bit exponent; sign with magnitude 0 reads as "
            "-2**128, not negative zero.",
        ),
        NumericFormat(
            "bfp4", 0, 3, 127, False, "none", False, None, 16, 8,
            description="Tenstorrent BFP4 (tt-metal bfloat4_b): a sign and a 3-bit magnitude "
            "per value, 16 values sharing an 8-bit exponent.",
        ),
        NumericFormat(
            "bfp2", 0, 1, 127, False, "none", False, None, 16, 8,
            description="Tenstorrent BFP2 (bfloat2_b): a sign and a 1-bit magnitude per value, "
            "16 values sharing an 8-bit exponent.",
        ),
    )
})  # fmt: skip
#: The vocabulary's floating-point types: the names ``numeric_formats`` and the
#: ``numeric_format:NAME`` requirement take.
FLOATING: frozenset[str] = frozenset({*BUILTIN, "fp8", "fp6"})


def standard_format(name: str) -> NumericFormat | None:
    """Prism's description of the format ``name`` (a vocabulary name such as ``"fp8_e4m3"``),
    or ``None`` for a name that stands for no single format (``fp8``, ``fp6``)."""
    return BUILTIN.get(name)


def vocabulary_name(name: object) -> str:
    """The vocabulary name of the format ``name`` names: a vocabulary name (``"bf16"``) or a
    Prism dtype or its name (``"bfloat16"``, ``prism_core.float8_e4m3fn``).  Anything else,
    integer types included, raises ``ValueError`` naming the formats."""
    if isinstance(name, str) and name in FLOATING:
        return name
    from prism_core.kernel.description.dtypes import dtype
    from prism_core.kernel.errors import did_you_mean

    try:
        vocab: str | None = dtype(name).vocab
    except (TypeError, ValueError):
        vocab = None
    if vocab in FLOATING:
        return str(vocab)
    hint = did_you_mean(name, FLOATING) if isinstance(name, str) else ""
    raise ValueError(
        f"{name!r} is not a floating-point format{hint}; the formats are "
        + ", ".join(sorted(FLOATING))
    )


def effective_format(name: str, entry: Mapping[str, Any] | None) -> NumericFormat:
    """Prism's description of ``name`` with the properties a device file's ``entry`` gives in
    place of the table's."""
    base = BUILTIN.get(name) or NumericFormat(name)
    if not entry:
        return base
    given = {k: v for k, v in entry.items() if k in PROPERTIES or k == "description"}
    return replace(base, **given)


_BITS = re.compile(r"[0-9]+")


def element_bits(name: str) -> int | None:
    """The width a vocabulary name gives its values (``fp8_e4m3`` 8, ``bf16`` 16, ``nvfp4``
    4), for grouping formats in messages."""
    found = _BITS.search(name)
    return int(found.group()) if found else None


def computed_types(data: Mapping[str, Any]) -> frozenset[str]:
    """The floating-point formats a resolved description says its device computes: those its
    features accelerate, its peaks and throughput rates are given in, its sparsity applies to
    and its ``numeric_formats`` list."""
    found: set[str] = set(data.get("peak_tflops", {}))
    for feature in data.get("features", ()):
        for op in feature.get("operations", ()):
            found.update(op.get("data_types", ()))
    for key, field_name in (("throughput", "data_type"), ("numeric_formats", "name")):
        for entry in data.get(key, ()):
            if isinstance(entry, Mapping) and isinstance(entry.get(field_name), str):
                found.add(entry[field_name])
    for entry in data.get("sparsity", ()):
        found.update(entry.get("data_types", ()))
    return frozenset(found & FLOATING)


def format_problems(doc: Mapping[str, object]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """What the schema cannot say of a document's ``numeric_formats``: each name a
    floating-point format and given once, and no entry changing the layout that Prism's table
    gives the name (values laid out otherwise are another data type).  Yields (path, message).
    """
    entries = doc.get("numeric_formats")
    if not isinstance(entries, list):
        return
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, Mapping) else None
        if not isinstance(name, str):
            continue
        if name not in FLOATING:
            yield (
                ("numeric_formats", i, "name"),
                f"{name} is not a floating-point format; numeric_formats describes "
                f"{', '.join(sorted(FLOATING))}",
            )
            continue
        if name in seen:
            yield (
                ("numeric_formats", i, "name"),
                f"numeric_formats has two entries for {name}; merge them into one",
            )
        seen.add(name)
        standard = BUILTIN.get(name) or NumericFormat(name)  # fp8, fp6: the file says which
        contradicted = False
        for prop in STRUCTURAL:
            defined = getattr(standard, prop)
            if prop in entry and defined is not None and entry[prop] != defined:
                contradicted = True
                how = "read" if prop == "exponent_bias" else "laid out"
                yield (
                    ("numeric_formats", i, prop),
                    f"{name} has {prop} {defined!r} by definition; values {how} with "
                    f"{prop} {entry[prop]!r} are another data type{_layout_hint(entry)}",
                )
        if not contradicted:
            given = {k: v for k, v in entry.items() if k in STRUCTURAL}
            for prop, message in _impossible(replace(standard, **given)):
                yield ("numeric_formats", i, prop if prop in entry else "name"), message


def _impossible(f: NumericFormat) -> Iterator[tuple[str, str]]:
    """Why a format's layout cannot be its type: (the property at fault, why).

    Where the name fixes the width of a value (``fp6``, ``fp8``, ``mxfp6``; not ``tf32``,
    19 bits stored in 32), a sign bit, the exponent and the mantissa make that width.  The
    bias is one of the stored exponents, 0 to 2**e - 1 (of the shared exponent for block
    floating point): the table's formats use 2**(e-1) - 1 (IEEE 754) or 2**(e-1) (FNUZ).
    """
    width = None if f.name == "tf32" else element_bits(f.name)
    e, m = f.exponent_bits, f.mantissa_bits
    parts = [(p, v) for p, v in (("exponent_bits", e), ("mantissa_bits", m)) if v is not None]
    used = 1 + sum(v for _, v in parts)
    if width is not None and parts and (used > width or (len(parts) == 2 and used != width)):
        made = ["a sign bit", *(f"{p} {v}" for p, v in parts)]
        yield (
            parts[-1][0],
            f"{f.name} values are {width} bits: {', '.join(made[:-1])} and {made[-1]} make "
            f"{used}; give exponent_bits and mantissa_bits that add up to {width - 1}",
        )
        return
    bits, what = (e, "exponent_bits") if e else (f.shared_exponent_bits, "shared_exponent_bits")
    bias = f.exponent_bias
    if bias is not None and bits and not 0 <= bias < 2**bits:
        yield (
            "exponent_bias",
            f"exponent_bias {bias} does not fit {what} {bits}: the bias is one of the "
            f"{2**bits} stored exponents, 0 to {2**bits - 1} (IEEE 754 formats use "
            f"{2 ** (bits - 1) - 1}, 2**(e-1)-1; FNUZ formats {2 ** (bits - 1)}, 2**(e-1))",
        )


def _layout_hint(entry: Mapping[str, object]) -> str:
    """``" (did you mean ...?)"``: the vocabulary's formats of the same width laid out as
    ``entry`` says."""
    given = {p: entry[p] for p in STRUCTURAL if p in entry}
    width = element_bits(str(entry.get("name")))
    fits = sorted(
        f.name
        for f in BUILTIN.values()
        if f.name != entry.get("name")
        and element_bits(f.name) == width
        and all(getattr(f, p) == v for p, v in given.items())
    )
    return f" (did you mean {' or '.join(fits)}?)" if fits else ""


def formats_of_width(names: Iterable[str], like: str) -> list[str]:
    """Those of ``names`` whose values are as wide as ``like``'s, sorted (all of them, sorted,
    when none is)."""
    width = element_bits(like)
    same = sorted(n for n in names if element_bits(n) == width)
    return same or sorted(names)
