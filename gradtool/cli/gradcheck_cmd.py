"""gradtool gradcheck: numerical against analytic gradients for every target."""
import typer

from . import common


def gradcheck(
    file: str = common.FILE_ARG,
    seed: int = common.SEED,
    shape: str = common.SHAPE,
    json_: bool = common.JSON,
    no_color: bool = common.NO_COLOR,
):
    """Compare central differences with the analytic gradients of each target."""
    raise typer.Exit(common.EXIT_USAGE)
