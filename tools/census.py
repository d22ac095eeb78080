"""A census of the torch names real files use, and how many of them gradtool's engine has.

    .venv/bin/python tools/census.py DIR [DIR|FILE|@LIST ...] [--json] [--markdown] [--top N]

It lives in tools/, not benchmarks/: it times nothing (benchmarks/ is `make bench`'s timings);
it is a developer's measurement of the engine's reach, run by hand on a corpus kept outside
the repository (docs/census.md says which one, and how to fetch it again).

Every .py file is read statically with ast (never run); a file with a syntax error is skipped
and counted. What is counted, per file:

- torch names: a name or attribute chain whose root is bound by an import of torch
  (`import torch`, `import torch.nn as nn`, `import torch.nn.functional as F`,
  `from torch import nn, optim`, `from torch.nn import Linear`): `nn.Conv2d`, `F.relu`,
  `torch.optim.Adam`, `torch.utils.data.DataLoader`, `Linear`. A chain is cut at its longest
  prefix that torch has (tools/torch_names.txt), plus one more part when that prefix is a
  module (a name torch lacks is still a name the file needs); parts from the first private
  one (`_x`, `__init__`) on are dropped. Every imported torch path counts once more, at the
  import: a file stops there when the engine lacks it. An alias the file rebinds is no longer
  torch's from there on: inside a function that takes it as a parameter or assigns it
  (`def train(optimizer)` after `from torch.optim import optimizer`; `data, y = data.to(d)`
  after `from torch.utils import data`), and at module level from the line that assigns it
  (`optim = torch.optim.Adam(...)` after `import torch.optim as optim`), in the functions too.
  Imports of private paths
  (`torch._six`, `torch.nn.modules._utils`) are not counted: they are torch's internals,
  which the engine does not mirror and torch itself moves between versions.
- Tensor methods, counted as `Tensor.<name>` wherever they are called on anything
  (`x.view(...)`, `h.masked_fill_(...)`), and Tensor properties read on anything (`x.shape`,
  `w.grad`, `a.mT`), when the name is a public method (resp. property) of torch.Tensor and
  the method or attribute of no builtin object (list, tuple, dict, set, str, bytes, int,
  float, complex): `.index`, `.copy`, `.split`, `.sort`, `.count`, `.real` say nothing about
  a tensor. Names numpy arrays share (`.reshape`, `.sum`, `.shape`) are counted: a torch
  file's numpy calls are few beside its tensor calls, and the engine has those names anyway.
  `.name` is not counted either (every other object has one).
- Module methods, counted as `Module.<name>` under the same rule (`model.parameters()`,
  `.named_modules()`, `.register_forward_hook(...)`, `.apply(fn)`); a name that is both a
  Tensor and a Module method (`.to`, `.cuda`, `.float`, `.requires_grad_`) cannot be told
  apart statically: it is counted as `Tensor.<name>` and is on the engine only when both the
  engine's Tensor and its Module have it. Names an optimizer shares (`.zero_grad`,
  `.state_dict`) count as Module's.

A name is on the engine when it resolves under `gradtool.as_torch()` exactly as a user's
`import torch` file reaches it (a torch module by importing it, `import torch.utils.checkpoint`;
any other name by attributes, then submodule imports), and for `Tensor.<name>`
and `Module.<name>` when the engine's Tensor or nn.Module has the attribute.

Coverage: the share of name uses (every occurrence) the engine has, the share of files that
use no missing name (the files whose torch names all resolve: the ones that do not stop at
the first missing name), and both per family (torch, Tensor, Module, nn, nn.functional,
linalg, fft, special, distributions, utils, optim, autograd, func, cuda, ...)."""
import argparse
import ast
import collections
import importlib
import inspect
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TORCH_NAMES = os.path.join(HERE, "torch_names.txt")

# the objects whose method names say nothing about the receiver being a tensor or a module
BUILTIN_OBJECTS = (list, tuple, dict, set, frozenset, str, bytes, int, float, complex)
AMBIGUOUS_ATTRIBUTES = {"name"}
# families with a name of their own; anything else is the first part after `torch.`
TWO_PART_FAMILIES = {"nn.functional", "nn.init", "nn.utils", "nn.parallel", "utils.data",
                     "utils.checkpoint", "autograd.functional", "optim.lr_scheduler"}
FAMILY_OF_TWO_PART = {"utils.data": "utils", "utils.checkpoint": "utils",
                      "optim.lr_scheduler": "optim"}


def load_torch_names(path=TORCH_NAMES):
    """{"modules", "names", "Tensor": {name: kind}, "Module": {name: kind}} from the data file."""
    table = {"modules": set(), "names": set(), "Tensor": {}, "Module": {}}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#"):
                continue
            kind, name = line.split()
            if kind in ("method", "property"):
                owner, attr = name.split(".", 1)
                table[owner][attr] = kind
            else:
                table["names"].add(name)
                if kind == "module":
                    table["modules"].add(name)
    return table


def builtin_attribute_names():
    return {name for obj in BUILTIN_OBJECTS for name in dir(obj)}


class FileScan(ast.NodeVisitor):
    """The torch names one parsed file uses: `uses` is a Counter of qualified names."""

    def __init__(self, torch_names):
        self.torch = torch_names
        self.aliases = {}  # local name -> the torch path it is bound to
        self.rebound_at = {}  # alias -> first line where module-level code assigns it
        self.local_names = []  # a stack: the names each enclosing function binds itself
        self.uses = collections.Counter()
        self.skip_builtin = builtin_attribute_names() | AMBIGUOUS_ATTRIBUTES

    # -- imports bind aliases; the import itself is a use (a file stops there)
    def visit_Import(self, node):
        for alias in node.names:
            if alias.name != "torch" and not alias.name.startswith("torch."):
                continue
            if private(alias.name):
                continue
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                self.aliases["torch"] = "torch"  # `import torch.nn` binds `torch`
            if alias.name != "torch":
                self.uses[alias.name] += 1

    def visit_ImportFrom(self, node):
        module = node.module or ""
        if node.level or not (module == "torch" or module.startswith("torch.")):
            return
        for alias in node.names:
            if alias.name == "*" or private(f"{module}.{alias.name}"):
                continue
            path = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = path
            self.uses[path] += 1

    # -- a rebound alias is the file's own variable, not torch's module
    def visit_FunctionDef(self, node):
        self.local_names.append(bound_names(node))
        self.generic_visit(node)
        self.local_names.pop()

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def _is_alias(self, node):
        if node.id not in self.aliases or any(node.id in names for names in self.local_names):
            return False
        line = self.rebound_at.get(node.id)
        return line is None or (not self.local_names and node.lineno < line)

    # -- names and attribute chains
    def visit_Name(self, node):
        if isinstance(node.ctx, ast.Load) and self._is_alias(node):
            target = self.aliases[node.id]
            if target != "torch" and target not in self.torch["modules"]:
                self.uses[target] += 1  # `Linear(...)` after `from torch.nn import Linear`

    def visit_Call(self, node):
        if isinstance(node.func, ast.Attribute) and not self._torch_chain(node.func):
            self._method(node.func.attr, called=True)
        self.generic_visit(node)

    def visit_Attribute(self, node):
        chain = self._torch_chain(node)
        if chain is not None:
            name = self._cut(chain)
            if name is not None:
                self.uses[name] += 1
            return  # the chain's inner nodes are part of this one
        if isinstance(node.ctx, ast.Load) and not self._is_call_target(node):
            self._method(node.attr, called=False)
        self.generic_visit(node)

    def _is_call_target(self, node):
        return id(node) in self._call_targets

    def scan(self, tree):
        for node in ast.walk(tree):  # aliases first: a use above its import still counts
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self.visit(node)
        self.uses.clear()
        for node in module_level_nodes(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                    node.id in self.aliases:
                first = self.rebound_at.get(node.id, node.lineno)
                self.rebound_at[node.id] = min(node.lineno, first)
        self._call_targets = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        self.visit(tree)
        return self.uses

    def _torch_chain(self, node):
        """['torch', 'nn', 'Conv2d'] for `nn.Conv2d` (nn bound to torch.nn), else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not self._is_alias(node):
            return None
        return self.aliases[node.id].split(".") + parts[::-1]

    def _cut(self, chain):
        for i, part in enumerate(chain):
            if part.startswith("_"):
                chain = chain[:i]
                break
        for end in range(len(chain), 1, -1):
            prefix = ".".join(chain[:end])
            if prefix in self.torch["names"]:
                if prefix in self.torch["modules"] and end < len(chain):
                    return prefix + "." + chain[end]  # a name torch's module lacks
                return None if prefix in self.torch["modules"] else prefix
        return ".".join(chain[:2]) if len(chain) > 1 else None

    def _method(self, attr, called):
        if attr.startswith("_") or attr in self.skip_builtin:
            return
        want = "method" if called else "property"
        if self.torch["Tensor"].get(attr) == want:
            self.uses[f"Tensor.{attr}"] += 1
        elif self.torch["Module"].get(attr) == want:
            self.uses[f"Module.{attr}"] += 1


FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


def module_level_nodes(tree):
    """The nodes of the module's own code, not those inside its functions."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        todo.extend(child for child in ast.iter_child_nodes(node)
                     if not isinstance(child, FUNCTIONS))


def bound_names(function):
    """The names a function binds itself: its parameters and the names its body assigns
    (not those it declares global or nonlocal, nor those of the functions it defines)."""
    args = function.args
    names = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    names |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
    body = function.body if isinstance(function.body, list) else [function.body]
    declared = set()
    for statement in body:
        for node in module_level_nodes(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                declared.update(node.names)
    return names - declared


def private(path):
    """torch._six, torch.nn.modules._utils: torch's internals, not the API the engine mirrors."""
    return any(part.startswith("_") for part in path.split("."))


def python_files(sources):
    """The .py files under each directory, each file given, each path listed in an @file."""
    for source in sources:
        if source.startswith("@"):
            with open(source[1:]) as f:
                yield from python_files([line.strip() for line in f if line.strip()])
        elif os.path.isdir(source):
            for root, dirs, files in os.walk(source):
                dirs.sort()
                yield from (os.path.join(root, f) for f in sorted(files) if f.endswith(".py"))
        else:
            yield source


def family(name):
    if name.startswith(("Tensor.", "Module.")):
        return name.split(".")[0]
    parts = name.split(".")[1:]
    two = ".".join(parts[:2])
    if two in TWO_PART_FAMILIES:
        return FAMILY_OF_TWO_PART.get(two, two)
    return parts[0] if len(parts) > 1 else "torch"


class Engine:
    """Whether gradtool's engine has a name, looked up as a user's `import torch` file would."""

    def __init__(self, torch_names):
        import gradtool
        from gradtool.engine.nn import Module
        self.as_torch = gradtool.as_torch
        self.tensor, self.module = gradtool.engine.Tensor, Module
        # a name both torch's Tensor and Module have is on the engine when both of its have it
        self.shared = {name for name, kind in torch_names["Module"].items()
                       if kind == torch_names["Tensor"].get(name)}
        self.modules = torch_names["modules"]
        self.known = {}

    def has(self, name):
        if name not in self.known:
            self.known[name] = self._has(name)
        return self.known[name]

    def _has(self, name):
        owner, _, attr = name.partition(".")
        if owner == "Tensor":
            return hasattr(self.tensor, attr) and (attr not in self.shared or
                                                   hasattr(self.module, attr))
        if owner == "Module":
            return hasattr(self.module, attr)
        with self.as_torch():
            if name in self.modules:  # a module is imported, as the file does
                try:
                    importlib.import_module(name)
                    return True
                except ImportError:
                    return False
            parts = name.split(".")
            try:
                obj = importlib.import_module("torch")
            except ImportError:
                return False
            path = "torch"
            for part in parts[1:]:
                path += "." + part
                try:
                    obj = getattr(obj, part)
                    continue
                except AttributeError:
                    pass
                if not inspect.ismodule(obj):
                    return False
                try:
                    obj = importlib.import_module(path)
                except ImportError:
                    return False
            return True


def census(sources, torch_names=None, engine=None):
    """The census of the files in `sources` (see python_files) as a dict (what --json prints)."""
    torch_names = torch_names or load_torch_names()
    engine = engine or Engine(torch_names)
    files, skipped = {}, []
    for path in python_files(sources):
        try:
            with open(path, "rb") as f:  # bytes: ast reads the BOM and coding cookie itself
                tree = ast.parse(f.read(), filename=path)
        except (SyntaxError, ValueError):
            skipped.append(path)
            continue
        files[path] = FileScan(torch_names).scan(tree)
    return summarize(files, skipped, engine)


def summarize(files, skipped, engine):
    uses, in_files = collections.Counter(), collections.Counter()
    for counts in files.values():
        uses.update(counts)
        in_files.update(counts.keys())
    names = sorted(uses, key=lambda n: (-in_files[n], -uses[n], n))
    table = [{"name": n, "files": in_files[n], "uses": uses[n], "family": family(n),
              "on_engine": engine.has(n)} for n in names]
    on = {row["name"] for row in table if row["on_engine"]}
    families = {}
    for row in table:
        fam = families.setdefault(row["family"], {"names": 0, "names_on_engine": 0, "uses": 0,
                                                  "uses_on_engine": 0, "files": set(),
                                                  "files_complete": set()})
        fam["names"] += 1
        fam["names_on_engine"] += row["on_engine"]
        fam["uses"] += row["uses"]
        fam["uses_on_engine"] += row["uses"] * row["on_engine"]
    for path, counts in files.items():
        by_family = collections.defaultdict(list)
        for n in counts:
            by_family[family(n)].append(n in on)
        for fam, found in by_family.items():
            families[fam]["files"].add(path)
            if all(found):
                families[fam]["files_complete"].add(path)
    total_uses = sum(uses.values())
    complete = [p for p, counts in files.items() if all(n in on for n in counts)]
    return {
        "files": len(files),
        "files_skipped": len(skipped),
        "skipped": skipped,
        "files_complete": len(complete),
        "files_complete_percent": percent(len(complete), len(files)),
        "names": len(table),
        "names_on_engine": len(on),
        "uses": total_uses,
        "uses_on_engine": sum(uses[n] for n in on),
        "uses_percent": percent(sum(uses[n] for n in on), total_uses),
        "families": {fam: {"names": f["names"], "names_on_engine": f["names_on_engine"],
                           "uses": f["uses"], "uses_on_engine": f["uses_on_engine"],
                           "uses_percent": percent(f["uses_on_engine"], f["uses"]),
                           "files": len(f["files"]),
                           "files_complete": len(f["files_complete"]),
                           "files_percent": percent(len(f["files_complete"]), len(f["files"]))}
                     for fam, f in sorted(families.items(), key=lambda kv: -kv[1]["uses"])},
        "table": table,
    }


def percent(part, whole):
    return round(100.0 * part / whole, 1) if whole else 100.0


def markdown(result, top, top_missing=None):
    yes = {True: "yes", False: "**no**"}
    out = [f"Files: {result['files']} parsed, {result['files_skipped']} skipped (syntax "
           f"errors). Names: {result['names']}, {result['names_on_engine']} on the engine.",
           "",
           f"- name uses on the engine: **{result['uses_percent']}%** "
           f"({result['uses_on_engine']} of {result['uses']})",
           f"- files that use no missing name: **{result['files_complete_percent']}%** "
           f"({result['files_complete']} of {result['files']})",
           "", "| family | names (on engine) | uses on engine | files using it | "
           "files with none missing |", "|---|---|---|---|---|"]
    for fam, f in result["families"].items():
        out.append(f"| {fam} | {f['names']} ({f['names_on_engine']}) | {f['uses_percent']}% "
                   f"| {f['files']} | {f['files_percent']}% |")
    out += ["", f"Top {top} names by files:", "", "| # | name | files | uses | on engine |",
            "|---|---|---|---|---|"]
    for i, row in enumerate(result["table"][:top], 1):
        out.append(f"| {i} | `{row['name']}` | {row['files']} | {row['uses']} | "
                   f"{yes[row['on_engine']]} |")
    missing = [row for row in result["table"] if not row["on_engine"]]
    top_missing = top if top_missing is None else top_missing
    out += ["", f"Top {top_missing} missing names by files:", "", "| # | name | files | uses |",
            "|---|---|---|---|"]
    for i, row in enumerate(missing[:top_missing], 1):
        out.append(f"| {i} | `{row['name']}` | {row['files']} | {row['uses']} |")
    return "\n".join(out) + "\n"


def text(result, top):
    out = [f"{result['files']} files ({result['files_skipped']} skipped), {result['names']} "
           f"names; uses on the engine {result['uses_percent']}%, files with no missing name "
           f"{result['files_complete_percent']}%", ""]
    for fam, f in result["families"].items():
        out.append(f"  {fam:22} uses {f['uses_percent']:5}%  files {f['files_percent']:5}%  "
                   f"names {f['names_on_engine']}/{f['names']}")
    out.append("")
    for row in result["table"][:top]:
        out.append(f"  {row['files']:5} {row['uses']:6}  {'yes' if row['on_engine'] else 'NO ':3}"
                   f"  {row['name']}")
    return "\n".join(out) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sources", nargs="+", help="directories, .py files, @list files")
    parser.add_argument("--json", action="store_true", help="the whole census as JSON")
    parser.add_argument("--markdown", action="store_true", help="tables for docs/census.md")
    parser.add_argument("--top", type=int, default=150, help="rows of the tables (150)")
    parser.add_argument("--top-missing", type=int, help="rows of the missing names' table "
                        "(as --top)")
    args = parser.parse_args(argv)
    result = census(args.sources)
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        sys.stdout.write("\n")
    elif args.markdown:
        sys.stdout.write(markdown(result, args.top, args.top_missing))
    else:
        sys.stdout.write(text(result, args.top))


if __name__ == "__main__":
    main()
