"""tensorplug in real virtual environments with only some plugins installed.

To test another combination, add one line to ``COMBOS``: every combination is checked to
import without warnings and to load exactly the plugins its distributions declare. Add lines to
``CHECKS`` for what a combination must print.
"""

from __future__ import annotations

import re

import pytest

from conftest import Venvs, entry_points

pytestmark = pytest.mark.venv

# name -> project directories to install (relative to the repository root)
COMBOS: dict[str, list[str]] = {
    "core": ["core"],
    "core+cpu": ["core", "plugins/cpu"],
    "core+cpu+foo": ["core", "plugins/cpu", "examples/foo_backend"],
    "core+cpu+strict": ["core", "plugins/cpu", "examples/strict_backend"],
    "core+cpu+autograd": ["core", "plugins/cpu", "plugins/autograd"],
    "core+cpu+tracer": ["core", "plugins/cpu", "plugins/tracer"],
    "all": [
        "core",
        "plugins/cpu",
        "plugins/autograd",
        "plugins/tracer",
        "plugins/cuda",
        "plugins/autocast",
        "plugins/batched",
        "examples/foo_backend",
    ],
    "core+cpu+cuda": ["core", "plugins/cpu", "plugins/cuda"],  # no extra: no CuPy, no GPU
    "core+cpu+autocast": ["core", "plugins/cpu", "plugins/autocast"],
    "core+cpu+autograd+autocast": ["core", "plugins/cpu", "plugins/autograd", "plugins/autocast"],
    "core+fixtures": ["core", "tests/fixtures/good_plugin", "tests/fixtures/broken_plugin"],
    "core+cpu+batched": ["core", "plugins/cpu", "plugins/batched"],
}

MISSING_CPU = """
import tensorplug as tp
try:
    tp.tensor([1.0])
except tp.MissingPluginError as e:
    print(type(e).__name__, e.distribution, "tensorplug-cpu" in str(e))
"""
MISSING_AUTOGRAD = """
import tensorplug as tp
for attempt in (lambda: tp.tensor([1.0], requires_grad=True), lambda: tp.ones([1]).requires_grad_(),
                lambda: tp.no_grad,
                lambda: tp.library.register_autograd("aten::exp", lambda ctx, g: g)):
    try:
        attempt()
    except tp.MissingPluginError as e:
        print(e.distribution, "pip install tensorplug-autograd" in str(e))
_t = tp.ones([1])
print("requires_grad", _t.requires_grad, "is_leaf", _t.is_leaf, "detach_", _t.detach_() is _t)
"""
TRAIN = """
import tensorplug as tp
tp.manual_seed(0)
x = tp.randn([32, 3]); y = (x.sum(1) > 0).to(tp.int64)
model = tp.nn.Sequential(tp.nn.Linear(3, 8), tp.nn.ReLU(), tp.nn.Linear(8, 2))
opt = tp.optim.SGD(model.parameters(), lr=0.5)
losses = []
for _ in range(30):
    loss = tp.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); losses.append(loss.item())
print("loss fell", losses[-1] < losses[0] / 2, type(loss.grad_fn).__name__)
"""
MISSING_VMAP = """
import tensorplug as tp
try:
    tp.vmap
except tp.MissingPluginError as e:
    print(e)
"""
CUDA_WITHOUT_CUPY = """
import sys
import tensorplug as tp
print("cupy imported:", "cupy" in sys.modules, tp.cuda.is_available(), tp.cuda.device_count())
try:
    tp.ones([2], device="cuda")
except tp.cuda.CudaUnavailableError as e:
    print(type(e).__name__, e.reason.startswith("CuPy is not installed"),
          'pip install "tensorplug-cuda[cuda12]"' in str(e))
print("cuda" if tp.cuda.is_available() else "cpu", tp.ones([2]).sum().item())
"""
CUDA_ABSENT = """
import tensorplug as tp
print(tp.cuda.is_available(), tp.cuda.device_count(), tp.cuda.memory_allocated())
try:
    tp.cuda.current_device()
except tp.MissingPluginError as e:
    print(e)
"""
VMAP_WITHOUT_AUTOGRAD = """
import tensorplug as tp
x = tp.arange(6.0).reshape([2, 3])
print("vmap", tp.vmap(lambda r: (r * 2).sum())(x).tolist())
for name in ("grad", "grad_and_value", "vjp", "jacrev", "hessian"):
    try:
        getattr(tp.func, name)(lambda v: v.sum())
    except tp.MissingPluginError as e:
        print(name, e.distribution, "pip install tensorplug-autograd" in str(e))
"""
MISSING_FUNC = """
import tensorplug as tp
for attempt in (lambda: tp.func, lambda: tp.library.register_vmap("aten::exp", lambda *a: a)):
    try:
        attempt()
    except tp.MissingPluginError as e:
        print(e.distribution, "pip install tensorplug-batched" in str(e))
"""
PER_SAMPLE_GRADS = """
import tensorplug as tp
from tensorplug.func import functional_call, grad, vmap
tp.manual_seed(0)
model = tp.nn.Linear(3, 2)
params = {k: v.detach() for k, v in model.named_parameters()}
x, y = tp.randn(4, 3), tp.randint(0, 2, [4])
loss = lambda p, a, b: tp.nn.functional.cross_entropy(functional_call(model, p, (a,)), b)
g = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
ok = True
for i in range(4):
    model.zero_grad()
    tp.nn.functional.cross_entropy(model(x[i]), y[i]).backward()
    ok = ok and bool((g["weight"][i] - model.weight.grad).abs().max() < 1e-6)
foo = tp.vmap(lambda r: (r * 2).sum())(tp.ones(2, 3, device="foo"))
graph = tp.tracer.trace(lambda r: (r * 2).sum(), tp.ones(3))
replayed = tp.vmap(graph)(tp.ones(2, 3))
with tp.autocast("cpu"):
    amp = tp.vmap(lambda r: r @ tp.ones(3, 2))(tp.ones(2, 3))
print("per-sample", ok, "foo", foo.device, foo.tolist(), "replayed", replayed.tolist(), amp.dtype)
"""

TRACE_NO_AUTOGRAD = """
import tensorplug as tp
w = tp.randn([3, 2])
f = lambda x: (x @ w).relu().sum(1)
g = tp.tracer.trace(f, tp.randn([4, 3]))
c = tp.compile(f)
x = tp.randn([4, 3])
print("nodes", [n.op.op_name for n in g.nodes], "replay", bool((g(x) == f(x)).all()),
      "compiled", bool((c(x) == f(x)).all()), bool((c(x) == f(x)).all()), c.trace_count)
"""
COMPILE_TRAIN = """
import tensorplug as tp
def make():
    tp.manual_seed(0)
    model = tp.nn.Sequential(tp.nn.Linear(3, 8), tp.nn.ReLU(), tp.nn.Linear(8, 2))
    params = list(model.parameters())
    def step(x, y):
        loss = tp.nn.functional.cross_entropy(model(x), y)
        grads = tp.autograd.grad(loss, params)
        with tp.no_grad():
            for p, g in zip(params, grads):
                p.sub_(g, alpha=0.1)
        return loss.detach()
    return params, step
(pe, se), (pc, sc) = make(), make()
sc = tp.compile(sc)
tp.manual_seed(1)
for _ in range(20):
    x = tp.randn([16, 3]); y = (x.sum(1) > 0).to(tp.int64)
    assert bool((se(x, y) == sc(x, y)).all())
print("bitwise", all(bool((a == b).all()) for a, b in zip(pe, pc)), "traces", sc.trace_count)
"""
MISSING_TRACER = """
import tensorplug as tp
for name in ("tracer", "compile"):
    try:
        getattr(tp, name)
    except tp.MissingPluginError as e:
        print(e.distribution, f"pip install {e.distribution}" in str(e))
print(tp.trace(tp.eye(3)))
"""
MISSING_AUTOCAST = """
import tensorplug as tp
for attempt in (lambda: tp.autocast, lambda: tp.amp.GradScaler, lambda: tp.is_autocast_enabled,
                lambda: tp.library.register_autocast("aten::mm", "cpu", tp.float16)):
    try:
        attempt()
    except tp.MissingPluginError as e:
        print(e.distribution, "pip install tensorplug-autocast" in str(e))
"""
AUTOCAST_INFERENCE = """
import tensorplug as tp
x, w = tp.randn([4, 3]), tp.randn([5, 3])
with tp.autocast("cpu"):
    y = tp.nn.functional.linear(x, w)
    print("inference", y.dtype, tp.softmax(y, 1).dtype, tp.nn.functional.mse_loss(y, y).dtype,
          tp.is_autocast_enabled("cpu"))
print("after", tp.is_autocast_enabled("cpu"), tp.dispatcher.dispatch_table("aten::mm")["AutocastCPU"])
"""
AUTOCAST_TRAIN = """
import tensorplug as tp
tp.manual_seed(0)
x = tp.randn([32, 3]); y = (x.sum(1) > 0).to(tp.int64)
model = tp.nn.Sequential(tp.nn.Linear(3, 8), tp.nn.ReLU(), tp.nn.Linear(8, 2))
opt = tp.optim.SGD(model.parameters(), lr=0.5)
scaler = tp.amp.GradScaler(init_scale=1024.0)
losses = []
for _ in range(30):
    with tp.autocast("cpu", dtype=tp.float16):
        logits = model(x)
        loss = tp.nn.functional.cross_entropy(logits, y)
    opt.zero_grad(); scaler.scale(loss).backward(); scaler.step(opt); scaler.update()
    losses.append(loss.item())
grads = {p.grad.dtype for p in model.parameters()}
print("amp", logits.dtype, loss.dtype, grads == {tp.float32}, losses[-1] < losses[0] / 2)
"""

# (combination, python code -- or ["tensorplug", args...], a regex one line of its stdout matches)
CHECKS: list[tuple[str, str | list[str], str]] = [
    ("core", MISSING_CPU, r"^MissingPluginError tensorplug-cpu True$"),
    ("core", "import tensorplug as tp; print(tp.plugins.list())", r"^\[\]$"),
    (
        "core",
        ["tensorplug", "plugins"],
        r"^no tensorplug plugins are installed \(pip install tensorplug-cpu\)$",
    ),
    (  # the Meta backend comes with the core and needs no array library (docs/meta.md)
        "core",
        "import sys, tensorplug as tp; x = tp.ones(2, 3, device='meta') @ tp.ones(3, 4, "
        "device='meta'); print(x, 'numpy' in sys.modules)",
        r"^tensor\(\.\.\., device='meta', size=\(2, 4\)\) False$",
    ),
    (
        "core+cpu",
        "import tensorplug as tp; print(tp.tensor([1., 2.]) + 1)",
        r"^tensor\(\[2\., 3\.\]\)$",
    ),
    (
        "core+cpu",
        MISSING_VMAP,
        r"^tensorplug\.vmap is provided by the tensorplug-batched plugin, which is not installed \(or not loaded\): pip install tensorplug-batched$",
    ),
    ("core+cpu", ["tensorplug", "table", "aten::add.Tensor"], r"^CPU\s+CPU\s+cpu$"),
    ("core+cpu", ["tensorplug", "demo"], r"^a \+ 1 = tensor"),
    ("core+cpu+foo", ["tensorplug", "keys"], r"^Foo\s+backend\s+\d+\s+foo$"),
    ("core+cpu+foo", ["tensorplug", "keys"], r"^FooCount\s+functionality\s+\d+\s+foo$"),
    (
        "core+cpu+foo",
        "import tensorplug as tp; print(tp.tensor([1., 2.], device='foo').is_foo)",
        r"^True$",
    ),
    (
        "core+cpu+strict",
        "import tensorplug as tp; x = tp.tensor([[1., 2.], [3., 4.]], device='strict'); "
        "print((x @ x).sum(0).cpu(), (x > 2).sum().item(), x.argsort(1, descending=True).cpu().tolist())",
        r"^tensor\(\[22\., 32\.\]\) 2 \[\[1, 0\], \[1, 0\]\]$",
    ),
    (
        "core+cpu+strict",
        ["tensorplug", "ops", "--missing", "Strict"],
        r"^0 of \d+ aten ops have no kernel for Strict",
    ),
    ("core+fixtures", "import tensorplug as tp; print(tp.tiny_hello())", r"^hello from tiny$"),
    (
        "core+cpu",
        MISSING_AUTOGRAD,
        r"^(tensorplug-autograd True\n){4}requires_grad False is_leaf True detach_ True$",
    ),
    ("core+cpu+autograd", TRAIN, r"^loss fell True DivBackward1$|^loss fell True \w+Backward\d*$"),
    ("core+cpu+autograd", ["tensorplug", "demo"], r"accuracy"),
    (
        "core+cpu+autograd",
        ["tensorplug", "table", "aten::mul.Tensor"],
        r"^AutogradCPU\s+Autograd\s+autograd$",
    ),
    ("core+cpu", MISSING_TRACER, r"^(tensorplug-tracer True\n){2}tensor\(3\.\)$"),
    (
        "core+cpu+tracer",
        TRACE_NO_AUTOGRAD,
        r"^nodes \['matmul', 'relu', 'sum'\] replay True compiled True True 2$",
    ),
    (
        "core+cpu+tracer",
        ["tensorplug", "demo"],
        r"^replayed through the dispatcher: equals the eager forward: True$",
    ),
    (
        "core+cpu+tracer",
        ["tensorplug", "table", "aten::mul.Tensor"],
        r"^Tracer\s+fallback\s+tracer$",
    ),
    ("all", COMPILE_TRAIN, r"^bitwise True traces [23]$"),
    (
        "all",
        ["tensorplug", "demo"],
        r"^tp\.tracer\.trace of the classifier's forward \(3 nodes\):$",
    ),
    (
        "core+cpu+autograd",
        ["tensorplug", "table", "aten::mul.Tensor"],
        r"^AutogradCPU\s+Autograd\s+autograd$",
    ),
    (
        "core+cpu+cuda",
        CUDA_WITHOUT_CUPY,
        r"^cupy imported: False False 0\nCudaUnavailableError True True\ncpu 2\.0$",
    ),
    (
        "core+cpu+cuda",
        ["tensorplug", "plugins"],
        r"^cuda\s+tensorplug-cuda\s+0\.1\.0\s+loaded \(no device\)\s+-\s+\d+$",
    ),
    (
        "core+cpu+cuda",
        ["tensorplug", "plugins"],
        r"^cuda: no cuda device is available: CuPy is not installed \(",
    ),
    ("core+cpu+cuda", ["tensorplug", "table", "aten::mm"], r"^CUDA\s+CUDA\s+cuda$"),
    (
        "core+cpu",
        CUDA_ABSENT,
        r"^False 0 0\ntp\.cuda\.current_device\(\) needs the tensorplug-cuda plugin, which is not installed: pip install",
    ),
    ("core+cpu", MISSING_AUTOCAST, r"^(tensorplug-autocast True\n){4}"),
    (
        "core+cpu+autocast",
        AUTOCAST_INFERENCE,
        r"^inference tensorplug\.bfloat16 tensorplug\.bfloat16 tensorplug\.float32 True\nafter False AutocastCPU$",
    ),
    (
        "core+cpu+autocast",
        ["tensorplug", "demo"],
        r"^inside autocast\('cpu', bfloat16\): matmul -> tensorplug\.bfloat16",
    ),
    (
        "core+cpu+autocast",
        ["tensorplug", "table", "aten::add.Tensor"],
        r"^AutocastCPU\s+fallthrough\s+autocast$",
    ),
    (
        "core+cpu+autograd+autocast",
        AUTOCAST_TRAIN,
        r"^amp tensorplug\.float16 tensorplug\.float32 True True$",
    ),
    (
        "core+cpu+autograd+autocast",
        ["tensorplug", "demo"],
        r"^  bfloat16 autocast +accuracy 0\.9\d",
    ),
    ("core+cpu", MISSING_FUNC, r"^(tensorplug-batched True\n){2}"),
    (
        "core+cpu+batched",
        VMAP_WITHOUT_AUTOGRAD,
        r"^vmap \[6\.0, 24\.0\]\n(\w+ tensorplug-autograd True\n){5}",
    ),
    (
        "core+cpu+batched",
        ["tensorplug", "demo"],
        r"^vmap over 5 rows -> shape \(5,\); equals the loop: True$",
    ),
    (
        "all",
        PER_SAMPLE_GRADS,
        r"^per-sample True foo foo \[6\.0, 6\.0\] replayed \[6\.0, 6\.0\] tensorplug\.bfloat16$",
    ),
    ("all", ["tensorplug", "table", "aten::add.Tensor"], r"^Batched\s+Batched\s+batched$"),
]

# plugins that fail to load on purpose (tests/fixtures/broken_plugin)
EXPECTED_FAILURES = {"fixture_broken", "fixture_import_error"}


def _plugin_names(combo: str) -> list[str]:
    return sorted(n for p in COMBOS[combo] for n in entry_points(p))


PLUGINS_LISTING = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import tensorplug as tp
for w in caught:
    print("warning:", w.category.__name__)
for i in tp.plugins.list():
    print(i.name, i.status)
"""


@pytest.mark.parametrize("combo", COMBOS)
def test_imports_and_loads_its_plugins(venvs: Venvs, combo: str) -> None:
    r = venvs.python(combo, PLUGINS_LISTING)
    assert r.returncode == 0, r.stderr
    names = _plugin_names(combo)
    expected = ["warning: PluginLoadWarning" for n in names if n in EXPECTED_FAILURES]
    expected += [f"{n} {'failed' if n in EXPECTED_FAILURES else 'loaded'}" for n in names]
    assert r.stdout.splitlines() == expected


def test_broken_plugins_are_isolated(venvs: Venvs) -> None:
    r = venvs.command("core+fixtures", "tensorplug", "plugins")
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    assert "fixture_broken: failed: RuntimeError: the broken fixture plugin fails on purpose" in out
    assert any(
        ln.split()[:4] == ["fixture_good", "tensorplug-fixture-good", "0.1", "loaded"] for ln in out
    )
    assert "set TENSORPLUG_DISABLE_PLUGINS=fixture_broken to skip it." in r.stderr
    r = venvs.command(
        "core+fixtures",
        "tensorplug",
        "plugins",
        env={"TENSORPLUG_DISABLE_PLUGINS": "fixture_broken,fixture_import_error"},
    )
    assert r.stderr == ""
    assert (
        "fixture_broken: disabled: listed in TENSORPLUG_DISABLE_PLUGINS=fixture_broken,fixture_import_error"
        in r.stdout
    )


@pytest.mark.parametrize(
    ("combo", "what", "expected"), CHECKS, ids=[f"{c}:{i}" for i, (c, _, _) in enumerate(CHECKS)]
)
def test_check(venvs: Venvs, combo: str, what: str | list[str], expected: str) -> None:
    r = venvs.command(combo, *what) if isinstance(what, list) else venvs.python(combo, what)
    assert r.returncode == 0, f"stdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    assert re.search(expected, r.stdout, re.MULTILINE), r.stdout
