"""The base of every `vouched.toml` table: unknown keys rejected, values frozen."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
