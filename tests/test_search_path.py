"""Hostile search paths: symlink loops, special files, huge files, unreadable entries.

Each case runs the real ``prism`` command line in a subprocess on real files and directories made
in ``tmp_path`` (symbolic links, FIFOs, sparse files, ``chmod 000``).  Whatever is wrong must come
back as a located problem (exit status 1), never as an internal error (exit status 3), a hang or
a run out of memory, and nothing on the search path may be skipped without a word.

Where reading would use a lot of memory, the subprocess runs with a limit on its address space,
so that reading a whole 1 GiB file (or ``/dev/zero``) fails loudly instead of succeeding slowly.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from prism_core.hardware import DeviceLibrary, SearchEntry
from prism_core.kernel.description.device_files import read_device_file
from prism_core.kernel.description.yaml_loader import MAX_BYTES

POSIX = sys.platform != "win32"
needs_posix = pytest.mark.skipif(not POSIX, reason="symbolic links, FIFOs and modes are POSIX")

#: A guard against a hung process (a FIFO that blocks), not a performance expectation.
HANG_GUARD_S = 20
#: Address-space limit for runs that must not read a huge input whole.  Python with Prism's
#: imports fits in well under this; a 1 GiB buffer does not.
MEMORY_LIMIT = 512 * 1024 * 1024

DEVICE = "device_type: lab.ok\nkind: cpu\n"


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


def run_prism(
    tmp_path: Path,
    *args: str,
    env: Mapping[str, str] | None = None,
    preexec: Callable[[], None] | None = None,
) -> Result:
    full_env = {
        k: v for k, v in os.environ.items() if k not in ("PRISM_HARDWARE_PATH", "PRISM_DEBUG")
    }
    full_env["PRISM_CACHE_DIR"] = str(tmp_path / "prism-cache")
    full_env["PYTHONIOENCODING"] = "utf-8"
    full_env.update(env or {})
    proc = subprocess.run(
        [sys.executable, "-m", "prism_core", *args],
        cwd=tmp_path,
        env=full_env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=HANG_GUARD_S,
        preexec_fn=preexec,
        check=False,
    )
    result = Result(proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in result.output, result.output
    assert "internal error" not in result.output, result.output
    return result


def limit_memory() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# -- 11: symbolic link loops ------------------------------------------------------------------


@needs_posix
def test_symlink_loop_as_a_search_path_entry_is_a_located_problem(tmp_path: Path) -> None:
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    result = run_prism(tmp_path, "devices", env={"PRISM_HARDWARE_PATH": str(tmp_path / "loop1")})
    assert result.returncode == 1, result.output
    assert "nvidia.h100-sxm" in result.stdout  # everything else still loads
    assert "PRISM_HARDWARE_PATH entry" in result.stderr
    assert "loop1" in result.stderr and "symbolic link loop" in result.stderr, result.stderr


@needs_posix
def test_symlink_loop_entry_does_not_break_the_python_api(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to("loop")
    code = (
        "import warnings, numpy, prism_core\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    names = {d.device_type for d in prism_core.hardware.devices()}\n"
        "assert 'nvidia.h100-sxm' in names, names\n"
        "assert any('symbolic link loop' in str(w.message) for w in caught), caught\n"
        "with warnings.catch_warnings():\n"
        "    warnings.simplefilter('ignore')\n"
        "    print(prism_core.matmul(numpy.eye(2), numpy.ones((2, 2))).sum())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PRISM_DEBUG"}
    env.update(PRISM_HARDWARE_PATH=str(tmp_path / "loop"), PRISM_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_GUARD_S * 3,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "4.0"


@needs_posix
def test_symlink_loops_inside_a_directory_are_located_problems(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    (lib / "self.yaml").symlink_to("self.yaml")  # a file link pointing to itself
    (lib / "a").symlink_to("b")  # two links pointing to each other
    (lib / "b").symlink_to("a")
    (lib / "sub").mkdir()
    (lib / "sub" / "up").symlink_to("..")  # a directory link back to an ancestor
    result = run_prism(tmp_path, "devices", "--json", env={"PRISM_HARDWARE_PATH": str(lib)})
    assert result.returncode == 1, result.output
    assert "lab.ok" in {d["device_type"] for d in result.json()}
    lines = [line.strip() for line in result.stderr.splitlines()]
    for name in ("self.yaml", "a", "b"):
        assert any(
            line.startswith(f"lib/{name}:") and "symbolic link loop" in line for line in lines
        ), (name, result.stderr)
    assert any(
        line.startswith("lib/sub/up:") and "symbolic link loop" in line and "'lib'" in line
        for line in lines
    ), result.stderr


@needs_posix
def test_validating_a_looping_link_names_the_loop(tmp_path: Path) -> None:
    (tmp_path / "self.yaml").symlink_to("self.yaml")
    result = run_prism(tmp_path, "validate", "self.yaml")
    assert result.returncode == 1, result.output
    assert "self.yaml: symbolic link loop" in result.stdout, result.stdout


@needs_posix
def test_linked_directories_are_searched(tmp_path: Path) -> None:
    write(tmp_path / "elsewhere" / "linked.yaml", "device_type: lab.linked\nkind: gpu\n")
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    (lib / "more").symlink_to(tmp_path / "elsewhere")
    (lib / "again").symlink_to(tmp_path / "elsewhere")  # the same directory twice: read once
    result = run_prism(tmp_path, "devices", "--json", env={"PRISM_HARDWARE_PATH": str(lib)})
    assert result.returncode == 0, result.output
    assert {"lab.ok", "lab.linked"} <= {d["device_type"] for d in result.json()}


@needs_posix
def test_broken_link_on_the_search_path_is_reported(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    (lib / "gone.yaml").symlink_to("nowhere.yaml")
    result = run_prism(tmp_path, "devices", env={"PRISM_HARDWARE_PATH": str(lib)})
    assert result.returncode == 1, result.output
    assert "lib/gone.yaml: broken symbolic link to 'nowhere.yaml'" in result.stderr, result.stderr


# -- 13: size before reading, special files ---------------------------------------------------


@needs_posix
@pytest.mark.timeout(60)
def test_huge_file_on_the_search_path_is_refused_before_reading(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    with open(lib / "huge.yaml", "wb") as fh:  # sparse: 1 GiB that takes no disk space
        fh.truncate(1 << 30)
    result = run_prism(
        tmp_path, "devices", env={"PRISM_HARDWARE_PATH": str(lib)}, preexec=limit_memory
    )
    assert result.returncode == 1, result.output
    assert (
        f"lib/huge.yaml:1:1: the file is 1,073,741,824 bytes; device files may be at most "
        f"{MAX_BYTES:,}" in result.stderr
    ), result.stderr


@needs_posix
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero on this system")
def test_validating_dev_zero_is_refused(tmp_path: Path) -> None:
    result = run_prism(tmp_path, "validate", "/dev/zero", preexec=limit_memory)
    assert result.returncode == 1, result.output
    assert "/dev/zero: not a regular file (a character device)" in result.stdout, result.stdout


@needs_posix
@pytest.mark.timeout(30)
def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    result = run_prism(tmp_path, "validate", "pipe.yaml")
    assert result.returncode == 1, result.output
    assert "pipe.yaml: not a regular file (a FIFO)" in result.stdout, result.stdout


@needs_posix
@pytest.mark.timeout(30)
def test_fifo_on_the_search_path_is_reported(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    os.mkfifo(lib / "pipe.yaml")
    result = run_prism(tmp_path, "devices", env={"PRISM_HARDWARE_PATH": str(lib)})
    assert result.returncode == 1, result.output
    assert "lib/pipe.yaml: not a regular file (a FIFO)" in result.stderr, result.stderr


@needs_posix
@pytest.mark.timeout(30)
def test_fifo_as_a_search_path_entry_is_reported(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    result = run_prism(tmp_path, "devices", env={"PRISM_HARDWARE_PATH": str(tmp_path / "pipe")})
    assert result.returncode == 1, result.output
    assert "pipe: PRISM_HARDWARE_PATH entry" in result.stderr, result.stderr
    assert "not a regular file or directory (a FIFO)" in result.stderr, result.stderr


def test_directory_where_a_file_is_expected_is_refused(tmp_path: Path) -> None:
    (tmp_path / "dir.yaml").mkdir()
    entry = SearchEntry(tmp_path, "command line", files=(tmp_path / "dir.yaml",))
    dev, problems = read_device_file(tmp_path / "dir.yaml", entry, None)
    assert dev is None
    assert len(problems) == 1
    assert problems[0].message.startswith("not a regular file (a directory);"), problems


def test_size_limit_allows_exactly_the_limit(tmp_path: Path) -> None:
    text = DEVICE + "#" * (MAX_BYTES - len(DEVICE) - 1) + "\n"
    write(tmp_path / "lib" / "big.yaml", text)
    assert (tmp_path / "lib" / "big.yaml").stat().st_size == MAX_BYTES
    write(tmp_path / "lib2" / "bigger.yaml", text + "\n")
    lib = DeviceLibrary(
        [SearchEntry(tmp_path / "lib", "user"), SearchEntry(tmp_path / "lib2", "user")],
        use_cache=False,
    )
    assert "lab.ok" in lib
    assert [p.message for p in lib.problems] == [
        f"the file is {MAX_BYTES + 1:,} bytes; device files may be at most {MAX_BYTES:,}"
    ]


# -- 15: unreadable entries -------------------------------------------------------------------

_CAP_DAC_OVERRIDE = 1
_CAP_DAC_READ_SEARCH = 2
_PR_CAPBSET_DROP = 24


def _drop_root_file_access() -> None:
    """In the child, before exec: give up root's right to ignore file modes.

    Root (uid 0) reads ``chmod 000`` files through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH.
    Removing them from the capability bounding set makes the exec'd program an ordinary
    owner of the files, to which mode 000 applies.
    """
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def _unreadable_runner(probe: Path) -> Callable[[], None] | None:
    """What makes ``chmod 000`` stop reads in a subprocess; skips the test where nothing can."""
    if not POSIX:
        pytest.skip("file modes do not stop reads on this platform")
    if os.geteuid() != 0:
        return None
    if not sys.platform.startswith("linux"):
        pytest.skip("running as root, and dropping root's file access needs Linux capabilities")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", f"open({str(probe)!r}).read()"],
            preexec_fn=_drop_root_file_access,
            capture_output=True,
            text=True,
            timeout=HANG_GUARD_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"running as root and cannot drop CAP_DAC_OVERRIDE in a subprocess: {exc}")
    if "PermissionError" not in proc.stderr:
        pytest.skip(
            "running as root and dropping CAP_DAC_OVERRIDE/CAP_DAC_READ_SEARCH did not make a "
            f"mode-000 file unreadable: {proc.stderr.strip() or 'it was read'}"
        )
    return _drop_root_file_access


@needs_posix
def test_unreadable_directories_and_files_are_reported(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    write(lib / "locked" / "hidden.yaml", "device_type: lab.hidden\n")
    write(lib / "listable" / "inside.yaml", "device_type: lab.inside\n")
    secret = write(lib / "secret.yaml", "device_type: lab.secret\n")
    secret.chmod(0)
    (lib / "locked").chmod(0)
    (lib / "listable").chmod(stat.S_IRUSR)  # names can be listed, nothing can be opened
    try:
        preexec = _unreadable_runner(secret)
        result = run_prism(
            tmp_path, "devices", "--json", env={"PRISM_HARDWARE_PATH": str(lib)}, preexec=preexec
        )
    finally:
        (lib / "locked").chmod(0o755)
        (lib / "listable").chmod(0o755)
        secret.chmod(0o644)
    assert result.returncode == 1, result.output
    assert "lab.ok" in {d["device_type"] for d in result.json()}
    err = result.stderr
    assert "lib/secret.yaml: cannot read the file: Permission denied" in err, err
    assert "lib/locked: cannot read the directory: Permission denied" in err, err
    assert "lib/listable/inside.yaml: cannot read the file: Permission denied" in err, err


@needs_posix
def test_unreadable_search_path_entry_is_reported(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    write(lib / "ok.yaml", DEVICE)
    lib.chmod(0)
    try:
        preexec = _unreadable_runner(lib / "ok.yaml")
        result = run_prism(
            tmp_path, "devices", env={"PRISM_HARDWARE_PATH": str(lib)}, preexec=preexec
        )
    finally:
        lib.chmod(0o755)
    assert result.returncode == 1, result.output
    assert "lib: cannot read the directory: Permission denied" in result.stderr, result.stderr
