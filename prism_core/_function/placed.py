"""``prism_core.function``: a whole function placed on one backend and device.

A call looks its signature (argument types, dtypes, where the arrays live) up in the function's
placement cache; on a miss it judges every backend (:mod:`prism_core._function.candidates`).
The arrays move there once, the body runs in that backend's scope (Prism ops and creation
functions make arrays there; operators and indexing run natively), arguments moved by copy are
written back into the caller's arrays, and results come back as the caller's kind.
docs/functions.md is the guide.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from prism_core._function.arguments import (
    HOST_ARRAYS,
    call_key,
    describe,
    identity,
    is_static,
    leaves,
    map_arrays,
    signature_text,
    size_bucket,
)
from prism_core._function.candidates import REFERENCE, PlacementCandidate, judge, traits
from prism_core._function.failures import (
    MUTATES,
    copied_only,
    immutable,
    is_callers,
    mutation_refused,
    updated_parameters,
)
from prism_core._function.policy import by_policy
from prism_core._function.report import FunctionDecision, FunctionReport
from prism_core._function.write_back import copy_array, restore, take_snapshot, write_back
from prism_core.kernel.dispatch import movement
from prism_core.kernel.dispatch.fallback import (
    BackendError,
    DispatchError,
    fallback_recording,
    record,
)
from prism_core.kernel.dispatch.interception import LENIENT
from prism_core.kernel.dispatch.registry import generation
from prism_core.kernel.dispatch.scope import SCOPE, current_scope
from prism_core.kernel.errors import describe_exception
from prism_core.kernel.quantities import seconds_text

if TYPE_CHECKING:
    from prism_core._tuning.function_tuning import FunctionTuning, PreparedRunner
    from prism_core.kernel.contract.backend import Backend
    from prism_core.kernel.dispatch.scope import Scope
    from prism_core.kernel.plugins import PluginSet

__all__ = ["PlacedFunction", "function"]


@dataclass(slots=True)
class _Entry:
    """A signature's placement: the candidates that can run it, best first, and the scope the
    body runs in on the first."""

    candidates: list[PlacementCandidate]
    home: Backend | None
    basis: str
    scopes: dict[str, Scope] = field(default_factory=dict)
    #: Every array is the chosen backend's own: nothing moves, nothing comes back.
    fast: bool = False
    #: A call has succeeded here: a failure cannot be retried from a copy of the arguments.
    proven: bool = False
    #: The scope the body runs in on the first candidate.
    scope: Scope | None = None
    #: What decided the order: "scope", "measured", "tie" or "declared" (untuned).
    decided_by: str = "declared"
    #: The first candidate's compilation of the body, which the fast path calls (``None``:
    #: the body runs eagerly).
    body: Callable[..., Any] | None = None
    #: The first candidate's ``Backend.numpy_defaults()``, which the fast path enters.
    context: Any = None

    def __post_init__(self) -> None:
        if self.candidates and self.scope is None:
            self.scope = self.scopes.get(self.candidates[0].backend)


class PlacedFunction:
    """A function placed whole on one backend and device per signature (``@prism_core.function``).

    Call it as the function.  :meth:`explain` says where a call would run and why, :meth:`run`
    gives the result with a :class:`FunctionReport`.
    """

    __module__ = "prism_core"

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        backends: Iterable[str] | None = None,
        requires: dict[str, Any] | None = None,
        keep: bool = False,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"prism_core.function() places a function; got {fn!r}")
        if isinstance(backends, str):
            raise TypeError(f"backends= takes a list of backend names; got {backends!r}")
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.backends = None if backends is None else tuple(backends)
        self.requires = None if requires is None else dict(requires)
        if self.requires:
            from prism_core.kernel.description.requirements import Requirement

            Requirement(self.requires)  # a requirement that cannot be read fails here, not per call
        self.keep = keep
        self.name: str = getattr(fn, "__qualname__", repr(fn))
        self._cache: dict[Any, _Entry] = {}
        self._generation = generation()
        self._lock = threading.Lock()
        #: Backends declined for good, with the reason (the body mutates immutable arrays).
        self.declined: dict[str, str] = {}
        self._updated: frozenset[str] | None = None
        self._identity: str | None = None
        #: Backends whose compiler could not trace the body, with the reason: eager there.
        self.eager: dict[str, str] = {}
        #: The compiled bodies, by backend and static arguments, and the calls they traced.
        self._compiled: dict[tuple[Any, ...], Callable[..., Any] | None] = {}
        self._traced: set[tuple[Any, ...]] = set()

    def __repr__(self) -> str:
        return f"<prism_core.function {self.name}>"

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        # A placed method: bound like the function it wraps.
        return self if instance is None else functools.partial(self, instance)

    # -- calling -----------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # The hot path: a cached placement where nothing moves costs the key, one lookup and
        # setting the scope (benchmarks/bench_function.py).
        key = call_key(args, kwargs)
        if self._generation != generation():
            self._reset()
        entry = self._cache.get(key)
        if entry is not None and entry.fast:
            token = SCOPE.set(entry.scope)
            try:
                if entry.body is None and entry.context is None:
                    return self.fn(*args, **kwargs)
                return self._call_body(
                    entry.body, entry.context, entry.candidates[0], args, kwargs, None
                )
            except Exception as exc:
                if is_callers(self.fn, exc, entry.candidates[0]):
                    raise
                failure = exc
            finally:
                SCOPE.reset(token)
            return self._run(key, entry, args, kwargs, None, failure)
        return self._run(key, entry, args, kwargs, None, None)

    def run(self, *args: Any, **kwargs: Any) -> tuple[Any, FunctionReport]:
        """``(result, report)``: the call, with where it ran, what moved, what was written
        back, the fallbacks and the time."""
        key = call_key(args, kwargs)
        if self._generation != generation():
            self._reset()
        report = FunctionReport(self.name)
        start = time.perf_counter()
        with movement.recording() as moves, fallback_recording() as fell:
            result = self._run(key, self._cache.get(key), args, kwargs, report, None)
        report.seconds = time.perf_counter() - start
        report.moves, report.fallbacks = list(moves), list(fell)
        return result, report

    def explain(self, *args: Any, **kwargs: Any) -> FunctionDecision:
        """Where ``self(*args, **kwargs)`` would run in the scope in force, without running it:
        every backend with why it can or cannot, the choice and what decided it."""
        entry, judged = self._plan(args, kwargs)
        chosen = entry.candidates[0] if entry.candidates else None
        basis, decided_by = entry.basis, entry.decided_by
        cached = self._cache.get(call_key(args, kwargs))
        first = cached.candidates[0].backend if cached is not None else None
        if chosen is not None and first is not None and first != chosen.backend:
            basis = f"{chosen.backend} failed earlier in this process (prism_core.fallbacks())"
            decided_by = "fallback"
            chosen = next((c for c in entry.candidates if c.backend == first), chosen)
        moving: list[str] = []
        if chosen is not None:
            from prism_core.kernel.plugins import plugins

            ps = plugins()
            for i, value in enumerate([*args, *kwargs.values()]):
                for leaf in leaves(value):
                    owner = ps.owner(leaf)
                    if owner is not None and owner.name == chosen.backend:
                        continue
                    what = movement.MoveRecord(
                        self.name,
                        i,
                        *movement.what(leaf),
                        movement.nbytes(leaf),
                        owner.name if owner else None,
                        chosen.backend,
                        chosen.device,
                        "DLPack (zero copy where the memory allows)"
                        if chosen.runner is not None
                        and chosen.runner.transfer == "dlpack"
                        and (chosen.target is None or chosen.target.kind in (None, "cpu"))
                        else movement.COPIED,
                    )
                    moving.append(what.describe())
        return FunctionDecision(
            function=self.name,
            signature=", ".join(describe(v) for v in [*args, *kwargs.values()]),
            scope=current_scope().as_dict(),
            candidates=tuple(judged),
            chosen=chosen.backend if chosen else None,
            chosen_device=chosen.device if chosen else None,
            basis=basis,
            data_movement=tuple(moving),
            decided_by=decided_by,
            compiled=self._how(chosen),
        )

    def _how(self, candidate: PlacementCandidate | None) -> str:
        """How the body runs on ``candidate``, in words (empty: the backend has no compiler)."""
        from prism_core.kernel.contract.backend import Backend

        runner = None if candidate is None else candidate.runner
        if runner is None or type(runner).jit is Backend.jit:
            return ""
        if runner.name in self.eager:
            return f"eagerly: {self.eager[runner.name]}"
        return f"compiled whole ({runner.name}'s jit)"

    #: ``prism_core.explain(F, *args)`` asks the object first (docs/functions.md).
    __prism_explain__ = explain

    # -- the placement cache -----------------------------------------------------------------
    def _reset(self) -> None:
        with self._lock:
            self._cache.clear()
            self._generation = generation()

    def _plan(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], *, measured: bool = True
    ) -> tuple[_Entry, list[PlacementCandidate]]:
        """The placement of a call with these arguments, and every backend judged for it: in
        the order a stored measurement gives (``measured``), else in the declared order."""
        from prism_core.kernel.plugins import plugins

        ps = plugins()
        scope = current_scope()
        arrays = [leaf for v in (*args, *kwargs.values()) for leaf in leaves(v)]
        owners = [ps.owner(leaf) for leaf in arrays]
        home = next((o for o in owners if o is not None and o.name != REFERENCE), None)
        home = home or ps.backends.get(REFERENCE)
        declined = dict(self.declined)
        for name, reason in self._immutable_reasons(ps, args, kwargs).items():
            declined.setdefault(name, reason)
        judged = judge(
            ps,
            scope,
            [d for d in (getattr(leaf, "dtype", None) for leaf in arrays) if d is not None],
            home.name if home else None,
            backends=self.backends,
            requires=self.requires,
            declined=declined,
        )
        ok = [c for c in judged if c.ok]
        decided_by = "declared"
        if scope.backend is not None:
            basis = f"backend {scope.backend!r} named by the scope"
            decided_by = "scope"
        elif ok and home is not None and ok[0].backend == home.name:
            basis = "where the arguments live"
        else:
            basis = "declared order: the arguments' backend, then numpy, then by name"
        if (
            measured
            and scope.backend is None
            and not scope.simulated
            and (len(ok) > 1 or (ok and scope.execution is not None))
        ):
            ok, basis, decided_by = self._measured(ok, basis, args, kwargs, scope.execution)
        import numpy as np

        HOST_ARRAYS.add(np.ndarray)
        entry = _Entry(ok, home, basis, {c.backend: scope.replace(backend=c.backend) for c in ok})
        entry.decided_by = decided_by
        entry.fast = bool(ok) and all(o is ok[0].runner for o in owners) and home is ok[0].runner
        if entry.fast:
            entry.body = self._body(ok[0], args, kwargs)
            entry.context = ok[0].runner.numpy_defaults() if ok[0].runner else None
        return entry, judged

    def _tuning_key(
        self, ok: list[PlacementCandidate], args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[str, str, int, str, tuple[str, ...]]:
        """What this call's tuning entry is keyed by: the function's identity, the signature,
        the size bucket, the candidates' devices and the candidates (by backend)."""
        if self._identity is None:
            self._identity = identity(self.fn)
        devices = "+".join(sorted({c.device for c in ok if c.device})) or "any device"
        return (
            self._identity,
            signature_text(args, kwargs),
            size_bucket(args, kwargs),
            devices,
            tuple(sorted(c.backend for c in ok)),
        )

    def _measured(
        self,
        ok: list[PlacementCandidate],
        basis: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        policy: Any = None,
    ) -> tuple[list[PlacementCandidate], str, str]:
        """``ok`` in the order the tuning cache's entry for this call gives (under an
        execution ``policy``, the order the policy gives of the measured times), the basis in
        words and what decided (``"measured"``, ``"tie"``, ``"policy"``; ``"declared"`` when
        untuned)."""
        from prism_core._tuning.tuning_records import records

        key, signature, bucket, devices, variants = self._tuning_key(ok, args, kwargs)
        found = records().lookup(key, devices, signature, bucket, variants)
        if found is None:
            if policy is not None:
                basis += (
                    f"; execution policy ({policy.describe()}) not applied: no placement of "
                    "this call was measured (prism_core.tuning.tune(F, *args))"
                )
            return ok, basis, "declared"
        times = dict(found.times)
        if policy is not None:
            return by_policy(policy, ok, times, found.decided == "measured", args, kwargs, basis)
        ranked = sorted(times.items(), key=lambda kv: (kv[1], kv[0]))
        if found.decided != "measured":
            others = ", ".join(f"{v} {seconds_text(t)}" for v, t in ranked)
            return ok, f"tie within the noise ({others}): {basis}", "tie"
        winner = found.winner
        others = ", ".join(f"{v} {seconds_text(t)}" for v, t in ranked if v != winner)
        position = {c.backend: i for i, c in enumerate(ok)}
        order = sorted(
            ok,
            key=lambda c: (c.backend not in times, times.get(c.backend, 0.0), position[c.backend]),
        )
        return order, f"measured: {winner} {seconds_text(times[winner])} vs {others}", "measured"

    # -- measuring (prism_core.tuning.tune) --------------------------------------------------
    def __prism_tune__(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> FunctionTuning:
        """The tuner's protocol (``prism_core._tuning.function_tuning.Tunable``): this call's
        placements in the declared order, each ready to run the whole body on fresh copies of
        the arguments (made before each timed sample, outside the timed region), and what the
        tuning entry is keyed by."""
        from prism_core._tuning.function_tuning import FunctionTuning

        if self._generation != generation():
            self._reset()
        entry, judged = self._plan(args, kwargs, measured=False)
        key, signature, bucket, devices, _ = self._tuning_key(entry.candidates, args, kwargs)
        declined: dict[str, str] = {}
        runners = tuple(self._runner(entry, c, args, kwargs, declined) for c in entry.candidates)
        shapes = tuple(
            tuple(int(d) for d in leaf.shape)
            for v in (*args, *kwargs.values())
            for leaf in leaves(v)
            if getattr(leaf, "shape", None) is not None
        )
        skipped = tuple(f"{c.backend}: {'; '.join(c.reasons)}" for c in judged if not c.ok)
        return FunctionTuning(key, signature, bucket, devices, runners, skipped, shapes, declined)

    def _runner(
        self,
        entry: _Entry,
        candidate: PlacementCandidate,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        declined: dict[str, str],
    ) -> PreparedRunner:
        from prism_core._tuning.function_tuning import PreparedRunner

        fresh: list[Any] = [None, None]

        def setup() -> None:
            fresh[0] = tuple(map_arrays(a, copy_array) for a in args)
            fresh[1] = {k: map_arrays(v, copy_array) for k, v in kwargs.items()}

        def run() -> Any:
            if candidate.backend in declined:
                raise BackendError(f"declined: {declined[candidate.backend]}")
            if fresh[0] is None:
                setup()  # never the caller's own arrays
            try:
                out = self._attempt(entry, candidate, fresh[0], fresh[1], None)
            except Exception as exc:
                reason = self._declines(candidate, exc)
                if reason is not None:
                    declined[candidate.backend] = reason
                raise
            if candidate.runner is not None:
                candidate.runner.synchronize(*(leaves(out)))
            return out

        backend = candidate.runner
        return PreparedRunner(
            candidate.backend,
            candidate.backend,
            candidate.device,
            run,
            compiles=bool(backend is not None and backend.compiles),
            setup=setup,
        )

    def _immutable_reasons(
        self, ps: PluginSet, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> dict[str, str]:
        """Backends with immutable arrays, declined up front for a call whose array arguments
        the body updates with ``+=`` (which on such arrays would only rebind the name)."""
        if self._updated is None:
            self._updated = updated_parameters(self.fn)
        if not self._updated:
            return {}
        try:
            bound = inspect.signature(self.fn).bind(*args, **kwargs).arguments
        except (TypeError, ValueError):
            return {}
        arrays = sorted(n for n in self._updated if any(True for _ in leaves(bound.get(n))))
        if not arrays:
            return {}
        out = {}
        for name, backend in ps.backends.items():
            if name in self.declined or not immutable(backend):
                continue
            out[name] = MUTATES.format(name) + f" ({', '.join(arrays)} updated with +=)"
        return out

    # -- running -----------------------------------------------------------------------------
    def _run(
        self,
        key: Any,
        entry: _Entry | None,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        report: FunctionReport | None,
        failure: Exception | None,
    ) -> Any:
        if current_scope().simulated:
            # A simulated device is planned for, not run on: the body runs here, and the ops
            # in it run their reference as ops do under simulation.
            return self.fn(*args, **kwargs)
        if entry is None:
            planned_in = generation()
            entry, judged = self._plan(args, kwargs)
            if entry.decided_by == "declared" and len(entry.candidates) > 1:
                from prism_core._tuning.tuner import autotune_settings, tune_on_first_use

                # Tuning on first use (prism_core.tuning.set_autotune), where it is on.
                if (
                    autotune_settings()["first_use"]
                    and current_scope().automatic
                    and tune_on_first_use(self, args, kwargs)
                ):
                    planned_in = generation()
                    entry, judged = self._plan(args, kwargs)
            if not entry.candidates:
                error = DispatchError(
                    f"function {self.name}: no backend can run this call in "
                    f"{current_scope()!r}:" + "".join(f"\n  {c.describe()}" for c in judged)
                )
                lenient = LENIENT.get()
                if lenient is None or current_scope().automatic:
                    raise error
                return lenient(_Rescue(f"function {self.name}", self), args, kwargs, error)
            with self._lock:
                if planned_in == self._generation:  # else plugins or devices changed meanwhile
                    entry = self._cache.setdefault(key, entry)
        automatic = current_scope().automatic
        # A lenient stage (LENIENT) runs what its placement cannot run elsewhere.
        lenient = None if automatic else LENIENT.get()
        order = [c for c in entry.candidates if c.backend not in self.declined]
        snapshot = (
            take_snapshot(args, kwargs)
            if not entry.proven and ((automatic and len(order) > 1) or lenient is not None)
            else None
        )
        for i, candidate in enumerate(order):
            if failure is None:
                try:
                    result = self._attempt(entry, candidate, args, kwargs, report)
                except Exception as exc:
                    if is_callers(self.fn, exc, candidate):
                        raise
                    failure = exc
                else:
                    if i or not entry.proven:
                        self._settle(key, entry, candidate)
                    return result
            reason = self._declines(candidate, failure)
            left = order[i + 1 :]
            if not automatic or not left:
                failed = BackendError(
                    f"function {self.name} failed on {candidate.backend}: "
                    f"{reason or describe_exception(failure)}"
                    + ("" if automatic else "; not falling back: the scope names the placement")
                )
                undone = snapshot is not None or copied_only(candidate, args, kwargs)
                if lenient is None or not undone:
                    raise failed from failure
                if snapshot is not None:
                    restore(snapshot)
                failed.__cause__ = failure
                return lenient(_Rescue(f"function {self.name}", self), args, kwargs, failed)
            if snapshot is None and not copied_only(candidate, args, kwargs):
                raise BackendError(
                    f"function {self.name} failed on {candidate.backend} after its arguments may "
                    f"have been updated in place ({describe_exception(failure)}); not retried"
                ) from failure
            if snapshot is not None:
                restore(snapshot)
            record(f"function {self.name}", candidate.backend, failure, left[0].backend)
            failure = None
        raise DispatchError(f"function {self.name}: no backend is left to run this call")

    def _attempt(
        self,
        entry: _Entry,
        candidate: PlacementCandidate,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        report: FunctionReport | None,
    ) -> Any:
        """One call on ``candidate``: move, run in its scope, write back, bring back."""
        from prism_core.kernel.plugins import plugins

        ps = plugins()
        runner = candidate.runner
        assert runner is not None
        reference = ps.backends.get(REFERENCE)
        pairs: list[tuple[Any, Any, Backend | None]] = []

        def moved_args(position: int, value: Any) -> Any:
            move = movement.mover(
                runner,
                candidate.target,
                ps.owner,
                reference=reference,
                op=self.name,
                position=position,
            )

            def one(leaf: Any) -> Any:
                owner = ps.owner(leaf)
                if owner is runner:
                    return leaf
                if runner is reference and owner is not None:
                    # NumPy takes any array as it is; the body needs NumPy's own.
                    out = owner.to_numpy(leaf)
                    movement.record_move(self.name, position, leaf, out, owner, runner)
                else:
                    out = move(leaf)
                pairs.append((leaf, out, owner))
                return out

            return map_arrays(value, one)

        if entry.fast and candidate is entry.candidates[0]:
            call_args, call_kwargs = args, kwargs
        else:
            call_args = tuple(moved_args(i, a) for i, a in enumerate(args))
            call_kwargs = {
                k: moved_args(len(args) + j, v) for j, (k, v) in enumerate(kwargs.items())
            }
        body = self._body(candidate, call_args, call_kwargs)
        token = SCOPE.set(entry.scopes[candidate.backend])
        try:
            result = self._call_body(
                body, runner.numpy_defaults(), candidate, call_args, call_kwargs, report
            )
        finally:
            SCOPE.reset(token)
        if traits(runner).mutable:
            for original, moved, owner in pairs:
                write_back(original, moved, owner, runner, report)
        if report is not None:
            report.backend, report.device = candidate.backend, candidate.device
        if self.keep or entry.home is None or entry.home is runner:
            return result
        back = movement.bring_back(
            runner, entry.home, reference, op=self.name, device=candidate.target
        )
        home = entry.home

        def returned(r: Any) -> Any:
            if runner.owns(r):
                return back(r)
            if runner is reference and type(r).__module__ == "numpy":  # a NumPy scalar
                return home.asarray(r)
            return r

        return map_arrays(result, returned, every=True)

    def _call_body(
        self,
        body: Callable[..., Any] | None,
        context: Any,
        candidate: PlacementCandidate,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        report: FunctionReport | None,
    ) -> Any:
        """The body on ``candidate``'s arrays, in the scope in force: compiled where ``body``
        is its compilation (eagerly where that fails), inside the backend's
        ``numpy_defaults()`` ``context`` where it has one."""
        with context or contextlib.nullcontext():
            if body is None:
                return self.fn(*args, **kwargs)
            return self._compiled_call(body, candidate, args, kwargs, report)

    # -- compiling (Backend.jit) -------------------------------------------------------------
    def _body(
        self, candidate: PlacementCandidate, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Callable[..., Any] | None:
        """The body compiled by ``candidate``'s backend for a call with these arguments (the
        arguments without arrays that are hashable held static), or ``None``: it runs eagerly
        (no compiler, or the body was found not traceable there)."""
        runner = candidate.runner
        if runner is None or candidate.backend in self.eager:
            return None
        nums = tuple(i for i, a in enumerate(args) if is_static(a))
        names = tuple(k for k, v in kwargs.items() if is_static(v))
        key = (candidate.backend, nums, names)
        try:
            return self._compiled[key]
        except KeyError:
            pass
        try:
            compiled = runner.jit(self.fn, nums, names)
        except Exception as exc:  # the plugin's compiler refused the function
            self._untraceable(candidate.backend, exc)
            return None
        with self._lock:
            return self._compiled.setdefault(key, compiled)

    def _compiled_call(
        self,
        body: Callable[..., Any],
        candidate: PlacementCandidate,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        report: FunctionReport | None,
    ) -> Any:
        """Run the compiled body; where it raises, run the body eagerly once, and a body that
        then succeeds runs eagerly on this backend from now on (it is not traceable)."""
        if report is not None:
            traced = (
                candidate.backend,
                tuple((i, a) for i, a in enumerate(args) if is_static(a)),
                tuple((k, v) for k, v in kwargs.items() if is_static(v)),
                tuple(
                    (getattr(leaf, "shape", None), str(getattr(leaf, "dtype", None)))
                    for v in (*args, *kwargs.values())
                    for leaf in leaves(v)
                ),
            )
            first = traced not in self._traced
            self._traced.add(traced)
            report.compiled = "compiled: traced and compiled on this call" if first else "compiled"
        try:
            return body(*args, **kwargs)
        except Exception as exc:
            failure = exc
        result = self.fn(*args, **kwargs)  # an error here is the body's own, not the compiler's
        self._untraceable(candidate.backend, failure)
        if report is not None:
            report.compiled = f"eager: {self.eager.get(candidate.backend, '')}"
        return result

    def _untraceable(self, backend: str, exc: BaseException) -> None:
        """``backend``'s compiler cannot run the body: it runs eagerly there from now on."""
        with self._lock:
            first_line = describe_exception(exc).splitlines()[0]
            self.eager[backend] = f"not traceable ({first_line})"
            for key in [k for k in self._compiled if k[0] == backend]:
                del self._compiled[key]
            self._cache.clear()  # the cached entries' bodies are the compiled ones

    def _settle(self, key: Any, entry: _Entry, candidate: PlacementCandidate) -> None:
        """``candidate`` ran the call: it goes first for this signature from now on (its
        compiled body too, unless the call found the body not traceable there)."""
        order = [candidate, *(c for c in entry.candidates if c is not candidate)]
        fast = entry.fast and candidate is entry.candidates[0]
        body = entry.body if fast and candidate.backend not in self.eager else None
        with self._lock:
            self._cache[key] = _Entry(
                order,
                entry.home,
                entry.basis,
                entry.scopes,
                fast,
                True,
                None,
                entry.decided_by,
                body,
                entry.context if fast else None,
            )

    def _declines(self, candidate: PlacementCandidate, exc: BaseException) -> str | None:
        """Record a backend that can never run this function (it refused an in-place update);
        the reason, or ``None`` for a failure that may not happen again."""
        if not mutation_refused(exc, candidate):
            return None
        reason = MUTATES.format(candidate.backend)
        with self._lock:
            self.declined[candidate.backend] = reason
            self._cache.clear()  # every signature's candidates change
        return reason


@dataclass(frozen=True)
class _Rescue:
    """A placed function's call as a lenient stage runs it elsewhere (an ``OpLike``)."""

    name: str
    function: Callable[..., Any]


@overload
def function(fn: Callable[..., Any], /) -> PlacedFunction: ...
@overload
def function(
    fn: None = None,
    /,
    *,
    backends: Iterable[str] | None = None,
    requires: dict[str, Any] | None = None,
    keep: bool = False,
) -> Callable[[Callable[..., Any]], PlacedFunction]: ...
@overload
def function(
    fn: Callable[..., Any],
    /,
    *,
    backends: Iterable[str] | None = None,
    requires: dict[str, Any] | None = None,
    keep: bool = False,
) -> PlacedFunction: ...
def function(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    backends: Iterable[str] | None = None,
    requires: dict[str, Any] | None = None,
    keep: bool = False,
) -> Any:
    """Place a whole function: each call runs on one backend and device, its arrays moved
    there once, its in-place updates shown in the caller's arrays (docs/functions.md).

    ``@prism_core.function``, ``@prism_core.function(backends=[...], requires={...},
    keep=False)`` or ``prism_core.function(fn, **options)``.  ``backends`` narrows the
    candidates to those named; ``requires`` is a requirement on the device (the language of
    variants: ``{"kind": "gpu"}``); ``keep=True`` returns results as the placement's arrays
    instead of the caller's kind.
    """
    if fn is None:
        return lambda f: PlacedFunction(f, backends=backends, requires=requires, keep=keep)
    return PlacedFunction(fn, backends=backends, requires=requires, keep=keep)
