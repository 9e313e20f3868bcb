"""Whose a placed function's failure is, and what it rules out: the caller's own errors reach
the caller; a backend whose immutable arrays refuse the body's in-place updates is declined for
good; a placement that worked on copies only leaves the caller's arrays as they were."""

from __future__ import annotations

import ast
import inspect
import linecache
import textwrap
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from prism_core._function.arguments import leaves
from prism_core._function.candidates import PlacementCandidate, traits
from prism_core.kernel.dispatch.fallback import CALLER_ERRORS

if TYPE_CHECKING:
    from prism_core.kernel.contract.backend import Backend

__all__ = [
    "MUTATES",
    "copied_only",
    "immutable",
    "is_callers",
    "mutation_refused",
    "updated_parameters",
]

#: The reason a backend with immutable arrays is declined for a function that updates arrays in
#: place (its arguments, or arrays it made) (said by ``explain`` and recorded for good).
MUTATES = "updates arrays in place; {} arrays are immutable"


def updated_parameters(fn: Callable[..., Any]) -> frozenset[str]:
    """The parameters the body updates with an augmented assignment (``a += b``): on NumPy
    that changes the caller's array, on immutable arrays it only rebinds the name, so such a
    function cannot run there without losing the update.  Empty when the source is not found."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    names = set(inspect.signature(fn).parameters)
    return frozenset(
        node.target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Name)
        and node.target.id in names
    )


def immutable(backend: Backend) -> bool:
    """Whether ``backend`` is available here and its arrays cannot be updated in place."""
    from prism_core.kernel.dispatch.eligibility import available

    if not available(backend):
        return False
    found = traits(backend)
    return found.own_arrays and not found.mutable


def is_callers(fn: Callable[..., Any], exc: BaseException, candidate: PlacementCandidate) -> bool:
    """Whether ``exc`` is the caller's (reaches them unchanged) rather than the
    placement's: errors of the caller's kind (``CALLER_ERRORS``) and what the function's
    own code raises are the caller's; an immutable array refusing an update is not."""
    if mutation_refused(exc, candidate):
        return False
    if isinstance(exc, CALLER_ERRORS):
        return True
    if type(exc).__module__ == getattr(fn, "__module__", None):
        return True  # the function's own exception class
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None:
        return False
    code = getattr(fn, "__code__", None)
    if code is None or tb.tb_frame.f_code.co_filename != code.co_filename:
        return False
    line = linecache.getline(tb.tb_frame.f_code.co_filename, tb.tb_lineno).strip()
    return line.startswith("raise")  # a `raise` in the function's own code


def mutation_refused(exc: BaseException, candidate: PlacementCandidate) -> bool:
    """Whether ``exc`` is ``candidate``'s immutable arrays refusing an update in place."""
    runner = candidate.runner
    return (
        isinstance(exc, TypeError)
        and "immutable" in str(exc)
        and runner is not None
        and not traits(runner).mutable
    )


def copied_only(
    candidate: PlacementCandidate, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> bool:
    """Whether the failed placement worked only on copies (the caller's arrays are as they
    were, so another placement may run the call again)."""
    runner = candidate.runner
    if runner is None or not traits(runner).mutable:
        return True
    from prism_core.kernel.plugins import plugins

    ps = plugins()
    return all(
        ps.owner(leaf) is not runner and runner.transfer == "copy"
        for v in (*args, *kwargs.values())
        for leaf in leaves(v)
    )
