"""Writes tools/torch_names.txt, the public names of the torch that census.py measures against:
run once with torch installed (`make parity`'s venv) when torch's version moves. census.py
itself never imports torch; it reads this file to know which attribute chains are torch names
and which method names a Tensor or a Module has.

Each line is `<kind> <name>`: `module torch.nn`, `name torch.nn.Linear`, `method Tensor.view`,
`property Tensor.shape`, `method Module.parameters`, `property Module.training`."""
import importlib
import inspect
import os
import sys

# torch's namespaces that user files reach; each one's public attributes are listed
MODULES = (
    "torch", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.nn.utils.rnn", "torch.nn.utils.parametrize", "torch.nn.utils.parametrizations",
    "torch.nn.parameter", "torch.nn.parallel", "torch.nn.modules", "torch.linalg", "torch.fft",
    "torch.special", "torch.distributions", "torch.distributions.normal",
    "torch.distributions.categorical", "torch.distributions.kl", "torch.distributions.transforms",
    "torch.optim", "torch.optim.lr_scheduler", "torch.optim.optimizer", "torch.autograd",
    "torch.autograd.functional", "torch.autograd.forward_ad", "torch.autograd.graph",
    "torch.autograd.profiler", "torch.func", "torch.utils", "torch.utils.data",
    "torch.utils.data.distributed", "torch.utils.checkpoint", "torch.utils.hooks", "torch.cuda",
    "torch.cuda.amp", "torch.amp", "torch.backends", "torch.backends.cudnn",
    "torch.backends.cuda", "torch.backends.mps", "torch.jit", "torch.testing", "torch.random",
    "torch.distributed", "torch.multiprocessing", "torch.hub", "torch.onnx", "torch.sparse",
    "torch.nn.attention", "torch.compiler", "torch.export", "torch.profiler", "torch.library",
    "torch.overrides", "torch.types", "torch.accelerator", "torch.mps", "torch.quantization",
    "torch.ao.quantization", "torch.nn.utils.prune", "torch.nn.utils.spectral_norm",
)


def main(path):
    import torch
    lines = set()
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except Exception:  # a namespace this build lacks
            continue
        lines.add(f"module {name}")
        for attr in dir(module):
            if attr.startswith("_"):
                continue
            value = getattr(module, attr, None)
            kind = "module" if inspect.ismodule(value) else "name"
            lines.add(f"{kind} {name}.{attr}")
    for prefix, cls in (("Tensor", torch.Tensor), ("Module", torch.nn.Module)):
        for attr in dir(cls):
            if attr.startswith("_"):
                continue
            raw = inspect.getattr_static(cls, attr)
            kind = "method" if callable(raw) or isinstance(raw, (staticmethod, classmethod)) else "property"
            lines.add(f"{kind} {prefix}.{attr}")
    with open(path, "w") as f:
        f.write(f"# torch {torch.__version__}: written by tools/census_torch_names.py\n")
        f.writelines(line + "\n" for line in sorted(lines, key=lambda l: l.split()[1]))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else
         os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_names.txt"))
