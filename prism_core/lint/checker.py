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

from prism_core.kernel.dispatch.catalogue import ALIASES, CATALOGUE, SPECS
from prism_core.lint.codes import FRAMEWORKS

__all__ = ["ARRAY_OPS", "LEAVING_OPS", "TUPLE_OPS", "Analysis", "Report", "check"]

#: Prism ops whose result is an array of the backend (a 0-d one or the backend's scalar for a
#: reduction to nothing), as their records say (``kernel/oprecord.py``).
ARRAY_OPS: frozenset[str] = frozenset(r.name for r in SPECS if r.result == "array")
#: Prism ops returning a tuple of arrays: unpacking one gives arrays.
TUPLE_OPS: frozenset[str] = frozenset(r.name for r in SPECS if r.result == "tuple")
#: Prism ops whose result is no longer Prism's: ``to_numpy`` is the way out to NumPy.
LEAVING_OPS: frozenset[str] = frozenset(r.name for r in SPECS if r.result == "numpy")

_OPS = frozenset(CATALOGUE)

#: Python operators -> the Prism op with the same meaning (PRISM004 reports and rewrites these).
OPERATORS: Mapping[type[ast.operator], tuple[str, str]] = {
    ast.Add: ("+", "add"),
    ast.Sub: ("-", "subtract"),
    ast.Mult: ("*", "multiply"),
    ast.Div: ("/", "divide"),
    ast.Pow: ("**", "power"),
    ast.MatMult: ("@", "matmul"),
}

# -- what the frameworks' names mean ----------------------------------------------------------

_DISPLAY = {
    "numpy": "NumPy",
    "torch": "torch",
    "cupy": "CuPy",
    "cupyx": "CuPy",
    "jax": "JAX",
    "mlx": "MLX",
}
#: Framework namespaces that follow NumPy's names (the op is found by its NumPy name).
_NUMPY_LIKE = ("numpy", "cupy", "jax.numpy", "mlx.core")
#: NumPy-style names that are not Prism's -> Prism's op.
_NUMPY_RENAMES = {
    "array": "asarray",
    "absolute": "abs",
    "amax": "max",
    "amin": "min",
    "conjugate": "conj",
    "true_divide": "divide",
    "pow": "power",
    "permute_dims": "transpose",
}
#: torch names that are not Prism's -> Prism's op.
_TORCH_RENAMES = {
    "tensor": "asarray",
    "as_tensor": "asarray",
    "from_numpy": "asarray",
    "cat": "concat",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "true_divide": "divide",
    "pow": "power",
    "clamp": "clip",
    "mm": "matmul",
    "bmm": "matmul",
    "unsqueeze": "expand_dims",
    "permute": "transpose",
    "movedim": "moveaxis",
    "absolute": "abs",
    "amax": "max",
    "amin": "min",
}
#: What to check when moving to the Prism op (Prism follows the Array API).
_OP_NOTES = {
    "std": " (NumPy's ddof= is correction=)",
    "cumulative_sum": " (give axis= for arrays of more than one dimension)",
    "asarray": " (or prism.to_numpy(x) at the boundary where NumPy itself is needed)",
    "transpose": " (axes= is a full permutation)",
}
#: Random number modules of the frameworks (every call under them is PRISM007).
_RANDOM_MODULES = ("numpy.random", "cupy.random", "jax.random", "mlx.core.random", "torch.random")
_TORCH_RANDOM = frozenset(
    {
        "rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial", "poisson",
        "rand_like", "randn_like", "randint_like", "manual_seed", "seed", "initial_seed",
        "get_rng_state", "set_rng_state", "Generator",
    }
)  # fmt: skip
_NORMAL = frozenset({"normal", "standard_normal", "randn", "randn_like"})
#: Device APIs: calls under these (or equal to them) are PRISM006.
_DEVICE_CALLS = (
    "torch.device",
    "torch.cuda",
    "torch.mps",
    "torch.set_default_device",
    "cupy.cuda",
    "jax.device_put",
    "jax.devices",
    "jax.local_devices",
    "mlx.core.set_default_device",
    "mlx.core.default_device",
)
_DEVICE_STRINGS = frozenset({"cuda", "cpu", "mps", "xpu", "hip", "gpu", "tpu", "meta", "npu"})

_COMMON_DTYPES = {
    n: n
    for n in (
        "float16", "float32", "float64", "bfloat16", "complex64", "complex128",
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool_",
        "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e4m3",
        "float8_e3m4",
    )
}  # fmt: skip
_NO_PRISM_DTYPE = ("intp", "uintp", "longdouble", "float128",
                   "clongdouble", "complex256", "complex32", "int_", "uint")  # fmt: skip
#: Framework dtype names -> Prism's (None: Prism has none).
_NUMPY_DTYPES: Mapping[str, str | None] = {
    **_COMMON_DTYPES,
    **dict.fromkeys(_NO_PRISM_DTYPE),
    "bool": "bool_",
    "half": "float16",
    "single": "float32",
    "double": "float64",
    "float_": "float64",
    "csingle": "complex64",
    "cdouble": "complex128",
    "complex_": "complex128",
    "byte": "int8",
    "ubyte": "uint8",
    "short": "int16",
    "intc": "int32",
    "longlong": "int64",
}
_TORCH_DTYPES: Mapping[str, str | None] = {
    **_COMMON_DTYPES,
    **dict.fromkeys(_NO_PRISM_DTYPE),
    "bool": "bool_",
    "half": "float16",
    "float": "float32",
    "double": "float64",
    "cfloat": "complex64",
    "cdouble": "complex128",
    "short": "int16",
    "int": "int32",
    "long": "int64",
}
_DTYPE_NAMES = frozenset(_NUMPY_DTYPES) | frozenset(_TORCH_DTYPES) | {"dtype"}
#: Annotations that make a parameter an array.
_ARRAY_TYPES = frozenset(
    {
        "numpy.ndarray",
        "numpy.typing.NDArray",
        "torch.Tensor",
        "cupy.ndarray",
        "jax.Array",
        "jax.numpy.ndarray",
        "mlx.core.array",
    }
)
_CONVERSION_METHODS = {
    "numpy": "converts it to a NumPy array",
    "cpu": "copies it to the host",
    "item": "makes a Python scalar of it",
}
_BUILTIN_CONVERSIONS = frozenset({"float", "int", "complex", "bool"})
_PROBES = frozenset({"numpy", "cpu", "cuda", "__cuda_array_interface__"})
#: The frameworks' typing helpers: aliases of Python types, not the frameworks' own types.
_TYPING_MODULES = ("numpy.typing", "torch.types", "jax.typing")


def _framework(dotted: str) -> str | None:
    """The framework a dotted name belongs to (``numpy`` for ``numpy.linalg.svd``), or None."""
    root = dotted.split(".", 1)[0]
    return root if root in FRAMEWORKS else None


def _under(dotted: str, prefixes: Sequence[str]) -> bool:
    return any(dotted == p or dotted.startswith(p + ".") for p in prefixes)


def prism_op(dotted: str | None) -> str | None:
    """The Prism op ``dotted`` names (``prism_core.linalg.inverse`` -> ``linalg.inv``), or None."""
    if dotted is None or not dotted.startswith("prism_core."):
        return None
    rest = dotted[len("prism_core.") :]
    name = ALIASES.get(rest, rest)
    return name if name in _OPS else None


def framework_op(dotted: str) -> str | None:
    """The Prism op standing for the framework function ``dotted`` (``numpy.concatenate`` ->
    ``concat``, ``torch.cat`` -> ``concat``), or None where Prism has none."""
    for prefix in _NUMPY_LIKE:
        if dotted.startswith(prefix + "."):
            rest = dotted[len(prefix) + 1 :]
            rest = _NUMPY_RENAMES.get(rest, rest)
            break
    else:
        if not dotted.startswith("torch."):
            return None
        rest = dotted[len("torch.") :]
        rest = _TORCH_RENAMES.get(rest, rest)
    name = ALIASES.get(rest, rest)
    return name if name in _OPS and not name.startswith("random.") else None


def framework_dtype(dotted: str) -> tuple[bool, str | None]:
    """Whether ``dotted`` is a framework's data type, and Prism's name for it (None: none)."""
    if dotted.startswith("torch."):
        table, rest = _TORCH_DTYPES, dotted[len("torch.") :]
    else:
        for prefix in _NUMPY_LIKE:
            if dotted.startswith(prefix + "."):
                table, rest = _NUMPY_DTYPES, dotted[len(prefix) + 1 :]
                break
        else:
            return False, None
    if rest == "dtype":
        return True, "dtype"
    if rest in table:
        return True, table[rest]
    return False, None


# -- scopes and bindings ----------------------------------------------------------------------

# A binding: (kind, payload, scope the value is evaluated in).  Kinds: "import" (payload: the
# dotted name), "value" (an expression), "item" (an element of an unpacked expression),
# "augment" (an ast.AugAssign), "param" (the annotation, or None), "opaque".
_Binding = tuple[str, object, "_Scope | None"]
_OPAQUE: _Binding = ("opaque", None, None)


class _Scope:
    __slots__ = ("bindings", "declared", "kind", "parent")

    def __init__(self, kind: str, parent: _Scope | None) -> None:
        self.kind = kind  # module, function, lambda, class, comprehension
        self.parent = parent
        self.bindings: dict[str, list[_Binding]] = {}
        self.declared: dict[str, str] = {}  # name -> "global" | "nonlocal"

    def add(self, name: str, binding: _Binding) -> None:
        self.bindings.setdefault(name, []).append(binding)


def _new_scope(collector: _Collector, kind: str, parent: _Scope) -> _Scope:
    scope = _Scope(kind, parent)
    collector.scopes.append(scope)
    return scope


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


_FUNCTION_LIKE = ("function", "lambda", "class")
_VISITORS: dict[type[ast.AST], str] = {}


class _Collector:
    """Pass 1: the scopes with their bindings, and the nodes the rules look at."""

    def __init__(self) -> None:
        self.module = _Scope("module", None)
        self.scopes: list[_Scope] = [self.module]
        self.imported: set[str] = set()  # names some import binds
        self.nodes: list[tuple[ast.AST, _Scope, int]] = []  # node, scope, flags
        self.pending_nonlocal: list[tuple[_Scope, str]] = []
        self.names: set[str] = set()  # every identifier read or bound anywhere

    # Flags of a collected node.
    TYPE_CHECKING = 1
    IN_FSTRING = 2
    IN_ANNOTATION = 4  # not run (or not as code): `x: NDArray[np.float64]` is no dtype use

    def bind(self, scope: _Scope, name: str, binding: _Binding) -> None:
        self.names.add(name)
        declared = scope.declared.get(name)
        if declared == "global":
            self.module.add(name, _OPAQUE)
        elif declared == "nonlocal":
            self.pending_nonlocal.append((scope, name))
        else:
            scope.add(name, binding)

    def bind_names(self, scope: _Scope, target: ast.AST) -> None:
        """Bind every name in ``target`` to something not followed."""
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                self.bind(scope, node.id, _OPAQUE)

    def bind_target(self, scope: _Scope, target: ast.expr, value: ast.expr | None) -> None:
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

    def visit(self, node: ast.AST, scope: _Scope, flags: int = 0) -> None:
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

    def visit_many(self, nodes: Sequence[ast.AST | None], scope: _Scope, flags: int) -> None:
        for n in nodes:
            if n is not None:
                self.visit(n, scope, flags)

    def visit_Name(self, node: ast.Name, scope: _Scope, flags: int) -> None:
        self.names.add(node.id)
        if isinstance(node.ctx, ast.Load):
            self.nodes.append((node, scope, flags))

    def visit_JoinedStr(self, node: ast.JoinedStr, scope: _Scope, flags: int) -> None:
        for child in node.values:
            self.visit(child, scope, flags | self.IN_FSTRING)

    def visit_Import(self, node: ast.Import, scope: _Scope, flags: int) -> None:
        self.nodes.append((node, scope, flags))
        for alias in node.names:
            if alias.asname:
                self.imported.add(alias.asname)
                self.bind(scope, alias.asname, ("import", alias.name, None))
            else:
                top = alias.name.split(".", 1)[0]
                self.imported.add(top)
                self.bind(scope, top, ("import", top, None))

    def visit_ImportFrom(self, node: ast.ImportFrom, scope: _Scope, flags: int) -> None:
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

    def visit_If(self, node: ast.If, scope: _Scope, flags: int) -> None:
        test = node.test
        guarded = (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        )
        self.visit(test, scope, flags)
        self.visit_many(node.body, scope, flags | (self.TYPE_CHECKING if guarded else 0))
        self.visit_many(node.orelse, scope, flags)

    def visit_Global(self, node: ast.Global, scope: _Scope, flags: int) -> None:
        for name in node.names:
            scope.declared[name] = "global"
            self.module.add(name, _OPAQUE)

    def visit_Nonlocal(self, node: ast.Nonlocal, scope: _Scope, flags: int) -> None:
        for name in node.names:
            scope.declared[name] = "nonlocal"
            self.pending_nonlocal.append((scope, name))

    def _function(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, scope: _Scope, flags: int
    ) -> _Scope:
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
        self, node: ast.FunctionDef | ast.AsyncFunctionDef, scope: _Scope, flags: int
    ) -> None:
        self.visit_many(node.decorator_list, scope, flags)
        if node.returns is not None:
            self.visit(node.returns, scope, flags | self.IN_ANNOTATION)
        inner = self._function(node, scope, flags)
        self.bind(scope, node.name, _OPAQUE)
        self.visit_many(node.body, inner, flags)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda, scope: _Scope, flags: int) -> None:
        inner = self._function(node, scope, flags)
        self.visit(node.body, inner, flags)

    def visit_ClassDef(self, node: ast.ClassDef, scope: _Scope, flags: int) -> None:
        self.visit_many([*node.decorator_list, *node.bases, *node.keywords], scope, flags)
        self.bind(scope, node.name, _OPAQUE)
        inner = _new_scope(self, "class", scope)
        self.visit_many(node.body, inner, flags)

    def _comprehension(
        self,
        node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
        scope: _Scope,
        flags: int,
        results: Sequence[ast.expr],
    ) -> None:
        inner = _new_scope(self, "comprehension", scope)
        for i, gen in enumerate(node.generators):
            self.visit(gen.iter, scope if i == 0 else inner, flags)
            self.bind_names(inner, gen.target)
            self.visit_many(gen.ifs, inner, flags)
        self.visit_many(results, inner, flags)

    def visit_ListComp(self, node: ast.ListComp, scope: _Scope, flags: int) -> None:
        self._comprehension(node, scope, flags, [node.elt])

    visit_SetComp = visit_ListComp
    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node: ast.DictComp, scope: _Scope, flags: int) -> None:
        self._comprehension(node, scope, flags, [node.key, node.value])

    def visit_Assign(self, node: ast.Assign, scope: _Scope, flags: int) -> None:
        self.visit(node.value, scope, flags)
        for target in node.targets:
            self.bind_target(scope, target, node.value)
            self._visit_target_parts(target, scope, flags)

    def visit_AnnAssign(self, node: ast.AnnAssign, scope: _Scope, flags: int) -> None:
        self.visit(node.annotation, scope, flags | self.IN_ANNOTATION)
        if node.value is not None:
            self.visit(node.value, scope, flags)
        if isinstance(node.target, ast.Name):
            if node.value is not None:
                self.bind(scope, node.target.id, ("annotated", node, scope))
        else:
            self._visit_target_parts(node.target, scope, flags)

    def visit_AugAssign(self, node: ast.AugAssign, scope: _Scope, flags: int) -> None:
        self.visit(node.value, scope, flags)
        self.nodes.append((node, scope, flags))
        if isinstance(node.target, ast.Name):
            self.names.add(node.target.id)
            self.bind(scope, node.target.id, ("augment", node, scope))
        else:
            self._visit_target_parts(node.target, scope, flags)

    def visit_NamedExpr(self, node: ast.NamedExpr, scope: _Scope, flags: int) -> None:
        self.visit(node.value, scope, flags)
        home = scope
        while home.kind == "comprehension" and home.parent is not None:
            home = home.parent
        self.bind(home, node.target.id, ("value", node.value, scope))

    def _visit_target_parts(self, target: ast.AST, scope: _Scope, flags: int) -> None:
        # The expressions inside a target (x[i] = ..., a.b = ...) are evaluated, not bound.
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            self.visit(target, scope, flags)
        elif isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
            for child in ast.iter_child_nodes(target):
                self._visit_target_parts(child, scope, flags)

    def _loop(self, node: ast.For | ast.AsyncFor, scope: _Scope, flags: int) -> None:
        self.visit(node.iter, scope, flags)
        self.bind_names(scope, node.target)
        self._visit_target_parts(node.target, scope, flags)
        self.visit_many([*node.body, *node.orelse], scope, flags)

    visit_For = _loop
    visit_AsyncFor = _loop

    def visit_withitem(self, node: ast.withitem, scope: _Scope, flags: int) -> None:
        self.visit(node.context_expr, scope, flags)
        if node.optional_vars is not None:
            self.bind_names(scope, node.optional_vars)
            self._visit_target_parts(node.optional_vars, scope, flags)

    def visit_ExceptHandler(self, node: ast.ExceptHandler, scope: _Scope, flags: int) -> None:
        if node.type is not None:
            self.visit(node.type, scope, flags)
        if node.name:
            self.bind(scope, node.name, _OPAQUE)
        self.visit_many(node.body, scope, flags)

    def visit_MatchAs(self, node: ast.MatchAs, scope: _Scope, flags: int) -> None:
        if node.name:
            self.bind(scope, node.name, _OPAQUE)
        if node.pattern is not None:
            self.visit(node.pattern, scope, flags)

    def visit_MatchStar(self, node: ast.MatchStar, scope: _Scope, flags: int) -> None:
        if node.name:
            self.bind(scope, node.name, _OPAQUE)

    def visit_MatchMapping(self, node: ast.MatchMapping, scope: _Scope, flags: int) -> None:
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


class _Checker:
    """Pass 2: the rules, over the collected nodes."""

    def __init__(
        self,
        collector: _Collector,
        lines: Sequence[str],
        allowed: Sequence[str],
        array_types: Sequence[str],
    ) -> None:
        self.c = collector
        self.lines = lines
        self.allowed = tuple(allowed)
        self.array_types = _ARRAY_TYPES | frozenset(array_types)
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

    def lookup(self, scope: _Scope, name: str) -> _Scope | None:
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

    def dotted(self, node: ast.AST, scope: _Scope) -> str | None:
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

    def allowed_module(self, dotted: str) -> bool:
        return any(dotted == m or dotted.startswith(m + ".") for m in self.allowed)

    def foreign(self, dotted: str | None) -> str | None:
        """The framework of ``dotted`` when it is one the code may not use, else None."""
        if dotted is None:
            return None
        framework = _framework(dotted)
        if framework is None or self.allowed_module(dotted):
            return None
        return framework

    # -- arrays ------------------------------------------------------------------------------

    def is_array_annotation(self, annotation: ast.AST | None, scope: _Scope) -> bool:
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

    def binding_is_array(self, binding: _Binding, name: str, scope: _Scope) -> bool:
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
        candidates: dict[tuple[int, str], tuple[_Scope, str]] = {}
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

    def name_is_array(self, name: str, scope: _Scope) -> bool:
        target = self.lookup(scope, name)
        if target is None:
            return False
        if target.kind == "module":
            s: _Scope | None = scope
            while s is not None and s is not target:
                if s.kind in _FUNCTION_LIKE:
                    return False  # a global read inside a function: anything may rebind it
                s = s.parent
        return (id(target), name) in self._arrays

    def is_array(self, node: ast.expr, scope: _Scope) -> bool:
        """Whether ``node`` is a Prism array by the inference (see the module docstring)."""
        if self._solved:
            key = id(node)
            if key in self._memo:
                return self._memo[key]
            result = self._is_array(node, scope)
            self._memo[key] = result
            return result
        return self._is_array(node, scope)

    def _is_array(self, node: ast.expr, scope: _Scope) -> bool:
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
            if flags & _Collector.IN_ANNOTATION:
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                if not flags & _Collector.TYPE_CHECKING:
                    self.check_import(node)
            elif isinstance(node, ast.Call):
                self.check_call(node, scope)
            elif isinstance(node, ast.BinOp):
                self.check_operator(node, scope, flags)
            elif isinstance(node, ast.AugAssign):
                self.check_augmented(node, scope)
            elif isinstance(node, (ast.Attribute, ast.Name)):
                in_fstring = bool(flags & _Collector.IN_FSTRING)
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
            framework = _framework(node.module)
            if framework is None or not names:
                return
            shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            self.report(
                node,
                "PRISM001",
                f"`from {node.module} import {shown}` ties this code to {_DISPLAY[framework]}: "
                "use Prism's ops (import prism_core as prism)",
            )
            return
        for alias in node.names:
            framework = self.foreign(alias.name)
            if framework is not None:
                self.report(
                    alias,
                    "PRISM001",
                    f"`import {alias.name}` ties this code to {_DISPLAY[framework]}: use "
                    "Prism's ops (import prism_core as prism)",
                )

    def check_call(self, node: ast.Call, scope: _Scope) -> None:
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
        if _under(dotted, _RANDOM_MODULES) or (
            dotted.startswith("torch.") and dotted[len("torch.") :] in _TORCH_RANDOM
        ):
            last = dotted.rsplit(".", 1)[-1]
            if last in _NORMAL:
                hint = "use prism.random.normal(shape, mean, std, seed=...)"
            else:
                ops = ", ".join(f"prism.{n}" for n in CATALOGUE if n.startswith("random."))
                hint = f"Prism's random ops ({ops}) give the same numbers on every backend"
            self.report(
                node,
                "PRISM007",
                f"{written}() is {_DISPLAY[framework]}'s random generator: {hint}",
            )
            return
        if _under(dotted, _DEVICE_CALLS):
            self.report(
                node,
                "PRISM006",
                f"{written}() is {_DISPLAY[framework]}'s device API: choose devices with "
                "`with prism.device(...)` and move arrays with prism.to_device(x, device)",
            )
            return
        is_dtype, _ = framework_dtype(dotted)
        if not is_dtype:
            op = framework_op(dotted)
            note = _OP_NOTES.get(op or "", "")
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

    def check_method(self, node: ast.Call, func: ast.Attribute, scope: _Scope) -> None:
        attr = func.attr
        if attr in _CONVERSION_METHODS and not node.args:
            self.report(
                node,
                "PRISM003",
                f".{attr}() {_CONVERSION_METHODS[attr]}: keep values in the backend as arrays "
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

    def is_device_move(self, node: ast.Call, scope: _Scope) -> bool:
        if any(kw.arg == "device" for kw in node.keywords):
            return True
        if not node.args:
            return False
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value.split(":", 1)[0].lower() in _DEVICE_STRINGS
        if isinstance(arg, ast.Call):
            return self.dotted(arg.func, scope) == "torch.device"
        name = arg.id if isinstance(arg, ast.Name) else getattr(arg, "attr", "")
        return name.lower().endswith("device")

    def check_builtin(self, node: ast.Call, name: str, scope: _Scope) -> None:
        if name in _BUILTIN_CONVERSIONS:
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
            if isinstance(probe, ast.Constant) and probe.value in _PROBES:
                self.report(
                    node,
                    "PRISM008",
                    f"hasattr(x, {probe.value!r}) probes for a framework's array: convert with "
                    "prism.asarray(x) instead",
                )

    def framework_type(self, node: ast.AST, scope: _Scope) -> str | None:
        """The dotted name of ``node`` when it is a framework's type (``numpy.ndarray``), else
        None.  The frameworks' typing modules (``torch.types._Number``, ``numpy.typing``) name
        Python types, not the framework's."""
        dotted = self.dotted(node, scope)
        if dotted is None or not self.foreign(dotted) or _under(dotted, _TYPING_MODULES):
            return None
        return dotted

    def check_type_compare(self, node: ast.Compare, scope: _Scope) -> None:
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

    def check_operator(self, node: ast.BinOp, scope: _Scope, flags: int) -> None:
        known = OPERATORS.get(type(node.op))
        if known is None or not self.is_array(node, scope):
            return
        symbol, op = known
        # Not rewritten inside f-strings (Python 3.11 places their parts only roughly) or with
        # a comment between the operands (the rewrite would drop it).
        fixable = not flags & _Collector.IN_FSTRING and not self.comment_between(
            node.left, node.right
        )
        self.report(
            node,
            "PRISM004",
            f"Python operator `{symbol}` on a Prism array: use prism.{op}(...)",
            node if fixable else None,
            ("operator", op) if fixable else None,
        )

    def check_augmented(self, node: ast.AugAssign, scope: _Scope) -> None:
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
        self, node: ast.Attribute | ast.Name, scope: _Scope, fixable: Mapping[int, str]
    ) -> None:
        if isinstance(node, ast.Attribute):
            if node.attr not in _DTYPE_NAMES:
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
        owner = _DISPLAY[framework]
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
    collector = _Collector()
    collector.visit_many(tree.body, collector.module, 0)
    collector.finish()
    checker = _Checker(collector, lines, allowed_modules, array_types)
    reports = checker.run()
    reports.sort(key=lambda r: (r.line, r.column, r.code))
    return Analysis(reports, frozenset(collector.names), _prism_aliases(collector))


def _prism_aliases(collector: _Collector) -> frozenset[str]:
    inner = [s for s in collector.scopes if s is not collector.module]
    return frozenset(
        name
        for name, bindings in collector.module.bindings.items()
        if all(b[:2] == ("import", "prism_core") for b in bindings)
        and not any(name in s.bindings for s in inner)
    )
