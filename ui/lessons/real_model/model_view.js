// The Real model page's model view: every layer x head of a model as one canvas, with hover.
//
// data (Uint8Array) = [u32 little-endian header length][header JSON, UTF-8][zlib-deflated weights]
//   header: {L, H, T, tokens[T], lut[256*3] (the colour map, 0..255 per channel), description, key}
//   weights: uint8 (L, H, T, T) row-major, round(weight * 255): colour and hover read the same numbers.
// A tile is the head's T x T map: enlarged by a whole factor when T is small; when T is large each pixel shows
// the largest weight of the block of cells it covers (a real weight on the same 0-1 scale: a sharp diagonal or
// a [CLS] column stays visible, where a mean would wash it out).
// Hovering a tile (or the enlarged head beside the grid) names the layer, head, query, key and weight.
// Token text is only ever set as textContent or drawn with fillText, never parsed as HTML.

const TILE = 96; // px: the largest side of a head's tile (smaller when the grid would be wider than the page)
const GAP = 4; // px between tiles
const LEFT = 64; // px for the "layer n" labels
const TOP = 18; // px for the "head n" labels
const DETAIL = 384; // px: the enlarged head is at most max(T, DETAIL) px
const LABEL_CHARS = 10; // longer tokens are shortened on the enlarged head's axes (the tooltip has them whole)
const PICK_EVENT = "attention-model-view-pick"; // the layer and head pickers' choice (real_model_view.py)

// A head as the pages name it (ui.text.head_name in Python): "head 3" for h = 2.
const headName = (h) => `head ${h + 1}`;

function parse(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n)));
  return { header, packed: bytes.subarray(4 + n) };
}

async function inflate(packed) {
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

function tileGeometry(T, H, width) {
  // a tile's side in px so that the grid fits ``width`` (canvas px = css px: no resampling drops a thin line);
  // a whole enlargement factor of T when T fits, else one px per block of cells (each the block's max)
  const fit = Math.max(8, Math.min(TILE, Math.floor((width - LEFT - (H - 1) * GAP) / H)));
  return T <= fit ? Math.floor(fit / T) * T : fit;
}

function paintHead(img, width, x0, y0, w, base, T, side, lut) {
  // Draw head (base = offset of its T x T block in w) as a side x side square at (x0, y0) of img.
  const px = img.data;
  for (let py = 0; py < side; py++) {
    const r0 = Math.floor((py * T) / side);
    const r1 = Math.max(r0 + 1, Math.floor(((py + 1) * T) / side));
    for (let qx = 0; qx < side; qx++) {
      const c0 = Math.floor((qx * T) / side);
      const c1 = Math.max(c0 + 1, Math.floor(((qx + 1) * T) / side));
      let v = 0;
      for (let r = r0; r < r1; r++) {
        const row = base + r * T;
        for (let c = c0; c < c1; c++) if (w[row + c] > v) v = w[row + c];
      }
      const o = ((y0 + py) * width + (x0 + qx)) * 4;
      px[o] = lut[3 * v];
      px[o + 1] = lut[3 * v + 1];
      px[o + 2] = lut[3 * v + 2];
      px[o + 3] = 255;
    }
  }
}

function build(parent) {
  const root = document.createElement("div");
  root.className = "mv";
  const grid = document.createElement("canvas");
  grid.className = "mv-grid";
  grid.setAttribute("role", "img");
  const side = document.createElement("div");
  side.className = "mv-side";
  const detail = document.createElement("canvas");
  detail.className = "mv-detail";
  detail.setAttribute("role", "img");
  const label = document.createElement("div");
  label.className = "mv-label";
  const tip = document.createElement("div");
  tip.className = "mv-tip";
  tip.setAttribute("role", "status");
  side.append(detail, label);
  root.append(grid, side, tip);
  parent.appendChild(root);
  return { root, grid, detail, label, tip, key: null, model: null, head: null, pick: null };
}

function picked(s) {
  // the head the page's pickers name (0, 0 until they have spoken), inside the model drawn
  const m = s.model;
  const p = s.pick || window.__attentionModelViewPick || { layer: 0, head: 0 };
  return [Math.min(Math.max(p.layer | 0, 0), m.L - 1), Math.min(Math.max(p.head | 0, 0), m.H - 1)];
}

function detailGeometry(T, ctx) {
  // the enlarged head: k px a cell; token labels on both axes while a cell is at least 8 px (every `every`-th
  // label when cells are smaller than the font), in margins as wide as the longest label
  const k = Math.max(1, Math.floor(DETAIL / T));
  const font = Math.max(9, Math.min(13, k - 2));
  const every = k >= font ? 1 : Math.ceil(font / k);
  const labelled = k >= 3;
  ctx.font = `${font}px sans-serif`;
  const width = (t) => ctx.measureText(short(t)).width;
  return { k, font, every, labelled, width };
}

function short(t) {
  const s = String(t);
  return s.length <= LABEL_CHARS ? s : s.slice(0, LABEL_CHARS - 1) + "…";
}

function cellText(m, layer, head, i, j) {
  const w = m.w[((layer * m.H + head) * m.T + i) * m.T + j] / 255;
  return (
    `layer ${layer + 1}, ${headName(head)}: query #${i + 1} “${m.tokens[i]}” → key #${j + 1} ` +
    `“${m.tokens[j]}”, weight ≈ ${w.toFixed(2)}`
  );
}

function drawDetail(s, layer, head, mark, hovered = false) {
  const m = s.model;
  if (s.head === `${layer},${head}`) {
    s.detailCtx.putImageData(s.detailImg, 0, 0);
  } else {
    s.detailCtx = s.detail.getContext("2d");
    const g = detailGeometry(m.T, s.detailCtx);
    const shown = m.tokens.filter((_, i) => i % g.every === 0);
    const margin = g.labelled ? Math.ceil(Math.max(...shown.map(g.width))) + 6 : 0;
    const sidePx = m.T * g.k;
    s.detail.width = margin + sidePx;
    s.detail.height = margin + sidePx;
    const ctx = s.detailCtx;
    const img = ctx.createImageData(margin + sidePx, margin + sidePx);
    img.data.fill(255);
    paintHead(img, margin + sidePx, margin, margin, m.w, (layer * m.H + head) * m.T * m.T, m.T, sidePx, m.lut);
    ctx.putImageData(img, 0, 0);
    if (g.labelled) {
      ctx.fillStyle = "#31333f";
      ctx.font = `${g.font}px sans-serif`;
      ctx.textBaseline = "middle";
      ctx.textAlign = "right";
      for (let i = 0; i < m.T; i += g.every) ctx.fillText(short(m.tokens[i]), margin - 4, margin + (i + 0.5) * g.k);
      for (let j = 0; j < m.T; j += g.every) {
        ctx.save();
        ctx.translate(margin + (j + 0.5) * g.k, margin - 4);
        ctx.rotate(-Math.PI / 2);
        ctx.textAlign = "left";
        ctx.fillText(short(m.tokens[j]), 0, 0);
        ctx.restore();
      }
    }
    s.detailImg = ctx.getImageData(0, 0, margin + sidePx, margin + sidePx);
    s.detailGeom = { margin, k: g.k, every: g.every, labelled: g.labelled };
    s.head = `${layer},${head}`;
    const which = hovered
      ? "the head under the pointer (leave the grid to return to the pickers' head)"
      : "the head the layer and head pickers below name";
    const labels = !g.labelled ? "" : g.every === 1 ? ", every token labelled" : `, every ${g.every}th token labelled`;
    s.label.textContent =
      `layer ${layer + 1}, ${headName(head)} enlarged, ${which}: a row per query, a column per key ` +
      `(${m.T} x ${m.T}${labels}), colour 0 (purple) to 1 (yellow). Hover it for each weight.`;
    s.detail.setAttribute("aria-label", s.label.textContent);
    s.root.dataset.detail = `${layer},${head}`; // for tests: the head drawn enlarged
    s.root.dataset.detailGeometry = JSON.stringify(s.detailGeom);
  }
  if (mark) {
    const { margin, k } = s.detailGeom;
    s.detailCtx.strokeStyle = "#ff4b4b";
    s.detailCtx.lineWidth = 1;
    s.detailCtx.strokeRect(margin + mark[1] * k + 0.5, margin + mark[0] * k + 0.5, Math.max(k - 1, 1), Math.max(k - 1, 1));
  }
}

function showTip(s, text, ev) {
  s.tip.textContent = text;
  s.tip.style.display = "block";
  const box = s.root.getBoundingClientRect();
  s.tip.style.left = `${Math.min(ev.clientX - box.left + 12, box.width - 260)}px`;
  s.tip.style.top = `${ev.clientY - box.top + 14}px`;
}

function hoverGrid(s, ev) {
  const m = s.model;
  const r = s.grid.getBoundingClientRect();
  const x = ((ev.clientX - r.left) * s.grid.width) / r.width - LEFT;
  const y = ((ev.clientY - r.top) * s.grid.height) / r.height - TOP;
  const head = Math.floor(x / (m.side + GAP));
  const layer = Math.floor(y / (m.side + GAP));
  const dx = x - head * (m.side + GAP);
  const dy = y - layer * (m.side + GAP);
  if (x < 0 || y < 0 || head >= m.H || layer >= m.L || dx >= m.side || dy >= m.side) {
    s.tip.style.display = "none";
    return;
  }
  const i = Math.min(m.T - 1, Math.floor((dy * m.T) / m.side));
  const j = Math.min(m.T - 1, Math.floor((dx * m.T) / m.side));
  drawDetail(s, layer, head, [i, j], true);
  showTip(s, cellText(m, layer, head, i, j), ev);
}

function hoverDetail(s, ev) {
  const m = s.model;
  if (!s.head) return;
  const [layer, head] = s.head.split(",").map(Number);
  const r = s.detail.getBoundingClientRect();
  const { margin, k } = s.detailGeom;
  const i = Math.min(m.T - 1, Math.floor((((ev.clientY - r.top) * s.detail.height) / r.height - margin) / k));
  const j = Math.min(m.T - 1, Math.floor((((ev.clientX - r.left) * s.detail.width) / r.width - margin) / k));
  if (i < 0 || j < 0) {
    s.tip.style.display = "none";
    return;
  }
  drawDetail(s, layer, head, [i, j]);
  showTip(s, cellText(m, layer, head, i, j), ev);
}

function headLabels(ctx, H, side) {
  // The columns' labels over the grid: "head n" where a tile is wide enough for it; on a narrow grid (a phone)
  // the numbers alone, "head" written once in the corner over the layers' labels; where even the numbers would
  // touch, every k-th. ``ctx`` carries the labels' font.
  const room = side + GAP - 4; // px between two labels' centres, less a little air
  if (ctx.measureText(headName(H - 1)).width <= room) return { corner: "", every: 1, text: headName };
  const every = Math.ceil(ctx.measureText(String(H)).width / room);
  return { corner: "head", every, text: (h) => String(h + 1) };
}

async function render(s, header, packed) {
  const { L, H, T } = header;
  const w = await inflate(packed);
  const t0 = performance.now(); // the bytes are inflated: painting is synchronous from here
  if (w.length !== L * H * T * T) throw new Error(`model view: ${w.length} weights, expected ${L * H * T * T}`);
  const side = tileGeometry(T, H, s.root.getBoundingClientRect().width || 1000);
  s.model = { ...header, w, side };
  s.head = null;
  const width = LEFT + H * (side + GAP) - GAP;
  const height = TOP + L * (side + GAP) - GAP;
  s.grid.width = width;
  s.grid.height = height;
  s.grid.style.maxWidth = `${width}px`;
  const ctx = s.grid.getContext("2d");
  const img = ctx.createImageData(width, height);
  img.data.fill(255);
  for (let layer = 0; layer < L; layer++) {
    for (let head = 0; head < H; head++) {
      const x0 = LEFT + head * (side + GAP);
      const y0 = TOP + layer * (side + GAP);
      paintHead(img, width, x0, y0, w, (layer * H + head) * T * T, T, side, header.lut);
    }
  }
  ctx.putImageData(img, 0, 0);
  ctx.fillStyle = "#31333f";
  ctx.font = "13px sans-serif";
  ctx.textBaseline = "middle";
  for (let layer = 0; layer < L; layer++) ctx.fillText(`layer ${layer + 1}`, 4, TOP + layer * (side + GAP) + side / 2);
  const heads = headLabels(ctx, H, side);
  ctx.fillText(heads.corner, 4, 9);
  ctx.textAlign = "center";
  const drawn = [];
  for (let head = 0; head < H; head += heads.every) {
    const x = LEFT + head * (side + GAP) + side / 2;
    const text = heads.text(head);
    ctx.fillText(text, x, 9);
    drawn.push({ text, x, width: ctx.measureText(text).width });
  }
  s.grid.setAttribute("aria-label", header.description);
  drawDetail(s, ...picked(s), null);
  s.root.dataset.geometry = JSON.stringify({ left: LEFT, top: TOP, side, gap: GAP }); // grid px, for tests
  s.root.dataset.headLabels = JSON.stringify({ corner: heads.corner, drawn }); // what the columns read, for tests
  s.root.dataset.drawn = String(T);
  s.root.dataset.drawnAt = String(performance.now());
  s.root.dataset.paintMs = (performance.now() - t0).toFixed(1); // painting every head, for the benchmark
}

const STATES = new WeakMap(); // parentElement -> the view drawn there

export default function (component) {
  const { data, parentElement } = component;
  if (!data || !data.byteLength) return;
  let s = STATES.get(parentElement);
  if (!s) {
    s = build(parentElement);
    STATES.set(parentElement, s);
    s.grid.addEventListener("pointermove", (ev) => s.model && hoverGrid(s, ev));
    s.detail.addEventListener("pointermove", (ev) => s.model && hoverDetail(s, ev));
    for (const el of [s.grid, s.detail]) el.addEventListener("pointerleave", () => (s.tip.style.display = "none"));
    s.grid.addEventListener("pointerleave", () => s.model && drawDetail(s, ...picked(s), null));
    window.addEventListener(PICK_EVENT, (ev) => {
      s.pick = ev.detail;
      if (s.model) drawDetail(s, ...picked(s), null);
    });
  }
  const { header, packed } = parse(data);
  if (s.key === header.key) return; // the same view again (a rerun that changed nothing here)
  s.key = header.key;
  delete s.root.dataset.drawn;
  s.root.dataset.receivedAt = String(performance.now()); // the bytes are here: drawing starts
  render(s, header, packed).catch((err) => {
    s.label.textContent = `The model view could not be drawn: ${err.message}`;
  });
}
