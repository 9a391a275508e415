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


def guarded_h11(header_timeout_s: float):
    """uvicorn's h11 protocol with a request-head timeout: a connection that has not sent a
    whole request head within `header_timeout_s` of opening (or of its previous response) is
    closed. uvicorn itself has none: a client sending one header byte at a time holds a
    connection for ever. (Body timeouts and sizes are the RequestGuard middleware's.)"""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class GuardedH11Protocol(H11Protocol):
        _head_timer = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm_head_timer()

        def _arm_head_timer(self) -> None:
            self._cancel_head_timer()
            self._head_timer = self.loop.call_later(header_timeout_s, self._head_timed_out)

        def _cancel_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_timed_out(self) -> None:
            self._head_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()  # no request in progress: nothing to answer

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # the head is in: the body is timed elsewhere
                self._cancel_head_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm_head_timer()  # the next request on this keep-alive connection

        def connection_lost(self, exc) -> None:
            self._cancel_head_timer()
            super().connection_lost(exc)

    return GuardedH11Protocol


def uvicorn_config(app, host: str, port: int, *, log_level: str = "info", settings=None):
    """The uvicorn settings the service runs with (tests start servers with the same ones).

    proxy_headers=False: uvicorn would otherwise replace the peer address with the client's
    own X-Forwarded-For when the peer is 127.0.0.1. Rate limits are keyed from the peer and
    rate_limit.trusted_proxies (vouched.spend.client_key), never from a header alone.
    `settings` (a ServerSettings; default: the app's config) gives the head timeout, the
    keep-alive timeout and the connection limit (past it, 503).
    """
    import uvicorn

    if settings is None:
        cfg = getattr(getattr(app, "state", None), "config", None)
        from vouched.config import ServerSettings

        settings = cfg.server if cfg is not None else ServerSettings()
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, proxy_headers=False,
                          server_header=False, timeout_graceful_shutdown=5,
                          http=guarded_h11(settings.header_timeout_s), timeout_keep_alive=settings.keep_alive_s,
                          limit_concurrency=settings.max_connections, h11_max_incomplete_event_size=64 * 1024)


def check_spend_store(config: Config) -> None:
    """Fail at start when the Redis spend backend has no persistence (spend.redis_require_persistence).
    A store that cannot be reached now is asked again before the first reserve (spend fails closed meanwhile)."""
    import logging

    if config.spend.backend != "redis" or not config.spend.redis_require_persistence:
        return
    from vouched.spend.budget import StoreNotDurable
    from vouched.spend.redis import RedisSpendCounters, connect

    client = connect(config.spend.redis_url)
    try:
        RedisSpendCounters(client).check_durable()
    except StoreNotDurable as exc:
        from vouched.errors import ConfigError

        raise ConfigError(str(exc)) from None
    except Exception as exc:
        logging.getLogger("vouched.server").warning(
            "the Redis spend store cannot be reached at start (%r): spend fails closed until it answers", exc)
    finally:
        client.close()


def serve(config_path: str | Path | None, host: str | None = None, port: int | None = None, *,
          log_level: str = "info") -> None:
    """Load the config, check the corpus and the spend store, and serve until interrupted
    (host/port default to [server]); with server.ops_port, /metrics and /docs on a second listener."""
    import asyncio

    import uvicorn

    from vouched.server.app import create_app, ops_app

    config = load_config(config_path)
    check_corpus(config)
    check_spend_store(config)
    app = create_app(config)
    main = uvicorn.Server(uvicorn_config(app, host or config.server.host, port or config.server.port, log_level=log_level))
    if config.server.ops_port is None:
        main.run()
        return
    ops = uvicorn.Server(uvicorn_config(ops_app(app), config.server.ops_host, config.server.ops_port, log_level=log_level))

    async def both() -> None:
        await asyncio.gather(main.serve(), ops.serve())

    asyncio.run(both())
