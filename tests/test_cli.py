"""Black-box tests of the ``prism`` command line, run as real subprocesses.

Every run gets its own validation-cache directory (``PRISM_CACHE_DIR`` under ``tmp_path``) so
that no test reads or writes ``~/.cache``, and ``PRISM_HARDWARE_PATH`` is removed unless the test
sets it.  Device files are real YAML files written to ``tmp_path``; the working directory of each
run is ``tmp_path`` so that the file names in the output are the short relative ones written here.
"""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import prism_core

from .conftest import SEED as SEED_DEVICE

REPO = Path(__file__).resolve().parents[1]
HARDWARE = REPO / "hardware"
SCHEMA = REPO / "schemas" / "device.schema.json"
CONSOLE_SCRIPT = Path(sys.executable).parent / "prism"

#: A guard against a hung process, not a performance expectation.
HANG_GUARD_S = 300

#: Devices the shipped library is documented to contain.
SHIPPED_DEVICES = ("nvidia.h100-sxm", "amd.mi300x", "aws.graviton3", "generic.x86-64-v3")


# -- running the CLI ------------------------------------------------------------------------------


@dataclass
class Result:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


Runner = Callable[..., Result]


def _environment(cache_dir: Path, extra: Mapping[str, str | None] | None) -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PRISM_HARDWARE_PATH", "PRISM_NO_CACHE", "PRISM_DEBUG", "PYTHONWARNINGS"):
        env.pop(name, None)
    env["PRISM_CACHE_DIR"] = str(cache_dir)
    env["PYTHONIOENCODING"] = "utf-8"
    for name, value in (extra or {}).items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _run(
    command: Sequence[str],
    args: Sequence[str],
    *,
    cwd: Path,
    cache_dir: Path,
    env: Mapping[str, str | None] | None = None,
) -> Result:
    proc = subprocess.run(
        [*command, *args],
        cwd=cwd,
        env=_environment(cache_dir, env),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=HANG_GUARD_S,
        check=False,
    )
    result = Result(tuple(args), proc.returncode, proc.stdout, proc.stderr)
    # No run of the CLI may ever show a traceback or hit an internal error.
    assert "Traceback" not in result.output, result.output
    assert "internal error" not in result.stderr, result.stderr
    return result


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "prism-cache"


@pytest.fixture
def prism(tmp_path: Path, cache_dir: Path) -> Runner:
    """Run ``python -m prism_core ARGS`` in ``tmp_path`` with a private cache directory."""

    def run(
        *args: str, env: Mapping[str, str | None] | None = None, cwd: Path | None = None
    ) -> Result:
        return _run(
            [sys.executable, "-m", "prism_core"],
            args,
            cwd=cwd or tmp_path,
            cache_dir=cache_dir,
            env=env,
        )

    return run


@pytest.fixture(params=["module", "script"])
def any_prism(request: pytest.FixtureRequest, tmp_path: Path, cache_dir: Path) -> Runner:
    """``python -m prism_core`` and the ``prism`` console script, in turn."""
    if request.param == "script":
        if not CONSOLE_SCRIPT.exists():
            pytest.skip(f"no console script at {CONSOLE_SCRIPT} (installed without scripts)")
        command = [str(CONSOLE_SCRIPT)]
    else:
        command = [sys.executable, "-m", "prism_core"]

    def run(*args: str, env: Mapping[str, str | None] | None = None) -> Result:
        return _run(command, args, cwd=tmp_path, cache_dir=cache_dir, env=env)

    return run


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def problem_lines(output: str, file: str) -> list[tuple[int, int, str, str]]:
    """``(line, column, json_path, message)`` of every ``FILE:LINE:COL: $.path: message`` line.

    Problems located at the document itself (``$``) have no JSON path in the text output; they
    are returned with ``"$"``.
    """
    located = re.compile(rf"^\s*{re.escape(file)}:(\d+):(\d+): (?:(\$\S*): )?(.+)$")
    found = []
    for line in output.splitlines():
        m = located.match(line)
        if m:
            found.append((int(m[1]), int(m[2]), m[3] or "$", m[4]))
    return found


def shipped_device_files() -> list[Path]:
    return sorted(p for p in HARDWARE.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())


# A user device built on a shipped family.
USER_HOPPER = """\
format_version: 1
device_type: acme.hopper-x
name: ACME Hopper X
extends: nvidia.hopper
compute_units: 100
memory_hierarchy:
  - level: global
    size_bytes: 1000000000
    bandwidth_gbps: 1000
"""

# Two problems, far apart: an unknown key on line 3, a bad data type on line 11.
INVALID_DEVICE = """\
format_version: 1
device_type: user.bad
compute_unit: 4
features:
  - name: tensor_cores
    version: 1
    operations:
      - name: matmul
        data_types:
          - fp16
          - fp9
"""


# -- help and version -----------------------------------------------------------------------------


def test_top_level_help_lists_commands_and_options(any_prism: Runner) -> None:
    r = any_prism("--help")
    assert r.returncode == 0, r.output
    for word in (
        "usage: prism",
        "--version",
        "validate",
        "devices",
        "show",
        "schema",
        "PRISM_HARDWARE_PATH",
        "PRISM_CACHE_DIR",
    ):
        assert word in r.stdout, word


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("validate", ["PATH", "--json", "--quiet", "--no-cache"]),
        ("devices", ["--json", "--all", "--kind", "--vendor"]),
        ("show", ["DEVICE", "--json"]),
        ("schema", ["usage: prism schema"]),
    ],
)
def test_subcommand_help_mentions_its_options(
    any_prism: Runner, command: str, options: list[str]
) -> None:
    r = any_prism(command, "--help")
    assert r.returncode == 0, r.output
    assert f"usage: prism {command}" in r.stdout
    for option in options:
        assert option in r.stdout, option


def test_version_is_the_package_version(any_prism: Runner) -> None:
    r = any_prism("--version")
    assert r.returncode == 0, r.output
    assert r.stdout.strip() == f"prism {prism_core.__version__}"


def test_no_arguments_is_a_usage_error(any_prism: Runner) -> None:
    r = any_prism()
    assert r.returncode == 2
    assert "usage: prism" in r.stderr
    assert r.stdout == ""


def test_unknown_command_is_a_usage_error(prism: Runner) -> None:
    r = prism("frobnicate")
    assert r.returncode == 2
    assert "invalid choice" in r.stderr


@pytest.mark.skipif(not CONSOLE_SCRIPT.exists(), reason=f"no console script at {CONSOLE_SCRIPT}")
@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("devices", "--json", "--all"),
        ("show", "nvidia.h100-sxm"),
        ("validate", "bad.yaml"),
        ("show", "nvidia.h100-sx"),
        ("validate",),
    ],
    ids=["version", "devices", "show", "validate-invalid", "show-unknown", "validate-no-path"],
)
def test_module_and_console_script_behave_the_same(
    tmp_path: Path, cache_dir: Path, args: tuple[str, ...]
) -> None:
    write(tmp_path / "bad.yaml", INVALID_DEVICE)
    via_module = _run([sys.executable, "-m", "prism_core"], args, cwd=tmp_path, cache_dir=cache_dir)
    via_script = _run([str(CONSOLE_SCRIPT)], args, cwd=tmp_path, cache_dir=cache_dir)
    assert via_module.returncode == via_script.returncode
    assert via_module.stdout == via_script.stdout
    assert via_module.stderr == via_script.stderr
    assert via_module.output.strip(), "the command printed nothing"


# -- validate: valid inputs -----------------------------------------------------------------------


def test_validate_shipped_library(any_prism: Runner) -> None:
    r = any_prism("validate", str(HARDWARE))
    assert r.returncode == 0, r.output
    n = len(shipped_device_files())
    assert n >= 24
    assert f"{n} files checked: {n} valid, 0 invalid" in r.stdout
    assert "INVALID" not in r.stdout


def test_validate_shipped_library_json(prism: Runner) -> None:
    r = prism("validate", "--json", str(HARDWARE))
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, dict)
    assert data["valid"] is True
    assert data["invalid"] == 0
    reports = data["reports"]
    assert len(reports) == data["files"] == len(shipped_device_files())
    types = {rep["device_type"] for rep in reports}
    assert {"nvidia.h100-sxm", "nvidia.hopper", "amd.mi300x"} <= types
    assert all(rep["valid"] and rep["problems"] == [] for rep in reports)


def test_validate_quiet_prints_only_the_summary_for_valid_files(prism: Runner) -> None:
    r = prism("validate", "-q", str(HARDWARE))
    assert r.returncode == 0, r.output
    assert "ok " not in r.stdout
    assert r.stdout.strip().endswith("0 invalid")


def test_validate_seed_device(prism: Runner) -> None:
    r = prism("validate", str(SEED_DEVICE))
    assert r.returncode == 0, r.output
    assert "1 file checked: 1 valid, 0 invalid" in r.stdout


def test_validate_user_file_extending_a_shipped_family(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "mygpu.yaml", USER_HOPPER)
    r = prism("validate", "mygpu.yaml")
    assert r.returncode == 0, r.output
    assert "ok       mygpu.yaml (acme.hopper-x)" in r.stdout


def test_validate_yml_suffix_and_nested_directories(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "lib" / "a" / "one.yml", "device_type: user.one\nkind: cpu\n")
    write(tmp_path / "lib" / "b" / "c" / "two.yaml", "device_type: user.two\nextends: user.one\n")
    write(tmp_path / "lib" / "notes.txt", "not a device file")
    r = prism("validate", "--json", "lib")
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, dict)
    assert sorted(rep["device_type"] for rep in data["reports"]) == ["user.one", "user.two"]


# -- validate: invalid inputs ---------------------------------------------------------------------


def test_validate_invalid_file_lists_located_problems(any_prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "bad.yaml", INVALID_DEVICE)
    r = any_prism("validate", "bad.yaml")
    assert r.returncode == 1, r.output
    assert "INVALID  bad.yaml: 2 problems" in r.stdout
    problems = problem_lines(r.stdout, "bad.yaml")
    assert len(problems) == 2, r.stdout
    (l1, c1, p1, m1), (l2, c2, p2, m2) = problems
    assert (l1, c1, p1) == (3, 1, "$.compute_unit")
    assert "unknown key 'compute_unit'" in m1
    assert "did you mean 'compute_units'" in m1
    assert (l2, p2) == (11, "$.features[0].operations[0].data_types[1]")
    assert c2 == len("          - ") + 1
    assert "'fp9'" in m2
    assert "fp8" in m2  # a near miss is suggested
    assert "0 valid, 1 invalid" in r.stdout


def test_validate_lists_every_problem_sorted_by_line(prism: Runner, tmp_path: Path) -> None:
    # Problems written in the opposite of the schema's key order, plus one of each kind.
    write(
        tmp_path / "many.yaml",
        """\
device_type: user.many
tdp_watts: -5
peak_tflops:
  fp9: 3
compute_units: zero
kind: gpuu
vendor: NVIDIA
abstract: no
bogus_key: 1
""",
    )
    r = prism("validate", "many.yaml")
    assert r.returncode == 1, r.output
    problems = problem_lines(r.stdout, "many.yaml")
    lines = [p[0] for p in problems]
    assert lines == sorted(lines)
    assert lines == [2, 4, 5, 6, 7, 8, 9], r.stdout
    paths = [p[2] for p in problems]
    assert paths == [
        "$.tdp_watts",
        "$.peak_tflops.fp9",
        "$.compute_units",
        "$.kind",
        "$.vendor",
        "$.abstract",
        "$.bogus_key",
    ]
    assert "INVALID  many.yaml: 7 problems" in r.stdout


def test_validate_json_reports_problems(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "bad.yaml", INVALID_DEVICE)
    write(tmp_path / "good.yaml", USER_HOPPER)
    r = prism("validate", "--json", "bad.yaml", "good.yaml")
    assert r.returncode == 1, r.output
    data = r.json()
    assert isinstance(data, dict)
    assert data["valid"] is False
    assert (data["files"], data["invalid"]) == (2, 1)
    by_file = {rep["file"]: rep for rep in data["reports"]}
    assert set(by_file) == {"bad.yaml", "good.yaml"}
    assert by_file["good.yaml"]["valid"] is True
    assert by_file["good.yaml"]["device_type"] == "acme.hopper-x"
    bad = by_file["bad.yaml"]
    assert bad["valid"] is False
    problems = bad["problems"]
    assert [(p["line"], p["json_path"]) for p in problems] == [
        (3, "$.compute_unit"),
        (11, "$.features[0].operations[0].data_types[1]"),
    ]
    for p in problems:
        assert set(p) >= {"line", "column", "json_path", "message"}
        assert p["column"] >= 1
        assert p["message"]
    assert "did you mean 'compute_units'" in problems[0]["message"]


def test_validate_mixed_files_exit_1_and_report_each(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "good.yaml", USER_HOPPER)
    write(tmp_path / "bad.yaml", INVALID_DEVICE)
    r = prism("validate", "good.yaml", "bad.yaml")
    assert r.returncode == 1
    assert "ok       good.yaml (acme.hopper-x)" in r.stdout
    assert "INVALID  bad.yaml" in r.stdout
    assert "2 files checked: 1 valid, 1 invalid" in r.stdout


def test_validate_missing_path_is_a_usage_error(prism: Runner) -> None:
    r = prism("validate", "does-not-exist.yaml")
    assert r.returncode == 2
    assert "does-not-exist.yaml" in r.stderr
    assert "no such file" in r.stderr


def test_validate_without_paths_is_a_usage_error(prism: Runner) -> None:
    r = prism("validate")
    assert r.returncode == 2
    assert "usage: prism validate" in r.stderr


def test_validate_directory_without_device_files_is_a_usage_error(
    prism: Runner, tmp_path: Path
) -> None:
    write(tmp_path / "empty-dir" / "README.txt", "nothing here")
    r = prism("validate", "empty-dir")
    assert r.returncode == 2
    assert "no device files" in r.stderr


def test_validate_same_device_type_twice_in_a_folder(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "lib" / "first.yaml", "device_type: user.same\nname: First\n")
    write(tmp_path / "lib" / "second.yaml", "device_type: user.same\nname: Second\n")
    r = prism("validate", "lib")
    assert r.returncode == 1, r.output
    dup = [line for line in r.stdout.splitlines() if "user.same" in line and "already" in line]
    assert len(dup) == 1, r.stdout
    assert "lib/first.yaml" in dup[0]
    assert "lib/second.yaml" in dup[0]
    # Located at the device_type line of the second file.
    assert problem_lines(r.stdout, "lib/second.yaml")[0][:3] == (1, 1, "$.device_type")


def test_validate_same_file_named_twice_is_not_a_duplicate(prism: Runner, tmp_path: Path) -> None:
    """One file named by two spellings is still one file, not two definitions of its device."""
    write(tmp_path / "mygpu.yaml", USER_HOPPER)
    (tmp_path / "sub").mkdir()
    r = prism("validate", "mygpu.yaml", str(tmp_path / "mygpu.yaml"), "sub/../mygpu.yaml")
    assert "already defined" not in r.stdout, r.stdout
    assert r.returncode == 0, r.output


def test_validate_unknown_parent_is_located_at_extends(prism: Runner, tmp_path: Path) -> None:
    write(
        tmp_path / "orphan.yaml",
        "format_version: 1\ndevice_type: user.orphan\nextends: nvidia.hoper\nkind: gpu\n",
    )
    r = prism("validate", "orphan.yaml")
    assert r.returncode == 1, r.output
    problems = problem_lines(r.stdout, "orphan.yaml")
    assert len(problems) == 1, r.stdout
    line, col, path, message = problems[0]
    assert (line, col, path) == (3, 1, "$.extends")
    assert "'nvidia.hoper'" in message
    assert "did you mean 'nvidia.hopper'" in message


def test_validate_inheritance_cycle_is_reported_at_an_extends(
    prism: Runner, tmp_path: Path
) -> None:
    write(tmp_path / "cyc" / "a.yaml", "device_type: user.a\nextends: user.b\n")
    write(tmp_path / "cyc" / "b.yaml", "device_type: user.b\nextends: user.a\n")
    r = prism("validate", "cyc")
    assert r.returncode == 1, r.output
    cycle = [line for line in r.stdout.splitlines() if "inheritance cycle" in line]
    assert cycle, r.stdout
    assert re.match(r"^\s*cyc/[ab]\.yaml:2:1: \$\.extends: inheritance cycle", cycle[0])


# -- validate: hostile inputs ---------------------------------------------------------------------


def _alias_bomb() -> str:
    lines = ["device_type: user.bomb", "attributes:", '  a: &a ["lol","lol","lol","lol","lol"]']
    previous = "a"
    for name in "bcdefghij":
        lines.append(f"  {name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
        previous = name
    return "\n".join(lines) + "\n"


def _deep_nesting(levels: int) -> str:
    text = "device_type: user.deep\nattributes:\n"
    for i in range(levels):
        text += "  " * (i + 1) + f"k{i}:\n"
    return text + "  " * (levels + 1) + "leaf: 1\n"


def _binary() -> bytes:
    # Deterministic noise that is certainly not UTF-8 (0xff never occurs in UTF-8).
    return b"\xff" + random.Random(20240501).randbytes(4096)


HOSTILE: dict[str, tuple[str | bytes, int | None, list[str]]] = {
    # name: (content, expected line or None for "any line >= 1", words the message contains)
    "alias-bomb": (_alias_bomb(), 3, ["anchors", "not allowed"]),
    "python-tag": (
        'device_type: user.tag\nname: !!python/object/apply:os.system ["echo hi"]\n',
        2,
        ["tag", "not allowed"],
    ),
    "python-tag-on-root": (
        '!!python/object/apply:os.system ["touch pwned"]\n',
        1,
        ["tag", "not allowed"],
    ),
    "deep-nesting": (_deep_nesting(40), None, ["nested", "deep"]),
    "flow-deep-nesting": (
        "device_type: user.deep\nattributes:\n  x: " + "[" * 40 + "]" * 40 + "\n",
        3,
        ["nested", "deep"],
    ),
    "binary": (_binary(), 1, ["UTF-8"]),
    "three-megabytes": (
        'device_type: user.big\ndescription: "' + "x" * (3 * 1024 * 1024) + '"\n',
        1,
        ["bytes"],
    ),
    "empty": ("", 1, ["empty"]),
    "whitespace-only": ("\n   \n\n", 1, ["empty"]),
    "two-documents": (
        "device_type: user.one\n---\ndevice_type: user.two\n",
        2,
        ["second", "document"],
    ),
    "duplicate-keys": (
        "device_type: user.dup\nname: A\nname: B\n",
        3,
        ["duplicate key 'name'", "line 2"],
    ),
    "no-is-a-string": ("device_type: user.no\nabstract: no\n", 2, ["'no'", "true or false"]),
    "not-a-mapping": ("- device_type: user.list\n", 1, ["list", "mapping"]),
    "broken-yaml": ("device_type: user.x\nname: [unclosed\n", None, ["invalid YAML"]),
    "non-string-key": ("device_type: user.k\n1: one\n", 2, ["keys must be strings"]),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_input_is_a_located_problem(prism: Runner, tmp_path: Path, case: str) -> None:
    content, line, words = HOSTILE[case]
    name = f"{case}.yaml"
    write(tmp_path / name, content)
    r = prism("validate", name)
    assert r.returncode == 1, r.output
    problems = problem_lines(r.stdout, name)
    assert problems, f"no located problem for {name}:\n{r.output}"
    if line is not None:
        assert problems[0][0] == line, r.stdout
    assert all(p[0] >= 1 and p[1] >= 1 for p in problems), r.stdout
    text = " ".join(p[3] for p in problems)
    for word in words:
        assert word in text, (word, r.stdout)
    # Nothing was executed: no `echo hi` output, no file made by `touch`.
    assert not any(out_line.strip() == "hi" for out_line in r.stdout.splitlines())
    assert not (tmp_path / "pwned").exists()

    as_json = prism("validate", "--json", name)
    assert as_json.returncode == 1
    data = as_json.json()
    assert isinstance(data, dict)
    assert data["valid"] is False
    (report,) = data["reports"]
    assert report["problems"]
    assert all(p["line"] >= 1 for p in report["problems"])


def test_abstract_no_is_a_type_error_naming_the_string(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "fam.yaml", "device_type: user.fam\nname: Family\nabstract: no\n")
    r = prism("validate", "fam.yaml")
    assert r.returncode == 1
    ((line, col, path, message),) = problem_lines(r.stdout, "fam.yaml")
    assert (line, col, path) == (3, 11, "$.abstract")
    assert "the string 'no'" in message


def test_alias_bomb_reports_every_alias_without_expanding(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "bomb.yaml", _alias_bomb())
    r = prism("validate", "--json", "bomb.yaml")
    assert r.returncode == 1
    data = r.json()
    assert isinstance(data, dict)
    messages = [p["message"] for p in data["reports"][0]["problems"]]
    # 10 anchors (&a .. &j) and 9 * 9 aliases, each reported once: nothing was expanded.
    assert sum("anchors (&" in m for m in messages) == 10
    assert sum("aliases (*" in m for m in messages) == 81


def test_hostile_files_in_a_folder_are_all_reported(prism: Runner, tmp_path: Path) -> None:
    for case, (content, _line, _words) in HOSTILE.items():
        write(tmp_path / "zoo" / f"{case}.yaml", content)
    write(tmp_path / "zoo" / "fine.yaml", USER_HOPPER)
    r = prism("validate", "--json", "zoo")
    assert r.returncode == 1, r.output
    data = r.json()
    assert isinstance(data, dict)
    by_file = {Path(rep["file"]).name: rep for rep in data["reports"]}
    assert len(by_file) == len(HOSTILE) + 1
    assert by_file["fine.yaml"]["valid"] is True
    assert all(not by_file[f"{case}.yaml"]["valid"] for case in HOSTILE)


# -- devices --------------------------------------------------------------------------------------


def test_devices_lists_the_shipped_library(any_prism: Runner) -> None:
    r = any_prism("devices")
    assert r.returncode == 0, r.output
    assert r.stderr == ""
    rows = [line.split()[0] for line in r.stdout.splitlines()[1:-1]]
    assert len(rows) >= 24, r.stdout
    for dtype in SHIPPED_DEVICES:
        assert dtype in rows
    assert "nvidia.hopper" not in rows  # families only with --all
    assert r.stdout.splitlines()[0].split()[:3] == ["DEVICE", "TYPE", "KIND"]
    assert re.search(rf"^{len(rows)} devices", r.stdout.splitlines()[-1])


def test_devices_json(prism: Runner) -> None:
    r = prism("devices", "--json")
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, list)
    assert len(data) >= 24
    keys = {"device_type", "kind", "vendor", "compute_units", "memory_bytes", "peak_tflops"}
    for item in data:
        assert isinstance(item, dict)
        assert keys <= set(item), item
        assert item["abstract"] is False
        assert isinstance(item["peak_tflops"], dict)
    by_type = {d["device_type"]: d for d in data}
    for dtype in SHIPPED_DEVICES:
        assert dtype in by_type
    h100 = by_type["nvidia.h100-sxm"]
    assert (h100["kind"], h100["vendor"], h100["compute_units"]) == ("gpu", "nvidia", 132)
    assert h100["memory_bytes"] == 80 * 1024**3
    assert h100["peak_tflops"]["bf16"] > 0
    assert by_type["amd.mi300x"]["vendor"] == "amd"
    assert by_type["aws.graviton3"]["kind"] == "cpu"
    assert [d["device_type"] for d in data] == sorted(by_type)


def test_devices_all_includes_families(prism: Runner) -> None:
    plain = prism("devices", "--json").json()
    everything = prism("devices", "--json", "--all").json()
    assert isinstance(plain, list)
    assert isinstance(everything, list)
    types = {d["device_type"] for d in everything}
    assert {"nvidia.hopper", "nvidia.gpu"} <= types
    assert {d["device_type"] for d in plain} < types
    assert {d["device_type"] for d in everything if d["abstract"]} == types - {
        d["device_type"] for d in plain
    }
    text = prism("devices", "--all")
    assert re.search(r"^nvidia\.hopper \*", text.stdout, re.MULTILINE)
    assert "family (abstract)" in text.stdout


def test_devices_kind_filter(prism: Runner) -> None:
    r = prism("devices", "--json", "--kind", "cpu")
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, list)
    types = {d["device_type"] for d in data}
    assert {"aws.graviton3", "generic.x86-64-v3"} <= types
    assert "nvidia.h100-sxm" not in types
    assert all(d["kind"] == "cpu" for d in data)


def test_devices_vendor_filter(prism: Runner) -> None:
    data = prism("devices", "--json", "--vendor", "nvidia").json()
    assert isinstance(data, list)
    assert data
    assert all(d["vendor"] == "nvidia" for d in data)
    assert "nvidia.h100-sxm" in {d["device_type"] for d in data}


ACME_PLUGIN = """\
from pathlib import Path

import prism_core


@prism_core.extending.hookimpl
def prism_hardware_dirs():
    return [Path(__file__).parent / "acme_hardware"]
"""

ACME_NPU = """\
format_version: 1
device_type: acme.npu1
name: ACME NPU1
vendor: acme
kind: npu
detection:
  product_names: ["ACME NPU1"]
"""


def test_devices_say_where_each_description_came_from(prism: Runner, tmp_path: Path) -> None:
    """The ORIGIN column: shipped (builtin), a plugin's directory, or PRISM_HARDWARE_PATH."""
    site = tmp_path / "site"
    write(site / "acme_devices_plugin.py", ACME_PLUGIN)
    write(site / "acme_hardware" / "acme" / "npu1.yaml", ACME_NPU)
    write(
        site / "prism_plugin_acme-0.1.dist-info" / "METADATA",
        "Metadata-Version: 2.1\nName: prism-plugin-acme\nVersion: 0.1\n",
    )
    write(
        site / "prism_plugin_acme-0.1.dist-info" / "entry_points.txt",
        "[prism.plugins]\nacme = acme_devices_plugin\n",
    )
    write(tmp_path / "user" / "mygpu.yaml", USER_HOPPER)
    env = {
        "PYTHONPATH": str(site),
        "PRISM_HARDWARE_PATH": str(tmp_path / "user"),
        "PRISM_PLUGINS": "acme",  # the core's tests load no other plugin (tests/conftest.py)
    }
    r = prism("devices", env=env)
    assert r.returncode == 0, r.output
    header, *rows, footer = r.stdout.splitlines()
    assert "ORIGIN" in header.split()
    at = header.index("ORIGIN")  # a left-aligned column: values start where its title does
    origin = {row.split()[0]: row[at:].split()[0] for row in rows}
    assert origin["acme.npu1"] == "plugin:acme"
    assert origin["acme.hopper-x"] == "user"
    assert origin["nvidia.h100-sxm"] == origin["generic.x86-64-v3"] == "builtin"
    assert "builtin = shipped with Prism" in footer
    assert "user = PRISM_HARDWARE_PATH" in footer
    # The same words as `--json` and `prism show`.
    listed = {d["device_type"]: d["origin"] for d in prism("devices", "--json", env=env).json()}
    assert {t: listed[t] for t in origin} == origin


def test_devices_filter_matching_nothing(prism: Runner) -> None:
    r = prism("devices", "--kind", "quantum")
    assert r.returncode == 0
    assert r.stdout.strip() == "no devices match"


# -- PRISM_HARDWARE_PATH --------------------------------------------------------------------------


def test_user_device_appears_in_devices(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "user" / "mygpu.yaml", USER_HOPPER)
    env = {"PRISM_HARDWARE_PATH": str(tmp_path / "user")}
    r = prism("devices", "--json", env=env)
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, list)
    by_type = {d["device_type"]: d for d in data}
    assert "nvidia.h100-sxm" in by_type
    mine = by_type["acme.hopper-x"]
    assert mine["origin"] == "user"
    assert (mine["kind"], mine["vendor"], mine["compute_units"]) == ("gpu", "nvidia", 100)
    assert mine["extends"] == ["nvidia.hopper"]

    shown = prism("show", "acme.hopper-x", "--json", env=env).json()
    assert isinstance(shown, dict)
    features = {f["name"] for f in shown["description"]["features"]}
    assert {"tensor_cores", "tma"} <= features
    assert shown["provenance"]["features[tma]"] == "nvidia.hopper"


def test_several_hardware_path_entries(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "one" / "mygpu.yaml", USER_HOPPER)
    write(
        tmp_path / "two" / "derived.yaml",
        "device_type: acme.hopper-y\nname: Y\nextends: acme.hopper-x\ncompute_units: 7\n",
    )
    env = {"PRISM_HARDWARE_PATH": os.pathsep.join([str(tmp_path / "one"), str(tmp_path / "two")])}
    r = prism("show", "acme.hopper-y", "--json", env=env)
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, dict)
    assert data["lineage"] == ["acme.hopper-y", "acme.hopper-x", "nvidia.hopper", "nvidia.gpu"]
    assert data["description"]["compute_units"] == 7


def test_user_file_overrides_shipped_device(prism: Runner, tmp_path: Path) -> None:
    write(
        tmp_path / "override" / "h100.yaml",
        "device_type: nvidia.h100-sxm\nname: My own H100\n"
        "extends: nvidia.hopper\ncompute_units: 1\n",
    )
    env = {"PRISM_HARDWARE_PATH": str(tmp_path / "override")}
    r = prism("show", "nvidia.h100-sxm", "--json", env=env)
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, dict)
    assert data["file"] == "override/h100.yaml"
    assert data["origin"] == "user"
    assert data["description"]["name"] == "My own H100"
    assert data["description"]["compute_units"] == 1
    assert len(data["overrides"]) == 1
    assert Path(data["overrides"][0]).resolve() == (HARDWARE / "nvidia" / "h100-sxm.yaml").resolve()

    text = prism("show", "nvidia.h100-sxm", env=env)
    assert "# overrides: " in text.stdout
    assert "h100-sxm.yaml" in text.stdout

    listed = prism("devices", "--json", env=env).json()
    assert isinstance(listed, list)
    (entry,) = [d for d in listed if d["device_type"] == "nvidia.h100-sxm"]
    assert entry["compute_units"] == 1


def test_broken_user_file_keeps_the_library_and_warns(prism: Runner, tmp_path: Path) -> None:
    write(tmp_path / "broken" / "x.yaml", "device_type: user.broken\ncompute_unit: 3\n")
    write(tmp_path / "broken" / "fine.yaml", USER_HOPPER)
    env = {"PRISM_HARDWARE_PATH": str(tmp_path / "broken")}
    r = prism("devices", env=env)
    assert r.returncode == 1, r.output
    for dtype in (*SHIPPED_DEVICES, "acme.hopper-x"):
        assert re.search(rf"^{re.escape(dtype)}\s", r.stdout, re.MULTILINE), dtype
    assert "user.broken" not in r.stdout
    assert "warning" in r.stderr
    assert re.search(r"broken/x\.yaml:2:1: \$\.compute_unit: unknown key", r.stderr), r.stderr

    as_json = prism("devices", "--json", env=env)
    assert as_json.returncode == 1
    data = as_json.json()  # the warning goes to stderr: stdout stays parseable
    assert isinstance(data, list)
    assert len(data) >= 25


def test_missing_hardware_path_entry_is_reported(prism: Runner, tmp_path: Path) -> None:
    r = prism("devices", env={"PRISM_HARDWARE_PATH": str(tmp_path / "nowhere")})
    assert r.returncode == 1
    assert "nowhere" in r.stderr
    assert "nvidia.h100-sxm" in r.stdout


# -- show -----------------------------------------------------------------------------------------


def test_show_marks_inherited_values(any_prism: Runner) -> None:
    r = any_prism("show", "nvidia.h100-sxm")
    assert r.returncode == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("# nvidia.h100-sxm: ")
    assert "# lineage: nvidia.h100-sxm -> nvidia.hopper -> nvidia.gpu" in lines
    assert "architecture: hopper  # from nvidia.hopper" in lines
    assert "kind: gpu  # from nvidia.gpu" in lines
    assert "  - name: tma  # from nvidia.hopper" in lines
    # Its own values carry no mark.
    assert "compute_units: 132" in lines
    assert not any(line.startswith("compute_units:") and "# from" in line for line in lines)


def test_show_json(prism: Runner) -> None:
    r = prism("show", "nvidia.h100-sxm", "--json")
    assert r.returncode == 0, r.output
    data = r.json()
    assert isinstance(data, dict)
    assert data["device_type"] == "nvidia.h100-sxm"
    assert data["lineage"] == ["nvidia.h100-sxm", "nvidia.hopper", "nvidia.gpu"]
    assert data["origin"] == "builtin"
    assert data["overrides"] == []
    prov = data["provenance"]
    assert prov["architecture"] == "nvidia.hopper"
    assert prov["vendor"] == "nvidia.gpu"
    assert prov["compute_units"] == "nvidia.h100-sxm"
    assert prov["features[tensor_cores]"] == "nvidia.hopper"
    desc = data["description"]
    assert desc["compute_units"] == 132
    assert desc["kind"] == "gpu"
    assert "abstract" not in desc  # not inherited from the family
    assert {"tensor_cores", "transformer_engine", "tma"} <= {f["name"] for f in desc["features"]}


def test_show_unknown_device_suggests_a_near_miss(any_prism: Runner) -> None:
    r = any_prism("show", "nvidia.h100-sx")
    assert r.returncode == 2
    assert r.stdout == ""
    assert "unknown device type 'nvidia.h100-sx'" in r.stderr
    assert "did you mean 'nvidia.h100-sxm'" in r.stderr


def test_show_unknown_device_without_near_miss(prism: Runner) -> None:
    r = prism("show", "zzzz.qqqq")
    assert r.returncode == 2
    assert "unknown device type 'zzzz.qqqq'" in r.stderr
    assert "did you mean" not in r.stderr


def test_show_family(prism: Runner) -> None:
    data = prism("show", "nvidia.hopper", "--json").json()
    assert isinstance(data, dict)
    assert data["description"]["abstract"] is True
    assert data["lineage"] == ["nvidia.hopper", "nvidia.gpu"]


# -- schema ---------------------------------------------------------------------------------------


def test_schema_prints_the_shipped_schema(any_prism: Runner) -> None:
    r = any_prism("schema")
    assert r.returncode == 0, r.output
    assert json.loads(r.stdout) == json.loads(SCHEMA.read_text(encoding="utf-8"))


# -- the validation cache -------------------------------------------------------------------------


def _cache_files(directory: Path) -> list[Path]:
    if not directory.exists():
        return []
    return sorted(p for p in directory.rglob("*") if p.is_file())


def test_cache_is_written_and_reused(prism: Runner, cache_dir: Path) -> None:
    first = prism("validate", str(HARDWARE))
    assert first.returncode == 0, first.output
    files = _cache_files(cache_dir)
    assert files, "the first run wrote no cache file"
    before = {p: p.read_bytes() for p in files}

    second = prism("validate", str(HARDWARE))
    assert second.returncode == 0, second.output
    assert second.stdout == first.stdout
    # Nothing new to cache: the second run left the cache as it was.
    assert {p: p.read_bytes() for p in _cache_files(cache_dir)} == before


def test_cached_and_uncached_results_are_the_same(prism: Runner, cache_dir: Path) -> None:
    prism("devices")  # fills the cache
    assert _cache_files(cache_dir)
    for args in (("show", "nvidia.h100-sxm", "--json"), ("devices", "--json", "--all")):
        cached = prism(*args)
        fresh = prism(*args, env={"PRISM_NO_CACHE": "1"})
        assert cached.returncode == fresh.returncode == 0
        assert cached.stdout == fresh.stdout


def test_no_cache_environment_writes_nothing(prism: Runner, cache_dir: Path) -> None:
    r = prism("validate", str(HARDWARE), env={"PRISM_NO_CACHE": "1"})
    assert r.returncode == 0, r.output
    assert _cache_files(cache_dir) == []
    r = prism("devices", env={"PRISM_NO_CACHE": "1"})
    assert r.returncode == 0, r.output
    assert _cache_files(cache_dir) == []


def test_no_cache_option_writes_nothing(prism: Runner, cache_dir: Path) -> None:
    r = prism("validate", "--no-cache", str(HARDWARE))
    assert r.returncode == 0, r.output
    assert _cache_files(cache_dir) == []


def test_garbage_cache_file_is_ignored(prism: Runner, cache_dir: Path) -> None:
    reference = prism("validate", str(HARDWARE))
    files = _cache_files(cache_dir)
    assert files
    noise = random.Random(7).randbytes(2048)
    for path in files:
        path.write_bytes(noise)
    again = prism("validate", str(HARDWARE))
    assert again.returncode == 0, again.output
    assert again.stdout == reference.stdout
    listed = prism("devices", "--json")
    assert listed.returncode == 0, listed.output
    assert "nvidia.h100-sxm" in {d["device_type"] for d in listed.json()}


def _not_a_document(document: Any) -> Any:
    return ["not", "a", "device"]


def _document_with_wrong_values(entry: Any) -> Any:
    # Looks like a device document at a glance (it names its device type) but is not a valid one;
    # the entry around it (the digest and size of its file) is kept.
    name = entry["document"]["device_type"]
    bad = {"device_type": name, "features": "garbage", "memory_hierarchy": 5}
    return {**entry, "document": bad}


@pytest.mark.parametrize(
    "damage", [_not_a_document, _document_with_wrong_values], ids=["not-a-mapping", "bad-values"]
)
def test_cache_file_with_wrong_entries_is_ignored(
    prism: Runner, cache_dir: Path, damage: Callable[[Any], Any]
) -> None:
    """A cache file that is valid JSON but holds no valid device documents only costs speed
    (the cache's contract: a damaged cache never costs correctness)."""
    reference = prism("devices", "--json")
    (path,) = [p for p in _cache_files(cache_dir) if p.suffix == ".json"]  # beside its key
    data = json.loads(path.read_bytes())
    assert isinstance(data, dict)
    entries = json.loads(data["entries"])  # the entries' JSON text, beside its checksum
    assert isinstance(entries, dict) and entries, "unexpected cache layout"
    data["entries"] = json.dumps({key: damage(doc) for key, doc in entries.items()})
    path.write_text(json.dumps(data), encoding="utf-8")

    again = prism("devices", "--json")
    assert again.returncode == 0, again.output
    assert again.stdout == reference.stdout


def test_unwritable_cache_location_is_harmless(prism: Runner, tmp_path: Path) -> None:
    blocker = write(tmp_path / "not-a-directory", "a file where the cache directory should be")
    r = prism("validate", str(HARDWARE), env={"PRISM_CACHE_DIR": str(blocker / "cache")})
    assert r.returncode == 0, r.output
    assert blocker.read_text(encoding="utf-8") == "a file where the cache directory should be"


# -- output pipes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("args", [("devices",), ("schema",), ("show", "nvidia.h100-sxm")])
def test_closed_stdout_is_handled_quietly(
    tmp_path: Path, cache_dir: Path, args: tuple[str, ...]
) -> None:
    """``prism devices | head -0``: the reader has gone; no traceback, no noise."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader at all, from the start
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "prism_core", *args],
            cwd=tmp_path,
            env=_environment(cache_dir, None),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=HANG_GUARD_S,
            check=False,
        )
    finally:
        os.close(write_end)
    assert "Traceback" not in proc.stderr
    assert "Exception ignored" not in proc.stderr
    assert proc.returncode == 1
