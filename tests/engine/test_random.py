"""torch.Generator and the random draws that take one (generator=): seeding, initial seeds,
saved and restored states, and torch's random fills (random_, log_normal_, exponential_,
geometric_, cauchy_) and randint_like: their ranges, dtypes and refusals. numpy draws the
numbers, so the same seed gives other numbers than torch's: the parity tests
(tests/parity/test_random.py) compare everything but the numbers."""
import numpy as np
import pytest

import gradtool as gt

# programs of `lib` whose results both libraries must agree on (no drawn number in them)
PROGRAMS = {
    "initial_seed": lambda lib: lib.Generator().manual_seed(7).initial_seed(),
    "negative_seed": lambda lib: lib.Generator().manual_seed(-1).initial_seed(),
    "manual_seed_returns_a_generator": lambda lib: isinstance(lib.manual_seed(3), lib.Generator),
    "default_initial_seed": lambda lib: (lib.manual_seed(11), lib.initial_seed())[1],
    "device": lambda lib: str(lib.Generator().device),
    "same_seed_same_draws": lambda lib: [
        lib.randn(3, generator=lib.Generator().manual_seed(5)).tolist()
        == lib.randn(3, generator=lib.Generator().manual_seed(5)).tolist()],
    "state_restores_draws": lambda lib: (lambda g: (lambda s: lib.rand(4, generator=g).tolist()
        == (g.set_state(s), lib.rand(4, generator=g).tolist())[1])(g.get_state()))(
        lib.Generator().manual_seed(1)),
    "global_state_restores_draws": lambda lib: (lambda s: lib.rand(2).tolist() == (
        lib.set_rng_state(s), lib.rand(2).tolist())[1])(lib.get_rng_state()),
    "random_to_range": lambda lib: (lambda t: [t.min().item() >= 0, t.max().item() < 3,
                                               t.dtype == lib.float32])(
        lib.zeros(1000).random_(3)),
    "random_from_to_range": lambda lib: (lambda t: [t.min().item() >= -2, t.max().item() < 2,
                                                    sorted(set(t.tolist()))])(
        lib.zeros(1000, dtype=lib.int64).random_(-2, 2)),
    "random_uint8": lambda lib: (lambda t: [t.dtype == lib.uint8, t.max().item() <= 255])(
        lib.zeros(100, dtype=lib.uint8).random_()),
    "random_bool": lambda lib: sorted(set(lib.zeros(200, dtype=lib.bool).random_().tolist())),
    "random_float16_integral": lambda lib: (lambda t: [(t == t.round()).all().item(),
                                                       t.max().item() <= 2048])(
        lib.zeros(100, dtype=lib.float16).random_()),
    "log_normal_positive": lambda lib: (lib.zeros(100).log_normal_(0.0, 0.5) > 0).all().item(),
    "exponential_positive": lambda lib: (lib.zeros(100).exponential_(3.0) >= 0).all().item(),
    "geometric_integral": lambda lib: (lambda t: [(t >= 1).all().item(),
                                                  (t == t.round()).all().item()])(
        lib.zeros(100).geometric_(0.3)),
    "cauchy_finite": lambda lib: lib.zeros(10).cauchy_(1.0, 2.0).isfinite().all().item(),
    "fill_nodes": lambda lib: [getattr(lib.randn(2, requires_grad=True) * 1, fill)(*args)
                               .grad_fn.name() for fill, args in (
        ("random_", ()), ("random_", (4,)), ("random_", (1, 4)), ("log_normal_", ()),
        ("exponential_", ()), ("geometric_", (0.5,)), ("cauchy_", ()))],
    "randint_like": lambda lib: (lambda t: [tuple(t.shape), str(t.dtype).split(".")[-1],
                                            t.min().item() >= 2, t.max().item() < 5])(
        lib.randint_like(lib.zeros(2, 3), 2, 5)),
    "randint_like_high_only": lambda lib: (lambda t: [str(t.dtype).split(".")[-1],
                                                      t.max().item() < 4])(
        lib.randint_like(lib.zeros(50, dtype=lib.int32), 4)),
    "factories_take_generators": lambda lib: [
        tuple(f(lib.Generator().manual_seed(0)).shape) for f in (
            lambda g: lib.randn(2, 3, generator=g), lambda g: lib.rand(4, generator=g),
            lambda g: lib.randint(0, 5, (3,), generator=g), lambda g: lib.randperm(6, generator=g),
            lambda g: lib.zeros(2).normal_(generator=g), lambda g: lib.zeros(2).uniform_(
                generator=g), lambda g: lib.zeros(3).random_(generator=g),
            lambda g: lib.normal(0.0, 1.0, (2,), generator=g),
            lambda g: lib.ones(4).multinomial(2, generator=g),
            lambda g: lib.full((3,), 0.5).bernoulli(generator=g))],
}
ERRORS = {
    "cuda_generator": lambda lib: lib.Generator(device="cuda"),
    "random_empty_range": lambda lib: lib.zeros(2).random_(3, 3),
    "fill_on_a_leaf": lambda lib: lib.zeros(2, requires_grad=True).log_normal_(),
}


def test_a_generator_seeds_its_own_draws_apart_from_the_global_ones():
    g = gt.Generator().manual_seed(5)
    first = gt.randn(3, generator=g)
    gt.manual_seed(0)
    gt.randn(10)  # (the global generator's draws leave g alone)
    assert not np.array_equal(gt.randn(3, generator=g).numpy(), first.numpy())
    assert np.array_equal(gt.randn(3, generator=gt.Generator().manual_seed(5)).numpy(),
                          first.numpy())


def test_seeds_and_states_behave_as_torchs():
    assert PROGRAMS["initial_seed"](gt) == 7
    assert PROGRAMS["negative_seed"](gt) == 2 ** 64 - 1
    assert PROGRAMS["default_initial_seed"](gt) == 11
    assert PROGRAMS["same_seed_same_draws"](gt) == [True]
    assert PROGRAMS["state_restores_draws"](gt) and PROGRAMS["global_state_restores_draws"](gt)
    assert 0 <= gt.Generator().seed() < 2 ** 64


def test_random_fills_draw_in_their_ranges():
    assert PROGRAMS["random_to_range"](gt) == [True, True, True]
    assert PROGRAMS["random_from_to_range"](gt) == [True, True, [-2, -1, 0, 1]]
    assert PROGRAMS["random_bool"](gt) == [False, True]
    assert PROGRAMS["random_float16_integral"](gt) == [True, True]
    assert PROGRAMS["geometric_integral"](gt) == [True, True]
    assert PROGRAMS["randint_like"](gt) == [(2, 3), "float32", True, True]
    assert PROGRAMS["fill_nodes"](gt) == ["RandomBackward2", "RandomBackward1", "RandomBackward0",
                                          "LogNormalBackward0", "ExponentialBackward0",
                                          "GeometricBackward0", "CauchyBackward0"]


def test_log_normal_draws_have_the_asked_moments():
    logs = gt.zeros(20000, dtype=gt.float64).log_normal_(0.5, 0.25,
                                                         generator=gt.Generator().manual_seed(2))
    values = np.log(logs.numpy())
    assert abs(values.mean() - 0.5) < 0.01 and abs(values.std() - 0.25) < 0.01


def test_a_generator_is_refused_where_a_number_generator_is_not_one():
    with pytest.raises(TypeError, match="generator must be a torch.Generator"):
        gt.randn(2, generator=np.random.default_rng(0))


@pytest.mark.parametrize("name", ERRORS)
def test_refusals(name):
    with pytest.raises(RuntimeError):
        ERRORS[name](gt)
