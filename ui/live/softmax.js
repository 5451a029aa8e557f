// Live attention weights: the browser's view of one formula, A = softmax(S / (s·τ)) under the mask.
//
// The same rule as attention_core (attention.py, masks.py, saturation.py): s = √d_k when scaling is on, else
// 1; τ = temperature; a mask entry 1 means "may attend"; a row whose mask allows no key gets all-zero weights
// (never NaN); the softmax is max-shifted. Shapes: H heads, Tq queries, Tk keys; arrays are flat, row-major.
// Pure functions only: no DOM, so the tests call them in Chromium and compare with attention_core.

/** The mask (Tq, Tk) of a mask kind, 1 = may attend: "none", "causal" (key j <= query i), "padding" (the last
 *  `pad` keys are pads) or "causal+padding" (both). `pad` is clamped to 0..Tk, as attention_core does. */
export function buildMask(kind, pad, Tq, Tk) {
  const mask = new Uint8Array(Tq * Tk); // (Tq, Tk)
  const causal = kind === "causal" || kind === "causal+padding";
  const padded = kind === "padding" || kind === "causal+padding";
  const valid = padded ? Tk - Math.min(Math.max(pad | 0, 0), Tk) : Tk; // keys 0..valid-1 are real tokens
  for (let i = 0; i < Tq; i++) {
    for (let j = 0; j < Tk; j++) {
      mask[i * Tk + j] = (!causal || j <= i) && j < valid ? 1 : 0;
    }
  }
  return mask;
}

/** The raw scores S = Q Kᵀ (H, Tq, Tk) of every head from Q (H, Tq, dk) and K (H, Tk, dk), as attention_core's
 *  q @ kᵀ: each dot product summed in float64 (d = 0, 1, ...), then stored as float32 (what the feed sends when it
 *  sends S). Four keys at a time share each query's numbers: half the time of one key at a time (0.2 s at 512
 *  tokens x 16 heads of 64), the same sums. */
export function rawScores(Q, K, H, Tq, Tk, dk) {
  const S = new Float32Array(H * Tq * Tk); // (H, Tq, Tk)
  const q = new Float64Array(dk); // row i of Q, read once per row
  for (let h = 0; h < H; h++) {
    const kh = h * Tk * dk; // offset of head h in K
    for (let i = 0; i < Tq; i++) {
      const qi = (h * Tq + i) * dk; // row i of head h in Q
      const row = (h * Tq + i) * Tk; // in S
      for (let d = 0; d < dk; d++) q[d] = Q[qi + d];
      let j = 0;
      for (; j + 4 <= Tk; j += 4) {
        const k0 = kh + j * dk; // rows j .. j+3 of K
        const k1 = k0 + dk;
        const k2 = k1 + dk;
        const k3 = k2 + dk;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        for (let d = 0; d < dk; d++) {
          const x = q[d];
          s0 += x * K[k0 + d];
          s1 += x * K[k1 + d];
          s2 += x * K[k2 + d];
          s3 += x * K[k3 + d];
        }
        S[row + j] = s0;
        S[row + j + 1] = s1;
        S[row + j + 2] = s2;
        S[row + j + 3] = s3;
      }
      for (; j < Tk; j++) {
        const kj = kh + j * dk;
        let sum = 0;
        for (let d = 0; d < dk; d++) sum += q[d] * K[kj + d];
        S[row + j] = sum;
      }
    }
  }
  return S;
}

/** The score factor 1 / (s·τ): s = √d_k when scaled, else 1. */
export function scoreFactor(dk, scaled, temperature) {
  return 1 / ((scaled ? Math.sqrt(dk) : 1) * temperature);
}

/** Attention weights (H, Tq, Tk) from raw scores S = Q Kᵀ (H, Tq, Tk). `mask` (Tq, Tk) or null. Writes into
 *  `out` when given (a Float32Array of H·Tq·Tk), so that a drag does not allocate a buffer per frame. */
export function attentionWeights(S, H, Tq, Tk, dk, scaled, temperature, mask, out) {
  const A = out || new Float32Array(H * Tq * Tk); // (H, Tq, Tk)
  const f = scoreFactor(dk, scaled, temperature);
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < Tq; i++) {
      const row = (h * Tq + i) * Tk; // offset of row i of head h
      const m = i * Tk; // offset of row i of the mask
      let max = -Infinity;
      for (let j = 0; j < Tk; j++) {
        if (!mask || mask[m + j]) max = Math.max(max, S[row + j] * f);
      }
      if (max === -Infinity) {
        A.fill(0, row, row + Tk); // no key allowed: zeros, never NaN
        continue;
      }
      let sum = 0;
      for (let j = 0; j < Tk; j++) {
        const e = !mask || mask[m + j] ? Math.exp(S[row + j] * f - max) : 0;
        A[row + j] = e;
        sum += e;
      }
      for (let j = 0; j < Tk; j++) A[row + j] /= sum;
    }
  }
  return A;
}

/** Per head: the means over rows that have an allowed key of the largest weight, the entropy (nats) and the
 *  effective tokens exp(entropy), as attention_core.saturation_metrics(...).summary() gives them. */
export function headFigures(A, H, Tq, Tk) {
  const figures = []; // (H,) {maxWeight, entropy, effectiveTokens}
  for (let h = 0; h < H; h++) {
    let rows = 0;
    let maxSum = 0;
    let entSum = 0;
    let effSum = 0;
    for (let i = 0; i < Tq; i++) {
      const row = (h * Tq + i) * Tk;
      let total = 0;
      let max = 0;
      let ent = 0;
      for (let j = 0; j < Tk; j++) {
        const p = A[row + j];
        total += p;
        if (p > max) max = p;
        if (p > 0) ent -= p * Math.log(p);
      }
      if (total === 0) continue; // a fully masked row is left out, as in attention_core
      rows += 1;
      maxSum += max;
      entSum += ent;
      effSum += Math.exp(ent);
    }
    figures.push(
      rows
        ? { maxWeight: maxSum / rows, entropy: entSum / rows, effectiveTokens: effSum / rows }
        : { maxWeight: 0, entropy: 0, effectiveTokens: 0 },
    );
  }
  return figures;
}

/** The one colour scale of the maps drawn together: [0, 1], or, when the reader stretches, the 1st-99th
 *  percentile of the allowed weights of every head (as ui.draw.charts.weight_scale; over an even sample of at most
 *  `limit` values, so that a drag at 512 tokens x 16 heads stays fast). Returns [lo, hi, stretched]. */
export function colourScale(A, H, Tq, Tk, mask, stretch, limit = 65536) {
  if (!stretch) return [0, 1, false];
  const n = H * Tq * Tk;
  const step = Math.max(1, Math.floor(n / limit));
  const vals = [];
  for (let k = 0; k < n; k += step) {
    const ij = k % (Tq * Tk);
    if (!mask || mask[ij]) vals.push(A[k]);
  }
  if (!vals.length) return [0, 1, false];
  vals.sort((a, b) => a - b);
  const q = (p) => {
    const x = p * (vals.length - 1); // linear interpolation, as numpy.quantile
    const lo = Math.floor(x);
    const hi = Math.min(lo + 1, vals.length - 1);
    return vals[lo] + (vals[hi] - vals[lo]) * (x - lo);
  };
  const [lo, hi] = vals.length >= 100 ? [q(0.01), q(0.99)] : [vals[0], vals[vals.length - 1]];
  return hi - lo < 1e-6 ? [0, 1, false] : [lo, hi, true];
}

// A number as the page's sentences and tables write it (ui.text.fmt: Python's format with `digits` significant
// digits, "g"), so a map's hover says what the table beside it says: rounded half to even on the number's exact
// binary value (toExponential(99) gives its decimal digits), positional from 1e-4 to below 10 ** digits, "0" for
// zero, "nan" and "inf" as Python writes them.
export function fmt(x, digits = 3) {
  x = x + 0; // -0 is 0
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  if (x === 0) return "0";
  const sign = x < 0 ? "-" : "";
  const [mantissa, exponent] = Math.abs(x).toExponential(99).split("e");
  const all = mantissa.replace(".", "");
  let e = parseInt(exponent, 10);
  let head = all.slice(0, digits);
  const rest = all.slice(digits);
  const next = rest.charCodeAt(0) - 48;
  const last = head.charCodeAt(head.length - 1) - 48;
  if (next > 5 || (next === 5 && (/[1-9]/.test(rest.slice(1)) || last % 2 === 1))) {
    head = (BigInt(head) + 1n).toString();
    if (head.length > digits) {
      head = head.slice(0, digits);
      e += 1;
    }
  }
  head = head.replace(/0+$/, "") || "0";
  if (e >= -4 && e < digits) {
    if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${head}`;
    const whole = head.padEnd(e + 1, "0").slice(0, e + 1);
    const frac = head.slice(e + 1);
    return sign + whole + (frac ? `.${frac}` : "");
  }
  const m = head.length > 1 ? `${head[0]}.${head.slice(1)}` : head;
  return `${sign}${m}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}
