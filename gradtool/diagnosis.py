"""Diagnosis: one finding of inspect's diagnostics or of gradcheck, with one set of
snake_case kinds for both (listed in the README)."""
import dataclasses
from typing import Optional

SEVERITIES = ("error", "warning", "info")


@dataclasses.dataclass
class Diagnosis:
    """What is wrong (or worth knowing), how bad, and where.

    severity: "error" is something wrong (a failed check is explained by it, a backward that
    raises); "warning" a hazard the verdict does not reflect (torch would pass it too; exit 1
    only under --strict); "info" context."""
    kind: str                       # snake_case, e.g. wrong_gradient, input_no_grad
    severity: str                   # error | warning | info
    message: str
    details: dict = dataclasses.field(default_factory=dict)
    advice: str = ""                # one line: what to do about it
    location: Optional[str] = None  # file:line in the user's code

    def __post_init__(self):
        assert self.severity in SEVERITIES, self.severity
