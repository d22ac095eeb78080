"""numpy's error state while gradtool computes: as torch, inf and nan are results, not
warnings (log(0), 0/0, exp(1000)), so forwards and backward formulas run QUIET."""
import contextvars

import numpy as np

try:  # numpy 2 keeps its error state in a context variable: setting it directly is ~5x
    # cheaper than np.errstate, which matters on the per-op path
    from numpy._core._ufunc_config import _extobj_contextvar as ERRSTATE
    from numpy._core.umath import _make_extobj
    QUIET = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - a numpy that moved its internals: the public way
    class ERRSTATE:
        get = staticmethod(np.geterr)
        set = staticmethod(lambda quiet: np.seterr(all="ignore"))
        reset = staticmethod(lambda old: np.seterr(**old))
    QUIET = None


def quiet_context():
    """A context for running forwards, where numpy's error state is QUIET: Context.run costs
    a fraction of setting and resetting the state around each op (each set allocates)."""
    if QUIET is None:  # pragma: no cover - the public way, set and reset around each call
        return _SetErrRunner()
    ctx = contextvars.copy_context()
    ctx.run(ERRSTATE.set, QUIET)
    return ctx


class _SetErrRunner:  # pragma: no cover - numpy without the context variable
    @staticmethod
    def run(fn, *args):
        old = np.seterr(all="ignore")
        try:
            return fn(*args)
        finally:
            np.seterr(**old)
