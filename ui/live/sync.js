// What the live maps' elements carry (the maps, their feed, the inputs and outputs; ui/live/__init__.py names each
// one's KIND): a few lines that hand the element to the live module (feed.js, maps.js, outputs.js: one element of its
// own, whose bytes never change, so Streamlit sends it once and then as a reference), queued on the window until
// that module has loaded. So a change sends an element's data, not the module again.
export default function (component) {
  const mount = { kind: "KIND", component, gone: false, undo: null };
  (window.__attentionExplorerLiveMounts = window.__attentionExplorerLiveMounts || []).push(mount);
  if (window.__attentionExplorerLiveMount) window.__attentionExplorerLiveMount();
  return () => {
    mount.gone = true; // unmounted before the module took it: not taken, and not kept on the window
    const queue = window.__attentionExplorerLiveMounts;
    if (queue && queue.includes(mount)) queue.splice(queue.indexOf(mount), 1);
    if (mount.undo) mount.undo();
  };
}
