"""An ingest cannot empty a live site (issue 19, item 4): shrink refusal, rollback, versions,
per-file size limit, base URLs; and the CLI faces of each."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from vouched.cli import app
from vouched.config import load_config
from vouched.engine import Engine
from vouched.errors import ShrinkRefused
from vouched.ingest import load_corpus
from vouched.ingest.loaders import public_url
from vouched.store.base import CorpusVersion, shrink_refusal

runner = CliRunner()

PAGES = {
    "lighthouse.md": "# Lighthouse\n\nThe keeper trims the wick of the lantern every evening before dusk.\n",
    "bakery.md": "# Bakery\n\nThe sourdough starter is fed with rye flour twice a day in summer.\n",
    "orchard.md": "# Orchard\n\nApple trees in the north orchard are pruned in late February.\n",
    "harbour.md": "# Harbour\n\nFishing boats unload their catch at the eastern quay at five o'clock.\n",
}


def make_site(tmp_path: Path, **corpus) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    extra = "".join(f"{k} = {json.dumps(v)}\n" for k, v in corpus.items())
    toml = tmp_path / "vouched.toml"
    toml.write_text(
        'languages = ["en"]\n[corpus]\npaths = ["docs"]\n' + extra
        + '[embedding]\nmodel = "hashing"\n[threshold]\nvalue = 0.05\n[rate_limit]\nenabled = false\n',
        encoding="utf-8",
    )
    return toml


def _v(chunks: int, records: int = 0) -> CorpusVersion:
    return CorpusVersion(id=7, hash="h", created_at="", chunk_count=chunks, record_count=records, embedding_model="m", dim=4)


# -- the rule, as a pure function ----------------------------------------------------------

def test_shrink_rule_cases():
    assert shrink_refusal(None, 0, 0, 0.5) is not None  # a first ingest of nothing is refused too
    assert shrink_refusal(None, 3, 0, 0.5) is None
    assert "no chunks" in shrink_refusal(_v(10), 0, 0, 0.5)
    assert shrink_refusal(_v(10), 5, 0, 0.5) is None  # exactly 50% lost: allowed
    assert "60% less" in shrink_refusal(_v(10), 4, 0, 0.5)
    assert shrink_refusal(_v(10), 0, 0, None) is None  # --allow-shrink
    assert shrink_refusal(_v(0, 4), 0, 4, 0.5) is None  # records count as size
    assert shrink_refusal(_v(10), 40, 0, 0.0) is None  # growing is always fine


@given(old=st.integers(0, 10_000), old_r=st.integers(0, 100), new=st.integers(0, 10_000), new_r=st.integers(0, 100),
       share=st.floats(0, 1))
def test_shrink_rule_properties(old, old_r, new, new_r, share):
    why = shrink_refusal(_v(old, old_r), new, new_r, share)
    before, after = old + old_r, new + new_r
    if after == 0:
        assert why is not None
    elif after >= before:
        assert why is None
    else:
        assert (why is not None) == ((before - after) / before > share + 1e-12)
    assert shrink_refusal(_v(old, old_r), new, new_r, None) is None


# -- the engine ----------------------------------------------------------------------------

def test_typo_path_is_refused_and_current_kept(tmp_path):
    cfg = load_config(make_site(tmp_path))
    eng = Engine(cfg)
    v1 = eng.ingest().version
    with pytest.raises(ShrinkRefused) as info:
        eng.ingest([tmp_path / "docs" / "typo"])
    assert "no chunks" in str(info.value) and f"version {v1.id}" in str(info.value)
    assert "no such file" in info.value.report.render()  # the report says why it came out empty
    assert eng.store.current_version().id == v1.id
    assert eng.search("keeper lantern wick").passages


def test_losing_more_than_max_shrink_needs_allow_shrink(tmp_path):
    cfg = load_config(make_site(tmp_path))
    eng = Engine(cfg)
    v1 = eng.ingest().version
    one = tmp_path / "docs" / "bakery.md"
    with pytest.raises(ShrinkRefused, match="75% less"):
        eng.ingest([one])
    assert eng.store.current_version().id == v1.id
    v2 = eng.ingest([one], allow_shrink=True).version
    assert v2.id != v1.id and v2.chunk_count == 1
    assert eng.rollback().id == v1.id
    assert eng.store.current_version().chunk_count == v1.chunk_count


def test_max_shrink_is_read_from_config(tmp_path):
    cfg = load_config(make_site(tmp_path, max_shrink=0.8))
    eng = Engine(cfg)
    eng.ingest()
    assert eng.ingest([tmp_path / "docs" / "bakery.md"]).version.chunk_count == 1  # 75% ≤ 80%


def test_rollback_refuses_a_version_of_another_embedding_model(tmp_path):
    from vouched.errors import StoreError
    from vouched.embed import HashingEmbedder

    toml = make_site(tmp_path)
    eng = Engine(load_config(toml), embedder=HashingEmbedder(dim=32))
    eng.ingest()
    eng.ingest(allow_shrink=True)
    other = Engine(load_config(toml), embedder=HashingEmbedder(dim=64))
    with pytest.raises(StoreError, match="embedded with"):
        other.rollback()


# -- per-file size limit and public links ----------------------------------------------------

def test_file_over_max_file_bytes_is_skipped_with_a_clear_message(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("word " * 3000, encoding="utf-8")  # 15,000 bytes
    small = tmp_path / "small.txt"
    small.write_text("A small page about the harbour quay and its boats.", encoding="utf-8")
    load = load_corpus([tmp_path], allowed_langs=["en"], max_file_bytes=10_000)
    assert load.report.documents == 1 and load.report.too_large == ((str(big), 15_000),)
    text = load.report.render()
    assert "larger than corpus.max_file_bytes = 10,000 bytes" in text and "big.txt (15,000 bytes)" in text
    assert load_corpus([tmp_path], allowed_langs=["en"], max_file_bytes=0).report.documents == 2  # 0: no limit


def test_default_file_limit_skips_a_100_mb_text_file(tmp_path):
    from vouched.config import Config

    limit = Config().corpus.max_file_bytes
    huge = tmp_path / "huge.txt"
    with huge.open("wb") as f:  # sparse: 100 MB on paper, no disk
        f.truncate(100_000_000)
    load = load_corpus([tmp_path], allowed_langs=["en"], max_file_bytes=limit)
    assert load.report.too_large == ((str(huge), 100_000_000),) and load.report.documents == 0


def test_errors_name_the_path_once(tmp_path):
    bad = tmp_path / "bad.md"
    bad.write_bytes(b"\xff\xfe\x00 not utf-8 \xff")
    text = load_corpus([tmp_path], allowed_langs=["en"]).report.render()
    assert text.count(str(bad)) == 1, text


def test_public_url_rules_and_base():
    assert public_url("guide/intro.html", "https://docs.example.org/") == "https://docs.example.org/guide/intro.html"
    assert public_url("guide/intro.html", "https://docs.example.org") == "https://docs.example.org/guide/intro.html"
    assert public_url("a b/ü.html", "https://x.org") == "https://x.org/a%20b/%C3%BC.html"
    rules = {"blog/*.md": "https://blog.example.org/{stem}/", "drafts/*": "", "*.md": "https://docs.example.org/{stem}"}
    assert public_url("blog/2024/launch.md", "https://base", rules) == "https://blog.example.org/blog/2024/launch/"
    assert public_url("drafts/x.md", "https://base", rules) is None
    assert public_url("api/ref.md", "", rules) == "https://docs.example.org/api/ref"
    assert public_url("page.html", "", {"*.md": "x"}) is None
    assert public_url("p.html", "", {"*.html": "https://h.org/{name}"}) == "https://h.org/p.html"


def test_base_url_gives_chunks_public_links_but_a_page_url_wins(tmp_path):
    (tmp_path / "own.md").write_text("---\nurl: https://elsewhere.org/own\n---\n# Own\n\nIt has its own address here.\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "page.md").write_text("# Page\n\nA page that has no address of its own.\n", encoding="utf-8")
    load = load_corpus([tmp_path], allowed_langs=["en"], base_url="https://docs.example.org/v2/")
    urls = {c.doc_id: c.url for c in load.chunks}
    assert urls == {"own": "https://elsewhere.org/own", "sub/page": "https://docs.example.org/v2/sub/page.md"}


# -- the CLI -------------------------------------------------------------------------------

def test_cli_typo_exits_non_zero_and_rollback_and_versions(tmp_path):
    toml = str(make_site(tmp_path))
    assert runner.invoke(app, ["ingest", "--config", toml]).exit_code == 0
    r = runner.invoke(app, ["ingest", str(tmp_path / "docs" / "typo"), "--config", toml])
    assert r.exit_code == 3, r.output
    assert "ingest refused" in r.output and "--allow-shrink" in r.output
    assert r.output.count(str(tmp_path / "docs" / "typo")) == 1  # the report's error line, once
    r = runner.invoke(app, ["versions", "--config", toml, "--json"])
    rows = json.loads(r.stdout)
    assert len(rows) == 1 and rows[0]["current"] and rows[0]["chunk_count"] == 4 and rows[0]["created_at"]
    r = runner.invoke(app, ["ingest", str(tmp_path / "docs" / "orchard.md"), "--config", toml, "--allow-shrink"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["rollback", "--config", toml])
    assert r.exit_code == 0 and "now serving corpus version 1 (was 2)" in r.output, r.output
    r = runner.invoke(app, ["versions", "--config", toml])
    assert "current" in r.output and "created" in r.output
    r = runner.invoke(app, ["rollback", "42", "--config", toml])
    assert r.exit_code == 4 and "not in the store" in r.output


def test_cli_without_a_terminal_prints_periodic_progress_lines(tmp_path):
    toml = str(make_site(tmp_path))
    r = runner.invoke(app, ["ingest", "--config", toml])  # CliRunner's stderr is not a terminal
    assert r.exit_code == 0, r.output
    assert "reading: 4/4 (100%)" in r.output and "embedding: 4/4 (100%)" in r.output


# -- a live server keeps answering after a refused ingest -----------------------------------

@pytest.mark.anyio
async def test_live_server_keeps_answering_after_a_refused_ingest(tmp_path):
    from tests.server.conftest import asgi_client, parse_sse
    from vouched.server import create_app

    cfg = load_config(make_site(tmp_path))
    Engine(cfg).ingest()
    server_app = create_app(cfg)
    q = {"question": "How is the sourdough starter fed?"}
    async with asgi_client(server_app) as c:
        before = parse_sse((await c.post("/v1/ask", json=q)).text)
        assert before[-1][1]["outcome"] == "answered"
        with pytest.raises(ShrinkRefused):
            Engine(load_config(tmp_path / "vouched.toml")).ingest([tmp_path / "nowhere"])  # another process's ingest
        after = parse_sse((await c.post("/v1/ask", json=q)).text)
    assert after[-1][1]["outcome"] == "answered"
    assert [d["text"] for e, d in after if e == "sentence"] == [d["text"] for e, d in before if e == "sentence"]


@pytest.fixture
def anyio_backend():
    return "asyncio"
