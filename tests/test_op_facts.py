"""Op facts live only in the op records (docs/architecture.md, "One record per op").

A table keyed by builtin op names outside ``prism_core/kernel/records/`` (and the conformance
inputs, ``prism_core/testing/_cases/``) is a fact a new op has to be found by grep for; the scan
below fails on one, naming its file, line and ops.  The other tests check that the record
fields that replaced such tables drive what the tables did.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from prism_core.kernel.oprecord import OpRecord
from prism_core.kernel.records.families import RECORDS

ROOT = Path(__file__).resolve().parent.parent / "prism_core"
#: The builtin ops' names, from the records (aliases left out: the lint's tables of other
#: frameworks' names may hold NumPy's).
OP_NAMES = frozenset(r.name for r in RECORDS)
#: Where op facts belong: the records, and the conformance suite's inputs per family.
HOMES = ("kernel/records/", "testing/_cases/")
#: Tables that name three or more ops and are no facts about them, with why: a file, or a
#: name a module binds (``file:NAME``).
NOT_OP_FACTS = {
    "backend_kit/adapters.py": "implementations: how the kit computes what a library lacks",
    "array_api/linalg.py": "the standard's linalg extension's own function names",
    "_tuning/calibration.py": "the ops calibration measures, and its sizes: a plan, not facts",
    "_pipeline/split/rules.py:COMBINES": "the ways a reduction's parts combine",
    "_bench.py:_SHOWN": "the order prism bench shows its rows in: a presentation choice",
    "testing/_promises.py:_CONVERTERS": "a backend's converting methods",
}


def _tables(tree: ast.AST) -> list[tuple[int, list[str]]]:
    """The literal sets, lists, tuples and dict keys of ``tree`` that hold three or more op
    names, with their lines (``__all__`` lists names of functions, not facts)."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            skip.update(id(n) for n in ast.walk(node.value))
    found = []
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        items: list[ast.expr | None] = []
        if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = list(node.keys)
        names = sorted(
            {i.value for i in items if isinstance(i, ast.Constant) and i.value in OP_NAMES}
        )
        if len(names) >= 3:
            found.append((getattr(node, "lineno", 0), names))
    return sorted(found)


def _assigned(tree: ast.AST, line: int) -> str | None:
    """The name a module-level assignment covering ``line`` binds."""
    for node in getattr(tree, "body", []):
        covers = node.lineno <= line <= (getattr(node, "end_lineno", None) or node.lineno)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and covers:
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            return target.id if isinstance(target, ast.Name) else None
    return None


def test_no_table_of_op_facts_outside_the_records() -> None:
    problems = []
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith(HOMES) or relative in NOT_OP_FACTS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, names in _tables(tree):
            if f"{relative}:{_assigned(tree, line)}" in NOT_OP_FACTS:
                continue
            problems.append(f"prism_core/{relative}:{line}: a table of ops {', '.join(names)}")
    assert not problems, (
        "op facts belong in the op records (an OpRecord field, filled in "
        "prism_core/kernel/records/<family>.py; docs/architecture.md, 'One record per op'), "
        "not in a table keyed by op names:\n" + "\n".join(problems)
    )


def test_the_scan_finds_a_table() -> None:
    tree = ast.parse('WIDE = {"sum": "accumulate", "prod": "accumulate", "mean": "float64"}')
    assert _tables(tree) == [(1, ["mean", "prod", "sum"])]
    assert _tables(ast.parse('__all__ = ["sum", "prod", "mean"]')) == []


def test_every_exemption_is_still_there() -> None:
    for key in NOT_OP_FACTS:
        assert (ROOT / key.partition(":")[0]).exists(), key


# -- the fields drive what the tables did -----------------------------------------------------


def _record(name: str) -> OpRecord:
    return next(r for r in RECORDS if r.name == name)


def test_promoted_drives_the_conformance_promotion_checks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from prism_core.testing import _promises

    assert _promises.promotion_dtypes("vecdot")  # its record promotes (0, 1)
    monkeypatch.setattr(
        _promises, "_PROMOTED", {k: v for k, v in _promises._PROMOTED.items() if k != "vecdot"}
    )
    assert _promises.promotion_dtypes("vecdot") == ()


def test_promoted_places_the_second_dtype_where_the_record_says() -> None:
    import numpy as np

    from prism_core.testing import _promises

    case = _promises.promotion_case("where", "float32", "float64")
    assert case is not None
    (condition, x1, x2), _ = case
    assert condition.dtype == np.bool_ and (x1.dtype, x2.dtype) == (np.float32, np.float64)
    stacked = _promises.promotion_case("stack", "float32", "float64")
    assert stacked is not None
    assert [a.dtype for a in stacked[0][0]] == [np.float32, np.float64, np.float32]


def test_creation_and_values_give_the_default_dtype() -> None:
    from prism_core.backend_kit._numpy_rules import default_kind, value_parameters

    full, arange, zeros = _record("full"), _record("arange"), _record("zeros")
    assert default_kind(full, value_parameters(full), ((3,), 2), {}) == "int"
    assert default_kind(full, value_parameters(full), ((3,),), {"fill_value": 2.5}) == "float"
    assert default_kind(arange, value_parameters(arange), (0,), {"stop": 4.0}) == "float"
    assert default_kind(arange, value_parameters(arange), (0, 4), {}) == "int"
    assert default_kind(zeros, value_parameters(zeros), ((3,),), {}) == "float"
    plain = zeros._replace(creation="argument")
    assert default_kind(plain, value_parameters(plain), ((3,),), {}) is None


def test_container_names_the_reference_type() -> None:
    from prism_core.backend_kit._numpy_rules import container_type, record_of
    from prism_core.kernel.contract.results import SVDResult

    assert container_type(_record("linalg.svd")) is SVDResult
    assert container_type(_record("meshgrid")) is list
    assert container_type(_record("broadcast_arrays")) is tuple
    assert container_type(_record("sum")) is None
    assert container_type(record_of("an_op_of_a_backend")) is None


def test_a_namespace_backend_reads_the_record(monkeypatch: pytest.MonkeyPatch) -> None:
    """``numpy_positional`` moves NumPy's positional spelling to the keyword; without it, the
    argument stays where it was given."""
    import numpy as np

    from prism_core.backend_kit import NamespaceBackend, _numpy_rules

    class OverNumpy(NamespaceBackend):
        name = "facts_numpy"
        namespace = "numpy"
        library = "numpy"

    backend = OverNumpy()
    made = backend.function("tril")(np.ones((3, 3)), 1)
    assert np.array_equal(made, np.tril(np.ones((3, 3)), k=1))
    tril = _numpy_rules.RECORDS["tril"]
    monkeypatch.setitem(_numpy_rules.RECORDS, "tril", tril._replace(numpy_positional=None))
    seen: list[tuple[tuple[object, ...], dict[str, object]]] = []
    monkeypatch.setattr(backend, "_base", lambda op: lambda *a, **k: seen.append((a, k)))
    backend.function("tril")(np.ones((3, 3)), 1)
    assert seen[0][0][1] == 1 and seen[0][1] == {}


def test_the_lint_note_is_the_records() -> None:
    from prism_core.lint.names import OP_NOTES

    assert {r.name: f" ({r.numpy_note})" for r in RECORDS if r.numpy_note} == OP_NOTES
    assert "correction=" in OP_NOTES["std"]


def test_on_device_creation_follows_the_record() -> None:
    from prism_core.kernel.dispatch import ops

    assert {"asarray"} == ops._FROM_DATA
    assert "on_device" in ops._key_lines(ops.get_op("asarray"), 0)
    assert "on_device" not in ops._key_lines(ops.get_op("zeros_like"), 0)


def test_split_rules_are_the_records() -> None:
    from prism_core._pipeline.split import rules

    built = rules.split_rules()
    assert {r.name for r in RECORDS if r.split} == set(built)
    assert built["clip"].keywords == ("min", "max")  # its array arguments by keyword
    assert (built["sum"].combine, built["sum"].along_default) == ("add", None)
    assert built["std"].combine is None and built["linalg.solve"].arrays == (0, 1)


def test_a_records_split_makes_its_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    from prism_core._pipeline.split import rules

    changed = tuple(
        r._replace(split="reduction maximum") if r.name == "sin" else r for r in RECORDS
    )
    monkeypatch.setattr(rules, "SPECS", changed)
    made = rules._builtin_rules()["sin"]
    assert (made.kind, made.combine, made.along_default) == ("reduction", "maximum", None)


def test_examples_are_the_records(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    from prism_core import _bench
    from prism_core._tuning import tuner

    examples = {r.name: r.examples for r in RECORDS if r.examples is not None}
    assert examples == tuner.BUILTIN_EXAMPLES
    assert {name: e.size for name, e in examples.items()} == tuner.EXAMPLES
    assert {name: [n for n, _ in e.quick] for name, e in examples.items()} == _bench.QUICK
    assert tuner.example_bytes("matmul", 100) == 3 * 100 * 100 * 8
    a, b = tuner.example_arguments("linalg.solve", 8, "float32")
    assert (a.shape, b.shape, a.dtype) == ((8, 8), (8,), np.float32)
    assert tuner.example_bytes("fft.fft", 16, "float32") == 16 * 4 + 16 * 8
    monkeypatch.setitem(tuner.BUILTIN_EXAMPLES, "sin", examples["add"])
    assert [x.shape for x in tuner.example_arguments("sin", 5)] == [(5,), (5,)]
