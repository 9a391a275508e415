"""The service's tables of `vouched.toml`: [spend], [rate_limit], [server] (with [server.auth] and
[server.openai]), [trace], [cache].

Part of vouched.config, which re-exports every name here; `Config` (there) puts them together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from vouched.config.section import _Section


class ModelPrice(_Section):
    input_per_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens (reasoning included).")


class SpendSettings(_Section):
    monthly_cap_usd: float = Field(default=0.0, ge=0, description="Monthly spend cap in USD; 0 allows no paid model call at all.")
    prices: dict[str, ModelPrice] = Field(default_factory=dict, description="Prices per model name; a paid model without a price is a config error at start.")
    backend: Literal["sqlite", "redis", "postgres"] = Field(
        default="sqlite",
        description="Where spend reservations and rate counters live: 'sqlite' (one file, one machine), 'redis' (redis_url), "
                    "or 'postgres' (the database and schema of [store]: store.dsn or VOUCHED_PG_DSN, store.pg_schema).")
    path: Path = Field(default=Path(".vouched/counters.sqlite"), description="SQLite file for spend and rate counters (sqlite backend).")
    redis_url: str = Field(default="redis://127.0.0.1:6379/0", description="Redis URL (redis backend).")
    reservation_ttl_s: float = Field(default=600, gt=0, description="A reservation not settled within this time (crashed process, lost settle) is charged at its full upper bound, never freed.")
    deadline_s: float = Field(default=0.1, gt=0, description="Longest wait for the counter store on a reserve or settle; past it the reserve refuses (fail closed) and the settle is journaled.")
    journal_path: Path = Field(default=Path(".vouched/settle_journal.sqlite"), description="Local SQLite file where a settle the counter store did not accept waits, durably, to be retried.")
    journal_retry_s: float = Field(default=1.0, gt=0, description="Seconds between retries of journaled settles.")
    redis_require_persistence: bool = Field(default=True, description="Refuse the Redis spend backend when the server has neither appendonly nor RDB save on (a restart would forget the month's spend). Set false only if persistence is assured another way.")


class RateLimitSettings(_Section):
    enabled: bool = True
    # Sized for one person chatting, who may also run a short script through an OpenAI client:
    # a question every 2 s for a minute, one every 12 s for an hour, a thousand in a working day.
    per_minute: int = Field(default=30, ge=0, description="Requests per client address per minute (0: no limit). Default 30: a person chatting, or a short script, never waits.")
    per_hour: int = Field(default=300, ge=0, description="Requests per client address per hour (0: no limit).")
    per_day: int = Field(default=1000, ge=0, description="Requests per client address per day (0: no limit).")
    trusted_proxies: list[str] = Field(default_factory=list, description="Peer addresses/CIDRs of the edge proxy whose X-Forwarded-For/Forwarded is believed.")
    forwarded_header: Literal["auto", "x-forwarded-for", "forwarded"] = Field(
        default="auto", description="The header the trusted proxy writes; name it so a client-written other header is never read.")
    deadline_s: float = Field(default=0.1, gt=0, description="Longest wait for the rate counter store; past it the request passes (fail open).")


class ApiKeySettings(_Section):
    id: str = Field(min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_-]+$", description="Public key id (the part of the key after 'vk_').")
    hash: str = Field(pattern=r"^sha256:[0-9a-f]{64}$", description="'sha256:' + hex SHA-256 of the whole key; the key itself is never stored.")
    name: str = Field(default="", description="Who holds the key (for `vouched keys list`).")
    tenants: list[str] = Field(default_factory=list, description="Tenants the key may read; the first is its default.")
    admin: bool = Field(default=False, description="May read /metrics and /docs.")
    per_minute: int | None = Field(default=None, ge=0, description="This key's own limit, counted in addition to the per-address limits.")
    per_hour: int | None = Field(default=None, ge=0)
    per_day: int | None = Field(default=None, ge=0)
    monthly_cap_usd: float | None = Field(default=None, ge=0, description="This key's own monthly budget, within spend.monthly_cap_usd.")
    created_at: str = ""
    revoked_at: str = Field(default="", description="Set by `vouched keys revoke`; a revoked key is refused.")


class AuthSettings(_Section):
    keys_file: Path = Field(default=Path(".vouched/keys.toml"), description="TOML file of API key hashes written by `vouched keys create`; the VOUCHED_KEYS_FILE environment variable overrides it.")
    keys: list[ApiKeySettings] = Field(default_factory=list, description="API keys (hashes) given in the config itself, besides the keys file.")


class OpenAIFaceSettings(_Section):
    inline_citations: bool = Field(
        default=False,
        description="POST /v1/chat/completions: also put numbered markers after each sentence and a 'Sources:' list at the "
                    "end of `content` (for clients such as LangChain that keep only the content; annotations are always sent).")


class ServerSettings(_Section):
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    max_question_bytes: int = Field(default=2000, ge=10)
    max_history_bytes: int = Field(default=8000, ge=0)
    request_timeout_s: float = Field(default=60, gt=0)
    suggested_questions: dict[str, list[str]] = Field(default_factory=dict, description="Per language, shown on the chat page.")
    openai: OpenAIFaceSettings = OpenAIFaceSettings()
    public_tenants: list[str] | None = Field(default=None, description="Tenants a caller without an API key may read (default: [corpus.tenant]; [] rejects anonymous callers).")
    ops_host: str = Field(default="127.0.0.1", description="Bind address of the operations listener (ops_port).")
    ops_port: int | None = Field(default=None, ge=1, le=65535, description="Serve /metrics and /docs on this separate port only (no key needed there); unset: on the main port, admin key required.")
    header_timeout_s: float = Field(default=10.0, gt=0, description="A connection that has not sent a whole request head within this time is closed.")
    body_timeout_s: float = Field(default=10.0, gt=0, description="A request body not fully received within this time gets 408 and the connection is closed.")
    keep_alive_s: float = Field(default=5.0, gt=0, description="An idle keep-alive connection is closed after this time.")
    max_connections: int = Field(default=512, ge=1, description="Open connections and requests served at once; past it new ones get 503.")
    auth: AuthSettings = AuthSettings()


class TraceSettings(_Section):
    enabled: bool = Field(default=True, description="Record a trace of every question.")
    backend: Literal["sqlite", "postgres"] = Field(
        default="sqlite",
        description="Where traces and readers' feedback live: 'sqlite' (the file `path`, one per machine) or 'postgres' "
                    "(tables in the database and schema of [store]: store.dsn or VOUCHED_PG_DSN, store.pg_schema; "
                    "every replica writes to it).")
    path: Path = Field(default=Path(".vouched/traces.sqlite"), description="SQLite file for traces and readers' feedback (sqlite backend).")


class CacheSettings(_Section):
    enabled: bool = Field(default=False, description="Reuse a gate-passed answer for a near-identical question (same tenant, language, corpus version and values); never for follow-ups or as_of questions. Off by default: with multilingual-e5-small, distinct questions reach 0.95 cosine ('What does Leila Navid do now?' vs 'Who is Leila Navid?': 0.9855).")
    threshold: float = Field(default=0.95, gt=0.0, le=1.0, description="Least cosine between question embeddings for a cached answer to be reused.")
    max_entries: int = Field(default=10_000, ge=1, description="Answers kept; the least recently used go first.")
    path: Path = Field(default=Path(".vouched/answer_cache.sqlite"), description="SQLite file of the semantic answer cache.")
