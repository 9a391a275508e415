"""Document-level fields shared by every loader: front matter, HTML meta, dates, decoding.

One place coerces these fields so a Markdown front matter, a text file's front matter and an
HTML page's `<meta name="vouched:...">` tags mean exactly the same thing, and so a bad value
fails the same way everywhere: an `IngestError` naming the file and the key.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from pathlib import Path
from typing import Any, Mapping

import yaml

from vouched.errors import IngestError

# The document-level fields a source may set (front matter keys; HTML meta names get the
# "vouched:" prefix). Everything else in front matter is kept under metadata["extra"].
DOCUMENT_FIELDS: tuple[str, ...] = (
    "id",
    "title",
    "lang",
    "tenant",
    "version",
    "updated_at",
    "effective_from",
    "effective_to",
    "supersedes",
    "authority",
    "draft",
    "url",
)
_STRING_FIELDS = ("id", "title", "lang", "tenant", "version", "supersedes", "url")
_FULL_DATE_FIELDS = ("updated_at",)
_PERIOD_DATE_FIELDS = ("effective_from", "effective_to")  # YYYY and YYYY-MM allowed: first day

_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$", re.MULTILINE)
_YEAR = re.compile(r"^\d{4}$")
_YEAR_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}


class _DatesAsText(yaml.SafeLoader):
    """SafeLoader that leaves dates as text: vouched validates them itself, so an impossible
    date ("2024-02-30") becomes an error naming the key instead of a crash inside YAML."""


_DatesAsText.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """Parse YAML safely, dates kept as strings (raises yaml.YAMLError)."""
    return yaml.load(text, Loader=_DatesAsText)  # noqa: S506 - a SafeLoader subclass


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A one-line description of a YAML error with its line number."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return f"{problem} at line {mark.line + 1}" if mark is not None else str(problem)


def read_text(path: Path) -> str:
    """Decode a text file as UTF-8 (a BOM is dropped), or fail naming the file.

    Sites are written in UTF-8; guessing another encoding would silently corrupt Persian or
    Spanish text, so anything else is an error the author can fix.
    """
    data = read_bytes(path)
    for encoding in ("utf-8", "utf-8-sig"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        return text.removeprefix("\ufeff")
    raise IngestError(f"{path}: cannot decode as UTF-8; save the file as UTF-8")


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise IngestError(f"{path}: cannot read file ({exc.strerror or exc})") from exc


def split_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """Split a leading `---` YAML block from the body; no block gives an empty mapping."""
    if not text.startswith("---"):
        return {}, text
    first_newline = text.find("\n")
    if first_newline == -1 or text[:first_newline].strip() != "---":
        return {}, text
    end = _FRONT_MATTER_END.search(text, first_newline + 1)
    if end is None:
        raise IngestError(f"{path}: front matter opened with '---' is never closed")
    raw = text[first_newline + 1 : end.start()]
    body = text[end.end() :].lstrip("\r\n")
    try:
        data = load_yaml(raw) if raw.strip() else {}
    except yaml.YAMLError as exc:
        raise IngestError(f"{path}: front matter is not valid YAML ({yaml_problem(exc)})") from exc
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise IngestError(f"{path}: front matter must be a mapping of key: value, not {type(data).__name__}")
    return {str(k): v for k, v in data.items()}, body


def coerce_fields(raw: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """Turn raw front-matter/meta values into typed document fields.

    Known keys are validated (dates → `date`, authority → int, draft → bool, the rest →
    stripped strings); unknown keys are kept as given under "extra" so site generators'
    own keys (layout, tags, slug) never break ingestion.
    """
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in DOCUMENT_FIELDS:
            extra[key] = value
            continue
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        fields[key] = _coerce_one(key, value, path)
    if extra:
        fields["extra"] = extra
    return fields


def _coerce_one(key: str, value: Any, path: Path) -> Any:
    if key in _FULL_DATE_FIELDS:
        return parse_date(value, path, key, allow_partial=False)
    if key in _PERIOD_DATE_FIELDS:
        return parse_date(value, path, key, allow_partial=True)
    if key == "authority":
        return _parse_int(value, path, key)
    if key == "draft":
        return parse_bool(value, path, key)
    if isinstance(value, (dict, list)):
        raise IngestError(f"{path}: {key} must be a single value, not a {type(value).__name__}")
    text = str(value).strip()
    if key == "lang":  # "en-US", "fa_IR" → the primary subtag, the form language packs use
        return re.split(r"[-_]", text, maxsplit=1)[0].lower()
    return text


def parse_date(value: Any, path: Path | str, key: str, *, allow_partial: bool) -> date:
    """Parse an ISO date; with `allow_partial`, `YYYY` and `YYYY-MM` mean their first day.

    YAML already turns `2024-01-01` into a `date` and `2024` into an int, so both arrive here.
    """
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else None
    hint = "use YYYY-MM-DD" + (", YYYY-MM or YYYY" if allow_partial else "")
    if text is None:
        raise IngestError(f"{path}: {key} {value!r} is not a date ({hint})")
    try:
        if allow_partial and _YEAR.match(text):
            return date(int(text), 1, 1)
        month = _YEAR_MONTH.match(text)
        if allow_partial and month:
            return date(int(month.group(1)), int(month.group(2)), 1)
        if len(text) == 10:
            return date.fromisoformat(text)
        return datetime.fromisoformat(text).date()
    except ValueError:
        raise IngestError(f"{path}: {key} {text!r} is not a date ({hint})") from None


def _parse_int(value: Any, path: Path, key: str) -> int:
    if isinstance(value, bool):
        raise IngestError(f"{path}: {key} must be a whole number, not {value!r}")
    try:
        return int(str(value).strip())
    except ValueError:
        raise IngestError(f"{path}: {key} must be a whole number, not {value!r}") from None


def parse_bool(value: Any, path: Path | str, key: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise IngestError(f"{path}: {key} must be true or false, not {value!r}")
