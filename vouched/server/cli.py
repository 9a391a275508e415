"""`vouched serve`: run the service with uvicorn. `vouched.cli` wires the command to `serve`."""

from __future__ import annotations

from pathlib import Path

from vouched.config import Config, load_config
from vouched.errors import StoreError


def check_corpus(config: Config) -> None:
    """Fail at start, with the fix, when there is nothing to answer from."""
    from vouched.store import SQLiteStore, make_store

    if config.store.backend != "sqlite":
        store = make_store(config)
        try:
            if store.current_version() is None:
                raise StoreError(f"no corpus in the {config.store.backend} store: run `vouched ingest --config <your vouched.toml>` first")
        finally:
            store.close()
        return
    path = config.store_path
    if not path.exists() or SQLiteStore(path).current_version() is None:
        raise StoreError(f"no corpus in {path}: run `vouched ingest --config <your vouched.toml>` first")


def uvicorn_config(app, host: str, port: int, *, log_level: str = "info"):
    """The uvicorn settings the service runs with (tests start servers with the same ones).

    proxy_headers=False: uvicorn would otherwise replace the peer address with the client's
    own X-Forwarded-For when the peer is 127.0.0.1. Rate limits are keyed from the peer and
    rate_limit.trusted_proxies (vouched.spend.client_key), never from a header alone.
    """
    import uvicorn

    return uvicorn.Config(app, host=host, port=port, log_level=log_level, proxy_headers=False,
                          server_header=False, timeout_graceful_shutdown=5)


def serve(config_path: str | Path | None, host: str | None = None, port: int | None = None, *,
          log_level: str = "info") -> None:
    """Load the config, check the corpus, and serve until interrupted (host/port default to [server])."""
    import uvicorn

    from vouched.server.app import create_app

    config = load_config(config_path)
    check_corpus(config)
    app = create_app(config)
    uvicorn.Server(uvicorn_config(app, host or config.server.host, port or config.server.port, log_level=log_level)).run()
