"""nn.utils.stateless.functional_call: torch.func.functional_call's older home, deprecated
with torch's warning."""
import warnings


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch 2.0 "
                  "and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    from ...func import functional_call as func_functional_call
    return func_functional_call(module, parameters_and_buffers, args, kwargs,
                                tie_weights=tie_weights, strict=strict)


from ...errors import missing_attribute  # noqa: E402

__getattr__ = missing_attribute(__name__)  # a torch name gradtool lacks: a clear error
