"""gradtool.load's refusal of a checkpoint that would run code, against torch.load's:
the same message. Tests marked parity, skipped without torch."""
import os
import pickle
import re
import subprocess

import pytest

import gradtool as gt
from tests.engine.test_serialization import _RunsCode

pytestmark = pytest.mark.parity


def test_refusal_reads_as_torch_s(tmp_path):
    torch = pytest.importorskip("torch")
    marker = tmp_path / "pwned"
    torch_path, gt_path = tmp_path / "torch.pt", tmp_path / "gt.pt"
    # (torch pickles with protocol 2, where subprocess is spelled "commands")
    for via, expected in ((subprocess.call, r"WeightsUnpickler error: Unsupported global: "
                                            r"GLOBAL \w+\.call was not an allowed global by "
                                            r"default\. Please use `\w+\.serialization\."
                                            r"add_safe_globals\(\[\w+\.call\]\)`"),
                          (os.system, r"\n\n\nTrying to load unsupported GLOBAL posix\.system "
                                      r"whose module posix is blocked\.")):
        torch.save({"payload": _RunsCode(marker, via)}, torch_path)
        gt.save({"payload": _RunsCode(marker, via)}, gt_path)
        for load, path in ((torch.load, torch_path), (gt.load, gt_path)):
            with pytest.raises(pickle.UnpicklingError) as info:
                load(path)
            message = str(info.value)
            assert message.startswith("Weights only load failed."), message
            assert re.search(expected, message), message
            assert "Re-running" in message and "`weights_only` set to `False`" in message
        assert not marker.exists()
