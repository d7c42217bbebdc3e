"""greedy_seq2seq: an encoder-decoder with greedy decoding in a scripted loop.

src int64 [N, S] -> Embedding(20, 16) -> bidirectional GRU(32, batch_first) -> the two
directions summed as the memory, a tanh bridge from the final states to the decoder's h.
Then torch.jit.script's `for step in range(int(max_len))` with a `break` once every row has
written EOS: LSTMCell(16 + 32, 32) over the previous token's embedding and the last context,
dot-product attention over the memory, Linear(64, 24), LogSoftmax, greedy argmax; a finished row
keeps writing EOS. -> tokens int64 [N, steps], scores float32 [N, steps] (each step's best log
probability). Opset 14.

The exporter writes the loop as a Loop whose trip count M is INT64_MAX and whose cond carries
`step < max_len and not all rows done`, the decoder's state and the token lists (Sequence
values, stacked by ConcatFromSequence). Data sets: one that runs to max_len, and two where
every row ends with EOS early, at different steps (the loop stops on its cond).
"""

import sys
from typing import List

import numpy as np
import torch
from torch import nn

import common

NAME = "greedy_seq2seq"
SRC_VOCAB, TGT_VOCAB, EMBED, HIDDEN = 20, 24, 16, 32
PAD, BOS, EOS = 0, 1, 2


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(SRC_VOCAB, EMBED)
        self.rnn = nn.GRU(EMBED, HIDDEN, batch_first=True, bidirectional=True)
        self.bridge = nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, src):
        y, h = self.rnn(self.embed(src))
        forward, backward = y.chunk(2, dim=2)
        memory = forward + backward
        return memory, torch.tanh(self.bridge(torch.cat([h[0], h[1]], 1)))


class GreedySeq2Seq(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.embed = nn.Embedding(TGT_VOCAB, EMBED)
        self.cell = nn.LSTMCell(EMBED + HIDDEN, HIDDEN)
        self.out = nn.Linear(2 * HIDDEN, TGT_VOCAB)

    def forward(self, src: torch.Tensor, max_len: torch.Tensor):
        memory, h = self.encoder(src)
        c = torch.zeros_like(h)
        context = torch.zeros_like(h)
        # TorchScript reads no module-level ints: BOS is 1 and EOS is 2 below.
        tok = torch.ones([src.size(0)], dtype=torch.long)
        done = torch.zeros([src.size(0)], dtype=torch.bool)
        tokens: List[torch.Tensor] = []
        scores: List[torch.Tensor] = []
        for _ in range(int(max_len)):
            h, c = self.cell(torch.cat([self.embed(tok), context], 1), (h, c))
            weights = torch.softmax(torch.bmm(memory, h.unsqueeze(2)).squeeze(2), dim=1)
            context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
            logp = torch.log_softmax(self.out(torch.cat([h, context], 1)), dim=1)
            score, tok = logp.max(1)
            tok = tok.masked_fill(done, 2)
            tokens.append(tok)
            scores.append(score)
            done = done | (tok == 2)
            if bool(done.all()):
                break
        return torch.stack(tokens, 1), torch.stack(scores, 1)


def teacher_forced(model, src, tgt_in):
    """The decoder's logits for every step of tgt_in, for training."""
    memory, h = model.encoder(src)
    c, context, logits = torch.zeros_like(h), torch.zeros_like(h), []
    for t in range(tgt_in.shape[1]):
        h, c = model.cell(torch.cat([model.embed(tgt_in[:, t]), context], 1), (h, c))
        weights = torch.softmax(torch.bmm(memory, h.unsqueeze(2)).squeeze(2), dim=1)
        context = torch.bmm(weights.unsqueeze(1), memory).squeeze(1)
        logits.append(model.out(torch.cat([h, context], 1)))
    return torch.stack(logits, 1)


def padded_batch(rng, lengths):
    """Rows of distinct random tokens (3..SRC_VOCAB-1; a token repeated in a row makes
    attention's position ambiguous for a model this small) of the given lengths, PAD in front;
    the targets are each row's tokens reversed, then EOS, padded with EOS."""
    width = max(lengths) + 1  # every row starts with PAD, which marks where to stop
    src = np.full((len(lengths), width), PAD, np.int64)
    tgt = np.full((len(lengths), width), EOS, np.int64)
    for row, n in enumerate(lengths):
        src[row, width - n:] = rng.permutation(np.arange(3, SRC_VOCAB))[:n]
        tgt[row, :n] = src[row, width - n:][::-1]
    return src, tgt


def train(model, rng, steps=1000):
    """Teaches the model to reverse its input and then write EOS, so that greedy decoding stops
    where a trained decoder would: each row after its own length, the loop after the longest.
    One thread and a fixed seed: a re-export gives the same weights on this machine."""
    torch.set_num_threads(1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    for _ in range(steps):
        src, tgt = padded_batch(rng, rng.integers(2, 9, 32))
        src, tgt = torch.from_numpy(src), torch.from_numpy(tgt)
        tgt_in = torch.cat([torch.full_like(tgt[:, :1], BOS), tgt[:, :-1]], 1)
        loss = nn.functional.cross_entropy(
            teacher_forced(model, src, tgt_in).reshape(-1, TGT_VOCAB), tgt.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model.eval()


def main(root=None):
    rng = common.seed(1017)
    model = train(GreedySeq2Seq(), rng)
    d = common.fresh_dir(NAME, root)
    names_in, names_out = ["src", "max_len"], ["tokens", "scores"]
    trace = rng.integers(3, SRC_VOCAB, (2, 7)).astype(np.int64)
    common.export(torch.jit.script(model), (torch.from_numpy(trace), torch.tensor(12)),
                  d + "/model.onnx", names_in, names_out, opset=14,
                  dynamic_axes={"src": {0: "batch", 1: "src_len"},
                                "tokens": {0: "batch", 1: "steps"},
                                "scores": {0: "batch", 1: "steps"}})
    # 0: rows of lengths 6, 3 and 5 end with EOS after 7, 4 and 6 steps, and the loop stops at 7
    #    on its cond; 1: max_len 5 cuts two rows of 8 short; 2: one row of 4, 5 steps.
    cases = [([6, 3, 5], 16), ([8, 8], 5), ([4], 16)]
    for k, (lengths, max_len) in enumerate(cases):
        src, want = padded_batch(rng, lengths)
        max_len = np.array(max_len, np.int64)
        outs = common.run_eager(model, [src, max_len])
        steps = min(int(max_len), max(lengths) + 1)
        assert outs[0].shape == (len(lengths), steps), (outs[0], want)
        assert (outs[0] == want[:, :steps]).all(), (outs[0], want)
        common.write_data_set(d, k, names_in, [src, max_len], names_out, outs)
    return d


if __name__ == "__main__":
    print(main(*sys.argv[1:]))
