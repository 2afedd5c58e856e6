"""The GRU recurrence (`runtime/ops/nn_gru.py`'s `gru_sequence` and its gradient) in generated
C, on `lstm_native`'s helpers (`d2s_vecmat`, sigmoid, tanh) and for the same reasons: every
time step of one batch row in one loop, rows split over the d2s threads. Installed in
`nn_rnn.NATIVE_KERNELS` ("gru_forward", "gru_backward").

As the LSTM's: the recurrent product is summed over the hidden units in order, sigmoid is
1 / (1 + exp(-x)), tanh `d2s_tanhf`, so results agree with the NumPy kernel to float rounding
(tests/nn/test_gru_sequence.py); float32 NumPy arrays only, the rest runs the NumPy kernel.
A row's steps at or past its length are skipped: its state is kept, its output is zero (and
so are its saved gates and its gradients there).
"""
from __future__ import annotations

import numpy as np

from ..ops import nn_rnn
from .lstm_native import call_rows, fits, ready

# a: xw [T, B, 3H], h0 [B, H], W_hh^T [H, 3H], b_hh [3H], lengths [B] (int64, within 0..T);
# out [T, B, H], last [B, H], saved (r, z, c, hp_c) [T, B, 4H], prevs [T, B, H]; sizes
_FORWARD = """D2S_VECTOR_WIDTH int d2s_gru_forward(void **a, int64_t lo, int64_t hi) {
  const float *restrict xw = a[0], *restrict h0 = a[1], *restrict wt = a[2];
  const float *restrict bias = a[3];
  const int64_t *restrict lengths = a[4];
  float *restrict out = a[5], *restrict last = a[6], *restrict saved = a[7];
  float *restrict prevs = a[8];
  const int64_t T = ((const int64_t *)a[9])[0], B = ((const int64_t *)a[9])[1];
  const int64_t H = ((const int64_t *)a[9])[2], rev = ((const int64_t *)a[9])[3];
  for (int64_t b = lo; b < hi; b++) {
    const float *hp = h0 + b * H;
    for (int64_t s = 0; s < T; s++) {
      const int64_t t = rev ? T - 1 - s : s;
      const int64_t row = t * B + b;
      float *restrict g = saved + row * 4 * H, *restrict hn = out + row * H;
      const float *restrict x = xw + row * 3 * H;
      memcpy(prevs + row * H, hp, sizeof(float) * H);
      if (t >= lengths[b]) {  /* past the row's end: state kept, output zero */
        memset(hn, 0, sizeof(float) * H);
        memset(g, 0, sizeof(float) * 4 * H);
        continue;
      }
      d2s_vecmat(hp, H, wt, 3 * H, g);  /* h W_hh^T */
      #pragma omp simd
      for (int64_t k = 0; k < 2 * H; k++) g[k] = d2s_sigmoidf(x[k] + g[k] + bias[k]);
      #pragma omp simd
      for (int64_t m = 0; m < H; m++) {
        const float hc = g[2 * H + m] + bias[2 * H + m];
        const float c = d2s_tanhf(x[2 * H + m] + g[m] * hc);
        g[3 * H + m] = hc;
        g[2 * H + m] = c;
        hn[m] = (hp[m] - c) * g[H + m] + c;
      }
      hp = hn;
    }
    memcpy(last + b * H, hp, sizeof(float) * H);
  }
  return 0;
}
"""

# a: d_out [T, B, H], d_last [B, H], W_hh [3H, H], lengths [B], saved [T, B, 4H],
# prevs [T, B, H]; d_xw, d_hp [T, B, 3H], d_h0 [B, H]; sizes
_BACKWARD = """D2S_VECTOR_WIDTH int d2s_gru_backward(void **a, int64_t lo, int64_t hi) {
  const float *restrict d_out = a[0], *restrict d_last = a[1], *restrict w = a[2];
  const int64_t *restrict lengths = a[3];
  const float *restrict saved = a[4], *restrict prevs = a[5];
  float *restrict d_xw = a[6], *restrict d_hp = a[7], *restrict d_h0 = a[8];
  const int64_t T = ((const int64_t *)a[9])[0], B = ((const int64_t *)a[9])[1];
  const int64_t H = ((const int64_t *)a[9])[2], rev = ((const int64_t *)a[9])[3];
  float *direct = malloc(sizeof(float) * H);
  if (!direct) return 1;
  for (int64_t b = lo; b < hi; b++) {
    float *restrict dh = d_h0 + b * H;
    memcpy(dh, d_last + b * H, sizeof(float) * H);
    for (int64_t s = T - 1; s >= 0; s--) {
      const int64_t t = rev ? T - 1 - s : s, row = t * B + b;
      float *restrict d = d_xw + row * 3 * H, *restrict e = d_hp + row * 3 * H;
      if (t >= lengths[b]) {  /* a kept state: its gradient passes unchanged */
        memset(d, 0, sizeof(float) * 3 * H);
        memset(e, 0, sizeof(float) * 3 * H);
        continue;
      }
      const float *restrict g = saved + row * 4 * H, *restrict hprev = prevs + row * H;
      const float *restrict dout = d_out + row * H;
      #pragma omp simd
      for (int64_t m = 0; m < H; m++) {
        const float r = g[m], z = g[H + m], c = g[2 * H + m], hc = g[3 * H + m];
        const float dhm = dh[m] + dout[m];
        const float dc = dhm * (1.0f - z) * (1.0f - c * c);
        d[m] = e[m] = dc * hc * r * (1.0f - r);
        d[H + m] = e[H + m] = dhm * (hprev[m] - c) * z * (1.0f - z);
        d[2 * H + m] = dc;
        e[2 * H + m] = dc * r;
        direct[m] = dhm * z;
      }
      d2s_vecmat(e, 3 * H, w, H, dh);  /* dh = d_hp W_hh */
      #pragma omp simd
      for (int64_t m = 0; m < H; m++) dh[m] += direct[m];
    }
  }
  free(direct);
  return 0;
}
"""


def _lengths(lengths, steps: int, batch: int) -> np.ndarray:
    """Each row's number of steps as int64 within 0..T (T for every row without lengths)."""
    if lengths is None:
        return np.full(batch, steps, np.int64)
    return np.clip(lengths, 0, steps).astype(np.int64)


def gru_forward(xp, xw, h0, w_hh, b_hh, lengths, reverse):
    """`gru_sequence`'s kernel in C, or None where it does not apply."""
    fn = ready("d2s_gru_forward", _FORWARD)
    arrays = (xw, h0, w_hh) + ((b_hh,) if b_hh is not None else ())
    if fn is None or not fits(xp, *arrays) or not xw.size:
        return None
    steps, batch, hidden = xw.shape[0], xw.shape[1], h0.shape[-1]
    xw, h0 = np.ascontiguousarray(xw), np.ascontiguousarray(h0)
    wt = np.ascontiguousarray(w_hh.T)
    bias = np.zeros(3 * hidden, np.float32) if b_hh is None else np.ascontiguousarray(b_hh)
    out = np.empty((steps, batch, hidden), np.float32)
    last = np.empty((batch, hidden), np.float32)
    saved = np.empty((steps, batch, 4 * hidden), np.float32)
    prevs = np.empty_like(out)
    sizes = np.array([steps, batch, hidden, reverse], np.int64)
    if not call_rows(fn, (xw, h0, wt, bias, _lengths(lengths, steps, batch), out, last, saved,
                          prevs), sizes, batch):
        return None
    return out, last, saved, prevs


def gru_backward(xp, d_out, d_last, w_hh, lengths, saved, prevs, reverse):
    """(d xw, d hp, d h0) of `gru_sequence_grad` in C, or None where it does not apply."""
    fn = ready("d2s_gru_backward", _BACKWARD)
    if fn is None or not fits(xp, d_out, d_last, w_hh, saved, prevs) or not saved.size:
        return None
    steps, batch, hidden = prevs.shape
    arrays = [np.ascontiguousarray(x) for x in (d_out, d_last, w_hh)]
    arrays.append(_lengths(lengths, steps, batch))
    arrays += [np.ascontiguousarray(x) for x in (saved, prevs)]
    d_xw = np.empty((steps, batch, 3 * hidden), np.float32)
    d_hp = np.empty_like(d_xw)
    d_h0 = np.empty((batch, hidden), np.float32)
    sizes = np.array([steps, batch, hidden, reverse], np.int64)
    if not call_rows(fn, (*arrays, d_xw, d_hp, d_h0), sizes, batch):
        return None
    return d_xw, d_hp, d_h0


nn_rnn.NATIVE_KERNELS.update(gru_forward=gru_forward, gru_backward=gru_backward)
