"""The layers of the package: each imports only its own layer or lower ones, through the lower package's
public names, with no import cycle between modules (lazy and ``TYPE_CHECKING`` imports count too); and
react_agent reaches its dependencies through their public names only."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "react_agent"

# lowest first; a unit is a subpackage or a top-level module of react_agent
LAYERS: list[set[str]] = [
    {"_types", "errors"},
    {"_prompts", "parsing"},
    {"tools"},
    {"models"},
    {"runtime"},
    {"integrations"},
    {"core"},
    {"react", "reflection", "plan", "loop", "testing", "decompose", "mcp", "__init__"},
    {"batch", "demo", "examples", "cli", "serve"},
]
BOTTOM = LAYERS[0] | {"_prompts"}  # shared data, errors and prompt sets: importable by name from anywhere
LEVEL = {unit: level for level, units in enumerate(LAYERS) for unit in units}

# dependencies whose private names we never touch
DEPENDENCIES = ("langchain_core", "langchain", "langchain_openai", "langchain_gigachat", "langgraph", "jinja2",
                "pydantic", "llama_cpp", "mcp", "langchain_mcp_adapters", "ray", "fastapi", "uvicorn", "starlette",
                "gigachat", "tenacity", "json_repair", "rich")
INTERNALS = {"root_render_func", "new_context", "_generate", "_agenerate", "_to_args_and_kwargs",
             "_configure_hooks", "_run", "_arun", "_stream", "_astream"}


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _unit(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if MODULES[module].name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _imports(module: str) -> list[tuple[str, list[str], int]]:
    """(imported module, names imported from it, line) for every import in ``module``, anywhere in it."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            names = [alias.name for alias in node.names]
            submodules = [n for n in names if f"{target}.{n}" in MODULES]
            found += [(f"{target}.{n}", [], node.lineno) for n in submodules]
            if rest := [n for n in names if n not in submodules]:
                found.append((target, rest, node.lineno))
    return found


def _own(target: str) -> str | None:
    """The react_agent module an import refers to (the longest known prefix), or None for other packages."""
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in MODULES:
            return name
        parts.pop()
    return None


def test_each_layer_imports_only_lower_layers_through_their_public_names() -> None:
    problems = []
    for module in MODULES:
        unit = _unit(module)
        for target, names, line in _imports(module):
            own = _own(target) if target.startswith("react_agent") else None
            if own is None:
                continue
            other = _unit(own)
            where = f"{module}:{line} imports {own}"
            if LEVEL[other] > LEVEL[unit]:
                problems.append(f"{where}: layer {other!r} is above {unit!r}")
            if other == unit or other in BOTTOM or other == "__init__":
                continue
            if any(part.startswith("_") for part in own.split(".")[1:]):
                problems.append(f"{where}: a private module of {other!r} (import from react_agent.{other})")
            if private := [n for n in names if n.startswith("_")]:
                problems.append(f"{where}: private names {private}")
    assert not problems, "\n".join(problems)


def test_no_import_cycle_between_modules() -> None:
    graph = {m: {o for t, _, _ in _imports(m) if t.startswith("react_agent") and (o := _own(t)) and o != m}
             for m in MODULES}
    # a package's __init__ is imported before any of its modules: an edge to a submodule implies its parents
    for module, targets in graph.items():
        for target in list(targets):
            parts = target.split(".")
            parents = (".".join(parts[:i]) for i in range(2, len(parts)))
            targets.update(p for p in parents if not (module == p or module.startswith(p + ".")))
        targets.discard("react_agent")
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*path[path.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, "\n".join(cycles)


def _defined_names() -> set[str]:
    names: set[str] = set()
    for path in MODULES.values():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)  # setattr/getattr of our own attributes by name
    return names


def test_dependencies_are_used_through_their_public_names_only() -> None:
    ours = _defined_names() - INTERNALS
    problems = []
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                root = node.module.split(".")[0]
                if root in DEPENDENCIES:
                    private = [p for p in node.module.split(".") if p.startswith("_")]
                    private += [a.name for a in node.names if a.name.startswith("_")]
                    if private:
                        problems.append(f"{module}:{node.lineno}: from {node.module} import ... ({private})")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    parts = alias.name.split(".")
                    if parts[0] in DEPENDENCIES and any(p.startswith("_") for p in parts):
                        problems.append(f"{module}:{node.lineno}: import {alias.name}")
            elif isinstance(node, ast.Attribute) and not (isinstance(node.value, ast.Name)
                                                          and node.value.id in ("self", "cls")):
                name = node.attr
                if name in INTERNALS or (name.startswith("_") and not name.startswith("__") and name not in ours):
                    problems.append(f"{module}:{node.lineno}: .{name}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("unit", sorted({_unit(m) for m in MODULES}))
def test_every_unit_has_a_layer(unit: str) -> None:
    assert unit in LEVEL, f"react_agent.{unit} is in no layer of this test: add it where it belongs"
