"""``LBFGS``: limited-memory BFGS over all parameters as one flat vector, with an optional
strong-Wolfe line search (PyTorch's ``torch.optim.LBFGS``, after Nocedal and Wright, and
minFunc's ``lbfgs`` and ``WolfeLineSearch``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..nn._autograd import enable_grad, no_grad
from ..ops import ops
from ..tensor import Tensor
from .optimizer import Optimizer, ParamsT

__all__ = ["LBFGS"]

_aten = ops.aten


def _f(t: Any) -> float:
    return float(_aten._local_scalar_dense.default(t)) if isinstance(t, Tensor) else float(t)


def _dot(a: Tensor, b: Tensor) -> float:
    return _f(_aten.dot.default(a, b))


def _absmax(t: Tensor) -> float:
    return _f(_aten.max.default(_aten.abs.default(t)))


def _cubic_interpolate(
    x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
    bounds: tuple[float, float] | None = None,
) -> float:  # fmt: skip
    """The minimizer of the cubic through (x1, f1, g1) and (x2, f2, g2), within ``bounds``."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square**0.5
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return float(min(max(min_pos, xmin_bound), xmax_bound))
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(
    obj_func: Callable[[Any, float, Tensor], tuple[float, Tensor]], x: Any, t: float,
    d: Tensor, f: float, g: Tensor, gtd: float, c1: float = 1e-4, c2: float = 0.9,
    tolerance_change: float = 1e-9, max_ls: int = 25,
) -> tuple[float, Tensor, float, int]:  # fmt: skip
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions: bracket, then zoom."""
    d_norm = _absmax(d)
    g = _aten.clone.default(g)
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[Tensor] = []
    bracket_gtd: list[float] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, _aten.clone.default(g_new)], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, _aten.clone.default(g_new)], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(
            t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step)
        )
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, _aten.clone.default(g_new), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # the interpolation must make progress: not too close to the bracket's ends
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = _aten.clone.default(g_new), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = _aten.clone.default(g_new), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


class LBFGS(Optimizer):
    """PyTorch's ``torch.optim.LBFGS``. ``step(closure)`` needs ``closure``, which recomputes
    the loss (and its gradients: ``zero_grad(); loss.backward()``) and returns it; one step runs
    up to ``max_iter`` iterations and ``max_eval`` closure calls. ``line_search_fn`` is None (a
    fixed step ``lr``) or ``"strong_wolfe"``. One parameter group only. The state (of the first
    parameter, as in PyTorch) holds ``func_evals``, ``n_iter``, the direction ``d``, the step
    ``t``, the history ``old_dirs`` / ``old_stps`` / ``ro``, ``H_diag``, ``prev_flat_grad``
    and ``prev_loss``; the scalars are Python floats (PyTorch keeps some in 0-dim tensors, which
    load as well)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float | Tensor = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = {
            "lr": lr, "max_iter": max_iter, "max_eval": max_eval,
            "tolerance_grad": tolerance_grad, "tolerance_change": tolerance_change,
            "history_size": history_size, "line_search_fn": line_search_fn,
        }  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> Tensor:
        views = []
        for p in self._params:
            g = getattr(p, "grad", None)
            if g is None:
                views.append(_aten.zeros.default([p.numel()], dtype=p.dtype, device=p.device))
            else:
                views.append(_aten.reshape.default(g, [-1]))
        flat: Tensor = _aten.cat.default(views, 0)
        return flat

    def _add_grad(self, step_size: float, update: Tensor) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            piece = _aten.reshape.default(
                _aten.slice.Tensor(update, 0, offset, offset + n), p.shape
            )
            _aten.add_.Tensor(p, piece, alpha=step_size)
            offset += n

    def _directional_evaluate(
        self, closure: Callable[[], Any], x: list[Tensor], t: float, d: Tensor
    ) -> tuple[float, Tensor]:
        self._add_grad(t, d)
        with enable_grad():
            loss = _f(closure())
        flat_grad = self._gather_flat_grad()
        for p, saved in zip(self._params, x, strict=True):
            _aten.copy_.default(p, saved)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:
        """One L-BFGS step (up to ``max_iter`` iterations); returns the first loss."""
        if closure is None:
            raise RuntimeError("LBFGS.step() needs a closure that recomputes the loss")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        a = _aten
        group = self.param_groups[0]
        lr = _f(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            orig_loss = closure()
        loss = _f(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if _absmax(flat_grad) <= tolerance_grad:
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = a.neg.default(flat_grad)
                old_dirs, old_stps, ro = [], [], []
                h_diag = 1.0
            else:
                assert d is not None and t is not None and prev_flat_grad is not None
                assert old_dirs is not None and old_stps is not None and ro is not None
                y = a.sub.Tensor(flat_grad, prev_flat_grad)
                s = a.mul.Scalar(d, _f(t))
                ys = _dot(y, s)
                if ys > 1e-10:  # the curvature condition: update the history
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                num_old = len(old_dirs)
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = a.neg.default(flat_grad)  # the two-loop recursion
                for i in range(num_old - 1, -1, -1):
                    al[i] = _dot(old_stps[i], q) * _f(ro[i])
                    a.add_.Tensor(q, old_dirs[i], alpha=-al[i])
                d = r = a.mul.Scalar(q, _f(h_diag))
                for i in range(num_old):
                    be_i = _dot(old_dirs[i], r) * _f(ro[i])
                    a.add_.Tensor(r, old_stps[i], alpha=_f(al[i]) - be_i)
            if prev_flat_grad is None:
                prev_flat_grad = a.clone.default(flat_grad)
            else:
                a.copy_.default(prev_flat_grad, flat_grad)
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / _f(a.sum.default(a.abs.default(flat_grad)))) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:  # the directional derivative is below tolerance
                break
            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = [a.clone.default(p) for p in self._params]

                def obj_func(x: Any, t: float, d: Tensor) -> tuple[float, Tensor]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals
                )
                self._add_grad(t, d)
                opt_cond = _absmax(flat_grad) <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = _f(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = _absmax(flat_grad) <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if _absmax(a.mul.Scalar(d, t)) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break
        state["d"], state["t"] = d, t
        state["old_dirs"], state["old_stps"], state["ro"] = old_dirs, old_stps, ro
        state["H_diag"], state["prev_flat_grad"] = h_diag, prev_flat_grad
        state["prev_loss"] = prev_loss
        return orig_loss
