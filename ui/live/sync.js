// The companion of the live maps: a body-only rerun (a sidebar leaf control, such as the temperature) does not
// send the maps' scores again; it sends this small component with the new settings, which hands them to the
// maps of the same key (ui/live/maps.js listens for the event; maps drawn later find the last ones kept here).
// Data (JSON): {key, panels: {panel name: setting}, rev}.

export default function (component) {
  const { key, panels, rev } = component.data;
  const kept = (window.__attentionExplorerLiveSync = window.__attentionExplorerLiveSync || {});
  kept[key] = { panels, rev };
  window.dispatchEvent(new CustomEvent("attention-explorer-live-sync", { detail: { key, panels, rev } }));
}
