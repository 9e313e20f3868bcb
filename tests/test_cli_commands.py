"""The commands plugins add to ``prism`` (entry points of ``prism.commands``, read by
prism_core/_cli/plugin_commands.py): a working one runs as the builtin commands do; a broken one
says what is wrong in one line naming its distribution and entry point, and never breaks the
others.

Each test installs throwaway distributions (a ``.dist-info`` with ``entry_points.txt`` and a
module beside it, on ``PYTHONPATH``) and runs ``python -m prism_core`` as a real subprocess.
The genomics plugin's own ``prism genomics`` is tested in its suite
(plugins/prism-plugin-genomics/tests).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

#: A working command: ``prism hello NAME [--fail]``.
HELLO = """
import argparse

def add(subparsers):
    p = subparsers.add_parser("hello", help="say hello", description="Say hello to NAME.")
    p.add_argument("name")
    p.add_argument("--crash", action="store_true")
    p.set_defaults(func=run)

def run(args, out, err):
    if args.crash:
        raise RuntimeError("the hello plugin crashed")
    out.write(f"hello {args.name}\\n")
    return 0
"""

#: Commands that cannot be added, each a way to be broken.
BROKEN = """
def raises(subparsers):
    raise ValueError("cannot add myself")

def adds_another(subparsers):
    subparsers.add_parser("elsewhere").set_defaults(func=lambda args, out, err: 0)

def no_handler(subparsers):
    subparsers.add_parser("nohandler", help="a command without a handler")

def half(subparsers):
    p = subparsers.add_parser("half")
    p.add_argument("needed")
    raise RuntimeError("failed half-way")

def devices(subparsers):
    raise AssertionError("a command named like a builtin one is never asked to add itself")

NOT_A_FUNCTION = 42
"""

ENTRY_POINTS = """\
[prism.commands]
hello = hello_command:add
missing = no_such_module_anywhere:add
raising = broken_commands:raises
other = broken_commands:adds_another
nohandler = broken_commands:no_handler
half = broken_commands:half
devices = broken_commands:devices
number = broken_commands:NOT_A_FUNCTION
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A directory with the throwaway distribution ``prism-demo-commands`` 1.2 and its
    modules."""
    site = tmp_path / "site"
    info = site / "prism_demo_commands-1.2.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: prism-demo-commands\nVersion: 1.2\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    (site / "hello_command.py").write_text(textwrap.dedent(HELLO), encoding="utf-8")
    (site / "broken_commands.py").write_text(textwrap.dedent(BROKEN), encoding="utf-8")
    return site


def prism(site: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=200,
        check=False,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    return proc


def test_a_plugins_command_runs_as_a_builtin_one(site: Path) -> None:
    done = prism(site, "hello", "world")
    assert (done.returncode, done.stdout, done.stderr) == (0, "hello world\n", "")
    usage = prism(site, "hello")
    assert usage.returncode == 2
    assert "prism hello: error: the following arguments are required: name" in usage.stderr
    listed = prism(site, "--help")
    assert listed.returncode == 0
    assert "say hello" in listed.stdout


def test_a_plugins_command_that_crashes_names_its_distribution(site: Path) -> None:
    done = prism(site, "hello", "world", "--crash")
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        "prism hello: internal error: RuntimeError: the hello plugin crashed",
        "This is a bug in prism-demo-commands 1.2 (entry point 'hello = hello_command:add' in "
        "'prism.commands'). Run again with PRISM_DEBUG=1 for the traceback, and please report "
        "it.",
    ]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        (
            "missing",
            "(entry point 'missing = no_such_module_anywhere:add' in 'prism.commands') failed: "
            "ModuleNotFoundError: No module named 'no_such_module_anywhere'",
        ),
        ("raising", "failed: ValueError: cannot add myself"),
        ("other", "failed: LookupError: it added no command named 'other'"),
        (
            "nohandler",
            "failed: LookupError: its command 'nohandler' has no handler: set_defaults(func=...) "
            "on its parser",
        ),
        ("half", "failed: RuntimeError: failed half-way"),
        ("number", "failed: TypeError: broken_commands:NOT_A_FUNCTION is a int, not a function"),
    ],
)
def test_a_broken_command_says_why_in_one_line(site: Path, name: str, why: str) -> None:
    # Whatever the arguments: the command's own parser never ran.
    for args in ((name,), (name, "--json", "x", "-h")):
        done = prism(site, *args)
        assert done.returncode == 1, done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"prism {name}: error: prism-demo-commands 1.2 "), line
        assert why in line, line
        assert done.stdout == ""


def test_broken_commands_never_break_the_others(site: Path) -> None:
    listed = prism(site, "--help")
    assert listed.returncode == 0, listed.stderr
    assert "(broken) prism-demo-commands 1.2" in listed.stdout
    # Those that added no command are listed as broken (the two that added theirs before
    # failing keep their own line); `devices` is the builtin's, never asked of the plugin.
    assert listed.stdout.count("(broken)") == 4
    assert "list the device descriptions on the search path" in listed.stdout
    assert prism(site, "hello", "again").stdout == "hello again\n"
    # A builtin command is never replaced (nor asked of a plugin: `devices` would raise).
    devices = prism(site, "devices", "--kind", "quantum")
    assert (devices.returncode, devices.stdout.strip()) == (0, "no devices match")
    unknown = prism(site, "hello", "world", "--louder")
    assert unknown.returncode == 2
    assert "unrecognized arguments: --louder" in unknown.stderr
