"""What kind of value a question asks for, and whether a sentence can supply it.

A deterministic check used by the extractive generator: a question that asks "how long",
"when" or "how many" is not answered by a sentence with no number in it, however similar
the two are. This catches the commonest confident non-answer of an extractive system — a
definition offered where a figure was asked for — and turns it into NO_ANSWER.

Types: `duration` (a number with a time unit), `date` (a number: year, day), `quantity`
(a number; "which port", "what version" too), `person` (who → a sentence that names
someone: a capitalised word that does not open the sentence, or a run of two; in scripts
without case any sentence can). Cues per language are matched on normalised text; a
question with no cue has no type and every sentence can answer it.

Also here, because they read the question the same way:

* ``is_list_question`` — "what kinds of …", "which libraries …", "what are the steps …":
  the answer is the items of a list, not its opening line;
* ``question_anchors`` — the terms an answer must be about (names, codes, numbers, quoted
  titles), a plain list of strings, so the corpus-aware anchors of L2 can replace it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from vouched.text import normalize

_CUES: dict[str, tuple[str, ...]] = {
    "duration": (
        r"\bhow (?:long|quickly|soon|fast)\b", r"\bwithin how\b", r"\bhow many (?:minutes|hours|days|weeks|months|years)\b",
        r"\bcu[aá]nto tiempo\b", r"\bcon qu[eé] rapidez\b", r"\bquanto tempo\b", r"\bcombien de temps\b", r"\bwie lange\b",
        r"\bwie schnell\b", r"\bсколько времени\b", r"\bкак долго\b", r"\bкак быстро\b", r"多久", r"多长时间",
        r"कितने समय", r"कितना समय", r"(?:^|\s)چه مدت", r"(?:^|\s)چقدر طول", r"(?:^|\s)چند (?:روز|ساعت|دقیقه|هفته|ماه|سال)",
        r"(?:^|\s)كم من الوقت", r"(?:^|\s)کم من الوقت", r"(?:^|\s)كم (?:يوما|ساعة|دقيقة)",
    ),
    "date": (
        r"\bwhen\b", r"\bwhat year\b", r"\bwhich year\b", r"\bwhat date\b", r"\bcu[aá]ndo\b", r"\bqu[eé] a[nñ]o\b",
        r"\bquando\b", r"\bque ano\b", r"\bquand\b", r"\bquelle ann[eé]e\b", r"\bwann\b", r"\bin welchem jahr\b",
        r"\bкогда\b", r"\bв каком году\b", r"什么时候", r"哪一年", r"哪年", r"कब", r"किस साल",
        r"(?:^|\s)چه سالی", r"(?:^|\s)چه زمانی", r"(?:^|\s)در چه تاریخی", r"(?:^|\s)متى",
    ),
    "quantity": (
        r"\bhow (?:many|much)\b", r"\bwhat (?:percentage|share|proportion|fraction|number)\b", r"\bby how much\b",
        r"\bcu[aá]nt[oa]s?\b", r"\bqu[eé] porcentaje\b", r"\bquant[oa]s?\b", r"\bcombien\b", r"\bwie viele?\b",
        r"\bсколько\b", r"多少", r"几个", r"कितन", r"(?:^|\s)چند", r"(?:^|\s)چقدر", r"(?:^|\s)چه تعداد",
        r"(?:^|\s)كم(?:\s|$)", r"(?:^|\s)کم(?:\s|$)",
        r"\b(?:which|what) (?:port|version|release)\b", r"\bport number\b", r"\bqu[eé] (?:puerto|versi[oó]n)\b",
        r"\bque (?:porta|vers[aã]o)\b", r"\bquel (?:port|num[eé]ro)\b", r"\bquelle version\b", r"\bwelche[rns]? (?:port|version)\b",
        r"\bкакой (?:порт|верси)", r"哪个端口", r"什么版本",
    ),
    "person": (
        r"\bwho(?:m|se)?\b", r"\bqui[eé]n(?:es)?\b", r"\bquem\b", r"\bqui\b", r"\bwer\b", r"\bwem\b", r"\bкто\b",
        r"\bкого\b", r"谁", r"कौन(?! से| सी| सा)", r"(?:^|\s)چه کسی", r"(?:^|\s)چه کسانی", r"(?:^|\s)من هو", r"(?:^|\s)من هي",
    ),
}
_ORDER = ("duration", "date", "quantity", "person")
FIGURE_TYPES = ("duration", "date", "quantity")  # answered only by a sentence with a figure

# A digit not glued to a preceding letter: "15 minutes", "2024", "@10" count; "SEV1", "pg-core-2"'s
# trailing digit after a letter does not.
_NUMBER = re.compile(r"(?<![^\W\d_])\d")
_TIME_UNIT = re.compile(
    r"(?:\d\s*(?:s|sec|min|h|hr|d|w|mo|y|yr)s?\b)|\b(?:second|minute|hour|day|week|month|year|business day|working day)s?\b|"
    r"\b(?:segundo|minuto|hora|d[ií]a|semana|mes|a[nñ]o|ano)s?\b|\b(?:seconde|heure|jour|semaine|mois|ann[eé]e)s?\b|"
    r"\d\s*ans?\b|\d\s*tag(?:e|en)?\b|\b(?:sekunde|minute|stunde|woche|monat|jahr)e?n?\b|(?:секунд|минут|час|дн|день|недел|месяц|год|лет)|"
    r"(?:秒|分钟|小时|天|周|星期|个月|年)|(?:सेकंड|मिनट|घंटे|घंटा|दिन|सप्ताह|हफ्ते|महीने|साल)|"
    r"(?:ثانیه|دقیقه|ساعت|روز|هفته|ماه|سال)|(?:ثانية|دقيقة|ساعة|يوم|أيام|اسبوع|شهر|سنة)",
    re.IGNORECASE,
)


@lru_cache(maxsize=1)
def _compiled() -> dict[str, re.Pattern[str]]:
    return {k: re.compile("|".join(v)) for k, v in _CUES.items()}


def question_type(question: str) -> str | None:
    """'duration', 'date', 'quantity' or None (the first cue found, in that order of precedence)."""
    q = normalize(question)
    rx = _compiled()
    for kind in _ORDER:
        if rx[kind].search(q):
            return kind
    return None


_CASED_WORD = re.compile(r"[^\W\d_][\w'’\-]*")


def names_someone(sentence: str) -> bool:
    """A capitalised word that does not open the sentence, or two capitalised words in a
    row; True for text with no cased letters (Persian, Arabic, Chinese, Hindi)."""
    tokens = _CASED_WORD.findall(sentence)
    cased = [t for t in tokens if t[0].lower() != t[0].upper()]
    if not cased:
        return True
    caps = [t[0].isupper() for t in tokens]
    return any(caps[1:]) or (len(caps) > 1 and caps[0] and caps[1])


# A number inside a web address or an e-mail address is part of a name, not a figure the
# sentence states ("…/talks/2025-euroir-slides.pdf" answers no "when?").
_ADDRESS = re.compile(r"(?:https?://|www\.)\S+|\S+@\S+\.\w+")


def satisfies(sentence: str, kind: str | None) -> bool:
    """Can this sentence supply the value the question's type asks for?"""
    if kind is None:
        return True
    if kind == "person":
        return names_someone(sentence)
    s = normalize(_ADDRESS.sub(" ", sentence))
    if not _NUMBER.search(s):
        return False
    if kind == "duration":
        return bool(_TIME_UNIT.search(s))
    return True


# "what kinds of", "which <plural>", "what are the steps", "list the": the answer is a list.
_LIST_CUES = re.compile("|".join((
    r"\bwhat (?:kinds?|types?|sorts?) of\b", r"\bwhich (?:kinds?|types?|sorts?) of\b", r"\bwhat are (?:the|her|his|its|their)\b",
    r"\bwhich (?:[\w-]+ )?[\w-]+[^s\W']s (?:do|does|did|are|were|have|has|can|will|should|would|exist)\b",
    r"\bwhich (?:[\w-]+ )?[\w-]+[^s\W']s\W*$", r"\blist (?:the|all|her|his|its)\b", r"\bname the\b",
    r"\bqu[eé] (?:tipos?|clases?) de\b", r"\bcu[aá]les son\b", r"\bqu[eé] \w+[^s\W]s\b(?= (?:hay|tiene|acepta|ofrece|mantiene))",
    r"\bque (?:tipos?|esp[eé]cies?) de\b", r"\bquais (?:s[aã]o|os|as)\b", r"\bquels? (?:types?|sortes?|genres?) de\b",
    r"\bquel(?:le)?s (?:sont|\w+s)\b", r"\bwelche (?:arten|sorten)\b", r"\bwas f[uü]r\b", r"\bкакие\b", r"\bкаких\b",
    r"哪些", r"कौन से", r"कौन सी", r"किन", r"(?:^|\s)چه (?:نوع|انواعی|کارهایی)", r"(?:^|\s)کدام \S+(?:ها|هایی)(?:\s|$)",
    r"(?:^|\s)ما (?:أنواع|انواع)", r"(?:^|\s)ما هي",
)))


def is_list_question(question: str) -> bool:
    """Does the question ask for the items of a list ("which libraries …", "what kinds of …")?"""
    return bool(_LIST_CUES.search(normalize(question)))


_QUOTED = re.compile(r"[«“„\"]([^«»“”„\"]{2,80})[»”\"]|(?:^|(?<=\s))'([^']{2,80})'(?=[\s?.!,;:]|$)")
_TOKEN = re.compile(r"[^\W_](?:[\w.\-/@+#'’]*[^\W_])?")
_LATIN = re.compile(r"[A-Za-z\u00C0-\u024F]")


def question_anchors(question: str, lang: str | None = None, exclude: tuple[str, ...] | list[str] = ()) -> list[str]:
    """The terms an answer must be about: quoted titles, codes and identifiers (a digit,
    an inner capital, two capitals), numbers, capitalised names (runs of capitalised words
    that are not the question's opening word or a stop word), and Latin-script words in a
    question written in another script. ``exclude``: the subject's and site's names
    (their words are never anchors). Pure; first occurrences in order.
    """
    from vouched.text import stopwords, words

    excluded = {w for name in exclude for w in words(name)}
    stops = stopwords(lang) | stopwords(None) if lang else stopwords(None)
    out: list[str] = []

    def add(term: str) -> None:
        term = term.strip(" .,;:!?¿¡'’")
        ws = words(term)
        if ws and not set(ws) <= excluded and term not in out:
            out.append(term)

    for m in _QUOTED.finditer(question):
        add(m.group(1) or m.group(2))
    unquoted = _QUOTED.sub(lambda m: " " * len(m.group(0)), question)  # same positions
    latin_q = len(_LATIN.findall(unquoted)) * 2 >= len(re.findall(r"[^\W\d_]", unquoted))
    run: list[tuple[int, int]] = []  # (start, end) of the capitalised words of a name
    tokens = list(_TOKEN.finditer(unquoted))

    def close() -> None:
        if run:
            add(question[run[0][0] : run[-1][1]])
            run.clear()

    for i, m in enumerate(tokens):
        t = m.group(0)
        opening = i == 0 or bool(re.search(r"[.!?¿¡:]\s*$", unquoted[: m.start()]))
        low = normalize(t)
        cased = t[0].lower() != t[0].upper()
        is_code = any(c.isdigit() for c in t) or (cased and any(c.isupper() for c in t[1:])) or (
            not latin_q and bool(_LATIN.search(t)) and len(t) >= 2)
        is_name = cased and t[0].isupper() and not is_code and low not in stops and not (opening and low in stops)
        if is_name and not (opening and not (i + 1 < len(tokens) and tokens[i + 1].group(0)[:1].isupper())):
            if run and not unquoted[run[-1][1] : m.start()].isspace():
                close()
            run.append((m.start(), m.end()))
            continue
        close()
        if is_code:
            add(t)
    close()
    return [a for a in out if not set(words(a)) <= excluded]


# A figure in the plainest form of its type: a deadline ("within 5 minutes", "en un plazo de
# 5 minutos") for a duration. Used to rank, never to refuse.
_PLAIN: dict[str, re.Pattern[str]] = {
    "duration": re.compile(
        r"(?:\bwithin|\bin under|\bno later than|\bat most|\ben un plazo de|\ben menos de|\bdentro de|\bno prazo de|"
        r"\bem at[eé]|\bdans les|\ben moins de|\binnerhalb von|\bbinnen|\bв течение|\bне позднее|در عرض|ظرف|خلال)"
        r"\s+(?:\S+\s+)?\d"
    ),
}


def plain_form(sentence: str, kind: str | None) -> bool:
    """Does the sentence give the asked type in its plainest form (see ``_PLAIN``)?"""
    rx = _PLAIN.get(kind or "")
    return bool(rx and rx.search(normalize(sentence)))
