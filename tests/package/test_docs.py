"""The docs hold together: every page docs/generate.py makes is committed as it makes it now
(a new option's help or a new row of the op table shows up in docs/ at once), every link of
README.md and docs/*.md reaches a file that exists, no page points at an issue number or the
contract instead of saying why, and the JSON page names the schemas the code writes."""
import importlib.util
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOCS = os.path.join(ROOT, "docs")


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", os.path.join(DOCS, "generate.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


GENERATE = _generator()


@pytest.mark.parametrize("page", sorted(GENERATE.PAGES))
def test_generated_page_is_current(page):
    with open(os.path.join(DOCS, page), encoding="utf-8") as f:
        committed = f.read()
    assert committed == GENERATE.PAGES[page](), (
        f"docs/{page} differs from what docs/generate.py makes now: run "
        f"`.venv/bin/python docs/generate.py` and commit the page")


def _markdown_files():
    pages = [os.path.join(DOCS, name) for name in sorted(os.listdir(DOCS)) if name.endswith(".md")]
    return [os.path.join(ROOT, "README.md")] + pages


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: os.path.relpath(p, ROOT))
def test_links_reach_files(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    missing = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        name, _, anchor = target.partition("#")
        file = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
        if not os.path.exists(file) or (anchor and anchor not in _anchors(file)):
            missing.append(target)
    assert not missing, f"{os.path.relpath(path, ROOT)} links to what does not exist: {missing}"


def _anchors(file):
    """The anchors of a Markdown file's headings, as GitHub makes them."""
    if not file.endswith(".md"):
        return set()
    with open(file, encoding="utf-8") as f:
        headings = [line.lstrip("#").strip() for line in f if line.startswith("#")]
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("path", _markdown_files(), ids=lambda p: os.path.relpath(p, ROOT))
def test_pages_give_reasons_not_issue_numbers(path):
    with open(path, encoding="utf-8") as f:
        found = re.findall(r".*(?:\b[Ii]ssues? [0-9]+\b|contract \u00a7).*", f.read())
    assert not found, found


def test_json_page_names_the_schemas_written():
    from gradtool.report import json as report_json
    with open(os.path.join(DOCS, "json.md"), encoding="utf-8") as f:
        text = f.read()
    for schema in (report_json.INSPECT_SCHEMA, report_json.GRADCHECK_SCHEMA,
                   report_json.AGAINST_SCHEMA):
        assert f'"{schema}"' in text, schema
