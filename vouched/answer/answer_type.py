"""What kind of value a question asks for, and whether a sentence can supply it.

A deterministic check used by the extractive generator: a question that asks "how long",
"when" or "how many" is not answered by a sentence with no number in it, however similar
the two are. This catches the commonest confident non-answer of an extractive system — a
definition offered where a figure was asked for — and turns it into NO_ANSWER.

Types: `duration` (a number with a time unit), `date` (a number: year, day), `quantity`
(a number). Cues per language are matched on normalised text; a question with no cue has
no type and every sentence can answer it.
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
    ),
}
_ORDER = ("duration", "date", "quantity")

# A digit not glued to a preceding letter: "15 minutes", "2024", "@10" count; "SEV1", "pg-core-2"'s
# trailing digit after a letter does not.
_NUMBER = re.compile(r"(?<![^\W\d_])\d")
_TIME_UNIT = re.compile(
    r"(?:\d\s*(?:s|sec|min|h|hr|d|w|mo|y|yr)s?\b)|\b(?:second|minute|hour|day|week|month|year|business day|working day)s?\b|"
    r"\b(?:segundo|minuto|hora|d[ií]a|semana|mes|a[nñ]o|ano)s?\b|\b(?:seconde|heure|jour|semaine|mois|an|ann[eé]e)s?\b|"
    r"\b(?:sekunde|minute|stunde|tag|woche|monat|jahr)e?n?\b|(?:секунд|минут|час|дн|день|недел|месяц|год|лет)|"
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


def satisfies(sentence: str, kind: str | None) -> bool:
    """Can this sentence supply the value the question's type asks for?"""
    if kind is None:
        return True
    s = normalize(sentence)
    if not _NUMBER.search(s):
        return False
    if kind == "duration":
        return bool(_TIME_UNIT.search(s))
    return True
