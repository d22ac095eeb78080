"""Gradient checks: torch's gradcheck and gradgradcheck (same parameters, defaults and
verdicts) over a GradcheckReport that says where a check fails and why: float32 precision,
a non-differentiable point, a nondeterministic backward, a backward that ignores
grad_output, custom-Function hazards, a backward that cannot be differentiated twice."""
from .gradcheck import (GradcheckError, gradcheck, gradcheck_report, gradgradcheck,
                        gradgradcheck_report)
from .result import Diagnosis, Failure, GradcheckReport, PairResult

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck", "gradcheck_report",
           "gradgradcheck_report", "GradcheckReport", "PairResult", "Failure", "Diagnosis"]
