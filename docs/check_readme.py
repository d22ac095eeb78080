"""Run every command the README shows and compare what it prints with what the README says it
prints (the README promises both). It works in a copy of the committed tree (`git archive
HEAD`), writes there the files the README says to save ("Saved as `demo.py`:"), and runs each
`$ command` of a code block with `.venv/bin` first on PATH, colour off and output piped, as a
reader's shell would. Commands through `.venv-torch/` need `make parity`'s venv; without it they
are reported as skipped. Not a test: it takes a minute and wants PyTorch.

    .venv/bin/python docs/check_readme.py
"""
import difflib
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    with tempfile.TemporaryDirectory() as root:
        archive = subprocess.run(["git", "archive", "HEAD"], cwd=REPO, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", root], input=archive, check=True)
        if os.path.isdir(os.path.join(REPO, ".venv-torch")):
            os.symlink(os.path.join(REPO, ".venv-torch"), os.path.join(root, ".venv-torch"))
        return check(root)


def check(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        text = f.read()
    for m in re.finditer(r"```python\n(.*?)```", text, re.S):
        saved = re.search(r"[Ss]aved as\s+`([\w.]+)`[^`]*$", text[max(0, m.start() - 150):m.start()])
        if saved:
            with open(os.path.join(root, saved.group(1)), "w", encoding="utf-8") as f:
                f.write(m.group(1))
    env = dict(os.environ, NO_COLOR="1",
               PATH=os.path.join(REPO, ".venv", "bin") + os.pathsep + os.environ["PATH"])
    env.pop("COLUMNS", None)
    failed, last_rc = 0, None
    for body in re.findall(r"```\w*\n(.*?)```", text, re.S):
        if not body.startswith("$ "):
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            command, _, expected = chunk.partition("\n")
            if command.startswith(".venv-torch/") and not os.path.exists(
                    os.path.join(root, ".venv-torch")):
                print(f"skipped (no .venv-torch): {command}")
                continue
            if command == "echo $?":
                got = f"{last_rc}\n"
            else:
                run = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True,
                                     text=True)
                last_rc, got = run.returncode, run.stdout + run.stderr
            got, expected = ("\n".join(line.rstrip() for line in s.strip("\n").splitlines())
                             for s in (got, expected))
            if got == expected:
                print(f"ok: {command}")
            else:
                failed += 1
                print(f"DIFFERS: {command}")
                print("\n".join(difflib.unified_diff(expected.splitlines(), got.splitlines(),
                                                     "README", "now", lineterm="")))
    print(f"{failed} command(s) print something else than the README shows")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
