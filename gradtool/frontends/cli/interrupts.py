"""Signals end gradtool cleanly. Ctrl-C (SIGINT), SIGTERM and SIGHUP unwind the stack like an
exception, so a renderer child is killed with gradtool (subprocess.run kills it on the way
out) and temporary files are removed; gradtool then prints which target was running and exits
128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM). `run_target` also bounds a
target's run time (--timeout)."""
import contextlib
import functools
import math
import os
import signal
import sys
import traceback

import typer

from ...engine.frames import location, site_location, user_frames
from . import common


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP. A KeyboardInterrupt, so every layer that lets Ctrl-C through (the
    loader, the checks, subprocess.run's clean-up) lets it through too."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def install():
    """Raise Terminated in the main thread on SIGTERM and SIGHUP (their default kills the
    process at once, orphaning a renderer child and leaving temporary files). A signal the
    caller ignores (nohup ignores SIGHUP) stays ignored."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _raise_terminated)


def _raise_terminated(signum, frame):
    raise Terminated(signum)


class _TimedOut(Terminated):
    """SIGALRM at the end of --timeout: unwinds through the user's code like Ctrl-C."""

    def __init__(self):
        super().__init__(signal.SIGALRM)


def check_timeout(timeout):
    """--timeout SECONDS: None (no limit) or a positive, finite number."""
    from ...engine.errors import GradtoolError
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise GradtoolError(f"--timeout must be a positive number of seconds (got {timeout})")


def run_target(target, fn, *args, timeout=None):
    """fn(*args), the run of one target: an interrupt inside names the target, and after
    `timeout` seconds the run stops with a UserCodeError saying where the target was."""
    from ...capture.loader import UserCodeError
    label = f"target {target.name} ({location(os.path.basename(target.filename), target.lineno)})"
    with running(label):
        if timeout is None:
            return fn(*args)
        previous = signal.signal(signal.SIGALRM, _raise_timed_out)
        try:
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                return fn(*args)
            finally:  # an alarm due right here still lands in the except below
                signal.setitimer(signal.ITIMER_REAL, 0)
        except _TimedOut as e:
            frames = user_frames(e.__traceback__)
            at = (frames[-1].filename, frames[-1].lineno) if frames else None
            raise UserCodeError(f"{label} did not finish within --timeout {timeout:g} s"
                                + (f"; it was at {site_location(at, relative=False)}" if at
                                   else "") + ".",
                                "".join(traceback.format_list(frames)), at) from None
        finally:
            signal.signal(signal.SIGALRM, previous)


def _raise_timed_out(signum, frame):
    raise _TimedOut()


@contextlib.contextmanager
def running(what):
    """Around running the user's code: an interrupt inside is reported as `what` (e.g.
    "target f (model.py:12)")."""
    try:
        yield
    except KeyboardInterrupt as e:
        if not hasattr(e, "gradtool_running"):  # the innermost label wins
            e.gradtool_running = what
        raise


def ends_cleanly(command):
    """Wrap a CLI command: an interrupt prints one line naming what was running and exits
    128 + the signal's number, instead of click's "Aborted!" and exit 1."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (typer.Exit, typer.Abort):
            raise  # typer's own ways out
        except Exception as e:  # noqa: BLE001 - what no layer caught is gradtool's own bug
            from ...capture.loader import BUG_PLEA
            print(f"gradtool: internal error: {type(e).__name__}: {e}\n{BUG_PLEA}:\n"
                  + "".join(traceback.format_exception(e)).rstrip(), file=sys.stderr)
            raise typer.Exit(common.EXIT_BUG) from None
        except KeyboardInterrupt as e:
            signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
            where = getattr(e, "gradtool_running", None)
            frames = user_frames(e.__traceback__)
            print(f"\ngradtool: {signal.Signals(signum).name} received"
                  + (f" while running {where}" if where else "")
                  + (f" at {location(frames[-1].filename, frames[-1].lineno, relative=False)}"
                     if frames else "")
                  + "; stopped.",
                  file=sys.stderr)
            raise typer.Exit(128 + signum) from None
    return wrapper
