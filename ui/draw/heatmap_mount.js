// What a heatmap's element carries (ui/draw/canvas_maps.py): a few lines that hand the element to the heatmap
// module (heatmap.js: an element of its own, whose bytes never change, so Streamlit sends it once and then as a
// reference), queued on the window until that module has loaded. So a map sends its data, not the module again.
// A map not drawn yet says so (a placeholder the module removes once it has drawn it: the page's readiness is
// measured by these); unmounted before the module took it, it is not taken, and not kept on the window.
export default function (component) {
  const mount = { component, gone: false, undo: null };
  const parent = component.parentElement;
  if (!parent.querySelector(".ae-hm")) {
    const wait = document.createElement("div");
    wait.className = "ae-hm-wait";
    parent.appendChild(wait);
  }
  (window.__attentionExplorerHeatmapMounts = window.__attentionExplorerHeatmapMounts || []).push(mount);
  if (window.__attentionExplorerHeatmapMount) window.__attentionExplorerHeatmapMount();
  return () => {
    mount.gone = true;
    parent.querySelectorAll(".ae-hm-wait").forEach((w) => w.remove());
    const queue = window.__attentionExplorerHeatmapMounts;
    if (queue && queue.includes(mount)) queue.splice(queue.indexOf(mount), 1);
    if (mount.undo) mount.undo();
  };
}
