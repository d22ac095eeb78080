"""Sparse COO tensors against torch's: values, indices, flags, products, gradients and
refusals, with the programs of tests/engine/test_sparse.py. Tests marked parity, skipped
without torch."""
import re

import numpy as np
import pytest
from hypothesis import given, settings

import gradtool as gt
from tests.engine import test_sparse as programs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.parity


def _plain(out):
    return [(tuple(o.shape), str(o.dtype).split(".")[-1], o.detach().numpy())
            if hasattr(o, "detach") else o for o in out]


@pytest.mark.parametrize("name", programs.PROGRAMS)
def test_sparse_tensors_behave_as_torchs(name):
    ours, theirs = _plain(programs.PROGRAMS[name](gt)), _plain(programs.PROGRAMS[name](torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
        else:
            assert a == b


@pytest.mark.parametrize("name", programs.ERRORS)
def test_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)


# ---- compressed layouts (CSR, CSC, BSR, BSC)
def _torch_spelling(text):
    """The engine's repr in torch's words, its line breaks aside ("gradtool.sparse_csr" is
    longer than "torch.sparse_csr": a line can break a suffix earlier)."""
    return re.sub(r",\s+", ", ", text.replace("gradtool.", "torch."))


@pytest.mark.parametrize("name", programs.COMPRESSED)
def test_compressed_tensors_are_torchs(name):
    """Layout, shape, dtype, nnz, both indices, values, dense values and the repr."""
    ours, theirs = programs.COMPRESSED[name](gt), programs.COMPRESSED[name](torch)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a_parts, b_parts = programs.compressed_parts(a), programs.compressed_parts(b)
        assert a_parts[:6] == b_parts[:6]
        for x, y in zip(a_parts[6:], b_parts[6:]):
            np.testing.assert_allclose(x, y, rtol=1e-6)
        assert _torch_spelling(repr(a)) == _torch_spelling(repr(b))


@pytest.mark.parametrize("name", programs.DENSE_RESULTS)
def test_compressed_tensors_results_and_gradients_are_torchs(name):
    ours = _plain(programs.DENSE_RESULTS[name](gt))
    theirs = _plain(programs.DENSE_RESULTS[name](torch))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(a, tuple) and len(a) == 3 and isinstance(a[2], np.ndarray):
            assert a[:2] == b[:2]
            np.testing.assert_allclose(a[2], b[2], rtol=1e-6)
        else:
            assert _torch_spelling(str(a)) == str(b)


@pytest.mark.parametrize("name", programs.COMPRESSED_ERRORS)
def test_compressed_refusals_are_torchs(name):
    with pytest.raises(Exception) as theirs:
        programs.COMPRESSED_ERRORS[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        programs.COMPRESSED_ERRORS[name](gt)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("name", programs.NO_KERNEL)
def test_what_torch_has_no_kernel_for_is_refused_as_torch(name):
    with pytest.raises(NotImplementedError) as theirs:
        programs.NO_KERNEL[name](torch)
    with pytest.raises(NotImplementedError) as ours:
        programs.NO_KERNEL[name](gt)
    assert str(theirs.value).startswith(str(ours.value))


@settings(max_examples=30, deadline=None, derandomize=True)
@given(programs.sparse_matrices())
def test_any_matrix_converts_as_torchs(case):
    ours, theirs = (programs.converted(lib, *case) for lib in (gt, torch))
    a_parts, b_parts = programs.compressed_parts(ours), programs.compressed_parts(theirs)
    assert a_parts[:6] == b_parts[:6]
    for x, y in zip(a_parts[6:], b_parts[6:]):
        np.testing.assert_array_equal(x, y)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(programs.sparse_matrices())
def test_saved_compressed_tensors_load_in_torch_and_back(tmp_path_factory, case):
    """A compressed tensor gradtool saves loads in torch in its layout (weights only), and
    one torch saves loads in gradtool the same."""
    folder = tmp_path_factory.mktemp("saved")
    for saver, loader in ((gt, torch), (torch, gt)):
        t = programs.converted(saver, *case)
        saver.save({"t": t}, folder / "t.pt")
        back = loader.load(folder / "t.pt")["t"]
        parts, back_parts = programs.compressed_parts(t), programs.compressed_parts(back)
        assert back_parts[:6] == parts[:6]
        for x, y in zip(back_parts[6:], parts[6:]):
            np.testing.assert_array_equal(x, y)
