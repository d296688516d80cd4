"""The layers' imports: no cycle between project modules, counting imports inside functions too,
and imports inside functions only at the torch boundary (so that importing an adapter, or
constructing a sampler, loads no numerical stack)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("common", "optuna_plugins", "ray_plugins", "mixbo_compare")

# (importing module, imported module): the only imports of project modules inside functions. Each
# is where a method's options build its strategy on the first model suggestion, so that
# `import optuna_plugins` and a sampler's constructor import no torch.
BOUNDARY = {
    ("common.methods.cocabo.options", "common.methods.cocabo.strategy"),
    ("common.methods.casmopolitan.options", "common.methods.casmopolitan.strategy"),
    ("common.methods.bofm.options", "common.methods.bofm.strategy"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(path): path
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
    }


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The project module ``name`` refers to (a name imported from a module: that module)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, bool]]:
    """The project modules ``module`` imports, each with whether the import is in a function.
    Imports under ``if TYPE_CHECKING:`` never run and are not counted."""
    tree = ast.parse(path.read_text())
    found: list[tuple[str, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for child in node.orelse:
                visit(child, in_function)
            return
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                package = module if path.name == "__init__.py" else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            names = [f"{base}.{alias.name}" for alias in node.names]
        else:
            inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            for child in ast.iter_child_nodes(node):
                visit(child, inner)
            return
        for name in names:
            target = _resolve(name, modules)
            if target is not None and target != module:
                found.append((target, in_function))

    visit(tree, False)
    return found


def _graph() -> tuple[dict[str, set[str]], set[tuple[str, str]]]:
    modules = _modules()
    edges: dict[str, set[str]] = {m: set() for m in modules}
    in_functions: set[tuple[str, str]] = set()
    for module, path in modules.items():
        for target, in_function in _imports(module, path, modules):
            edges[module].add(target)
            if in_function:
                in_functions.add((module, target))
    return edges, in_functions


def _cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, or ``None``."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_no_import_cycle() -> None:
    edges, _ = _graph()
    assert _cycle(edges) is None, " -> ".join(_cycle(edges) or [])


def test_imports_inside_functions_only_at_the_torch_boundary() -> None:
    _, in_functions = _graph()
    assert in_functions <= BOUNDARY, sorted(in_functions - BOUNDARY)


def test_the_graph_sees_imports_inside_functions() -> None:
    """The check itself: a cycle through an import inside a function is found."""
    edges = {"a": {"b"}, "b": {"a"}}
    assert _cycle(edges) == ["a", "b", "a"]
    _, in_functions = _graph()
    assert BOUNDARY <= in_functions  # each boundary import is seen where it is


def test_importing_the_optuna_adapter_and_building_samplers_loads_no_torch() -> None:
    code = (
        "import sys, optuna_plugins as p\n"
        "[cls(seed=0) for cls in (p.CoCaBOSampler, p.CasmopolitanSampler, p.BOFMSampler, "
        "p.MixboSampler)]\n"
        "sys.exit('torch' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0
