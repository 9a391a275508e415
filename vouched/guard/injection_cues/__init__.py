"""Cue lexicons of the injection scan (vouched.guard.cues), one TOML file per language."""
