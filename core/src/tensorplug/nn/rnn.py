"""The recurrent layers ``RNN``, ``LSTM`` and ``GRU`` and their cells, with PyTorch's
arguments, defaults, initialization, gate layout and parameter names (a PyTorch ``state_dict``
loads and gives the same outputs).

Note [Recurrent time loop]
~~~~~~~~~~~~~~~~~~~~~~~~~~
A layer makes the input's contribution to the gates for every time step at once, one matrix
product over ``(T, B, I)`` (or over a packed sequence's ``data``), split into steps by one
``unbind`` (``split`` when packed). Each step then costs the hidden state's product (``addmm``,
with ``bias_hh``) and one fused cell (``_thnn_fused_lstm_cell`` / ``_thnn_fused_gru_cell``, Note
[Fused recurrent cells] in array_backend/_nn/_rnn.py), plus the projection's product for an
LSTM with ``proj_size``: two or three dispatches a step, whatever the number of gates (the
plain RNN's step is ``addmm``, ``add`` and the nonlinearity). The step outputs are stacked once
at the end. A packed sequence runs the same loop on shrinking batches (the sequences are sorted
longest first): forward in time, the rows of sequences that have ended leave the state and are
kept as their final hidden state; backward in time, the rows of sequences that start join the
state with their initial values.

An LSTM or GRU layer without ``proj_size`` and outside autocast skips that loop, on unpacked
and packed input alike: each direction is one ``mkldnn_rnn_layer`` (given a packed sequence's
batch sizes), which runs the time loop inside its kernel and has a backward of its own (Note
[Fused recurrent layer] in array_backend/_nn/_rnn_layer.py), so autograd records one node per
layer and direction instead of two per step. ``proj_size`` keeps the loop: PyTorch's
``mkldnn_rnn_layer`` schema has no projection weight (oneDNN's LSTM has none either).
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

import tensorplug

from .. import dtypes as _dtypes
from ..ops import ops
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_tp: Any = tensorplug
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _autocast_on() -> bool:
    enabled = getattr(_tp, "is_autocast_enabled", None)
    return enabled is not None and (enabled("cpu") or enabled("cuda"))


def _lstm_step(gates: Tensor, h: Tensor, c: Tensor, w: tuple[Any, ...]) -> tuple[Tensor, Tensor]:
    hg = F.linear(h, w[1], w[3])
    hy, cy, _ = ops.aten._thnn_fused_lstm_cell.default(gates, hg, c)
    if w[4] is not None:
        hy = F.linear(hy, w[4])
    return hy, cy


def _gru_step(gates: Tensor, h: Tensor, c: Any, w: tuple[Any, ...]) -> tuple[Tensor, Any]:
    hy, _ = ops.aten._thnn_fused_gru_cell.default(gates, F.linear(h, w[1], w[3]), h)
    return hy, None


def _tanh_step(gates: Tensor, h: Tensor, c: Any, w: tuple[Any, ...]) -> tuple[Tensor, Any]:
    return _tp.tanh(gates + F.linear(h, w[1], w[3])), None


def _relu_step(gates: Tensor, h: Tensor, c: Any, w: tuple[Any, ...]) -> tuple[Tensor, Any]:
    return _tp.relu(gates + F.linear(h, w[1], w[3])), None


_STEPS = {"LSTM": _lstm_step, "GRU": _gru_step, "RNN_TANH": _tanh_step, "RNN_RELU": _relu_step}


_LAYER_MODES = {"LSTM": 2, "GRU": 3}  # mkldnn_rnn_layer's numbering


def _fused_layer(
    mode: str, x: Tensor, h0: Tensor, c0: Tensor | None, w: tuple[Any, ...], reverse: bool,
    sizes: list[int] | None, layer: Any,
) -> tuple[Tensor, Tensor, Tensor | None]:  # fmt: skip
    """One direction of one LSTM or GRU layer as one ``mkldnn_rnn_layer`` (Note [Fused
    recurrent layer] in array_backend/_nn/_rnn_layer.py), on time-major ``x`` or a packed
    sequence's data with its batch ``sizes``; the GRU passes ``h0`` as its cell state, which
    the kernel returns unchanged."""
    has_biases = w[2] is not None
    # a layer without biases passes empty ones, which the kernel does not read
    b_ih, b_hh = (w[2], w[3]) if has_biases else (x.new_empty([0]), x.new_empty([0]))
    out, h, c, _ = ops.aten.mkldnn_rnn_layer.default(
        x, w[0], w[1], b_ih, b_hh, h0, h0 if c0 is None else c0, reverse, sizes or [],
        _LAYER_MODES[mode], w[1].shape[1], layer.num_layers, has_biases, layer.bidirectional,
        False, layer.training,
    )  # fmt: skip
    return out, h, (c if mode == "LSTM" else None)


def _run_direction(
    mode: str,
    x: Tensor,
    h0: Tensor,
    c0: Tensor | None,
    w: tuple[Any, ...],
    reverse: bool,
    sizes: list[int] | None,
    layer: Any = None,
) -> tuple[Tensor, Tensor, Tensor | None]:
    """One direction of one layer (Note [Recurrent time loop]): the outputs, ``(T, B, H)`` or
    packed ``(N, H)``, and the final hidden (and cell) state."""
    if mode in _LAYER_MODES and w[4] is None and not _autocast_on():
        return _fused_layer(mode, x, h0, c0, w, reverse, sizes, layer)
    step = _STEPS[mode]
    if sizes is None:  # one 2-D product (addmm) for all steps: a 3-D matmul is slower
        T_, B_ = x.shape[0], x.shape[1]
        gates = F.linear(x.reshape([T_ * B_, x.shape[2]]), w[0], w[2])
        steps = gates.reshape([T_, B_, gates.shape[1]]).unbind(0)
    else:
        steps = F.linear(x, w[0], w[2]).split(sizes)
    T = len(steps)
    outs: list[Any] = [None] * T
    h, c = h0, c0
    if sizes is None:
        for t in range(T - 1, -1, -1) if reverse else range(T):
            h, c = step(steps[t], h, c, w)
            outs[t] = h
        return _tp.stack(outs), h, c
    if reverse:  # sequences join the state as their first (last in time) step comes
        h, c = h0[: sizes[-1]], None if c0 is None else c0[: sizes[-1]]
        for t in range(T - 1, -1, -1):
            n, have = sizes[t], h.shape[0]
            if n > have:
                h = _tp.cat([h, h0[have:n]])
                c = None if c is None or c0 is None else _tp.cat([c, c0[have:n]])
            h, c = step(steps[t], h, c, w)
            outs[t] = h
        return _tp.cat(outs), h, c
    done_h: list[Tensor] = []
    done_c: list[Tensor] = []
    for t in range(T):
        n = sizes[t]
        if n < h.shape[0]:  # the sequences past row n have ended: their state is final
            done_h.append(h[n:])
            h = h[:n]
            if c is not None:
                done_c.append(c[n:])
                c = c[:n]
        h, c = step(steps[t], h, c, w)
        outs[t] = h
    done_h.append(h)
    h_n = _tp.cat(done_h[::-1]) if len(done_h) > 1 else h
    c_n = None
    if c is not None:
        done_c.append(c)
        c_n = _tp.cat(done_c[::-1]) if len(done_c) > 1 else c
    return _tp.cat(outs), h_n, c_n


class RNNBase(Module):
    """What ``RNN``, ``LSTM`` and ``GRU`` share: the parameters of every layer and direction
    (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``,
    ``weight_hr_l{k}`` with ``proj_size``, ``_reverse`` for the backward direction), drawn
    from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), and the time loop."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__()
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(
                f"batch_first should be of type bool, got: {type(batch_first).__name__}"
            )
        if not isinstance(input_size, int):
            raise TypeError(f"input_size should be of type int, got: {type(input_size).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []

        def new(*shape: int) -> Parameter:
            return Parameter(_tp.empty(list(shape), dtype=dtype, device=device))

        for layer in range(num_layers):
            for direction in range(directions):
                layer_input = input_size if layer == 0 else real_hidden * directions
                sfx = f"l{layer}" + ("_reverse" if direction == 1 else "")
                params = [
                    (f"weight_ih_{sfx}", new(gate_size, layer_input)),
                    (f"weight_hh_{sfx}", new(gate_size, real_hidden)),
                ]
                if bias:
                    params += [
                        (f"bias_ih_{sfx}", new(gate_size)),
                        (f"bias_hh_{sfx}", new(gate_size)),
                    ]
                if proj_size > 0:
                    params.append((f"weight_hr_{sfx}", new(proj_size, hidden_size)))
                for name, p in params:
                    setattr(self, name, p)
                names = [name for name, _ in params]
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Any]:
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """Nothing to do: the parameters are separate tensors and stay so (PyTorch packs them
        into one buffer for cuDNN)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # --- checks (PyTorch's messages) ---------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Any) -> None:
        w = self._flat_weights[0]
        if input.dtype != w.dtype and not _autocast_on():
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. Expected "
                f"{self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * directions, mini_batch, size)

    def check_hidden_size(
        self,
        hx: Tensor,
        expected_hidden_size: tuple[int, int, int],
        msg: str = "Expected hidden size {}, got {}",
    ) -> None:
        if tuple(hx.shape) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # --- the layers ----------------------------------------------------------------------------

    def _weights(self, layer: int, direction: int) -> tuple[Any, ...]:
        sfx = f"l{layer}" + ("_reverse" if direction == 1 else "")
        return (
            getattr(self, f"weight_ih_{sfx}"),
            getattr(self, f"weight_hh_{sfx}"),
            getattr(self, f"bias_ih_{sfx}") if self.bias else None,
            getattr(self, f"bias_hh_{sfx}") if self.bias else None,
            getattr(self, f"weight_hr_{sfx}") if self.proj_size > 0 else None,
        )

    def _run(
        self, x: Tensor, h0: Tensor, c0: Tensor | None, sizes: list[int] | None
    ) -> tuple[Tensor, Tensor, Tensor | None]:
        """The stacked layers on time-major ``x`` (or packed data with ``sizes``): the last
        layer's outputs and every layer's final states, ``(layers * directions, B, H)``."""
        directions = 2 if self.bidirectional else 1
        hs: list[Tensor] = []
        cs: list[Tensor] = []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            outs = []
            for d in range(directions):
                k = layer * directions + d
                out, h, c = _run_direction(
                    self.mode,
                    x,
                    h0[k],
                    None if c0 is None else c0[k],
                    self._weights(layer, d),
                    d == 1,
                    sizes,
                    self,
                )
                outs.append(out)
                hs.append(h)
                if c is not None:
                    cs.append(c)
            x = outs[0] if directions == 1 else _tp.cat(outs, -1)
        return x, _tp.stack(hs), (_tp.stack(cs) if cs else None)

    def _prepare(self, input: Any, hx: Any, name: str, lstm: bool) -> Any:
        """The input as time-major data, the batch sizes of a packed one, whether it is
        batched, its permutations and the initial states (PyTorch's checks and defaults)."""
        directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        sizes = sorted_idx = unsorted_idx = None
        batched = True
        if isinstance(input, PackedSequence):
            x, batch_sizes, sorted_idx, unsorted_idx = input
            sizes = [int(v) for v in batch_sizes.tolist()]
            max_batch = sizes[0]
        else:
            if input.dim() not in (2, 3):
                tail = " tensor" if name == "RNN" else ""
                raise ValueError(
                    f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead"
                )
            batched = input.dim() == 3
            batch_dim = 0 if self.batch_first else 1
            if not batched:
                input = input.unsqueeze(batch_dim)
            x = input
            batch_sizes = None
            max_batch = input.size(batch_dim)
            if hx is not None:
                want = 3 if batched else 2
                kind = "batched 3-D" if batched else "unbatched 2-D"
                if lstm and (hx[0].dim() != want or hx[1].dim() != want):
                    raise RuntimeError(
                        f"For {kind} input, hx and cx should also be {want}-D but got "
                        f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                    )
                if not lstm and hx.dim() != want:
                    raise RuntimeError(
                        f"For {kind} input, hx should also be {want}-D but got {hx.dim()}-D tensor"
                    )
                if not batched:
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1)) if lstm else hx.unsqueeze(1)
        if hx is None:
            shape = [self.num_layers * directions, max_batch, real_hidden]
            h0 = _tp.zeros(shape, dtype=x.dtype, device=x.device)
            if lstm:
                shape[2] = self.hidden_size
                hx = (h0, _tp.zeros(shape, dtype=x.dtype, device=x.device))
            else:
                hx = h0
        elif sizes is not None:
            hx = self.permute_hidden(hx, sorted_idx)
        self.check_forward_args(x, hx, batch_sizes)
        if sizes is None and self.batch_first:
            x = x.transpose(0, 1)
        return x, sizes, batched, sorted_idx, unsorted_idx, hx

    def _finish(self, input: Any, out: Tensor, batched: bool, unsorted_idx: Any) -> Any:
        if isinstance(input, PackedSequence):
            return PackedSequence(out, input.batch_sizes, input.sorted_indices, unsorted_idx)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not batched:
            out = out.squeeze(0 if self.batch_first else 1)
        return out


class RNN(RNNBase):
    """An Elman RNN, ``h_t = nonlinearity(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` with
    ``nonlinearity`` ``"tanh"`` (the default) or ``"relu"``; takes PyTorch's arguments
    (``input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False``), positionally or by keyword."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self_nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self_nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self_nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self_nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(
                f"Unknown nonlinearity '{self_nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nonlinearity

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        x, sizes, batched, _, unsorted, h0 = self._prepare(input, hx, "RNN", False)
        out, h_n, _ = self._run(x, h0, None, sizes)
        h_n = self.permute_hidden(h_n, unsorted)
        if not batched:
            h_n = h_n.squeeze(1)
        return self._finish(input, out, batched, unsorted), h_n


class LSTM(RNNBase):
    """A long short-term memory layer: gates ``i, f, g, o`` (in that order in the weights),
    ``c_t = f * c_{t-1} + i * g``, ``h_t = o * tanh(c_t)``, projected by ``weight_hr`` when
    ``proj_size > 0``; ``forward(input, (h_0, c_0))`` returns ``output, (h_n, c_n)``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:
        layers, batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return (layers, batch, self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input: Any, hx: Any = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        x, sizes, batched, _, unsorted, (h0, c0) = self._prepare(input, hx, "LSTM", True)
        out, h_n, c_n = self._run(x, h0, c0, sizes)
        assert c_n is not None
        h_n, c_n = self.permute_hidden((h_n, c_n), unsorted)
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._finish(input, out, batched, unsorted), (h_n, c_n)


class GRU(RNNBase):
    """A gated recurrent unit layer: gates ``r, z, n`` (in that order in the weights),
    ``n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn))``, ``h_t = (1 - z) * n + z * h_{t-1}``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        x, sizes, batched, _, unsorted, h0 = self._prepare(input, hx, "GRU", False)
        out, h_n, _ = self._run(x, h0, None, sizes)
        h_n = self.permute_hidden(h_n, unsorted)
        if not batched:
            h_n = h_n.squeeze(1)
        return self._finish(input, out, batched, unsorted), h_n


# --- cells ------------------------------------------------------------------------------------


class RNNCellBase(Module):
    """What the cells share: ``weight_ih`` ``(chunks * hidden, input)``, ``weight_hh``
    ``(chunks * hidden, hidden)``, ``bias_ih`` and ``bias_hh``, drawn from
    U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool,
        num_chunks: int,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        kw = {"dtype": dtype, "device": device}
        self.weight_ih = Parameter(_tp.empty([num_chunks * hidden_size, input_size], **kw))
        self.weight_hh = Parameter(_tp.empty([num_chunks * hidden_size, hidden_size], **kw))
        if bias:
            self.bias_ih = Parameter(_tp.empty([num_chunks * hidden_size], **kw))
            self.bias_hh = Parameter(_tp.empty([num_chunks * hidden_size], **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = self.__dict__.get("nonlinearity", "tanh")
        if nonlinearity != "tanh":
            s += f", nonlinearity={nonlinearity}"
        return s

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _start(self, name: str, input: Tensor, hx: Any, what: str) -> tuple[Tensor, bool]:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}"
            )
        return input, batched

    def _check_state(self, input: Tensor, h: Tensor, name: str, size: int) -> None:
        if input.size(0) != h.size(0):
            raise RuntimeError(
                f"Input batch size {input.size(0)} doesn't match {name} batch size {h.size(0)}"
            )
        if h.size(1) != size:
            raise RuntimeError(
                f"{name} has inconsistent hidden_size: got {h.size(1)}, expected {size}"
            )

    def _gates(self, input: Tensor, h: Tensor) -> tuple[Tensor, Tensor]:
        return (
            F.linear(input, self.weight_ih, self.bias_ih),
            F.linear(h, self.weight_hh, self.bias_hh),
        )


def _state(h: Tensor | None, input: Tensor, hidden: int, batched: bool, what: str) -> Tensor:
    if h is None:
        zeros: Tensor = _tp.zeros([input.size(0), hidden], dtype=input.dtype, device=input.device)
        return zeros
    return h if batched else h.unsqueeze(0)


class RNNCell(RNNCellBase):
    """One step of an Elman RNN, ``h' = nonlinearity(x W_ih^T + b_ih + h W_hh^T + b_hh)``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, batched = self._start("RNNCell", input, hx, "hidden")
        h = _state(hx, input, self.hidden_size, batched, "hidden")
        self._check_state(input, h, "hidden0", self.hidden_size)
        gi, gh = self._gates(input, h)
        out: Tensor
        if self.nonlinearity == "tanh":
            out = _tp.tanh(gi + gh)
        elif self.nonlinearity == "relu":
            out = _tp.relu(gi + gh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates ``i, f, g, o``); ``forward(input, (h, c))`` returns ``(h', c')``."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(
                        f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got {value.dim()}D instead"
                    )
        input, batched = self._start("LSTMCell", input, hx, "hx")
        h = _state(None if hx is None else hx[0], input, self.hidden_size, batched, "hx")
        c = _state(None if hx is None else hx[1], input, self.hidden_size, batched, "cx")
        self._check_state(input, h, "hidden0", self.hidden_size)
        self._check_state(input, c, "hidden1", self.hidden_size)
        gi, gh = self._gates(input, h)
        hy, cy, _ = ops.aten._thnn_fused_lstm_cell.default(gi, gh, c)
        return (hy, cy) if batched else (hy.squeeze(0), cy.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates ``r, z, n``, PyTorch's ``n``: the reset gate scales
    ``h W_hn^T + b_hn``)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        device: Any = None,
        dtype: _dtypes.dtype | None = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        input, batched = self._start("GRUCell", input, hx, "hidden")
        h = _state(hx, input, self.hidden_size, batched, "hidden")
        self._check_state(input, h, "hidden0", self.hidden_size)
        gi, gh = self._gates(input, h)
        hy: Tensor = ops.aten._thnn_fused_gru_cell.default(gi, gh, h)[0]
        return hy if batched else hy.squeeze(0)
