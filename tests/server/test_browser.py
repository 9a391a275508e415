"""The chat page in a real headless browser (Debian's chromium, driven over the DevTools protocol).

One short page session: ask an English question and watch its sentences arrive one by one
(a scripted model streams them slowly), see the cited sources under the answer; then ask a
Persian fee question and see the fixed refusal laid out right-to-left; then a two-part
question whose second part the sources do not cover, and see the "not covered" line. A screenshot is saved
to tests/server/artifacts/chat.png.

Needs /usr/bin/chromium (`apt-get install -y --no-install-recommends chromium fonts-dejavu-core`);
skipped without it, except under CI, where a missing browser is a failure.
"""

from __future__ import annotations

import base64
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.server.conftest import RecordingSpend, running, scripted_assistant
from vouched.llm.scripted import ScriptedProvider
from vouched.server import create_app

ARTIFACTS = Path(__file__).parent / "artifacts"
SENTENCES = ["The search ran on postgres with pgvector [1]. ", "It used hnsw indexes for the vectors [1]. ",
             "It was built for Tessera Health [1]."]


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    # ./scripts/test installs it; a run without a browser must not pass as if the page worked
    pytest.fail("chromium is missing: apt-get install -y --no-install-recommends chromium fonts-dejavu-core")


class Page:
    """The few DevTools protocol calls the test needs, over one websocket."""

    def __init__(self, binary: str, profile: str) -> None:
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
             f"--user-data-dir={profile}", "--remote-debugging-port=0", "--window-size=900,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = Path(profile) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not open its DevTools port")
            time.sleep(0.05)
        port = port_file.read_text().split()[0]
        targets = httpx.get(f"http://127.0.0.1:{port}/json/list", timeout=10).json()
        ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        from websockets.sync.client import connect

        self._stack = ExitStack()
        self.ws = self._stack.enter_context(connect(ws_url, max_size=None, open_timeout=10))
        self.ids = itertools.count(1)

    def call(self, method: str, **params):
        n = next(self.ids)
        self.ws.send(json.dumps({"id": n, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv(timeout=30))
            if msg.get("id") == n:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})

    def js(self, expression: str):
        r = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def wait(self, expression: str, timeout: float = 15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {expression}")

    def press_enter(self) -> None:
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter", windowsVirtualKeyCode=13,
                      **({"text": "\r"} if kind == "keyDown" else {}))

    def close(self) -> None:
        try:
            self._stack.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


STATE = """(() => {
  const bots = [...document.querySelectorAll('#log article.msg.bot')];
  return bots.map(b => ({
    busy: b.getAttribute('aria-busy'),
    sentences: [...b.querySelectorAll('.answer .sentence')].map(s => s.textContent),
    sources: [...b.querySelectorAll('.sources li')].map(li => ({text: li.textContent, href: li.querySelector('a') && li.querySelector('a').getAttribute('href')})),
    refusal: b.querySelector('.refusal') && b.querySelector('.refusal').textContent,
    refusalDir: b.querySelector('.refusal') && getComputedStyle(b.querySelector('.refusal')).direction,
    articleDir: getComputedStyle(b).direction,
    uncovered: [...b.querySelectorAll('.notice-uncovered')].map(n => n.textContent),
  }));
})()"""


def test_chat_page_streams_sentences_shows_sources_and_lays_out_persian_rtl(site):
    binary = chromium()
    provider = ScriptedProvider(SENTENCES, delay=0.5)
    app = create_app(site, assistant=scripted_assistant(site, provider, RecordingSpend()))
    profile = tempfile.mkdtemp(prefix="vouched-chromium-")
    page = None
    try:
        with running(app) as url:
            page = Page(binary, profile)
            page.call("Page.enable")
            page.call("Page.navigate", url=url + "/")
            page.wait("document.readyState === 'complete' && document.querySelectorAll('#suggestions button').length > 0")
            assert page.js("document.activeElement.id") == "question"  # focus starts in the question box
            # the config's suggested questions for the page's language are shown, as buttons a reader can see
            assert page.js("document.documentElement.lang") == "en"
            assert page.js("[...document.querySelectorAll('#suggestions button')].map(b => b.textContent)") \
                == site.server.suggested_questions["en"]
            assert page.js("(() => { const s = document.getElementById('suggestions'); const r = s.getBoundingClientRect(); "
                           "return !s.hidden && r.width > 0 && r.height > 0 && getComputedStyle(s).visibility === 'visible'; })()")

            # 1. English: type, press Enter, watch the sentences arrive one at a time
            page.call("Input.insertText", text="Which database did the Tessera Health search run on?")
            page.press_enter()
            snapshots = []
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                state = page.js(STATE)
                if state:
                    snapshots.append(state[0])
                    if state[0]["busy"] == "false":
                        break
                time.sleep(0.05)
            final = snapshots[-1]
            assert final["busy"] == "false"
            assert final["sentences"] == ["The search ran on postgres with pgvector.1", "It used hnsw indexes for the vectors.1",
                                          "It was built for Tessera Health.1"]
            partial = [s for s in snapshots if s["busy"] == "true" and 0 < len(s["sentences"]) < 3]
            assert partial, "sentences should appear while the answer is still streaming"
            assert len(final["sources"]) == 1 and "Tessera Health" in final["sources"][0]["text"]
            assert "—" in final["sources"][0]["text"]  # section and date after the title

            # 2. Persian fee question: the fixed refusal, right-to-left
            page.call("Input.insertText", text="هزینه‌ی همکاری با لیلا چقدر است؟")
            page.press_enter()
            page.wait("document.querySelectorAll('#log article.msg.bot').length === 2 && "
                      "document.querySelectorAll('#log article.msg.bot')[1].getAttribute('aria-busy') === 'false'")
            fa = page.js(STATE)[1]
            assert fa["refusal"] and fa["sentences"] == [] and fa["sources"] == []
            assert fa["refusalDir"] == "rtl" and fa["articleDir"] == "rtl"
            assert page.js("document.activeElement.id") == "question"  # focus stays for the next question

            # 3. A partial answer: the covered part answered, then the "not covered" line
            page.call("Input.insertText",
                      text="Which database did the Tessera Health search run on and who won the 2018 World Cup?")
            page.press_enter()
            page.wait("document.querySelectorAll('#log article.msg.bot').length === 3 && "
                      "document.querySelectorAll('#log article.msg.bot')[2].getAttribute('aria-busy') === 'false'",
                      timeout=30)
            part = page.js(STATE)[2]
            assert len(part["sentences"]) == 3 and part["sources"]
            assert len(part["uncovered"]) == 1 and "The sources don't cover this part of the question" in part["uncovered"][0]
            assert "2018 World Cup" in part["uncovered"][0]

            ARTIFACTS.mkdir(exist_ok=True)
            shot = page.call("Page.captureScreenshot", format="png")
            path = ARTIFACTS / "chat.png"
            path.write_bytes(base64.b64decode(shot["data"]))
            print(f"\nscreenshot: {path}")
    finally:
        if page is not None:
            page.close()
        shutil.rmtree(profile, ignore_errors=True)
