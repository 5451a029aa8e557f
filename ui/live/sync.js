// The live maps' feed, sent with every run that hands the maps a setting: it passes its data to the maps' module
// (feed.js, sent once with the maps), queued on the window until that module has loaded, so that a change sends
// these few lines and not the feed's code.
export default function (component) {
  const feed = { data: component.data, gone: false, undo: null };
  (window.__attentionExplorerLiveFeeds = window.__attentionExplorerLiveFeeds || []).push(feed);
  if (window.__attentionExplorerLiveTake) window.__attentionExplorerLiveTake();
  return () => {
    feed.gone = true; // unmounted before the maps' module took it: not taken, and not kept on the window
    const queue = window.__attentionExplorerLiveFeeds;
    if (queue && queue.includes(feed)) queue.splice(queue.indexOf(feed), 1);
    if (feed.undo) feed.undo();
  };
}
