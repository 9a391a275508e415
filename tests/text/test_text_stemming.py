"""stem() and analyze()."""

from __future__ import annotations

import threading

import pytest

from vouched.text import analyze, normalize, stem


@pytest.mark.parametrize(
    "lang, a, b",
    [
        ("en", "running", "runs"),
        ("en", "projects", "project"),
        ("en", "studies", "studied"),
        ("es", "trabajando", "trabaja"),
        ("es", "proyectos", "proyecto"),
        ("pt", "trabalhando", "trabalha"),
        ("fr", "projets", "projet"),
        ("de", "Projekten", "Projekt"),
        ("ru", "работает", "работать"),
        ("fa", "کتاب‌ها", "کتاب"),
        ("fa", "کتابها", "کتاب"),
        ("fa", "دانشگاه‌ها", "دانشگاه"),
        ("ar", "المهندسة", "مهندسة"),
        ("ar", "الشركة", "الشرکه"),
        ("ar", "المدرسة", "مدرسه"),
        ("hi", "किताबें", "किताब"),
    ],
)
def test_same_stem(lang: str, a: str, b: str) -> None:
    sa = [stem(w, lang) for w in normalize(a).split()]
    sb = [stem(w, lang) for w in normalize(b).split()]
    assert sa[0] == sb[0]


def test_stem_identity_for_chinese_and_unknown() -> None:
    assert stem("北京", "zh") == "北京"
    assert stem("running", "it") == "running"
    assert stem("", "en") == ""
    assert stem("running", "EN") == stem("running", "en-GB") == "run"


def test_arabic_stem_output_is_normalised() -> None:
    out = stem(normalize("الكتاب"), "ar")
    assert out == normalize(out) == "کتاب"


def test_analyze_keeps_repeats_unless_unique() -> None:
    text = "She runs projects; running projects is her job."
    assert analyze(text, "en") == ["run", "project", "run", "project", "job"]
    assert analyze(text, "en", unique=True) == ["run", "project", "job"]


def test_analyze_without_lang_picks_stemmer_by_script() -> None:
    assert analyze("running projects") == ["run", "project"]
    assert analyze("Она работает") == [stem("работает", "ru")]
    assert analyze("किताबें पढ़ता") == [stem("किताबें", "hi"), stem("पढ़ता", "hi")]
    assert analyze("北京工作") == ["北京", "京工", "工作"]
    # Arabic text (no Persian-only letters) -> arabic stemmer
    assert analyze("المهندسة في الشركة") == [stem("المهندسه", "ar"), stem("الشرکه", "ar")]
    # Persian letters present -> persian stemmer for the Arabic-script tokens
    assert analyze("کتاب‌های پژوهشی") == [stem("کتاب", "fa"), stem("پژوهشی", "fa")]


def test_analyze_matches_between_arabic_and_persian_keyboards() -> None:
    assert analyze("كتاب‌هاي جديد", "fa") == analyze("کتاب‌های جدید", "fa")
    assert analyze("الشركة", "ar") == analyze("الشرکه", "ar")


def test_stem_is_thread_safe() -> None:
    words = [f"running{i}s" for i in range(300)] + ["projects", "studies"] * 100
    expected = [stem(w, "en") for w in words]
    results: list[list[str]] = []

    def work() -> None:
        results.append([analyze(w, "en")[0] for w in words])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == expected for r in results)
