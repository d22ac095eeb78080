"""The package's shape: the engine below the tool, the tool's layers pointing one way, no
cycle between units. Every import counts: at module level, inside functions, relative,
absolute, and importlib.import_module of a literal name."""
import ast
import functools
import os
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[2] / "gradtool"

# Lowest first: a unit may import its own layer and the layers below it, never one above.
LAYERS = ("engine", "adapters", "capture", "checks", "report", "frontends")
TOP_LEVEL_LIMIT = 12


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py") if "vendor" not in p.parts}


@functools.cache
def _tree(name):
    """The module's syntax tree, parsed once for every test of this file (and only when a test
    runs: the runs that leave these tests out collect this file too)."""
    path = MODULES[name]
    return ast.parse(path.read_text(), str(path))


def _imports(name, path):
    """(line, imported module) for every import in the file, resolved to gradtool's modules."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(_tree(name)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                if node.level else []
            target = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:  # `from . import x` imports the module x when there is one
                child = f"{target}.{alias.name}"
                found.append((node.lineno, child if child in MODULES else target))
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            found.append((node.lineno, node.args[0].value))
    return [(line, target) for line, target in found
            if target == "gradtool" or target.startswith("gradtool.")]


@functools.cache
def imports():
    """{module: its imports of gradtool's modules}."""
    return {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module):
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def _unit(module):
    """What a cycle is counted between: the engine's packages and modules (autograd, nn,
    linalg, ...) and the tool's layers' modules and packages (checks.gradcheck, frontends.cli)."""
    parts = module.split(".")
    return ".".join(parts[:3])


def test_imports_point_down_the_layers():
    wrong = []
    for name, found in imports().items():
        mine = _layer(name)
        if mine is None:
            continue  # gradtool/__init__.py and __main__.py: the public front door, above all
        for line, target in found:
            theirs = _layer(target)
            if theirs is None or LAYERS.index(theirs) > LAYERS.index(mine):
                wrong.append(f"{MODULES[name].relative_to(PACKAGE.parent)}:{line} ({mine}) "
                             f"imports {target} ({theirs or 'the top-level package'})")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)


def test_the_engine_imports_nothing_of_the_tool_nor_of_rich_and_graphviz():
    tool_libraries = ("rich", "typer", "graphviz")
    wrong = []
    for name, path in MODULES.items():
        if _layer(name) not in ("engine", "adapters", "capture", "checks"):
            continue
        for node in ast.walk(_tree(name)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            wrong += [f"{name}:{node.lineno} imports {n}" for n in names
                      if n.split(".")[0] in tool_libraries]
    assert not wrong, "only report and the front ends print or draw:\n" + "\n".join(wrong)


def _cycles(graph):
    """The strongly connected components of more than one unit (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_between_units():
    graph = {}
    for name, found in imports().items():
        if _layer(name) is None:
            continue
        graph.setdefault(_unit(name), set()).update(
            _unit(target) for _, target in found
            if _layer(target) is not None and _unit(target) != _unit(name))
    for targets in list(graph.values()):
        for target in targets:
            graph.setdefault(target, set())
    cycles = _cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)


@pytest.mark.parametrize("graph, cycles", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_cycle_finder_finds_cycles(graph, cycles):
    assert _cycles(graph) == cycles


def test_few_top_level_entries():
    entries = [p.name for p in PACKAGE.iterdir()
               if (p.suffix == ".py" or p.is_dir()) and not p.name.startswith(("__", "."))]
    assert set(entries) == set(LAYERS) and len(entries) <= TOP_LEVEL_LIMIT, sorted(entries)
