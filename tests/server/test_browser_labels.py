"""The chat page on a documentation site with no subject, in a real headless browser (issue 19, item 7):
the title names the kind of site, the page's own labels follow the language the reader asks
in, and a Persian source's date reads 2022-01-20, isolated left-to-right.

Same browser harness as test_browser.py (Debian's chromium over the DevTools protocol)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.server.conftest import running
from tests.server.test_browser import Page, chromium
from vouched.config import load_config
from vouched.engine import Engine
from vouched.server import create_app

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "docs_site"
PERSIAN_PAGE = """---
updated_at: 2022-01-20
lang: fa
---
# اسکله

قایق‌های ماهیگیری هر روز ساعت پنج صبح در اسکله‌ی شرقی بار خود را تخلیه می‌کنند.
"""

LAST = """(() => {
  const bots = [...document.querySelectorAll('#log article.msg.bot')];
  const b = bots[bots.length - 1];
  const time = b && b.querySelector('.sources time');
  return b && b.getAttribute('aria-busy') === 'false' && {
    n: bots.length, heading: b.querySelector('.sources h2') && b.querySelector('.sources h2').textContent,
    date: time && time.textContent, dateDir: time && time.getAttribute('dir'),
    dateBidi: time && getComputedStyle(time).unicodeBidi, lang: document.documentElement.lang,
    dir: document.documentElement.dir, ask: document.getElementById('send').textContent,
    title: document.title, picker: document.getElementById('ui-lang').value,
  };
})()"""


def test_docs_page_title_labels_follow_the_question_and_dates_stay_ltr(tmp_path):
    binary = chromium()
    shutil.copytree(FIXTURE, tmp_path / "docs")
    (tmp_path / "docs" / "harbour-fa.md").write_text(PERSIAN_PAGE, encoding="utf-8")
    toml = tmp_path / "vouched.toml"
    toml.write_text('languages = ["en", "fa"]\n[corpus]\npaths = ["docs"]\n[embedding]\nmodel = "hashing"\n'
                    '[threshold]\nvalue = 0.05\n[rate_limit]\nenabled = false\n', encoding="utf-8")
    cfg = load_config(toml)
    Engine(cfg).ingest()
    profile = tempfile.mkdtemp(prefix="vouched-chromium-")
    page = None
    try:
        with running(create_app(cfg)) as url:
            page = Page(binary, profile)
            page.call("Page.enable")
            page.call("Page.navigate", url=url + "/")
            page.wait("document.readyState === 'complete' && document.getElementById('title').textContent !== ''")
            assert page.js("document.getElementById('title').textContent") == "Ask the documentation"
            assert page.js("document.title") == "Ask the documentation"
            assert page.js("document.documentElement.lang") == "en"

            page.call("Input.insertText", text="قایق‌های ماهیگیری کجا بار خود را تخلیه می‌کنند؟")
            page.press_enter()
            fa = page.wait(LAST.replace("b && b.getAttribute", "bots.length === 1 && b.getAttribute"))
            assert fa["lang"] == "fa" and fa["dir"] == "rtl" and fa["picker"] == "fa"
            assert fa["heading"] == "منابع" and fa["ask"] == "بپرس" and fa["title"] == "پرسش از مستندات"
            assert fa["date"] == "2022-01-20" and fa["dateDir"] == "ltr" and fa["dateBidi"] == "isolate"

            page.call("Input.insertText", text="What does it cost to call a function?")
            page.press_enter()
            en = page.wait(LAST.replace("b && b.getAttribute", "bots.length === 2 && b.getAttribute"))
            assert en["lang"] == "en" and en["heading"] == "Sources" and en["ask"] == "Ask"
            # the first answer's own label was re-read in the reader's current language too
            assert page.js("document.querySelector('#log article.msg.bot .sources h2').textContent") == "Sources"
    finally:
        if page is not None:
            page.close()
        shutil.rmtree(profile, ignore_errors=True)
