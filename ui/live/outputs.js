// Inputs and outputs, live: X and Z = concat_h(A_h V_h) W_o drawn by the browser on one colour scale, each Z
// following the weights the maps draw (maps.js's LiveView announces every frame) while a control moves. The
// Playground draws X and Z; Compare A's Z, B's Z and B − A. Part of the maps' module (ui/live/__init__.py joins the
// files); its element carries sync.js, which hands it here. Python draws it only where every map is small enough to
// be drawn cell by cell (ui.draw.charts.is_vector), and X, V and W_o travel in the maps' feed once per input, as
// the scores.
//
// Data (JSON text, from ui/live/__init__.py's live_outputs): nothing a release changes.
//   sync     the maps' key: their feed brings the arrays, their frames the weights
//   scores   the key of the scores the maps draw: only their frames are these inputs'
//   runs     {panel name: {rows, d, H, dk, arrays}} the input of each of the maps' panels: its token labels (drawn
//            as canvas text, never as HTML), d_model, the heads, d_k = d / H, and the keys of X (1, T, d),
//            V (H, T, d_k) and W_o (1, d, d) among the feed's arrays
//   maps     [{kind, panel, base, title, value}] what to draw, in order: "x" (the panel's input X), "z" (its Z) or
//            "diff" (Z of panel − Z of base); the title; what a cell's value is called in the hover
//   legend, scope   the legend's words: what the values are ("x and z") and what its one scale covers
//   lut_diverging   256 x [r, g, b], blue (negative) to red (positive), as the server's images use

const OUT_CELL_MAX = 28; // px of a cell's height at the most (a short sentence's rows)
const OUT_HEIGHT = 224; // px the rows of a map take when their cells are not at their largest
const OUT_LABEL_PX = 18; // px from one drawn dim label to the next, at least
const OUT_MARGIN = 44; // px left of a map for the token labels
const OUT_BOTTOM = 16; // px under a map for the dim labels
const OUT_GAP = 28; // px between two maps of a row (.ae-panels' column gap)

class OutputView {
  constructor(parent, header) {
    this.parent = parent;
    this.h = header;
    this.syncKey = header.sync;
    this.frames = 0;
    // one entry per panel the maps need: its input's sizes, its arrays once here, and Z drawn now
    this.runs = {};
    for (const [name, r] of Object.entries(header.runs)) {
      const T = r.rows.length;
      this.runs[name] = { ...r, name, T, Z: new Float64Array(T * r.d), C: new Float64Array(T * r.d), X: null };
    }
    this.lim = 1;
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
    // the maps drew these inputs before this view was mounted (a body rerun); not a frame still to come
    if (view && view.frames > 0 && !view.raf) this.take(view);
  }

  /** Z of the first map of a Z (the Playground's one; read by the tests as the page's output). */
  get Z() {
    const m = this.maps.find((q) => q.kind === "z");
    return m ? this.runs[m.panel].Z : null;
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
    this.maps = this.h.maps.map((spec) => {
      const fig = el("figure", { class: "ae-map" }, row);
      const caption = el("figcaption", { class: "ae-title", text: spec.title }, fig);
      const canvas = el(
        "canvas",
        { role: "img", tabindex: "0", "aria-keyshortcuts": "ArrowUp ArrowDown ArrowLeft ArrowRight Escape" },
        fig,
      );
      const axes = el("div", { class: "ae-figures" }, fig);
      const run = this.runs[spec.panel];
      const m = { ...spec, name: spec.value, run, T: run.T, d: run.d, fig, caption, canvas, axes, cursor: null };
      m.values = spec.kind === "diff" ? new Float64Array(run.T * run.d) : null; // x and z: the run's own arrays
      canvas.addEventListener("mousemove", (e) => this.hover(m, e));
      canvas.addEventListener("mouseleave", () => this.hideTip());
      canvas.addEventListener("blur", () => this.hideTip());
      canvas.addEventListener("keydown", (e) => this.key(m, e));
      return m;
    });
    this.tip = el("div", { class: "ae-tip", role: "status" }, root);
    this.parent.appendChild(root);
  }

  /** X, V and W_o of every input from the maps' feed (feed.js keeps them with the scores), once all are here. */
  arrays() {
    const held = (window.__attentionExplorerLiveScores || {})[this.syncKey];
    for (const r of Object.values(this.runs)) {
      if (r.X) continue;
      const [X, V, Wo] = [r.arrays.x, r.arrays.v, r.arrays.wo].map((k) => held && held.arrays[k]);
      if (!X || !V || !Wo) return false;
      [r.X, r.V, r.Wo] = [X, V, Wo];
      r.xmax = 0;
      for (const x of X) r.xmax = Math.max(r.xmax, Math.abs(x));
    }
    return true;
  }

  /** The weights the maps drew this frame (one frame carries every panel): each panel's Z, the differences, then
   *  every map on one scale, the largest |value| of the maps other than a difference. */
  take(view) {
    // the maps of other inputs (a full run's new maps draw before the old outputs are replaced) are not ours
    if (view.key !== this.h.scores || !view.settled) return;
    const panels = {};
    for (const r of Object.values(this.runs)) {
      const p = view.panels.find((q) => q.name === r.name);
      if (!p || !p.S || p.Tq !== r.T || p.H !== r.H) return;
      panels[r.name] = p;
    }
    if (!this.arrays()) return; // not before the arrays of every panel are here
    const zs = new Set(this.maps.flatMap((m) => (m.kind === "x" ? [] : m.kind === "z" ? [m.panel] : [m.panel, m.base])));
    for (const name of zs) this.compute(this.runs[name], panels[name].A);
    let lim = 0;
    for (const m of this.maps) {
      if (m.kind === "diff") {
        const [b, a] = [this.runs[m.panel].Z, this.runs[m.base].Z];
        for (let k = 0; k < m.values.length; k++) m.values[k] = b[k] - a[k];
      } else {
        lim = Math.max(lim, m.kind === "x" ? m.run.xmax : m.run.zmax);
      }
    }
    this.lim = lim || 1; // as the page's caption: one scale for the maps, a difference on it
    const first = this.maps.find((m) => m.kind !== "x") || this.maps[0];
    this.setting = { ...panels[first.panel].setting };
    this.draw();
  }

  /** Z = concat_h(A_h V_h) W_o of one input, in float64 sums (attention_core's output, from float32 weights and
   *  arrays). */
  compute(r, A) {
    const { T, d, C, Z, V, Wo, H, dk } = r;
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
    r.zmax = zmax;
  }

  /** The maps' layout for the root's width now: side by side while they fit with cells at least 2 px wide (all of
   *  them, else as many as fit, the others wrapping below), else one above the other; one cell width and height for
   *  every map, so that a cell of A's Z and the same cell of B's are the same size. */
  fit() {
    const room = this.root.clientWidth || 600;
    const big = this.h.projector ? 1.5 : 1; // the class reads the maps from the back of the room
    const margin = Math.round(OUT_MARGIN * big);
    const least = this.maps.map((m) => margin + 2 * m.d + 8).sort((a, b) => b - a); // the widest first
    let perRow = this.maps.length;
    while (perRow > 1 && least.slice(0, perRow).reduce((a, b) => a + b, 0) + OUT_GAP * (perRow - 1) > room) perRow--;
    const figW = Math.min(Math.floor((room - OUT_GAP * (perRow - 1)) / perRow), Math.round(460 * big));
    const d = Math.max(...this.maps.map((m) => m.d));
    const T = Math.max(...this.maps.map((m) => m.T));
    const cw = Math.max(1, Math.floor((figW - margin - 8) / d));
    const most = Math.round(OUT_CELL_MAX * big);
    const ch = Math.max(Math.min(most, Math.floor((OUT_HEIGHT * big) / T)), Math.min(cw, most), 3);
    let every = 1;
    while (every * cw < OUT_LABEL_PX) every *= 2;
    const font = Math.round(11 * big);
    for (const m of this.maps) {
      const labelled = m.T <= 16 && ch >= 9;
      m.L = { cw, ch, every, labelled, font, margin, w: margin + cw * m.d + 4, hh: ch * m.T + OUT_BOTTOM + font - 11 };
    }
  }

  values(m) {
    return m.kind === "x" ? m.run.X : m.kind === "z" ? m.run.Z : m.values;
  }

  draw() {
    this.drawn = true;
    this.wait.hidden = true;
    this.width = this.root.clientWidth;
    this.fit();
    const lut = this.h.lut_diverging;
    const lim = this.lim;
    for (const m of this.maps) {
      const { L, T, d } = m;
      const v = this.values(m);
      const box = { w: L.w, hh: L.hh, x: L.margin, y: 0, cw: L.cw, ch: L.ch };
      // a difference may reach twice the scale: its colour stops at the scale's ends, as the server's charts
      const ctx = paintCells(m.canvas, box, T, d, (k) => lut[Math.round(Math.min(1, Math.max(0, (v[k] + lim) / (2 * lim))) * 255)]);
      this.labels(ctx, m);
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

  labels(ctx, m) {
    const L = m.L;
    ctx.save();
    ctx.fillStyle = getComputedStyle(this.root).color || "#1f2430";
    ctx.font = `${L.font}px sans-serif`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    if (L.labelled) m.run.rows.forEach((t, i) => ctx.fillText(short(t), L.margin - 4, (i + 0.5) * L.ch));
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (let j = 0; j < m.d; j += L.every) ctx.fillText(String(j + 1), L.margin + (j + 0.5) * L.cw, m.T * L.ch + 3);
    ctx.restore();
  }

  drawLegend() {
    paintRamp(this.legendBar, this.h.lut_diverging);
    const lim = fmt(this.lim);
    this.legendText.textContent = `${this.h.legend}: −${lim} (blue) to ${lim} (red), ${this.h.scope}`;
  }

  /** A map's text alternative, from the numbers drawn: its size and where its largest and smallest values are. */
  describe(m, v) {
    let hi = 0;
    let lo = 0;
    for (let k = 1; k < v.length; k++) {
      if (v[k] > v[hi]) hi = k;
      if (v[k] < v[lo]) lo = k;
    }
    const at = (k) => `token '${m.run.rows[Math.floor(k / m.d)]}' and dim ${(k % m.d) + 1}`;
    return (
      `${m.title}: ${m.T} x ${m.d} map of ${m.name} (token by dim); the largest, ${fmt(v[hi])}, at ${at(hi)}; ` +
      `the smallest, ${fmt(v[lo])}, at ${at(lo)}`
    );
  }

  cellText(m, i, j) {
    return `${m.title} · token ${m.run.rows[i]} (#${i + 1}) · dim ${j + 1}: ${m.name} = ${fmt(this.values(m)[i * m.d + j])}`;
  }

  cellAt(m, e) {
    const L = m.L;
    const rect = m.canvas.getBoundingClientRect();
    const x = ((e.clientX - rect.left - m.canvas.clientLeft) / m.canvas.clientWidth) * L.w - L.margin;
    const y = ((e.clientY - rect.top - m.canvas.clientTop) / m.canvas.clientHeight) * L.hh;
    const i = Math.floor(y / L.ch);
    const j = Math.floor(x / L.cw);
    return i >= 0 && j >= 0 && i < m.T && j < m.d ? [i, j] : null;
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
    const at = m.cursor; // the first key reads the first cell; the next ones move
    const i = at ? Math.min(m.T - 1, Math.max(0, at[0] + di)) : 0;
    const j = at ? Math.min(m.d - 1, Math.max(0, at[1] + dj)) : 0;
    m.cursor = [i, j];
    const rect = m.canvas.getBoundingClientRect();
    const L = m.L;
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
