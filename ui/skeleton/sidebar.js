// A page chosen in the sidebar closes the sidebar where it covers the page (a phone, a tablet). Streamlit closes it
// after a choice in its own page list, not after a click on an st.page_link, and the app draws its page list with
// page links (ui/skeleton/page.py); a student who opened the sidebar then found three quarters of the new page behind it.
// Streamlit lays the sidebar over the page up to its "md" breakpoint, 768 px; there its own close button is pressed.
// Mounted on every page run (ui/skeleton/sidebar.py); the listener is added once per browser tab.

const OVERLAY_MAX_PX = 768;

export default function () {
  if (window.__attentionExplorerSidebar) return;
  window.__attentionExplorerSidebar = true;
  document.addEventListener(
    "click",
    (e) => {
      const link = e.target instanceof Element && e.target.closest('[data-testid="stSidebar"] a[data-testid="stPageLink-NavLink"]');
      if (!link || window.innerWidth > OVERLAY_MAX_PX) return;
      const close = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
      if (close) close.click();
    },
    true,
  );
}
