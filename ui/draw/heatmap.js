// Heatmaps drawn by the browser: one canvas of cells per map, its labels, titles and legend as text around it.
// A Streamlit custom component (v2); ui/draw/canvas_maps.py sends this module once (an element of its own whose
// bytes never change) and every map as a small element whose stub (heatmap_mount.js) hands its data here.
// LUTS (the 256 colours of "viridis" and "diverging", the server's images' tables) and HM_CSS (heatmap.css) are
// prepended by Python.
//
// Data (JSON text, ui/draw/canvas_maps.heatmap_data): every number a page states is written by Python.
//   title                the map's title ("" for none)
//   rows, cols           the row and column labels, whole (the tooltip's)
//   rowShown, colShown   the axis labels as drawn: shortened, "" where a regular subset skips one
//   rowName, colName     what the rows and the columns are (the tooltip's fields: "query", "key")
//   rowTitle, colTitle   the axis titles (with "every kth labelled"; the column title with the colour note)
//   value                the name of the value (the legend's title, the tooltip's last field)
//   cells                every cell's text in row-major order, joined by spaces, "" for a blank cell
//   colour               (optional) the same cells with the digits the colour needs (a stretched scale)
//   lo, hi, scheme       the colour domain; "viridis", else "diverging" (blue-white-red, white at 0)
//   cw, ch               CSS px of a cell across and down
//   rowFont, colFont     CSS px of the axis labels
//   legend               [[position 0..1, text], ...] of the legend's ramp, or null for none
//   description          the text alternative (the canvas's aria-label)
//   group                the maps drawn on one scale (for the tests)
//   font                 CSS px of the map's text (its title's, axis titles' and legend's sizes are in em of it)

const HM_SEP = " "; // between two cells' texts (ui.text.fmt never writes a space)
const HM_RAMP = 160; // px of the legend's ramp, at the most

function hmEl(tag, cls, parent, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text; // labels are text, never HTML
  if (parent) parent.appendChild(node);
  return node;
}

/** Where `v` falls on the colour scale, 0..1: linear from lo to hi; on a diverging scale that spans 0, each side of
 * 0 on its own half (white at 0), as Vega's domainMid did. */
function hmPosition(v, lo, hi, diverging) {
  let t;
  if (diverging && lo < 0 && hi > 0) t = v <= 0 ? 0.5 * (v - lo) / -lo : 0.5 + 0.5 * (v / hi);
  else t = (v - lo) / (hi - lo || 1);
  return Math.min(1, Math.max(0, t));
}

/** The cells of a map: their texts (`null` for a blank one) and the numbers their colours are read from. */
function hmCells(d) {
  const texts = d.cells.split(HM_SEP);
  const colour = d.colour ? d.colour.split(HM_SEP) : texts;
  const values = new Float64Array(texts.length);
  for (let k = 0; k < texts.length; k++) values[k] = colour[k] === "" ? NaN : Number(colour[k]);
  return { texts: texts.map((t) => (t === "" ? null : t)), values };
}

class Heatmap {
  constructor(parent, d) {
    this.d = d;
    this.nr = d.rows.length;
    this.nc = d.cols.length;
    const { texts, values } = hmCells(d);
    this.texts = texts;
    this.values = values;
    this.cursor = null; // [row, col] read by the keyboard
    const root = (this.root = hmEl("figure", "ae-hm", parent));
    root.style.fontSize = `${d.font}px`;
    if (d.title) hmEl("figcaption", "ae-hm-title", root, d.title);
    const plot = hmEl("div", "ae-hm-plot", hmEl("div", "ae-hm-scroll", root)); // a phone scrolls a wide map
    hmEl("div", "ae-hm-ytitle", plot, d.rowTitle);
    const rows = hmEl("div", "ae-hm-rows", plot);
    const w = d.cw * this.nc;
    const h = d.ch * this.nr;
    rows.style.fontSize = `${d.rowFont}px`;
    for (const t of d.rowShown) {
      const slot = hmEl("span", "", rows, t); // one a row, a row's height: its label centred on it
      slot.style.height = slot.style.lineHeight = `${d.ch}px`;
    }
    this.canvas = hmEl("canvas", "ae-hm-cells", plot);
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("tabindex", "0");
    this.canvas.setAttribute("aria-label", d.description);
    this.canvas.setAttribute("aria-keyshortcuts", "ArrowUp ArrowDown ArrowLeft ArrowRight Escape");
    this.canvas.style.width = `${w}px`;
    this.canvas.style.height = `${h}px`;
    const cols = hmEl("div", "ae-hm-cols", plot);
    cols.style.width = `${w}px`;
    cols.style.fontSize = `${d.colFont}px`;
    d.colShown.forEach((t) => {
      const slot = hmEl("span", "", cols);
      slot.style.width = `${d.cw}px`;
      if (t) hmEl("span", "", slot, t);
    });
    const xtitle = hmEl("div", "ae-hm-xtitle", plot, d.colTitle);
    xtitle.style.maxWidth = `${Math.max(w, 160)}px`; // a long title wraps under the cells, not wider than them
    if (d.legend) this.legend(root, d, w);
    this.tip = hmEl("div", "ae-hm-tip", root);
    this.tip.setAttribute("role", "status");
    this.paint(w, h);
    this.canvas.addEventListener("mousemove", (e) => this.hover(e));
    this.canvas.addEventListener("click", (e) => this.hover(e)); // a tap on a phone reads its cell too
    this.canvas.addEventListener("mouseleave", () => this.hide());
    this.canvas.addEventListener("blur", () => this.hide());
    this.canvas.addEventListener("keydown", (e) => this.key(e));
  }

  colourOf(v) {
    return LUTS[this.d.scheme][Math.round(hmPosition(v, this.d.lo, this.d.hi, this.d.scheme === "diverging") * 255)];
  }

  /** One pixel a cell on a small canvas, scaled to the map's size without smoothing: crisp cells at any size. */
  paint(w, h) {
    const { nr, nc } = this;
    const dpr = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    const small = Object.assign(document.createElement("canvas"), { width: nc, height: nr });
    const image = new ImageData(nc, nr);
    const px = image.data;
    for (let k = 0; k < nr * nc; k++) {
      const v = this.values[k];
      if (!Number.isFinite(v)) continue; // blank (or a value that is no number): not drawn, as Vega left it
      const rgb = this.colourOf(v);
      px.set([rgb[0], rgb[1], rgb[2], 255], 4 * k);
    }
    small.getContext("2d").putImageData(image, 0, 0);
    const ctx = this.canvas.getContext("2d");
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(small, 0, 0, this.canvas.width, this.canvas.height);
  }

  legend(root, d, w) {
    const box = hmEl("div", "ae-hm-legend", root);
    hmEl("div", "ae-hm-legend-title", box, d.value);
    const ramp = hmEl("div", "ae-hm-ramp", box);
    const len = Math.max(80, Math.min(HM_RAMP, w));
    ramp.style.width = `${len}px`;
    const canvas = hmEl("canvas", "", ramp);
    canvas.width = len;
    canvas.height = 10;
    canvas.setAttribute("aria-hidden", "true");
    const c = canvas.getContext("2d");
    const lut = LUTS[d.scheme];
    for (let x = 0; x < len; x++) {
      const [r, g, b] = lut[Math.round((x / (len - 1)) * 255)]; // the ramp is the scale's positions, 0..1
      c.fillStyle = `rgb(${r},${g},${b})`;
      c.fillRect(x, 0, 1, 10);
    }
    const ticks = hmEl("div", "ae-hm-ticks", ramp);
    for (const [at, text] of d.legend) {
      const t = hmEl("span", "", ticks, text);
      t.style.left = `${at * 100}%`;
    }
  }

  /** The cell under a mouse event, [row, col], or null off the cells. */
  cellAt(e) {
    const r = this.canvas.getBoundingClientRect();
    const j = Math.floor(((e.clientX - r.left) / r.width) * this.nc);
    const i = Math.floor(((e.clientY - r.top) / r.height) * this.nr);
    return i >= 0 && i < this.nr && j >= 0 && j < this.nc ? [i, j] : null;
  }

  /** What a cell's reading says: its row, its column and its value, each named as the axes name them. */
  reading(i, j) {
    const t = this.texts[i * this.nc + j];
    if (t === null) return null;
    const d = this.d;
    return `${d.rowName} ${d.rows[i]}\n${d.colName} ${d.cols[j]}\n${d.value} ${t}`;
  }

  show(i, j, x, y) {
    const text = this.reading(i, j);
    if (text === null) return this.hide();
    this.tip.textContent = text;
    this.tip.style.display = "block";
    const box = this.root.getBoundingClientRect();
    this.tip.style.left = `${x - box.left + 12}px`;
    this.tip.style.top = `${y - box.top + 12}px`;
  }

  hide() {
    this.tip.style.display = "none";
    this.tip.textContent = "";
  }

  hover(e) {
    const cell = this.cellAt(e);
    if (cell) this.show(cell[0], cell[1], e.clientX, e.clientY);
    else this.hide();
  }

  /** A focused map: the arrow keys move a reading from cell to cell, Escape hides it. */
  key(e) {
    const moves = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
    if (e.key === "Escape") return this.hide();
    if (!moves[e.key]) return;
    e.preventDefault();
    const [di, dj] = moves[e.key];
    const [i0, j0] = this.cursor || [0, -dj || 0];
    const i = Math.min(this.nr - 1, Math.max(0, this.cursor ? i0 + di : 0));
    const j = Math.min(this.nc - 1, Math.max(0, this.cursor ? j0 + dj : 0));
    this.cursor = [i, j];
    const r = this.canvas.getBoundingClientRect();
    this.show(i, j, r.left + (j + 1) * this.d.cw, r.top + (i + 1) * this.d.ch);
  }

  destroy() {
    this.root.remove();
  }
}

// The maps' stylesheet (heatmap.css, prepended by Python as HM_CSS), made once and adopted by each map's shadow root:
// sent once with the module, not with every map.
const HM_SHEET = new CSSStyleSheet();
HM_SHEET.replaceSync(HM_CSS);

/** Draw one map element (its data: the header above); returns what its unmounting undoes. */
function mountHeatmap({ data, parentElement }) {
  const root = parentElement.getRootNode();
  if (root.adoptedStyleSheets && !root.adoptedStyleSheets.includes(HM_SHEET))
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, HM_SHEET];
  const text = typeof data === "string" ? data : JSON.stringify(data);
  let map = parentElement.__attentionExplorerHeatmap;
  if (!map || map.text !== text) {
    if (map) map.destroy();
    map = new Heatmap(parentElement, JSON.parse(text));
    map.text = text; // the same map drawn again keeps its canvas
    parentElement.__attentionExplorerHeatmap = map;
  }
  parentElement.querySelectorAll(".ae-hm-wait").forEach((w) => w.remove()); // drawn (heatmap_mount.js)
  return () => {
    map.destroy();
    delete parentElement.__attentionExplorerHeatmap;
  };
}

/** Take every element the stubs queued (in arrival order); one that fails does not keep the others from being
 * drawn. */
function mountQueuedHeatmaps() {
  const queue = window.__attentionExplorerHeatmapMounts || [];
  window.__attentionExplorerHeatmapMounts = [];
  for (const mount of queue) {
    if (mount.gone) continue;
    try {
      mount.undo = mountHeatmap(mount.component);
    } catch (e) {
      console.error("attention explorer: a heatmap could not be drawn", e);
    }
  }
}

if (!window.__attentionExplorerHeatmapMount) {
  window.__attentionExplorerHeatmapMount = mountQueuedHeatmaps; // the stubs hand their elements over from now on
  mountQueuedHeatmaps(); // and those that arrived before this module loaded
}
