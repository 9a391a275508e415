"""The PostgreSQL keyword index's tokens, checked against SQLite FTS5's own tokenizer (no server)."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.store.pg_schema import MIGRATIONS, fts_tokens
from vouched.store.sqlite import FTS_TOKENIZE

SAMPLES = ("Água naïve Über café l'été it's 3.5 co-op x_y", "کتاب‌ها می‌روم فانوس دریایی", "منارة فانوس شتاء",
           "Лёгкий маяк ЗИМОЙ", "灯塔看守人 冬天", "प्रकाशस्तंभ रक्षक लालटेन", "Leuchtturm Bäcker wöchentlich")


def fts5_tokens(text: str) -> list[str]:
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(x, tokenize=\"{FTS_TOKENIZE}\")")
    db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
    db.execute("INSERT INTO t (x) VALUES (?)", (text,))
    return [r[0] for r in db.execute("SELECT term FROM v ORDER BY offset") if r[0]]  # not its empty tokens


def test_samples_tokenize_as_fts5_does():
    for text in SAMPLES:
        assert fts_tokens(text) == fts5_tokens(text), text


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("".join(SAMPLES) + "ÀÉÎÕÜçñøåæœß\u0301\u0308‍‌-'’.,:;!?0123456789\t"), max_size=40))
def test_tokens_agree_with_the_fts5_tokenizer(text):
    assert fts_tokens(text) == fts5_tokens(text)


def test_migrations_are_numbered_in_order_and_named():
    assert [v for v, _, _ in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))
    assert all(name and sql.strip() for _, name, sql in MIGRATIONS)
