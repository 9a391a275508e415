"""Load the site's structured records (CV entries, case studies, articles, services).

A records file is `records.yaml`, `records.yml`, `records.json`, or any `*.records.yaml`,
`*.records.yml` or `*.records.json`. It holds a list of entries, or a mapping with a
`records:` list and optional file-wide defaults `lang:` and `tenant:`.

Validation is strict and every message names the file, the entry (index and id) and the
key: records are answered verbatim, with their dates, so a typo must stop the load rather
than surface as a wrong date in an answer. Dates are kept as strings at the precision the
author wrote ("2021", "2021-03", "2021-03-05"), because the site shows them that way.
"""

from __future__ import annotations

import json
import re
from datetime import date, datetime
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from vouched.errors import IngestError
from vouched.ingest._fields import load_yaml, read_text, yaml_problem
from vouched.types import Record

RECORD_KINDS = ("cv", "case_study", "article", "service", "education", "skill", "award", "talk")
RECORD_FILE_NAMES = ("records.yaml", "records.yml", "records.json")
RECORD_FILE_SUFFIXES = (".records.yaml", ".records.yml", ".records.json")
_KEYS = (
    "id", "kind", "title", "summary", "start", "end", "current", "url", "organisation", "lang",
    "tenant", "translations",
)  # fmt: skip
_TRANSLATION_KEYS = ("title", "summary", "organisation")
_HINTS = {"organization": "organisation", "name": "title", "description": "summary", "type": "kind"}
_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
_KIND = re.compile(r"^[a-z][a-z0-9_]*$")
_DATE_HINT = "use YYYY, YYYY-MM or YYYY-MM-DD"


def is_records_file(path: Path) -> bool:
    name = path.name.lower()
    return name in RECORD_FILE_NAMES or name.endswith(RECORD_FILE_SUFFIXES)


def load_records(
    path: Path,
    *,
    default_tenant: str = "default",
    allowed_langs: Sequence[str] | None = None,
    default_lang: str | None = None,
) -> list[Record]:
    """Read and validate one records file; raise `IngestError` on the first problem."""
    path = Path(path)
    data = _parse(path)
    entries, defaults = _entries(data, path)
    file_lang = _lang_or_none(defaults.get("lang"))
    file_tenant = str(defaults.get("tenant") or default_tenant)
    records: list[Record] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries, start=1):
        where = _Where(str(path), index, entry.get("id") if isinstance(entry, dict) else None)
        record = _record(entry, where, file_lang, file_tenant, allowed_langs, default_lang)
        if record.id in seen:
            raise IngestError(f"{where}: duplicate id {record.id!r} (first used by entry {seen[record.id]})")
        seen[record.id] = index
        records.append(record)
    return records


class _Where:
    """Renders "records.yaml entry 3 (id 'acme')" for messages."""

    def __init__(self, file: str, index: int, entry_id: Any) -> None:
        self.text = f"{file} entry {index}" + (f" (id {str(entry_id)!r})" if entry_id not in (None, "") else "")

    def __str__(self) -> str:
        return self.text


def _parse(path: Path) -> Any:
    text = read_text(path)
    try:
        if path.suffix.lower() == ".json":
            return json.loads(text)
        return load_yaml(text)
    except json.JSONDecodeError as exc:
        raise IngestError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from exc
    except yaml.YAMLError as exc:
        raise IngestError(f"{path}: not valid YAML ({yaml_problem(exc)})") from exc


def _entries(data: Any, path: Path) -> tuple[list[Any], Mapping[str, Any]]:
    if data is None:
        return [], {}
    if isinstance(data, list):
        return data, {}
    if isinstance(data, dict) and isinstance(data.get("records"), list):
        extra = sorted(set(data) - {"records", "lang", "tenant"})
        if extra:
            raise IngestError(f"{path}: unknown top-level key(s) {', '.join(extra)}; allowed: records, lang, tenant")
        return data["records"], data
    raise IngestError(f"{path}: expected a list of records or a mapping with a 'records:' list")


def _record(
    entry: Any,
    where: _Where,
    file_lang: str | None,
    file_tenant: str,
    allowed_langs: Sequence[str] | None,
    default_lang: str | None,
) -> Record:
    if not isinstance(entry, dict):
        raise IngestError(f"{where}: an entry must be a mapping of key: value, not {type(entry).__name__}")
    _check_keys(entry, where)
    record_id = _required_str(entry, "id", where)
    kind = _required_str(entry, "kind", where)
    if not _KIND.match(kind):
        raise IngestError(f"{where}: kind {kind!r} must be lower-case letters, digits and '_' (e.g. {', '.join(RECORD_KINDS[:4])})")
    title = _required_str(entry, "title", where)
    start = _date_str(entry.get("start"), where, "start")
    end_raw = entry.get("end")
    is_present = isinstance(end_raw, str) and end_raw.strip().lower() == "present"
    end = None if is_present else _date_str(end_raw, where, "end")
    current = _bool(entry.get("current"), where) if "current" in entry else is_present
    if is_present and not current:
        raise IngestError(f"{where}: end 'present' contradicts current: false")
    if current and end is not None:
        raise IngestError(f"{where}: current: true but end is {end!r}; remove end or use end: present")
    if start and end and _padded(end) < _padded(start):
        raise IngestError(f"{where}: end {end!r} is before start {start!r}")
    summary = _optional_str(entry, "summary", where)
    organisation = _optional_str(entry, "organisation", where)
    lang = _lang_or_none(entry.get("lang")) or file_lang or _detect(f"{title}\n{summary}", allowed_langs, default_lang)
    return Record(
        id=record_id,
        kind=kind,
        title=title,
        summary=summary,
        start=start,
        end=end,
        current=current,
        url=_optional_str(entry, "url", where) or None,
        organisation=organisation,
        lang=lang,
        tenant=_optional_str(entry, "tenant", where) or file_tenant,
        translations=_translations(entry.get("translations"), where),
    )


def _check_keys(entry: Mapping[str, Any], where: _Where) -> None:
    for key in entry:
        if key not in _KEYS:
            hint = f"; did you mean {_HINTS[key]!r}?" if key in _HINTS else f"; allowed: {', '.join(_KEYS)}"
            raise IngestError(f"{where}: unknown key {key!r}{hint}")


def _required_str(entry: Mapping[str, Any], key: str, where: _Where) -> str:
    value = entry.get(key)
    if value is None or isinstance(value, (bool, dict, list)) or not str(value).strip():
        raise IngestError(f"{where}: {key} is required and must be a non-empty string")
    return str(value).strip()


def _optional_str(entry: Mapping[str, Any], key: str, where: _Where) -> str:
    value = entry.get(key)
    if value is None:
        return ""
    if isinstance(value, (bool, dict, list)):
        raise IngestError(f"{where}: {key} must be a string, not {type(value).__name__}")
    return str(value).strip()


def _bool(value: Any, where: _Where) -> bool:
    if isinstance(value, bool):
        return value
    raise IngestError(f"{where}: current must be true or false, not {value!r}")


def _date_str(value: Any, where: _Where, key: str) -> str | None:
    """A date kept at its written precision; YAML's own date parsing is undone to a string."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        value = value.date()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip() if isinstance(value, (str, int)) and not isinstance(value, bool) else repr(value)
    match = _DATE.match(text)
    if match and _valid(*match.groups()):
        return text
    raise IngestError(f"{where}: {key} {text!r} is not a date ({_DATE_HINT})")


def _valid(year: str, month: str | None, day: str | None) -> bool:
    try:
        date(int(year), int(month or 1), int(day or 1))
    except ValueError:
        return False
    return True


def _padded(value: str) -> str:
    """Compare dates of mixed precision by their first day: "2021" ≤ "2021-03"."""
    return (value + "-01-01")[:10] if len(value) == 4 else (value + "-01")[:10]


def _translations(value: Any, where: _Where) -> dict[str, dict[str, str]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise IngestError(f"{where}: translations must be a mapping of language: {{title, summary, organisation}}")
    out: dict[str, dict[str, str]] = {}
    for lang, fields in value.items():
        code = _lang_or_none(lang)
        if not code or not isinstance(fields, dict):
            raise IngestError(f"{where}: translations.{lang} must be a mapping of title, summary, organisation")
        for key, text in fields.items():
            if key not in _TRANSLATION_KEYS:
                raise IngestError(f"{where}: translations.{lang}: unknown key {key!r}; allowed: {', '.join(_TRANSLATION_KEYS)}")
            if not isinstance(text, str):
                raise IngestError(f"{where}: translations.{lang}.{key} must be a string")
        out[code] = {k: v.strip() for k, v in fields.items() if v.strip()}
    return out


def _lang_or_none(value: Any) -> str | None:
    if value is None or not str(value).strip():
        return None
    return re.split(r"[-_]", str(value).strip(), maxsplit=1)[0].lower()


def _detect(text: str, allowed_langs: Sequence[str] | None, default_lang: str | None) -> str:
    from vouched.text import LANGS, detect_language

    allowed = tuple(allowed_langs) if allowed_langs else tuple(LANGS)
    default = default_lang or (allowed[0] if allowed else "en")
    return detect_language(text, allowed=allowed, default=default) if text.strip() else default
