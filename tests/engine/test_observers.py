"""Dispatch's observers (autograd/observers.py): the profiler and the forward trace are told
of ops, backward nodes and cuts without patching anything, per thread as torch's profiler,
and also for a caller that imported `call` directly."""
import threading

import pytest

import gradtool as gt
from gradtool.engine.autograd import observers
from gradtool.engine.autograd import dispatch as dispatch_module
from gradtool.engine.autograd import inplace as inplace_module
from gradtool.engine.autograd.ops import derivatives
from gradtool.engine.autograd.profiler import profile
from gradtool.engine.autograd.dispatch import call  # imported directly: still observed
from gradtool.engine.autograd.inplace import call_inplace
from gradtool.adapters.trace import ForwardTrace


class Recorder(observers.Observer):
    """Writes down what dispatch tells it."""

    def __init__(self, name="rec", log=None):
        self.name, self.log = name, [] if log is None else log

    def op(self, name, inputs, run):
        self.log.append((self.name, "op", name))
        result = run()
        self.log.append((self.name, "op done", name))
        return result

    def backward_node(self, node, run):
        self.log.append((self.name, "node", node.name()))
        return run()

    def cut(self, kind, name, tensor, result):
        self.log.append((self.name, "cut", name))


def test_an_observer_hears_ops_backward_nodes_and_cuts_then_nothing():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    with Recorder() as rec:
        y = (x * 2).exp()
        y.sum().backward()
        heard_in_backward = len(rec.log)
        y.detach(), y.data, y[0].item(), y.tolist(), y.detach().numpy()
    cuts = [name for _, what, name in rec.log[heard_in_backward:] if what == "cut"]
    heard = [(what, name) for _, what, name in rec.log if what != "op done"]
    assert heard[:3] == [("op", "mul"), ("op", "exp"), ("op", "sum")]
    assert [name for what, name in heard if what == "node"] == [
        "GraphRoot", "SumBackward0", "ExpBackward0", "MulBackward0"]
    assert cuts == [
        ".detach()", ".data", ".item()", ".tolist()", ".detach()", ".numpy()"]
    assert observers.subscribers == [] and observers.watching() == ()
    before = len(rec.log)
    (x * 3).sum().backward()
    x.detach().tolist()
    assert len(rec.log) == before


def test_observers_wrap_in_order_and_an_in_place_op_is_named_with_its_underscore():
    log = []
    with Recorder("outer", log), Recorder("inner", log):
        gt.ones(2).add_(1)
    assert log[-4:] == [("outer", "op", "add_"), ("inner", "op", "add_"),
                        ("inner", "op done", "add_"), ("outer", "op done", "add_")]


def test_nothing_is_patched_while_a_trace_and_a_profile_run():
    names = ("item", "tolist", "numpy", "data", "detach")
    methods = {name: vars(gt.Tensor)[name] for name in names}
    dispatch = (dispatch_module.call, inplace_module.call_inplace)
    with ForwardTrace(), profile():
        gt.ones(2).sum().item()
        assert (dispatch_module.call, inplace_module.call_inplace) == dispatch
        assert {name: vars(gt.Tensor)[name] for name in names} == methods


def test_a_caller_that_imported_call_directly_is_traced_and_profiled():
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    with ForwardTrace() as trace, profile() as prof:
        y = call(derivatives.SIN, (x,))
        call_inplace(derivatives.MUL, (y, 2.0))
        y.sum().backward()
    assert [e.op for e in trace.events] == ["sin", "mul_", "sum"]
    assert trace.made_by[trace.key(y)].op == "mul_"
    rows = {e.key: e.count for e in prof.key_averages()}
    assert rows["sin"] == 1 and rows["mul_"] == 1 and rows["SinBackward0"] == 1


def _in_two_threads(watched, unwatched):
    """Run watched() in one thread and unwatched() in another while watched() is inside its
    observer: `watched(inside)` calls inside() with its observer open."""
    opened, finished, errors = threading.Event(), threading.Event(), []

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # re-raised in the test's thread
                errors.append(e)
                opened.set(), finished.set()
        return run

    def inside():
        opened.set()
        assert finished.wait(30), "the other thread did not finish"

    def other():
        assert opened.wait(30), "the observer did not open"
        unwatched()
        finished.set()

    threads = [threading.Thread(target=guard(lambda: watched(inside))),
               threading.Thread(target=guard(other))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    if errors:
        raise errors[0]


def test_a_trace_in_one_thread_does_not_see_another_threads_ops():
    records = {}

    def traced(inside):
        x = gt.tensor([1.0, 2.0], requires_grad=True)
        with ForwardTrace() as trace:
            x.sin().sum()
            inside()
            x.detach()
        records["trace"] = trace

    def other():
        z = gt.tensor([3.0], requires_grad=True)
        z.cos().sum().backward()
        z.detach(), z.tolist()

    _in_two_threads(traced, other)
    trace = records["trace"]
    assert [e.op for e in trace.events] == ["sin", "sum"]
    assert [c.op for c in trace.cuts] == [".detach()"]


def test_profiles_in_two_threads_at_once_each_count_their_own_ops():
    profiles = {}

    def profiled(inside):
        x = gt.tensor([1.0, 2.0], requires_grad=True)
        with profile() as prof:
            x.sin().sum().backward()
            inside()
        profiles["watched"] = prof

    def also_profiled():  # a second profile, open while the first is: allowed per thread
        z = gt.tensor([3.0], requires_grad=True)
        with profile() as prof:
            z.cos().mean().backward()
        profiles["other"] = prof

    _in_two_threads(profiled, also_profiled)
    assert {e.key for e in profiles["watched"].key_averages()} == {
        "sin", "sum", "GraphRoot", "SinBackward0", "SumBackward0"}
    assert {e.key for e in profiles["other"].key_averages()} == {
        "cos", "mean", "GraphRoot", "CosBackward0", "MeanBackward0"}
    assert observers.subscribers == []


def test_a_second_profile_on_the_same_thread_is_refused():
    with profile():
        with pytest.raises(RuntimeError, match="profiler is already enabled on this thread"):
            with profile():
                pass
    assert observers.subscribers == []


def test_an_op_that_raises_leaves_the_observers_as_they_were():
    with ForwardTrace() as trace, profile() as prof:
        with pytest.raises(RuntimeError):
            gt.ones(2) * gt.ones(3)  # numpy's broadcasting refuses, inside mul
        gt.ones(2).neg()
    assert [e.op for e in trace.events][-1] == "neg"
    assert "mul" not in [e.op for e in trace.events]  # it made nothing
    assert {"mul", "neg"} <= {e.key for e in prof.key_averages()}  # its time was spent
    assert observers.subscribers == []


def test_unsubscribing_on_another_thread_is_an_error():
    rec = Recorder()
    observers.subscribe(rec)
    try:
        errors = []
        thread = threading.Thread(target=lambda: _catch(errors, observers.unsubscribe, rec))
        thread.start()
        thread.join(30)
        assert errors and "not subscribed on this thread" in str(errors[0])
    finally:
        observers.unsubscribe(rec)
    assert observers.subscribers == []


def _catch(errors, fn, *args):
    try:
        fn(*args)
    except RuntimeError as e:
        errors.append(e)


def test_dispatch_and_the_engine_loop_keep_their_locals_out_of_closure_cells():
    """Wrapping the work in a lambda there made every op allocate cells (~4% on W1)."""
    from gradtool.engine.autograd import engine
    for fn in (dispatch_module.call, inplace_module.call_inplace, engine._execute):
        assert fn.__code__.co_cellvars == (), fn.__name__


def test_the_trace_keeps_tensors_apart_without_keeping_them_alive():
    """A freed tensor's id may be given to the next one: the trace's keys are not ids, so its
    records of the two stay apart, and the tensor it saw is freed as the run drops it."""
    import weakref
    x = gt.tensor([1.0, 2.0], requires_grad=True)
    with ForwardTrace() as trace:
        y = x * 2
        y_key, y_seen = trace.key(y), weakref.ref(y)
        del y
        z = x + 1
    assert y_seen() is None
    assert trace.key(z) != y_key
    assert trace.made_by[y_key].op == "mul" and trace.made_by[trace.key(z)].op == "add"
    assert trace.made_by[y_key].inputs == trace.made_by[trace.key(z)].inputs[:1] == (
        trace.key(x),)
