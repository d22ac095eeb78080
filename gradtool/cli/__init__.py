"""The gradtool command: one thin module per command. Commands parse options, call the
library, print, and choose the exit code; the library raises GradtoolError and never prints.

Exit codes: 0 all good, 1 a check failed (a gradient mismatch, an error diagnostic, or a
warning under --strict), 2 usage or user-code error (the worst over all targets), 130
interrupted."""
import typer

from . import common, gradcheck_cmd, inspect_cmd, interrupts, render_cmd

app = typer.Typer(
    name="gradtool", add_completion=True, no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Check gradients and inspect autograd graphs of the functions and custom "
         "autograd.Functions in a Python file. The file is executed as Python code.")
app.command("inspect")(interrupts.ends_cleanly(inspect_cmd.inspect))
app.command("gradcheck")(interrupts.ends_cleanly(gradcheck_cmd.gradcheck))
app.command("render")(interrupts.ends_cleanly(render_cmd.render))


@app.callback(invoke_without_command=True)
def _version(version: bool = typer.Option(False, "--version", help="Print the version.",
                                          is_eager=True, metavar="")):
    if version:
        from .. import __version__
        typer.echo(f"gradtool {__version__}")
        raise typer.Exit(0)


def main():
    common.run_app(app)
