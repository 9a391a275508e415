"""First-person word lists for the voice check (L5), one file per language; see ``vouched.guard.voice``."""
