"""The registry of diagnosis kinds (diagnoses.KINDS): every kind registered once, documented,
with a detector or the place that raises it, in the order the checkers run them; the example
pairs it names are the ones the CLI tests run; docs/diagnoses.md is generated from it."""
import os
import re

import pytest

import gradtool.checks  # noqa: F401  (gradcheck's steps register themselves on import)
import gradtool.checks.findings  # noqa: F401  (and inspect's)
from gradtool.checks.diagnoses import KINDS, SEVERITIES, Diagnosis, page
from tests.cli.test_cli import BROKEN

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples")


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_is_documented_and_found_somewhere(kind):
    entry = KINDS[kind]
    assert entry.name == kind and entry.severity in SEVERITIES and entry.advice
    assert len(entry.about.split()) >= 12, f"{kind}: say what it means, why, what to do"
    assert entry.finds or entry.explains or entry.raised, \
        f"{kind}: no detector, and no word of where it is raised"
    for stem in entry.examples:
        for name in (f"broken_{stem}.py", f"{stem}_ok.py"):
            assert os.path.exists(os.path.join(EXAMPLES, name)), (kind, name)


def test_the_example_pairs_are_the_ones_the_cli_tests_provoke():
    """tests/cli/test_cli.py runs every broken example through `gradtool gradcheck` and
    asserts the kind it names appears (and that its _ok twin passes clean)."""
    registered = {f"broken_{stem}.py": kind for kind, entry in KINDS.items()
                  for stem in entry.examples}
    assert registered == {name: b["kind"] for name, b in BROKEN.items()}


def test_the_docs_page_documents_every_kind():
    text = page()  # (tests/package/test_docs.py checks docs/diagnoses.md is this page)
    for kind, entry in KINDS.items():
        assert f"\n## {kind}\n" in text and entry.about in text, kind


def test_inspect_runs_its_detectors_in_registry_order():
    assert [k for k, e in KINDS.items() if e.finds] == [
        "output_no_grad", "saved_modified_in_place", "backward_failed", "input_no_grad",
        "gradient_cut", "saved_detached", "non_leaf_grad", "non_finite_grad", "precision",
        "one_branch", "vmap_batched"]
    assert [k for k, e in KINDS.items() if e.from_graph] == [
        "saved_modified_in_place", "precision"]


def test_gradcheck_explains_the_likeliest_root_cause_first():
    steps = [k for k, e in KINDS.items() if e.explains]
    assert steps == [
        "non_finite_output", "random_forward", "gradient_cut", "backward_not_reentrant",
        "surrogate_gradient", "precision", "round_off", "once_differentiable",
        "non_differentiable_point", "grad_none_for_input", "input_modified_in_forward",
        "ignores_grad_output", "wrong_gradient"]
    # a random forward makes every later probe meaningless: they are skipped after it
    probes = [k for k in steps if KINDS[k].trusts_forward]
    assert probes and all(steps.index(k) > steps.index("random_forward") for k in probes)
    assert {k for k in steps if KINDS[k].orders == (1,)} == {
        "gradient_cut", "backward_not_reentrant", "surrogate_gradient"}
    assert KINDS["once_differentiable"].orders == (2,)


def test_every_kind_named_in_the_code_is_registered():
    named = set()
    for folder, _, files in os.walk(os.path.join(REPO, "gradtool")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                named |= set(re.findall(
                    r'(?:Diagnosis|_found|finds|explains)\(\s*"([a-z_]+)"', text))
    assert named and named <= set(KINDS), named - set(KINDS)


def test_an_unregistered_kind_is_refused_and_advice_comes_from_the_registry():
    with pytest.raises(AssertionError, match="KINDS"):
        Diagnosis("no_such_kind", "error", "message")
    assert Diagnosis("random_forward", "error", "m").advice == KINDS["random_forward"].advice
