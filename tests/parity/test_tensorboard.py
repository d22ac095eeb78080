"""SummaryWriter's event files against torch's writer, byte for byte once the clock's wall
times are set. Torch's writer needs the tensorboard package: where torch has it the bytes are
compared; where it lacks it, torch's import fails naming tensorboard (the engine writes the
files itself). Tests marked parity, skipped without torch."""
import glob
import os

import numpy as np
import pytest

import gradtool as gt

pytestmark = pytest.mark.parity


def write_run(lib, folder):
    from importlib import import_module
    writer = import_module(f"{lib.__name__}.utils.tensorboard").SummaryWriter(folder)
    writer.add_scalar("loss", 0.5, 1, walltime=10.0)
    writer.add_scalar("loss/zero", lib.tensor(0.0), 0, walltime=11.0)
    writer.add_scalar("neg", -2.25, -3, walltime=11.5)
    writer.add_scalars("grp/a", {"x": 1.0, "y": lib.tensor(2.0)}, 2, walltime=12.0)
    writer.add_histogram("h", lib.tensor(np.linspace(-3, 5, 50)), 4, walltime=13.0)
    writer.add_histogram("h2", np.arange(10.0), 5, bins=4, walltime=13.0)
    writer.add_histogram("h3", np.random.default_rng(0).standard_normal(100), 5,
                         walltime=13.0, max_bins=30)
    writer.add_text("note", "héllo", 6, walltime=14.0)
    writer.close()
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "**", "events*"), recursive=True)):
        data = open(path, "rb").read()
        length = int.from_bytes(data[:8], "little")  # the first event's time is the clock's
        runs[os.path.relpath(os.path.dirname(path), folder)] = data[16 + length:]
    return runs


def test_event_files_are_torchs(tmp_path):
    torch = pytest.importorskip("torch")
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        with pytest.raises(ModuleNotFoundError, match="tensorboard"):
            import torch.utils.tensorboard  # noqa: F401
        assert write_run(gt, str(tmp_path / "gt"))  # the engine writes them all the same
        return
    assert write_run(gt, str(tmp_path / "gt")) == write_run(torch, str(tmp_path / "torch"))
