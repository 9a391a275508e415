"""detect_language(): script rules for non-Latin text, lingua for Latin-script languages."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vouched.text import LANGS, detect_language

QUESTIONS = {
    "en": ["What does she do now?", "Where did he study?", "Which projects has she worked on?", "Tell me about her research.", "Who is she?"],
    "es": ["¿Qué hace ella ahora?", "¿Dónde estudió?", "¿En qué proyectos ha trabajado?", "Háblame de su investigación.", "¿Quién es ella?"],
    "pt": ["O que ela faz agora?", "Onde ele estudou?", "Em quais projetos ela trabalhou?", "Fale-me sobre a pesquisa dela.", "Quem é ela?"],
    "fr": ["Que fait-elle maintenant ?", "Où a-t-il étudié ?", "Sur quels projets a-t-elle travaillé ?", "Parlez-moi de ses recherches.", "Qui est-elle ?"],
    "de": ["Was macht sie jetzt?", "Wo hat er studiert?", "An welchen Projekten hat sie gearbeitet?", "Erzähl mir von ihrer Forschung.", "Wer ist sie?"],
    "ru": ["Чем она сейчас занимается?", "Где он учился?", "Над какими проектами она работала?", "Кто она?"],
    "fa": ["او الان چه کار می‌کند؟", "کجا درس خوانده است؟", "روی چه پروژه‌هایی کار کرده است؟", "او کیست؟", "او كيست؟"],
    "ar": ["ماذا تعمل الآن؟", "أين درس؟", "ما هي المشاريع التي عملت عليها؟", "من هي؟", "حدثني عن بحثها."],
    "zh": ["她现在做什么？", "他在哪里读书？", "她参与过哪些项目？", "她是谁？"],
    "hi": ["वह अब क्या करती है?", "उसने कहाँ पढ़ाई की?", "उसने किन परियोजनाओं पर काम किया?", "वह कौन है?"],
}
CASES = [(lang, q) for lang, qs in QUESTIONS.items() for q in qs]


@pytest.mark.parametrize("lang, question", CASES)
def test_short_questions(lang: str, question: str) -> None:
    assert detect_language(question) == lang


def test_every_language_has_at_least_three_questions() -> None:
    assert set(QUESTIONS) == set(LANGS)
    assert all(len(qs) >= 3 for qs in QUESTIONS.values())


@pytest.mark.parametrize("text", ["", "   ", "?!", "12345", "ok", "[1]"])
def test_empty_or_too_short_returns_default(text: str) -> None:
    assert detect_language(text) == "en"
    assert detect_language(text, default="fa") == "fa"


def test_allowed_restricts_the_answer() -> None:
    assert detect_language("او کیست؟", allowed=("en", "ar")) == "ar"
    assert detect_language("من هي؟", allowed=("fa",)) == "fa"
    assert detect_language("她是谁？", allowed=("en", "fa"), default="fa") == "fa"
    assert detect_language("Where did he study?", allowed=("fa", "zh"), default="zh") == "zh"
    assert detect_language("Where did he study?", allowed=("fa",)) == "fa"
    assert detect_language("ok", allowed=("fa",)) == "en"  # too short: default
    # a single Latin candidate needs no statistics
    assert detect_language("¿Qué hace ella ahora?", allowed=("en", "fa")) == "en"


def test_dominant_script_wins_in_mixed_text() -> None:
    assert detect_language("What is 北京?") == "en"
    assert detect_language("她在Google工作吗？") == "zh"
    assert detect_language("آیا او در Google کار می‌کند؟") == "fa"


def test_arabic_script_decided_on_raw_letters() -> None:
    assert detect_language("چگونه") == "fa"
    assert detect_language("کیست") == "fa"  # Persian kaf/yeh
    assert detect_language("كيف حالك") == "ar"  # Arabic kaf/yeh
    assert detect_language("مدرسة") == "ar"


def test_lingua_is_not_loaded_at_import_or_for_non_latin_text() -> None:
    code = (
        "import sys\n"
        "import vouched.text as t\n"
        "assert 'lingua' not in sys.modules\n"
        "assert t.detect_language('او کیست؟') == 'fa'\n"
        "assert t.detect_language('Where?', allowed=('en',)) == 'en'\n"
        "assert 'lingua' not in sys.modules\n"
        "assert 'Stemmer' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
