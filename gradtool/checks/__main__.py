"""`python -m gradtool.checks > docs/diagnoses.md`: the page of every diagnosis kind, made
from their registry (diagnoses.KINDS)."""
from .diagnoses import page

print(page(), end="")
