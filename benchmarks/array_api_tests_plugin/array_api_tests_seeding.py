"""A pytest plugin that makes a run of the Array API test suite repeatable, for
``benchmarks/array_api_tests.py`` (which loads it with ``-p array_api_tests_seeding``).

Three things make two runs of array-api-tests differ even with ``--hypothesis-seed``:

* Hypothesis's example database (``.hypothesis/`` in the suite's folder) replays the failures
  of earlier runs, whatever namespace they were of: it is switched off;
* the special-case tests draw their one input with ``strategy.example()``, which shuffles its
  examples with the global ``random`` module, whose state depends on the tests that ran before
  in the same worker (and so on how xdist shares them out): ``random`` is seeded from each
  test's id before it runs, so a test draws the same input in every run and for every
  namespace;
* shrinking a failure's example can take minutes on a slow namespace and changes nothing but
  the example reported: it is left out.
"""

from __future__ import annotations

import random
from typing import Any

import pytest


@pytest.hookimpl(trylast=True)
def pytest_configure(config: Any) -> None:
    # After the suite's conftest has loaded its profile ("array-api-tests": max_examples,
    # deadline): the same settings with no database and no shrinking.
    from hypothesis import Phase, settings

    settings.register_profile(
        "array-api-tests-repeatable",
        parent=settings.get_profile("array-api-tests"),
        database=None,
        phases=[Phase.explicit, Phase.generate],
    )
    settings.load_profile("array-api-tests-repeatable")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    random.seed(item.nodeid)
