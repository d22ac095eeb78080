import gradtool as gt


def test_seed_tutorial_numbers():
    x = gt.ones(2, 2, requires_grad=True)
    out = ((x + 2) * (x + 2) * 3).mean()
    out.backward()
    assert out.item() == 27.0
    assert x.grad.tolist() == [[4.5, 4.5], [4.5, 4.5]]
