"""The HTTP service: `create_app(config)` → a FastAPI app. `vouched serve` runs it with uvicorn.

    POST /v1/ask               the guarded answer as Server-Sent Events (schema below)
    POST /v1/chat/completions  the same answer through an OpenAI-compatible face
    GET  /v1/models            the one model name, for OpenAI clients that list models
    GET  /v1/config            languages, suggested questions and limits, for the chat page
    GET  /                     the chat page (static/, no external assets)
    GET  /healthz              liveness; loads nothing
    GET  /metrics              Prometheus text format     } an admin API key, or only on the
    GET  /docs, /openapi.json  the API reference          } separate server.ops_port listener

Callers (`server.auth`): `Authorization: Bearer <API key>` grants the key's tenants; without
one only `server.public_tenants`. A tenant the caller is not granted is 403 with a message
that names no tenant (see `server.auth`).

SSE schema of POST /v1/ask — one frame per event, `event:` names the type, `data:` is one
line of JSON:

    event: sentence   data: {"type":"sentence","text":"…","sources":[1,2]}
        a released sentence: checked by the gate, markers stripped; `sources` are the
        numbers of the sources it cites (see `done.sources`)
    event: notice     data: {"type":"notice","kind":"held|truncated|limit|clarify","text":"…","rule":"…"|null}
        shown apart from the answer; `rule` is the gate rule that stopped a held answer
    event: refusal    data: {"type":"refusal","layer":"L1|L2|","category":"fees|no_evidence|…","text":"…"}
        a fixed text, never model output
    event: done       data: {"type":"done","outcome":"answered|records|refused|held|truncated|limited",
                             "layer":…,"category":…,"lang":"en","trace_id":"…",
                             "sources":[{"number","id","doc_id","title","section","date","url","kind"}],
                             "usage":{"input_tokens","output_tokens","provider","model"}}
        always last on success; `sources` lists only the sources actually cited
    event: error      data: {"error":{"type":"timeout|provider_unavailable|…","message":"…"}}
        a failure after the stream started (before it, the status code and a JSON error)

Errors are JSON `{"error": {"type", "message"}}` with the status from `server.errors` (400
bad input, 413 body too large, 429 rate limited + Retry-After, 503/502 provider or store
unavailable, 504 timeout). When the reader disconnects, the pipeline is cancelled and the
provider stream closed (see `server.streaming`).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from vouched import __version__
from vouched.answer.events import Event, event_to_dict
from vouched.answer.pipeline import Previous
from vouched.config import Config
from vouched.server import openai
from vouched.server.auth import Caller, require_admin
from vouched.server.errors import error_body, install_error_handlers
from vouched.server.metrics import Metrics
from vouched.server.middleware import RequestGuard
from vouched.server.schemas import AskRequest, ChatRequest, ErrorBody, chat_turns, check_limits
from vouched.server.services import Services
from vouched.server.streaming import ClientGone, SSEResponse, event_body, guarded, next_event, sse_frame

ASK_EVENTS_DOC = "Server-Sent Events, one frame per event:\n\n" + __doc__.split("line of JSON:", 1)[1].split("Errors are JSON", 1)[0].lstrip("\n")
STATIC = Path(__file__).parent / "static"
# The page loads only its own files; nothing external, nothing inline but the data block.
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
            "base-uri 'none'; form-action 'self'; frame-ancestors 'self'")
CLIENT_CLOSED = 499  # nginx's code for "the client closed the request"; nobody reads it


def _sse_doc(text: str, example: str) -> dict[int | str, dict[str, Any]]:
    return {
        200: {"description": text, "content": {"text/event-stream": {"schema": {"type": "string"}, "example": example}}},
        400: {"description": "Bad input (type `invalid_request`; `param` names the field)."},
        413: {"description": "Body too large."},
        429: {"description": "Rate limited; `Retry-After` says when to retry (seconds)."},
        503: {"description": "Store, embedder or provider unavailable."},
        504: {"description": "No first event within server.request_timeout_s."},
        "default": {"description": "Every error: `{\"error\": {\"type\", \"message\"}}`.", "model": ErrorBody},
    }


ASK_EXAMPLE = (
    'event: sentence\ndata: {"type":"sentence","text":"The search ran on PostgreSQL 15 with pgvector.","sources":[1]}\n\n'
    'event: done\ndata: {"type":"done","outcome":"answered","sources":[{"number":1,"id":"…","doc_id":"en/projects/multilingual-search",'
    '"title":"Multilingual search for Tessera Health","section":"What was built","date":"2024-05-02","url":null,"kind":"passage"}],'
    '"trace_id":"9f…","layer":null,"category":null,"usage":{"input_tokens":0,"output_tokens":48,"provider":"extractive","model":""},"lang":"en"}\n\n'
)
CHAT_EXAMPLE = (
    'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n'
    'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"The search ran on PostgreSQL."},"finish_reason":null}]}\n\n'
    'data: {"id":"chatcmpl-…","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],'
    '"vouched":{"outcome":"answered","layer":null,"category":null,"sources":[…],"notices":[],"trace_id":"…","lang":"en"}}\n\n'
    'data: [DONE]\n\n'
)


def create_app(config: Config, *, assistant=None, spend=None, limiter=None, keys=None) -> FastAPI:
    """Build the app. Nothing is loaded here; the assistant is built by the first request that needs it.

    `assistant`: an Assistant to serve (default: one built from `config`); `spend`: the spend
    gate given to that assistant (default: `vouched.spend.build_spend(config)`); `limiter`:
    a rate limiter with `check(key) -> RateDecision` (default: from build_spend); `keys`: a
    `server.auth.KeyRing` (default: read from the config and the keys file).
    """
    app = FastAPI(
        title="vouched", version=__version__, docs_url=None, redoc_url=None, openapi_url=None,
        description=("A retrieval-augmented answer engine that would rather refuse than guess. "
                     "`POST /v1/ask` streams Server-Sent Events; `POST /v1/chat/completions` speaks OpenAI's protocol. "
                     "See each route for the event schema."),
    )
    metrics = Metrics()
    app.state.config = config
    app.state.metrics = metrics
    app.state.services = Services(config, metrics, assistant=assistant, spend=spend, limiter=limiter, keys=keys)
    app.add_middleware(RequestGuard, metrics=metrics, max_body_bytes=max_body_bytes(config),
                       body_timeout_s=config.server.body_timeout_s)
    install_error_handlers(app)
    _routes(app, config)
    if config.server.ops_port is None:  # else they live only on the operations listener (ops_app)
        _ops_routes(app, app, admin=True)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def max_body_bytes(config: Config) -> int:
    return 4 * (config.server.max_question_bytes + config.server.max_history_bytes) + 1_048_576


def ops_app(main: FastAPI) -> FastAPI:
    """The operations listener (server.ops_port): /metrics, /docs and /openapi.json of `main`,
    no key needed: the bind address (server.ops_host) is the boundary."""
    app = FastAPI(title="vouched operations", version=__version__, docs_url=None, redoc_url=None, openapi_url=None)
    install_error_handlers(app)
    _ops_routes(app, main, admin=False)
    return app


def _ops_routes(app: FastAPI, main: FastAPI, *, admin: bool) -> None:
    """/metrics, /openapi.json and /docs; with `admin`, only for an admin API key (Bearer, or
    Basic with the key as password so a browser can open /docs)."""

    def check(request: Request) -> None:
        if admin:
            require_admin(_services(request).caller(request))

    @app.get("/metrics", tags=["operations"], summary="Prometheus metrics (admin key)", response_class=Response)
    async def prometheus(request: Request) -> Response:
        check(request)
        m: Metrics = main.state.metrics
        return Response(m.render(), media_type=m.content_type)

    @app.get("/openapi.json", include_in_schema=False)
    async def openapi_json(request: Request) -> JSONResponse:
        check(request)
        return JSONResponse(main.openapi())

    @app.get("/docs", include_in_schema=False)
    async def docs(request: Request) -> HTMLResponse:
        check(request)
        return get_swagger_ui_html(openapi_url="/openapi.json", title="vouched API")


def _admitted(request: Request, config: Config, requested_tenant: str | None) -> tuple[Caller, str]:
    """The caller and the tenant it reads, before anything is counted or searched; and the
    caller's own monthly budget set for the spend gate (a context variable the reserve reads)."""
    from vouched.spend.budget import CallerBudget, caller_budget

    services = _services(request)
    caller = services.caller(request)
    tenant = services.tenant(caller, requested_tenant)
    key = caller.key
    caller_budget.set(CallerBudget(f"key:{key.id}", key.monthly_cap_usd)
                      if key is not None and key.monthly_cap_usd is not None else None)
    return caller, tenant


def _services(request: Request) -> Services:
    return request.app.state.services


def _deadline(config: Config) -> float:
    return asyncio.get_running_loop().time() + config.server.request_timeout_s


async def _first_event(request: Request, events, deadline: float, endpoint: str) -> Event | Response:
    """The first event, before the response starts; a Response if the reader left meanwhile."""
    metrics: Metrics = request.app.state.metrics
    t0 = asyncio.get_running_loop().time()
    try:
        first = await guarded(next_event(events), request, deadline)
    except ClientGone:
        metrics.disconnects.labels(endpoint=endpoint).inc()
        return Response(status_code=CLIENT_CLOSED)
    metrics.first_event_seconds.labels(endpoint=endpoint).observe(asyncio.get_running_loop().time() - t0)
    return first


def _closer(metrics: Metrics, endpoint: str):
    def on_close(how: str) -> None:
        if how == "gone":
            metrics.disconnects.labels(endpoint=endpoint).inc()
    return on_close


def _ask_frame(event: Event) -> bytes:
    return sse_frame(event_to_dict(event), event=event.type)


def _ask_error(exc: BaseException) -> bytes:
    return sse_frame(error_body(exc), event="error")


def _routes(app: FastAPI, config: Config) -> None:
    @app.post("/v1/ask", tags=["answers"], response_class=SSEResponse, summary="Ask a question; stream the guarded answer",
              description=ASK_EVENTS_DOC,
              responses=_sse_doc("Server-Sent Events: sentence*, notice?, refusal?, then done (or error).", ASK_EXAMPLE))
    async def ask(body: AskRequest, request: Request):
        services = _services(request)
        caller, tenant = _admitted(request, config, body.tenant)
        previous = Previous(body.previous.question, body.previous.answer) if body.previous else None
        check_limits(config, body.question, previous, body.lang)
        await services.check_rate(request, caller)
        deadline = _deadline(config)
        events = services.assistant.astream(body.question, previous, lang=body.lang, tenant=tenant)
        first = await _first_event(request, events, deadline, "ask")
        if isinstance(first, Response):
            return first
        return SSEResponse(event_body(first, events, deadline, _ask_frame, _ask_error,
                                      on_close=_closer(app.state.metrics, "ask")))

    @app.post("/v1/chat/completions", tags=["openai"], summary="OpenAI-compatible chat completions",
              description=openai.__doc__,
              responses={**_sse_doc("With `stream: true`: `chat.completion.chunk` events, then `data: [DONE]`.", CHAT_EXAMPLE),
                         200: {"description": "A `chat.completion` object (JSON) with the extra `vouched` field; "
                                              "with `stream: true`, `chat.completion.chunk` Server-Sent Events ending in `data: [DONE]`.",
                               "content": {"application/json": {}, "text/event-stream": {"example": CHAT_EXAMPLE}}}})
    async def chat_completions(body: ChatRequest, request: Request):
        services = _services(request)
        caller, tenant = _admitted(request, config, body.tenant)
        question, previous = chat_turns(body.messages)
        check_limits(config, question, previous, body.lang)
        await services.check_rate(request, caller)
        deadline = _deadline(config)
        model = body.model or "vouched"
        options = openai.FaceOptions(model=model, max_tokens=body.token_cap(), inline_citations=config.server.openai.inline_citations,
                                     prompt_text="\n".join(m.text() for m in body.messages))
        events = services.assistant.astream(question, previous, lang=body.lang, tenant=tenant)
        if not body.stream:
            try:
                collected = await guarded(_collect(events), request, deadline)
            except ClientGone:
                app.state.metrics.disconnects.labels(endpoint="chat").inc()
                return Response(status_code=CLIENT_CLOSED)
            return JSONResponse(openai.completion(collected, options=options))
        chunks = openai.ChunkStream(options=options, include_usage=bool(body.stream_options and body.stream_options.include_usage))
        first = await _first_event(request, events, deadline, "chat")
        if isinstance(first, Response):
            return first
        return SSEResponse(event_body(first, events, deadline, chunks.encode, chunks.encode_error, chunks.trailer,
                                      on_close=_closer(app.state.metrics, "chat")))

    @app.get("/v1/models", tags=["openai"], summary="The model list OpenAI clients ask for")
    async def models() -> dict:
        return {"object": "list", "data": [{"id": "vouched", "object": "model", "created": 0, "owned_by": "vouched"}]}

    @app.get("/v1/config", tags=["page"], summary="What the chat page needs: languages, suggested questions, limits")
    async def page_config() -> dict:
        return _page_config(config)

    @app.get("/healthz", tags=["operations"], summary="Liveness: the process serves HTTP (loads nothing)")
    async def healthz() -> dict:
        return {"status": "ok", "version": __version__}

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        return HTMLResponse(_page_html(config), headers={"Content-Security-Policy": PAGE_CSP})


async def _collect(events) -> list[Event]:
    return [e async for e in events]


def _page_config(config: Config) -> dict:
    s = config.server
    return {
        "languages": config.languages, "default_language": config.default_language,
        "subject": config.subject.name, "site_name": config.site.name, "site_kind": config.site_kind,
        "suggested_questions": s.suggested_questions,
        "max_question_bytes": s.max_question_bytes, "max_history_bytes": s.max_history_bytes,
        # an uncalibrated corpus says so on the page, to the owner trying it (issue 19): the prior is in force
        "calibrated": config.threshold.value > 0,
    }


def _page_html(config: Config) -> str:
    """index.html with the page config embedded as JSON data (not script: the CSP allows none inline)."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    data = json.dumps(_page_config(config), ensure_ascii=False).replace("<", "\\u003c")
    lang = config.default_language
    direction = "rtl" if lang in ("fa", "ar") else "ltr"
    return html.replace("{{CONFIG}}", data).replace("{{LANG}}", lang).replace("{{DIR}}", direction)

