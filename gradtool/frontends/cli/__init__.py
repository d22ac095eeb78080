"""The gradtool command: one thin module per command. Commands parse options, call the
library, print, and choose the exit code; the library raises GradtoolError and never prints.

Exit codes: 0 all good, 1 a check failed (a gradient mismatch, an error diagnostic, or a
warning under --strict), 2 usage or user-code error, 3 a bug of gradtool's own (the worst
over all targets, and all files), 130 interrupted."""
import typer
from typer.core import TyperCommand, TyperGroup

from . import common, gradcheck_cmd, inspect_cmd, interrupts, render_cmd


class _FlagsShownAsFlags:
    """typer prints `<bool>` beside a boolean flag in --help; a flag takes no value."""

    def get_params(self, ctx):
        params = super().get_params(ctx)
        for param in params:
            if getattr(param, "is_flag", False) and param.metavar is None:
                param.metavar = ""
        return params


class _Group(_FlagsShownAsFlags, TyperGroup):
    pass


class _Command(_FlagsShownAsFlags, TyperCommand):
    pass


# Help and usage errors in click's plain layout (rich_markup_mode=None): typer's rich layout
# imports rich, markdown-it and pygments, which took most of `gradtool --help`'s start.
app = typer.Typer(
    name="gradtool", add_completion=True, no_args_is_help=True, cls=_Group,
    rich_markup_mode=None, context_settings={"help_option_names": ["-h", "--help"]},
    help="Check gradients and inspect autograd graphs of the functions and custom "
         "autograd.Functions in a Python file. The file is executed as Python code.")
# short_help: the one line `gradtool --help` lists (click would cut the docstring's first
# sentence to fit)
app.command("inspect", cls=_Command, short_help="The backward graph, every saved tensor, "
            "leaves and diagnostics.")(interrupts.ends_cleanly(inspect_cmd.inspect))
app.command("gradcheck", cls=_Command, short_help="Numerical against analytical gradients, "
            "and why they differ.")(interrupts.ends_cleanly(gradcheck_cmd.gradcheck))
app.command("render", cls=_Command, short_help="The graph drawn with Graphviz (-o g.html: an "
            "explorer).")(interrupts.ends_cleanly(render_cmd.render))


@app.callback(invoke_without_command=True)
def _version(version: bool = typer.Option(False, "--version", help="Print the version.",
                                          is_eager=True)):
    if version:
        from importlib.metadata import version as installed_version
        typer.echo(f"gradtool {installed_version('gradtool')}")
        raise typer.Exit(0)


def main():
    common.run_app(app)
