"""Issue 15.2: every pack entry's intent is kept beside it as examples, and checked.

The shipped L1 and injection packs pass their own examples; `vouched packs check` runs the
same check on a site owner's pack file or on a vouched.toml's [guard.extra_patterns], names
the pattern that matched or failed, and exits 1 on a failure.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from vouched.cli import app
from vouched.guard.packs import load_packs
from vouched.guard.packs.check import check_builtin, check_file, check_injection_builtin
from vouched.guard.refusal import match_refusal
from vouched.text import LANGS


def test_every_shipped_l1_example_holds():
    results = check_builtin()
    failed = [r.line() for r in results if not r.ok]
    assert len(results) > 300
    assert not failed, "\n".join(failed)


def test_every_shipped_injection_example_holds():
    results = check_injection_builtin()
    failed = [r.line() for r in results if not r.ok]
    assert len(results) > 40
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("lang", LANGS)
def test_every_category_of_every_pack_carries_examples(lang):
    pack = load_packs([lang]).by_lang[lang]
    for cat, rules in pack.refusal.items():
        has = bool(pack.examples.get(cat)) or any(r.yes for r in rules)
        assert has, f"{lang} refusal.{cat} has no yes/no examples"


def test_a_failing_example_is_reported_with_its_pattern(tmp_path: Path):
    f = tmp_path / "en.toml"
    f.write_text(
        "[refusal.fees]\n"
        "[[refusal.fees.rule]]\n"
        "re = 'hourly\\s+rate'\n"
        "yes = ['What is her hourly rate?', 'What is her day rate?']\n"
        "no = ['What was the hourly rate of errors?']\n",
        encoding="utf-8",
    )
    results = check_file(f)
    bad = [r for r in results if not r.ok]
    assert {r.text for r in bad} == {"What is her day rate?", "What was the hourly rate of errors?"}
    assert all(r.pattern == "hourly\\s+rate" for r in bad)
    out = CliRunner().invoke(app, ["packs", "check", str(f)])
    assert out.exit_code == 1
    assert "day rate" in out.output and "hourly\\s+rate" in out.output


def test_config_extra_patterns_with_examples(tmp_path: Path):
    cfg = tmp_path / "vouched.toml"
    cfg.write_text(
        "[guard.extra_patterns.en]\n"
        "discounts = [ { re = 'student\\s+discount', yes = ['Is there a student discount?'], no = ['What did the student write?'] }, 'coupon\\s+code' ]\n",
        encoding="utf-8",
    )
    results = check_file(cfg)
    assert results and all(r.ok for r in results)
    assert CliRunner().invoke(app, ["packs", "check", str(cfg)]).exit_code == 0
    # the same tables load as L1 patterns: the examples are for the check only
    packs = load_packs(["en"], {"en": {"discounts": [{"re": "student\\s+discount", "yes": ["x"]}, "coupon\\s+code"]}})
    assert match_refusal("Any student discount for me?", packs).category == "discounts"
    assert match_refusal("Do you have a coupon code?", packs).category == "discounts"


def test_a_bad_pattern_table_is_a_config_error(tmp_path: Path):
    from vouched.errors import ConfigError

    with pytest.raises(ConfigError):
        load_packs(["en"], {"en": {"x": [{"regex": "a"}]}})
