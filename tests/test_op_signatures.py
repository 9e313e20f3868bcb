"""The signatures of the functions users call for ops (``prism_core.sum``): what
``inspect.signature``, ``help()`` and editors show is the op's declared signature, not the
``(*args, **kwargs)`` of the hot path that passes the arguments on.

A builtin op's signature is written once, at the start of its documentation in the catalogue
(``sum(x, /, *, axis=None, dtype=None, keepdims=False): ...``); the function's
``__signature__`` is parsed from it when first read.  An op declared with
``prism_core.extending.operation`` has its reference function's signature.
"""

from __future__ import annotations

import importlib
import inspect
import pickle
import pydoc
from inspect import Parameter
from typing import Any

import pytest

import prism_core
from prism_core import array_api as xp
from prism_core._builtin.numpy_ops import FUNCTIONS
from prism_core.kernel.dispatch.catalogue import SPECS, parse_signature, signature_text
from prism_core.kernel.dispatch.ops import OpSignature, _declared_signature
from prism_core.kernel.dispatch.registry import Op

ANYTHING = inspect.Signature(
    [Parameter("args", Parameter.VAR_POSITIONAL), Parameter("kwargs", Parameter.VAR_KEYWORD)]
)


def _shape(signature: inspect.Signature) -> list[tuple[str, Any, bool]]:
    """Each parameter's name, kind and whether it has a default."""
    return [
        (p.name, p.kind, p.default is not Parameter.empty) for p in signature.parameters.values()
    ]


def test_every_builtin_op_shows_the_signature_its_documentation_starts_with() -> None:
    problems = {}
    for spec in SPECS:
        text = signature_text(spec.name, spec.text)
        if text is None:
            problems[spec.name] = f"its doc must start with '{spec.name}(...): '"
            continue
        shown = inspect.signature(prism_core.get_op(spec.name).function)
        # Written as the documentation writes it (quotes aside: repr writes 'backward').
        if str(shown).replace("'", '"') != text.replace("'", '"'):
            problems[spec.name] = f"shows {shown}, declares {text}"
        elif _shape(shown) != _shape(parse_signature(text)) or shown == ANYTHING:
            problems[spec.name] = f"shows {shown}"
        elif inspect.signature(prism_core.get_op(spec.name)) != shown:  # the Op object's
            problems[spec.name] = "the Op object shows another signature"
    assert problems == {}
    assert len(SPECS) > 150


def _prisms_reference(name: str) -> Any:
    """The op's NumPy reference where Prism wrote it (NumPy's own functions name their
    parameters NumPy's way: ``a``, ``m``), else ``None``."""
    reference = FUNCTIONS.get(name)
    if isinstance(reference, str):
        module, _, attribute = reference.partition(":")
        reference = getattr(importlib.import_module(module), attribute)
    if not inspect.isfunction(reference) or not reference.__module__.startswith("prism_core."):
        return None
    return reference


def test_the_declared_signature_is_the_reference_functions() -> None:
    """What the documentation declares is what the NumPy reference takes, where Prism wrote
    the reference: names, kinds, and which parameters have defaults."""
    checked = 0
    problems = {}
    for spec in SPECS:
        reference = _prisms_reference(spec.name)
        if reference is None:
            continue
        checked += 1
        declared = inspect.signature(prism_core.get_op(spec.name).function)
        if _shape(declared) != _shape(inspect.signature(reference)):
            problems[spec.name] = (
                f"declares {declared}, the reference takes {inspect.signature(reference)}"
            )
    assert problems == {}
    assert checked > 60


def _standard_conformance(ours: inspect.Signature, theirs: inspect.Signature) -> list[str]:
    """Where ``ours`` cannot be called as the standard's ``theirs`` is, by the rules of the
    standard's test suite (``test_signatures.py``): positional parameters in order, named as
    the standard names them where they may be passed by keyword, of the same kind where the
    standard's is positional-or-keyword or variadic; keyword-only ones present, by keyword."""
    problems = []
    mine = list(ours.parameters.values())
    standard = list(theirs.parameters.values())
    positional = [p for p in standard if p.kind != Parameter.KEYWORD_ONLY]
    for i, p in enumerate(positional):
        if i >= len(mine):
            problems.append(f"{p.name} missing")
            continue
        if p.kind == Parameter.POSITIONAL_OR_KEYWORD and mine[i].name != p.name:
            problems.append(f"parameter {i} is {mine[i].name}, not {p.name}")
        if p.kind in (Parameter.POSITIONAL_OR_KEYWORD, *_VARIADIC) and mine[i].kind != p.kind:
            problems.append(f"{p.name} is {mine[i].kind.description}, not {p.kind.description}")
    for p in standard[len(positional) :]:
        found = ours.parameters.get(p.name)
        if found is None or found.kind not in (
            Parameter.KEYWORD_ONLY,
            Parameter.POSITIONAL_OR_KEYWORD,
        ):
            problems.append(f"keyword {p.name} missing")
    return problems


_VARIADIC = (Parameter.VAR_POSITIONAL, Parameter.VAR_KEYWORD)


def _namespace_functions() -> list[tuple[str, Any, Any]]:
    strict = pytest.importorskip("array_api_strict")
    found = []
    for theirs_module, ours_module, prefix in (
        (strict, xp, ""),
        (strict.linalg, xp.linalg, "linalg."),
        (strict.fft, xp.fft, "fft."),
    ):
        for name in dir(ours_module):
            theirs = getattr(theirs_module, name, None)
            ours = getattr(ours_module, name)
            if inspect.isfunction(theirs) and callable(ours) and not isinstance(ours, type):
                found.append((prefix + name, ours, theirs))
    return found


def test_the_namespace_can_be_called_as_the_standard_says() -> None:
    """Every function of ``prism_core.array_api`` against array-api-strict's (which follows
    the standard's signatures): the check array-api-tests makes, run here."""
    functions = _namespace_functions()
    assert len(functions) > 150
    problems = {
        name: found
        for name, ours, theirs in functions
        if (found := _standard_conformance(inspect.signature(ours), inspect.signature(theirs)))
    }
    assert problems == {}


def test_help_shows_the_signature() -> None:
    text = pydoc.render_doc(xp.clip, renderer=pydoc.plaintext)
    assert "clip(x, /, min=None, max=None)\n" in text
    assert "clip(*args, **kwargs)" not in text


def test_defaults_that_are_no_literals_show_as_written() -> None:
    shown = inspect.signature(prism_core.random.normal)
    assert repr(shown.parameters["dtype"].default) == "float64"
    assert str(shown) == "(shape, mean=0.0, std=1.0, *, seed=None, dtype=float64)"


def test_the_signature_is_parsed_when_first_read_not_when_the_op_is_made() -> None:
    op = Op("signature_test.lazy", "signature_test.lazy(x, /, *, axis=None): for this test")
    signature = op.function.__signature__  # type: ignore[attr-defined]
    assert isinstance(signature, OpSignature)
    slot = inspect.Signature.__dict__["_parameters"]
    with pytest.raises(AttributeError):
        slot.__get__(signature)  # nothing parsed yet
    assert str(inspect.signature(op.function)) == "(x, /, *, axis=None)"
    assert list(slot.__get__(signature)) == ["x", "axis"]


def test_an_op_signature_is_an_inspect_signature_in_every_respect() -> None:
    shown = inspect.signature(xp.sum)
    plain = inspect.Signature(list(shown.parameters.values()))
    assert isinstance(shown, inspect.Signature)
    assert shown == plain and hash(shown) == hash(plain)
    assert shown.bind(1, axis=0).arguments == {"x": 1, "axis": 0}
    with pytest.raises(TypeError):
        shown.bind(1, 0)  # axis is keyword-only
    assert str(shown.replace(parameters=[shown.parameters["x"]])) == "(x, /)"
    assert pickle.loads(pickle.dumps(shown)) == shown


def test_an_op_without_a_declared_signature_takes_anything() -> None:
    op = Op("signature_test.prose", "Adds things up, somehow.")
    assert inspect.signature(op.function) == ANYTHING
    # Prose that only looks like a signature is prose.
    looks_like = Op("signature_test.prose2", "signature_test.prose2(is not) a signature: no.")
    assert _declared_signature(looks_like) == ANYTHING


def test_an_operation_has_its_reference_functions_signature() -> None:
    def scaled(x: Any, /, factor: float = 2.0, *, offset: float = 0.0) -> Any:
        """Not a signature."""
        return x * factor + offset

    function = prism_core.extending.operation(scaled, name="signature_test_scaled")
    assert inspect.signature(function) == inspect.signature(scaled)
    assert function(3, offset=1.0) == 7.0


def test_an_operation_whose_reference_has_no_signature_takes_anything() -> None:
    with pytest.raises(ValueError, match="no signature found"):
        inspect.signature(max)  # a builtin without a text signature
    function = prism_core.extending.operation(max, name="signature_test_max")
    assert inspect.signature(function) == ANYTHING
