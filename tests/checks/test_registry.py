"""Every diagnosis kind is registered once (diagnosis.KINDS) and documented where the registry
says; every kind the code names is registered (an unknown kind is refused at construction)."""
import os
import re

import pytest

from gradtool.checks.diagnoses import KINDS, SEVERITIES, Diagnosis

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kind_is_documented_where_the_registry_says(kind):
    entry = KINDS[kind]
    assert entry.severity in SEVERITIES and entry.advice
    with open(os.path.join(REPO, entry.documented), encoding="utf-8") as f:
        assert f"`{kind}`" in f.read() or kind in entry.documented, (kind, entry.documented)
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        assert f"`{kind}`" in f.read(), f"README.md does not name `{kind}`"


def test_every_kind_named_in_the_code_is_registered():
    named = set()
    for folder, _, files in os.walk(os.path.join(REPO, "gradtool")):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                named |= set(re.findall(r'(?:Diagnosis|_found)\(\s*"([a-z_]+)"', text))
    assert named and named <= set(KINDS), named - set(KINDS)


def test_an_unregistered_kind_is_refused_and_advice_comes_from_the_registry():
    with pytest.raises(AssertionError, match="KINDS"):
        Diagnosis("no_such_kind", "error", "message")
    assert Diagnosis("random_forward", "error", "m").advice == KINDS["random_forward"].advice
