"""``prism lint --fix``: operators on Prism arrays become Prism ops, framework dtypes given to
Prism ops become Prism's, and nothing else in the file changes.

The rewrites are checked three ways: on the text (exactly what is written, layout kept), on
values (random arithmetic expressions computed before and after the rewrite agree, by
hypothesis), and on a real module with its real test, fixed by the real command line and then
tested by pytest in a subprocess.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prism_core.lint import LintConfig, fix_paths, fix_source, lint_source

#: A guard against a hung process, not a performance expectation.
HANG_GUARD_S = 300


def fixed(source: str, config: LintConfig | None = None) -> str:
    result = fix_source(textwrap.dedent(source), config=config)
    again = fix_source(result.text, config=config)
    assert (again.text, again.fixes) == (result.text, 0), "fixing a fixed file changes nothing"
    return result.text


def test_operators_become_ops_and_the_rest_stays_as_it_was() -> None:
    source = """\
        import prism_core as pr


        def f(v):  # a comment
            x = pr.exp(v)
            y = x * 2 + 1   # odd spacing kept around
            return (x - y) / 3, x @ y, x ** 2, 2 // 3
    """
    assert fixed(source) == textwrap.dedent(
        """\
        import prism_core as pr


        def f(v):  # a comment
            x = pr.exp(v)
            y = pr.add(pr.multiply(x, 2), 1)   # odd spacing kept around
            return pr.divide(pr.subtract(x, y), 3), pr.matmul(x, y), pr.power(x, 2), 2 // 3
        """
    )


def test_operands_keep_their_text() -> None:
    source = """\
        import prism_core as prism
        x = prism.exp(v)
        y = (x
             + g(a,
                 b))
        z = (n + 1) * x
        w = x * (n + 1)
    """
    assert fixed(source).splitlines()[2:] == [
        "y = (prism.add(x, g(a,",
        "         b)))",
        "z = prism.multiply(n + 1, x)",
        "w = prism.multiply(x, n + 1)",
    ]


def test_what_is_not_rewritten() -> None:
    source = """\
        import prism_core as prism
        x = prism.exp(v)
        a = f"{x + 1}"
        b = (x  # why
             - 1)
        x += 1
        c = x * 2  # noqa: PRISM004
        d = x * 3  # noqa
    """
    assert fixed(source) == textwrap.dedent(source)
    findings = lint_source(textwrap.dedent(source))
    assert [(f.line, f.fixable) for f in findings] == [(3, False), (4, False), (6, False)]


def test_the_import_is_added_after_the_docstring_and_imports() -> None:
    source = '''\
        #!/usr/bin/env python
        """A module."""
        from __future__ import annotations

        import os
        from prism_core import exp

        y = exp(v) * 2
    '''
    assert fixed(source) == textwrap.dedent(
        '''\
        #!/usr/bin/env python
        """A module."""
        from __future__ import annotations

        import os
        from prism_core import exp
        import prism_core as prism

        y = prism.multiply(exp(v), 2)
        '''
    )


def test_the_added_import_avoids_a_name_in_use() -> None:
    source = "from prism_core import exp\nprism = 'a prism'\ny = exp(v) * 2\n"
    assert fixed(source) == (
        "from prism_core import exp\nimport prism_core\nprism = 'a prism'\n"
        "y = prism_core.multiply(exp(v), 2)\n"
    )
    taken = "from prism_core import exp\nprism = prism_core = 1\ny = exp(v) * 2\n"
    assert fixed(taken) == taken  # no name left for Prism: reported, not fixed


def test_a_module_alias_shadowed_somewhere_is_not_used() -> None:
    source = """\
        import prism_core as pr
        def f(pr):
            return pr
        y = pr.exp(v) * 2
    """
    assert fixed(source).splitlines()[0:2] == [
        "import prism_core as pr",
        "import prism_core as prism",
    ]
    assert fixed(source).splitlines()[-1] == "y = prism.multiply(pr.exp(v), 2)"


def test_the_import_goes_before_code_that_shares_a_line_with_an_import() -> None:
    # After `from prism_core import exp; y = ...` the import would come too late to run.
    assert fixed("from prism_core import exp; y = exp(v) - 1\n") == (
        "import prism_core as prism\nfrom prism_core import exp; y = prism.subtract(exp(v), 1)\n"
    )
    future = "from __future__ import annotations; from prism_core import exp; y = exp(v) - 1\n"
    assert fixed(future) == future  # no free line after the __future__ import: not fixed
    late = '"""Doc."""\ny = prism_core.exp(v) * 2\nimport prism_core\n'
    assert (
        fixed(late)
        == '"""Doc."""\ny = prism_core.multiply(prism_core.exp(v), 2)\nimport prism_core\n'
    )


def test_dtypes_of_prism_ops_become_prisms() -> None:
    source = """\
        import numpy as np
        import torch
        import prism_core as prism
        a = prism.zeros(3, dtype=np.float32)
        b = prism.asarray(x, dtype=torch.bfloat16)
        c = np.zeros(3, dtype=np.float32)
        d = prism.zeros(3, dtype=np.longdouble)
    """
    assert fixed(source).splitlines()[3:] == [
        "a = prism.zeros(3, dtype=prism.float32)",
        "b = prism.asarray(x, dtype=prism.bfloat16)",
        "c = np.zeros(3, dtype=np.float32)",
        "d = prism.zeros(3, dtype=np.longdouble)",
    ]


def test_only_the_selected_codes_are_fixed() -> None:
    source = (
        "import numpy as np\nimport prism_core as prism\ny = prism.ones(2, dtype=np.int8) * 2\n"
    )
    only_dtypes = LintConfig(select=frozenset({"PRISM005"}))
    assert fixed(source, only_dtypes).endswith("y = prism.ones(2, dtype=prism.int8) * 2\n")
    assert fixed(source).endswith("y = prism.multiply(prism.ones(2, dtype=prism.int8), 2)\n")


def test_line_endings_and_non_ascii_text_are_kept() -> None:
    source = "import prism_core as prism\r\ns = 'ΔΔ'; y = prism.exp(v) * 2  # é\r\n"
    assert fix_source(source).text == (
        "import prism_core as prism\r\ns = 'ΔΔ'; y = prism.multiply(prism.exp(v), 2)  # é\r\n"
    )
    bare = "from prism_core import exp\r\ny = exp(v) * 2\r\n"
    assert fix_source(bare).text == (
        "from prism_core import exp\r\nimport prism_core as prism\r\n"
        "y = prism.multiply(exp(v), 2)\r\n"
    )


# -- values: the rewrite computes the same ----------------------------------------------------

_LEAVES = st.sampled_from(["x", "y", "2", "0.5", "3", "-1.5", "(x)", "prism.exp(y)"])


def _expressions() -> st.SearchStrategy[str]:
    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        binary = st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})" if t[1] == "**" else f"{t[0]} {t[1]} {t[2]}"
        )
        return binary | inner.map(lambda e: f"({e})") | inner.map(lambda e: f"-{e}")

    return st.recursive(_LEAVES, extend, max_leaves=8)


def _run(source: str, v: np.ndarray[Any, Any], w: np.ndarray[Any, Any]) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<fixed>", "exec"), namespace)
    with np.errstate(all="ignore"):
        return namespace["f"](v, w)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_expressions())
def test_fixed_code_computes_the_same_values(expression: str) -> None:
    source = (
        "import prism_core as prism\n\n"
        "def f(v, w):\n"
        "    x = prism.asarray(v)\n"
        "    y = prism.multiply(w, 1.0)\n"
        f"    return {expression}\n"
    )
    result = fix_source(source)
    v = np.array([0.5, 1.5, 2.0, 3.0])
    w = np.array([1.0, -2.0, 0.25, 4.0])
    before, after = _run(source, v, w), _run(result.text, v, w)
    if isinstance(before, int) and isinstance(after, int):
        # Integers only (``-((2 ** 3) ** (3 ** 3))``): Python's exact values, past any float.
        assert after == before
    else:
        np.testing.assert_allclose(after, before, rtol=1e-12, atol=0, equal_nan=True)
    if "x " in expression or "y " in expression:
        assert "prism." in result.text.split("return", 1)[1] or result.fixes == 0


# -- a real module, its real test, the real command line --------------------------------------

MODULE = '''\
"""Standardised scores, written with Prism's ops and a few Python operators."""

from __future__ import annotations

import prism_core as prism


def zscores(values, ddof=0):
    """(values - mean) / std, with the mean and the standard deviation of ``values``."""
    data = prism.asarray(values)
    centred = data - prism.mean(data)
    spread = prism.std(data, correction=ddof)
    return centred / spread


def weighted_energy(signal, weights):
    """The sum of w * x ** 2, halved."""
    x = prism.asarray(signal)
    return prism.sum(prism.asarray(weights) * x ** 2) / 2
'''

TEST = """\
import numpy as np

from scores import weighted_energy, zscores


def test_zscores() -> None:
    z = zscores([1.0, 2.0, 3.0, 4.0])
    expected = [-1.3416407865, -0.4472135955, 0.4472135955, 1.3416407865]
    np.testing.assert_allclose(np.asarray(z), expected)


def test_weighted_energy() -> None:
    assert float(weighted_energy([1.0, 2.0], [2.0, 0.5])) == 2.0
"""


@pytest.mark.timeout(HANG_GUARD_S)
def test_fix_a_real_module_then_its_test_still_passes(tmp_path: Path) -> None:
    (tmp_path / "scores.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "test_scores.py").write_text(TEST, encoding="utf-8")
    os.chmod(tmp_path / "scores.py", 0o640)
    env = {k: v for k, v in os.environ.items() if k not in ("PRISM_DEBUG", "PYTHONWARNINGS")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env=env,
            timeout=HANG_GUARD_S,
        )

    pytest_args = ("-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly")
    before = run(*pytest_args, "test_scores.py")
    assert before.returncode == 0, before.stdout + before.stderr

    lint = run("-m", "prism_core", "lint", "--select", "PRISM004", "scores.py")
    assert lint.returncode == 1 and lint.stdout.count("PRISM004") == 5, lint.stdout
    fix = run("-m", "prism_core", "lint", "--fix", "--select", "PRISM004", "scores.py")
    assert fix.returncode == 0, fix.stdout + fix.stderr
    assert fix.stderr.splitlines()[0] == "prism lint: fixed 5 findings in 1 file"
    text = (tmp_path / "scores.py").read_text(encoding="utf-8")
    assert "return prism.divide(centred, spread)" in text
    assert "centred = prism.subtract(data, prism.mean(data))" in text
    assert (
        "return prism.divide(prism.sum(prism.multiply(prism.asarray(weights), "
        "prism.power(x, 2))), 2)"
    ) in text
    assert text.splitlines()[:8] == MODULE.splitlines()[:8]  # the rest is untouched
    assert stat.S_IMODE(os.stat(tmp_path / "scores.py").st_mode) == 0o640
    assert list(tmp_path.glob(".scores.py.*")) == []  # no temporary file left

    after = run(*pytest_args, "test_scores.py")
    assert after.returncode == 0, after.stdout + after.stderr
    again = run("-m", "prism_core", "lint", "--fix", "--select", "PRISM004", "scores.py")
    assert again.returncode == 0 and again.stderr.startswith("prism lint: fixed 0 findings")


def test_fix_paths_leaves_a_file_that_does_not_parse_alone(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_bytes(b"import prism_core as prism\ny = prism.exp(v) * (\n")
    good = tmp_path / "good.py"
    good.write_text("import prism_core as prism\ny = prism.exp(v) * 2\n", encoding="utf-8")
    latin = tmp_path / "latin.py"
    latin.write_bytes(
        b"# -*- coding: latin-1 -*-\nimport prism_core as prism\ny = prism.exp(v) * 2  # \xe9\n"
    )
    summary = fix_paths([tmp_path], config=LintConfig())
    assert summary.fixes == 2
    assert sorted(Path(p).name for p in summary.files_changed) == ["good.py", "latin.py"]
    assert [Path(p.file).name for p in summary.problems] == ["bad.py"]
    assert bad.read_bytes() == b"import prism_core as prism\ny = prism.exp(v) * (\n"
    assert latin.read_bytes().endswith(b"y = prism.multiply(prism.exp(v), 2)  # \xe9\n")


def test_fix_paths_fixes_a_link_s_target_once_and_keeps_the_links(tmp_path: Path) -> None:
    target = tmp_path / "real" / "module.py"
    target.parent.mkdir()
    target.write_text("import prism_core as prism\ny = prism.exp(v) * 2\n", encoding="utf-8")
    links = tmp_path / "links"
    links.mkdir()
    for name in ("a.py", "b.py"):
        (links / name).symlink_to(target)
    summary = fix_paths([links], config=LintConfig())
    assert summary.fixes == 1  # one target, fixed once
    for name in ("a.py", "b.py"):
        assert (links / name).is_symlink() and (links / name).resolve() == target
    assert target.read_text(encoding="utf-8").endswith("y = prism.multiply(prism.exp(v), 2)\n")


def test_an_import_that_may_not_run_is_no_alias() -> None:
    source = """\
        from typing import TYPE_CHECKING
        from prism_core import exp
        if TYPE_CHECKING:
            import prism_core as pr
        y = exp(v) * 2
    """
    assert fixed(source).splitlines()[2] == "import prism_core as prism"
    assert fixed(source).splitlines()[-1] == "y = prism.multiply(exp(v), 2)"
