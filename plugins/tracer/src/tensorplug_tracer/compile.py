"""``tp.compile(fn)``: trace on the first call, then run the lowered graph while guards hold.

Note [Compile guards]
~~~~~~~~~~~~~~~~~~~~~
A graph is valid for calls like the one it was traced from. Each call computes a key: the
structure of ``(args, kwargs)`` (optree), per tensor leaf its shape, dtype, device,
``requires_grad`` and key set, each other leaf itself, the thread's dispatch masks (grad mode, autocast,
included keys) and the default dtype and device. A key seen before runs its lowered graph;
a new key traces again (the call runs eagerly, under the tracer) and keeps the new graph, up to
``cache_size`` graphs (the least recently used goes first). Tensors the function closed over
are constants held by reference: each entry also checks that they still have the shape, dtype,
device, ``requires_grad`` and key set they were traced with.

The lowered graph calls the kernels the dispatch table chose at trace time; they stay right
while ``tp.dispatcher.generation()`` is unchanged, which each call checks. When it changed (a
Library was opened or closed, a plugin registered or unregistered), every entry asks the table
again for each kernel it bound and each composite it decomposed, and is dropped if any answer
differs: a registration the graph used changed, so the next call traces again.

A function that reads tensor values into Python while traced (``.item()``, ``bool(t)``...)
cannot be lowered: its graph would hold the values of the first call. Such a key runs eagerly,
and the first time that happens ``tp.compile`` says so once with a ``TracerWarning``.
"""

from __future__ import annotations

import functools
import sys
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, cast

import tensorplug as tp
from tensorplug.dispatch import local_state, state_read
from tensorplug.tensor import Tensor

from . import _optree as optree
from . import codegen, passes, recorder
from .codegen import MISS
from .graph import Graph, TensorMeta, Value
from .recorder import M, TracerWarning

__all__ = ["CompileError", "CompiledFunction", "OptimizedModule", "ReplayPlans", "compile"]


class CompileError(RuntimeError):
    """``tp.compile(fn, fullgraph=True)``: ``fn`` cannot run as one graph (it reads tensor
    values into Python, or its graph changes at every call)."""


def _meta(t: Any) -> tuple[Any, ...]:
    return (t.shape, t.dtype, t.device, t.requires_grad, t.tp_keyset)


class _Entry:
    """One cached graph and its lowered form."""

    __slots__ = ("graph", "run", "bound", "decomposed", "unflatten", "eager", "plain", "nargs")

    def __init__(self) -> None:
        self.graph: Graph | None = None
        self.run: Callable[..., Any] | None = None  # the guarded lowered function
        self.bound: list[tuple[Any, int, Any]] = []
        self.decomposed: set[tuple[Any, int]] = set()
        self.unflatten: Any = None  # the output structure, None for a single leaf
        self.eager = False
        self.plain = False  # traced from a call of positional tensors only: f(x, y)
        self.nargs = 0

    def still_valid(self) -> bool:
        """Whether every kernel and decomposition it relies on is what the table says now."""
        try:
            for op, ks, kernel in self.bound:
                if not _same_kernel(op.kernel_for(ks), kernel):
                    return False
        except (tp.DispatchError, tp.RegistrationError):
            return False
        return all(recorder.composite_entry(op, ks) for op, ks in self.decomposed)


def _same_kernel(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, functools.partial) and isinstance(b, functools.partial):
        return (
            a.func is b.func
            and len(a.args) == len(b.args)
            and all(x is y or x == y for x, y in zip(a.args, b.args, strict=True))
            and a.keywords == b.keywords
        )
    return False


def _guards(graph: Graph, state: tuple[Any, ...], gen: list[int], keysets: dict[Value, int],
            tuple_shaped: set[Value]) -> Callable[[Any], list[str]]:  # fmt: skip
    """The conditions the lowered function checks first (Note [Compile guards]);
    ``keysets``: the key set of each input and constant when traced; ``tuple_shaped``: those
    whose array's ``shape`` was a tuple (numpy, CuPy): their shape is read from the array
    (``t.tp_data.shape``, 0.03 us, where ``t.shape`` makes a tuple of it, 0.07 us)."""

    def build(names: Any) -> list[str]:
        ns = names.ns
        inc, nexc, ddtype, ddevice = state
        ns.update(_T=Tensor, _gen=tp.dispatcher.generation, _G=gen, _dd=tp.get_default_dtype,
                  _ddev=tp.get_default_device, _DD=ddtype, _DDEV=ddevice)  # fmt: skip
        conds = ["_gen() == _G[0]", f"_m.inc == {inc} and _m.nexc == {nexc}",
                 "_dd() is _DD", "(_ddev() is _DDEV or _ddev() == _DDEV)"]  # fmt: skip
        # the cheapest tests first; devices are compared by identity before equality (tensors
        # of one device usually share the object); a constant is a tensor by construction
        # the Python values the traced code said it depends on (an optimizer's
        # hyperparameters): read again, and compared with what they were
        for i, (read, value) in enumerate(graph.state_reads):
            ns[f"_PR{i}"], ns[f"_PV{i}"] = read, value
            conds.append(f"_PR{i}() == _PV{i}")
        for i, v in enumerate([*graph.inputs, *graph.constants]):
            n = names.of[v]
            m = v.meta
            ns[f"_S{i}"], ns[f"_D{i}"], ns[f"_V{i}"] = m.shape, m.dtype, m.device
            conds.append(
                ("" if v.kind == "constant" else f"isinstance({n}, _T) and ")
                + f"{n}.tp_keyset == {keysets[v]} and {n}.tp_dtype is _D{i} and "
                f"({n}.tp_device is _V{i} or {n}.tp_device == _V{i}) and "
                f"{n}{'.tp_data' if v in tuple_shaped else ''}.shape == _S{i}"
            )  # requires_grad is a function of the key set (the generation proves which)
        return conds

    return build


class CompiledFunction:
    """What ``tp.compile(fn)`` returns (Note [Compile guards])."""

    def __init__(
        self, fn: Callable[..., Any], cache_size: int = 8, fullgraph: bool = False
    ) -> None:
        if cache_size < 1:
            raise ValueError(f"tp.compile: cache_size must be at least 1, got {cache_size}")
        self.fn = fn
        self.cache_size = cache_size
        self.fullgraph = fullgraph
        self._cache: OrderedDict[Any, _Entry] = OrderedDict()
        self._gen = [tp.dispatcher.generation()]  # read by the guards of every entry
        self._last: _Entry | None = None
        self._pending: dict[Any, tuple[Any, int]] = {}  # key -> (last graph's signature, traces)
        self._warned = False
        self._confirm = True  # Note [Confirmed graphs]; ReplayPlans: no
        self.trace_count = 0
        self.evictions = 0
        functools.update_wrapper(self, fn)

    @property
    def graphs(self) -> list[Graph]:
        """The graphs in the cache, least recently used first."""
        return [e.graph for e in self._cache.values() if e.graph is not None]

    def reset(self) -> None:
        """Forget every graph: the next call traces again."""
        self._cache.clear()
        self._pending.clear()
        self._last = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        e = self._last
        if e is not None and e.plain and not kwargs and len(args) == e.nargs:
            assert e.run is not None
            r = e.run(*args)  # guarded (Note [Compile guards])
            if r is not MISS:
                return r if e.unflatten is None else optree.tree_unflatten(e.unflatten, r)
        return self._call(args, kwargs)

    def _call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        m = local_state.masks
        if m.inc & M.tracer:  # inside a trace: run eagerly, it records inline
            return self.fn(*args, **kwargs)
        gen = tp.dispatcher.generation()
        if gen != self._gen[0]:
            self._revalidate()
            self._gen[0] = gen
        state = (m.inc, m.nexc, tp.get_default_dtype(), tp.get_default_device())
        key, tensors, plain = _key(args, kwargs, state)
        entry = self._cache.get(key)
        if entry is None:
            return self._trace(key, args, kwargs, state, plain, tensors)
        if entry.eager:
            return self.fn(*args, **kwargs)
        assert entry.run is not None
        r = entry.run(*tensors)
        if r is MISS:  # a constant changed: trace again
            del self._cache[key]
            self._last = None
            return self._trace(key, args, kwargs, state, plain, tensors)
        self._cache.move_to_end(key)
        self._last = entry
        return r if entry.unflatten is None else optree.tree_unflatten(entry.unflatten, r)

    def _revalidate(self) -> None:
        for key in [k for k, e in self._cache.items() if not e.eager and not e.still_valid()]:
            if self._cache[key] is self._last:
                self._last = None
            del self._cache[key]

    def _trace(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any], state: tuple[Any, ...],
               plain: bool, tensors: list[Any]) -> Any:  # fmt: skip
        gen = tp.dispatcher.generation()
        in_keysets = [t.tp_keyset for t in tensors]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", TracerWarning)
            graph, out, decomposed = recorder.record_trace(self.fn, args, kwargs, decompose=True)
        self.trace_count += 1
        if tp.dispatcher.generation() != gen:  # tracing registered something: keep nothing
            return out
        entry = _Entry()
        entry.graph = graph
        previous = self._pending.pop(key, None)
        sig = signature(graph)
        why = ""
        if graph.data_reads:
            why = f"reads tensor values into Python (at {', '.join(graph.data_reads)})"
        elif not self._confirm:  # a replay plan: no Python state to confirm
            if codegen.autograd_nodes(graph):
                why = "records autograd history"
        elif previous is None or previous[0] != sig:
            tries = 1 if previous is None else previous[1] + 1
            if tries < _CONFIRM_TRIES:  # Note [Confirmed graphs]: trace the next call too
                self._pending[key] = (sig, tries)
                return out
            why = f"records a different graph at each of {tries} calls (it keeps state in Python)"
        if why and self.fullgraph:
            raise CompileError(
                f"tp.compile({getattr(self.fn, '__qualname__', self.fn)!r}, fullgraph=True): the "
                f"function {why}, so it cannot run as one graph; without fullgraph=True it would "
                "run eagerly for calls like this one"
            )
        if why:
            entry.eager = True
            if self._confirm and not self._warned:
                self._warned = True
                warnings.warn(
                    f"tp.compile({getattr(self.fn, '__qualname__', self.fn)!r}): the function "
                    f"{why}, so a graph of one call would be wrong for the next; it runs eagerly "
                    "for calls like this one",
                    TracerWarning,
                    stacklevel=4,
                )
        else:
            if not codegen.autograd_nodes(graph):
                passes.fold_transposes(graph)
                passes.drop_copies(graph)
                passes.fuse_addmm(graph)
            graph.eliminate_dead_code()
            keysets = dict(zip(graph.inputs, in_keysets, strict=True))
            keysets.update((c, c.tensor.tp_keyset) for c in graph.constants)
            held = [*zip(graph.inputs, tensors, strict=True)]
            held += [(c, c.tensor) for c in graph.constants]
            tuple_shaped = {v for v, t in held if type(t.tp_data.shape) is tuple}
            entry.run, entry.bound = codegen.lowered_function(
                graph, _guards(graph, state, self._gen, keysets, tuple_shaped)
            )
            entry.decomposed = decomposed
            entry.unflatten = None if optree.treespec_is_leaf(graph.out_spec) else graph.out_spec
            entry.plain = plain
            entry.nargs = len(args)
            self._last = entry
        self._store(key, entry)
        return out

    def _store(self, key: Any, entry: _Entry) -> None:
        self._cache[key] = entry
        while len(self._cache) > self.cache_size:
            _, old = self._cache.popitem(last=False)
            if old is self._last:
                self._last = None
            self.evictions += 1

    def __repr__(self) -> str:
        return f"<tp.compile of {getattr(self.fn, '__qualname__', self.fn)!r}: {len(self._cache)} graphs>"


class ReplayPlans(CompiledFunction):
    """The lowered plans of a graph's replay (Note [Replay plans] in replay.py): ``fn`` is
    the replay through the dispatcher, run under the tracer once per new call key with
    composites decomposed, and lowered when nothing in it needs dispatch at run time."""

    def __init__(self, fn: Callable[..., Any], constants: list[Any], cache_size: int = 8) -> None:
        super().__init__(fn, cache_size)
        self._confirm = False
        self.constants = constants  # the graph's constant tensors

    def plannable(self, tensors: list[Any], state: tuple[Any, ...]) -> bool:
        """Whether a call in ``state`` with these tensor leaves may run a lowered plan: the
        thread's masks are a fresh thread's (grad mode aside: no vmap, autocast region, or
        other included key), every tensor carries backend and autograd keys only, and no
        autograd history would be recorded."""
        inc, nexc = state[0], state[1]
        base = tp.dispatch.Masks()
        if inc != base.inc or (nexc | M.strip) != (base.nexc | M.strip):
            return False
        allowed = tp.keys.plain_mask() | M.strip
        grad_on = nexc & M.ag
        for t in [*tensors, *self.constants]:
            if t.tp_keyset & ~allowed or (grad_on and t.requires_grad):
                return False
        return True

    def _trace(self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any], state: tuple[Any, ...],
               plain: bool, tensors: list[Any]) -> Any:  # fmt: skip
        if self.plannable(tensors, state):
            return super()._trace(key, args, kwargs, state, plain, tensors)
        entry = _Entry()
        entry.eager = True
        self._store(key, entry)
        return self.fn(*args, **kwargs)


# Note [Confirmed graphs]
# ~~~~~~~~~~~~~~~~~~~~~~~
# A graph records what a call did to tensors; what the function did to Python objects is not in
# it. An optimizer that creates its momentum buffers on the first step, or the autograd engine
# keeping the ones it seeds a backward pass with, makes the first call's graph differ from every
# later one. So a graph is lowered only when two consecutive calls with the same key trace the
# same graph (same operators, arguments, constants by identity, wiring and effects): until then
# calls run eagerly under the tracer. A function whose graph keeps changing (a Python step count
# in its arithmetic) runs eagerly after _CONFIRM_TRIES traces, with one warning.
_CONFIRM_TRIES = 4


def signature(graph: Graph) -> tuple[Any, ...]:
    """What must agree between two traces for their graphs to be the same program."""
    index: dict[Value, int] = {}
    for v in [*graph.inputs, *graph.grads]:
        index[v] = len(index)

    def enc(x: Any) -> Any:
        if isinstance(x, Value):
            if x.kind == "constant":
                return ("c", id(x.tensor), x.meta)
            return ("v", index.get(x, -1))
        if isinstance(x, list | tuple):
            return (type(x).__name__, tuple(enc(e) for e in x))
        return ("k", type(x).__name__, _hashable(x))

    parts: list[Any] = [graph.in_spec, tuple(v.meta for v in graph.inputs)]
    for n in graph.nodes:
        parts.append((n.op.name, enc(n.args), enc(tuple(n.kwargs.items())), n.excluded))
        for o in n.outputs:
            if isinstance(o, Value):
                index[o] = len(index)
    parts.append((graph.out_spec, enc(graph.out_leaves)))
    parts.append(tuple((e.what, enc(e.target), enc(e.value)) for e in graph.effects))
    parts.append(tuple(_hashable(value) for _, value in graph.state_reads))
    return tuple(parts)


def _key(
    args: tuple[Any, ...], kwargs: dict[str, Any], state: tuple[Any, ...]
) -> tuple[Any, list[Any], bool]:
    """The cache key of a call, its tensor leaves, and whether it is positional tensors only."""
    if not kwargs:
        for a in args:
            if type(a) is not Tensor:
                break
        else:  # the common call: tensors only
            return (len(args), tuple(map(_meta, args)), state), list(args), True
    leaves, spec = optree.tree_flatten(cast(Any, (args, kwargs)))
    parts = []
    tensors = []
    for x in leaves:
        if isinstance(x, Tensor):
            parts.append(_meta(x))
            tensors.append(x)
        else:
            parts.append((type(x), _hashable(x)))
    return (spec, tuple(parts), state), tensors, False


def _hashable(x: Any) -> Any:
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _optimized_module_class() -> Any:
    """``OptimizedModule``, made on first use: ``tensorplug.nn`` is imported only by those who
    use it (tests/nn/test_modules.py), and this module loads with the plugin."""
    global OptimizedModule
    if OptimizedModule is not None:
        return OptimizedModule
    from tensorplug.nn import Module

    class _OptimizedModule(Module):
        """What ``tp.compile(module)`` returns, as ``torch.compile(module)`` does: a Module whose
        one child is the original, ``_orig_mod``, so ``parameters()``, ``state_dict()`` (keys
        prefixed ``_orig_mod.``), ``load_state_dict()``, ``train()``/``eval()``, ``to()`` and the
        hooks reach it; attributes it does not have are read from and written to the original.
        Calling it runs the original's ``__call__`` (its hooks and ``forward``) through a
        :class:`CompiledFunction`, whose graphs are also guarded on the ``training`` flag of every
        module in the tree (a state read, Note [Python state reads]), so ``eval()`` after a
        training call traces again rather than running the training graph (dropout, batch norm)."""

        _own = frozenset({"_orig_mod", "_compiled", "training"})
        _compiled: CompiledFunction

        def __init__(self, mod: Any, cache_size: int = 8, fullgraph: bool = False) -> None:
            super().__init__()
            self._orig_mod = mod
            object.__setattr__(
                self, "_compiled", CompiledFunction(self._run, cache_size, fullgraph)
            )

        def _modes(self) -> tuple[bool, ...]:
            return tuple(m.training for m in self._orig_mod.modules())

        def _run(self, *args: Any, **kwargs: Any) -> Any:
            state_read(self._modes)
            return self._orig_mod(*args, **kwargs)

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            return self._compiled(*args, **kwargs)

        @property
        def graphs(self) -> list[Graph]:
            """The compiled forward's graphs (``CompiledFunction.graphs``)."""
            return self._compiled.graphs

        @property
        def trace_count(self) -> int:
            return self._compiled.trace_count

        def reset(self) -> None:
            """Forget every graph of the compiled forward: the next call traces again."""
            self._compiled.reset()

        def __getattr__(self, name: str) -> Any:
            modules = self.__dict__.get("_modules")
            if modules is None or "_orig_mod" not in modules:
                raise AttributeError(f"'OptimizedModule' object has no attribute '{name}'")
            if name == "_orig_mod":
                return modules["_orig_mod"]
            return getattr(modules["_orig_mod"], name)

        def __setattr__(self, name: str, value: Any) -> None:
            modules = self.__dict__.get("_modules")
            if modules is None or "_orig_mod" not in modules or name in self._own:
                super().__setattr__(name, value)
            else:
                setattr(modules["_orig_mod"], name, value)

    _OptimizedModule.__name__ = _OptimizedModule.__qualname__ = "OptimizedModule"
    OptimizedModule = _OptimizedModule
    return _OptimizedModule


OptimizedModule: Any = None  # the class, once _optimized_module_class made it


_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(  # noqa: A001
    fn: Callable[..., Any] | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: str = "inductor",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
    cache_size: int = 8,
) -> Any:
    """Compile ``fn``: trace it on the first call, then run the lowered graph while the guards
    hold (Note [Compile guards]). Also a decorator: ``@tp.compile`` or
    ``@tp.compile(fullgraph=True)``.

    ``torch.compile``'s arguments: ``fullgraph=True`` raises :class:`CompileError` where the
    function would run eagerly; ``disable=True`` returns ``fn`` itself. ``dynamic``,
    ``backend`` (a name), ``mode`` (one of PyTorch's) and ``options`` are checked as PyTorch
    checks them and change nothing: every graph is specialized to its shapes and lowered the
    same way (docs/tracer.md). ``cache_size`` bounds the graphs kept per function."""
    if mode is not None and options is not None:
        raise RuntimeError(
            "Either mode or options can be specified, but both can't be specified at the same time."
        )
    if mode is not None and mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
    if not isinstance(backend, str):
        raise NotImplementedError(
            "tp.compile: a backend must be a name (such as 'inductor', the default): a callable "
            "backend receives a torch.fx graph, which tensorplug does not make"
        )
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"tp.compile: options must be a dict, got {type(options).__name__}")
    if dynamic not in (None, True, False):
        raise TypeError(f"tp.compile: dynamic must be None, True or False, got {dynamic!r}")

    def make(f: Callable[..., Any]) -> Any:
        if disable:
            return f
        nn = sys.modules.get("tensorplug.nn")  # not imported: f is no Module
        if nn is not None and isinstance(f, nn.Module):
            return _optimized_module_class()(f, cache_size, fullgraph)
        return CompiledFunction(f, cache_size, fullgraph)

    return make if fn is None else make(fn)


__all__ += ["TensorMeta", "Value"]
