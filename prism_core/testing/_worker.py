"""Checks run in a worker process, so that a native crash or a hang costs one check, not the run.

A backend's library can kill the process that calls it (a ``SIGFPE`` from a 0x0 ``inv``, a
``SIGSEGV``, an ``abort()``) or never return.  In the process of the test run, either ends the
run where it is, without naming the check and without a summary.  So the pytest plugin runs
each backend's checks in a worker, ``python -m prism_core.testing._worker BACKEND``, which plans
the backend's checks once (as :func:`prism_core.testing.conformance_checks` does in the parent)
and then runs the check the parent names, one at a time, answering with its result:

* a worker that dies while running a check makes that check *crashed*, with the signal or exit
  status (``crashed: SIGFPE in mlx.linalg.inv-values-float32-empty``); the next check starts a
  new worker;
* a check that does not answer within the timeout makes it *hung*: the parent kills the worker
  (``hung (over 120 s) in ...``) and the next check starts a new one.

The protocol: one check name a line on the worker's stdin; one JSON object a line on a private
duplicate of its stdout (``{"ready": N}`` once the checks are planned, then
``{"status": ..., "detail": ...}`` for each check).  Whatever a check prints goes to stderr
(the worker's file descriptor 1 is pointed there), which the worker shares with the parent, so
that pytest captures it with the check that printed it; :mod:`faulthandler` writes the Python
stack of a crash there too.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
from typing import IO, Any

from prism_core.testing._judging import FAILED, Check, CheckResult

__all__ = ["CRASHED", "DEFAULT_TIMEOUT_S", "HUNG", "Workers"]

CRASHED, HUNG = "crashed", "hung"

#: The time a check may take in a worker before it counts as hung (``--prism-timeout``): long
#: enough for a first call that compiles (JAX, Numba) on a slow machine.
DEFAULT_TIMEOUT_S = 120.0

#: The least time a worker gets to start: import Prism and the backend's framework, ask its
#: availability and plan its checks (torch or JAX alone take seconds to import).
START_TIMEOUT_S = 300.0


def _how_it_ended(returncode: int | None) -> str:
    """``SIGFPE``, ``exit status 3``: how a worker process ended, in words."""
    if returncode is None:
        return "closed its output without exiting"
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


class _Worker:
    """One worker process of one backend, and the thread that reads its answers."""

    def __init__(self, backend: str) -> None:
        env = dict(os.environ)
        # The worker imports what this process can: the plugins a conftest or ``-p`` put on
        # sys.path, not only those of PYTHONPATH.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.backend = backend
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "prism_core.testing._worker", backend],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
        )
        self.answers: queue.Queue[dict[str, Any] | None] = queue.Queue()
        assert self.proc.stdout is not None
        threading.Thread(
            target=self._read, args=(self.proc.stdout,), daemon=True, name=f"prism-{backend}"
        ).start()

    def _read(self, stream: IO[bytes]) -> None:
        for line in stream:
            try:
                self.answers.put(json.loads(line))
            except ValueError:
                continue  # not an answer (the protocol's descriptor is private; defensive)
        self.answers.put(None)

    def answer(self, timeout_s: float | None) -> dict[str, Any] | None:
        """The next answer; ``None`` when the worker died; raises ``queue.Empty`` on timeout."""
        return self.answers.get(timeout=timeout_s)

    def ask(self, name: str) -> bool:
        """Send a check's name; False when the worker is gone."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(name.encode("utf-8") + b"\n")
            self.proc.stdin.flush()
        except OSError:  # BrokenPipeError: it died
            return False
        return True

    def ended(self) -> str:
        """How the worker ended (it closed its output: it has exited or is about to)."""
        try:
            return _how_it_ended(self.proc.wait(timeout=10))
        except subprocess.TimeoutExpired:
            self.kill()
            return _how_it_ended(None)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self._close_pipes()

    def close(self) -> None:
        """Let the worker finish (its stdin closes), or kill it."""
        if self.proc.poll() is None:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._close_pipes()

    def _close_pipes(self) -> None:
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()


class Workers:
    """The worker processes of a test run: one per backend, started on its first check and
    again after one dies.  ``timeout_s`` (``None``: no limit) is the time one check may take.
    """

    def __init__(self, timeout_s: float | None = DEFAULT_TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        self._running: dict[str, _Worker] = {}
        self._broken: dict[str, str] = {}  # backend: why its worker cannot start

    def run(self, backend: str, check: Check) -> CheckResult:
        """Run ``check`` of the installed backend ``backend`` in its worker."""

        def result(status: str, detail: str) -> CheckResult:
            return CheckResult(check.name, status, detail, check.subject, check.check)

        if backend in self._broken:
            return result(FAILED, self._broken[backend])
        worker = self._running.get(backend) or self._start(backend)
        if worker is None:
            return result(FAILED, self._broken[backend])
        if not worker.ask(check.name):
            self._forget(backend)
            return result(CRASHED, f"crashed: {worker.ended()} in {check.name}")
        try:
            answer = worker.answer(self.timeout_s)
        except BaseException as exc:
            # Interrupted (Ctrl-C, pytest-timeout's limit when shorter than ours) or timed out:
            # the worker is still busy with this check, and would answer it to the next one.
            self._forget(backend)
            worker.kill()
            if not isinstance(exc, queue.Empty):
                raise
            return result(
                HUNG,
                f"hung (over {self.timeout_s:g} s) in {check.name}: the worker process running "
                "it was killed (--prism-timeout sets the limit)",
            )
        if answer is None:
            self._forget(backend)
            return result(
                CRASHED,
                f"crashed: {worker.ended()} in {check.name} (the worker process running it "
                "died; what it wrote to stderr is captured with this check)",
            )
        return result(str(answer["status"]), str(answer.get("detail", "")))

    def _start(self, backend: str) -> _Worker | None:
        worker = _Worker(backend)
        limit = None if self.timeout_s is None else max(self.timeout_s, START_TIMEOUT_S)
        try:
            answer = worker.answer(limit)
        except BaseException as exc:
            worker.kill()
            if not isinstance(exc, queue.Empty):
                raise
            why = f"hung (over {limit:g} s) while importing the backend and planning its checks"
        else:
            if answer is not None and "ready" in answer:
                self._running[backend] = worker
                return worker
            if answer is None:
                why = f"crashed ({worker.ended()}) while planning the checks"
            else:
                worker.close()
                why = f"could not plan the checks: {answer.get('error')}"
        self._broken[backend] = (
            f"the conformance worker process of backend {backend!r} {why}; no check of "
            f"{backend!r} can run isolated (--prism-no-isolate runs them in this process)"
        )
        return None

    def _forget(self, backend: str) -> None:
        self._running.pop(backend, None)

    def close(self) -> None:
        for worker in self._running.values():
            worker.close()
        self._running.clear()


# -- the worker process -----------------------------------------------------------------------


def main(argv: list[str]) -> int:
    """``python -m prism_core.testing._worker BACKEND``: plan the checks of BACKEND, then run
    the check named on each line of stdin."""
    import faulthandler

    (backend,) = argv
    # Answers go through a private duplicate of stdout; anything a check prints goes to stderr.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    faulthandler.enable()

    def send(message: dict[str, Any]) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        answers.write(json.dumps(message) + "\n")

    from prism_core.kernel.errors import describe_exception
    from prism_core.testing._conformance import conformance_checks

    try:
        checks = {c.name: c for c in conformance_checks(backend)}
    except Exception as exc:
        send({"error": describe_exception(exc)})
        return 1
    send({"ready": len(checks)})
    for line in sys.stdin:
        name = line.rstrip("\n")
        check = checks.get(name)
        if check is None:
            found = CheckResult(
                name,
                FAILED,
                f"the worker process planned no check {name!r} for backend {backend!r}: the "
                "backend's checks differ between two processes",
            )
        else:
            found = check.run()
        send({"status": found.status, "detail": found.detail})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
