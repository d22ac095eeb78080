"""tools/census.py reads a directory of torch files statically: aliases and from-imports
resolve to torch's names, attribute chains are cut where torch's names end, Tensor and Module
methods are counted by the documented rule, a file that does not parse is skipped and
counted, and every name is looked up on the engine as an `import torch` file reaches it."""
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CENSUS_PATH = os.path.join(ROOT, "tools", "census.py")


def _load_census():
    spec = importlib.util.spec_from_file_location("census", CENSUS_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


census = _load_census()

FILES = {
    "aliases.py": """
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 4)

            def forward(self, x):
                h = F.relu(self.fc(x)).view(-1, 4)
                return h.permute(1, 0).masked_fill_(h.T > 9, 0.0).shape
        net = Net()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        loader = torch.utils.data.DataLoader([1, 2])
        net.register_forward_hook(lambda *a: None)
        """,
    "from_imports.py": """
        from torch import nn, optim
        from torch.nn import Linear as Dense
        import torch.nn.functional
        layer = Dense(2, 2)
        layer2 = Dense(2, 2)
        opt = optim.Adam(layer.parameters())
        y = torch.nn.functional.gelu(nn.Tanh()(layer.weight))
        words = "a b".split()            # str's split: not a Tensor method
        items = [3, 1]; items.sort()     # list's sort: not counted either
        z = torch.not_a_torch_name(1)    # a name torch lacks is still a name the file needs
        """,
    "no_torch.py": """
        import numpy as np
        x = np.zeros(3).reshape(3, 1)
        """,
    "broken.py": "import torch\ndef f(:\n",
}


@pytest.fixture(scope="module")
def result(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    for name, source in FILES.items():
        (folder / name).write_text(textwrap.dedent(source))
    return census.census([str(folder)]), folder


def _row(result, name):
    rows = {row["name"]: row for row in result["table"]}
    return rows.get(name)


def test_a_file_that_does_not_parse_is_skipped_and_counted(result):
    result, folder = result
    assert result["files"] == 3 and result["files_skipped"] == 1
    assert result["skipped"] == [str(folder / "broken.py")]


def test_aliases_and_attribute_chains_resolve_to_torchs_names(result):
    result, _ = result
    assert _row(result, "torch.nn.Linear")["files"] == 2  # nn.Linear, and Dense (from-import)
    assert _row(result, "torch.nn.Linear")["uses"] == 4   # one call, the import, two calls
    assert _row(result, "torch.nn.functional.relu")["uses"] == 1
    assert _row(result, "torch.nn.functional.gelu")["uses"] == 1  # the full dotted path
    assert _row(result, "torch.optim.SGD")["uses"] == 1
    assert _row(result, "torch.optim.Adam")["uses"] == 1
    assert _row(result, "torch.utils.data.DataLoader")["uses"] == 1
    assert _row(result, "torch.nn.Module")["uses"] == 1
    assert _row(result, "torch.nn.Tanh")["uses"] == 1


def test_tensor_and_module_methods_follow_the_rule(result):
    result, _ = result
    for name in ("Tensor.view", "Tensor.permute", "Tensor.masked_fill_", "Tensor.shape",
                 "Tensor.T", "Module.parameters", "Module.register_forward_hook"):
        assert _row(result, name) is not None, name
    assert _row(result, "Module.parameters")["files"] == 2
    assert _row(result, "Tensor.reshape")["files"] == 1  # numpy's share of names counts
    # names a builtin object has say nothing about a tensor
    assert _row(result, "Tensor.split") is None and _row(result, "Tensor.sort") is None
    # an attribute that is no torch name is not counted at all
    assert not any(row["name"].endswith(("fc", "weight")) for row in result["table"])


def test_each_name_is_looked_up_on_the_engine(result):
    result, _ = result
    assert _row(result, "torch.nn.Linear")["on_engine"]
    assert _row(result, "Tensor.masked_fill_")["on_engine"]
    missing = _row(result, "torch.not_a_torch_name")
    assert missing is not None and not missing["on_engine"]
    assert result["names"] - result["names_on_engine"] == 1
    # from_imports.py uses the missing name; aliases.py and no_torch.py use none
    assert result["files_complete"] == 2 and result["files_complete_percent"] == 66.7
    missing_uses = missing["uses"]
    assert result["uses_on_engine"] == result["uses"] - missing_uses
    assert result["families"]["torch"]["files_complete"] == 1


def test_json_and_markdown_outputs(result):
    _, folder = result
    done = subprocess.run([sys.executable, CENSUS_PATH, str(folder), "--json"],
                          capture_output=True, text=True, check=True)
    data = json.loads(done.stdout)
    assert data["files"] == 3 and "table" in data and "families" in data
    done = subprocess.run([sys.executable, CENSUS_PATH, str(folder), "--markdown", "--top", "5"],
                          capture_output=True, text=True, check=True)
    assert "| 1 | `torch.not_a_torch_name` | 1 | 1 |" in done.stdout
    assert done.stdout.count("| 5 |") == 1  # top 5 of all names; fewer are missing


def test_an_alias_the_file_rebinds_is_no_longer_torchs(tmp_path):
    """A parameter or a local variable named like a torch alias, or a module-level assignment
    to it, is the file's own object from there on: its methods are no torch names."""
    (tmp_path / "rebinds.py").write_text(textwrap.dedent("""
        import torch
        import torch.optim as optim
        from torch.utils import data
        from torch.optim import optimizer

        def train(model, optimizer):
            optimizer.zero_grad()
            for data, target in []:
                data = data.to("cpu")

        def uses_the_module():
            return data.DataLoader([1])

        first = optim.SGD([], lr=0.1)
        optim = torch.optim.Adam([])
        optim.step()
        fn = lambda optim: optim.zero_grad()
        """))
    names = {row["name"] for row in census.census([str(tmp_path)])["table"]}
    assert {"torch.optim.SGD", "torch.optim.Adam", "torch.utils.data.DataLoader"} <= names
    assert not names & {"torch.optim.zero_grad", "torch.optim.step", "torch.utils.data.to",
                        "torch.optim.optimizer.zero_grad"}
