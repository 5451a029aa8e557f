// The app's page list in the sidebar (ui/skeleton/page_list.py): one element for every page, where seventeen
// st.page_link elements were seventeen messages of every page run. Data (JSON): {pages: [[name, label, icon]],
// current: name, base: "/explorer" or ""}; name is the page's address ("" for Home, "Masks"), icon a Material Symbol's
// name, drawn with the font Streamlit already loads.
//
// Each page is a real link (its address: a new tab, a copied link and a screen reader's list of links work as
// links do). A plain click or Enter stays in the app: it reports the page's name ("go"), and the server switches
// this session to it (st.switch_page), as Streamlit's own page links do, so nothing the session holds is lost.
// Where the sidebar lies over the page (a phone, a tablet: up to Streamlit's 768 px breakpoint) a choice also
// closes it, as Streamlit's own page list does.

const OVERLAY_MAX_PX = 768;

function item(base, [name, label, icon], current) {
  const li = document.createElement("li");
  const a = document.createElement("a");
  a.href = `${base}/${name}`;
  a.dataset.page = name;
  if (name === current) a.setAttribute("aria-current", "page");
  const symbol = document.createElement("span");
  symbol.className = "icon";
  symbol.setAttribute("aria-hidden", "true");
  symbol.setAttribute("translate", "no");
  symbol.textContent = icon;
  const text = document.createElement("span");
  text.className = "label";
  text.textContent = label; // text, never markup
  a.append(symbol, text);
  li.append(a);
  return li;
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const { pages = [], current = "", base = "" } = data || {};
  let nav = parentElement.querySelector("nav");
  if (!nav) {
    nav = document.createElement("nav");
    nav.setAttribute("aria-label", "Pages");
    nav.append(document.createElement("ul"));
    parentElement.append(nav);
  }
  const list = nav.querySelector("ul");
  const key = JSON.stringify([pages, current, base]); // a rerun that lists the same pages leaves the links be
  if (nav.drawn !== key) {
    list.replaceChildren(...pages.map((p) => item(base, p, current)));
    nav.drawn = key;
  }
  nav.onclick = (e) => {
    const link = e.target instanceof Element && e.target.closest("a[data-page]");
    if (!link || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return; // a new tab, a window
    e.preventDefault();
    if (window.innerWidth <= OVERLAY_MAX_PX) {
      const close = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
      if (close) close.click();
    }
    if (link.dataset.page !== current) setTriggerValue("go", link.dataset.page);
  };
}
