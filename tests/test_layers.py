"""The architecture as a test: the import graph of verify's modules (from their top-level imports, read with ast)
has no cycle and no arrow from a lower layer to a higher one; imports inside functions are only of heavy
libraries (each commented); at most 8 loose modules at the top of verify/; the independent re-checker (recheck/)
imports nothing of verify or lemmas.

The layers, bottom to top (docs: README.md's Layout, CONTRIBUTING.md's "Layers and imports"):
base (errors, inputs, lazy, verify.run: the part registry, executor, atomic writes, lock, code version, cache) →
model → evidence (the one verdict rule) → derive → engines → certify (with Coq) → gathering (the evidence the
claims and probes share: verify.evidence's runs, regime records, ball facts, leading terms) → claims (verify.checks,
lemmas) → probes, fuzz, sweep, reconcile → report → pipeline (``verify all``) → cli (and the bench, the public API).
"""
from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("verify", "lemmas", "recheck")

# Module-name prefixes of each layer, bottom first; a module is in the layer of its longest matching prefix.
LAYERS = [
    ("base", ["verify", "verify.lazy", "verify.errors", "verify.inputs", "verify.run", "recheck"]),
    ("model", ["verify.model", "verify.plotting"]),
    ("evidence", ["verify.evidence"]),
    # the z3-style API over SymPy the SMT obligations are built with (printed as Coq theorems above)
    ("derive", ["verify.derive", "verify.coq.sympylib"]),
    ("engines", ["verify.engines"]),
    ("certify", ["verify.certify", "verify.coq"]),
    # evidence gathered from runs, balls and derivations, shared by claims and probes (above the engines it runs)
    ("gathering", ["verify.evidence.regime_runs", "verify.evidence.regime_records", "verify.evidence.ball_facts",
                   "verify.evidence.leading_terms"]),
    ("claims", ["verify.checks", "lemmas"]),
    ("probes", ["verify.probes", "verify.fuzz", "verify.sweep", "verify.reconcile"]),
    ("report", ["verify.report"]),
    ("pipeline", ["verify.pipeline"]),
    ("cli", ["verify.cli", "verify.bench", "verify.api", "verify.__main__"]),   # python -m verify: the command line
]

# Libraries that may be imported inside a function (each such import says so: ``# heavy: <library>``): their
# import costs more than a command line's start-up should pay when it does not use them (CPU seconds of
# `python -c 'import x'` on the development machine: sympy 0.5, jax 1.3, sklearn 1.4, distributed 0.7, pandas 0.5,
# numba 0.4, matplotlib 0.3, dask 0.25, pyarrow 0.17, hypothesis 0.17, scipy 0.13, numpy 0.15, jsonschema 0.12,
# mpmath 0.09, z3 0.08, cvc5 0.05, flint 0.05). A module of ours imported lazily is one that loads a heavy library
# the importing module does not load otherwise (the comment names it: ``# heavy: loads flint,sympy``).
HEAVY = frozenset({"matplotlib", "jax", "jaxlib", "flint", "sympy", "mpmath", "dask", "distributed", "z3", "cvc5",
                   "sklearn", "numba", "scipy", "pandas", "pyarrow", "hypothesis", "numpy", "jsonschema"})
HEAVY_COMMENT = re.compile(r"#\s*heavy:\s*(?:loads\s+)?([\w, ]+)")


def modules() -> dict[str, tuple[Path, bool]]:
    """{dotted name: (path, is a package's __init__)} of every module of the three packages."""
    out = {}
    for pkg in PACKAGES:
        for p in sorted((ROOT / pkg).rglob("*.py")):
            if "__pycache__" in p.parts:
                continue
            parts = list(p.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (p, is_pkg)
    return out


MODULES = modules()


@functools.lru_cache(maxsize=None)
def source(mod: str) -> tuple[str, ast.Module]:
    """A module's text and syntax tree, read once."""
    text = MODULES[mod][0].read_text()
    return text, ast.parse(text)


@functools.lru_cache(maxsize=None)
def lazy_exports(pkg: str) -> dict[str, str]:
    """A lazy package's {public name: defining module} (its ``_EXPORTS``, verify.lazy)."""
    path, is_pkg = MODULES[pkg]
    if not is_pkg:
        return {}
    for node in source(pkg)[1].body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "_EXPORTS" for t in node.targets):
            table = eval(compile(ast.Expression(node.value), str(path), "eval"), {"dict": dict})
            return {k: pkg + v if v.startswith(".") else v for k, v in table.items()}
    return {}


def targets(mod: str, is_pkg: bool, node) -> set[str]:
    """The project modules an import statement in ``mod`` loads (a lazy package's export resolved to its module)."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names if a.name.split(".")[0] in PACKAGES}
    if node.level:
        base = mod.split(".")[:None if is_pkg else -1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] not in PACKAGES:
        return set()
    out = set()
    for a in node.names:
        if f"{target}.{a.name}" in MODULES:
            out.add(f"{target}.{a.name}")
        else:
            out.add(target)
            out |= {m for name, m in lazy_exports(target).items() if name == a.name}
    return out


def import_nodes(tree):
    """(import node, inside a function?) for every import statement of a module."""
    found = []

    def walk(node, inside):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                found.append((child, inside))
            walk(child, inside or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))
    walk(tree, False)
    return found


def top_level_graph() -> dict[str, set[str]]:
    """{module: the project modules its top-level imports load}, without its own enclosing packages (initialised
    before it); a package whose ``__init__`` imports all its modules (pkgutil) points at each."""
    graph = {}
    for mod, (path, is_pkg) in MODULES.items():
        text, tree = source(mod)
        edges = set()
        for node, inside in import_nodes(tree):
            if not inside:
                edges |= targets(mod, is_pkg, node)
        if is_pkg and "iter_modules(__path__)" in text:
            edges |= {m for m in MODULES if m.rpartition(".")[0] == mod and not m.endswith("__main__")}
        parts = mod.split(".")
        graph[mod] = edges - {".".join(parts[:i]) for i in range(1, len(parts) + 1)}
    return graph


def layer(mod: str) -> int:
    best, length = None, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (mod == p or mod.startswith(p + ".")) and len(p) > length:
                best, length = i, len(p)
    assert best is not None, f"{mod} is in no layer: add it to LAYERS"
    return best


def cycles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def third_party_root(node) -> str | None:
    if isinstance(node, ast.Import):
        return node.names[0].name.split(".")[0]
    return None if node.level else (node.module or "").split(".")[0]


def heavy_libraries(graph, mod: str) -> set[str]:
    """The heavy libraries importing ``mod`` loads by its top-level imports, directly or through project modules
    (a ``lazy_module("x")`` stand-in counted as loading x)."""
    seen, todo, libs = {mod}, [mod], set()
    while todo:
        m = todo.pop()
        text, tree = source(m)
        for node, inside in import_nodes(tree):
            root = third_party_root(node)
            if not inside and root in HEAVY:
                libs.add(root)
        libs |= set(re.findall(r'lazy_module\("(\w+)', text)) & HEAVY
        for t in graph[m] - seen:
            seen.add(t)
            todo.append(t)
    return libs


def test_the_import_graph_has_no_cycle():
    assert cycles(top_level_graph()) == []


def test_no_arrow_from_a_lower_layer_to_a_higher_one():
    graph = top_level_graph()
    wrong = []
    for mod, edges in sorted(graph.items()):
        for t in sorted(edges):
            text, tree = source(t)
            empty = MODULES[t][1] and not any(targets(t, True, n) for n, inside in import_nodes(tree) if not inside) \
                and "iter_modules(__path__)" not in text
            if not empty and layer(t) > layer(mod):
                wrong.append(f"{mod} ({LAYERS[layer(mod)][0]}) -> {t} ({LAYERS[layer(t)][0]})")
    assert wrong == []


def test_the_layers_are_checked_against_a_known_arrow():
    """The check above can fail: an arrow from the report up to the pipeline is one."""
    assert layer("verify.report.results") < layer("verify.pipeline.runner") < layer("verify.cli.all")
    assert layer("verify.run.parts") < layer("verify.model.setting") < layer("verify.engines.reduced_iteration")
    assert layer("verify.evidence.decision") < layer("verify.derive") < layer("verify.evidence.ball_facts") \
        < layer("verify.checks")
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def function_level_imports():
    """(file, line, import node, its first line) of every import inside a function."""
    for mod, (path, _) in sorted(MODULES.items()):
        text, tree = source(mod)
        lines = text.splitlines()
        for node, inside in import_nodes(tree):
            if inside:
                yield path.relative_to(ROOT).as_posix(), node.lineno, node, mod, lines[node.lineno - 1]


def test_imports_inside_functions_are_only_of_heavy_libraries():
    """A function-level import is of a heavy library, or of a project module that loads one (kept lazy so that a
    command line's start-up does not pay for it), and says which: ``# heavy: <library>``. Everything else is
    imported at the top of its module."""
    graph = top_level_graph()
    heavy = functools.lru_cache(maxsize=None)(lambda t: frozenset(heavy_libraries(graph, t)))
    wrong = []
    for rel, line, node, mod, text in function_level_imports():
        said = HEAVY_COMMENT.search(text)
        named = {w.strip() for w in said.group(1).split(",")} if said else set()
        project = targets(mod, MODULES[mod][1], node)
        if project:
            loads = set().union(*(heavy(t) for t in project))
            ok = bool(named) and named <= HEAVY and bool(named & loads)
        else:
            ok = third_party_root(node) in HEAVY and third_party_root(node) in named
        if not ok:
            wrong.append(f"{rel}:{line}: {text.strip()}")
    assert wrong == [], "\n".join(wrong)


def test_at_most_eight_loose_modules_at_the_top_of_verify():
    loose = sorted(p.name for p in (ROOT / "verify").glob("*.py"))
    assert len(loose) <= 8, loose


def test_the_rechecker_imports_nothing_of_verify_or_lemmas():
    """recheck/ is independent of the toolkit by its own imports, at any depth (not by lazy package files)."""
    found = []
    for path in sorted((ROOT / "recheck").rglob("*.py")):
        for node, _ in import_nodes(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            if isinstance(node, ast.ImportFrom) and node.level:
                continue                                   # within recheck itself
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("verify", "lemmas")]
    assert found == []
    assert (ROOT / "recheck" / "__main__.py").is_file()


def test_probes_reach_the_claims_only_through_their_registry():
    """Claims are not libraries: nothing above them (probes, fuzz, sweep, reconcile, report, pipeline, cli) imports a
    claim module, at any depth of a function, except the ``lemmas`` package itself (its ``CLAIMS`` registry); what
    claims and probes share lives below both (verify.evidence)."""
    claims = layer("lemmas")
    wrong = []
    for mod, (path, is_pkg) in sorted(MODULES.items()):
        if not mod.startswith("verify.") or layer(mod) <= claims:
            continue
        for node, _ in import_nodes(source(mod)[1]):
            wrong += [f"{mod} -> {t}" for t in sorted(targets(mod, is_pkg, node)) if t.startswith("lemmas.")]
    assert wrong == []
    assert layer("verify.probes.rates") > claims and layer("verify.sweep.measures") > claims
