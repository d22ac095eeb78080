"""nn.utils.memory_format: the weights of every 2-d (3-d) convolution in a model put in a
memory format (channels_last for NHWC kernels), in place."""


def convert_conv2d_weight_memory_format(module, memory_format):
    from ..conv import Conv2d, ConvTranspose2d
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    from ..conv import Conv3d, ConvTranspose3d
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        module.weight.data = module.weight.detach().clone(memory_format=memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]
