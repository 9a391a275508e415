"""HTTP errors: the ONE map from the error tree (vouched.errors, drawn there) to statuses.

Each class of the tree gets the row of its nearest ancestor in `HTTP_MAP` (a test walks the
whole tree and checks every branch has a deliberate row). The request classes
(`RequestError`, `InvalidRequest`, `PayloadTooLarge`, `RateLimited`) and `RequestTimeout`
live in vouched.errors too; they are re-exported here, where the server raises them.

Every error leaves the service as JSON: `{"error": {"type": "...", "message": "..."}}`.
For 4xx the message says what to change; for 5xx it is a fixed public sentence (the detail
goes to the log, never to the reader: it may name files, hosts or environment variables).
"""

from __future__ import annotations

from vouched.errors import (
    BodyTimeout, CalibrationError, CheckError, ClientGone, ConfigError, EmbedderError, Forbidden, IngestError,
    InputError, InvalidRequest, PayloadTooLarge, ProviderAuthError, ProviderError, ProviderUnavailable, RateLimited,
    RequestError, RequestTimeout, StoreError, Unauthorized, VouchedError,
)

__all__ = [
    "BodyTimeout", "Forbidden", "HTTP_MAP", "InvalidRequest", "PayloadTooLarge", "RateLimited", "RequestError",
    "RequestTimeout", "Unauthorized",
    "error_body", "error_status",
]



# class -> (status, type, public message for 5xx). The nearest ancestor of an error's class wins.
HTTP_MAP: dict[type[VouchedError], tuple[int, str, str | None]] = {
    InvalidRequest: (400, "invalid_request", None),
    Unauthorized: (401, "unauthorized", None),
    Forbidden: (403, "forbidden", None),
    BodyTimeout: (408, "request_timeout", None),
    PayloadTooLarge: (413, "payload_too_large", None),
    RateLimited: (429, "rate_limited", None),
    RequestError: (400, "invalid_request", None),
    InputError: (400, "invalid_request", None),
    RequestTimeout: (504, "timeout", "No answer could be completed in time. Please try again."),
    ClientGone: (499, "client_closed", "The reader left."),
    ProviderAuthError: (502, "provider_auth", "The answer service is misconfigured. Please try again later."),
    ProviderUnavailable: (503, "provider_unavailable", "The answer service is unavailable. Please try again later."),
    ProviderError: (502, "provider_error", "The answer service failed. Please try again later."),
    StoreError: (503, "store_unavailable", "The document store is not ready. Please try again later."),
    EmbedderError: (503, "embedder_unavailable", "The search model is not available. Please try again later."),
    ConfigError: (500, "config_error", "The service is misconfigured."),
    IngestError: (500, "internal_error", "The service failed to answer."),
    CalibrationError: (500, "internal_error", "The service failed to answer."),
    CheckError: (500, "internal_error", "The service failed to answer."),
    VouchedError: (500, "internal_error", "The service failed to answer."),
}
_UNKNOWN = (500, "internal_error", "The service failed to answer.")


def _row(exc: BaseException) -> tuple[int, str, str | None]:
    for cls in type(exc).__mro__:
        if cls in HTTP_MAP:
            return HTTP_MAP[cls]
    return _UNKNOWN


def error_status(exc: BaseException) -> tuple[int, str]:
    """HTTP status and error type for any exception (500 internal_error for unknown ones)."""
    status, kind, _ = _row(exc)
    return status, kind


def error_body(exc: BaseException) -> dict:
    """The JSON body for an exception; 5xx messages are fixed public sentences."""
    status, kind, public = _row(exc)
    message = str(exc) if status < 500 else (public or _UNKNOWN[2])
    body: dict = {"type": kind, "message": message}
    if isinstance(exc, InvalidRequest) and exc.param:
        body["param"] = exc.param
    if isinstance(exc, RateLimited):
        body["limit"] = exc.limit
        body["retry_after_s"] = exc.retry_after_s
    return {"error": body}


def _validation_message(errors: list[dict]) -> str:
    parts = []
    for e in errors[:5]:
        loc = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{loc}: {e.get('msg', 'invalid')}")
    return "; ".join(parts)


_HTTP_TYPES = {404: "not_found", 405: "method_not_allowed", 413: "payload_too_large", 415: "unsupported_media_type"}


def install_error_handlers(app) -> None:
    """Every error the app lets out becomes `{"error": {type, message}}` with the status above."""
    import logging
    import math

    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    log = logging.getLogger("vouched.server")

    async def on_vouched(request: Request, exc: Exception) -> JSONResponse:
        status, _ = error_status(exc)
        if status >= 500:
            log.error("%s %s failed: %r", request.method, request.url.path, exc)
        headers = {}
        if isinstance(exc, RateLimited):
            headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
        if isinstance(exc, Unauthorized):
            headers["WWW-Authenticate"] = 'Bearer realm="vouched"'
        return JSONResponse(error_body(exc), status_code=status, headers=headers)

    async def on_validation(request: Request, exc: Exception) -> JSONResponse:
        errors = exc.errors() if isinstance(exc, RequestValidationError) else []
        return JSONResponse(error_body(InvalidRequest(_validation_message(errors) or "invalid request body")), status_code=400)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        kind = _HTTP_TYPES.get(exc.status_code, "invalid_request" if exc.status_code < 500 else "internal_error")
        return JSONResponse({"error": {"type": kind, "message": str(exc.detail)}}, status_code=exc.status_code,
                            headers=getattr(exc, "headers", None))

    async def on_bug(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path, exc_info=exc)
        return JSONResponse(error_body(exc), status_code=500)

    app.add_exception_handler(VouchedError, on_vouched)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(HTTPException, on_http)
    app.add_exception_handler(Exception, on_bug)
