"""split_sentences(): boundaries per language, the non-boundaries, markers, and no loss."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.text import split_sentences

CASES = [
    # --- English: plain boundaries
    ("One. Two! Three? Four", ["One.", "Two!", "Three?", "Four"]),
    ("Really?! Yes.", ["Really?!", "Yes."]),
    ("  Leading and trailing.  ", ["Leading and trailing."]),
    ("", []),
    ("No terminal punctuation", ["No terminal punctuation"]),
    # closing quotes/brackets stay with the sentence
    ('He said "Go." Then he left.', ['He said "Go."', "Then he left."]),
    ("He said “Go.” Then he left.", ["He said “Go.”", "Then he left."]),
    ("It ended (finally.) Then more.", ["It ended (finally.)", "Then more."]),
    ("She wrote ‘yes.’ Next.", ["She wrote ‘yes.’", "Next."]),
    ("Il a dit « oui. » Puis.", ["Il a dit « oui. »", "Puis."]),
    ('He asked "why?" and left. Then.', ['He asked "why?" and left.', "Then."]),
    ('He asked "why?" Nobody knew.', ['He asked "why?"', "Nobody knew."]),
    ("Hi!there stays.", ["Hi!there stays."]),
    # citation markers stay with the preceding sentence
    ("She led it.[2] Next one.", ["She led it.[2]", "Next one."]),
    ("She led it. [2] Next one.", ["She led it. [2]", "Next one."]),
    ("She led it.[1][3] Next one.", ["She led it.[1][3]", "Next one."]),
    ("She led it. [1, 3] Next one.", ["She led it. [1, 3]", "Next one."]),
    ("She led it. [1] [3] Next one.", ["She led it. [1] [3]", "Next one."]),
    ("She led it [2]. Next one [3].", ["She led it [2].", "Next one [3]."]),
    ('"Done."[4] Next.', ['"Done."[4]', "Next."]),
    ("او این پروژه را رهبری کرد.[۲] بعدی.", ["او این پروژه را رهبری کرد.[۲]", "بعدی."]),
    ("她领导了这个项目。[2]然后离开了。", ["她领导了这个项目。[2]", "然后离开了。"]),
    # decimals, versions, URLs, e-mails
    ("It grew 3.5 percent. Then it fell.", ["It grew 3.5 percent.", "Then it fell."]),
    ("Creció un 3,5 por ciento. Luego cayó.", ["Creció un 3,5 por ciento.", "Luego cayó."]),
    ("Version v2.1.3 shipped. Next.", ["Version v2.1.3 shipped.", "Next."]),
    ("See https://x.com/a.b?c=d for more. Next.", ["See https://x.com/a.b?c=d for more.", "Next."]),
    ("Visit https://x.com/a.b?c=d. Then leave.", ["Visit https://x.com/a.b?c=d.", "Then leave."]),
    ("Mail ana.lopez@example.org today. Thanks.", ["Mail ana.lopez@example.org today.", "Thanks."]),
    ("Write to ana.lopez@example.org. She answers.", ["Write to ana.lopez@example.org.", "She answers."]),
    # abbreviations
    ("Use tools, e.g. Python. It works.", ["Use tools, e.g. Python.", "It works."]),
    ("Use tools, i.e. scripts. It works.", ["Use tools, i.e. scripts.", "It works."]),
    ("Dr. Smith arrived. He sat.", ["Dr. Smith arrived.", "He sat."]),
    ("Mr. and Mrs. Lee met Ms. Kim. Fine.", ["Mr. and Mrs. Lee met Ms. Kim.", "Fine."]),
    ("Prof. Adams lives on Main St. near the park. Ok.", ["Prof. Adams lives on Main St. near the park.", "Ok."]),
    ("It was Ali vs. Frazier. Great.", ["It was Ali vs. Frazier.", "Great."]),
    ("Apples, pears, etc. are fruit. Yes.", ["Apples, pears, etc. are fruit.", "Yes."]),
    ("She bought apples, pears, etc. Then she left.", ["She bought apples, pears, etc.", "Then she left."]),
    ("He moved to the U.S. in 2010. Later, the U.K. Army hired him.", ["He moved to the U.S. in 2010.", "Later, the U.K. Army hired him."]),
    ("Martin Luther King Jr. was born in 1929. He spoke.", ["Martin Luther King Jr. was born in 1929.", "He spoke."]),
    ("See No. 5 and Fig. 3 for details. Done.", ["See No. 5 and Fig. 3 for details.", "Done."]),
    ("It costs approx. 5 dollars. Ok.", ["It costs approx. 5 dollars.", "Ok."]),
    ("J. Smith and J. R. R. Tolkien wrote. Yes.", ["J. Smith and J. R. R. Tolkien wrote.", "Yes."]),
    ("Acme Inc. The firm grew.", ["Acme Inc.", "The firm grew."]),
    ("Acme Inc. is a firm. Yes.", ["Acme Inc. is a firm.", "Yes."]),
    ("Wait... what happened? Nothing.", ["Wait... what happened?", "Nothing."]),
    ("Wait... What happened? Nothing.", ["Wait...", "What happened?", "Nothing."]),
    ("Wait… What? Fine.", ["Wait…", "What?", "Fine."]),
    ("It took approx. five years.", ["It took approx. five years."]),
    # Spanish
    ("El Sr. García y la Sra. López llegaron. Luego hablaron.", ["El Sr. García y la Sra. López llegaron.", "Luego hablaron."]),
    ("La Dra. Ruiz trabaja aquí. ¿Dónde estudió? ¡En Madrid!", ["La Dra. Ruiz trabaja aquí.", "¿Dónde estudió?", "¡En Madrid!"]),
    # Portuguese
    ("Ela trabalha em Lisboa. Onde estudou? Em Coimbra.", ["Ela trabalha em Lisboa.", "Onde estudou?", "Em Coimbra."]),
    ("O Dr. Silva chegou. Depois saiu.", ["O Dr. Silva chegou.", "Depois saiu."]),
    # French
    ("Mme. Dubois est arrivée. Elle travaille à Paris !", ["Mme. Dubois est arrivée.", "Elle travaille à Paris !"]),
    ("Où a-t-il étudié ? À Lyon.", ["Où a-t-il étudié ?", "À Lyon."]),
    # German
    ("Es gibt z.B. Äpfel, Birnen usw. und mehr. Gut.", ["Es gibt z.B. Äpfel, Birnen usw. und mehr.", "Gut."]),
    ("Sie kaufte Äpfel, Birnen usw. Dann ging sie.", ["Sie kaufte Äpfel, Birnen usw.", "Dann ging sie."]),
    ("Am 3. Mai 2020 begann es. Dann endete es.", ["Am 3. Mai 2020 begann es.", "Dann endete es."]),
    # Russian
    ("Она работает в Москве. Где он учился? В Казани!", ["Она работает в Москве.", "Где он учился?", "В Казани!"]),
    ("А. С. Пушкин родился в 1799 году. Это известно.", ["А. С. Пушкин родился в 1799 году.", "Это известно."]),
    # Persian / Arabic
    ("او در تهران کار می‌کند. کجا درس خوانده است؟ در شیراز.", ["او در تهران کار می‌کند.", "کجا درس خوانده است؟", "در شیراز."]),
    ("او کیست؟او استاد است.", ["او کیست؟", "او استاد است."]),
    ("تعمل في القاهرة. أين درست؟ في بيروت.", ["تعمل في القاهرة.", "أين درست؟", "في بيروت."]),
    ("یہ کتاب ہے۔ وہ قلم ہے۔", ["یہ کتاب ہے۔", "وہ قلم ہے۔"]),
    ("نمو ٣٫٥ في المئة. ثم انخفض.", ["نمو ٣٫٥ في المئة.", "ثم انخفض."]),
    # Hindi
    ("वह दिल्ली में काम करती है। उसने कहाँ पढ़ाई की? मुंबई में।", ["वह दिल्ली में काम करती है।", "उसने कहाँ पढ़ाई की?", "मुंबई में।"]),
    ("यह पहला है।यह दूसरा है॥ अंत", ["यह पहला है।", "यह दूसरा है॥", "अंत"]),
    # Chinese: no spaces needed
    ("她在北京工作。她在哪里学习？在上海！好", ["她在北京工作。", "她在哪里学习？", "在上海！", "好"]),
    ("他说：“很好。”然后走了。", ["他说：“很好。”", "然后走了。"]),
    ("版本是3.5。下一个。", ["版本是3.5。", "下一个。"]),
    # paragraphs and lists
    ("First paragraph\n\nSecond paragraph", ["First paragraph", "Second paragraph"]),
    ("Projects:\n- Alpha\n- Beta\n\nThe end.", ["Projects:", "- Alpha", "- Beta", "The end."]),
    ("Steps:\n1. Install it\n2. Run it", ["Steps:", "1. Install it", "2. Run it"]),
    ("# Title\nSome text here. More.", ["# Title", "Some text here.", "More."]),
    ("A wrapped\nline stays one.", ["A wrapped\nline stays one."]),
    ("Para one.\r\n\r\nPara two\r\n- item", ["Para one.", "Para two", "- item"]),
    ("One\u2029Two", ["One", "Two"]),
    ("مراحل:\n- نصب\n- اجرا", ["مراحل:", "- نصب", "- اجرا"]),
]


@pytest.mark.parametrize("text, expected", CASES)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


@pytest.mark.parametrize("text, _", CASES)
def test_sentences_are_substrings_in_order(text: str, _: list[str]) -> None:
    pos = 0
    for s in split_sentences(text):
        found = text.find(s, pos)
        assert found >= 0
        pos = found + len(s)


_ALPHA = "ab Ab. Dr. e.g. U.S. J. 3.5 v2.1 ...…!?؟۔।॥。！？\"”’»)][1][2, 3] \n\n- 1. 我在北京 हिन्दी سلام x@y.z https://a.b/c?d=e"
_PIECES = st.sampled_from(
    ["Dr.", "e.g.", "U.S.", "J.", "3.5", "v2.1.3", "...", "…", "!", "?", "؟", "۔", "।", "॥", "。", "！",
     "？", '"', "”", "’", "»", ")", "]", "[1]", "[2, 3]", " ", "  ", "\n", "\n\n", "- ", "1. ", "word",
     "Word", "我在北京", "हिन्दी", "سلام", "ana@x.org", "https://a.b/c?d=e", "etc.", "No. 5", "am 3. Mai"]
)


def _no_space(s: str) -> str:
    return "".join(s.split())


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=25).map("".join) | st.text(alphabet=st.sampled_from(_ALPHA), max_size=60) | st.text(max_size=40))
def test_no_text_lost(text: str) -> None:
    sents = split_sentences(text)
    assert all(s and s == s.strip() for s in sents)
    assert _no_space("".join(sents)) == _no_space(text)
    pos = 0
    for s in sents:
        found = text.find(s, pos)
        assert found >= 0, (text, sents)
        pos = found + len(s)


def test_long_text_is_handled() -> None:
    text = "This is sentence number one. " * 2000 + "e.g. " * 500 + "x" * 5000
    sents = split_sentences(text)
    # the last "one." is followed by a lower-case "e.g." and so does not end a sentence
    assert len(sents) == 2000
    assert sents[-1].endswith("x" * 5000)
