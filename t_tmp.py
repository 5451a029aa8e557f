from tests.apptest_util import app, run_ok, texts, chart_titles
at = run_ok(app("pages/1_Playground.py"))
at.sidebar.toggle(key="classroom_toggle").set_value(True); run_ok(at)
at.selectbox(key="classroom_guess_playground").set_value(3)
at.button(key="classroom_reveal_playground").click(); run_ok(at)
print([w.value for w in at.warning], [s.value for s in at.success], chart_titles(at)[:3])
