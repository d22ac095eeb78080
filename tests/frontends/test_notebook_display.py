"""The notebook's reports print as the CLI does, numbers rounded and tokens whole: check()'s
text at any width, its HTML (the coloured text and the heatmaps' figures) read back against
the JSON document."""
import html
import json
import re

import numpy as np
import pytest

import display_util as du
import gradtool as gt
from gradtool.report import formats


class WrongSigmoid(gt.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        s = gt.sigmoid(x)
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        s, = ctx.saved_tensors
        return grad * s  # should be grad * s * (1 - s)


@pytest.fixture(scope="module")
def checked():
    x = gt.tensor(np.random.default_rng(0).normal(size=(2, 3)), requires_grad=True)
    report = gt.check(WrongSigmoid.apply, (x,))
    return report, json.loads(formats.FORMATS["json"].write(report.findings))


@pytest.mark.parametrize("width", [40, 60, 80, 100, 120])
def test_check_text_numbers_are_rounded_at_every_width(checked, width):
    report, document = checked
    assert not report.passed
    assert du.check_report(report.text(width=width), document, width) >= 4


def test_check_html_text_and_heatmaps_show_numbers_rounded(checked):
    report, document = checked
    page = report._repr_html_()
    pre = re.search(r"<pre[^>]*>(.*?)</pre>", page, re.S).group(1)
    shown = html.unescape(re.sub(r"<[^>]+>", "", pre))
    du.check_report(shown, document, formats.TEXT_WIDTH)
    pair = document["targets"][0]["reports"][0]["pairs"][0]
    m = re.search(r"max abs error (\S+), max rel error (\S+); worst: .*?numerical (\S+), "
                  r"analytical (\S+)</p>", page)
    for shown_value, value in zip(m.groups(), (pair["max_abs_error"], pair["max_rel_error"],
                                               pair["worst"]["numerical"],
                                               pair["worst"]["analytical"])):
        du.assert_rounded(shown_value, value)
