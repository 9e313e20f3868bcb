"""``benchmarks/code_shape.py``: its numbers agree with the files they count and with each other.

One run on this checkout checks consistency (no recorded values: the code keeps changing);
one on a small package written here checks that each detector finds what is planted in it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import prism_core

from .conftest import REPO

SCRIPT = REPO / "benchmarks" / "code_shape.py"


def _shape(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "shape.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--json", str(out), *args],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Code shape of prism_core")
    result: dict[str, Any] = json.loads(out.read_text())
    return result


def _line(root: Path, path: str, line: int) -> str:
    return (root / path).read_text().splitlines()[line - 1]


def _module_file(root: Path, module: str) -> Path:
    base = root.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


@pytest.mark.timeout(180)
def test_the_numbers_of_this_checkout_agree_with_its_files(tmp_path: Path) -> None:
    r = _shape(tmp_path)
    lines, kernel, total = r["lines"], r["lines"]["kernel"], r["lines"]["total"]

    files = [p for p in (REPO / "prism_core").rglob("*.py") if "__pycache__" not in p.parts]
    assert total["files"] == len(files)
    assert total["lines"] == sum(len(p.read_text().splitlines()) for p in files)
    assert 0 < total["nonblank"] < total["lines"]
    assert 0 < kernel["nonblank"] < kernel["lines"] < total["lines"]
    assert kernel["nonblank"] < total["nonblank"]
    assert kernel["lines"] == sum(g["lines"] for g in kernel["groups"])
    kernel_files = [f for g in kernel["groups"] for f in g["files"]]
    assert len(kernel_files) == len(set(kernel_files)) == kernel["files"]
    assert sum(u["lines"] for u in lines["units"].values()) == total["lines"]
    assert sum(u["files"] for u in lines["units"].values()) == total["files"]

    largest = lines["largest"]
    assert len(largest) == 5
    assert [m["lines"] for m in largest] == sorted((m["lines"] for m in largest), reverse=True)
    for m in largest:
        assert m["lines"] == len((REPO / m["path"]).read_text().splitlines())
    assert largest[0]["lines"] == max(len(p.read_text().splitlines()) for p in files)

    names = r["names"]
    assert names["all"] == len(prism_core.__all__)
    assert names["all_ops"] is not None
    assert 0 < names["dir_extra_ops"] <= names["all_ops_top_level"] <= names["all_ops"]
    assert names["dir_extra"] == names["dir_extra_ops"] + len(names["dir_extra_other"])

    cc = r["complexity"]
    assert 0 <= cc["count"] <= cc["total"]
    assert 0.0 <= cc["share"] <= 1.0
    assert cc["share"] == pytest.approx(cc["count"] / cc["total"])
    assert len(cc["functions"]) == cc["count"]
    for f in cc["functions"]:
        assert f["cc"] >= cc["limit"] == 11
        head = _line(REPO, f["path"], f["line"]).lstrip()
        assert head.startswith(("def ", "async def ")), f
        assert f["name"].rsplit(".", 1)[-1] in head

    any_ = r["any"]
    assert any_["nonblank"] == total["nonblank"]
    assert any_["per_kloc"] == pytest.approx(1000 * any_["uses"] / any_["nonblank"])
    pluggy = any_["pluggy"]
    assert pluggy["per_kloc"] == pytest.approx(1000 * pluggy["uses"] / pluggy["nonblank"])

    everything, runtime = r["cycles"]["all"], r["cycles"]["runtime"]
    assert everything["modules"] == runtime["modules"] == total["files"]
    assert runtime["imports"] < everything["imports"]  # the TYPE_CHECKING ones
    # Leaving imports out can only split components.
    assert runtime["modules_in_cycles"] <= everything["modules_in_cycles"]
    for c in (everything, runtime):
        assert c["modules_in_cycles"] == sum(len(scc) for scc in c["sccs"])
        assert c["largest_scc"] == (len(c["sccs"][0]) if c["sccs"] else 0)
        for scc in c["sccs"]:
            for module in scc:
                assert _module_file(REPO, module).is_file(), module

    private = r["private_imports"]
    assert private["count"] == len(private["imports"]) >= private["distinct"]
    for f in private["imports"]:
        assert f["name"].startswith("_") and not f["name"].startswith("__")
        # A name of the package's own __init__ (prism_core._LAZY) is taken from its part
        # "__init__.py".
        target_part = [*f["target"].split("."), "__init__.py"][1]
        assert f["importer"].split("/")[1] != target_part
        assert f["name"] in _line(REPO, f["importer"], f["line"])

    cells = r["mutable_cells"]
    assert cells["count"] == len(cells["cells"])
    for c in cells["cells"]:
        assert _line(REPO, c["path"], c["line"]).startswith(c["name"])
        for site in c["written_at"]:
            path, line = site.rsplit(":", 1)
            assert f"{c['name']}[" in _line(REPO, path, int(line))


PLANTED = {
    "__init__.py": """
        '''A planted package.'''
        from prism_core.alpha.one import visible

        __all__ = ["visible"]
        extra = 1

        def all_ops() -> dict[str, int]:
            return {"visible": 1, "ns.other": 2}
    """,
    "alpha/__init__.py": "",
    "alpha/one.py": """
        from typing import Any
        import typing

        from prism_core.beta import two

        _cell: list[Any] = [None]

        def _private() -> None:
            _cell[0] = two

        def visible(x: typing.Any) -> int:
            n = 0
            for i in range(x):
                if i == 1: n += 1
                if i == 2: n += 1
                if i == 3: n += 1
                if i == 4: n += 1
                if i == 5: n += 1
                if i == 6: n += 1
                if i == 7: n += 1
                if i == 8: n += 1
                if i == 9: n += 1
            return n
    """,
    "beta/__init__.py": "",
    "beta/two.py": """
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:
            from prism_core.alpha import one

        def use(m: "one") -> None:
            def inner() -> None:
                pass
    """,
    "gamma.py": """
        import prism_core.alpha.one as one

        def reach() -> None:
            from prism_core.alpha.one import _private

            one._cell[0] = _private
    """,
}


def _complexity_tool(name: str) -> str:
    """``name`` if this environment has it, else a skip saying so."""
    if name == "mccabe":
        pytest.importorskip("mccabe", reason="the mccabe package is not installed (the test extra)")
    elif shutil.which("ruff", path=str(Path(sys.executable).parent)) is None and not shutil.which(
        "ruff"
    ):
        pytest.skip("no ruff executable here (the dev extra installs it)")
    return name


@pytest.mark.timeout(180)
@pytest.mark.parametrize("tool", ["mccabe", "ruff"])
def test_each_detector_finds_what_is_planted(tmp_path: Path, tool: str) -> None:
    root = tmp_path / "tree"
    for name, text in PLANTED.items():
        path = root / "prism_core" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip())
    r = _shape(tmp_path, "--root", str(root), "--complexity", _complexity_tool(tool))

    assert r["lines"]["total"]["files"] == 6
    assert r["lines"]["kernel"]["files"] == 1  # __init__.py, a base module
    assert r["lines"]["largest"][0]["path"] == "prism_core/alpha/one.py"
    assert set(r["lines"]["units"]) == {"__init__.py", "alpha/", "beta/", "gamma.py"}

    # Imported from the planted tree, not from the checkout the script lives in.
    names = r["names"]
    assert (names["all"], names["all_ops"], names["all_ops_top_level"]) == (1, 2, 1)
    assert names["dir_extra_other"] == ["all_ops", "alpha", "beta", "extra"]

    cc = r["complexity"]
    assert (cc["count"], cc["total"]) == (1, 6)
    assert cc["functions"][0]["name"] == "visible"
    assert cc["functions"][0]["cc"] == 11

    assert r["any"]["uses"] == 2  # the two annotations, not the import

    everything, runtime = r["cycles"]["all"], r["cycles"]["runtime"]
    assert everything["sccs"] == [["prism_core.alpha.one", "prism_core.beta.two"]]
    assert (everything["modules_in_cycles"], everything["largest_scc"]) == (2, 2)
    assert (runtime["sccs"], runtime["modules_in_cycles"]) == ([], 0)

    taken = [(f["importer"], f["name"], f["how"]) for f in r["private_imports"]["imports"]]
    assert taken == [
        ("prism_core/gamma.py", "_private", "from-import"),
        ("prism_core/gamma.py", "_cell", "attribute"),
    ]
    assert r["mutable_cells"]["cells"] == [
        {
            "path": "prism_core/alpha/one.py",
            "line": 6,
            "name": "_cell",
            "written_at": ["prism_core/alpha/one.py:9", "prism_core/gamma.py:6"],
        }
    ]
