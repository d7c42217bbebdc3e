# Independent float64 oracle for the expected values of tests/providers/reference/nn/attention_test.cc,
# written from the ONNX Attention spec (not from recur). Run with /usr/bin/python3; it prints the
# C++ constants pasted into the test.
import numpy as np
NEG = -np.inf

def vals(shape, mul, mod=7, off=3):
    n = int(np.prod(shape))
    return ((np.arange(n) * mul) % mod - off).astype(np.float64).reshape(shape) * 0.25

def attention(q, k, v, mask=None, past_k=None, past_v=None, nonpad=None, scale=None,
              causal=False, qh=None, kvh=None, softcap=0.0, mode=0, left=-1, right=-1,
              cap_first=True):
    three = q.ndim == 3
    if three:
        B, S, _ = q.shape
        q = q.reshape(B, S, qh, -1).transpose(0, 2, 1, 3)
        k = k.reshape(B, k.shape[1], kvh, -1).transpose(0, 2, 1, 3)
        v = v.reshape(B, v.shape[1], kvh, -1).transpose(0, 2, 1, 3)
    B, Hq, Sq, D = q.shape
    Hkv = k.shape[1]
    P = 0
    if past_k is not None:
        P = past_k.shape[2]
        k = np.concatenate([past_k, k], 2)
        v = np.concatenate([past_v, v], 2)
    T = k.shape[2]
    if scale is None:
        scale = 1 / np.sqrt(D)
    bias = np.zeros((B, Hq, Sq, T))
    if mask is not None:
        m = mask
        if m.dtype == bool:
            m = np.where(m, 0.0, NEG)
        m = m.astype(np.float64)
        L = m.shape[-1]
        pad = np.full(m.shape[:-1] + (T - L,), NEG)
        m = np.concatenate([m, pad], -1)
        bias = bias + m
    for b in range(B):
        off = P if past_k is not None else (nonpad[b] - Sq if nonpad is not None else 0)
        for i in range(Sq):
            p = i + off
            for j in range(T):
                bad = (causal and j > p) or (left >= 0 and p - j > left) or \
                      (right >= 0 and j - p > right) or (nonpad is not None and j >= nonpad[b])
                if bad:
                    bias[b, :, i, j] = NEG
    g = Hq // Hkv
    kk = np.repeat(k, g, 1)
    vv = np.repeat(v, g, 1)
    raw = np.einsum('bhid,bhjd->bhij', q, kk) * scale
    capf = (lambda x: softcap * np.tanh(x / softcap)) if softcap > 0 else (lambda x: x)
    if cap_first:
        mid = capf(raw)
        logits = mid + bias
    else:
        mid = raw + bias
        with np.errstate(invalid='ignore'):
            logits = np.where(bias == NEG, NEG, capf(mid))
    probs = np.zeros_like(logits)
    for idx in np.ndindex(*logits.shape[:3]):
        row = logits[idx]
        if np.all(bias[idx] == NEG):
            continue
        e = np.exp(row - row.max())
        probs[idx] = e / e.sum()
    y = np.einsum('bhij,bhjd->bhid', probs, vv)
    if three:
        y = y.transpose(0, 2, 1, 3).reshape(B, Sq, -1)
    qk = [raw, mid, logits, probs][mode]
    return y, k, v, qk

def c(name, a):
    flat = ', '.join('%.9g' % x for x in np.asarray(a, dtype=np.float64).ravel())
    print('// %s %s' % (name, list(np.shape(a))))
    print('const std::vector<float> %s{%s};' % (name, flat))

# 1: basic 4D, q 1x2x2x2, k 1x2x3x2, v 1x2x3x3 (V head size differs).
q = vals((1, 2, 2, 2), 3); k = vals((1, 2, 3, 2), 5); v = vals((1, 2, 3, 3), 2)
c('kBasicQ', q); c('kBasicK', k); c('kBasicV', v)
c('kBasicY', attention(q, k, v)[0])
# 2: 3D GQA: q 1x2x(4*2), k 1x3x(2*2), v 1x3x(2*1), q_num_heads 4, kv_num_heads 2.
q = vals((1, 2, 8), 3); k = vals((1, 3, 4), 5); v = vals((1, 3, 2), 2)
c('kGqaQ', q); c('kGqaK', k); c('kGqaV', v)
c('kGqaY', attention(q, k, v, qh=4, kvh=2)[0])
# 3: causal with past (offset 2): q 1x1x2x2, past 1x1x2x2, k/v 1x1x2x2.
q = vals((1, 1, 2, 2), 3); k = vals((1, 1, 2, 2), 5); v = vals((1, 1, 2, 2), 2)
pk = vals((1, 1, 2, 2), 1, 5, 2); pv = vals((1, 1, 2, 2), 3, 5, 1)
c('kPastQ', q); c('kPastK', k); c('kPastV', v); c('kPastPk', pk); c('kPastPv', pv)
y, prk, prv, _ = attention(q, k, v, past_k=pk, past_v=pv, causal=True)
c('kPastY', y); c('kPastPresentK', prk); c('kPastPresentV', prv)
y0 = attention(q, k, v, past_k=pk, past_v=pv, causal=False)[0]
# 4: short bool mask (padded), one fully masked row; q 1x1x3x2, k/v 1x1x4x2, mask [3,2].
q = vals((1, 1, 3, 2), 3); k = vals((1, 1, 4, 2), 5); v = vals((1, 1, 4, 2), 2)
bm = np.array([[True, False], [False, False], [True, True]])
c('kMaskQ', q); c('kMaskK', k); c('kMaskV', v)
y, _, _, qk = attention(q, k, v, mask=bm, mode=3)
c('kBoolMaskY', y); c('kBoolMaskProbs', qk)
fm = np.array([[[0.5, -1.0, 0.0, 2.0], [NEG, NEG, NEG, NEG], [0.0, 0.0, 0.0, -0.5]]])  # [1,3,4]
y, _, _, qk = attention(q, k, v, mask=fm, mode=3)
c('kFloatMaskY', y); c('kFloatMaskProbs', qk)
# 5: softcap 0.5 with float mask and causal, modes 0..3, opset 25 (cap first) and 23 (bias first).
q = vals((1, 1, 2, 2), 3) * 4; k = vals((1, 1, 3, 2), 5) * 4; v = vals((1, 1, 3, 2), 2)
sm = np.array([[0.25, -0.5, 1.0], [0.0, 0.75, -0.25]])
c('kCapQ', q); c('kCapK', k); c('kCapV', v)
for cf, tag in [(True, '25'), (False, '23')]:
    for mode in range(4):
        y, _, _, qk = attention(q, k, v, mask=sm, softcap=0.5, mode=mode, cap_first=cf)
        c('kCap%sMode%d' % (tag, mode), qk)
    c('kCap%sY' % tag, y)
# 6: nonpad_kv_seqlen (opset 24), causal, batch 2: q 2x1x2x2, k/v 2x1x4x2, nonpad [3, 1].
q = vals((2, 1, 2, 2), 3); k = vals((2, 1, 4, 2), 5); v = vals((2, 1, 4, 2), 2)
c('kPadQ', q); c('kPadK', k); c('kPadV', v)
y = attention(q, k, v, nonpad=np.array([3, 1]), causal=True)[0]
c('kPadY', y)
# 7: window (opset 25): q 1x1x4x2, k/v 1x1x6x2, left 2 right 1.
q = vals((1, 1, 4, 2), 3); k = vals((1, 1, 6, 2), 5); v = vals((1, 1, 6, 2), 2)
c('kWinQ', q); c('kWinK', k); c('kWinV', v)
y, _, _, qk = attention(q, k, v, left=2, right=1, mode=3)
c('kWinY', y); c('kWinProbs', qk)
