"""nn.utils.parametrize and nn.utils.parametrizations: a tensor computed from `original`(s)
on each access, its class, state_dict and repr, right_inverse on assignment, caching,
chaining, removal and their errors; weight_norm (with an older weight_norm's state_dict) and
spectral_norm as parametrizations. The programs take the library (gradtool or torch);
tests/parity/test_parametrize.py compares them with torch's."""
import pickle

import numpy as np
import pytest

import gradtool as gt

RNG = np.random.default_rng(11)
W = RNG.standard_normal((3, 3))


def parametrized_linear(lib):
    """A symmetric weight (right_inverse keeps the upper triangle), then scaled by 2."""
    P = lib.nn.utils.parametrize

    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu()

    class Double(lib.nn.Module):
        def forward(self, X):
            return 2 * X

        def right_inverse(self, X):
            return X / 2

    m = lib.nn.Linear(3, 3).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W))
    weight = m.weight
    P.register_parametrization(m, "weight", Symmetric())
    seen = [type(m).__name__, P.type_before_parametrizations(m).__name__,
            P.is_parametrized(m), P.is_parametrized(m, "bias"),
            m.parametrizations.weight.original is weight, repr(m), list(m.state_dict()),
            m.weight.tolist()]
    P.register_parametrization(m, "weight", Double())
    seen.append(m.weight.tolist())
    m.weight = lib.tensor(2 * np.eye(3))  # right_inverse of both: eye(3)'s upper triangle
    seen.append(m.parametrizations.weight.original.tolist())
    with P.cached():
        seen.append(m.weight is m.weight)
    seen.append(m.weight is m.weight)
    m(lib.ones(1, 3, dtype=lib.float64)).sum().backward()
    seen.append(m.parametrizations.weight.original.grad.tolist())
    P.remove_parametrizations(m, "weight")
    seen += [type(m).__name__, hasattr(m, "parametrizations"), m.weight is weight,
             m.weight.tolist(), list(m.state_dict())]
    return seen


def test_a_parametrized_weight_is_computed_from_its_original():
    seen = parametrized_linear(gt)
    assert seen[:5] == ["ParametrizedLinear", "Linear", True, False, True]
    assert "(parametrizations): ModuleDict(" in seen[5] and "(0): Symmetric()" in seen[5]
    assert seen[6] == ["bias", "parametrizations.weight.original"]
    upper = np.triu(W)
    np.testing.assert_allclose(seen[7], upper + np.triu(W, 1).T)
    np.testing.assert_allclose(seen[8], 2 * (upper + np.triu(W, 1).T))
    assert seen[9] == np.eye(3).tolist() and seen[10] and not seen[11]
    # d sum(x W^T 1) / d original: 2 on the diagonal, 4 above it (each feeds two entries)
    np.testing.assert_allclose(seen[12], 2 * np.triu(np.ones((3, 3))) + 2 * np.triu(
        np.ones((3, 3)), 1))
    assert seen[13:16] == ["Linear", False, True]
    assert seen[16] == (2 * np.eye(3)).tolist() and seen[17] == ["bias", "weight"]


def parametrize_errors(lib):
    P = lib.nn.utils.parametrize

    class Halve(lib.nn.Module):
        def forward(self, X):
            return X[:1]

    class Split(lib.nn.Module):
        def forward(self, A, B):
            return A + B

        def right_inverse(self, X):
            return X / 2, X / 2

    messages = []
    for call in (lambda: P.register_parametrization(lib.nn.Linear(2, 2), "nope", Halve()),
                 lambda: P.register_parametrization(lib.nn.Linear(2, 2), "weight", Halve()),
                 lambda: P.remove_parametrizations(lib.nn.Linear(2, 2), "weight"),
                 lambda: P.ParametrizationList([], lib.ones(2))):
        try:
            call()
        except Exception as e:  # noqa: BLE001 (the type is compared too)
            messages.append((type(e).__name__, str(e).replace("torch.", "gradtool.")))
    m = P.register_parametrization(lib.nn.Linear(2, 2), "weight", Split())
    messages.append(list(m.state_dict()))
    with pytest.raises(ValueError) as error:
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    messages.append(str(error.value))
    with pytest.raises(RuntimeError) as error:
        pickle.dumps(m)
    messages.append(str(error.value)[:60])
    return messages


def test_parametrize_errors():
    messages = parametrize_errors(gt)
    assert messages[0][0] == "ValueError" and messages[0][1].endswith(
        "does not have a parameter, a buffer, or a parametrized element with name 'nope'")
    assert messages[1][1].startswith("Registering a parametrization may not change the shape")
    assert messages[2][1].endswith("does not have a parametrization on weight")
    assert messages[3] == ("ValueError", "ParametrizationList requires one or more modules.")
    assert messages[4] == ["bias", "parametrizations.weight.original0",
                           "parametrizations.weight.original1"]
    assert messages[5].startswith("Cannot leave unparametrized")
    assert messages[6] == "Serialization of parametrized modules is only supported thro"


def weight_norm(lib):
    """parametrizations.weight_norm: value, gradients of g and v, keys; an older
    weight_norm's state_dict loads into it."""
    m = lib.nn.Linear(3, 2).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(W[:2]))
        m.bias.fill_(0.25)
    lib.nn.utils.parametrizations.weight_norm(m)
    x = lib.tensor(RNG.standard_normal((4, 3)))
    out = m(x)
    out.sum().backward()
    originals = m.parametrizations.weight
    with pytest.warns(FutureWarning, match="in favor of `torch.nn.utils.parametrizations"):
        old = lib.nn.utils.weight_norm(lib.nn.Linear(3, 2).double())
    m.load_state_dict(old.state_dict())
    return (list(m.state_dict()), out.tolist(), originals.original0.grad.tolist(),
            originals.original1.grad.tolist(), m.weight.tolist() == old.weight.tolist(),
            originals.original0.shape == (2, 1))


def test_weight_norm_parametrization():
    keys, out, g_grad, v_grad, loaded, shape = weight_norm(gt)
    assert keys == ["bias", "parametrizations.weight.original0",
                    "parametrizations.weight.original1"]
    assert loaded and shape


def spectral_norm(lib):
    """parametrizations.spectral_norm with torch's power-iteration vectors: the value after
    one more training-mode iteration, its gradient, the keys; eval mode does not iterate."""
    m = lib.nn.Linear(3, 4).double()
    with lib.no_grad():
        m.weight.copy_(lib.tensor(RNG.standard_normal((4, 3))))
    lib.nn.utils.parametrizations.spectral_norm(m)
    with lib.no_grad():
        m.parametrizations.weight[0]._u = lib.tensor(np.full(4, 0.5))
        m.parametrizations.weight[0]._v = lib.tensor(np.full(3, 3 ** -0.5))
    weight = m.weight
    weight.sum().backward()
    m.eval()
    return (list(m.state_dict()), weight.tolist(),
            m.parametrizations.weight.original.grad.tolist(),
            m.weight.tolist() == m.weight.tolist())


def test_orthogonal_is_the_engines_clear_error():
    from gradtool.engine.errors import NotInEngineError
    with pytest.raises(NotInEngineError, match="torch.nn.utils.parametrizations.orthogonal"):
        gt.nn.utils.parametrizations.orthogonal(gt.nn.Linear(2, 2))


def test_spectral_norm_parametrization():
    keys, weight, grad, stable = spectral_norm(gt)
    assert keys == ["bias", "parametrizations.weight.original", "parametrizations.weight.0._u",
                    "parametrizations.weight.0._v"]
    assert np.linalg.svd(np.array(weight), compute_uv=False)[0] == pytest.approx(1.0, abs=0.2)
    assert stable
