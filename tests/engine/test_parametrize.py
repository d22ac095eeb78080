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


ORTHOGONAL_MAPS = ["matrix_exp", "cayley", "householder"]
ORTHOGONAL_SHAPES = [(4, 4), (5, 3), (3, 5), (2, 4, 3)]


def orthogonal(lib, orthogonal_map, shape, use_trivialization, complex_weight=False):
    """parametrizations.orthogonal on a weight of `shape` (complex: unitary): its keys and
    repr, the weight, the gradient of a weighted sum of it (its real part) at the original,
    and the weight after assigning an orthogonal matrix (right_inverse). A non-square
    trivialization completes its base with torch.randn, so the base is set to the same
    orthogonal matrix in both libraries."""
    rng = np.random.default_rng(5)

    def normal(shape):
        return rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if complex_weight
                                             else 0)
    m = lib.nn.Module()
    m.weight = lib.nn.Parameter(lib.tensor(normal(shape)))
    lib.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                             use_trivialization=use_trivialization)
    n, k = max(shape[-2:]), min(shape[-2:])
    if use_trivialization and n != k:
        base = np.linalg.qr(normal(shape[:-2] + (n, n)))[0]
        m.parametrizations.weight[0].base = lib.tensor(base)
    weight = m.weight
    weighted = weight * lib.tensor(normal(shape))
    (weighted.real if complex_weight else weighted).sum().backward()
    seen = [list(m.state_dict()), repr(m), weight.tolist(),
            m.parametrizations.weight.original.grad.tolist()]
    square = lib.tensor(np.linalg.qr(normal(shape[:-2] + (n, n)))[0])
    assigned = square[..., :k] if shape[-2] >= shape[-1] else square[..., :k, :]
    try:
        with lib.no_grad():
            m.weight = assigned
        seen.append(m.weight.tolist())
    except NotImplementedError as e:  # exp and Cayley have no inverse without a base
        seen.append(str(e))
    return seen, assigned.tolist()


def _max_off_identity(Q):
    Q = np.asarray(Q)
    Qh = Q.swapaxes(-1, -2).conj()
    gram = Qh @ Q if Q.shape[-2] >= Q.shape[-1] else Q @ Qh
    return np.abs(gram - np.eye(gram.shape[-1])).max()


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("shape", ORTHOGONAL_SHAPES)
@pytest.mark.parametrize("orthogonal_map", ORTHOGONAL_MAPS)
def test_orthogonal_weight_is_orthogonal(orthogonal_map, shape, use_trivialization):
    (keys, text, weight, grad, reassigned), assigned = orthogonal(
        gt, orthogonal_map, shape, use_trivialization)
    assert _max_off_identity(weight) < 1e-12
    base = ["parametrizations.weight.0.base"] if use_trivialization else []
    assert keys == ["parametrizations.weight.original"] + base
    assert "(0): _Orthogonal()" in text
    assert np.asarray(grad).shape == shape
    if use_trivialization or orthogonal_map == "householder":
        # right_inverse: assigning an orthogonal matrix gives it back as the weight
        np.testing.assert_allclose(reassigned, assigned, atol=1e-12)
    else:
        assert reassigned == ("It is not possible to assign to the matrix exponential or the "
                              "Cayley parametrizations when use_trivialization=False.")


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("shape", [(3, 3), (4, 2), (2, 4)])
@pytest.mark.parametrize("orthogonal_map", ORTHOGONAL_MAPS)
def test_orthogonal_gradients_match_central_differences(orthogonal_map, shape,
                                                        use_trivialization):
    from tests.gradcheck_util import check_grads
    m = gt.nn.Module()
    m.weight = gt.nn.Parameter(gt.tensor(np.random.default_rng(2).standard_normal(shape)))
    gt.nn.utils.parametrizations.orthogonal(m, orthogonal_map=orthogonal_map,
                                            use_trivialization=use_trivialization)
    orth = m.parametrizations.weight[0]
    # a point off the initial one (-I with a base, the QR's reflectors without), so that
    # every entry of the original matters; householder reads the diagonal's ±1 through an
    # int cast (no gradient, as torch's): 1.5 keeps central differences off its steps
    start = m.parametrizations.weight.original.detach().numpy()
    start = start + 0.3 * np.tril(np.random.default_rng(3).standard_normal(shape), -1)
    if orthogonal_map == "householder":
        start[np.eye(*shape, dtype=bool)] *= 1.5
    check_grads(orth, [gt.tensor(start, requires_grad=True)])


def test_orthogonal_errors():
    P = gt.nn.utils.parametrizations
    with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                         "tensor of 1 dimensions."):
        P.orthogonal(gt.nn.Linear(2, 2), "bias")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        P.orthogonal(gt.nn.Linear(2, 2), "w")
    with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                         '"cayley", "householder". Got: qr'):
        P.orthogonal(gt.nn.Linear(2, 2), orthogonal_map="qr")
    m = gt.nn.Module()
    m.weight = gt.nn.Parameter(gt.ones(3, 3, dtype=gt.complex128))
    with pytest.raises(ValueError, match="householder parametrization does not support "
                                         "complex"):
        P.orthogonal(m, orthogonal_map="householder")
    m = P.orthogonal(gt.nn.Linear(2, 3))
    with pytest.raises(ValueError, match=r"Expected a matrix or batch of matrices of shape "):
        m.weight = gt.eye(3)


@pytest.mark.parametrize("use_trivialization", [True, False])
@pytest.mark.parametrize("shape", ORTHOGONAL_SHAPES)
@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley"])
def test_orthogonal_of_a_complex_weight_is_unitary(orthogonal_map, shape, use_trivialization):
    """A complex weight's orthogonal parametrization is unitary (W^H W = I), as torch's (the
    householder map refuses complex weights: tested with torch's words in parity)."""
    (_, _, weight, grad, reassigned), assigned = orthogonal(
        gt, orthogonal_map, shape, use_trivialization, complex_weight=True)
    assert _max_off_identity(weight) < 1e-12
    assert np.iscomplexobj(np.asarray(grad)) and np.asarray(grad).shape == shape
    if use_trivialization:
        np.testing.assert_allclose(reassigned, assigned, atol=1e-12)
