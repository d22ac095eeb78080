"""Inputs that live off the host, without a GPU: `OffHost` is CPU memory that behaves as a
CUDA tensor does where gradtool could trip on it: `.numpy()` refuses it ("can't convert ...
device type tensor to numpy"), and `.cpu()` copies it to a plain CPU tensor. The targets are
the tutorial's Legendre Function, right and wrong, on OffHost inputs."""
import torch

import gradtool


class OffHost(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if func is torch.Tensor.numpy:
            raise TypeError("can't convert offhost device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        if func is torch.Tensor.cpu:  # a copy, as from a device
            with torch._C.DisableTorchFunctionSubclass():
                return args[0].clone()
        return super().__torch_function__(func, types, args, kwargs)


def off_host(*shape, dtype=torch.float64):
    values = torch.linspace(-0.9, 0.8, torch.Size(shape).numel(), dtype=dtype).reshape(shape)
    return values.as_subclass(OffHost).requires_grad_()


def reference_legendre(x):
    return 0.5 * (5 * x ** 3 - 3 * x)


@gradtool.reference(reference_legendre)
@gradtool.example(off_host(5))
class Legendre(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 1.5 * (5 * x ** 2 - 1)


@gradtool.example(off_host(5))
class WrongLegendre(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 0.5 * (5 * x ** 3 - 3 * x)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 1.5 * (5 * x ** 2 - 1.1)
