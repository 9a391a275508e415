"""Records route and follow-up helpers: overview topics per language, subject mentions,
follow-up detection and ordinal resolution."""

from __future__ import annotations

import pytest

from vouched.guard.packs import load_packs
from vouched.guard.route import (
    OVERVIEW_TOPICS,
    is_followup,
    list_items,
    match_overview,
    mentions_subject,
    resolve_ordinal,
)
from vouched.text import LANGS

NAMES = ["Leila Navid", "Leila", "لیلا نوید", "لیلا", "ليلى", "Лейла", "莉拉", "लीला"]

OVERVIEW: dict[str, list[tuple[str, str]]] = {
 "en": [("What does she do now?","current"),("What has she done recently?","recent"),("Tell me about her career","career"),("What projects has she worked on?","projects"),("What is her research about?","research"),("What has she written?","writing"),("Where did she study?","education"),("What are her skills?","skills"),("What services does she offer?","services"),("What talks has she given?","talks"),("Who is Leila Navid?","overview")],
 "es": [("¿A qué se dedica ahora?","current"),("¿Qué ha hecho recientemente?","recent"),("Háblame de su trayectoria","career"),("¿En qué proyectos ha trabajado?","projects"),("¿De qué trata su investigación?","research"),("¿Qué ha escrito?","writing"),("¿Dónde estudió?","education"),("¿Cuáles son sus habilidades?","skills"),("¿Qué servicios ofrece?","services"),("¿Qué charlas ha dado?","talks"),("¿Quién es Leila Navid?","overview")],
 "pt": [("O que ela faz agora?","current"),("O que ela fez recentemente?","recent"),("Fale sobre a sua carreira","career"),("Em que projetos ela trabalhou?","projects"),("Sobre o que é a sua pesquisa?","research"),("O que ela escreveu?","writing"),("Onde ela estudou?","education"),("Quais são as suas habilidades?","skills"),("Quais serviços ela oferece?","services"),("Quais palestras ela deu?","talks"),("Quem é Leila?","overview")],
 "fr": [("Que fait-elle maintenant ?","current"),("Qu'a-t-elle fait récemment ?","recent"),("Parlez-moi de son parcours","career"),("Sur quels projets a-t-elle travaillé ?","projects"),("Sur quoi porte sa recherche ?","research"),("Qu'a-t-elle écrit ?","writing"),("Où a-t-elle étudié ?","education"),("Quelles sont ses compétences ?","skills"),("Quels services propose-t-elle ?","services"),("Quelles conférences a-t-elle données ?","talks"),("Qui est Leila Navid ?","overview")],
 "de": [("Was macht sie jetzt?","current"),("Was hat sie in letzter Zeit gemacht?","recent"),("Erzähl mir von ihrem Werdegang","career"),("An welchen Projekten hat sie gearbeitet?","projects"),("Worum geht es in ihrer Forschung?","research"),("Was hat sie geschrieben?","writing"),("Wo hat sie studiert?","education"),("Was sind ihre Fähigkeiten?","skills"),("Welche Leistungen bietet sie an?","services"),("Welche Vorträge hat sie gehalten?","talks"),("Wer ist Leila Navid?","overview")],
 "ru": [("Чем она сейчас занимается?","current"),("Что она сделала недавно?","recent"),("Расскажи о её карьере","career"),("Над какими проектами она работала?","projects"),("О чём её исследование?","research"),("Что она написала?","writing"),("Где она училась?","education"),("Какие у неё навыки?","skills"),("Какие услуги она предлагает?","services"),("Какие доклады она делала?","talks"),("Кто такая Лейла?","overview")],
 "fa": [("الان چیکار می‌کنه؟","current"),("اخیرا چه کارهایی کرده است؟","recent"),("درباره سابقه کاری‌اش بگو","career"),("روی چه پروژه‌هایی کار کرده؟","projects"),("تحقیقاتش درباره چیست؟","research"),("چه چیزهایی نوشته است؟","writing"),("کجا درس خوانده؟","education"),("مهارت‌هایش چیست؟","skills"),("چه خدماتی ارائه می‌دهد؟","services"),("چه سخنرانی‌هایی داشته؟","talks"),("لیلا نوید کیست؟","overview")],
 "ar": [("ماذا تعمل الآن؟","current"),("ماذا فعلت مؤخرا؟","recent"),("ما هي مسيرتها المهنية؟","career"),("ما هي مشاريعها؟","projects"),("عن ماذا بحثها؟","research"),("ماذا كتبت؟","writing"),("أين درست؟","education"),("ما هي مهاراتها؟","skills"),("ما الخدمات التي تقدمها؟","services"),("ما هي محاضراتها؟","talks"),("من هي ليلى؟","overview")],
 "zh": [("她现在做什么？","current"),("她最近做了什么？","recent"),("她的职业经历是什么样的？","career"),("她做过哪些项目？","projects"),("她的研究是关于什么的？","research"),("她写过哪些文章？","writing"),("她在哪里上的大学？","education"),("她的技能有哪些？","skills"),("她提供哪些服务？","services"),("她做过哪些演讲？","talks"),("莉拉是谁？","overview")],
 "hi": [("वह अभी क्या करती हैं?","current"),("उन्होंने हाल ही में क्या किया?","recent"),("उनके करियर के बारे में बताइए","career"),("उन्होंने किन प्रोजेक्ट्स पर काम किया है?","projects"),("उनका शोध किस बारे में है?","research"),("उन्होंने क्या लिखा है?","writing"),("उन्होंने कहाँ पढ़ाई की?","education"),("उनके कौशल क्या हैं?","skills"),("वह कौन सी सेवाएँ देती हैं?","services"),("उन्होंने कौन से भाषण दिए हैं?","talks"),("लीला कौन हैं?","overview")],
}


SPECIFIC = [
    "What did she build for Tessera Health?",
    "What was the error rate of the OCR tool?",
    "What did she build with Python for the search team?",
    "Tell me about her project with Tessera",
    "¿Qué construyó para Tessera Health?",
    "Qu'a-t-elle construit pour Tessera Health ?",
    "Was hat sie für Tessera Health gebaut?",
    "Что она построила для Tessera Health?",
    "برای تسرا هلث چه چیزی ساخت؟",
    "ماذا بنت لشركة Tessera Health؟",
    "她为Tessera Health做了什么？",
    "उन्होंने Tessera Health के लिए क्या बनाया?",
]


@pytest.fixture(scope="module")
def packs():
    return load_packs()


def test_every_language_covers_every_topic():
    assert set(OVERVIEW) == set(LANGS)
    for lang, cases in OVERVIEW.items():
        assert {t for _, t in cases} == set(OVERVIEW_TOPICS), lang


@pytest.mark.parametrize(("lang", "question", "topic"), [(l, q, t) for l, cs in OVERVIEW.items() for q, t in cs])
def test_overview_topic(packs, lang, question, topic):
    m = match_overview(question, subject_names=NAMES, pronoun="she", packs=packs)
    assert m is not None, question
    assert m.topic == topic, (question, m)
    assert m.pattern  # the pattern as written


@pytest.mark.parametrize("question", SPECIFIC)
def test_specific_questions_go_to_retrieval(packs, question):
    assert match_overview(question, subject_names=NAMES, packs=packs) is None


@pytest.mark.parametrize(
    "question",
    ["Please, what does she do now?", "Hi! Can you tell me what she does for a living?", "so, who is Leila?", "what are Leila's skills?"],
)
def test_overview_courtesy_and_names(packs, question):
    assert match_overview(question, subject_names=NAMES, packs=packs) is not None


def test_overview_bare_continuation_inherits_previous_topic(packs):
    m = match_overview("and now?", previous_question="What does she do?", packs=packs)
    assert m is not None and m.topic == "current"
    assert match_overview("and the second one?", previous_question="What does she do?", packs=packs) is None
    assert match_overview("and now?", packs=packs) is None


def test_overview_langs_filter(packs):
    assert match_overview("¿Dónde estudió?", langs=["es"], packs=packs).topic == "education"
    assert match_overview("¿Dónde estudió?", langs=["en"], packs=packs) is None


# --- mentions_subject --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "pronoun", "expected"),
    [
        ("What did Leila build?", "she", True),
        ("What did she build?", "she", True),
        ("What did he build?", "she", False),
        ("What did he build?", "he", True),
        ("What did they build?", "they", True),
        ("What is the OCR tool?", "she", False),
        ("¿Qué construyó ella?", "she", True),
        ("Что она построила?", "she", True),
        ("Что он построил?", "she", False),
        ("او چه ساخت؟", "she", True),
        ("她做了什么？", "she", True),
        ("他做了什么？", "she", False),
        ("ماذا قدمت هي؟", "she", True),
        ("Qu'a-t-elle fait ?", "she", True),
        ("Was hat er gebaut?", "he", True),
        ("उसकी कंपनी कौन सी है?", "she", True),
        ("لیلا کجا درس خوانده؟", "she", True),
    ],
)
def test_mentions_subject(packs, question, pronoun, expected):
    assert mentions_subject(question, NAMES, pronoun, packs=packs) is expected


# --- is_followup ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    ["and the other one?", "what about her rates?", "¿y eso?", "اون چی؟", "how much?", "and hers?",
     "the second one", "那个呢？", "а это?", "et celui-là ?", "und das?", "e isso?", "و دومی؟", "وماذا عن ذلك؟", "और वह वाला?"],
)
def test_is_followup(packs, question):
    assert is_followup(question, packs=packs)


@pytest.mark.parametrize(
    "question",
    ["who is she?", "What did she build for Tessera Health?", "Where did she study computer science in Tehran?",
     "در کجا درس خوانده است و چه رشته‌ای؟", "", "   "],
)
def test_is_not_followup(packs, question):
    assert not is_followup(question, packs=packs)


# --- resolve_ordinal -----------------------------------------------------------------------

NUMBERED = "Her main projects:\n1. **Tessera Search** — multilingual search [1]\n2. Persian OCR tool [2]\n3. \"Counting\" library\n"
BULLETS = "She has written:\n- Search that listens\n- Counting in Persian\n  - a note on digits\n- OCR at scale\n"
QUOTED = "Her talks include “Search that listens” (2023) and «Counting in Persian» (2022); “Search that listens” was the keynote."
BOLD = "**Tessera Search** was launched in 2023. **Persian OCR** followed."


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("the second one", "Persian OCR tool"),
        ("and the first?", "Tessera Search"),
        ("the last one", "Counting"),
        ("el segundo", "Persian OCR tool"),
        ("la tercera", "Counting"),
        ("o segundo", "Persian OCR tool"),
        ("le deuxième", "Persian OCR tool"),
        ("der zweite", "Persian OCR tool"),
        ("второй", "Persian OCR tool"),
        ("第二个", "Persian OCR tool"),
        ("दूसरा", "Persian OCR tool"),
        ("دومی", "Persian OCR tool"),
        ("اولی", "Tessera Search"),
        ("سومین", "Counting"),
        ("الثاني", "Persian OCR tool"),
        ("¿y el segundo?", "Persian OCR tool"),
        ("tell me more about the second one", "Persian OCR tool"),
        ("و دومی چی بود؟", "Persian OCR tool"),
        ("那第三个呢？", "Counting"),
        ("the second project", "Persian OCR tool"),
    ],
)
def test_ordinal_numbered_list(packs, question, expected):
    assert resolve_ordinal(question, NUMBERED, packs=packs) == expected


def test_ordinal_bullets_quoted_bold(packs):
    assert resolve_ordinal("the third one", BULLETS, packs=packs) == "OCR at scale"  # nested bullet skipped
    assert resolve_ordinal("the second one", QUOTED, packs=packs) == "Counting in Persian"  # repeats counted once
    assert resolve_ordinal("the last one", QUOTED, packs=packs) == "Counting in Persian"
    assert resolve_ordinal("the second one", BOLD, packs=packs) == "Persian OCR"


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("the fourth one", NUMBERED),  # past the end
        ("the second one", "Two lists:\n1. A\n2. B\n\nand\n\n1. C\n2. D"),  # two numbered lists
        ("the second one", "- A\n- B\n\nText between.\n\n- C\n- D"),  # two bullet lists
        ("the second one", "1. A\n- B\n2. C"),  # numbered list beside a top-level bullet
        ("the second one", "2. A\n3. B"),  # numbering that does not start at 1
        ("the second one", "Nothing enumerable here."),
        ("the second one", ""),
        ("what was her first job?", NUMBERED),  # not an ordinal follow-up
    ],
)
def test_ordinal_unreadable_is_none(packs, question, answer):
    assert resolve_ordinal(question, answer, packs=packs) is None


def test_list_items_strip_markup():
    assert list_items("1) **Alpha** [1]\n2) Beta — a tool [2, 3].") == ("Alpha", "Beta — a tool")
    assert list_items("• one\n• two") == ("one", "two")


# An imperative that asks to explain or describe an item is an ordinal follow-up too, in every
# language with ordinals ("Explain the fourth one." was read as a new question).
@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Explain the second one.", "Persian OCR tool"),
        ("Please describe the third one", "Counting"),
        ("Walk me through the first one", "Tessera Search"),
        ("Explícame el segundo.", "Persian OCR tool"),
        ("Háblame del tercero", "Counting"),
        ("Explique o segundo.", "Persian OCR tool"),
        ("Explique-moi le deuxième.", "Persian OCR tool"),
        ("Erkläre mir den zweiten.", "Persian OCR tool"),
        ("Объясни второй.", "Persian OCR tool"),
        ("لطفا دومی رو توضیح بده", "Persian OCR tool"),
        ("اشرح لي الثاني", "Persian OCR tool"),
        ("दूसरा समझाइए", "Persian OCR tool"),
        ("解释一下第二个", "Persian OCR tool"),
    ],
)
def test_ordinal_after_an_imperative(packs, question, expected):
    assert resolve_ordinal(question, NUMBERED, packs=packs) == expected


@pytest.mark.parametrize("question", [
    "Explain the fourth amendment of the constitution",
    "Describe the first moon landing",
    "Erkläre den ersten Weltkrieg",
    "Explica la primera guerra mundial",
    "解释一下第二次世界大战",
])
def test_an_imperative_about_something_else_is_no_ordinal(packs, question):
    assert resolve_ordinal(question, NUMBERED, packs=packs) is None
