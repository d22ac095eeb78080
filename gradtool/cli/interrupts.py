"""Signals end gradtool cleanly. Ctrl-C (SIGINT), SIGTERM and SIGHUP unwind the stack like an
exception, so a renderer child is killed with gradtool (subprocess.run kills it on the way
out) and temporary files are removed; gradtool then prints which target was running and exits
128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM)."""
import contextlib
import functools
import signal
import sys

import typer


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP. A KeyboardInterrupt, so every layer that lets Ctrl-C through (the
    loader, the checks, subprocess.run's clean-up) lets it through too."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def install():
    """Raise Terminated in the main thread on SIGTERM and SIGHUP (their default kills the
    process at once, orphaning a renderer child and leaving temporary files)."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_terminated)


def _raise_terminated(signum, frame):
    raise Terminated(signum)


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
        except KeyboardInterrupt as e:
            signum = e.signum if isinstance(e, Terminated) else signal.SIGINT
            where = getattr(e, "gradtool_running", None)
            print(f"\ngradtool: {signal.Signals(signum).name} received"
                  + (f" while running {where}" if where else "") + "; stopped.",
                  file=sys.stderr)
            raise typer.Exit(128 + signum) from None
    return wrapper
