// Live attention maps: a Streamlit custom component (v2) that redraws attention weights in the browser while a
// control moves, and reports the value to Python on release. Python stays the source of truth for every
// number a sentence states; this module only draws the formula of softmax.js (prepended to it by
// ui/live/__init__.py) for the values under the learner's thumb.
//
// Data (JSON text, from ui/live/__init__.py): nothing a release changes, so that Streamlit sends the same element
// as a reference from the second run on. The scores and the settings arrive through the maps' feed (feed.js):
//   key      the key of the scores (a digest of the numbers and the labels) that the feed delivers
//   sync     the key the feeds of these maps arrive under (ui/live/feed.js)
//   scores   [{key, H, Tq, Tk}] the key (a digest of its numbers) and shape of each score array
//   panels   [{name, title, scores (index), dk, rows, cols, heads (null = all, "picked"), controls, bars, mask,
//            size}]:
//            a panel is one setting drawn (Compare's A and B); rows / cols are token labels, drawn as canvas
//            text, never as HTML; its setting (from the feed) = {temperature, scaled, mask, pad, head, query,
//            stretch}
//   shared   controls in the common bar, moving every panel at once (Masks: the temperature and pad count)
//   diff     ["A", "B"] to draw B − A of the picked heads (same shape only), or null
//   lut, lut_diverging   256 x [r, g, b] colour tables (viridis; blue-white-red), as the server's images use
//   size     CSS px of a map
// The maps draw once they hold the scores of their key and a setting; a feed naming scores that this page does not
// hold (a reconnect lost them, a newer run dropped the feed that carried them) makes them ask for them (`need`).

const FRAME_EVENT = "attention-explorer-live-frame"; // a LiveView drew a frame (outputs.js follows it)
const headName = (h) => `head ${h + 1}`; // as the pages name a head (ui.text.head_name)
const MAX_LABELLED = 16; // up to this many tokens a map has token labels and its cells are at least 12 px
const LABEL_CHARS = 6;
const TOP_BARS = 20; // above MAX_BARS keys only the largest weights are drawn as bars
const MAX_BARS = 64;
const MIN_CELL = 12; // px of a labelled map's cell, at the least, when the maps shrink to share one row
const MIN_SIDE = 96; // px of an unlabelled map, at the least, when the maps shrink to share one row
const MAP_GAP = 12; // px between two maps of a panel (.ae-grid's gap in live.css)
const BORDER = 2; // px of a map canvas's border (live.css)
const FIG_MIN = 150; // px of a map's figure at the least (its title and figures wrap inside it)
const BAR_STEP = 72; // px a bar takes at most (its slot; the bar itself is at most 60 px of it)
const BLANK = [225, 225, 225]; // masked cells (also hatched when they are large enough to show it)
const MASKS = ["none", "causal", "padding", "causal+padding"];
const MASK_NAMES = {
  none: "none",
  causal: "causal (no peeking ahead)",
  padding: "padding (last keys are pads)",
  "causal+padding": "causal + padding",
};

const short = (t) => (t.length <= LABEL_CHARS ? t : t.slice(0, LABEL_CHARS - 1) + "…");
const round3 = (x) => Number(x.toPrecision(3));
const padded = (mask) => mask === "padding" || mask === "causal+padding";

function el(tag, attrs = {}, parent = null) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  if (parent) parent.appendChild(node);
  return node;
}

/** A bar of controls (temperature, scaling, mask, pad count) that moves the settings of some panels. */
class ControlBar {
  constructor(view, parent, names, panels, label) {
    this.view = view;
    this.panels = panels; // the panels this bar moves
    const box = el("div", { class: "ae-controls", role: "group", "aria-label": `${label} controls` }, parent);
    const tag = label ? ` (${label})` : "";
    if (names.includes("temperature")) {
      const lab = el("label", { class: "ae-control ae-temperature" }, box);
      el("span", { text: `temperature τ${tag}` }, lab);
      this.tau = el(
        "input",
        { type: "range", min: "-1", max: "1", step: "0.01", "aria-label": `temperature τ${tag} (live), 0.1 to 10` },
        lab,
      );
      this.tauText = el("output", { class: "ae-value" }, lab);
      this.tau.addEventListener("pointerdown", () => (view.dragging = true));
      this.tau.addEventListener("input", () => {
        this.set({ temperature: round3(10 ** Number(this.tau.value)) });
        this.showTau();
      });
      this.tau.addEventListener("change", () => view.release("temperature"));
    }
    if (names.includes("scaled")) {
      const lab = el("label", { class: "ae-control" }, box);
      this.scaled = el("input", { type: "checkbox", "aria-label": `scale by 1/√d_k${tag} (live)` }, lab);
      el("span", { text: `scale by 1/√d_k${tag}` }, lab);
      this.scaled.addEventListener("change", () => {
        this.set({ scaled: this.scaled.checked });
        view.release("scaled");
      });
    }
    if (names.includes("mask")) {
      const lab = el("label", { class: "ae-control" }, box);
      el("span", { text: `mask${tag}` }, lab);
      this.mask = el("select", { "aria-label": `mask${tag} (live)` }, lab);
      for (const m of MASKS) el("option", { value: m, text: MASK_NAMES[m] }, this.mask);
      this.mask.addEventListener("change", () => {
        this.set({ mask: this.mask.value });
        this.sync();
        view.release("mask");
      });
    }
    if (names.includes("mask") || names.includes("pad")) {
      this.padBox = el("label", { class: "ae-control ae-pad" }, box);
      el("span", { text: `pad count${tag}` }, this.padBox);
      const Tk = Math.max(...panels.map((p) => p.Tk));
      this.pad = el("input", { type: "range", min: "0", max: String(Tk), step: "1", "aria-label": `pad count${tag} (live)` }, this.padBox);
      this.padText = el("output", { class: "ae-value" }, this.padBox);
      this.padAlways = names.includes("pad");
      this.pad.addEventListener("pointerdown", () => (view.dragging = true));
      this.pad.addEventListener("input", () => {
        this.set({ pad: Number(this.pad.value) });
        this.padText.textContent = this.pad.value;
      });
      this.pad.addEventListener("change", () => view.release("pad"));
    }
  }

  set(values) {
    for (const p of this.panels) Object.assign(p.setting, values);
    this.view.schedule();
  }

  showTau() {
    const t = this.panels[0].setting.temperature;
    this.tauText.textContent = String(t);
    this.tau.setAttribute("aria-valuetext", `temperature ${t}`);
  }

  /** Show the panels' setting (after Python sent one, or the mask changed what is offered). */
  sync() {
    const s = this.panels[0].setting;
    if (this.tau && !this.view.dragging) {
      this.tau.value = String(Math.round(Math.log10(s.temperature) * 100) / 100);
      this.showTau();
    }
    if (this.scaled) this.scaled.checked = !!s.scaled;
    if (this.mask) this.mask.value = s.mask;
    if (this.pad) {
      this.padBox.style.display = this.padAlways || padded(s.mask) ? "" : "none";
      if (!this.view.dragging) this.pad.value = String(s.pad);
      this.padText.textContent = String(s.pad);
    }
  }
}

/** One setting drawn: its scores, its weights for the setting under the thumb, and a map per head shown. */
/** Size `canvas` to box.w x box.hh CSS px and draw an nr x nc map on it, one pixel a cell coloured by `colour(k)`
 * (an [r, g, b]), scaled to box.cw x box.ch px a cell at (box.x, box.y); returns its 2-D context, for the labels. */
function paintCells(canvas, box, nr, nc, colour) {
  const dpr = window.devicePixelRatio || 1;
  if (canvas.width !== Math.round(box.w * dpr) || canvas.height !== Math.round(box.hh * dpr)) {
    canvas.width = Math.round(box.w * dpr);
    canvas.height = Math.round(box.hh * dpr);
    canvas.style.width = `${box.w}px`;
    canvas.style.height = `${box.hh}px`;
  }
  if (!canvas.__pixels || canvas.__pixels.width !== nc || canvas.__pixels.height !== nr) {
    canvas.__pixels = Object.assign(document.createElement("canvas"), { width: nc, height: nr });
    canvas.__image = new ImageData(nc, nr);
  }
  const px = canvas.__image.data; // (nr, nc, 4) RGBA
  for (let k = 0; k < nr * nc; k++) {
    const rgb = colour(k);
    px[4 * k] = rgb[0];
    px[4 * k + 1] = rgb[1];
    px[4 * k + 2] = rgb[2];
    px[4 * k + 3] = 255;
  }
  canvas.__pixels.getContext("2d").putImageData(canvas.__image, 0, 0);
  const ctx = canvas.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, box.w, box.hh);
  ctx.imageSmoothingEnabled = box.cw < 1;
  ctx.imageSmoothingQuality = "high";
  ctx.drawImage(canvas.__pixels, box.x, box.y, box.cw * nc, box.ch * nr);
  return ctx;
}

/** A legend's ramp: the 256 colours of `lut` across its 160 x 10 canvas. */
function paintRamp(canvas, lut) {
  const c = canvas.getContext("2d");
  for (let x = 0; x < 160; x++) {
    const [r, g, b] = lut[Math.round((x / 159) * 255)];
    c.fillStyle = `rgb(${r},${g},${b})`;
    c.fillRect(x, 0, 1, 10);
  }
}

class Panel {
  constructor(view, spec, shape) {
    this.view = view;
    this.name = spec.name;
    this.spec = spec;
    this.S = null; // (H, Tq, Tk) the raw scores, once the feed has delivered them
    this.H = shape.H;
    this.Tq = shape.Tq;
    this.Tk = shape.Tk;
    this.setting = { temperature: 1, scaled: true, mask: "none", pad: 0, head: 0, query: 0, stretch: false };
    this.A = new Float32Array(this.H * this.Tq * this.Tk); // (H, Tq, Tk) the weights drawn now
    this.mask = null;
  }

  heads() {
    return this.spec.heads === null ? [...Array(this.H).keys()] : [Math.min(this.setting.head, this.H - 1)];
  }

  compute() {
    const s = this.setting;
    const kind = this.spec.mask || s.mask; // a panel may show one mask whatever the setting (Masks' rows)
    this.mask = kind === "none" ? null : buildMask(kind, s.pad, this.Tq, this.Tk);
    attentionWeights(this.S, this.H, this.Tq, this.Tk, this.spec.dk, s.scaled, s.temperature, this.mask, this.A);
    this.figures = headFigures(this.A, this.H, this.Tq, this.Tk);
  }

  build(parent) {
    const box = el("section", { class: "ae-panel", "aria-label": this.spec.title || "attention maps" }, parent);
    if (this.spec.title) el("div", { class: "ae-panel-title", text: this.spec.title }, box);
    if (this.spec.controls.length) this.bar = new ControlBar(this.view, box, this.spec.controls, [this], this.name);
    this.grid = el("div", { class: "ae-grid" }, box);
    this.maps = new Map();
    if (this.spec.bars) {
      this.barsBox = el("figure", { class: "ae-bars" }, box);
      this.barsTitle = el("figcaption", { class: "ae-title" }, this.barsBox);
      this.bars = el("canvas", { role: "img" }, this.barsBox);
      this.barsNote = el("div", { class: "ae-figures" }, this.barsBox);
    }
  }

  map(h) {
    if (!this.maps.has(h)) {
      const fig = el("figure", { class: "ae-map" }, this.grid);
      const title = el("figcaption", { class: "ae-title" }, fig);
      const canvas = el(
        "canvas",
        { role: "img", tabindex: "0", "data-head": String(h), "aria-keyshortcuts": "ArrowUp ArrowDown ArrowLeft ArrowRight Enter Escape" },
        fig,
      );
      const figures = el("div", { class: "ae-figures" }, fig);
      canvas.addEventListener("click", (e) => this.pick(h, this.view.cellAt(this, canvas, e)?.[0]));
      canvas.addEventListener("mousemove", (e) => this.view.hover(this, h, canvas, e));
      canvas.addEventListener("mouseleave", () => this.view.hideTip());
      canvas.addEventListener("blur", () => this.view.hideTip());
      canvas.addEventListener("keydown", (e) => this.key(h, e));
      this.maps.set(h, { fig, title, canvas, figures });
    }
    return this.maps.get(h);
  }

  /** Pick a head (and a query row): the page has one head and one query picker, so every panel follows. */
  pick(head, query) {
    for (const p of this.view.panels) {
      p.setting.head = head;
      if (query !== undefined) p.setting.query = Math.min(query, p.Tq - 1);
    }
    this.view.schedule();
    this.view.release("pick");
  }

  /** A focused map: up and down pick the query row; left and right move along its keys and read each cell as a
   * hover does; Enter or Space picks the head; Escape hides the reading. */
  key(h, e) {
    const s = this.setting;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      const q = Math.min(this.Tq - 1, Math.max(0, s.query + (e.key === "ArrowDown" ? 1 : -1)));
      this.pick(h, q);
      if (this.cursor !== undefined) this.view.readCell(this, h, q, this.cursor);
    } else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      e.preventDefault();
      const j = this.cursor === undefined ? 0 : this.cursor + (e.key === "ArrowRight" ? 1 : -1);
      this.cursor = Math.min(this.Tk - 1, Math.max(0, j));
      this.view.readCell(this, h, Math.min(s.query, this.Tq - 1), this.cursor);
    } else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      this.pick(h);
    } else if (e.key === "Escape") {
      this.view.hideTip();
    }
  }

  draw(lo, hi, top) {
    const shown = new Set(this.heads());
    for (const [h, m] of this.maps) m.fig.style.display = shown.has(h) ? "" : "none";
    for (const h of shown) this.view.drawMap(this, h, this.map(h), lo, hi);
    if (this.bars) this.view.drawBars(this, top);
  }
}

class LiveView {
  constructor(parent, header, setStateValue, setTriggerValue) {
    this.parent = parent;
    this.report = setStateValue;
    this.trigger = setTriggerValue;
    this.settled = false; // a setting has arrived (until then, and until the scores have, nothing is drawn)
    this.asked = -1; // the feed (its rev) after which the maps last asked for their scores
    this.frames = 0;
    this.frameTimes = [];
    this.dragging = false;
    this.raf = 0;
    this.key = header.key;
    this.syncKey = header.sync;
    this.h = header;
    this.rev = 0;
    this.panels = header.panels.map((spec) => new Panel(this, spec, header.scores[spec.scores]));
    this.build();
    this.onSync = (e) => {
      if (e.detail && e.detail.key === this.syncKey) this.feed(e.detail);
    };
    window.addEventListener(SYNC_EVENT, this.onSync);
    // the views that follow these maps' weights (outputs.js) find them here, and hear of every frame drawn
    (window.__attentionExplorerLiveViews = window.__attentionExplorerLiveViews || {})[this.syncKey] = this;
    // the maps shrink to share one row of the root's width, and the bars take it: redraw when it changes
    this.width = 0;
    if (typeof ResizeObserver === "function") {
      this.resized = new ResizeObserver(() => {
        if (this.root.clientWidth !== this.width) this.schedule();
      });
      this.resized.observe(this.root);
    }
    this.takeScores();
    const kept = (window.__attentionExplorerLiveSync || {})[this.syncKey];
    if (kept) this.feed(kept); // the feed of this run, if it came first (feed.js keeps it until it is unmounted)
    this.schedule();
  }

  /** The scores of this view's key, if the page holds them (feed.js keeps the arrays the last feed named). */
  takeScores() {
    const held = (window.__attentionExplorerLiveScores || {})[this.syncKey];
    const S = this.h.scores.map((s) => held && held.arrays[s.key]);
    if (S.some((x) => !x)) return false;
    for (const p of this.panels) p.S = S[p.spec.scores];
    return true;
  }

  /** A feed from Python (a full run's, or a body rerun's): the scores, if it carried them, and the settings. A
   *  feed that names scores of another key belongs to maps not drawn yet; after one that names ours, the page holds
   *  every array it named, or the maps ask for them (the next run sends them). */
  feed(detail) {
    if (detail.scores !== undefined && detail.scores !== this.key) return;
    const ready = this.panels.every((p) => p.S) || this.takeScores();
    if (!ready && detail.scores === this.key && this.asked < detail.rev) {
      this.asked = detail.rev;
      this.wait.textContent = "Fetching the attention scores again…";
      this.trigger("need", this.key);
    }
    this.receive(detail.panels, detail.rev);
  }

  /** Settings by panel name: taken unless the learner is dragging (their thumb wins until they let go). */
  receive(settings, rev) {
    if (rev < this.rev || this.dragging) return;
    this.rev = rev;
    this.settled = true;
    for (const p of this.panels) if (settings[p.name]) Object.assign(p.setting, settings[p.name]);
    this.syncControls();
    this.schedule();
  }

  build() {
    const root = el("div", { class: this.h.projector ? "ae-live ae-projector" : "ae-live", "data-frames": "0" });
    this.root = root;
    this.wait = el("p", { class: "ae-wait", role: "status", text: "Loading the attention scores…" }, root);
    const top = el("div", { class: "ae-top" }, root);
    if (this.h.shared.length) this.bar = new ControlBar(this, top, this.h.shared, this.panels, "");
    this.legend = el("div", { class: "ae-legend" }, top);
    this.legendBar = el("canvas", { width: "160", height: "10", "aria-hidden": "true" }, this.legend);
    this.legendText = el("span", { class: "ae-legend-text" }, this.legend);
    const row = el("div", { class: this.panels.length === 1 && !this.h.diff ? "ae-panels ae-single" : "ae-panels" }, root);
    for (const p of this.panels) p.build(row);
    if (this.h.diff) {
      const fig = el("figure", { class: "ae-panel ae-diff" }, row);
      this.diffTitle = el("figcaption", { class: "ae-panel-title" }, fig);
      this.diffCanvas = el("canvas", { role: "img", tabindex: "0" }, fig);
      this.diffNote = el("div", { class: "ae-figures" }, fig);
      this.diffCanvas.addEventListener("mousemove", (e) => this.hoverDiff(e));
      this.diffCanvas.addEventListener("mouseleave", () => this.hideTip());
    }
    this.tip = el("div", { class: "ae-tip", role: "status" }, root);
    this.parent.appendChild(root);
    this.syncControls();
  }

  syncControls() {
    if (this.bar) this.bar.sync();
    for (const p of this.panels) if (p.bar) p.bar.sync();
  }

  /** The values go back to Python (one rerun), which makes them the page's setting. */
  release(what) {
    this.dragging = false;
    const panels = {};
    for (const p of this.panels) {
      const s = p.setting;
      panels[p.name] = {
        temperature: s.temperature,
        scaled: !!s.scaled,
        mask: s.mask,
        pad: s.pad,
        head: s.head,
        query: s.query,
      };
    }
    this.report("setting", { panels, changed: what });
  }

  schedule() {
    if (!this.raf) this.raf = requestAnimationFrame(() => this.draw());
  }

  /** Recompute every panel's weights for the settings under the thumb and draw them on one colour scale. */
  draw() {
    this.raf = 0;
    if (!this.settled || !this.panels.every((p) => p.S)) return; // not before the scores and a setting are here
    this.wait.hidden = true;
    this.width = this.root.clientWidth;
    for (const p of this.panels) {
      p.compute();
      p.L = this.fit(p); // the layout drawn, which the pointer's and the keyboard's cells are read against
    }
    const stretch = this.panels.some((p) => p.setting.stretch);
    let [lo, hi, stretched] = [0, 1, false];
    if (stretch) {
      // the shared scale of every head shown: one sample of all of them, as ui.draw.charts.weight_scale
      const parts = this.panels.flatMap((p) => p.heads().map((h) => [p, h]));
      const n = parts.reduce((a, [p]) => a + p.Tq * p.Tk, 0);
      const all = new Float32Array(n);
      const masks = new Uint8Array(n);
      let o = 0;
      for (const [p, h] of parts) {
        const size = p.Tq * p.Tk;
        all.set(p.A.subarray(h * size, (h + 1) * size), o);
        if (p.mask) masks.set(p.mask, o);
        else masks.fill(1, o, o + size);
        o += size;
      }
      [lo, hi, stretched] = colourScale(all, 1, 1, n, masks, true);
    }
    for (const p of this.panels) p.draw(lo, hi, stretched ? hi : 1);
    if (this.h.diff) this.drawDiff(stretched);
    this.drawLegend(lo, hi, stretched);
    this.frames += 1;
    this.frameTimes.push(performance.now()); // when each frame was drawn (benchmarks/browser_feel.py reads them)
    if (this.frameTimes.length > 600) this.frameTimes.splice(0, 300);
    this.root.dataset.frames = String(this.frames);
    this.root.dataset.temperature = String(this.panels[0].setting.temperature);
    window.dispatchEvent(new CustomEvent(FRAME_EVENT, { detail: { sync: this.syncKey, view: this } }));
  }

  /** A panel's maps as drawn last (cell size, label margins, canvas size in CSS px): drawing, the pointer's
   * cellAt and the keyboard's cellPoint all read this one layout. */
  layout(p) {
    return p.L || this.fit(p);
  }

  /** The layout of a panel's maps for the root's width now: the panel's size, shrunk when that lets all its maps
   * share one row (a labelled map keeps cells of at least MIN_CELL px, an unlabelled one a side of MIN_SIDE px);
   * when even that does not fit, they keep their size and wrap. The projector view keeps its larger maps. */
  fit(p) {
    const T = Math.max(p.Tq, p.Tk);
    const labelled = p.Tq <= MAX_LABELLED && p.Tk <= MAX_LABELLED;
    const margin = labelled ? 40 : 0;
    const right = labelled ? 18 : 0; // the last key's label leans out to the right
    // whole pixels a cell while the map fits (crisp), else a fraction (the browser averages the cells)
    const cellOf = (side) => (labelled ? Math.max(MIN_CELL, Math.floor(side / T)) : T <= side ? Math.floor(side / T) : side / T);
    let cell = cellOf(p.spec.size || this.h.size);
    const n = p.heads().length;
    const room = this.root ? this.root.clientWidth : 0;
    const rowWidth = (c) => n * Math.max(FIG_MIN, margin + c * p.Tk + right + 2 * BORDER) + (n - 1) * MAP_GAP;
    if (room > 0 && !this.h.projector && rowWidth(cell) > room) {
      const side = Math.floor((room - (n - 1) * MAP_GAP) / n) - 2 * BORDER - margin - right; // px for T cells
      if (labelled ? Math.floor(side / T) >= MIN_CELL : side >= MIN_SIDE) cell = Math.min(cell, cellOf(side));
    }
    const w = margin + cell * p.Tk + right;
    return { labelled, cell, margin, w, hh: margin + cell * p.Tq, fig: Math.max(FIG_MIN, w + 2 * BORDER) };
  }

  paint(canvas, L, rows, cols, colour) {
    const box = { w: L.w, hh: L.hh, x: L.margin, y: L.margin, cw: L.cell, ch: L.cell };
    const ctx = paintCells(canvas, box, rows.length, cols.length, colour);
    if (L.labelled) this.labels(ctx, L, rows, cols);
    return ctx;
  }

  drawMap(p, h, m, lo, hi) {
    const { Tq, Tk, A, mask } = p;
    const L = this.layout(p);
    const lut = this.h.lut;
    const span = hi - lo || 1;
    const base = h * Tq * Tk;
    const ctx = this.paint(m.canvas, L, p.spec.rows, p.spec.cols, (k) =>
      mask && !mask[k] ? BLANK : lut[Math.round(Math.min(1, Math.max(0, (A[base + k] - lo) / span)) * 255)],
    );
    if (mask && L.cell >= 6) this.hatch(ctx, mask, L, Tq, Tk);
    const picked = h === Math.min(p.setting.head, p.H - 1);
    if (picked && p.spec.bars) {
      ctx.strokeStyle = "#c0392b";
      ctx.lineWidth = 2;
      const r = Math.min(p.setting.query, Tq - 1);
      ctx.strokeRect(L.margin + 1, L.margin + r * L.cell + 1, L.cell * Tk - 2, Math.max(L.cell - 2, 1));
    }
    m.fig.classList.toggle("ae-picked", picked && p.spec.bars);
    m.fig.style.width = `${L.fig}px`; // the map's width: its title and figures wrap under it, not widen it
    const q = p.spec.rows[Math.min(p.setting.query, Tq - 1)];
    m.title.textContent = headName(h) + (picked && p.spec.bars ? ` · picked, query ${q}` : "");
    const f = p.figures[h];
    // no break before a "·" or inside "1.43 nats" when the figures wrap under a narrow map
    m.figures.textContent = `max ${fmt(f.maxWeight)}\u00a0· entropy ${fmt(f.entropy)}\u00a0nats\u00a0· ${fmt(f.effectiveTokens)}\u00a0tokens`;
    m.canvas.setAttribute("aria-label", this.describe(p, h, f));
  }

  /** Masked cells get a diagonal hatch on the grey, so that they differ from low weights by pattern too. */
  hatch(ctx, mask, L, Tq, Tk) {
    ctx.save();
    ctx.strokeStyle = "rgba(90, 90, 90, 0.55)";
    ctx.lineWidth = 1;
    ctx.beginPath();
    for (let i = 0; i < Tq; i++) {
      for (let j = 0; j < Tk; j++) {
        if (mask[i * Tk + j]) continue;
        const x = L.margin + j * L.cell;
        const y = L.margin + i * L.cell;
        ctx.moveTo(x + 1, y + L.cell - 1);
        ctx.lineTo(x + L.cell - 1, y + 1);
      }
    }
    ctx.stroke();
    ctx.restore();
  }

  labels(ctx, L, rows, cols) {
    ctx.save();
    ctx.fillStyle = getComputedStyle(this.root).color || "#1f2430";
    ctx.font = `${Math.min(11, L.cell - 1)}px sans-serif`;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    rows.forEach((t, i) => ctx.fillText(short(t), L.margin - 3, L.margin + (i + 0.5) * L.cell));
    ctx.textAlign = "left";
    cols.forEach((t, j) => {
      ctx.save();
      ctx.translate(L.margin + (j + 0.5) * L.cell, L.margin - 3);
      ctx.rotate(-Math.PI / 3);
      ctx.fillText(short(t), 0, 0);
      ctx.restore();
    });
    ctx.restore();
  }

  /** A map's text alternative: what it shows for the setting drawn, from the numbers drawn. */
  describe(p, h, f) {
    const { Tq, Tk, A } = p;
    const i = Math.min(p.setting.query, Tq - 1);
    const row = A.subarray((h * Tq + i) * Tk, (h * Tq + i + 1) * Tk);
    let top = 0;
    for (let j = 1; j < Tk; j++) if (row[j] > row[top]) top = j;
    const q = p.spec.rows[i];
    const where =
      row[top] > 0 ? `query '${q}' attends most to '${p.spec.cols[top]}', ${fmt(row[top])}` : `query '${q}' may attend to no key`;
    const name = p.spec.title ? `${p.spec.title}, ${headName(h)}` : headName(h);
    return `${name}: ${Tq} x ${Tk} weights; ${where}; mean max weight ${fmt(f.maxWeight)}`;
  }

  /** The drawing's box on screen: the canvas less its border (live.css gives it a transparent 2 px one, for the
   * focus ring). Measured with the border, a 1 px cell of a 128-token map was named up to 2 cells off. */
  drawing(canvas) {
    const rect = canvas.getBoundingClientRect();
    return {
      left: rect.left + canvas.clientLeft,
      top: rect.top + canvas.clientTop,
      width: canvas.clientWidth,
      height: canvas.clientHeight,
    };
  }

  cellAt(p, canvas, e) {
    const L = this.layout(p);
    const d = this.drawing(canvas);
    const x = ((e.clientX - d.left) / d.width) * L.w - L.margin;
    const y = ((e.clientY - d.top) / d.height) * L.hh - L.margin;
    const i = Math.floor(y / L.cell);
    const j = Math.floor(x / L.cell);
    return i >= 0 && j >= 0 && i < p.Tq && j < p.Tk ? [i, j] : null;
  }

  /** The point on screen at the centre of cell (i, j): where a keyboard's reading of it shows its tip. */
  cellPoint(p, canvas, i, j) {
    const L = this.layout(p);
    const d = this.drawing(canvas);
    return {
      clientX: d.left + ((L.margin + (j + 0.5) * L.cell) / L.w) * d.width,
      clientY: d.top + ((L.margin + (i + 0.5) * L.cell) / L.hh) * d.height,
    };
  }

  showTip(text, e) {
    const box = this.root.getBoundingClientRect();
    this.tip.textContent = text;
    this.tip.style.display = "block";
    this.tip.style.left = `${Math.max(0, Math.min(e.clientX - box.left + 12, box.width - 260))}px`;
    this.tip.style.top = `${e.clientY - box.top + 14}px`;
  }

  hideTip() {
    this.tip.style.display = "none";
  }

  cellText(p, h, i, j) {
    const blocked = p.mask && !p.mask[i * p.Tk + j];
    const w = p.A[(h * p.Tq + i) * p.Tk + j];
    const name = p.spec.title ? `${p.spec.title}, ${headName(h)}` : headName(h);
    return (
      `${name} · query ${p.spec.rows[i]} (#${i + 1}) → key ${p.spec.cols[j]} (#${j + 1}): ` +
      (blocked ? "masked (weight 0)" : `weight ${fmt(w)}`)
    );
  }

  hover(p, h, canvas, e) {
    const cell = this.cellAt(p, canvas, e);
    if (!cell) return this.hideTip();
    this.showTip(this.cellText(p, h, ...cell), e);
  }

  /** The keyboard's hover: cell (i, j) of head h in the tip (a status region, so a screen reader says it). */
  readCell(p, h, i, j) {
    this.showTip(this.cellText(p, h, i, j), this.cellPoint(p, p.map(h).canvas, i, j));
  }

  /** B − A of the picked heads, on the scale of a weight (−1 to 1) unless the reader stretches. */
  diffValues() {
    const [a, b] = this.h.diff.map((n) => this.panels.find((p) => p.name === n));
    if (a.Tq !== b.Tq || a.Tk !== b.Tk) return null;
    const ha = Math.min(a.setting.head, a.H - 1);
    const hb = Math.min(b.setting.head, b.H - 1);
    const n = a.Tq * a.Tk;
    const d = new Float32Array(n); // (Tq, Tk)
    for (let k = 0; k < n; k++) d[k] = b.A[hb * n + k] - a.A[ha * n + k];
    return { a, b, ha, hb, d };
  }

  drawDiff(stretched) {
    const v = this.diffValues();
    if (!v) {
      this.diffCanvas.style.display = "none";
      this.diffTitle.textContent = "B − A";
      this.diffNote.textContent = "A and B have different numbers of tokens: no difference map.";
      return;
    }
    this.diffCanvas.style.display = "";
    let big = 0;
    for (const x of v.d) big = Math.max(big, Math.abs(x));
    const lim = stretched ? big || 1 : 1;
    const lut = this.h.lut_diverging;
    const L = this.layout(v.a);
    this.paint(this.diffCanvas, L, v.a.spec.rows, v.a.spec.cols, (k) =>
      lut[Math.round(Math.min(1, Math.max(0, (v.d[k] + lim) / (2 * lim))) * 255)],
    );
    this.diffTitle.textContent = `B − A (${headName(v.hb)} − ${headName(v.ha)})`;
    this.diffNote.textContent =
      `Red: B puts more weight there, blue: less, on ±${fmt(lim)}` + (stretched ? " (stretched)" : "") + `. Largest change: ${fmt(big)}.`;
    this.diffCanvas.setAttribute("aria-label", this.describeDiff(v, big));
    this.diffLim = lim;
  }

  /** The difference map's text alternative: its signs in words (colour is not the only signal). */
  describeDiff(v, big) {
    let up = 0;
    let down = 0;
    for (let k = 1; k < v.d.length; k++) {
      if (v.d[k] > v.d[up]) up = k;
      if (v.d[k] < v.d[down]) down = k;
    }
    const cell = (k) => `query ${v.a.spec.rows[Math.floor(k / v.a.Tk)]} to key ${v.a.spec.cols[k % v.a.Tk]}`;
    const gain = v.d[up] > 0 ? `B gains most at ${cell(up)} (+${fmt(v.d[up])})` : "B gains nowhere";
    const loss = v.d[down] < 0 ? `loses most at ${cell(down)} (−${fmt(-v.d[down])})` : "loses nowhere";
    return `B minus A: ${v.a.Tq} x ${v.a.Tk} weight differences, largest change ${fmt(big)}; ${gain}, ${loss}`;
  }

  hoverDiff(e) {
    const v = this.diffValues();
    if (!v) return;
    const cell = this.cellAt(v.a, this.diffCanvas, e);
    if (!cell) return this.hideTip();
    const [i, j] = cell;
    this.showTip(
      `query ${v.a.spec.rows[i]} (#${i + 1}) → key ${v.a.spec.cols[j]} (#${j + 1}): B − A = ${fmt(v.d[i * v.a.Tk + j])}`,
      e,
    );
  }

  drawLegend(lo, hi, stretched) {
    paintRamp(this.legendBar, this.h.lut);
    this.legendText.textContent = stretched
      ? `weight ${fmt(lo)} – ${fmt(hi)} (stretched, one scale for every map)`
      : "weight 0 – 1 (one scale for every map)";
  }

  drawBars(p, top) {
    const { Tq, Tk, A } = p;
    const h = Math.min(p.setting.head, p.H - 1);
    const i = Math.min(p.setting.query, Tq - 1);
    const row = Array.from(A.subarray((h * Tq + i) * Tk, (h * Tq + i + 1) * Tk));
    let order = row.map((_, j) => j);
    let note = "";
    if (Tk > MAX_BARS) {
      order = order.sort((x, y) => row[y] - row[x]).slice(0, TOP_BARS);
      const held = order.reduce((acc, j) => acc + row[j], 0);
      note = `Only the ${TOP_BARS} largest of the ${Tk} weights are drawn, largest first (they hold ${fmt(100 * held)}% of the row).`;
    }
    let best = order[0];
    for (const j of order) if (row[j] > row[best]) best = j;
    const n = order.length;
    const keyLabels = n <= 40 ? order.map((j) => short(p.spec.cols[j]) + (Tk > MAX_BARS ? ` #${j + 1}` : "")) : [];
    // the projector view's text is larger (as .ae-projector's), and so is the chart
    const big = this.h.projector ? 1.5 : 1;
    const fontPx = Math.round(11 * big);
    const font = `${fontPx}px sans-serif`;
    const c = p.bars.getContext("2d");
    c.font = font;
    const widest = (texts) => texts.reduce((a, t) => Math.max(a, c.measureText(t).width), 0);
    const ticks = [top, top / 2, 0];
    const keyWidth = widest(keyLabels) * Math.SQRT1_2; // a key's label, at 45 degrees, reaches this far left
    // the y axis's title, its tick labels and ticks (and the first key's label, leaning left below them)
    const left = Math.ceil(Math.max(fontPx * 1.6 + widest(ticks.map(fmt)) + 8, keyWidth - 8));
    const right = 12;
    const above = Math.ceil(fontPx * 0.8); // half the top tick's label
    const plotH = Math.round(150 * big);
    const below = Math.ceil(keyWidth + fontPx + 6) + Math.ceil(fontPx * 1.6); // the keys' labels, the x title
    // as wide as the room (the panel's width), at most 900 px and BAR_STEP a bar, at least 320 px
    const room = this.root.clientWidth || 640;
    const W = Math.floor(Math.max(Math.min(room, 320), Math.min(room, 900 * big, left + right + n * BAR_STEP * big)));
    const H = above + plotH + below;
    const dpr = window.devicePixelRatio || 1;
    if (p.bars.width !== Math.round(W * dpr) || p.bars.height !== Math.round(H * dpr)) {
      p.bars.width = Math.round(W * dpr);
      p.bars.height = Math.round(H * dpr);
      p.bars.style.width = `${W}px`;
      p.bars.style.height = `${H}px`;
    }
    c.setTransform(dpr, 0, 0, dpr, 0, 0);
    c.clearRect(0, 0, W, H);
    c.font = font;
    const colour = getComputedStyle(this.root).color || "#1f2430";
    const plotW = W - left - right;
    const step = plotW / n;
    const bw = Math.max(1, Math.min(step - 2, step * 0.8, 60 * big));
    const y = (v) => above + plotH * (1 - v); // v: 0 to 1 of the axis
    // the y axis: gridlines and ticks at 0, the middle and the top, their values, its title
    c.fillStyle = colour;
    c.strokeStyle = colour;
    c.lineWidth = 1;
    c.textAlign = "right";
    c.textBaseline = "middle";
    ticks.forEach((t, k) => {
      const ty = Math.round(y(1 - k / 2)) + 0.5;
      c.globalAlpha = 0.18;
      c.beginPath();
      c.moveTo(left, ty);
      c.lineTo(W - right, ty);
      c.stroke();
      c.globalAlpha = 1;
      c.beginPath();
      c.moveTo(left - 4, ty);
      c.lineTo(left, ty);
      c.stroke();
      c.fillText(fmt(t), left - 6, ty);
    });
    c.save();
    c.translate(fontPx * 0.8, above + plotH / 2);
    c.rotate(-Math.PI / 2);
    c.textAlign = "center";
    c.fillText("weight", 0, 0);
    c.restore();
    order.forEach((j, k) => {
      const v = Math.min(row[j] / top, 1);
      c.fillStyle = j === best ? "#c0392b" : "#8aa1c1";
      c.fillRect(left + k * step + (step - bw) / 2, y(v), bw, v * plotH);
    });
    // the x axis: its line, the keys' labels (up to 40 bars), its title
    c.fillStyle = colour;
    c.beginPath();
    c.moveTo(left - 0.5, above);
    c.lineTo(left - 0.5, above + plotH + 0.5);
    c.lineTo(W - right, above + plotH + 0.5);
    c.stroke();
    keyLabels.forEach((t, k) => {
      c.save();
      c.translate(left + (k + 0.5) * step, above + plotH + 6);
      c.rotate(-Math.PI / 4);
      c.textAlign = "right";
      c.textBaseline = "middle";
      c.fillText(t, 0, 0);
      c.restore();
    });
    c.textAlign = "center";
    c.textBaseline = "bottom";
    c.fillText(Tk > MAX_BARS ? `key (the ${TOP_BARS} largest)` : "key", left + plotW / 2, H - 2);
    const q = p.spec.rows[i];
    p.barsTitle.textContent = `weights of query #${i + 1} (${q}) in ${headName(h)}`;
    const sum = row.reduce((a, b) => a + b, 0);
    const say =
      sum > 0
        ? `Query ${q} attends most to ${p.spec.cols[best]} (#${best + 1}) with weight ${fmt(row[best])} (in red).`
        : `Query ${q} may attend to no key under this mask: its weights are all 0.`;
    p.barsNote.textContent = `${say} ${note}`.trim();
    p.bars.setAttribute("aria-label", `${p.barsTitle.textContent}: ${say}`);
  }

  destroy() {
    window.removeEventListener(SYNC_EVENT, this.onSync);
    const views = window.__attentionExplorerLiveViews || {};
    if (views[this.syncKey] === this) delete views[this.syncKey];
    if (this.resized) this.resized.disconnect();
    if (this.raf) cancelAnimationFrame(this.raf);
    this.root.remove();
  }
}

/** Draw the maps of one element (its data: the header above); returns what its unmounting undoes. */
function mountMaps(component) {
  const { data, parentElement, setStateValue, setTriggerValue } = component;
  const text = typeof data === "string" ? data : JSON.stringify(data);
  let view = parentElement.__attentionExplorerLive;
  if (!view || view.text !== text) {
    if (view) view.destroy();
    view = new LiveView(parentElement, JSON.parse(text), setStateValue, setTriggerValue);
    view.text = text; // the same maps (the same scores and layout) keep their view; their feed brings the setting
    parentElement.__attentionExplorerLive = view;
  }
  view.report = setStateValue;
  view.trigger = setTriggerValue;
  return () => {
    view.destroy();
    delete parentElement.__attentionExplorerLive;
  };
}
