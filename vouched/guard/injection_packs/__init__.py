"""Injection pattern packs (data only): one TOML file per language, plus common.toml."""
