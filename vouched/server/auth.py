"""Callers and tenants: API keys bound to tenants (DESIGN.md "Callers and tenants").

A key is `vk_<id>_<secret>` (32 random bytes of secret). Only `sha256:<hex>` of the whole key
is stored — in `[server.auth] keys` of vouched.toml or in the keys file that `vouched keys
create` writes (`server.auth.keys_file`, or the VOUCHED_KEYS_FILE environment variable). A
key is random, so one SHA-256 is enough (there is nothing to guess a dictionary from), and
the lookup is by the hash of what was presented, compared in constant time.

    Authorization: Bearer <key>       both endpoints; the OpenAI client's `api_key` is the key
    Authorization: Basic <_:key>      the same key, for a browser opening /docs
    no Authorization, or a bearer     anonymous: only `server.public_tenants`
    that is no vouched key (no vk_)   (default [corpus.tenant]; [] → every request needs a key).
                                      The OpenAI SDK always sends an api_key: a placeholder
                                      ("not-needed", "EMPTY") is not a key, so it is anonymous
    a vk_ key unknown or revoked      401, whatever tenant was asked for (never anonymous)
    a tenant the caller is not granted 403 with one fixed message: it never names a tenant,
                                      and says the same whether the tenant exists or not

Everything here but `KeyRing.load` is pure.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Mapping

from vouched.errors import ConfigError
from vouched.server.errors import Forbidden, Unauthorized

if TYPE_CHECKING:
    from vouched.config import ApiKeySettings, Config

KEY_PREFIX = "vk_"
KEYS_FILE_ENV = "VOUCHED_KEYS_FILE"
FORBIDDEN_TENANT = "this caller may not read the requested tenant"
BAD_KEY = "the API key is not valid"
KEY_NEEDED = "an API key is required: send Authorization: Bearer <key>"
ADMIN_NEEDED = "this needs an operator's API key"


def hash_key(key: str) -> str:
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> tuple[str, str]:
    """(key id, whole key). The key is shown once; only its hash is kept."""
    kid = secrets.token_hex(6)
    return kid, f"{KEY_PREFIX}{kid}_{secrets.token_urlsafe(32)}"


@dataclass(frozen=True)
class ApiKey:
    id: str
    hash: str
    tenants: tuple[str, ...] = ()
    name: str = ""
    admin: bool = False
    per_minute: int | None = None
    per_hour: int | None = None
    per_day: int | None = None
    monthly_cap_usd: float | None = None
    created_at: str = ""
    revoked_at: str = ""

    @classmethod
    def from_settings(cls, s: ApiKeySettings) -> ApiKey:
        return cls(id=s.id, hash=s.hash, tenants=tuple(s.tenants), name=s.name, admin=s.admin, per_minute=s.per_minute,
                   per_hour=s.per_hour, per_day=s.per_day, monthly_cap_usd=s.monthly_cap_usd,
                   created_at=s.created_at, revoked_at=s.revoked_at)


@dataclass(frozen=True)
class Caller:
    """Who is asking: a key (or None: anonymous) and the tenants it may read, default first."""

    key: ApiKey | None
    tenants: tuple[str, ...]

    @property
    def admin(self) -> bool:
        return self.key is not None and self.key.admin

    @property
    def label(self) -> str:
        return f"key:{self.key.id}" if self.key is not None else "anonymous"


class KeyRing:
    """The known keys, by hash."""

    def __init__(self, keys: Iterable[ApiKey] = ()) -> None:
        self.keys = tuple(keys)
        self._by_hash = {k.hash: k for k in self.keys}

    @classmethod
    def load(cls, config: Config) -> KeyRing:
        auth = config.server.auth
        keys = [ApiKey.from_settings(k) for k in auth.keys]
        keys += read_keys_file(keys_file_path(config))
        return cls(keys)

    def find(self, presented: str) -> ApiKey | None:
        """The live key whose hash is the presented key's, or None."""
        h = hash_key(presented)
        k = self._by_hash.get(h)
        if k is None or not hmac.compare_digest(k.hash, h) or k.revoked_at:
            return None
        return k


def keys_file_path(config: Config) -> Path:
    env = os.environ.get(KEYS_FILE_ENV)
    return Path(env) if env else config.resolve(config.server.auth.keys_file)


def read_keys_file(path: Path) -> list[ApiKey]:
    """Keys from a keys file ([[keys]] tables of ApiKeySettings); none if the file is absent."""
    import tomllib

    from pydantic import ValidationError

    from vouched.config import ApiKeySettings

    if not path.exists():
        return []
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return [ApiKey.from_settings(ApiKeySettings.model_validate(k)) for k in data.get("keys", [])]
    except (tomllib.TOMLDecodeError, ValidationError, TypeError) as exc:
        raise ConfigError(f"keys file {path} is not valid: {exc}") from None


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(str(v), ensure_ascii=False)  # a JSON string is a TOML basic string


def write_keys_file(path: Path, keys: Iterable[ApiKey]) -> None:
    """Write the keys file atomically (temp file beside it, then replace), readable by the owner only."""
    lines = ["# API keys of this vouched deployment: hashes only (`vouched keys create/list/revoke`).", ""]
    for k in keys:
        lines.append("[[keys]]")
        for name in ("id", "name", "hash", "tenants", "admin", "per_minute", "per_hour", "per_day", "monthly_cap_usd",
                     "created_at", "revoked_at"):
            v = getattr(k, name)
            if v is None or (name in ("revoked_at", "name") and not v):
                continue
            lines.append(f"{name} = {_toml_value(list(v) if name == 'tenants' else v)}")
        lines.append("")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def now_text() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- the decisions (pure) ----------------------------------------------------------------

def presented_key(headers: Mapping[str, str]) -> str | None:
    """The key in `Authorization: Bearer <key>` (or Basic with the key as password); None if
    there is no Authorization header; "" for one that carries no readable key."""
    value = next((v for k, v in headers.items() if k.lower() == "authorization"), None)
    if value is None:
        return None
    scheme, _, rest = value.strip().partition(" ")
    rest = rest.strip()
    if scheme.lower() == "bearer":
        return rest
    if scheme.lower() == "basic":
        try:
            user, _, password = base64.b64decode(rest, validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return ""
        return password or user
    return ""


def public_tenants(config: Config) -> tuple[str, ...]:
    p = config.server.public_tenants
    return (config.corpus.tenant,) if p is None else tuple(p)


def identify(presented: str | None, ring: KeyRing, public: tuple[str, ...]) -> Caller:
    """The caller of a request; Unauthorized for a vouched key (vk_…) that is not valid."""
    if presented is None or not presented.startswith(KEY_PREFIX):
        return Caller(None, public)  # no key, or an SDK's placeholder api_key
    key = ring.find(presented)
    if key is None:
        raise Unauthorized(BAD_KEY)
    return Caller(key, key.tenants)


def tenant_for(caller: Caller, requested: str | None, default_tenant: str) -> str:
    """The tenant to answer from: the one asked for if granted; with none asked, the
    deployment's default if granted, else the caller's first. Forbidden (403) otherwise, with
    a message that names no tenant; Unauthorized when an anonymous caller may read nothing."""
    if not caller.tenants:
        if caller.key is None:
            raise Unauthorized(KEY_NEEDED)
        raise Forbidden(FORBIDDEN_TENANT)
    if requested is None or requested == "":
        return default_tenant if default_tenant in caller.tenants else caller.tenants[0]
    if requested in caller.tenants:
        return requested
    raise Forbidden(FORBIDDEN_TENANT)


def require_admin(caller: Caller) -> None:
    if not caller.admin:
        raise Unauthorized(ADMIN_NEEDED) if caller.key is None else Forbidden(ADMIN_NEEDED)
