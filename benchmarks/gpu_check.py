"""What a maintainer with a GPU runs: every gradtool command on CUDA inputs, and the reference
check on a Triton kernel when Triton is installed.

    python benchmarks/gpu_check.py        (with the gradtool command of the same environment)

Checks, each printed as it runs: inspect, gradcheck (a right and a wrong autograd.Function,
an MLP moved to the device), render, --device cuda, the reference check of a fused softmax
(torch ops) and of a Triton LayerNorm-style row kernel in float32/bfloat16/float16 (as an
autograd.Function and as a torch.library.triton_op), and the
cost of gradcheck's host round-trips on a 1,000-element CUDA input. Ends with
`gpu check: N/M pass`; exit 1 when one fails, 2 without a GPU."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time

GRADTOOL = os.path.join(os.path.dirname(sys.executable), "gradtool")

USER_FILE = textwrap.dedent("""\
    import torch

    import gradtool

    DEVICE = "cuda"


    class Legendre(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return 0.5 * (5 * x ** 3 - 3 * x)

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 1.5 * (5 * x ** 2 - 1)


    class WrongLegendre(Legendre):
        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 1.5 * (5 * x ** 2 - 1.1)


    gradtool.example(torch.randn(6, dtype=torch.float64, device=DEVICE,
                                 requires_grad=True))(Legendre)
    gradtool.example(torch.randn(6, dtype=torch.float64, device=DEVICE,
                                 requires_grad=True))(WrongLegendre)

    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(),
                                torch.nn.Linear(16, 1)).double().to(DEVICE)


    @gradtool.example((4, 8))
    def mlp(x):
        return model(x).sum()


    def softmax_reference(x):
        return torch.softmax(x, -1)


    @gradtool.reference(softmax_reference)
    @gradtool.example((16, 64))
    def fused_softmax(x):
        e = (x - x.amax(-1, keepdim=True)).exp()
        return e / e.sum(-1, keepdim=True)
    """)

TRITON_FILE = textwrap.dedent("""\
    import torch
    import triton
    import triton.language as tl

    import gradtool


    @triton.jit
    def _scale_rows(X, Y, W, N, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < N
        x = tl.load(X + row * N + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        rms = tl.sqrt(tl.sum(x * x, axis=0) / N + 1e-6)
        tl.store(Y + row * N + cols, (x / rms * w).to(Y.dtype.element_ty), mask=mask)


    def rms_norm_reference(x, w):
        return x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * w


    @gradtool.reference(rms_norm_reference)
    class TritonRMSNorm(torch.autograd.Function):
        # forward in Triton (float32 inside, whatever the dtype); backward in torch ops
        @staticmethod
        def forward(ctx, x, w):
            y = torch.empty_like(x)
            n = x.shape[-1]
            _scale_rows[(x.shape[0],)](x, y, w, n, BLOCK=triton.next_power_of_2(n))
            ctx.save_for_backward(x, w)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            xf, gf, wf = x.float(), grad.float(), w.float()
            rstd = 1 / (xf.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()
            xhat = xf * rstd
            gx = gf * wf
            dx = rstd * (gx - xhat * (gx * xhat).mean(-1, keepdim=True))
            return dx.to(x.dtype), (gf * xhat).sum(0).to(w.dtype)


    gradtool.example(torch.randn(32, 256, device="cuda", requires_grad=True),
                     torch.ones(256, device="cuda", requires_grad=True))(TritonRMSNorm)
    """)


# The same kernel as PyTorch now recommends shipping it: a torch.library.triton_op with its
# fake kernel and autograd registered, checked against its reference in three dtypes.
TRITON_OP_FILE = TRITON_FILE.split("def rms_norm_reference")[0] + textwrap.dedent("""\
    def rms_norm_reference(x, w):
        return x / (x.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt() * w


    @gradtool.reference(rms_norm_reference)
    @gradtool.example(torch.randn(32, 256, device="cuda", requires_grad=True),
                      torch.ones(256, device="cuda", requires_grad=True))
    @torch.library.triton_op("gpucheck::rms_norm", mutates_args=())
    def rms_norm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        n = x.shape[-1]
        torch.library.wrap_triton(_scale_rows)[(x.shape[0],)](
            x, y, w, n, BLOCK=triton.next_power_of_2(n))
        return y


    @rms_norm.register_fake
    def _(x, w):
        return torch.empty_like(x)


    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)


    def backward(ctx, grad):
        x, w = ctx.saved_tensors
        xf, gf, wf = x.float(), grad.float(), w.float()
        rstd = 1 / (xf.pow(2).mean(-1, keepdim=True) + 1e-6).sqrt()
        xhat = xf * rstd
        gx = gf * wf
        dx = rstd * (gx - xhat * (gx * xhat).mean(-1, keepdim=True))
        return dx.to(x.dtype), (gf * xhat).sum(0).to(w.dtype)


    rms_norm.register_autograd(backward, setup_context=setup_context)
    """)


class Checks:
    def __init__(self):
        self.passed, self.total = 0, 0

    def check(self, what, ok, detail=""):
        self.total += 1
        self.passed += bool(ok)
        print(f"  {'PASS' if ok else 'FAIL'}  {what}" + (f"  ({detail})" if detail else ""))


def run(*args):
    done = subprocess.run([GRADTOOL, *map(str, args)], capture_output=True, text=True)
    doc = None
    if "--json" in args:
        try:
            doc = json.loads(done.stdout)
        except ValueError:
            pass
    return done, doc


def commands(checks, folder):
    user = os.path.join(folder, "on_cuda.py")
    with open(user, "w") as f:
        f.write(USER_FILE)
    done, doc = run("inspect", "--engine", "torch", "--json", user)
    devices = {i.get("device") for t in (doc or {}).get("targets", []) for i in t.get("inputs", [])}
    checks.check("inspect: every target runs on CUDA inputs", done.returncode in (0, 1) and
                 doc is not None and "cuda:0" in devices, done.stderr[-300:])
    done, doc = run("gradcheck", "--engine", "torch", "--json", user)
    targets = {t["name"]: t for t in (doc or {}).get("targets", [])}
    checks.check("gradcheck exits 1 (one Function is wrong)", done.returncode == 1,
                 done.stderr[-300:])
    for name, expected in (("Legendre", True), ("WrongLegendre", False), ("mlp", True),
                           ("fused_softmax", True)):
        got = targets.get(name, {}).get("passed")
        checks.check(f"gradcheck {name}: {'passes' if expected else 'fails'}", got is expected,
                     targets.get(name, {}).get("error"))
    reference = targets.get("fused_softmax", {}).get("reference") or {}
    checks.check("reference check of fused_softmax passes", reference.get("passed") is True)
    done, _ = run("render", "--engine", "torch", f"{user}::mlp", "-o",
                  os.path.join(folder, "mlp.svg"))
    checks.check("render of the CUDA MLP", done.returncode == 0, done.stderr[-300:])
    done, doc = run("gradcheck", "--engine", "torch", "--json", "--device", "cuda",
                    "--dtypes", "float32,bfloat16,float16", f"{user}::fused_softmax")
    t = (doc or {}).get("targets", [{}])[0]
    checks.check("--device cuda places generated inputs; reference check in 3 dtypes",
                 done.returncode == 0 and t.get("reports", [{}])[0].get("inputs", [{}])[0]
                 .get("device") == "cuda:0", done.stderr[-300:])


def triton_kernel(checks, folder):
    try:
        import triton  # noqa: F401
    except ImportError:
        print("  (Triton is not installed: its kernel is not checked)")
        return
    _reference_check(checks, folder, "triton_kernel.py", TRITON_FILE,
                     "Triton RMSNorm: reference check", "Function")
    _reference_check(checks, folder, "triton_op.py", TRITON_OP_FILE,
                     "triton_op RMSNorm (custom op): reference check", "custom_op")


def _reference_check(checks, folder, name, source, what, kind):
    """The file's one target checked against its reference in float32, bfloat16, float16."""
    user = os.path.join(folder, name)
    with open(user, "w") as f:
        f.write(source)
    done, doc = run("gradcheck", "--engine", "torch", "--json", "--reference-only",
                    "--dtypes", "float32,bfloat16,float16", user)
    targets = (doc or {}).get("targets") or [{}]
    reference = targets[0].get("reference") or {}
    ratios = ", ".join(f"{t['dtype']} {t['name']} {t['ratio']:.2f}"
                       + ("" if t["passed"] else " FAILED") for t in reference.get("tensors", []))
    checks.check(what, done.returncode == 0 and len(targets) == 1 and
                 targets[0].get("kind") == kind and reference.get("passed") is True,
                 ratios or targets[0].get("error") or done.stderr[-500:])


def host_round_trips(checks):
    """What gradcheck pays for reading each evaluation's outputs back to the host, on a
    1,000-element CUDA input (2,000 evaluations in full mode)."""
    import torch
    from gradtool.checks import gradcheck_report
    x = torch.randn(1000, dtype=torch.float64, device="cuda", requires_grad=True)
    f = torch.sin
    start = time.perf_counter()
    report = gradcheck_report(f, (x,))
    checked = time.perf_counter() - start
    torch.cuda.synchronize()
    start = time.perf_counter()
    with torch.no_grad():
        for _ in range(report.evaluations["total"]):
            f(x)
        torch.cuda.synchronize()
    device_only = time.perf_counter() - start
    checks.check(f"gradcheck of sin on 1,000 CUDA elements: {checked:.2f} s, "
                 f"{report.evaluations['total']} evaluations; the same evaluations without "
                 f"host reads {device_only:.2f} s", report.passed)


def main():
    try:
        import torch
    except ImportError:
        print("gpu check: torch is not installed")
        return 2
    if not torch.cuda.is_available():
        print("gpu check: no CUDA device here")
        return 2
    print(f"gpu check on {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    checks = Checks()
    with tempfile.TemporaryDirectory() as folder:
        commands(checks, folder)
        triton_kernel(checks, folder)
        host_round_trips(checks)
    print(f"gpu check: {checks.passed}/{checks.total} pass")
    return 0 if checks.passed == checks.total else 1


if __name__ == "__main__":
    sys.exit(main())
