"""Gathers the census corpus: for each repository of tools/census_corpus.tsv, from a snapshot
already fetched under MIRROR/<owner>+<name>/repo (a git directory), up to PER_REPO files that
import torch, copied to OUT (outside the repository: the files are others' code, never
committed), and rewrites the list with each snapshot's commit and its counts.

    python3 tools/census_corpus.py --mirror /work/.mirror --out /tmp/census/corpus

Which files: .py files and the code cells of .ipynb notebooks (shell escapes and magics
commented out) with an `import torch` or `from torch` line, outside tests, docs, benchmarks,
vendored folders, setup.py, conftest.py and __init__.py, and not a vendored copy of torch
itself (a `torch/` folder); the PER_REPO with the most `torch.`/`nn.`/`F.` references each,
so that no repository dominates and each one's model and training code is what is kept."""
import argparse
import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
LIST = os.path.join(HERE, "census_corpus.tsv")
SKIP = re.compile(r"(^|/)(tests?|testing|docs?|benchmarks?|third_party|vendor|_vendor|"
                  r"site-packages)/|(^|/)(setup|conftest|__init__)\.py$|(^|/)torch/")
REFERENCE = re.compile(r"\b(torch|nn|F)\.[A-Za-z_]")
IMPORTS_TORCH = re.compile(r"^\s*(import torch\b|from torch\b)", re.M)


def git(gitdir, *args):
    return subprocess.run(["git", "-C", gitdir, *args], capture_output=True, text=True,
                          errors="replace").stdout


def notebook_code(text):
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        return None
    lines = []
    for cell in cells:
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        for line in ("".join(source) if isinstance(source, list) else source).splitlines():
            lines.append("# " + line if line.lstrip().startswith(("%", "!")) else line)
        lines.append("")
    return "\n".join(lines)


def gather(repo, mirror, out, per_repo):
    folder = os.path.join(mirror, repo.replace("/", "+", 1), "repo")
    gitdir = os.path.join(folder, ".git") if os.path.isdir(os.path.join(folder, ".git")) else folder
    commit = git(gitdir, "rev-parse", "HEAD").strip()
    candidates = []
    for path in git(gitdir, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
        if not path.endswith((".py", ".ipynb")) or SKIP.search(path):
            continue
        text = git(gitdir, "show", f"HEAD:{path}")
        if path.endswith(".ipynb"):
            text = notebook_code(text)
        if text and IMPORTS_TORCH.search(text):
            candidates.append((-len(REFERENCE.findall(text)), path, text))
    candidates.sort()
    for _, path, text in candidates[:per_repo]:
        name = path.replace("/", "__")  # (a notebook keeps its .ipynb: a.ipynb.py beside a.py)
        dest = os.path.join(out, repo.replace("/", "+", 1),
                            name if name.endswith(".py") else name + ".py")
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "w", encoding="utf-8") as f:
            f.write(text)
    return commit, len(candidates), min(per_repo, len(candidates))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirror", default="/work/.mirror")
    parser.add_argument("--out", default="/tmp/census/corpus")
    parser.add_argument("--per-repo", type=int, default=6)
    args = parser.parse_args()
    with open(LIST) as f:
        header, *rows = [line.rstrip("\n").split("\t") for line in f]
    lines = ["\t".join(header)]
    for repo, kind, *_ in rows:
        commit, found, kept = gather(repo, args.mirror, args.out, args.per_repo)
        lines.append("\t".join([repo, kind, commit, str(found), str(kept)]))
    with open(LIST, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
