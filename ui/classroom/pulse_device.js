// The class pulse's keepsakes in the browser (ui/classroom/pulse_device.py). Cookies: the student id of a class, so a
// reload, a phone that reloads a tab on its own, or a second tab is the same student; the teacher's token, so a
// reload keeps the teacher a teacher once the token has left the address bar. And the jump from a join code to
// its class's page. Data (JSON): {cookies: [[name, value, max age in seconds]], go: "/relative/url" or ""}.

export default function (component) {
  const { cookies = [], go = "" } = component.data || {};
  const secure = window.location.protocol === "https:" ? "; Secure" : "";
  for (const [name, value, maxAge] of cookies) {
    document.cookie = `${name}=${encodeURIComponent(value)}; Max-Age=${maxAge}; Path=/; SameSite=Strict${secure}`;
  }
  if (typeof go === "string" && go.startsWith("/") && !go.startsWith("//")) {
    window.location.assign(go); // same origin only: Python builds it from a checked page name and query
  }
}
