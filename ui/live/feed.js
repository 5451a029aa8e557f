// The live maps' feeds, taken in: part of the live module (ui/live/__init__.py joins softmax.js, this file, maps.js
// and outputs.js), which Streamlit sends once and then as a reference. Every live element (sync.js, a few lines)
// hands its component to this module, or queues it on the window until this module has loaded.
//
// A feed's data (bytes, packed by ui/live/__init__.py `_feed`): "AEL1", a uint32 header length, the header JSON
// (utf-8, padded to a multiple of 4 bytes), then little-endian float32 arrays, one or two per entry of
// header.shapes, in order. The header: {key (the maps'), panels: {panel name: setting}, rev; from a full run's feed
// also scores (the key of the scores the maps draw), arrays (the key of each array the maps and the outputs read:
// the raw scores S = Q Kᵀ, and X, V and W_o where the browser draws the outputs), and, for the arrays it carries
// (those the session has not sent), carried (their indices in arrays) and shapes}. A shapes entry {H, Tq, Tk} is one
// array of that shape (H, Tq, Tk); {H, Tq, Tk, dk} is the raw scores sent as what they are made from, Q (H, Tq, dk)
// then K (H, Tk, dk) (Python sends them where they are the smaller: dk·(Tq + Tk) < Tq·Tk), which unpack multiplies
// out (rawScores, softmax.js) so that what is kept, under the same key, is S (H, Tq, Tk) either way: the maps and
// the outputs never see the factors.

const SYNC_EVENT = "attention-explorer-live-sync";

/** Split the packed bytes into the header and the float32 arrays, one per entry of header.shapes: views, no copy
 *  when aligned; scores sent as Q and K are multiplied out into S. */
function unpack(bytes) {
  const buf = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const magic = String.fromCharCode(buf[0], buf[1], buf[2], buf[3]);
  if (magic !== "AEL1") throw new Error(`live maps: unknown data (${magic})`);
  const n = new DataView(buf.buffer, buf.byteOffset + 4, 4).getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(buf.subarray(8, 8 + n)));
  let start = 8 + n + ((4 - (n % 4)) % 4);
  const take = (count) => {
    const aligned = (buf.byteOffset + start) % 4 === 0;
    const a = aligned
      ? new Float32Array(buf.buffer, buf.byteOffset + start, count)
      : new Float32Array(buf.slice(start, start + 4 * count).buffer);
    start += 4 * count;
    return a;
  };
  const scores = (header.shapes || []).map(({ H, Tq, Tk, dk }) => {
    if (dk === undefined) return take(H * Tq * Tk); // (H, Tq, Tk)
    const Q = take(H * Tq * dk); // (H, Tq, dk)
    const K = take(H * Tk * dk); // (H, Tk, dk)
    return rawScores(Q, K, H, Tq, Tk, dk); // (H, Tq, Tk)
  });
  return { header, scores };
}

/** Take one feed's data: keep its scores and settings on the window (maps drawn later find them there) and hand
 *  them to the maps of its key (LiveView listens for the event). Returns what its unmounting undoes. */
function takeFeed(data) {
  const { header, scores } = unpack(data);
  const { key, panels, rev } = header;
  // per maps key, the score arrays the last feed named (those it carried, and those kept from before), as the
  // server counts what it has sent (ui/live/__init__.py)
  const held = (window.__attentionExplorerLiveScores = window.__attentionExplorerLiveScores || {});
  if (header.arrays) {
    const before = held[key] ? held[key].arrays : {};
    const arrays = {};
    for (const name of header.arrays) if (before[name]) arrays[name] = before[name];
    (header.carried || []).forEach((i, j) => (arrays[header.arrays[i]] = scores[j]));
    held[key] = { key: header.scores, arrays };
  }
  const kept = (window.__attentionExplorerLiveSync = window.__attentionExplorerLiveSync || {});
  const detail = { key, panels, rev, scores: header.scores };
  if (!kept[key] || kept[key].rev <= rev) kept[key] = detail;
  window.dispatchEvent(new CustomEvent(SYNC_EVENT, { detail }));
  // unmounted (another page, a full run after a body rerun): its settings are no longer this run's, so maps drawn
  // later must not start from them; a newer feed's are kept
  return () => {
    if (kept[key] === detail) delete kept[key];
  };
}

// what each kind of element does when the module takes it (mountMaps and mountOutputView are defined later in
// the module, and called only once it has loaded: outputs.js, its last part, takes the queue first)
const MOUNTS = {
  feed: (component) => takeFeed(component.data),
  maps: (component) => mountMaps(component),
  outputs: (component) => mountOutputView(component),
};

/** Take every element that sync.js queued (in arrival order); those already unmounted are dropped, and one that
 *  fails does not keep the others from being taken. */
function mountQueued() {
  const queue = window.__attentionExplorerLiveMounts || [];
  window.__attentionExplorerLiveMounts = [];
  for (const mount of queue) {
    if (mount.gone) continue;
    try {
      mount.undo = MOUNTS[mount.kind](mount.component);
    } catch (e) {
      console.error(`attention explorer: a live ${mount.kind} element could not be taken`, e);
    }
  }
}
