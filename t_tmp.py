import sys, os
from tests.server_util import *
from playwright.sync_api import sync_playwright
with streamlit_server() as (base, proc):
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        page = b.new_page(viewport={"width": 1400, "height": int(os.environ.get("VH", "1000"))})
        for url, out in zip(sys.argv[1::2], sys.argv[2::2]):
            page.goto(base + url)
            wait_for_app(page)
            page.wait_for_timeout(500)
            page.screenshot(path=out, full_page=True)
            print(url, page.locator('[data-testid="stException"]').count(), page.locator('[data-testid="stAlertContentError"]').count())
        b.close()
