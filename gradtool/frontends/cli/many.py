"""A command over several files: each file runs in a worker process of its own (cli/worker.py),
so a file that ends its process (os._exit, a crash in C code, a stack overflow) is that file's
error, not the run's, and no file sees what another imported or changed. `-j N` runs N at
once. Each file's report is printed whole, in the order of the paths given (sorted within a
folder), as soon as it and the files before it are done; then one summary, or under --json
one document for the run. Ctrl-C stops the workers and prints what finished."""
import dataclasses
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

from . import common

_POLL_SECONDS = 0.02
_STOP_SECONDS = 5  # how long stopped workers may take to unwind before they are killed
_CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT}


@dataclasses.dataclass
class FileRun:
    """One file of the run: its worker process while it runs, the worker's reply after."""
    index: int
    file: object              # a capture.files.FileSpec
    folder: str               # the run's temporary folder
    process: subprocess.Popen = None
    reply: dict = None

    @property
    def spec(self):
        return self.file.spec

    def path(self, what):
        return os.path.join(self.folder, f"{self.index}.{what}")

    def start(self, command, options, console):
        with open(self.path("request"), "w", encoding="utf-8") as f:
            json.dump({"command": command, "spec": self.spec, "options": options,
                       "from_directory": self.file.from_directory, "console": console}, f)
        # the user's output goes to files, not pipes: a file that prints a lot never blocks
        with open(self.path("stdout"), "wb") as out, open(self.path("stderr"), "wb") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _WORKER, self.path("request"), self.path("reply")],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                env=_worker_environment(), preexec_fn=_end_with_parent)

    def done(self, stopped=False):
        """Whether the worker has ended; its reply is then read (or, unless gradtool
        `stopped` it, made: it ended without one)."""
        if self.reply is None and self.process is not None and self.process.poll() is not None:
            try:
                with open(self.path("reply"), encoding="utf-8") as f:
                    self.reply = json.load(f)
            except (OSError, ValueError):
                if stopped:
                    return False
                self.reply = {"code": common.EXIT_USAGE,
                              "error": {"message": _ended_early(self.spec,
                                                                self.process.returncode)}}
        return self.reply is not None

    def output(self, what):
        """What the user's code printed to the worker's stdout or stderr (bytes)."""
        try:
            with open(self.path(what), "rb") as f:
                return f.read()
        except OSError:
            return b""

    @property
    def skipped(self):
        return bool(self.reply.get("skipped"))


# The worker's program. Not `python -m`, which puts the current folder first on sys.path:
# the user's imports resolve as under the `gradtool` command.
_WORKER = ("import sys; del sys.path[0]; from gradtool.frontends.cli.worker import main; "
           "main(*sys.argv[1:3])")


def _worker_environment():
    """The worker's environment: this one, with gradtool itself importable as it is here."""
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), here) if p)
    return env


def _end_with_parent():
    """In the worker, before it starts: on Linux, it is killed when gradtool ends, however
    gradtool ends (even SIGKILL), so that no worker runs on orphaned."""
    import ctypes
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: Ctrl-C and SIGTERM still stop workers
        pass


def _ended_early(spec, returncode):
    """Why a worker left no reply, as the file's error."""
    if returncode < 0:
        sig = signal.Signals(-returncode)
        why = (f"was killed by {sig.name}" +
               (" (a crash in native code, or a stack overflow)" if sig in _CRASH_SIGNALS
                else ""))
    else:
        why = (f"ended with exit status {returncode} before it reported: the file, or code it "
               f"calls, ended the process itself (os._exit({returncode}), or a fatal error)")
    return f"the process running {spec} {why}; the other files were not affected"


def run(command, files, options, jobs):
    """Run `command` over `files` (FileSpecs), `jobs` at once; print as the module says.
    Returns the exit code: the worst of all files'."""
    from ...report.text import console, console_settings
    con = console(no_color=options["no_color"])
    settings = console_settings(con)
    with tempfile.TemporaryDirectory(prefix="gradtool-") as folder:
        runs = [FileRun(i, f, folder) for i, f in enumerate(files)]
        waiting, running, shown = list(runs), [], 0
        above = []  # the files whose report is printed: a blank line between two
        try:
            while shown < len(runs):
                while waiting and len(running) < jobs:
                    waiting[0].start(command, options, settings)
                    running.append(waiting.pop(0))
                running = [r for r in running if not r.done()]
                while shown < len(runs) and runs[shown].reply is not None:
                    _show(con, runs[shown], options, above)
                    shown += 1
                if shown < len(runs):
                    time.sleep(_POLL_SECONDS)
        except KeyboardInterrupt as e:
            started = [r for r in runs if r.process is not None and r.reply is None]
            _stop(started)
            for r in runs[shown:]:  # done, but after a file that was still running
                if r.reply is not None:
                    _show(con, r, options, above)
            stopped = [r.spec for r in started if r.reply is None]
            _finish(con, command, runs, options,
                    interrupted=sum(1 for r in runs if r.reply is None))
            if not hasattr(e, "gradtool_running") and stopped:
                e.gradtool_running = ", ".join(stopped[:3]) + (
                    f" and {len(stopped) - 3} more files" if len(stopped) > 3 else "")
            raise
        return _finish(con, command, runs, options)


def _stop(running):
    """Stop the workers still running (as Ctrl-C stops gradtool: they unwind), and kill
    those that do not end in time."""
    for r in running:
        if r.process.poll() is None:
            r.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + _STOP_SECONDS
    for r in running:
        try:
            r.process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            r.process.kill()
            r.process.wait()
        r.done(stopped=True)  # a reply written just before the signal still counts


def _show(con, run, options, above):
    """One file's output, whole: the user's output, then its report (text); under --json the
    user's output only, on stderr (the document comes at the end). `above`: the files
    shown before it (this one is added)."""
    if run.skipped:
        return
    json_, quiet = options["json_"], options["quiet"]
    stdout, stderr = run.output("stdout"), run.output("stderr")
    if json_:
        sys.stderr.buffer.write(stdout + stderr)
        sys.stderr.flush()
        return
    from ...report import text
    if not quiet:
        if above:
            con.print()
        text.print_file_heading(con, run.spec)
    above.append(run.spec)
    sys.stdout.flush()
    sys.stdout.buffer.write(stdout)
    sys.stdout.flush()
    sys.stderr.buffer.write(stderr)
    sys.stderr.flush()
    error = run.reply.get("error")
    if error is not None:
        text.print_file_error(con, run.spec, error["message"], error.get("details") or "",
                              quiet)
    else:
        sys.stdout.write(run.reply["report"])
    sys.stdout.flush()


def _finish(con, command, runs, options, interrupted=0):
    """The summary of the files that finished (or, under --json, the run's one document);
    returns the worst exit code among them."""
    finished = [r for r in runs if r.reply is not None and not r.skipped]
    summary = {"files": len(finished), "passed": 0, "failed": 0, "errors": 0,
               "skipped": sum(1 for r in runs if r.reply is not None and r.skipped),
               "interrupted": interrupted,
               "exit_code": max((r.reply["code"] for r in finished), default=common.EXIT_OK)}
    for r in finished:
        counts = r.reply.get("counts") or {"passed": 0, "failed": 0, "errors": 1}
        for key in ("passed", "failed", "errors"):
            summary[key] += counts[key]
    if options["json_"]:
        _print_document(command, runs, finished, summary, options)
    else:
        from ...report import text
        text.print_run_summary(con, command, [(r.spec, r.reply["code"], r.reply.get("counts"))
                                              for r in finished], summary, options["quiet"])
    return summary["exit_code"]


def _print_document(command, runs, finished, summary, options):
    """The run's JSON document on the real stdout: each file's own document, then the
    summary."""
    from ...capture.loader import parse_shape
    from ...report import json as json_report
    kind = "against" if options.get("against") else command
    documents = []
    for r in finished:
        error = r.reply.get("error")
        if error is None:
            documents.append({**json.loads(r.reply["report"]), "error": None})
        else:
            documents.append(json_report.file_error_document(
                kind, r.spec, options["seed"], parse_shape(options["shape"]),
                options.get("order", 1), error["message"], error.get("location"),
                error.get("details")))
    skipped = [r.spec for r in runs if r.reply is not None and r.skipped]
    common.write_json(json_report.chunks(
        json_report.files_document(command, documents, skipped, summary)))
