"""packed_bilstm_tagger: a sequence tagger over padded batches with per-sequence lengths.

tokens int64 [N, T], lengths int64 [N] -> Embedding(V=30, 16) -> pack_padded_sequence
-> LSTM(16, 24, bidirectional=True, batch_first=True) -> pad_packed_sequence
-> Linear(48, 6) -> LogSoftmax -> log_probs float32 [N, T, 6]. Opset 14, batch and sequence
dynamic. pack_padded_sequence becomes the LSTM's sequence_lens input (Cast to int32), so this
checks ONNX's sequence_lens semantics against PyTorch's packed sequences: outputs past a
sequence's length are zero before the Linear (so log_softmax of the bias there), and the reverse
direction starts at each sequence's own last step.
"""

import sys

import numpy as np
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import common

NAME = "packed_bilstm_tagger"
VOCAB, EMB, HIDDEN, TAGS = 30, 16, 24, 6


class PackedBiLstmTagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, EMB)
        self.lstm = nn.LSTM(EMB, HIDDEN, bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * HIDDEN, TAGS)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths, batch_first=True,
                                      enforce_sorted=False)
        y, _ = self.lstm(packed)
        y, _ = pad_packed_sequence(y, batch_first=True, total_length=tokens.shape[1])
        return torch.log_softmax(self.head(y), dim=-1)


def main(root=None):
    rng = common.seed(1008)
    model = PackedBiLstmTagger().eval()
    d = common.fresh_dir(NAME, root)
    # Traced at batch 1: with packed input the exporter builds the zero initial state from a
    # constant of the traced batch size, which Expand can only broadcast from 1.
    trace_tokens = rng.integers(0, VOCAB, size=(1, 8), dtype=np.int64)
    trace_lengths = np.array([8], dtype=np.int64)
    common.export(model, (torch.from_numpy(trace_tokens), torch.from_numpy(trace_lengths)),
                  d + "/model.onnx", ["tokens", "lengths"], ["log_probs"], opset=14,
                  dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "lengths": {0: "batch"},
                                "log_probs": {0: "batch", 1: "seq"}})
    tokens = rng.integers(0, VOCAB, size=(4, 11), dtype=np.int64)
    lengths = np.array([6, 11, 1, 9], dtype=np.int64)  # unsorted, one full, one of length 1
    common.write_data_set(d, 0, ["tokens", "lengths"], [tokens, lengths], ["log_probs"],
                          common.run_eager(model, [tokens, lengths]))
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
