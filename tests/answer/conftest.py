"""A portfolio site on the hashing stand-in embedder, ingested once per module."""

from pathlib import Path

import pytest

from tests.helpers import copy_example_hashing

from vouched.answer import Assistant
from vouched.config import load_config
from vouched.engine import Engine

ROOT = Path(__file__).resolve().parents[2]


class Counting:
    """Wraps factories to prove what was (not) constructed."""

    def __init__(self, engine: Engine, provider=None):
        self.engine = engine
        self.provider = provider
        self.counts = {"retriever": 0, "store": 0, "embedder": 0, "provider": 0}

    def retriever(self):
        self.counts["retriever"] += 1
        return self.engine.retriever

    def store(self):
        self.counts["store"] += 1
        return self.engine.store

    def embedder(self):
        self.counts["embedder"] += 1
        return self.engine.embedder

    def make_provider(self):
        self.counts["provider"] += 1
        return self.provider


@pytest.fixture(scope="module")
def site_config(tmp_path_factory):
    toml = copy_example_hashing("portfolio", tmp_path_factory.mktemp("answer") / "portfolio")
    cfg = load_config(toml)
    Engine(cfg).ingest()
    return cfg


def make_assistant(cfg, provider=None, **kw):
    """An Assistant whose parts count what was built (answer/build.py: each `Lazy` part once)."""
    from vouched.answer.build import Lazy, build

    eng = Engine(cfg)
    counting = Counting(eng, provider)
    parts = build(cfg, engine=eng, store=Lazy(counting.store), embedder=Lazy(counting.embedder),
                  retriever=Lazy(counting.retriever),
                  provider=Lazy(counting.make_provider) if provider is not None else None, **kw)
    return Assistant(cfg, parts=parts), counting


@pytest.fixture
def assistant(site_config):
    return make_assistant(site_config)
