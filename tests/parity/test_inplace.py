"""In-place writes against torch: which writes into overlapping memory (an expand, an input
sharing the written tensor's memory) torch refuses and which it does, with its message, and
in-place ops on a tensor by itself then backward (with log_softmax of empty dims). Tests
marked parity, skipped without torch; the plain tests are in tests/engine/test_inplace.py."""
import warnings

import pytest

import gradtool as gt

try:
    import torch
except ImportError:  # every test here skips
    torch = None

pytestmark = [pytest.mark.parity,
              pytest.mark.skipif(torch is None, reason="torch is not installed")]


OVERLAP_WRITES = [
    "x.expand(3, 4).add_(1)", "x.expand(3, 4).fill_(1.0)", "x.expand(3, 4).zero_()",
    "x.expand(3, 4).masked_fill_(lib.tensor([[True, False, False, False]] * 3), 1.0)",
    "x.expand(3, 4).copy_(lib.ones(3, 4))", "x.expand(3, 4)[0] = 1.0",
    "x.expand(3, 4)[[0]] = 1.0", "x.expand(3, 4)[:, 0].exp_()", "x.expand(3, 1).mul_(2)",
    "x.expand(3, 4)[1, 2].add_(1)", "x.view(3)[1:].add_(x.view(3)[:-1])", "x.add_(x)",
    "x.view(3)[[0, 1]] = x.view(3)[1:]", "x.view(3)[1:].copy_(x.view(3)[:-1])",
    "x.expand(3, 4).copy_(x.expand(3, 4))", "x[None] = x", "x[0:1, :].copy_(x[0])",
    "x.view(3)[:1][-2:3:3] = x.view(3)[:1]", "x[None] = x.permute(1, 0)[:, :1]"]


def run_write(lib, code):
    x = lib.arange(3.0, dtype=lib.float64).view(3, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, {"lib": lib, "x": x})
        except RuntimeError as e:
            return str(e)[:60]
    return x.flatten().tolist()


@pytest.mark.parametrize("code", OVERLAP_WRITES)
def test_overlapping_writes_are_refused_or_done_as_torch(code):
    assert run_write(gt, code) == run_write(torch, code)


def test_in_place_on_itself_and_empty_softmax_match_torch():
    def run(lib):
        out = []
        for code in ("m.mul_(m)", "m.div_(m)", "m.add_(m)", "m.pow_(2)"):
            m = lib.ones(3, requires_grad=True) * 1
            eval(code, {"m": m})
            try:
                m.sum().backward()
                out.append("ok")
            except RuntimeError as e:
                out.append(str(e)[:60])
        for shape, dim in (((0, 3), 0), ((0, 3), 1), ((2, 0), 1)):
            out.append(tuple(lib.zeros(*shape).log_softmax(dim).shape))
        return out
    assert run(gt) == run(torch)
