"""Negation cues and opposite-word groups for claim verification, one TOML file per language; see ``vouched.guard.verify``."""
