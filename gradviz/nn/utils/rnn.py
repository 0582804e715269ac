"""torch.nn.utils.rnn: pad_sequence, as NLP tutorials' collate functions call it. The packed
sequences (PackedSequence, pack_padded_sequence, ...) are not in the core: their names refuse
with the --backend torch hint.

>>> import gradviz as torch
>>> from gradviz.nn.utils.rnn import pad_sequence
>>> pad_sequence([torch.tensor([1, 2, 3]), torch.tensor([4])], batch_first=True)
tensor([[1, 2, 3],
        [4, 0, 0]])
"""

from collections.abc import Iterable

from ... import _creation

__all__ = ["pad_sequence"]

# torch.nn.utils.rnn's public names (PyTorch 2.13), for the refusal of those gradviz lacks.
_TORCH_NAMES = ("PackedSequence", "invert_permutation", "pack_padded_sequence",
                "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
                "unpack_sequence")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of different lengths (dim 0) into one, padded with padding_value: T x B x *
    (B x T x * with batch_first), the padding after each sequence (before, for "left").

    As torch's native pad_sequence: a tensor of padding_value shaped after sequences[0] and
    the longest length, then each sequence copied into its slice (the graph is torch's chain
    of CopySlices nodes).

    >>> import gradviz as torch
    >>> pad_sequence([torch.ones(2), torch.ones(1)], padding_value=-1)
    tensor([[ 1.,  1.],
            [ 1., -1.]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError("pad_sequence: Expected iterable for input sequences, but got arg "
                           f"of type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError("Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    max_len = max(s.size(0) for s in sequences)
    lead = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    # at::full is empty + fill_, an in-place write torch's version counter sees (then one per
    # sequence copied): the result's _version is 1 + len(sequences), as on torch
    out = _creation.empty(lead + tuple(first.shape[1:]), dtype=first.dtype)
    out.fill_(padding_value)
    for i, seq in enumerate(sequences):
        length = seq.size(0)
        start = max_len - length if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, length).copy_(seq)
        else:
            out.narrow(0, start, length).select(1, i).copy_(seq)
    return out


def __getattr__(name):
    if name in _TORCH_NAMES:
        from ..._torch_api import VERSION
        err = AttributeError(f"gradviz's core does not implement torch.nn.utils.rnn.{name} "
                             f"(PyTorch {VERSION} has it); run with --backend torch to run "
                             "this file on PyTorch")
    else:
        err = AttributeError(f"module 'torch.nn.utils.rnn' has no attribute '{name}'")
    err.name = None
    raise err
