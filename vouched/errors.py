"""The error tree. Every error vouched raises on purpose derives from one root, and is drawn here.

    VouchedError                      exit  HTTP
     ├── ConfigError                    2   500  a vouched.toml key is missing, unknown or invalid
     ├── InputError                     2   400  what was given cannot be used as sent (also a ValueError)
     │    ├── GoldenInputError                   a golden file is missing or malformed   (vouched.eval.golden)
     │    └── BenchInputError                    benchmark data missing, malformed or not the
     │                                           data its condition file names          (vouched.eval.datasets)
     ├── RequestError                   2   400  an HTTP request cannot be served as sent   (vouched.server.errors)
     │    ├── InvalidRequest                400  bad JSON, a missing field, a limit exceeded
     │    ├── Unauthorized                  401  no valid API key where one is needed
     │    ├── Forbidden                     403  a tenant (or operator route) the caller is not granted
     │    ├── BodyTimeout                   408  the body did not arrive within server.body_timeout_s
     │    ├── PayloadTooLarge               413  the body is larger than the server reads
     │    └── RateLimited                   429  a per-client limit was hit (Retry-After set)
     ├── IngestError                    3   500  a source file could not be read or parsed
     │    └── ShrinkRefused                      an ingest would empty the corpus or shrink it past corpus.max_shrink
     ├── StoreError                     4   503  the store is missing, corrupt or has no corpus version
     │    ├── PgUnavailable                      no PostgreSQL connection could be had    (vouched.pg)
     │    ├── MigrationError                     the schema's migrations differ from the code's (vouched.pg)
     │    ├── StoreNotDurable                    the spend counter store would forget the month on a restart (vouched.spend)
     │    ├── DeadlinePassed                     the counter store did not answer within its deadline (vouched.spend)
     │    └── TraceStoreError           1        the trace store cannot be used           (vouched.trace.store)
     │         ├── TraceNotFound        1        no trace has this id (or prefix)
     │         └── AmbiguousTraceId     1        a prefix matches more than one trace
     ├── EmbedderError                  5   503  the embedding model could not load or embed
     ├── ProviderError                  6   502  an LLM provider refused or failed          (vouched.llm.errors)
     │    ├── ProviderAuthError             502  no API key, or the key was rejected
     │    ├── ProviderUnavailable           503  unreachable, timeout, 429, 5xx: try again later
     │    └── ProviderProtocolError         502  the reply is not the stream the protocol promises
     ├── CalibrationError               2   500  calibration cannot run or cannot write     (vouched.eval.calibrate)
     ├── CheckError                     7   500  a deployed service cannot be checked       (vouched.eval.check)
     ├── RequestTimeout                 1   504  no answer within server.request_timeout_s  (vouched.server.errors)
     └── ClientGone                     1   499  the reader left before the answer started (vouched.server.streaming)

Subpackages only add leaves under a drawn parent, and draw them here (a test walks
`VouchedError.__subclasses__()` and fails on any class missing from this drawing or drawn
under the wrong parent). The modules named in brackets re-export their classes, so
`from vouched.llm.errors import ProviderError` keeps working.

Exit codes (the ONE table: `EXIT_CODES`, read by `exit_code`): 0 done; 1 the command ran and
the answer is "no" (a target missed, a case escaped, no threshold exists, no such trace);
2 what was given cannot be used (command line, config, an input file); 3 a source could not
be ingested; 4 the store cannot serve; 5 the embedder cannot serve; 6 the LLM provider
failed; 7 the service under check could not be checked. The HTTP statuses above are
`vouched.server.errors` (one table there, tested against this tree).
"""

from __future__ import annotations

__all__ = [
    "AmbiguousTraceId", "BenchInputError", "BodyTimeout", "DeadlinePassed", "StoreNotDurable", "Forbidden", "Unauthorized", "CalibrationError", "CheckError", "ClientGone", "ConfigError",
    "EXIT_CODES", "EXIT_INGEST", "EXIT_INPUT", "EXIT_NO", "EXIT_OK", "EXIT_UNCHECKED", "EmbedderError",
    "GoldenInputError", "IngestError", "InputError", "InvalidRequest", "MigrationError", "PayloadTooLarge",
    "PgUnavailable", "ProviderAuthError", "ProviderError", "ProviderProtocolError", "ProviderUnavailable",
    "RateLimited", "RequestError", "RequestTimeout", "ShrinkRefused", "StoreError", "TraceNotFound", "TraceStoreError",
    "VouchedError", "exit_code",
]


class VouchedError(Exception):
    """Root of every error vouched raises on purpose."""


class ConfigError(VouchedError):
    """The configuration is invalid; the message names the key and how to fix it."""


class InputError(VouchedError, ValueError):
    """What was given cannot be used as sent: an empty or over-long question, a bad input file."""


class GoldenInputError(InputError):
    """A golden file is missing or malformed; the message names the file and line."""


class BenchInputError(InputError):
    """Benchmark input is missing, malformed, or differs from its condition file."""


class RequestError(VouchedError):
    """The request cannot be served as sent; the message says what to change."""


class InvalidRequest(RequestError):
    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class Unauthorized(RequestError):
    """No valid API key where one is needed (401, WWW-Authenticate: Bearer)."""


class Forbidden(RequestError):
    """The caller is not granted what it asked for (403). The message never names a tenant."""


class BodyTimeout(RequestError):
    """The request body did not arrive in time (408; the connection is closed)."""


class PayloadTooLarge(RequestError):
    """The body is larger than the service reads."""


class RateLimited(RequestError):
    def __init__(self, message: str, *, retry_after_s: float, limit: str) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.limit = limit


class IngestError(VouchedError):
    """A source could not be read; the message names the file."""


class ShrinkRefused(IngestError):
    """An ingest would empty the corpus or drop more of it than `corpus.max_shrink` allows;
    nothing was written and the current version still serves."""


class StoreError(VouchedError):
    """The store cannot serve: missing file, no corpus version, schema mismatch."""


class PgUnavailable(StoreError):
    """No connection could be had (server unreachable, or the pool stayed full)."""


class MigrationError(StoreError):
    """The schema records a migration this code lacks, or one whose text changed."""


class StoreNotDurable(StoreError):
    """The counter store would forget the month's spend on a restart (e.g. Redis without persistence)."""


class DeadlinePassed(StoreError):
    """The counter store did not answer within the deadline."""


class TraceStoreError(StoreError):
    """The trace file cannot be used: unreadable, or written by an incompatible schema."""


class TraceNotFound(TraceStoreError):
    """No trace has this id (or id prefix)."""


class AmbiguousTraceId(TraceStoreError):
    """An id prefix matches more than one trace; the message lists them."""


class EmbedderError(VouchedError):
    """The embedder failed to load or to embed."""


class ProviderError(VouchedError):
    """The provider refused or failed the request; the message says what it reported."""

    def __init__(self, message: str, *, status: int | None = None, provider: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.provider = provider


class ProviderAuthError(ProviderError):
    """No API key was found, or the provider rejected it; the message says how to fix it."""


class ProviderUnavailable(ProviderError):
    """The provider could not be reached or could not serve now: retrying later may work."""


class ProviderProtocolError(ProviderError):
    """The reply broke the wire protocol: not an event stream, or an event that cannot be read."""


class CalibrationError(VouchedError):
    """Calibration cannot run or cannot write; the message says what to fix."""


class CheckError(VouchedError):
    """The service cannot be checked at all: unreachable, not a vouched SSE endpoint, a bad URL."""


class RequestTimeout(VouchedError):
    """No answer within server.request_timeout_s."""


class ClientGone(VouchedError):
    """The reader closed the connection before the answer started (never leaves the server)."""


# -- exit codes: the one table ---------------------------------------------------------------------
EXIT_OK = 0
EXIT_NO = 1  # the command ran and the answer is "no": a target missed, a case escaped, nothing found
EXIT_INPUT = 2  # what was given cannot be used: the command line (typer's own usage errors), the config, a file
EXIT_INGEST = 3
EXIT_UNCHECKED = 7

EXIT_CODES: dict[type[VouchedError], int] = {
    VouchedError: EXIT_NO,
    ConfigError: EXIT_INPUT,
    InputError: EXIT_INPUT,
    RequestError: EXIT_INPUT,
    IngestError: EXIT_INGEST,
    StoreError: 4,
    TraceStoreError: EXIT_NO,  # `vouched trace ID`: no such trace, or no trace store to read: nothing to show
    EmbedderError: 5,
    ProviderError: 6,
    CalibrationError: EXIT_INPUT,
    CheckError: EXIT_UNCHECKED,
    RequestTimeout: EXIT_NO,  # the server's own; a CLI that meets one (`vouched check`) reports it as a miss
    ClientGone: EXIT_NO,
}


def exit_code(exc: BaseException) -> int:
    """The exit code of an error: its nearest class in EXIT_CODES (1 for anything outside the tree)."""
    for cls in type(exc).__mro__:
        if cls in EXIT_CODES:
            return EXIT_CODES[cls]
    return EXIT_NO
