"""What the first call in a fresh process no longer pays for, and must still get right.

* Plugin discovery reads the ``prism.plugins`` entry points and distribution versions itself
  where the environment is plain (``prism_core.kernel.distributions._installed``): it must give
  exactly what ``importlib.metadata`` gives, see a plugin installed or removed at the next
  discovery, and leave every unusual environment to importlib.metadata.
* Requirement specifiers of plain release numbers are checked without ``packaging``.
* A warm first call imports neither importlib.metadata, packaging, the YAML reader, PyYAML nor
  jsonschema; nor archspec (the host CPU's identification is kept in the cache directory:
  tests/test_host.py), shutil (``nvidia-smi`` is looked up on ``PATH`` as ``shutil.which``
  does) or difflib (only messages need it); nor logging, a thread pool, the tuner, the
  alignment results or any plugin's framework.
* The catalogue of builtin ops is declared with one advance of the dispatch generation.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prism_core import nvidia_smi
from prism_core.kernel import distributions as dists
from prism_core.kernel import plugins
from prism_core.kernel.description.requirements import _PLAIN_SPECIFIER, Requirement
from prism_core.kernel.errors import RequirementError, debug

from .conftest import put_distribution_on_path


def _standard_find_distributions(*args: Any, **kwargs: Any) -> Any:
    """``PathFinder.find_distributions`` as the standard library defines it."""
    return importlib.metadata.MetadataPathFinder.find_distributions(*args, **kwargs)


@pytest.fixture(autouse=True)
def _plain_meta_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts from the standard library's own distribution discovery, as a process
    that imported nothing else has it.  Another test in the same process may have imported Dask,
    which imports the ``importlib_metadata`` backport; that appends its ``MetadataPathFinder`` to
    ``sys.meta_path`` and deletes ``PathFinder.find_distributions``.  The reader then leaves
    everything to importlib.metadata, as it must (tested below), and there would be nothing of
    its own to compare; the standard state is restored for the test."""
    from importlib.machinery import PathFinder

    if getattr(PathFinder, "find_distributions", None) is None:
        monkeypatch.setattr(
            PathFinder,
            "find_distributions",
            staticmethod(_standard_find_distributions),
            raising=False,
        )
    monkeypatch.setattr(
        sys,
        "meta_path",
        [
            finder
            for finder in sys.meta_path
            if finder is PathFinder or getattr(finder, "find_distributions", None) is None
        ],
    )


def _ours(group: str) -> list[tuple[Any, ...]]:
    found = dists._installed()
    assert found is not None, "this environment should be read without importlib.metadata"
    return [
        (ep.name, ep.value, ep.group, ep.dist.name, ep.dist.version)
        for dist in found.values()
        for ep in dist.entry_points(group)
    ]


def _theirs(group: str) -> list[tuple[Any, ...]]:
    return [
        (ep.name, ep.value, ep.group, ep.dist.name, ep.dist.version)
        for ep in importlib.metadata.entry_points(group=group)
    ]


def _groups() -> set[str]:
    return {ep.group for dist in importlib.metadata.distributions() for ep in dist.entry_points}


def test_every_group_reads_as_importlib_metadata_reads_it() -> None:
    groups = _groups() | {plugins.ENTRY_POINT_GROUP}
    assert len(groups) >= 2  # prism.plugins and, at least, pip's console_scripts
    for group in sorted(groups):
        assert _ours(group) == _theirs(group), group


def test_distribution_versions_are_importlib_metadatas() -> None:
    found = dists._installed()
    assert found
    for name in found:
        assert dists.distribution_version(name) == importlib.metadata.version(name), name
    assert dists.distribution_version("Prism_Core") == importlib.metadata.version("prism-core")
    assert dists.distribution_version("no-such-distribution-here") is None


def test_a_plugin_installed_or_removed_is_seen_at_the_next_discovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    monkeypatch.syspath_prepend(str(site))
    assert "lab-late" not in [ep.name for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP)]
    assert dists.distribution_version("prism-plugin-late") is None
    put_distribution_on_path(
        monkeypatch, site, "prism-plugin-late", "2.5", "[prism.plugins]\nlab-late = lab_late\n"
    )
    [ep] = [ep for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP) if ep.name == "lab-late"]
    assert (ep.value, ep.dist.name, ep.dist.version) == ("lab_late", "prism-plugin-late", "2.5")
    assert dists.distribution_version("prism_plugin_late") == "2.5"
    shutil.rmtree(site / "prism_plugin_late-2.5.dist-info")
    assert "lab-late" not in [ep.name for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP)]
    assert dists.distribution_version("prism-plugin-late") is None


def test_the_first_distribution_of_a_name_on_the_path_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = "[prism.plugins]\nlab-twice = lab_twice_{}\n"
    put_distribution_on_path(monkeypatch, tmp_path / "b", "lab.twice", "1.0", group.format("b"))
    put_distribution_on_path(monkeypatch, tmp_path / "a", "Lab_Twice", "2.0", group.format("a"))
    # Another distribution's entry point of the same name stays, as importlib.metadata has it.
    put_distribution_on_path(monkeypatch, tmp_path / "c", "lab-other", "3.0", group.format("c"))
    assert _ours(plugins.ENTRY_POINT_GROUP) == _theirs(plugins.ENTRY_POINT_GROUP)
    twice = [ep for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP) if ep.name == "lab-twice"]
    assert [(ep.value, ep.dist.version) for ep in twice] == [
        ("lab_twice_c", "3.0"),
        ("lab_twice_a", "2.0"),
    ]
    assert dists.distribution_version("lab-twice") == "2.0"


def test_entry_points_load_their_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "lab_loadme"
    package.mkdir()
    (package / "__init__.py").write_text("class Outer:\n    class Inner:\n        pass\n")
    put_distribution_on_path(
        monkeypatch,
        tmp_path,
        "lab-loadme",
        "1.0",
        "[prism.plugins]\nmodule = lab_loadme\nnested = lab_loadme : Outer.Inner [extra]\n"
        "bad = not a module\n",
    )
    eps = {ep.name: ep for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP)}
    assert eps["module"].load() is sys.modules["lab_loadme"]
    assert eps["nested"].load() is sys.modules["lab_loadme"].Outer.Inner
    with pytest.raises(ValueError, match="names no module"):
        eps["bad"].load()


def _same_as_importlib_metadata() -> None:
    ours = [(ep.name, ep.value, ep.group) for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP)]
    theirs = sorted(
        importlib.metadata.entry_points(group=plugins.ENTRY_POINT_GROUP), key=lambda ep: ep.name
    )
    assert ours == [(ep.name, ep.value, ep.group) for ep in theirs]


def test_a_zip_on_the_path_is_left_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "plugins.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("lab_zipped-1.0.dist-info/METADATA", "Name: lab-zipped\nVersion: 1.0\n")
        zf.writestr(
            "lab_zipped-1.0.dist-info/entry_points.txt", "[prism.plugins]\nlab-zipped = x\n"
        )
    monkeypatch.syspath_prepend(str(archive))
    assert dists._installed() is None
    assert "lab-zipped" in [ep.name for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP)]
    assert dists.distribution_version("lab-zipped") == "1.0"
    _same_as_importlib_metadata()


def test_another_distribution_finder_is_left_to_importlib_metadata(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Finder:
        @staticmethod
        def find_spec(*args: Any) -> None:
            return None

        @staticmethod
        def find_distributions(*args: Any) -> list[Any]:
            return []

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert dists._installed() is None
    _same_as_importlib_metadata()


@pytest.mark.parametrize(
    ("name", "metadata"),
    [
        ("lab_folded-1.0.dist-info", "Name: lab-folded\nVersion:\n  1.0\n"),  # a folded header
        ("LAB_CASE-1.0.DIST-INFO", "Name: lab-case\nVersion: 1.0\n"),  # named by its metadata
        ("lab_odd-1.0.dist-info", "Name: lab-odd\nnot a header\nVersion: 1.0\n"),  # headers end
    ],
)
def test_unusual_metadata_is_read_by_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, metadata: str
) -> None:
    info = tmp_path / name
    info.mkdir()
    (info / "METADATA").write_text(metadata)
    (info / "entry_points.txt").write_text("[prism.plugins]\nlab-unusual = lab_unusual\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    [ep] = [ep for ep in dists.entry_points(plugins.ENTRY_POINT_GROUP) if ep.name == "lab-unusual"]
    [theirs] = importlib.metadata.entry_points(group=plugins.ENTRY_POINT_GROUP, name="lab-unusual")
    assert (ep.dist.name, ep.dist.version) == (theirs.dist.name, theirs.dist.version)


def test_a_malformed_entry_points_file_fails_as_with_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    put_distribution_on_path(
        monkeypatch, tmp_path, "lab-bad", "1.0", "[prism.plugins]\nno-equals\n"
    )
    try:
        importlib.metadata.entry_points(group=plugins.ENTRY_POINT_GROUP)
    except Exception as exc:  # what it raises differs between Python versions
        theirs: type[Exception] = type(exc)
    else:
        pytest.fail("importlib.metadata read a line without '='")
    with pytest.raises(theirs):
        dists.entry_points(plugins.ENTRY_POINT_GROUP)


# -- requirement specifiers without packaging ---------------------------------------------------

_OPERATORS = st.sampled_from(["==", "!=", "<=", ">=", "<", ">", "~=", "===", "=", ""])
_SPACE = st.sampled_from(["", " ", "\t", "  "])
_RELEASE = st.lists(st.integers(0, 99).map(str), min_size=0, max_size=3).map(".".join)
_SUFFIX = st.sampled_from(["", "", "", ".*", "a1", ".post1", "+local", "x", ".", ","])
_CLAUSE = st.tuples(_SPACE, _OPERATORS, _SPACE, _RELEASE, _SUFFIX, _SPACE).map("".join)


@given(st.lists(_CLAUSE, min_size=1, max_size=3).map(",".join))
def test_specifiers_are_accepted_as_packaging_accepts_them(text: str) -> None:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(text, prereleases=True)
    except InvalidSpecifier:
        valid = False
    else:
        valid = True
    if _PLAIN_SPECIFIER.fullmatch(text):  # checked without packaging
        assert valid
    try:
        Requirement({"tensor_cores": text})
    except RequirementError:
        accepted = False
    else:
        accepted = True
    # Unchanged: a value that starts like a specifier must be one; any other non-empty string
    # is a value to equal.
    is_specifier = re.match(r"^\s*(~=|==|!=|<=|>=|<|>|===)", text) is not None
    assert accepted == (valid if is_specifier else bool(text.strip()))


def test_a_requirement_with_a_plain_specifier_imports_no_packaging() -> None:
    code = (
        "import sys; from prism_core.kernel.description.requirements import Requirement; "
        "Requirement({'compute_capability': '>=8.0', 'tensor_cores': '>= 3, <5'}); "
        "print('packaging' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# -- the first call as a whole ------------------------------------------------------------------


def test_a_warm_first_call_imports_only_what_it_needs(tmp_path: Path) -> None:
    """With every installed plugin autoloaded and the caches warm, the first call reads the
    plugins, the device library, the host CPU and the tuning fingerprint without
    importlib.metadata (and its e-mail parser), packaging, the YAML reader, PyYAML, jsonschema,
    archspec, shutil or difflib; and runs without logging (dispatch logs only where a program
    imported it), a thread pool, the tuner, the alignment results, or a plugin's framework."""
    env = {k: v for k, v in os.environ.items() if k != "PRISM_DISABLE_PLUGIN_AUTOLOAD"}
    env["PRISM_CACHE_DIR"] = str(tmp_path)
    heavy = [
        "importlib.metadata",
        "email",
        "packaging",
        "prism_core.kernel.description.yaml_loader",
        "yaml",
        "jsonschema",
        "archspec",
        "shutil",
        "difflib",
        "logging",
        "concurrent.futures",
        # Prism's ranker (prism_core._tuning.ranking) orders matmul's variants here, but the
        # tuner and the planner are not imported.
        "prism_core._tuning.tuner",
        "prism_core._tuning.planner",
        "prism_genomics.result",
        "torch",
        "scipy",
        "numba",
        "parasail",
    ]
    if nvidia_smi._which("nvidia-smi") is None:
        heavy.append("subprocess")  # imported to run nvidia-smi where there is one
    code = (
        "import sys, json; import numpy as np; import prism_core as p; "
        "a = np.ones((4, 4)); assert (p.matmul(a, a) == a @ a).all(); "
        f"print(json.dumps([m for m in {heavy!r} if m in sys.modules]))"
    )
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
            ).stdout
        )
        for _ in range(2)
    ]
    assert runs[1] == []


# -- nvidia-smi is looked up as shutil.which looks it up ----------------------------------------


@pytest.mark.skipif(os.name != "posix", reason="elsewhere shutil.which itself is asked")
def test_the_path_search_is_shutil_which(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real files and directories on PATH: a directory and a file that is not executable are
    passed over, empty entries mean the working directory, an empty PATH finds nothing, an
    unset one searches the system's default, a name with a directory is checked as given."""
    plain, runnable, folder, here = (tmp_path / n for n in ("plain", "runnable", "folder", "here"))
    for directory in (plain, runnable, folder, here):
        directory.mkdir()
    (plain / "tool").write_text("#!/bin/sh\n")  # not executable
    (runnable / "tool").write_text("#!/bin/sh\n")
    (runnable / "tool").chmod(0o755)
    (folder / "tool").mkdir()  # a directory named like the command
    (here / "tool").write_text("#!/bin/sh\n")
    (here / "tool").chmod(0o755)
    monkeypatch.chdir(here)
    paths = [
        f"{plain}:{folder}:{runnable}",
        f"{folder}:{plain}",
        f"{plain}::{runnable}",
        f"{runnable}:{runnable}",
        ":",
        "",
        str(tmp_path / "missing"),
    ]
    for path in paths:
        monkeypatch.setenv("PATH", path)
        for command in ("tool", "sh", "no-such-tool", f"{runnable}/tool", "./tool"):
            assert nvidia_smi._which(command) == shutil.which(command), (path, command)
    monkeypatch.delenv("PATH")
    assert nvidia_smi._which("sh") == shutil.which("sh")
    assert nvidia_smi._which("sh") is not None


# -- the catalogue ------------------------------------------------------------------------------


def test_the_catalogue_is_declared_with_one_bump() -> None:
    """Declaring the 58 builtin ops advances the dispatch generation once, not once per op, and
    leaves every op keyed as a bump leaves it."""
    code = (
        "import json; import prism_core.kernel.dispatch.ops; "
        "from prism_core.kernel.dispatch import registry; "
        "from prism_core.kernel.dispatch.catalogue import SPECS; "
        "before = registry.generation(); registry._declare_catalogue(); "
        "print(json.dumps([before, registry.generation(), len(SPECS), len(registry.table()), "
        "sorted({op._keying[0] for op in registry.table().values()})]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    before, after, specs, ops, keyings = json.loads(out.stdout)
    assert after == before + 1
    assert ops == specs
    assert keyings == [0]  # no variant yet: nothing beyond the scope and the argument types


# -- debug records without importing logging ----------------------------------------------------


def test_debug_records_reach_the_prism_core_logger(caplog: pytest.LogCaptureFixture) -> None:
    """Where logging is imported (here, by pytest), records go to the ``prism_core`` logger as
    before: discovery's, for one."""
    from prism_core.kernel.plugins import reload_plugins

    with caplog.at_level(logging.DEBUG, logger="prism_core"):
        debug("plugin %s: %s", "lab", "a problem")
        reload_plugins()
    said = [r.getMessage() for r in caplog.records if r.name == "prism_core"]
    assert said[0] == "plugin lab: a problem"
    assert any(m.startswith("loaded plugin numpy") for m in said[1:]), said


def test_debug_imports_no_logging() -> None:
    code = (
        "import sys; from prism_core.kernel.errors import debug; debug('%s', 1); "
        "print('logging' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_first_call_with_nothing_to_rank_imports_no_tuning_code(tmp_path: Path) -> None:
    """With the builtin plugin alone, matmul has one variant: the first call asks no ranker,
    and imports nothing of ``prism_core._tuning``."""
    env = {**os.environ, "PRISM_DISABLE_PLUGIN_AUTOLOAD": "1", "PRISM_CACHE_DIR": str(tmp_path)}
    code = (
        "import sys; import numpy as np; import prism_core as p; a = np.ones((4, 4)); "
        "assert (p.matmul(a, a) == a @ a).all(); "
        "print(sorted(m for m in sys.modules if m.startswith('prism_core._tuning')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
