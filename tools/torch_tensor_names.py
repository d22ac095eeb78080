"""Writes gradtool/engine/autograd/torch_tensor_names.txt: the public names of torch's Tensor
class (`dir(torch.Tensor)`), one a line. The engine reads it once at import to name a torch
Tensor method or attribute it lacks (`t.to_mkldnn()`) in its one message, without a
`__getattr__` on Tensor (which would slow every load of a tensor's fields). Run with torch
installed (`make parity`'s venv) when torch's version moves:

    /path/to/venv-with-torch/bin/python tools/torch_tensor_names.py
"""
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                   "gradtool", "engine", "autograd", "torch_tensor_names.txt")


def main(path=OUT):
    import torch
    names = sorted(name for name in dir(torch.Tensor) if not name.startswith("_"))
    with open(path, "w") as f:
        f.write(f"# torch {torch.__version__}: dir(torch.Tensor)'s public names, written by "
                f"tools/torch_tensor_names.py\n")
        f.writelines(name + "\n" for name in names)


if __name__ == "__main__":
    main(*sys.argv[1:])
