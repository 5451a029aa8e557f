// The input X and the output Z = concat_h(A_h V_h) W_o, live: drawn by the browser on one colour scale, Z following
// the weights the maps draw (maps.js's LiveView announces every frame) while a control moves. Part of the maps'
// module (ui/live/__init__.py joins the files); its element carries sync.js, which hands it here. Python
// draws it only where X and Z are small enough to be drawn cell by cell (ui.draw.charts.is_vector), and X, V and
// W_o travel in the maps' feed once per input, as the scores.
//
// Data (JSON text, from ui/live/__init__.py's live_outputs): nothing a release changes.
//   sync     the maps' key: their feed brings the arrays, their frames the weights
//   scores   the key of the scores the maps draw: only their frames are this input's
//   panel    the maps' panel whose weights Z mixes ("" on the Playground)
//   rows     the token labels (drawn as canvas text, never as HTML)
//   d, H, dk d_model, the heads and d_k = d / H
//   arrays   {x, v, wo}: the keys of X (1, T, d), V (H, T, d_k) and W_o (1, d, d) among the feed's arrays
//   lut_diverging   256 x [r, g, b], blue (negative) to red (positive), as the server's images use

const OUT_CELL_MAX = 28; // px of a cell's height at the most (a short sentence's rows)
const OUT_HEIGHT = 224; // px the rows of a map take when their cells are not at their largest
const OUT_LABEL_PX = 18; // px from one drawn dim label to the next, at least
const OUT_MARGIN = 44; // px left of a map for the token labels
const OUT_BOTTOM = 16; // px under a map for the dim labels

class OutputView {
  constructor(parent, header) {
    this.parent = parent;
    this.h = header;
    this.syncKey = header.sync;
    this.T = header.rows.length;
    this.d = header.d;
    this.frames = 0;
    this.Z = new Float64Array(this.T * this.d); // (T, d) the output drawn now
    this.C = new Float64Array(this.T * this.d); // (T, d) the heads' outputs side by side
    this.lim = 1;
    this.cursor = {};
    this.build();
    this.onFrame = (e) => {
      if (e.detail && e.detail.sync === this.syncKey) this.take(e.detail.view);
    };
    window.addEventListener(FRAME_EVENT, this.onFrame);
    this.width = 0;
    if (typeof ResizeObserver === "function") {
      this.resized = new ResizeObserver(() => {
        if (this.root.clientWidth !== this.width && this.drawn) this.draw();
      });
      this.resized.observe(this.root);
    }
    const view = (window.__attentionExplorerLiveViews || {})[this.syncKey];
    // the maps drew this input before this view was mounted (a body rerun); not a frame still to come
    if (view && view.frames > 0 && !view.raf) this.take(view);
  }

  build() {
    // not .ae-live: those are the maps; the projector view's text is larger, as the maps'
    const root = el("div", { class: this.h.projector ? "ae-outputs ae-projector" : "ae-outputs" });
    this.root = root;
    this.wait = el("p", { class: "ae-wait", role: "status", text: "Waiting for the attention maps above…" }, root);
    const top = el("div", { class: "ae-top" }, root);
    this.legend = el("div", { class: "ae-legend" }, top);
    this.legendBar = el("canvas", { width: "160", height: "10", "aria-hidden": "true" }, this.legend);
    this.legendText = el("span", { class: "ae-legend-text" }, this.legend);
    const row = el("div", { class: "ae-panels" }, root);
    this.maps = ["X input", "Z output"].map((title, n) => {
      const fig = el("figure", { class: "ae-map" }, row);
      const caption = el("figcaption", { class: "ae-title", text: title }, fig);
      const canvas = el(
        "canvas",
        { role: "img", tabindex: "0", "aria-keyshortcuts": "ArrowUp ArrowDown ArrowLeft ArrowRight Escape" },
        fig,
      );
      const axes = el("div", { class: "ae-figures" }, fig);
      const m = { title, name: n ? "z" : "x", fig, caption, canvas, axes };
      canvas.addEventListener("mousemove", (e) => this.hover(m, e));
      canvas.addEventListener("mouseleave", () => this.hideTip());
      canvas.addEventListener("blur", () => this.hideTip());
      canvas.addEventListener("keydown", (e) => this.key(m, e));
      return m;
    });
    this.tip = el("div", { class: "ae-tip", role: "status" }, root);
    this.parent.appendChild(root);
  }

  /** X, V and W_o from the maps' feed (feed.js keeps them with the scores), once they are here. */
  arrays() {
    if (this.X) return true;
    const held = (window.__attentionExplorerLiveScores || {})[this.syncKey];
    const a = this.h.arrays;
    const [X, V, Wo] = [a.x, a.v, a.wo].map((k) => held && held.arrays[k]);
    if (!X || !V || !Wo) return false;
    [this.X, this.V, this.Wo] = [X, V, Wo];
    this.xmax = 0;
    for (const x of X) this.xmax = Math.max(this.xmax, Math.abs(x));
    return true;
  }

  /** The weights the maps drew this frame: Z for them, then both maps on the scale of the larger of |X| and |Z|. */
  take(view) {
    // the maps of another input (a full run's new maps draw before the old outputs are replaced) are not ours
    if (view.key !== this.h.scores) return;
    const p = view.panels.find((q) => q.name === this.h.panel);
    if (!p || !p.S || !view.settled || p.Tq !== this.T || p.H !== this.h.H || !this.arrays()) return;
    this.compute(p.A);
    this.setting = { ...p.setting };
    this.draw();
  }

  /** Z = concat_h(A_h V_h) W_o, in float64 sums (attention_core's output, from float32 weights and arrays). */
  compute(A) {
    const { T, d, C, Z } = this;
    const { H, dk } = this.h;
    const V = this.V;
    const Wo = this.Wo;
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        const a = (h * T + t) * T;
        for (let j = 0; j < dk; j++) {
          let s = 0;
          for (let u = 0; u < T; u++) s += A[a + u] * V[(h * T + u) * dk + j];
          C[t * d + h * dk + j] = s;
        }
      }
    }
    let zmax = 0;
    for (let t = 0; t < T; t++) {
      for (let c = 0; c < d; c++) {
        let s = 0;
        for (let m = 0; m < d; m++) s += C[t * d + m] * Wo[m * d + c];
        Z[t * d + c] = s;
        zmax = Math.max(zmax, Math.abs(s));
      }
    }
    this.lim = Math.max(this.xmax, zmax) || 1; // as the page's caption: max(|X|, |Z|), one scale for both
  }

  /** The cells' layout for the root's width now: X and Z side by side while both fit, else one above the other. */
  fit() {
    const room = this.root.clientWidth || 600;
    const big = this.h.projector ? 1.5 : 1; // the class reads the maps from the back of the room
    const margin = Math.round(OUT_MARGIN * big);
    const sideBySide = room >= 2 * (margin + 2 * this.d + 8) + 28;
    const figW = Math.min(sideBySide ? Math.floor((room - 28) / 2) : room, Math.round(460 * big));
    const cw = Math.max(1, Math.floor((figW - margin - 8) / this.d));
    const most = Math.round(OUT_CELL_MAX * big);
    const ch = Math.max(Math.min(most, Math.floor((OUT_HEIGHT * big) / this.T)), Math.min(cw, most), 3);
    let every = 1;
    while (every * cw < OUT_LABEL_PX) every *= 2;
    const labelled = this.T <= 16 && ch >= 9;
    const font = Math.round(11 * big);
    return { cw, ch, every, labelled, font, margin, w: margin + cw * this.d + 4, hh: ch * this.T + OUT_BOTTOM + font - 11 };
  }

  values(m) {
    return m.name === "z" ? this.Z : this.X;
  }

  draw() {
    this.drawn = true;
    this.wait.hidden = true;
    this.width = this.root.clientWidth;
    const L = (this.L = this.fit());
    const lut = this.h.lut_diverging;
    const lim = this.lim;
    const { T, d } = this;
    for (const m of this.maps) {
      const v = this.values(m);
      const box = { w: L.w, hh: L.hh, x: L.margin, y: 0, cw: L.cw, ch: L.ch };
      const ctx = paintCells(m.canvas, box, T, d, (k) => lut[Math.round(Math.min(1, Math.max(0, (v[k] + lim) / (2 * lim))) * 255)]);
      this.labels(ctx, L);
      m.fig.style.width = `${Math.max(L.w + 4, FIG_MIN)}px`;
      const every = L.every > 1 ? `, every ${L.every === 2 ? "2nd" : `${L.every}th`} labelled` : "";
      m.axes.textContent = `rows: tokens${L.labelled ? "" : " (hover to read them)"} · columns: dims 1–${d}${every}`;
      m.canvas.setAttribute("aria-label", this.describe(m, v));
    }
    this.drawLegend();
    this.frames += 1;
    this.root.dataset.frames = String(this.frames);
    if (this.setting) this.root.dataset.temperature = String(this.setting.temperature);
  }

  labels(ctx, L) {
    ctx.save();
    ctx.fillStyle = getComputedStyle(this.root).color || "#1f2430";
    ctx.font = `${L.font}px sans-serif`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    if (L.labelled) this.h.rows.forEach((t, i) => ctx.fillText(short(t), L.margin - 4, (i + 0.5) * L.ch));
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (let j = 0; j < this.d; j += L.every) ctx.fillText(String(j + 1), L.margin + (j + 0.5) * L.cw, this.T * L.ch + 3);
    ctx.restore();
  }

  drawLegend() {
    paintRamp(this.legendBar, this.h.lut_diverging);
    this.legendText.textContent = `x and z: −${fmt(this.lim)} (blue) to ${fmt(this.lim)} (red), one scale for both maps`;
  }

  /** A map's text alternative, from the numbers drawn: its size and where its largest and smallest values are. */
  describe(m, v) {
    let hi = 0;
    let lo = 0;
    for (let k = 1; k < v.length; k++) {
      if (v[k] > v[hi]) hi = k;
      if (v[k] < v[lo]) lo = k;
    }
    const at = (k) => `token '${this.h.rows[Math.floor(k / this.d)]}' and dim ${(k % this.d) + 1}`;
    return (
      `${m.title}: ${this.T} x ${this.d} map of ${m.name} (token by dim); the largest, ${fmt(v[hi])}, at ${at(hi)}; ` +
      `the smallest, ${fmt(v[lo])}, at ${at(lo)}`
    );
  }

  cellText(m, i, j) {
    return `${m.title} · token ${this.h.rows[i]} (#${i + 1}) · dim ${j + 1}: ${m.name} = ${fmt(this.values(m)[i * this.d + j])}`;
  }

  cellAt(m, e) {
    const L = this.L;
    const rect = m.canvas.getBoundingClientRect();
    const x = ((e.clientX - rect.left - m.canvas.clientLeft) / m.canvas.clientWidth) * L.w - L.margin;
    const y = ((e.clientY - rect.top - m.canvas.clientTop) / m.canvas.clientHeight) * L.hh;
    const i = Math.floor(y / L.ch);
    const j = Math.floor(x / L.cw);
    return i >= 0 && j >= 0 && i < this.T && j < this.d ? [i, j] : null;
  }

  showTip(text, clientX, clientY) {
    const box = this.root.getBoundingClientRect();
    this.tip.textContent = text;
    this.tip.style.display = "block";
    this.tip.style.left = `${Math.max(0, Math.min(clientX - box.left + 12, box.width - 260))}px`;
    this.tip.style.top = `${clientY - box.top + 14}px`;
  }

  hideTip() {
    this.tip.style.display = "none";
  }

  hover(m, e) {
    if (!this.drawn) return;
    const cell = this.cellAt(m, e);
    if (!cell) return this.hideTip();
    this.showTip(this.cellText(m, ...cell), e.clientX, e.clientY);
  }

  /** A focused map: the arrows move along its cells and read each as a hover does; Escape hides the reading. */
  key(m, e) {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key === "Escape") return this.hideTip();
    if (!moves[e.key] || !this.drawn) return;
    e.preventDefault();
    const [di, dj] = moves[e.key];
    const at = this.cursor[m.name]; // the first key reads the first cell; the next ones move
    const i = at ? Math.min(this.T - 1, Math.max(0, at[0] + di)) : 0;
    const j = at ? Math.min(this.d - 1, Math.max(0, at[1] + dj)) : 0;
    this.cursor[m.name] = [i, j];
    const rect = m.canvas.getBoundingClientRect();
    const L = this.L;
    const x = rect.left + ((L.margin + (j + 0.5) * L.cw) / L.w) * m.canvas.clientWidth;
    const y = rect.top + (((i + 0.5) * L.ch) / L.hh) * m.canvas.clientHeight;
    this.showTip(this.cellText(m, i, j), x, y);
  }

  destroy() {
    window.removeEventListener(FRAME_EVENT, this.onFrame);
    if (this.resized) this.resized.disconnect();
    this.root.remove();
  }
}

/** Draw the inputs and outputs of one element (its data: the header above); returns what its unmounting undoes. */
function mountOutputView({ data, parentElement }) {
  const text = typeof data === "string" ? data : JSON.stringify(data);
  let view = parentElement.__attentionExplorerLive;
  if (!view || view.text !== text) {
    if (view) view.destroy();
    view = new OutputView(parentElement, JSON.parse(text));
    view.text = text; // the same input keeps its view
    parentElement.__attentionExplorerLive = view;
  }
  return () => {
    view.destroy();
    delete parentElement.__attentionExplorerLive;
  };
}

window.__attentionExplorerLiveMount = mountQueued; // feed.js: the elements sync.js hands over from now on
mountQueued(); // and those that arrived before this module loaded (its last part: every view is defined)
