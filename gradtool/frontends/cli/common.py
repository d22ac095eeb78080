"""What every command shares: its options, error printing, exit codes."""
import contextlib
import dataclasses
import enum
import gc
import os
import sys
from typing import Annotated, List, Optional

import typer

EXIT_OK, EXIT_CHECK_FAILED, EXIT_USAGE, EXIT_BUG = 0, 1, 2, 3


def choices(name, *values):
    """An option's values, as an enum: typer lists them in --help and refuses any other
    (exit 2, naming them)."""
    return enum.Enum(name, [(v, v) for v in values], type=str)


Engine, Against = choices("Engine", "gradtool", "torch"), choices("Against", "torch")

# The options every command shares, in typer's Annotated style: `seed: common.Seed = 0`.
File = Annotated[str, typer.Argument(metavar="FILE[::NAME]",
                                     help="A Python file, optionally ::NAME to pick one target.")]
Paths = Annotated[List[str], typer.Argument(
    metavar="PATH", show_default=False,
    help="Python files (FILE::NAME picks one target) and folders (every Python file with "
         "targets inside, recursively), mixed.")]
Jobs = Annotated[str, typer.Option(
    "--jobs", "-j", metavar="N|auto", help="Run this many files at once, each in a process of "
                                          "its own (auto: one per CPU).")]
Seed = Annotated[int, typer.Option("--seed", min=0, max=2**63 - 1,
                                   help="Seed for every generated input (reproducible runs).")]
Shape = Annotated[List[str], typer.Option(
    "--shape", metavar="[NAME=]SIZES", help="Shape of generated inputs, e.g. 3 or 2,3; per "
                                             "parameter: --shape x=2,3 --shape w=3 (repeatable).")]
Json = Annotated[bool, typer.Option("--json",
                                    help="One JSON document on stdout, nothing else there.")]
NoColor = Annotated[bool, typer.Option("--no-color", help="Plain text, no colours.")]
Quiet = Annotated[bool, typer.Option("--quiet", "-q", help="One line per target: its verdict, "
                                     "where it is defined and the first finding (CI logs).")]
Timeout = Annotated[Optional[float], typer.Option(
    "--timeout", metavar="SECONDS", help="Stop a target that runs longer than this (exit 2).")]
EngineOption = Annotated[Engine, typer.Option(
    "--engine", help="Run the file on gradtool's engine (its `import torch` gives gradtool) or "
                     "on PyTorch itself, when installed.")]
Device = Annotated[Optional[str], typer.Option(
    "--device", metavar="NAME", help="Put generated inputs (and @example shapes) on this device: "
                                     "cpu, cuda, cuda:1, ... (other devices need --engine "
                                     "torch).")]
AgainstOption = Annotated[Optional[Against], typer.Option(
    "--against", help="Run each target on gradtool and on PyTorch and compare outputs, "
                      "gradients, node and saved names (exit 1 on a difference).")]


@contextlib.contextmanager
def on_engine(name):
    """While the user's file loads and runs: the engine `name` (engines.use), and on
    gradtool's engine, `import torch` giving gradtool."""
    import gradtool.adapters as engines
    with engines.use(name) as engine, engine.importing():
        yield engine


def placed_on(engine, device):
    """--device checked on the engine: its device object, or None when not given (a device
    that engine cannot use raises NoDevice, exit 2)."""
    return None if device is None else engine.check_device(device)


def check_quiet(quiet, json_):
    from ...engine.errors import GradtoolError
    if quiet and json_:
        raise GradtoolError("--quiet and --json both say what stdout holds: give one of them")


def fail(error, no_color=False):
    """Print a GradtoolError as one short paragraph (plus the user's frames) and exit 2."""
    from ...report.text import console
    con = console(no_color=no_color, stderr=True)
    con.print(f"[bold red]gradtool: error:[/] {error}", markup=True, highlight=False)
    details = getattr(error, "details", "")
    if details:
        title = getattr(error, "details_title", "Traceback (your code only)")
        con.print(f"{title}:\n" + details.rstrip(), style="dim",
                  markup=False)
    raise typer.Exit(EXIT_USAGE)


@dataclasses.dataclass
class TargetError:
    """A target whose run raised in the user's code: reported in its place, the others go
    on (exit 2 at the end)."""
    target: object
    error: Exception


def run_each(targets, check, no_color=False, timeout=None):
    """check(target) for every target, in order; a UserCodeError of one target becomes its
    TargetError, and so does running past `timeout` seconds. An interrupt is labelled with
    the running target (cli/interrupts.py reports it and exits 128 + the signal)."""
    from ...capture.loader import UserCodeError
    from . import interrupts
    results = []
    for target in targets:
        try:
            results.append(interrupts.run_target(target, check, target, timeout=timeout))
        except UserCodeError as e:
            results.append(TargetError(target, e))
    return results


@dataclasses.dataclass
class Outcome:
    """What a command found in one file, ready to report: its findings, the exit code of
    each target (as exit_codes), and the text report's own options."""
    findings: object
    codes: list
    text_options: dict = dataclasses.field(default_factory=dict)

    @property
    def code(self):
        """The file's exit code: the worst of its targets'."""
        return max(self.codes, default=EXIT_OK)

    def counts(self):
        """How many targets passed (exit 0), failed (1) and raised (2, or 3: gradtool's bug)."""
        return {"passed": self.codes.count(EXIT_OK),
                "failed": self.codes.count(EXIT_CHECK_FAILED),
                "errors": sum(code >= EXIT_USAGE for code in self.codes)}


def exit_codes(results, failed, warned, strict, raised=lambda result: False):
    """Each target's exit code: 3 gradtool's own bug stopped it, 2 it raised (or, `raised`,
    the user's code raised while it was checked), 1 a check failed (or warned, under
    --strict), else 0; the command's is the worst. failed/warned/raised: predicates of a
    target's result."""
    from ...capture.loader import GradtoolBug
    return [EXIT_BUG if isinstance(r, TargetError) and isinstance(r.error, GradtoolBug) else
            EXIT_USAGE if isinstance(r, TargetError) or raised(r) else
            EXIT_CHECK_FAILED if failed(r) or (strict and warned(r)) else EXIT_OK
            for r in results]


def plain(options):
    """A command's parsed options as plain values (an enum choice as its text), the way a
    file's run takes them, in this process or in a worker's."""
    return {name: value.value if isinstance(value, enum.Enum) else value
            for name, value in options.items()}


def run_paths(command, paths, jobs, options, check_options, check_file):
    """Run a command over the paths given: one file in this process, as it always ran
    (check_file(spec, **options) -> Outcome, reported, exit with its code); several files,
    or a folder, each in a worker process of its own (cli/many.py), one summary at the end.
    check_options(**options) refuses wrong options before any user code runs."""
    from ...capture.files import expand
    from ...engine.errors import GradtoolError
    json_, no_color, quiet = options["json_"], options["no_color"], options["quiet"]
    try:
        check_options(**options)
        workers = parse_jobs(jobs)
        files = expand(paths)
        several = len(paths) > 1 or len(files) != 1 or files[0].from_directory
        if several and options.get("html"):
            raise GradtoolError("--html writes one page of one file's heatmaps: give one file "
                                "(the page of several would not say which file a map is from)")
        if not several:
            outcome = check_file(files[0].spec, **options)
    except GradtoolError as e:
        fail(e, no_color)
    if not several:
        report(outcome.findings, json_, no_color, quiet, **outcome.text_options)
        raise typer.Exit(outcome.code)
    from . import many
    raise typer.Exit(many.run(command, files, options, workers))


def parse_jobs(jobs):
    """-j N|auto: how many files run at once (auto: the CPUs this process may use)."""
    from ...engine.errors import GradtoolError
    if jobs == "auto":
        return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
            os.cpu_count() or 1
    if not (jobs.isascii() and jobs.isdigit() and int(jobs) >= 1):
        raise GradtoolError(f"-j must be a number of processes >= 1, or auto (got {jobs!r})")
    return int(jobs)


def run_app(app):
    """Run the typer app; a usage error exits 2, said in one paragraph (usage_error)."""
    from . import interrupts
    sys.dont_write_bytecode = True  # the user's file (and what it imports) gets no __pycache__
    interrupts.install()
    try:
        try:  # not standalone: click's usage errors come here instead of its two paragraphs
            code = app(standalone_mode=False)
        except _UsageError as error:
            usage_error(error)
            code = error.exit_code
        sys.exit(code or EXIT_OK)
    finally:
        # The process ends: the collections Python runs as it exits would scan every object
        # still alive (a 100,000-op graph's records: about 1 s); frozen, they are skipped.
        gc.freeze()


# click's UsageError (typer vendors click in its recent versions: no import path for all)
_UsageError = typer.BadParameter.__mro__[1]


def usage_error(error):
    """A usage error as one paragraph on stderr, like gradtool's own errors: the command's
    usage line, where its help is, what was wrong. Bare `gradtool` prints the help."""
    ctx = error.ctx
    if ctx is None or error.message == ctx.get_help():
        return error.show()
    help_option = ctx.help_option_names[0]
    typer.echo(f"{ctx.get_usage()}\nTry '{ctx.command_path} {help_option}' for help.\n"
               f"Error: {error.format_message()}", err=True)


_json_stdout = None  # the real stdout, kept for the one JSON document


def user_prints_to_stderr(json_output):
    """Under --json, whatever the user's code prints goes to stderr: stdout holds the one
    JSON document (report) and nothing else. From here to the process's end, atexit
    handlers, threads and C code included: file descriptor 1 itself is pointed at stderr."""
    global _json_stdout
    if json_output and _json_stdout is None:
        sys.stdout.flush()
        try:
            _json_stdout = os.fdopen(os.dup(1), "w", encoding="utf-8")
            os.dup2(2, 1)
        except OSError:  # stdout closed: nothing to protect
            pass
    return contextlib.nullcontext()


def report(findings, json_, no_color, quiet=False, **text_options):
    """Print what a command found: under --json its one JSON document (write_json), else its
    text report."""
    from ...report import formats
    if not json_:
        from ...report.text import console
        return formats.print_text(console(no_color=no_color), findings, quiet, **text_options)
    write_json(formats.json_document(findings))


def write_json(pieces):
    """A JSON document's pieces on the real stdout, in blocks of about a megabyte."""
    out = sys.stdout if _json_stdout is None else _json_stdout
    block, size = [], 0
    for piece in pieces:
        block.append(piece)
        size += len(piece)
        if size > 1 << 20:
            out.write("".join(block))
            block, size = [], 0
    out.write("".join(block) + "\n")
    out.flush()


def check_engines(engine, against, device=None):
    """--engine and --against not both (--against runs both engines); --device not with
    --against (gradtool's side runs on the CPU); PyTorch installed when either names it."""
    from ...adapters import check_available
    from ...engine.errors import GradtoolError
    if against is not None and device not in (None, "cpu"):
        raise GradtoolError(f"--against torch compares on the CPU, where gradtool's engine "
                            f"runs: drop --device {device}")
    if against is not None and engine != "gradtool":
        raise GradtoolError("--against torch runs each target on gradtool's engine and on "
                            "torch: drop --engine")
    for name in {engine, against} - {None}:
        check_available(name)


def against_outcome(file, seed, shape, order, json_, timeout):
    """--against torch: each target compared across engines (exit code per target: 0 they
    agree, 1 a difference, 2 it raised)."""
    from ...checks import against
    from ...adapters import get
    from ...capture.loader import UserCodeError, check_shapes
    from ...report.formats import Findings
    get("torch")  # PyTorch installed, or exit 2 saying so
    with user_prints_to_stderr(json_):
        ours, theirs = against.load_both(file)
        check_shapes(ours, shape, file)
        by_name = {t.name: t for t in theirs}
        results = []
        for target in ours:
            other = by_name.get(target.name)
            if other is None:
                results.append(TargetError(target, UserCodeError(
                    f"target {target.name} is not found when the file runs on torch")))
                continue
            results += run_each([target], lambda t: against.compare(
                t, other, seed, shape, order), timeout=timeout)
    return Outcome(Findings("against", file, results, seed, shape, order),
                   exit_codes(results, lambda r: not r.passed, lambda r: False, False))
