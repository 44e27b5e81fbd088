"""Variable-length sequences for the recurrent layers (``torch.nn.utils.rnn``).

A :class:`PackedSequence` holds a batch of sequences of different lengths without padding: the
steps of every sequence interleaved time step by time step (``data``, ``(sum(lengths), *)``),
longest sequence first, with ``batch_sizes[t]`` the number of sequences that have a step ``t``.
``sorted_indices`` gives the original batch position of each packed sequence (``None`` when the
input was already sorted by decreasing length), ``unsorted_indices`` its inverse.

Packing and unpacking are one gather each (``index_select`` of the rows a packed or padded layout
needs), so they are differentiable and cost a few dispatches whatever the batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

import tensorplug

from ...tensor import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_tp: Any = tensorplug


class PackedSequence(NamedTuple):
    """Packed steps of a batch of sequences (the module docstring); made by
    :func:`pack_padded_sequence` and :func:`pack_sequence`, never by hand."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data`` (and the index tensors, on a device change) moved as ``Tensor.to`` moves;
        ``batch_sizes`` stays on the CPU, as PyTorch keeps it."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        dev = data.device
        return PackedSequence(
            data,
            self.batch_sizes,
            None if self.sorted_indices is None else self.sorted_indices.to(dev),
            None if self.unsorted_indices is None else self.unsorted_indices.to(dev),
        )

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda")

    def double(self) -> PackedSequence:
        return self.to(dtype=_tp.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_tp.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_tp.float16)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation that undoes ``permutation`` (``None`` stays ``None``)."""
    if permutation is None:
        return None
    n = permutation.numel()
    out: Tensor = _tp.empty_like(permutation)
    return out.scatter_(0, permutation, _tp.arange(n, device=permutation.device))


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        if lengths.device.type != "cpu":
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.ndim}D {lengths.device} tensor"
            )
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _packed_rows(lengths: Sequence[int], batch: int) -> tuple[list[int], list[int]]:
    """The batch sizes of sorted ``lengths`` and, for each packed row in order, its row in the
    time-major padded layout flattened to ``(T * batch, *)``."""
    T = lengths[0] if lengths else 0
    sizes: list[int] = []
    rows: list[int] = []
    n = len(lengths)
    for t in range(T):
        while n and lengths[n - 1] <= t:
            n -= 1
        sizes.append(n)
        rows.extend(range(t * batch, t * batch + n))
    return sizes, rows


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of
    ``lengths``. With ``enforce_sorted`` the lengths must decrease; otherwise the batch is
    sorted here and ``sorted_indices`` records how."""
    lens = _lengths_list(lengths)
    sorted_indices = None
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:], strict=False)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX exportability."
            )
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = _tp.tensor(order, dtype=_tp.int64, device=input.device)
        lens = [lens[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    batch = input.shape[1]
    if len(lens) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
            f"(batch_size={batch})"
        )
    if lens and lens[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if lens and lens[0] > input.shape[0]:
        raise RuntimeError(
            f"pack_padded_sequence: a length of {lens[0]} exceeds the padded length "
            f"{input.shape[0]} of the input"
        )
    sizes, rows = _packed_rows(lens, batch)
    flat = input.reshape([input.shape[0] * batch, *input.shape[2:]])
    data = flat.index_select(0, _tp.tensor(rows, dtype=_tp.int64, device=input.device))
    return PackedSequence(
        data,
        _tp.tensor(sizes, dtype=_tp.int64),
        sorted_indices,
        invert_permutation(sorted_indices),
    )


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """The inverse of :func:`pack_padded_sequence`: the padded batch ``(T, B, *)`` (or
    ``(B, T, *)``) in the original batch order, and the lengths (an int64 CPU tensor)."""
    data, batch_sizes = sequence.data, sequence.batch_sizes
    sizes = [int(v) for v in batch_sizes.tolist()]
    T = len(sizes)
    if total_length is not None:
        if total_length < T:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being {T}"
            )
        T = total_length
    batch = sizes[0] if sizes else 0
    # each padded position takes its packed row, or the padding row appended after the data
    pad_row = data.shape[0]
    where = [pad_row] * (T * batch)
    offset = 0
    for t, n in enumerate(sizes):
        where[t * batch : t * batch + n] = range(offset, offset + n)
        offset += n
    pad = _tp.full([1, *data.shape[1:]], padding_value, dtype=data.dtype, device=data.device)
    index = _tp.tensor(where, dtype=_tp.int64, device=data.device)
    padded = _tp.cat([data, pad]).index_select(0, index)
    padded = padded.reshape([T, batch, *data.shape[1:]])
    lengths = [sum(1 for n in sizes if n > b) for b in range(batch)]
    lens = _tp.tensor(lengths, dtype=_tp.int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lens = lens[sequence.unsorted_indices.cpu()]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lens


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """Stack tensors of shape ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), padded with ``padding_value`` on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    seqs = list(sequences.unbind(0)) if isinstance(sequences, Tensor) else list(sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in seqs)
    rows = []
    for s in seqs:
        missing = longest - s.shape[0]
        if missing:
            fill = _tp.full([missing, *s.shape[1:]], padding_value, dtype=s.dtype, device=s.device)
            s = _tp.cat([s, fill] if padding_side == "right" else [fill, s])
        rows.append(s)
    out: Tensor = _tp.stack(rows, 0 if batch_first else 1)
    return out


def unpad_sequence(
    padded_sequences: Tensor, lengths: Any, batch_first: bool = False
) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    lens = _lengths_list(lengths)
    return [padded_sequences[b, :n] for b, n in enumerate(lens)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors of shape ``(L_i, *)`` (longest first, unless
    ``enforce_sorted=False``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a :class:`PackedSequence` holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
