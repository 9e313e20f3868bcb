"""``prism lint``: the codes, the inference of Prism arrays, ``# noqa``, the configuration and
the command line, on the seed guidelines' own examples and on real code.

The fixtures under ``tests/data/lint/seed_*.py`` are the bad and good examples of the
backend-purity guidelines (``shared/seeds/003_1c05736814722149.txt``), copied verbatim between
markers; :func:`test_seed_fixtures_are_verbatim_copies` checks them against the seed where
``shared/`` is present.  The command line runs as a real subprocess.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from prism_core.kernel.dispatch.catalogue import ALIASES, CATALOGUE
from prism_core.lint import CODES, LintConfig, LintConfigError, lint_paths, lint_source, runner
from prism_core.lint.checker import ARRAY_OPS, LEAVING_OPS, TUPLE_OPS
from prism_core.lint.config import find_config, load_config
from prism_core.lint.names import _NUMPY_RENAMES, _TORCH_RENAMES, framework_dtype, framework_op

from .conftest import REPO

DATA = REPO / "tests" / "data" / "lint"
SEED = REPO.parent / "shared" / "seeds" / "003_1c05736814722149.txt"
#: A guard against a hung process, not a performance expectation.
HANG_GUARD_S = 120


def found(source: str, config: LintConfig | None = None) -> list[tuple[int, str]]:
    """(line, code) of every finding in ``source`` (dedented)."""
    return [(f.line, f.code) for f in lint_source(textwrap.dedent(source), config=config)]


def codes(source: str, config: LintConfig | None = None) -> list[str]:
    return [code for _, code in found(source, config)]


def run_cli(*args: str, cwd: Path, module: str = "prism_core") -> subprocess.CompletedProcess[str]:
    """``prism ARGS`` (``python -m prism_core``), or ``python -m prism_core.lint ARGS``."""
    env = {k: v for k, v in os.environ.items() if k not in ("PRISM_DEBUG", "PYTHONWARNINGS")}
    env["PYTHONIOENCODING"] = "utf-8"
    command = [sys.executable, "-m", module, *(("lint",) if module == "prism_core" else ()), *args]
    return subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, env=env, timeout=HANG_GUARD_S
    )


# -- the seed's examples ------------------------------------------------------------------------

#: The findings each seed example gives: (line, code).  The bad examples the lint does not
#: report in full are the documented misses (see test_seed_misses_are_the_documented_ones).
SEED_FINDINGS: dict[str, list[tuple[int, str]]] = {
    "seed_numpy_bad.py": [
        (12, "PRISM001"),  # import numpy as np
        (16, "PRISM002"),  # np.mean(data)
        (17, "PRISM002"),  # np.std(data)
        (22, "PRISM003"),  # tensor.numpy()
        (24, "PRISM002"),  # torch.from_numpy(result)
    ],
    "seed_precision_bad.py": [
        (13, "PRISM003"),  # float(ops.min(tensor))
        (14, "PRISM003"),  # float(ops.max(tensor))
        (20, "PRISM004"),  # ops.sum(values) / len(values)
    ],
    "seed_performance_bad.py": [
        (15, "PRISM003"),  # tensor.numpy()
        (16, "PRISM002"),  # np.log(...)
        (16, "PRISM002"),  # np.abs(...)
    ],
    "seed_operators_bad.py": [],  # operators on parameters: not known to be arrays
    "seed_types_bad.py": [
        (14, "PRISM001"),  # from numpy import dtype as np_dtype
        (16, "PRISM005"),  # np_dtype('float32')
        (21, "PRISM008"),  # isinstance(x, np.ndarray)
        (24, "PRISM008"),  # isinstance(x, torch.Tensor)
        (27, "PRISM008"),  # hasattr(x, 'numpy')
    ],
    "seed_random_bad.py": [
        (16, "PRISM007"),  # np.random.normal
        (18, "PRISM007"),  # torch.randn
        (20, "PRISM007"),  # mx.random.normal
    ],
    "seed_device_bad.py": [
        (17, "PRISM006"),  # tensor.to(device)
        (20, "PRISM002"),  # mx.array(...)
        (20, "PRISM006"),  # device=device
    ],
    **{
        f"seed_{name}_good.py": []
        for name in ("numpy", "precision", "performance", "operators", "types", "random", "device")
    },
}
MARK_START, MARK_END = "# --- seed snippet (verbatim) ---\n", "# --- end of seed snippet ---\n"


def test_every_seed_example_is_a_fixture() -> None:
    assert sorted(p.name for p in DATA.glob("seed_*.py")) == sorted(SEED_FINDINGS)


@pytest.mark.skipif(not SEED.is_file(), reason="shared/seeds is not beside this checkout")
def test_seed_fixtures_are_verbatim_copies() -> None:
    seed = SEED.read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", seed, re.S)
    snippets = []
    for name in sorted(SEED_FINDINGS):
        text = (DATA / name).read_text(encoding="utf-8")
        snippet = text.split(MARK_START, 1)[1].split(MARK_END, 1)[0]
        assert snippet in blocks, f"{name}: the snippet is not one of the seed's code blocks"
        snippets.append(snippet)
    assert sorted(snippets) == sorted(blocks), "every code block of the seed is a fixture"


@pytest.mark.parametrize("name", sorted(SEED_FINDINGS))
def test_seed_examples_give_their_findings(name: str) -> None:
    source = (DATA / name).read_text(encoding="utf-8")
    assert [(f.line, f.code) for f in lint_source(source)] == SEED_FINDINGS[name]


def test_seed_misses_are_the_documented_ones() -> None:
    """The seed's operator examples act on parameters, which the inference does not assume to
    be arrays (docs/lint.md, "Which values are Prism arrays"); annotated, they are found."""
    text = (DATA / "seed_operators_bad.py").read_text(encoding="utf-8")
    assert lint_source(text) == []
    annotated = text.replace(
        "def compute_loss(predictions, targets):",
        "def compute_loss(predictions: Array, targets: Array):",
    )
    config = LintConfig(array_types=("Array",))
    found = [
        (f.line, f.code, f.message.split(":")[0]) for f in lint_source(annotated, config=config)
    ]
    assert found == [
        (13, "PRISM004", "Python operator `-` on a Prism array"),  # predictions - targets
        (14, "PRISM004", "Python operator `**` on a Prism array"),  # diff ** 2: diff is one too
    ]


# -- the codes as data and their documentation ------------------------------------------------


def test_codes_are_numbered_and_named_uniquely() -> None:
    assert [c.code for c in CODES] == [f"PRISM{i:03d}" for i in range(1, len(CODES) + 1)]
    assert len({c.name for c in CODES}) == len(CODES)
    assert [c.code for c in CODES if c.fixable] == ["PRISM004", "PRISM005"]


@pytest.mark.parametrize("code", CODES, ids=lambda c: c.code)
def test_each_codes_bad_pattern_gives_it_and_its_good_pattern_nothing(code: Any) -> None:
    assert code.code in codes(code.bad)
    assert codes(code.good) == []
    ast.parse(code.bad)
    ast.parse(code.good)


def test_the_docs_list_every_code_and_are_generated_from_the_data() -> None:
    doc = (REPO / "docs" / "lint.md").read_text(encoding="utf-8")
    for c in CODES:
        assert f"### {c.code} {c.name}" in doc
        assert c.bad.rstrip("\n") in doc and c.good.rstrip("\n") in doc
    check = subprocess.run(
        [sys.executable, str(REPO / "docs" / "gen_lint_codes.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_every_catalogue_op_is_classified_for_the_inference() -> None:
    assert set(CATALOGUE) == ARRAY_OPS | TUPLE_OPS | LEAVING_OPS, (
        "classify the new ops in prism_core/lint/checker.py: ARRAY_OPS, TUPLE_OPS or LEAVING_OPS"
    )
    assert not (ARRAY_OPS & TUPLE_OPS or ARRAY_OPS & LEAVING_OPS or TUPLE_OPS & LEAVING_OPS)


def test_the_classification_is_what_the_ops_return() -> None:
    """Called for real (on the conformance suite's NumPy inputs): an array op returns an array
    (something with a dtype), a tuple op a tuple of arrays."""
    import numpy as np

    import prism_core
    from prism_core.testing import input_cases

    called = 0
    for op in sorted(ARRAY_OPS | TUPLE_OPS):
        cases = input_cases(op)
        if not cases:
            continue
        args, kwargs = next(iter(cases.values()))
        result = prism_core.get_op(op).function(*args, **kwargs)
        called += 1
        if op in TUPLE_OPS:
            # meshgrid: a list, as the standard says
            assert isinstance(result, (tuple, list)), op
            assert all(hasattr(r, "dtype") for r in result), op
        else:
            assert not isinstance(result, tuple) and hasattr(result, "dtype"), op
    assert called >= len(ARRAY_OPS | TUPLE_OPS) - 2
    assert isinstance(prism_core.to_numpy(np.arange(2.0)), np.ndarray)


def test_suggestions_name_real_prism_ops() -> None:
    ops = set(CATALOGUE)
    for target in (*_NUMPY_RENAMES.values(), *_TORCH_RENAMES.values()):
        assert ALIASES.get(target, target) in ops, target
    assert framework_op("numpy.concatenate") == "concat"
    assert framework_op("torch.cat") == "concat"
    assert framework_op("jax.numpy.linalg.svd") == "linalg.svd"
    assert framework_op("numpy.cumsum") == "cumulative_sum"
    assert framework_op("torch.inverse") == "linalg.inv"
    assert framework_op("numpy.histogram") == "histogram"  # NumPy's, Prism's too (issue 34)
    assert framework_op("numpy.arctan2") == "atan2"
    assert framework_op("numpy.gradient") is None
    assert framework_op("numpy.random.normal") is None  # PRISM007's


def test_framework_dtypes_map_to_prisms() -> None:
    import prism_core

    assert framework_dtype("torch.float") == (True, "float32")  # torch's float is 32-bit
    assert framework_dtype("torch.long") == (True, "int64")
    assert framework_dtype("numpy.double") == (True, "float64")
    assert framework_dtype("numpy.longdouble") == (True, None)  # Prism has none
    assert framework_dtype("numpy.dtype") == (True, "dtype")
    assert framework_dtype("numpy.ndarray") == (False, None)
    from prism_core.lint.names import _NUMPY_DTYPES, _TORCH_DTYPES

    for name in {*_NUMPY_DTYPES.values(), *_TORCH_DTYPES.values()} - {None}:
        assert isinstance(getattr(prism_core, str(name)), prism_core.DType), name


# -- the inference of Prism arrays ----------------------------------------------------------------

INFERRED = [
    ("a name bound to an op's result", "x = prism.exp(v)\ny = x * 2", [(2, "PRISM004")]),
    ("an op's result directly", "y = prism.sum(v) / 3", [(1, "PRISM004")]),
    (
        "the module imported as anything",
        "import prism_core as pr\ny = pr.exp(v) - 1",
        [(2, "PRISM004")],
    ),
    (
        "a namespace import",
        "from prism_core import linalg\ny = linalg.inv(m) @ m",
        [(2, "PRISM004")],
    ),
    (
        "a from-import of an op",
        "from prism_core.linalg import inv\ny = inv(m) + 1",
        [(2, "PRISM004")],
    ),
    (
        "a submodule import",
        "import prism_core.linalg as la\ny = la.solve(a, b) * 2",
        [(2, "PRISM004")],
    ),
    ("an op's old name", "y = prism.matrix_multiply(a, b) + 1", [(1, "PRISM004")]),
    ("random ops", "y = prism.random.normal((3,), seed=1) * 2", [(1, "PRISM004")]),
    ("unpacked tuple ops", "u, s, vh = prism.linalg.svd(m)\ny = u @ vh", [(2, "PRISM004")]),
    (
        "results of arithmetic on arrays",
        "x = prism.exp(v)\ny = x * 2\nz = y + 1",
        [(2, "PRISM004"), (3, "PRISM004")],
    ),
    (
        "rebinding to arrays only",
        "x = prism.ones(3)\nx = x * 2\nz = x + 1",
        [(2, "PRISM004"), (3, "PRISM004")],
    ),
    ("a walrus", "if (n := prism.max(v)) is not None:\n    y = n + 1", [(2, "PRISM004")]),
    (
        "a conditional of arrays",
        "y = (prism.exp(v) if c else prism.ones(3)) - 1",
        [(1, "PRISM004")],
    ),
    ("a scalar on the left", "y = 1 - prism.exp(v)", [(1, "PRISM004")]),
    ("a unary minus of an array", "y = -prism.exp(v) * 2", [(1, "PRISM004")]),
]
NOT_INFERRED = [
    ("a plain parameter", "def f(x, y):\n    return x * y"),
    ("a name also bound to something else", "x = prism.exp(v)\nx = x.tolist()\ny = x * 2"),
    ("a loop variable", "for x in prism.exp(v):\n    y = x * 2"),
    ("a global read inside a function", "X = prism.ones(3)\ndef f():\n    return X * 2"),
    (
        "a name rebound through nonlocal",
        "def f():\n    x = prism.ones(3)\n    def g():\n        nonlocal x\n        x = 1\n"
        "    return x * 2",
    ),
    (
        "a name rebound through global",
        "x = prism.ones(3)\ndef g():\n    global x\n    x = 1\ny = x * 2",
    ),
    ("a tuple op's tuple", "r = prism.linalg.svd(m)\ny = r * 2"),
    ("what to_numpy gives", "a = prism.to_numpy(prism.exp(v))\ny = a * 2"),
    ("string formatting", "x = prism.exp(v)\ny = '%s' % x\nz = 'a' + 'b'"),
    ("subscripts and attributes", "x = prism.exp(v)\ny = x[0] * 2 + x.T * 3 + x.sum() * 4"),
    ("a comprehension variable shadowing", "x = prism.exp(v)\ny = [x * 2 for x in range(3)]"),
    ("other modules' functions", "import mylib\ny = mylib.exp(v) * 2"),
    ("comparisons and floor division", "x = prism.exp(v)\ny = x // 2\nz = x > 0"),
    ("a name bound by with/except", "with prism.device('cpu') as x:\n    y = x * 2"),
    ("a name only ever augmented", "__doc__ += 'more'\n__doc__ *= 2"),
    ("names bound only to each other", "def f():\n    a = b * 2\n    b = a + 1"),
]


@pytest.mark.parametrize(("why", "body", "expected"), INFERRED, ids=[c[0] for c in INFERRED])
def test_what_the_inference_calls_an_array(
    why: str, body: str, expected: list[tuple[int, str]]
) -> None:
    header = "import prism_core as prism\n" if "import prism_core" not in body else ""
    offset = 1 if header else 0
    got = [(line - offset, code) for line, code in found(header + body)]
    assert got == expected, why


@pytest.mark.parametrize(("why", "body"), NOT_INFERRED, ids=[c[0] for c in NOT_INFERRED])
def test_what_the_inference_does_not_call_an_array(why: str, body: str) -> None:
    assert codes("import prism_core as prism\n" + body) == [], why


def test_a_closure_sees_its_functions_arrays() -> None:
    source = """\
        import prism_core as prism
        def f(v):
            x = prism.exp(v)
            def g():
                return x * 2
            return g
    """
    assert found(source) == [(5, "PRISM004")]


@pytest.mark.parametrize(
    "annotation",
    [
        "np.ndarray",
        "npt.NDArray[np.float64]",
        "Optional[torch.Tensor]",
        "torch.Tensor | None",
        "'np.ndarray'",
        "Tensor",
    ],
)
def test_parameters_annotated_with_array_types_are_arrays(annotation: str) -> None:
    source = f"""\
        from typing import Optional, TYPE_CHECKING
        from torch import Tensor  # noqa: PRISM001
        if TYPE_CHECKING:
            import numpy as np
            import numpy.typing as npt
            import torch
        def f(x: {annotation}, y):
            return x - y
    """
    assert found(source) == [(8, "PRISM004")]


def test_array_types_name_the_projects_own_annotations() -> None:
    source = "from mypkg.types import Array\ndef f(x: Array, y: Arr2):\n    return x * 2 + y * 2\n"
    assert codes(source) == []
    config = LintConfig(array_types=("mypkg.types.Array", "Arr2"))
    assert found(source, config) == [(3, "PRISM004"), (3, "PRISM004"), (3, "PRISM004")]


def test_class_bodies_and_methods_have_their_own_scopes() -> None:
    source = """\
        import prism_core as prism
        class C:
            x = prism.ones(3)
            y = x * 2
            def m(self):
                return x * 2
    """
    assert found(source) == [(4, "PRISM004")]  # in m, x is not the class attribute


# -- the rules ------------------------------------------------------------------------------------


def test_framework_imports_and_where_they_are_allowed() -> None:
    source = """\
        import numpy as np
        import numpy.linalg
        import torch.nn as nn, os
        from numpy import (
            pi, arange,
        )
        from numpy.typing import NDArray
        from . import numpy
        import numpyro
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            import cupy
    """
    assert found(source) == [
        (1, "PRISM001"),
        (2, "PRISM001"),
        (3, "PRISM001"),
        (4, "PRISM001"),
        (7, "PRISM001"),
    ]
    assert found(source, LintConfig(allowed_modules=("numpy.typing", "torch"))) == [
        (1, "PRISM001"),
        (2, "PRISM001"),
        (4, "PRISM001"),
    ]


def test_framework_calls_name_the_prism_op() -> None:
    findings = lint_source(
        "import numpy as np\nfrom torch import cat\ny = np.std(x, ddof=1)\nz = cat([a, b])\n"
        "w = np.gradient(x)\nv = np.linalg.svd(m)\n",
        config=LintConfig(select=frozenset({"PRISM002"})),
    )
    assert [(f.line, f.message) for f in findings] == [
        (3, "np.std() calls numpy.std: use prism.std() (NumPy's ddof= is correction=)"),
        (4, "cat() calls torch.cat: use prism.concat()"),
        (6, "np.linalg.svd() calls numpy.linalg.svd: use prism.linalg.svd()"),
    ]


def test_a_local_name_is_not_the_framework() -> None:
    source = """\
        import numpy as np
        def f(np):
            return np.sum(x)
        def g():
            from numpy import sum
            return sum(x)
        def h(sum):
            return sum(x)
    """
    assert found(source) == [(1, "PRISM001"), (5, "PRISM001"), (6, "PRISM002")]


def test_an_optional_import_is_still_the_framework() -> None:
    source = """\
        try:
            import cupy as cp
        except ImportError:
            cp = None
        y = cp.sum(x)
    """
    assert found(source) == [(2, "PRISM001"), (5, "PRISM002")]


def test_conversions() -> None:
    source = """\
        import prism_core as prism
        a = t.numpy()
        b = t.cpu()
        c = t.item()
        d = t.item(3)
        e = float(prism.max(v))
        f = int(n)
        x = prism.exp(v)
        g = x.tolist()
        h = lst.tolist()
        i = complex(x)
        def k(float):
            return float(x)
    """
    assert found(source) == [
        (2, "PRISM003"),
        (3, "PRISM003"),
        (4, "PRISM003"),
        (6, "PRISM003"),
        (9, "PRISM003"),
        (11, "PRISM003"),
    ]


def test_augmented_assignment_is_reported_not_fixed() -> None:
    findings = lint_source(
        "import prism_core as prism\nx = prism.ones(3)\nx += 1\nx -= y\nx //= 2\n"
    )
    assert [(f.line, f.code, f.fixable) for f in findings] == [
        (3, "PRISM004", False),
        (4, "PRISM004", False),
    ]
    assert "in place" in findings[0].message


def test_dtypes() -> None:
    source = """\
        import numpy as np
        import torch
        import prism_core as prism
        from numpy import float32
        a = prism.zeros(3, dtype=np.float32)
        b = np.zeros(3, dtype=np.float64)
        c = torch.ones(3, dtype=torch.bfloat16)
        d = np.float32(1.5)
        e = prism.ones(2, dtype=float32)
        f = np.dtype("float32")
        g = prism.zeros(3, dtype=np.longdouble)
        h = x.dtype == np.int64
    """
    findings = lint_source(
        textwrap.dedent(source), config=LintConfig(select=frozenset({"PRISM005"}))
    )
    assert [(f.line, f.column, f.fixable) for f in findings] == [
        (5, 26, True),
        (6, 23, False),  # NumPy's own function: no Prism dtype there
        (7, 25, False),
        (8, 5, False),  # a scalar constructor
        (9, 25, True),
        (10, 5, False),
        (11, 26, False),  # Prism has no longdouble
        (12, 16, False),
    ]
    assert findings[0].message == "np.float32 is NumPy's data type: use prism.float32"
    assert findings[2].message == "torch.bfloat16 is torch's data type: use prism.bfloat16"
    assert "Prism has no longdouble" in findings[6].message


def test_device_placement() -> None:
    source = """\
        import torch
        a = t.cuda()
        b = t.to("cuda:1")
        c = t.to(device)
        d = t.to(self.device)
        e = t.to(torch.device("mps"))
        f = t.to(dtype=x, device=d)
        g = q.to("m")
        h = q.to(unit)
        i = torch.zeros(3, device="cuda")
        j = torch.cuda.is_available()
    """
    assert found(source, LintConfig(select=frozenset({"PRISM006"}))) == [
        (2, "PRISM006"),
        (3, "PRISM006"),
        (4, "PRISM006"),
        (5, "PRISM006"),
        (6, "PRISM006"),
        (6, "PRISM006"),  # torch.device("mps") itself
        (7, "PRISM006"),
        (10, "PRISM006"),
        (11, "PRISM006"),
    ]


def test_random_numbers_suggest_prisms_where_there_is_one() -> None:
    findings = lint_source(
        "import numpy as np\nimport torch\na = np.random.normal(size=3)\nb = torch.rand(3)\n"
        "c = np.random.default_rng(0)\nd = torch.manual_seed(0)\n",
        config=LintConfig(select=frozenset({"PRISM007"})),
    )
    assert [f.line for f in findings] == [3, 4, 5, 6]
    assert "use prism.random.normal(shape, mean, std, seed=...)" in findings[0].message
    assert "Prism's random ops (prism.random.normal)" in findings[1].message


def test_type_checks() -> None:
    source = """\
        import numpy as np
        import torch
        a = isinstance(x, np.ndarray)
        b = isinstance(x, (int, torch.Tensor))
        c = issubclass(t, np.floating)
        d = type(x) is np.ndarray
        e = hasattr(x, "numpy")
        f = hasattr(x, "shape")
        g = isinstance(x, int)
    """
    assert found(source, LintConfig(select=frozenset({"PRISM008"}))) == [
        (3, "PRISM008"),
        (4, "PRISM008"),
        (5, "PRISM008"),
        (6, "PRISM008"),
        (7, "PRISM008"),
    ]


def test_positions_are_one_based_character_columns_sorted() -> None:
    findings = lint_source("s = 'ΔΔ'; import numpy as np\nimport torch; import cupy\n")
    assert [(f.line, f.column, f.code) for f in findings] == [
        (1, 18, "PRISM001"),  # two characters of four bytes before: counted as characters
        (2, 8, "PRISM001"),
        (2, 22, "PRISM001"),
    ]
    assert str(findings[0]).startswith("<string>:1:18: PRISM001 `import numpy` ties")


# -- noqa -----------------------------------------------------------------------------------------


def test_noqa_silences_its_line_as_flake8_reads_it() -> None:
    source = """\
        import numpy as np  # noqa
        import torch  # noqa: PRISM001
        import cupy  # noqa: E501
        import jax  # NOQA:PRISM002, PRISM001
        x = "# noqa"; import mlx
        import numpy  # noqa: PRISM004
    """
    assert found(source) == [(3, "PRISM001"), (5, "PRISM001"), (6, "PRISM001")]


# -- configuration --------------------------------------------------------------------------------


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_nearest_pyproject_with_the_table_configures(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """\
        [tool.prism.lint]
        ignore = ["PRISM00"]
        select = ["PRISM001", "PRISM002"]
        allowed-modules = ["numpy.typing"]
        array-types = ["mypkg.Array"]
        exclude = ["build"]
        [tool.prism.lint.per-file-ignores]
        "io/*.py" = ["PRISM001"]
        """,
    )
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'pkg'\n")  # no table: skipped
    assert find_config(tmp_path / "pkg" / "src") == tmp_path / "pyproject.toml"
    config = load_config([tmp_path / "pkg"])
    assert config.source == tmp_path / "pyproject.toml"
    assert config.select == {"PRISM001", "PRISM002"}
    assert config.ignore == {f"PRISM00{i}" for i in range(1, 9)}
    assert config.allowed_modules == ("numpy.typing",)
    assert config.array_types == ("mypkg.Array",)
    assert config.codes_for(tmp_path / "io" / "read.py") == set()
    assert config.excluded(tmp_path / "x" / "build")


def test_per_file_ignores_and_exclude_apply_to_paths(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """\
        [tool.prism.lint]
        exclude = ["vendored", "gen/*.py"]
        [tool.prism.lint.per-file-ignores]
        "io/*.py" = ["PRISM001", "PRISM002"]
        "test_*.py" = ["PRISM007"]
        """,
    )
    write(tmp_path / "io" / "read.py", "import numpy as np\nx = np.asarray(y)\n")
    write(tmp_path / "core.py", "import numpy as np\n")
    write(tmp_path / "tests" / "test_core.py", "import numpy as np\nnp.random.seed(0)\n")
    write(tmp_path / "vendored" / "lib.py", "import torch\n")
    write(tmp_path / "gen" / "out.py", "import torch\n")
    report = lint_paths([tmp_path])
    got = [(Path(f.path).name, f.line, f.code) for f in report.findings]
    assert got == [("core.py", 1, "PRISM001"), ("test_core.py", 1, "PRISM001")]
    assert report.files == 3 and report.exit_status == 1


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ("ignor = ['PRISM001']", "unknown key 'ignor' (did you mean 'ignore'?)"),
        ("select = 'PRISM001'", "select must be a list of strings, not 'PRISM001'"),
        ("select = ['PRISM099']", "'PRISM099' is not a code or a prefix of codes"),
        ("allowed-modules = ['numpy typing']", "'numpy typing' is not a dotted module path"),
        ("per-file-ignores = ['a']", "per-file-ignores must be a table of glob = [codes]"),
        ("[tool.prism.lint.per-file-ignores]\n'a.py' = 'PRISM001'", "must be a list of codes"),
    ],
)
def test_configuration_errors_name_the_file_key_and_what_is_accepted(
    tmp_path: Path, table: str, message: str
) -> None:
    path = write(tmp_path / "pyproject.toml", "[tool.prism.lint]\n" + table + "\n")
    with pytest.raises(LintConfigError) as info:
        load_config([tmp_path])
    assert str(path) in str(info.value) and message in str(info.value)


def test_invalid_toml_is_located(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.prism.lint]\nselect = [\n")
    with pytest.raises(LintConfigError, match=r"pyproject.toml: not valid TOML: "):
        load_config([tmp_path])


def test_a_pyproject_without_prism_is_not_parsed(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "this is [not toml\n")
    assert find_config(tmp_path) is None or find_config(tmp_path) != tmp_path / "pyproject.toml"


# -- files ----------------------------------------------------------------------------------------


def test_files_that_do_not_parse_are_problems_and_the_others_are_linted(tmp_path: Path) -> None:
    write(tmp_path / "a.py", "import numpy\n")
    write(tmp_path / "b.py", "def f(:\n    pass\n")
    (tmp_path / "c.py").write_bytes(b"x = '\xff'\n")  # not UTF-8, no coding declaration
    (tmp_path / "d.py").write_bytes(b"x = 1\0\n")
    report = lint_paths([tmp_path], config=LintConfig())
    assert [(Path(f.path).name, f.code) for f in report.findings] == [("a.py", "PRISM001")]
    problems = [(Path(p.file).name, p.line, p.message.split(":")[0]) for p in report.problems]
    assert problems == [
        ("b.py", 1, "cannot parse"),
        ("c.py", 1, "cannot parse"),  # invalid or missing encoding declaration
        ("d.py", 1, "cannot parse"),
    ]
    assert report.exit_status == 2


def test_source_encodings_are_read_as_python_reads_them(tmp_path: Path) -> None:
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\ns = '\xe9\xe9'; import numpy\n")
    bom = tmp_path / "bom.py"
    bom.write_bytes("\ufeffimport torch\n".encode())
    report = lint_paths([latin, bom], config=LintConfig())
    assert [(Path(f.path).name, f.line, f.column) for f in report.findings] == [
        ("bom.py", 1, 8),
        ("latin.py", 2, 18),
    ]


@pytest.mark.timeout(60)
def test_only_regular_files_are_read_each_other_path_is_a_skip(tmp_path: Path) -> None:
    """A FIFO named .py (reading it would wait for a writer forever), a link to /dev/zero
    (endless) and a file over the size limit are skipped with the reason; the rest is linted."""
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    big = tmp_path / "big.py"
    with big.open("wb") as f:
        f.truncate(runner.MAX_SOURCE_BYTES + 1)  # sparse: no disk used
    (tmp_path / "ok.py").write_text("x = 1\n", encoding="utf-8")
    report = lint_paths([tmp_path], config=LintConfig())
    assert report.files == 4
    problems = {Path(p.file).name: p.message for p in report.problems}
    assert problems == {
        "pipe.py": "skipped: not a regular file (a FIFO)",
        "zero.py": "skipped: not a regular file (a character device)",
        "big.py": "skipped: 16,777,217 bytes, over the 16 MiB a Python source file is linted up to",
    }
    assert lint_paths([tmp_path / "pipe.py"], config=LintConfig()).problems[0].message == (
        "skipped: not a regular file (a FIFO)"
    )


def test_deep_nesting_is_a_problem_not_a_crash(tmp_path: Path) -> None:
    write(
        tmp_path / "deep.py",
        "import prism_core as prism\nx = prism.exp(v)\ny = " + " + ".join(["x"] * 5000) + "\n",
    )
    report = lint_paths([tmp_path], config=LintConfig())
    assert report.findings or report.problems  # either linted or located, never a traceback
    for problem in report.problems:
        assert problem.message.startswith("cannot")


# -- the command line -----------------------------------------------------------------------------


@pytest.mark.timeout(HANG_GUARD_S)
def test_cli_prints_sorted_findings_and_exits_1(tmp_path: Path) -> None:
    write(tmp_path / "b.py", "import torch\nimport numpy as np\n")
    write(tmp_path / "a.py", "x = 1\nimport cupy\n")
    result = run_cli("a.py", "b.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert result.stdout.splitlines() == [
        "a.py:2:8: PRISM001 `import cupy` ties this code to CuPy: use Prism's ops "
        "(import prism_core as prism)",
        "b.py:1:8: PRISM001 `import torch` ties this code to torch: use Prism's ops "
        "(import prism_core as prism)",
        "b.py:2:8: PRISM001 `import numpy` ties this code to NumPy: use Prism's ops "
        "(import prism_core as prism)",
    ]
    assert result.stderr == "prism lint: 3 findings, 2 files checked\n"
    same = run_cli("a.py", "b.py", cwd=tmp_path, module="prism_core.lint")
    assert (same.returncode, same.stdout) == (result.returncode, result.stdout)


@pytest.mark.timeout(HANG_GUARD_S)
def test_cli_json_select_ignore_and_a_clean_run(tmp_path: Path) -> None:
    write(
        tmp_path / "m.py", "import numpy as np\nimport prism_core as prism\ny = prism.exp(x) * 2\n"
    )
    result = run_cli("--json", "--select", "PRISM004", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout) == [
        {
            "file": "m.py",
            "line": 3,
            "column": 5,
            "code": "PRISM004",
            "name": "array-operator",
            "message": "Python operator `*` on a Prism array: use prism.multiply(...)",
            "fixable": True,
        }
    ]
    clean = run_cli("--ignore", "PRISM001,PRISM004", "m.py", cwd=tmp_path)
    assert (clean.returncode, clean.stdout) == (0, "")
    assert clean.stderr == "prism lint: 0 findings, 1 file checked\n"


@pytest.mark.timeout(HANG_GUARD_S)
def test_cli_usage_errors_exit_2_without_a_traceback(tmp_path: Path) -> None:
    for args, message in [
        ((), "give at least one PATH"),
        (("missing.py",), "'missing.py': no such file or directory"),
        (("--select", "PRISM9", "."), "--select: 'PRISM9' is not a code"),
        (("--config", "nope.toml", "."), "--config: 'nope.toml' is not a file"),
    ]:
        result = run_cli(*args, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        assert message in result.stderr and "Traceback" not in result.stderr


@pytest.mark.timeout(HANG_GUARD_S)
def test_cli_reports_a_file_that_does_not_parse_on_one_line_and_lints_the_rest(
    tmp_path: Path,
) -> None:
    write(tmp_path / "bad.py", "x = (1,\ny = 2\n")
    write(tmp_path / "good.py", "import torch\n")
    result = run_cli(".", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout.startswith("good.py:1:8: PRISM001")
    lines = result.stderr.splitlines()
    assert re.fullmatch(r"bad\.py:1:5: cannot parse: .+", lines[0]), lines
    assert lines[1] == "prism lint: 1 finding, 2 files checked, 1 could not be linted"


@pytest.mark.timeout(HANG_GUARD_S)
def test_cli_reads_the_configuration_and_lists_codes(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.prism.lint]\nignore = ["PRISM001"]\n')
    write(tmp_path / "src" / "m.py", "import numpy as np\ny = np.sum(x)\n")
    result = run_cli("src", cwd=tmp_path)
    assert result.returncode == 1
    assert result.stdout == "src/m.py:2:5: PRISM002 np.sum() calls numpy.sum: use prism.sum()\n"
    assert result.stderr.endswith("configuration: pyproject.toml\n")
    listed = run_cli("--list-codes", cwd=tmp_path)
    assert listed.returncode == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [c.code for c in CODES]


@pytest.mark.timeout(HANG_GUARD_S)
def test_linting_imports_no_array_library(tmp_path: Path) -> None:
    write(
        tmp_path / "m.py",
        "import numpy as np\nimport prism_core as prism\ny = prism.exp(x) * np.pi\n",
    )
    code = (
        "import sys, json; from prism_core.lint import lint_paths; "
        "r = lint_paths(['m.py']); "
        "print(json.dumps([len(r.findings), [m for m in ('numpy', 'torch', 'yaml', 'pluggy') "
        "if m in sys.modules]]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True,
        timeout=HANG_GUARD_S,
    )  # fmt: skip
    assert json.loads(out.stdout) == [2, []]


# -- real code ------------------------------------------------------------------------------------


def test_a_real_third_party_module() -> None:
    """scipy/signal/_waveforms.py of SciPy 1.17.1 (BSD-3-Clause; copied unchanged below a
    header with its licence): classic NumPy code, not written here.  Every finding was reviewed
    for false positives (docs/lint.md, "Tested on real code"); the lines are the original's."""
    path = DATA / "third_party" / "scipy_signal_waveforms.py"
    text = path.read_text(encoding="utf-8")
    header = text.split("# --- end of header: the original file follows ---\n", 1)[0]
    offset = header.count("\n") + 1
    findings = lint_source(text)
    got = [(f.line - offset, f.code, f.message.split(":")[0]) for f in findings]
    assert got == THIRD_PARTY


THIRD_PARTY: list[tuple[int, str, str]] = [
    (7, "PRISM001", "`import numpy` ties this code to NumPy"),
    (8, "PRISM001", "`from numpy import asarray, zeros, place, ...` ties this code to NumPy"),
    (55, "PRISM002", "asarray() calls numpy.asarray"),
    (55, "PRISM002", "asarray() calls numpy.asarray"),
    (56, "PRISM002", "asarray() calls numpy.asarray"),
    (57, "PRISM002", "asarray() calls numpy.asarray"),
    (58, "PRISM002", "zeros() calls numpy.zeros"),
    (133, "PRISM002", "asarray() calls numpy.asarray"),
    (133, "PRISM002", "asarray() calls numpy.asarray"),
    (134, "PRISM002", "asarray() calls numpy.asarray"),
    (135, "PRISM002", "asarray() calls numpy.asarray"),
    (136, "PRISM002", "zeros() calls numpy.zeros"),
    (224, "PRISM002", "log() calls numpy.log"),
    (234, "PRISM002", "sqrt() calls numpy.sqrt"),
    (234, "PRISM002", "log() calls numpy.log"),
    (238, "PRISM002", "exp() calls numpy.exp"),
    (239, "PRISM002", "cos() calls numpy.cos"),  # cos, sin: Prism ops
    (240, "PRISM002", "sin() calls numpy.sin"),
    (418, "PRISM002", "np.exp() calls numpy.exp"),
    (418, "PRISM002", "np.cos() calls numpy.cos"),
    (428, "PRISM002", "asarray() calls numpy.asarray"),
    (450, "PRISM002", "log() calls numpy.log"),
    (464, "PRISM002", "log() calls numpy.log"),
    (464, "PRISM002", "np.abs() calls numpy.abs"),
    (568, "PRISM002", "cos() calls numpy.cos"),
    (675, "PRISM002", "zeros() calls numpy.zeros"),
]


@pytest.mark.timeout(HANG_GUARD_S)
def test_an_installed_scientific_package_lints_without_problems() -> None:
    """Every file of the installed scipy.signal parses and lints (no file is a problem, no
    internal error), and nothing in it is taken for a Prism array: it never calls Prism, so
    PRISM004 may only come from parameters annotated as NumPy arrays."""
    scipy = pytest.importorskip("scipy", reason="scipy is not installed (the scipy plugin's)")
    signal = Path(scipy.__file__).parent / "signal"
    report = lint_paths([signal], config=LintConfig())
    assert report.problems == () and report.files > 20
    assert {f.code for f in report.findings} >= {"PRISM001", "PRISM002", "PRISM005"}
    for finding in report.findings:
        if finding.code == "PRISM004":
            source = Path(finding.path).read_text(encoding="utf-8")
            assert "np.ndarray" in source, finding


def test_one_type_check_is_one_finding() -> None:
    findings = lint_source(
        "import numpy as np\nfrom torch.types import _Number\n"
        "a = isinstance(v, (np.integer, np.floating, np.bool_))\nb = isinstance(v, _Number)\n",
        config=LintConfig(ignore=frozenset({"PRISM001"})),
    )
    assert [(f.line, f.column, f.code) for f in findings] == [(3, 20, "PRISM008")]
    assert "numpy.integer, numpy.floating, numpy.bool_ branches" in findings[0].message


@pytest.mark.timeout(HANG_GUARD_S)
def test_from_prism_core_import_lint_is_a_plain_submodule_import() -> None:
    """``prism_core.lint`` is a submodule, not an op name to look up (which would load the
    dispatch machinery)."""
    code = (
        "import sys; from prism_core import lint; "
        "print(lint.__name__, 'prism_core.kernel.dispatch.registry' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        timeout=HANG_GUARD_S,
    )  # fmt: skip
    assert out.stdout.split() == ["prism_core.lint", "False"]
