"""The conformance suite as a pytest plugin: ``pytest --prism-backend NAME``.

prism-core registers this module through the ``pytest11`` entry point (as ``prism``), so every
pytest in an environment with Prism has the option.  With it, the session gets one test item per
check of :func:`prism_core.testing.conformance_checks` for each named backend, with readable ids
such as ``test_conformance[numpy.fft.fft-dtype-complex64]``, next to whatever else it collects;
``-k`` selects among them as among any tests.  A failed check reports what was seen, a skipped
one its reason (a ``can_run`` that declines an input, a backend that is unavailable here).

Without ``--prism-backend`` the plugin adds nothing: it registers the option, and imports neither
the suite, NumPy, nor Prism's plugins.  ``-p no:prism`` disables it altogether.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from prism_core.testing._conformance import Check

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


def pytest_configure(config: pytest.Config) -> None:
    names = config.getoption("prism_backends", default=[])
    if names:
        config.pluginmanager.register(_Conformance(list(dict.fromkeys(names))), "prism-conformance")


class ConformanceFailure(AssertionError):
    """A check of the conformance suite failed; the message says what was seen."""


class _Backend(pytest.Collector):
    """The checks of one backend (their items are made by the plugin, not collected)."""

    def collect(self) -> list[Any]:
        return []


class ConformanceItem(pytest.Item):
    """One check of the conformance suite, as a test."""

    def __init__(self, *, check: Check, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check = check

    def runtest(self) -> None:
        from prism_core.testing._judging import FAILED, SKIPPED

        result = self.check.run()
        if result.status == SKIPPED:
            pytest.skip(result.detail)
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


class _Conformance:
    """Adds the items of the named backends to the session."""

    def __init__(self, backends: list[str]) -> None:
        self.backends = backends

    @pytest.hookimpl(tryfirst=True)  # before -k and -m deselect among the items
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        import prism_core
        from prism_core.testing._conformance import conformance_checks

        for name in self.backends:
            try:
                checks = conformance_checks(name)
            except (
                prism_core.extending.PluginError
            ) as exc:  # no such backend (with the close matches)
                raise pytest.UsageError(f"{OPTION} {name}: {exc}") from None
            node = f"prism-backend-{name}"
            parent = _Backend.from_parent(session, name=node, nodeid=node)
            made = [
                ConformanceItem.from_parent(
                    parent, name=f"test_conformance[{check.name}]", check=check
                )
                for check in checks
            ]
            # Reported as collected, as a collector's items are: the terminal's count ("N
            # tests collected", "collected N items") is of the items in collection reports.
            session.ihook.pytest_collectreport(
                report=pytest.CollectReport(parent.nodeid, "passed", None, list[Any](made))
            )
            items.extend(made)
