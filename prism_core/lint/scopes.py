"""The lint's first pass: a module's scopes, what each name in them is bound to, and the nodes
the rules look at."""

from __future__ import annotations

import ast
from collections.abc import Sequence

__all__ = ["FUNCTION_LIKE", "Binding", "Collector", "Scope"]

# A binding: (kind, payload, scope the value is evaluated in).  Kinds: "import" (payload: the
# dotted name), "value" (an expression), "item" (an element of an unpacked expression),
# "augment" (an ast.AugAssign), "param" (the annotation, or None), "opaque".
Binding = tuple[str, object, "Scope | None"]
_OPAQUE: Binding = ("opaque", None, None)


class Scope:
    """A module, function, lambda, class or comprehension scope, and its bindings."""

    __slots__ = ("bindings", "declared", "kind", "parent")

    def __init__(self, kind: str, parent: Scope | None) -> None:
        self.kind = kind  # module, function, lambda, class, comprehension
        self.parent = parent
        self.bindings: dict[str, list[Binding]] = {}
        self.declared: dict[str, str] = {}  # name -> "global" | "nonlocal"

    def add(self, name: str, binding: Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


def _new_scope(collector: Collector, kind: str, parent: Scope) -> Scope:
    scope = Scope(kind, parent)
    collector.scopes.append(scope)
    return scope


#: The kinds of scope whose code runs later than the module's: a module-level name read in one
#: may have been rebound by then.
FUNCTION_LIKE = ("function", "lambda", "class")
_VISITORS: dict[type[ast.AST], str] = {}


class Collector:
    """Pass 1: the scopes with their bindings, and the nodes the rules look at."""

    def __init__(self) -> None:
        self.module = Scope("module", None)
        self.scopes: list[Scope] = [self.module]
        self.imported: set[str] = set()  # names some import binds
        self.nodes: list[tuple[ast.AST, Scope, int]] = []  # node, scope, flags
        self.pending_nonlocal: list[tuple[Scope, str]] = []
        self.names: set[str] = set()  # every identifier read or bound anywhere

    # Flags of a collected node.
    TYPE_CHECKING = 1
    IN_FSTRING = 2
    IN_ANNOTATION = 4  # not run (or not as code): `x: NDArray[np.float64]` is no dtype use

    def bind(self, scope: Scope, name: str, binding: Binding) -> None:
        self.names.add(name)
        declared = scope.declared.get(name)
        if declared == "global":
            self.module.add(name, _OPAQUE)
        elif declared == "nonlocal":
            self.pending_nonlocal.append((scope, name))
        else:
            scope.add(name, binding)

    def bind_names(self, scope: Scope, target: ast.AST) -> None:
        """Bind every name in ``target`` to something not followed."""
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.bind(scope, node.id, _OPAQUE)

    def bind_target(self, scope: Scope, target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.bind(scope, target.id, ("value", value, scope) if value is not None else _OPAQUE)
        elif isinstance(target, (ast.Tuple, ast.List)):
            elts = target.elts
            if (
                isinstance(value, (ast.Tuple, ast.List))
                and len(value.elts) == len(elts)
                and not any(isinstance(e, ast.Starred) for e in (*elts, *value.elts))
            ):
                for t, v in zip(elts, value.elts, strict=True):
                    self.bind_target(scope, t, v)
            elif value is not None and not any(isinstance(e, ast.Starred) for e in elts):
                for t in elts:
                    if isinstance(t, ast.Name):
                        self.bind(scope, t.id, ("item", value, scope))
                    else:
                        self.bind_names(scope, t)
            else:
                self.bind_names(scope, target)
        elif isinstance(target, ast.Starred):
            self.bind_names(scope, target)
        # Attributes and subscripts bind no name; their parts are visited as expressions.

    def visit(self, node: ast.AST, scope: Scope, flags: int = 0) -> None:
        kind = type(node)
        name = _VISITORS.get(kind)
        if name is None:
            name = _VISITORS[kind] = "visit_" + kind.__name__
        method = getattr(self, name, None)
        if method is not None:
            method(node, scope, flags)
            return
        if isinstance(node, (ast.Call, ast.BinOp, ast.Compare, ast.Attribute)):
            self.nodes.append((node, scope, flags))
        for child in ast.iter_child_nodes(node):
            self.visit(child, scope, flags)

    def visit_many(self, nodes: Sequence[ast.AST | None], scope: Scope, flags: int) -> None:
        for n in nodes:
            if n is not None:
                self.visit(n, scope, flags)

    def visit_Name(self, node: ast.Name, scope: Scope, flags: int) -> None:
        self.names.add(node.id)
        if isinstance(node.ctx, ast.Load):
            self.nodes.append((node, scope, flags))

    def visit_JoinedStr(self, node: ast.JoinedStr, scope: Scope, flags: int) -> None:
        for child in node.values:
            self.visit(child, scope, flags | self.IN_FSTRING)

    def visit_Import(self, node: ast.Import, scope: Scope, flags: int) -> None:
        self.nodes.append((node, scope, flags))
        for alias in node.names:
            if alias.asname:
                self.imported.add(alias.asname)
                self.bind(scope, alias.asname, ("import", alias.name, None))
            else:
                top = alias.name.split(".", 1)[0]
                self.imported.add(top)
                self.bind(scope, top, ("import", top, None))

    def visit_ImportFrom(self, node: ast.ImportFrom, scope: Scope, flags: int) -> None:
        self.nodes.append((node, scope, flags))
        for alias in node.names:
            if alias.name == "*":
                continue
            name = alias.asname or alias.name
            if node.level or not node.module:  # relative: the user's own modules
                self.bind(scope, name, _OPAQUE)
            else:
                self.imported.add(name)
                self.bind(scope, name, ("import", f"{node.module}.{alias.name}", None))

    def visit_If(self, node: ast.If, scope: Scope, flags: int) -> None:
        test = node.test
        guarded = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        self.visit(test, scope, flags)
        self.visit_many(node.body, scope, flags | (self.TYPE_CHECKING if guarded else 0))
        self.visit_many(node.orelse, scope, flags)

    def visit_Global(self, node: ast.Global, scope: Scope, flags: int) -> None:
        for name in node.names:
            scope.declared[name] = "global"
            self.module.add(name, _OPAQUE)

    def visit_Nonlocal(self, node: ast.Nonlocal, scope: Scope, flags: int) -> None:
        for name in node.names:
            scope.declared[name] = "nonlocal"
            self.pending_nonlocal.append((scope, name))

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: Scope, flags: int
    ) -> Scope:
        args = node.args
        self.visit_many([*args.defaults, *args.kw_defaults], scope, flags)
        inner = _new_scope(self, "lambda" if isinstance(node, ast.Lambda) else "function", scope)
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.annotation is not None:
                self.visit(arg.annotation, scope, flags | self.IN_ANNOTATION)
            annotation = None if isinstance(node, ast.Lambda) else arg.annotation
            self.bind(inner, arg.arg, ("param", annotation, scope))
        for star in (args.vararg, args.kwarg):
            if star is not None:
                if star.annotation is not None:
                    self.visit(star.annotation, scope, flags | self.IN_ANNOTATION)
                self.bind(inner, star.arg, _OPAQUE)
        return inner

    def visit_FunctionDef(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: Scope, flags: int
    ) -> None:
        self.visit_many(node.decorator_list, scope, flags)
        if node.returns is not None:
            self.visit(node.returns, scope, flags | self.IN_ANNOTATION)
        inner = self._function(node, scope, flags)
        self.bind(scope, node.name, _OPAQUE)
        self.visit_many(node.body, inner, flags)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda, scope: Scope, flags: int) -> None:
        inner = self._function(node, scope, flags)
        self.visit(node.body, inner, flags)

    def visit_ClassDef(self, node: ast.ClassDef, scope: Scope, flags: int) -> None:
        self.visit_many([*node.decorator_list, *node.bases, *node.keywords], scope, flags)
        self.bind(scope, node.name, _OPAQUE)
        inner = _new_scope(self, "class", scope)
        self.visit_many(node.body, inner, flags)

    def _comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        scope: Scope,
        flags: int,
        results: Sequence[ast.expr],
    ) -> None:
        inner = _new_scope(self, "comprehension", scope)
        for i, gen in enumerate(node.generators):
            self.visit(gen.iter, scope if i == 0 else inner, flags)
            self.bind_names(inner, gen.target)
            self.visit_many(gen.ifs, inner, flags)
        self.visit_many(results, inner, flags)

    def visit_ListComp(self, node: ast.ListComp, scope: Scope, flags: int) -> None:
        self._comprehension(node, scope, flags, [node.elt])

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp, scope: Scope, flags: int) -> None:
        self._comprehension(node, scope, flags, [node.key, node.value])

    def visit_Assign(self, node: ast.Assign, scope: Scope, flags: int) -> None:
        self.visit(node.value, scope, flags)
        for target in node.targets:
            self.bind_target(scope, target, node.value)
            self._visit_target_parts(target, scope, flags)

    def visit_AnnAssign(self, node: ast.AnnAssign, scope: Scope, flags: int) -> None:
        self.visit(node.annotation, scope, flags | self.IN_ANNOTATION)
        if node.value is not None:
            self.visit(node.value, scope, flags)
        if isinstance(node.target, ast.Name):
            if node.value is not None:
                self.bind(scope, node.target.id, ("annotated", node, scope))
        else:
            self._visit_target_parts(node.target, scope, flags)

    def visit_AugAssign(self, node: ast.AugAssign, scope: Scope, flags: int) -> None:
        self.visit(node.value, scope, flags)
        self.nodes.append((node, scope, flags))
        if isinstance(node.target, ast.Name):
            self.names.add(node.target.id)
            self.bind(scope, node.target.id, ("augment", node, scope))
        else:
            self._visit_target_parts(node.target, scope, flags)

    def visit_NamedExpr(self, node: ast.NamedExpr, scope: Scope, flags: int) -> None:
        self.visit(node.value, scope, flags)
        home = scope
        while home.kind == "comprehension" and home.parent is not None:
            home = home.parent
        self.bind(home, node.target.id, ("value", node.value, scope))

    def _visit_target_parts(self, target: ast.AST, scope: Scope, flags: int) -> None:
        # The expressions inside a target (x[i] = ..., a.b = ...) are evaluated, not bound.
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self.visit(target, scope, flags)
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for child in ast.iter_child_nodes(target):
                self._visit_target_parts(child, scope, flags)

    def _loop(self, node: ast.For | ast.AsyncFor, scope: Scope, flags: int) -> None:
        self.visit(node.iter, scope, flags)
        self.bind_names(scope, node.target)
        self._visit_target_parts(node.target, scope, flags)
        self.visit_many([*node.body, *node.orelse], scope, flags)

    visit_For = _loop
    visit_AsyncFor = _loop

    def visit_withitem(self, node: ast.withitem, scope: Scope, flags: int) -> None:
        self.visit(node.context_expr, scope, flags)
        if node.optional_vars is not None:
            self.bind_names(scope, node.optional_vars)
            self._visit_target_parts(node.optional_vars, scope, flags)

    def visit_ExceptHandler(self, node: ast.ExceptHandler, scope: Scope, flags: int) -> None:
        if node.type is not None:
            self.visit(node.type, scope, flags)
        if node.name:
            self.bind(scope, node.name, _OPAQUE)
        self.visit_many(node.body, scope, flags)

    def visit_MatchAs(self, node: ast.MatchAs, scope: Scope, flags: int) -> None:
        if node.name:
            self.bind(scope, node.name, _OPAQUE)
        if node.pattern is not None:
            self.visit(node.pattern, scope, flags)

    def visit_MatchStar(self, node: ast.MatchStar, scope: Scope, flags: int) -> None:
        if node.name:
            self.bind(scope, node.name, _OPAQUE)

    def visit_MatchMapping(self, node: ast.MatchMapping, scope: Scope, flags: int) -> None:
        if node.rest:
            self.bind(scope, node.rest, _OPAQUE)
        self.visit_many([*node.keys, *node.patterns], scope, flags)

    def finish(self) -> None:
        for scope, name in self.pending_nonlocal:
            s = scope.parent
            while s is not None:
                if s.kind in ("function", "lambda") and name in s.bindings:
                    s.add(name, _OPAQUE)
                    break
                s = s.parent
