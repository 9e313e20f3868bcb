"""The conformance suite as a pytest plugin: ``pytest --prism-backend NAME``.

prism-core registers this module through the ``pytest11`` entry point (as ``prism``), so every
pytest in an environment with Prism has the option.  With it, the session gets one test item per
check of :func:`prism_core.testing.conformance_checks` for each named backend, with readable ids
such as ``test_conformance[numpy.fft.fft-dtype-complex64]``, next to whatever else it collects;
``-k`` selects among them as among any tests.  A failed check reports what was seen, a skipped
one its reason (a ``can_run`` that declines an input, a backend that is unavailable here).

The checks run in a worker process per backend (``--prism-isolate``, the default), so that a
native crash or a hang in the backend's library costs one check, not the run: a worker killed
by a signal makes the check it was running fail as *crashed* (``crashed: SIGFPE in
mlx.linalg.inv-values-float32-empty``), a check that takes longer than ``--prism-timeout``
seconds fails as *hung* (the worker is killed), and the next check starts a new worker.  At the
end, a summary counts each backend's checks passed, failed, crashed, hung and skipped, and names
those that crashed or hung.  ``--prism-no-isolate`` runs the checks in pytest's own process
(for a debugger, or to see a crash as it happens).

Without ``--prism-backend`` the plugin adds nothing: it registers the options, and imports
neither the suite, NumPy, nor Prism's plugins.  ``-p no:prism`` disables it altogether.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from prism_core.testing._conformance import Check
    from prism_core.testing._worker import Workers

__all__ = ["ConformanceFailure", "ConformanceItem"]

OPTION = "--prism-backend"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("prism", "Prism backend conformance")
    group.addoption(
        OPTION,
        action="append",
        default=[],
        metavar="NAME",
        dest="prism_backends",
        help="run Prism's conformance suite on the installed backend NAME: one test per "
        "operation and check (repeatable)",
    )
    group.addoption(
        "--prism-isolate",
        action="store_true",
        default=True,
        dest="prism_isolate",
        help="run the conformance checks in a worker process per backend, restarted when a "
        "native crash or a hang ends it (the default)",
    )
    group.addoption(
        "--prism-no-isolate",
        action="store_false",
        dest="prism_isolate",
        help="run the conformance checks in pytest's own process (a crash ends the run)",
    )
    group.addoption(
        "--prism-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        dest="prism_timeout",
        help="the time one isolated conformance check may take before it counts as hung and "
        "its worker is killed (default: 120; 0: no limit)",
    )


def pytest_configure(config: pytest.Config) -> None:
    names = config.getoption("prism_backends", default=[])
    if names:
        timeout = config.getoption("prism_timeout", default=None)
        if timeout is not None and timeout < 0:
            raise pytest.UsageError(f"--prism-timeout {timeout:g}: expected seconds >= 0")
        plugin = _Conformance(
            list(dict.fromkeys(names)),
            isolate=bool(config.getoption("prism_isolate", default=True)),
            timeout_s=timeout,
        )
        config.pluginmanager.register(plugin, "prism-conformance")


class ConformanceFailure(AssertionError):
    """A check of the conformance suite failed; the message says what was seen."""


class _Backend(pytest.Collector):
    """The checks of one backend (their items are made by the plugin, not collected)."""

    def collect(self) -> list[Any]:
        return []


class ConformanceItem(pytest.Item):
    """One check of the conformance suite, as a test."""

    def __init__(
        self, *, check: Check, backend: str = "", workers: Workers | None = None, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.check = check
        self.backend = backend
        self.workers = workers  # None: the check runs in this process

    def runtest(self) -> None:
        from prism_core.testing._judging import FAILED, SKIPPED
        from prism_core.testing._worker import CRASHED, HUNG

        if self.workers is None:
            result = self.check.run()
        else:
            result = self.workers.run(self.backend, self.check)
        if result.status == SKIPPED:
            pytest.skip(result.detail)
        if result.status in (CRASHED, HUNG):
            # Carried with the report (to xdist's controller too) for the summary.
            self.user_properties.append((_OUTCOME, result.status))
            # "crashed: SIGFPE", "hung (over 120 s)": what the summary says of it.
            self.user_properties.append((_WHY, result.detail.split(f" in {self.check.name}")[0]))
            raise ConformanceFailure(result.detail)
        if result.status == FAILED:
            raise ConformanceFailure(result.detail)

    def repr_failure(
        self,
        excinfo: pytest.ExceptionInfo[BaseException],
        style: Any = None,
    ) -> str | Any:
        if isinstance(excinfo.value, ConformanceFailure):
            return f"{self.check.name}: {excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        from prism_core.testing import _conformance

        return Path(_conformance.__file__), None, self.name


_OUTCOME, _WHY = "prism_conformance_outcome", "prism_conformance_why"
_NODE = "prism-backend-"


class _Conformance:
    """Adds the items of the named backends to the session, runs them (in worker processes
    where isolated) and sums up their outcomes."""

    def __init__(self, backends: list[str], *, isolate: bool, timeout_s: float | None) -> None:
        from prism_core.testing._worker import DEFAULT_TIMEOUT_S

        self.backends = backends
        self.isolate = isolate
        #: The time one isolated check may take; None: no limit (``--prism-timeout 0``).
        self.timeout_s = (DEFAULT_TIMEOUT_S if timeout_s is None else timeout_s) or None
        self.workers: Workers | None = None
        #: Each check's outcome (passed, failed, crashed, hung, skipped), by backend and name.
        self.outcomes: dict[str, dict[str, str]] = {}
        #: Why each check that crashed or hung did (``crashed: SIGFPE``), by backend and name.
        self.why: dict[str, dict[str, str]] = {}

    @pytest.hookimpl(tryfirst=True)  # before -k and -m deselect among the items
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        import prism_core
        from prism_core.testing._conformance import conformance_checks

        if self.isolate and self.workers is None:
            from prism_core.testing._worker import Workers

            self.workers = Workers(self.timeout_s)
        for name in self.backends:
            try:
                checks = conformance_checks(name)
            except (
                prism_core.extending.PluginError
            ) as exc:  # no such backend (with the close matches)
                raise pytest.UsageError(f"{OPTION} {name}: {exc}") from None
            node = f"{_NODE}{name}"
            parent = _Backend.from_parent(session, name=node, nodeid=node)
            made = [
                ConformanceItem.from_parent(
                    parent,
                    name=f"test_conformance[{check.name}]",
                    check=check,
                    backend=name,
                    workers=self.workers,
                )
                for check in checks
            ]
            # Reported as collected, as a collector's items are: the terminal's count ("N
            # tests collected", "collected N items") is of the items in collection reports.
            session.ihook.pytest_collectreport(
                report=pytest.CollectReport(parent.nodeid, "passed", None, list[Any](made))
            )
            items.extend(made)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        node, _, test = report.nodeid.partition("::")
        if not node.startswith(_NODE) or not test.startswith("test_conformance["):
            return
        backend, check = node[len(_NODE) :], test[len("test_conformance[") : -1]
        outcomes = self.outcomes.setdefault(backend, {})
        if report.skipped:
            outcomes[check] = "skipped"
        elif report.failed:
            # xdist sends the properties to its controller as lists, not tuples.
            said = dict(report.user_properties)
            outcomes[check] = str(said.get(_OUTCOME, "failed"))
            if _WHY in said:
                self.why.setdefault(backend, {})[check] = str(said[_WHY])
        elif report.when == "call":
            outcomes[check] = "passed"

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.outcomes or hasattr(terminalreporter.config, "workerinput"):
            return  # nothing ran, or an xdist worker (its controller sums up)
        write = terminalreporter.write_line
        terminalreporter.write_sep("=", "prism conformance summary")
        if self.isolate:
            limit = f"{self.timeout_s:g} s a check" if self.timeout_s else "no time limit"
            where = f"isolated in worker processes, {limit}"
        else:
            where = "in pytest's process (--prism-no-isolate)"

        for backend, outcomes in self.outcomes.items():
            counts = dict.fromkeys(("passed", "failed", "crashed", "hung", "skipped"), 0)
            for outcome in outcomes.values():
                counts[outcome] = counts.get(outcome, 0) + 1
            said = ", ".join(f"{n} {kind}" for kind, n in counts.items())
            write(f"{backend}: {said} ({where})")
            for kind in ("crashed", "hung"):
                names = sorted(check for check, outcome in outcomes.items() if outcome == kind)
                if names:
                    write(f"  {kind} ({len(names)}):")
                    why = self.why.get(backend, {})
                    for check in names:
                        write(f"    {check}: {why.get(check, kind)}")

    def pytest_sessionfinish(self) -> None:
        if self.workers is not None:
            self.workers.close()
