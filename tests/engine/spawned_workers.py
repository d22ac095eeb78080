"""Functions that torch.multiprocessing.spawn runs in new processes (importable by name, as
spawn requires), for tests/engine/test_multiprocessing.py and its parity test."""
import os
import sys


def write_index(i, folder, scale):
    with open(os.path.join(folder, f"{i}.txt"), "w") as f:
        f.write(str(i * scale))


def raise_in_one(i, bad):
    if i == bad:
        raise ValueError(f"worker {i} failed")


def exit_with_code(i, code):
    sys.exit(code)
