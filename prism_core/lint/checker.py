"""The checker: one module's syntax tree in, the guideline breaches in it out.

It reads code, never runs it, in two passes: the scopes and what each name in them is bound
to, then the rules on the nodes they look at, each name resolved through the imports to a
dotted name.  Which values are Prism arrays (what PRISM003's builtins and PRISM004 rely on) is
inferred conservatively: a false report is worse than a miss, and ``--fix`` must never turn
correct code into different code.  The passes and the inference, case by case: docs/lint.md,
"Which values are Prism arrays".
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prism_core.kernel.dispatch.catalogue import CATALOGUE, SPECS
from prism_core.lint.names import (
    ARRAY_TYPES,
    BUILTIN_CONVERSIONS,
    CONVERSION_METHODS,
    DEVICE_CALLS,
    DEVICE_STRINGS,
    DISPLAY,
    DTYPE_NAMES,
    NORMAL_SAMPLERS,
    OP_NOTES,
    PROBES,
    RANDOM_MODULES,
    TORCH_RANDOM,
    TYPING_MODULES,
    framework_dtype,
    framework_of,
    framework_op,
    prism_op,
    under,
)
from prism_core.lint.scopes import FUNCTION_LIKE, Binding, Collector, Scope

__all__ = ["ARRAY_OPS", "LEAVING_OPS", "TUPLE_OPS", "Analysis", "Report", "check"]

#: Prism ops whose result is an array of the backend (a 0-d one or the backend's scalar for a
#: reduction to nothing), as their records say (``kernel/oprecord.py``).
ARRAY_OPS: frozenset[str] = frozenset(r.name for r in SPECS if r.result == "array")
#: Prism ops returning a tuple of arrays: unpacking one gives arrays.
TUPLE_OPS: frozenset[str] = frozenset(r.name for r in SPECS if r.result == "tuple")
#: Prism ops whose result is no longer Prism's: ``to_numpy`` is the way out to NumPy.
LEAVING_OPS: frozenset[str] = frozenset(r.name for r in SPECS if r.result == "numpy")

#: Python operators -> the Prism op with the same meaning (PRISM004 reports and rewrites these).
OPERATORS: Mapping[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+", "add"),
    ast.Sub: ("-", "subtract"),
    ast.Mult: ("*", "multiply"),
    ast.Div: ("/", "divide"),
    ast.Pow: ("**", "power"),
    ast.MatMult: ("@", "matmul"),
}


@dataclass(frozen=True)
class Report:
    """One finding in a module: where (1-based line, 1-based character column), the code, the
    message, and what ``--fix`` would do (``fix``: ``("operator", op)`` for a BinOp ``node``,
    ``("dtype", name)`` for a dtype reference ``node``; ``None``: nothing)."""

    line: int
    column: int
    code: str
    message: str
    node: ast.AST | None = None
    fix: tuple[str, str] | None = None


class _Checker:
    """Pass 2: the rules, over the collected nodes."""

    def __init__(
        self,
        collector: Collector,
        lines: Sequence[str],
        allowed: Sequence[str],
        array_types: Sequence[str],
    ) -> None:
        self.c = collector
        self.lines = lines
        self.allowed = tuple(allowed)
        self.array_types = ARRAY_TYPES | frozenset(array_types)
        self.bare_array_types = frozenset(t for t in array_types if "." not in t)
        self.reports: list[Report] = []
        self.type_checked: set[int] = set()  # nodes PRISM008 reported: not PRISM005 as well
        self._dotted_names: dict[tuple[int, str], str | None] = {}
        self._arrays: set[tuple[int, str]] = set()
        self._solved = False
        self._memo: dict[int, bool] = {}

    # -- positions ---------------------------------------------------------------------------

    def column(self, line: int, byte_col: int) -> int:
        """The 1-based character column of a 0-based UTF-8 byte offset (what ast gives)."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        if text.isascii():
            return byte_col + 1
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", "replace")) + 1

    def comment_between(self, left: ast.expr, right: ast.expr) -> bool:
        """Whether a comment sits between the end of ``left`` and the start of ``right``."""
        first, last = left.end_lineno or left.lineno, right.lineno
        for line in range(first, last + 1):
            text = self.lines[line - 1].encode("utf-8") if line <= len(self.lines) else b""
            start = (left.end_col_offset or 0) if line == first else 0
            end = right.col_offset if line == last else len(text)
            if b"#" in text[start:end]:
                return True
        return False

    def report(
        self,
        node: ast.AST,
        code: str,
        message: str,
        fix_node: ast.AST | None = None,
        fix: tuple[str, str] | None = None,
    ) -> None:
        line = getattr(node, "lineno", 1)
        col = self.column(line, getattr(node, "col_offset", 0))
        self.reports.append(Report(line, col, code, message, fix_node, fix))

    # -- names -------------------------------------------------------------------------------

    def lookup(self, scope: Scope, name: str) -> Scope | None:
        """The scope whose binding of ``name`` a read in ``scope`` sees (None: a builtin or
        undefined name), by Python's rules: class bodies are skipped from nested scopes."""
        declared = scope.declared.get(name)
        if declared == "global":
            return self.c.module if name in self.c.module.bindings else None
        if declared == "nonlocal":
            s = scope.parent
            while s is not None:
                if s.kind in ("function", "lambda") and name in s.bindings:
                    return s
                s = s.parent
            return None
        if name in scope.bindings:
            return scope
        s = scope.parent
        while s is not None:
            if s.kind != "class" and name in s.bindings:
                return s
            s = s.parent
        return None

    def dotted(self, node: ast.AST, scope: Scope) -> str | None:
        """The dotted name an attribute chain stands for through the imports
        (``np.linalg.svd`` -> ``numpy.linalg.svd``), or None."""
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value, scope)
            return None if base is None else f"{base}.{node.attr}"
        if not isinstance(node, ast.Name):
            return None
        key = (id(scope), node.id)
        if key in self._dotted_names:
            return self._dotted_names[key]
        target = self.lookup(scope, node.id)
        result: str | None = None
        if target is not None:
            imports = set()
            for kind, payload, _ in target.bindings[node.id]:
                if kind == "import":
                    imports.add(payload)
                elif not (
                    kind == "value" and isinstance(payload, ast.Constant) and payload.value is None
                ):
                    # `np = None` after a failed import still leaves NumPy where it is used.
                    imports.add(None)
            if len(imports) == 1:
                result = imports.pop()  # type: ignore[assignment]
        self._dotted_names[key] = result
        return result

    def foreign(self, dotted: str | None) -> str | None:
        """The framework of ``dotted`` when it is one the code may not use, else None."""
        if dotted is None:
            return None
        framework = framework_of(dotted)
        if framework is None or under(dotted, self.allowed):
            return None
        return framework

    # -- arrays ------------------------------------------------------------------------------

    def is_array_annotation(self, annotation: ast.AST | None, scope: Scope) -> bool:
        if annotation is None:
            return False
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                parsed = ast.parse(annotation.value, mode="eval").body
            except SyntaxError:
                return False
            return self.is_array_annotation(parsed, scope)
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [annotation.left, annotation.right]
            rest = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
            return len(rest) == 1 and self.is_array_annotation(rest[0], scope)
        if isinstance(annotation, ast.Subscript):
            base = self.dotted(annotation.value, scope)
            if base in ("typing.Optional", "typing_extensions.Optional"):
                return self.is_array_annotation(annotation.slice, scope)
            annotation = annotation.value  # NDArray[np.float64]
        dotted = self.dotted(annotation, scope)
        if dotted is not None:
            return dotted in self.array_types
        return isinstance(annotation, ast.Name) and annotation.id in self.bare_array_types

    def binding_is_array(self, binding: Binding, name: str, scope: Scope) -> bool:
        kind, payload, where = binding
        if where is None:
            return False
        if kind == "value":
            return self.is_array(payload, where)  # type: ignore[arg-type]
        if kind == "item":
            call = payload
            return (
                isinstance(call, ast.Call) and prism_op(self.dotted(call.func, where)) in TUPLE_OPS
            )
        if kind == "augment":
            node: ast.AugAssign = payload  # type: ignore[assignment]
            if isinstance(node.op, ast.Mod):
                return (id(scope), name) in self._arrays
            return (id(scope), name) in self._arrays or self.is_array(node.value, where)
        if kind == "annotated":
            ann: ast.AnnAssign = payload  # type: ignore[assignment]
            if self.is_array_annotation(ann.annotation, where):
                return True
            return ann.value is not None and self.is_array(ann.value, where)
        if kind == "param":
            return self.is_array_annotation(payload, where)  # type: ignore[arg-type]
        return False

    def solve(self) -> None:
        """The names that are Prism arrays: the greatest set of (scope, name) whose every
        binding is an array given the set, among the names *grounded* in a Prism op.

        Grounded first (a least fixpoint): a name one of whose bindings is an array given the
        names grounded so far, starting from none; so ``x = prism.ones(3)`` grounds ``x``, and
        ``x = x * 2`` then keeps it, but a name bound only by ``__doc__ += text`` (its first
        binding implicit) or by ``a = b; b = a`` never is: nothing in it comes from Prism."""
        candidates: dict[tuple[int, str], tuple[Scope, str]] = {}
        for scope in self.c.scopes:
            for name, bindings in scope.bindings.items():
                if all(kind not in ("import", "opaque") for kind, _, _ in bindings):
                    candidates[(id(scope), name)] = (scope, name)
        self._arrays = set()
        changed = True
        while changed:
            changed = False
            for key, (scope, name) in candidates.items():
                if key not in self._arrays and any(
                    self.binding_is_array(b, name, scope) for b in scope.bindings[name]
                ):
                    self._arrays.add(key)
                    changed = True
        changed = True
        while changed:
            changed = False
            for key in list(self._arrays):
                scope, name = candidates[key]
                if not all(self.binding_is_array(b, name, scope) for b in scope.bindings[name]):
                    self._arrays.discard(key)
                    changed = True
        self._solved = True

    def name_is_array(self, name: str, scope: Scope) -> bool:
        target = self.lookup(scope, name)
        if target is None:
            return False
        if target.kind == "module":
            s: Scope | None = scope
            while s is not None and s is not target:
                if s.kind in FUNCTION_LIKE:
                    return False  # a global read inside a function: anything may rebind it
                s = s.parent
        return (id(target), name) in self._arrays

    def is_array(self, node: ast.expr, scope: Scope) -> bool:
        """Whether ``node`` is a Prism array by the inference (see the module docstring)."""
        if self._solved:
            key = id(node)
            if key in self._memo:
                return self._memo[key]
            result = self._is_array(node, scope)
            self._memo[key] = result
            return result
        return self._is_array(node, scope)

    def _is_array(self, node: ast.expr, scope: Scope) -> bool:
        if isinstance(node, ast.Call):
            return prism_op(self.dotted(node.func, scope)) in ARRAY_OPS
        if isinstance(node, ast.Name):
            return self.name_is_array(node.id, scope)
        if isinstance(node, ast.BinOp):
            if self.is_array(node.left, scope):
                return True
            if isinstance(node.op, ast.Mod) or isinstance(node.left, ast.JoinedStr):
                return False  # "%d" % x formats a string
            if isinstance(node.left, ast.Constant) and isinstance(node.left.value, (str, bytes)):
                return False
            return self.is_array(node.right, scope)
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not):
            return self.is_array(node.operand, scope)
        if isinstance(node, ast.IfExp):
            return self.is_array(node.body, scope) and self.is_array(node.orelse, scope)
        if isinstance(node, ast.NamedExpr):
            return self.is_array(node.value, scope)
        return False

    # -- the rules ---------------------------------------------------------------------------

    def run(self) -> list[Report]:
        self.solve()
        fixable_dtypes = self.dtype_keywords()
        for node, scope, flags in self.c.nodes:
            if flags & Collector.IN_ANNOTATION:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if not flags & Collector.TYPE_CHECKING:
                    self.check_import(node)
            elif isinstance(node, ast.Call):
                self.check_call(node, scope)
            elif isinstance(node, ast.BinOp):
                self.check_operator(node, scope, flags)
            elif isinstance(node, ast.AugAssign):
                self.check_augmented(node, scope)
            elif isinstance(node, (ast.Attribute, ast.Name)):
                in_fstring = bool(flags & Collector.IN_FSTRING)
                self.check_dtype(node, scope, {} if in_fstring else fixable_dtypes)
            elif isinstance(node, ast.Compare):
                self.check_type_compare(node, scope)
        return self.reports

    def check_import(self, node: ast.Import | ast.ImportFrom) -> None:
        if isinstance(node, ast.ImportFrom):
            # One finding per statement: `from numpy import (a, b, ...)` is one dependency.
            if node.level or not node.module:
                return
            names = [a.name for a in node.names if self.foreign(f"{node.module}.{a.name}")]
            framework = framework_of(node.module)
            if framework is None or not names:
                return
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            self.report(
                node,
                "PRISM001",
                f"`from {node.module} import {shown}` ties this code to {DISPLAY[framework]}: "
                "use Prism's ops (import prism_core as prism)",
            )
            return
        for alias in node.names:
            framework = self.foreign(alias.name)
            if framework is not None:
                self.report(
                    alias,
                    "PRISM001",
                    f"`import {alias.name}` ties this code to {DISPLAY[framework]}: use "
                    "Prism's ops (import prism_core as prism)",
                )

    def check_call(self, node: ast.Call, scope: Scope) -> None:
        func = node.func
        dotted = self.dotted(func, scope)
        if dotted is None:
            if isinstance(func, ast.Attribute):
                self.check_method(node, func, scope)
            elif isinstance(func, ast.Name) and self.lookup(scope, func.id) is None:
                self.check_builtin(node, func.id, scope)
            return
        framework = self.foreign(dotted)
        if framework is None:
            return
        written = _written(func)
        if under(dotted, RANDOM_MODULES) or (
            dotted.startswith("torch.") and dotted[len("torch.") :] in TORCH_RANDOM
        ):
            last = dotted.rsplit(".", 1)[-1]
            if last in NORMAL_SAMPLERS:
                hint = "use prism.random.normal(shape, mean, std, seed=...)"
            else:
                ops = ", ".join(f"prism.{n}" for n in CATALOGUE if n.startswith("random."))
                hint = f"Prism's random ops ({ops}) give the same numbers on every backend"
            self.report(
                node,
                "PRISM007",
                f"{written}() is {DISPLAY[framework]}'s random generator: {hint}",
            )
            return
        if under(dotted, DEVICE_CALLS):
            self.report(
                node,
                "PRISM006",
                f"{written}() is {DISPLAY[framework]}'s device API: choose devices with "
                "`with prism.device(...)` and move arrays with prism.to_device(x, device)",
            )
            return
        is_dtype, _ = framework_dtype(dotted)
        if not is_dtype:
            op = framework_op(dotted)
            note = OP_NOTES.get(op or "", "")
            if op == "asarray" and framework != "numpy":
                note = ""
            if op is not None:
                self.report(
                    node,
                    "PRISM002",
                    f"{written}() calls {dotted}: use prism.{op}(){note}",
                )
        for kw in node.keywords:
            if kw.arg == "device":
                self.report(
                    kw,
                    "PRISM006",
                    f"device= in {written}() places its result on a device: choose devices "
                    "with `with prism.device(...)` scopes",
                )

    def check_method(self, node: ast.Call, func: ast.Attribute, scope: Scope) -> None:
        attr = func.attr
        if attr in CONVERSION_METHODS and not node.args:
            self.report(
                node,
                "PRISM003",
                f".{attr}() {CONVERSION_METHODS[attr]}: keep values in the backend as arrays "
                "(prism.to_numpy(x) once, where the result leaves Prism)",
            )
        elif attr == "tolist" and not node.args and self.is_array(func.value, scope):
            self.report(
                node,
                "PRISM003",
                ".tolist() of a Prism array makes Python numbers of it: keep it an array",
            )
        elif attr == "cuda":
            self.report(
                node,
                "PRISM006",
                ".cuda() places the array on a CUDA device: use prism.to_device(x, device) or "
                "a `with prism.device(...)` scope",
            )
        elif attr == "to" and self.is_device_move(node, scope):
            self.report(
                node,
                "PRISM006",
                ".to(device) places the array on a device: use prism.to_device(x, device) or "
                "a `with prism.device(...)` scope",
            )

    def is_device_move(self, node: ast.Call, scope: Scope) -> bool:
        if any(kw.arg == "device" for kw in node.keywords):
            return True
        if not node.args:
            return False
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value.split(":", 1)[0].lower() in DEVICE_STRINGS
        if isinstance(arg, ast.Call):
            return self.dotted(arg.func, scope) == "torch.device"
        name = arg.id if isinstance(arg, ast.Name) else getattr(arg, "attr", "")
        return name.lower().endswith("device")

    def check_builtin(self, node: ast.Call, name: str, scope: Scope) -> None:
        if name in BUILTIN_CONVERSIONS:
            if len(node.args) == 1 and not node.keywords and self.is_array(node.args[0], scope):
                self.report(
                    node,
                    "PRISM003",
                    f"{name}() of a Prism array makes a Python {name} of it: keep the array "
                    "(a 0-d array goes into every op)",
                )
        elif name in ("isinstance", "issubclass") and len(node.args) == 2:
            classes = node.args[1]
            elts = classes.elts if isinstance(classes, (ast.Tuple, ast.List)) else [classes]
            types = [(elt, self.framework_type(elt, scope)) for elt in elts]
            named = [(elt, dotted) for elt, dotted in types if dotted is not None]
            if named:
                # One finding per check, at its first framework type; the types are not also
                # dtype uses (PRISM005): `isinstance(x, np.bool_)` is one thing.
                self.type_checked.update(id(elt) for elt, _ in named)
                self.report(
                    named[0][0],
                    "PRISM008",
                    f"{name}() on {', '.join(d for _, d in named)} branches on the framework: "
                    "convert with prism.asarray(x) instead, and ask prism.dtype(x) for the type",
                )
        elif name == "hasattr" and len(node.args) == 2:
            probe = node.args[1]
            if isinstance(probe, ast.Constant) and probe.value in PROBES:
                self.report(
                    node,
                    "PRISM008",
                    f"hasattr(x, {probe.value!r}) probes for a framework's array: convert with "
                    "prism.asarray(x) instead",
                )

    def framework_type(self, node: ast.AST, scope: Scope) -> str | None:
        """The dotted name of ``node`` when it is a framework's type (``numpy.ndarray``), else
        None.  The frameworks' typing modules (``torch.types._Number``, ``numpy.typing``) name
        Python types, not the framework's."""
        dotted = self.dotted(node, scope)
        if dotted is None or not self.foreign(dotted) or under(dotted, TYPING_MODULES):
            return None
        return dotted

    def check_type_compare(self, node: ast.Compare, scope: Scope) -> None:
        sides = [node.left, *node.comparators]
        if not any(
            isinstance(s, ast.Call)
            and isinstance(s.func, ast.Name)
            and s.func.id == "type"
            and self.lookup(scope, "type") is None
            for s in sides
        ):
            return
        for side in sides:
            dotted = self.framework_type(side, scope)
            if dotted is not None:
                self.type_checked.add(id(side))
                self.report(
                    side,
                    "PRISM008",
                    f"type(x) compared with {dotted} branches on the framework: convert with "
                    "prism.asarray(x) instead",
                )

    def check_operator(self, node: ast.BinOp, scope: Scope, flags: int) -> None:
        known = OPERATORS.get(type(node.op))
        if known is None or not self.is_array(node, scope):
            return
        symbol, op = known
        # Not rewritten inside f-strings (Python 3.11 places their parts only roughly) or with
        # a comment between the operands (the rewrite would drop it).
        fixable = not flags & Collector.IN_FSTRING and not self.comment_between(
            node.left, node.right
        )
        self.report(
            node,
            "PRISM004",
            f"Python operator `{symbol}` on a Prism array: use prism.{op}(...)",
            node if fixable else None,
            ("operator", op) if fixable else None,
        )

    def check_augmented(self, node: ast.AugAssign, scope: Scope) -> None:
        known = OPERATORS.get(type(node.op))
        if known is None or not isinstance(node.target, ast.Name):
            return
        if not self.name_is_array(node.target.id, scope):
            return
        symbol, op = known
        self.report(
            node,
            "PRISM004",
            f"in-place `{symbol}=` on a Prism array: write "
            f"{node.target.id} = prism.{op}({node.target.id}, ...) (not fixed automatically: "
            "another reference may rely on the update in place)",
        )

    def dtype_keywords(self) -> dict[int, str]:
        """The framework dtypes given as ``dtype=`` to a Prism op, with Prism's name for each:
        those ``--fix`` can rewrite."""
        out: dict[int, str] = {}
        for node, scope, _ in self.c.nodes:
            if not isinstance(node, ast.Call) or prism_op(self.dotted(node.func, scope)) is None:
                continue
            for kw in node.keywords:
                if kw.arg == "dtype" and isinstance(kw.value, (ast.Attribute, ast.Name)):
                    dotted = self.dotted(kw.value, scope)
                    if dotted is None or not self.foreign(dotted):
                        continue
                    is_dtype, prism_name = framework_dtype(dotted)
                    if is_dtype and prism_name is not None and prism_name != "dtype":
                        out[id(kw.value)] = prism_name
        return out

    def check_dtype(
        self, node: ast.Attribute | ast.Name, scope: Scope, fixable: Mapping[int, str]
    ) -> None:
        if isinstance(node, ast.Attribute):
            if node.attr not in DTYPE_NAMES:
                return
        elif node.id not in self.c.imported:
            return
        dotted = self.dotted(node, scope)
        if dotted is None or (isinstance(node, ast.Name) and "." not in dotted):
            return
        if id(node) in self.type_checked:
            return
        framework = self.foreign(dotted)
        if framework is None:
            return
        is_dtype, prism_name = framework_dtype(dotted)
        if not is_dtype:
            return
        written = _written(node)
        if written.rsplit(".", 1)[-1] != dotted.rsplit(".", 1)[-1]:
            written = f"{written} ({dotted})"
        owner = DISPLAY[framework]
        if prism_name == "dtype":
            message = f"{written} makes {owner}'s data types: use prism.dtype(...) or prism.float32"
        elif prism_name is None:
            message = (
                f"{written} is {owner}'s data type, and Prism has no {dotted.rsplit('.', 1)[-1]}: "
                "choose one of Prism's (prism.int64, prism.float64, ...)"
            )
        else:
            message = f"{written} is {owner}'s data type: use prism.{prism_name}"
        fix = fixable.get(id(node))
        self.report(
            node,
            "PRISM005",
            message,
            node if fix else None,
            ("dtype", fix) if fix else None,
        )


def _written(node: ast.AST) -> str:
    """How the code names a function or attribute (``np.random.normal``), for messages."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_written(node.value)}.{node.attr}"
    return "(...)"


def split_lines(source: str) -> list[str]:
    """The lines of ``source`` as Python counts them (``\\n``, ``\\r\\n`` and ``\\r`` end a
    line; form feeds and Unicode line separators do not), without their endings."""
    return source.replace("\r\n", "\n").replace("\r", "\n").split("\n")


@dataclass(frozen=True)
class Analysis:
    """What the checker found in a module: the ``reports``, sorted by position and code; every
    identifier the module reads or binds (``names``: the fixer adds an import only under a free
    name); and ``prism_aliases``, the names module-level ``import prism_core [as X]`` bind when
    nothing else in the module binds them (the fixer writes ``X.subtract(...)`` with one)."""

    reports: list[Report]
    names: frozenset[str]
    prism_aliases: frozenset[str]


def check(
    tree: ast.Module,
    lines: Sequence[str],
    *,
    allowed_modules: Sequence[str] = (),
    array_types: Sequence[str] = (),
) -> Analysis:
    """Check the module ``tree`` (parsed from ``lines``)."""
    collector = Collector()
    collector.visit_many(tree.body, collector.module, 0)
    collector.finish()
    checker = _Checker(collector, lines, allowed_modules, array_types)
    reports = checker.run()
    reports.sort(key=lambda r: (r.line, r.column, r.code))
    return Analysis(reports, frozenset(collector.names), _prism_aliases(collector))


def _prism_aliases(collector: Collector) -> frozenset[str]:
    inner = [s for s in collector.scopes if s is not collector.module]
    return frozenset(
        name
        for name, bindings in collector.module.bindings.items()
        if all(b[:2] == ("import", "prism_core") for b in bindings)
        and not any(name in s.bindings for s in inner)
    )
