"""L2 coverage: the question's anchors must be in the passages that would be given (pure).

After the threshold passes (the passages are about the right *topic*), every name, code,
number and quoted title of the question (vouched.text.anchors) must be found in one of the
passages — whole word, normalised and stemmed as the keyword index does — and at least
``rare_share`` of its rare words (when it has ``MIN_RARE`` or more), so that a paraphrase
with one synonym still answers. An evaluative question's heads ("the best *restaurant* in
Lisboa") must each be in a passage of the question's language, whatever their rarity: a
corpus that never mentions a restaurant cannot rank restaurants.

Languages. An anchor that is not script-independent is looked for only in passages written
in the question's language (a Spanish word cannot be expected in an English page; the dense
retriever found that page across languages). Numbers, codes and Latin-script names are
looked for in every passage. An anchor with no passage to be looked for in is not counted
either way; rare words count only against passages in the question's language.

A word is found when all of an anchor's analysed terms are in one passage's analysed terms
(or its plain words are, for a stemmer that differs); a name only by its plain words, except
in languages where names inflect (Russian, German) and in a passage of another language
("Canarias" / "Canary"), because a stem would let "Telefónica" match "teléfono"; a code or number when its words appear in that order ("pg-core-2" is the
words pg core 2 in sequence).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from vouched.text import analyze, words
from vouched.text.anchors import Anchor, Anchors

DEFAULT_RARE_SHARE = 0.5
# Rare words are judged only when the question has at least this many: one missing rare word
# is as often a paraphrase ("how long" where the page says "within 30 days") as a sign of
# another subject, and names, codes and numbers already carry the hard cases.
MIN_RARE = 2


@dataclass(frozen=True)
class PassageKeys:
    lang: str
    terms: frozenset[str]  # analysed terms and plain words
    joined: str  # " w1 w2 … " for in-order matches


@dataclass(frozen=True)
class CoverageVerdict:
    passed: bool
    anchors: tuple[str, ...]  # "kind:text" for every anchor
    found: tuple[str, ...]
    missing: tuple[str, ...]
    rare_found: int = 0
    rare_total: int = 0
    reason: str = ""

    def trace(self) -> dict:
        return {"anchors": list(self.anchors), "found": list(self.found), "missing": list(self.missing),
                "rare": [self.rare_found, self.rare_total]}


@lru_cache(maxsize=4096)
def passage_keys(text: str, lang: str) -> PassageKeys:
    """What a passage offers to the anchors (memoised: the same chunks come back question after question)."""
    plain = words(text)
    stripped = [w[:-2] if w.endswith(("'s", "’s")) else w for w in plain]
    terms = frozenset(analyze(text, lang)) | frozenset(plain) | frozenset(stripped)
    return PassageKeys(lang, terms, " " + " ".join(plain) + " ")


def _same_script(a: str, b: str) -> bool:
    latin = {"en", "es", "pt", "fr", "de"}
    return a == b or (a in latin and b in latin)


# Languages whose names inflect ("в Яндексе", "Googles"): a name matches on its stems there;
# elsewhere on its plain words, because a stem would let "Telefónica" match "teléfono".
_INFLECTED_NAMES = frozenset({"ru", "de"})


def _found_in(a: Anchor, p: PassageKeys, lang: str) -> bool:
    if a.kind in ("code", "number"):
        return (" " + " ".join(a.words) + " ") in p.joined
    if set(a.words) <= p.terms:
        return True
    # Across languages a name is spelled by each language's rules (Canarias / Canary, Lisboa /
    # Lisbon): there the stems are the bridge.
    return (a.kind != "name" or lang in _INFLECTED_NAMES or p.lang != lang) and set(a.terms) <= p.terms


def _label(a: Anchor) -> str:
    return f"{a.kind}:{a.text}"


def check_coverage(anchors: Anchors, passages: Sequence[PassageKeys], *,
                   rare_share: float = DEFAULT_RARE_SHARE) -> CoverageVerdict:
    """Whether ``passages`` cover ``anchors`` (see the module docstring)."""
    labels = tuple(_label(a) for a in anchors.items)
    if not anchors.items:
        return CoverageVerdict(True, (), (), ())
    found: list[str] = []
    missing: list[str] = []
    for a in anchors.required:
        pool = passages if a.script_free else [p for p in passages if _same_script(p.lang, anchors.lang)]
        if not pool:
            continue
        (found if any(_found_in(a, p, anchors.lang) for p in pool) else missing).append(_label(a))
    same_lang = [p for p in passages if p.lang == anchors.lang]
    # An evaluative question's heads ("the best *restaurant*"): each in a passage of its language.
    for a in anchors.heads if same_lang else ():
        (found if any(_found_in(a, p, anchors.lang) for p in same_lang) else missing).append(_label(a))
    rare_total = rare_found = 0
    if same_lang:
        for a in anchors.rare:
            rare_total += 1
            if any(_found_in(a, p, anchors.lang) for p in same_lang):
                rare_found += 1
                found.append(_label(a))
            else:
                missing.append(_label(a))
    rare_ok = rare_total < MIN_RARE or rare_found >= rare_share * rare_total
    required_missing = [m for m in missing if not m.startswith("rare:")]
    passed = not required_missing and rare_ok
    reason = ""
    if required_missing:
        reason = "in none of the passages: " + ", ".join(required_missing)
        if all(m.startswith("head:") for m in required_missing):
            reason = "the sources never mention what the question asks to rank: " + ", ".join(
                m[len("head:"):] for m in required_missing)
    elif not rare_ok:
        reason = f"{rare_found} of {rare_total} rare words found (< {rare_share:.0%})"
    return CoverageVerdict(passed, labels, tuple(found), tuple(missing), rare_found, rare_total, reason)


def passages_keys(passages) -> list[PassageKeys]:
    """Keys of retrieved passages (``vouched.types.Passage``): title, section and text, as given."""
    return [passage_keys(p.chunk.embed_text, p.chunk.lang) for p in passages]


# -- the answer's own sentence: does the unit an extractive answer quotes say what was asked? ----
#
# Measured on SQuAD 2.0 dev (docs/coverage.md, "The answer's sentence"): an unanswerable question
# is written against a paragraph that holds its words, so coverage of the *passages* cannot
# separate it; the sentence it would be answered from usually can, a little: it lacks one of the
# question's names or numbers (another entity: "Nixon" asked, "Simon" in the sentence), or the
# question negates what the sentence states ("which importers did not claim …"), or asks for the
# opposite ("the softest problem" where the sentence says "the hardest"). Negation is checked in
# one direction only: a sentence that negates while the question does not is as common among
# answerable questions ("not always practical" answers "is a polynomial algorithm practical?").

# Negation words per language (normalised, whole words; Chinese: characters at the start of a word).
_NEGATIONS: dict[str, frozenset[str]] = {
    "en": frozenset("not no never nor none nobody nothing neither cannot without".split()),
    "es": frozenset("no nunca jamás jamas ni ninguno ninguna nadie nada sin tampoco".split()),
    "pt": frozenset("não nao nunca jamais nem nenhum nenhuma ninguém ninguem nada sem".split()),
    "fr": frozenset("ne pas jamais aucun aucune rien sans ni".split()),
    "de": frozenset("nicht nie niemals kein keine keinen keinem keiner keines niemand nichts ohne weder".split()),
    "ru": frozenset("не нет никогда ни никто ничто ничего никакой никакого без".split()),
    "fa": frozenset("نه هرگز هیچ بدون نیست نبود نیستند نبودند".split()),
    "ar": frozenset("لا لم لن ليس ليست ما غير بدون أبدا ابدا".split()),
    "hi": frozenset("नहीं न नही कभी बिना".split()),
}
_HAN_NEGATIONS = ("不", "没", "沒", "未", "无", "無", "别")
_HAN_NOT_NEGATIONS = frozenset({"不同", "不久", "不断", "无论", "未来", "没有人"})  # "different", "soon", "future" …

# Opposites (normalised words, both directions). Small and general: comparison, order, direction,
# quantity and polarity words that a question turns into their opposite; nothing of any corpus.
_OPPOSITES: dict[str, str] = {
    "en": "first:last before:after largest:smallest biggest:smallest most:least more:less more:fewer "
          "increase:decrease increased:decreased increases:decreases high:low higher:lower highest:lowest "
          "hardest:easiest hard:easy north:south east:west northern:southern eastern:western start:end "
          "begin:end began:ended stop:start won:lost win:lose rise:fall maximum:minimum early:late "
          "earliest:latest earlier:later oldest:newest oldest:youngest older:younger major:minor common:rare "
          "commonly:uncommonly possible:impossible legal:illegal inside:outside above:below positive:negative "
          "simple:complex upper:lower top:bottom success:failure accept:reject allowed:prohibited true:false "
          "strong:weak strongest:weakest long:short longest:shortest large:small wide:narrow fast:slow "
          "fastest:slowest best:worst better:worse open:closed public:private internal:external import:export "
          "imported:exported male:female rich:poor full:empty entry:exit surface:subsurface soft:hard "
          "softest:hardest simplicity:complexity difficult:easy minority:majority buy:sell bought:sold gain:loss "
          "added:removed include:exclude included:excluded supported:opposed agree:disagree victory:defeat "
          "primary:secondary direct:indirect inner:outer natural:artificial cheapest:dearest deep:shallow "
          "thick:thin died:born death:birth",
    "es": "primero:último primera:última antes:después mayor:menor más:menos máximo:mínimo alto:bajo "
          "norte:sur este:oeste aumento:disminución aumentar:disminuir inicio:fin comenzó:terminó ganó:perdió "
          "posible:imposible legal:ilegal dentro:fuera mejor:peor público:privado interno:externo "
          "importación:exportación nació:murió",
    "pt": "primeiro:último primeira:última antes:depois maior:menor mais:menos máximo:mínimo alto:baixo "
          "norte:sul leste:oeste aumento:diminuição início:fim começou:terminou ganhou:perdeu "
          "possível:impossível legal:ilegal dentro:fora melhor:pior público:privado interno:externo nasceu:morreu",
    "fr": "premier:dernier première:dernière avant:après plus:moins maximum:minimum haut:bas nord:sud est:ouest "
          "augmentation:diminution début:fin gagné:perdu possible:impossible légal:illégal dedans:dehors "
          "meilleur:pire public:privé interne:externe importation:exportation né:mort",
    "de": "erste:letzte erster:letzter vor:nach vorher:nachher mehr:weniger größte:kleinste höchste:niedrigste "
          "hoch:niedrig nord:süd ost:west norden:süden osten:westen anfang:ende beginn:ende gewonnen:verloren "
          "möglich:unmöglich legal:illegal innen:außen besser:schlechter öffentlich:privat intern:extern "
          "import:export geboren:gestorben",
    "ru": "первый:последний первая:последняя до:после больше:меньше максимум:минимум высокий:низкий "
          "север:юг восток:запад начало:конец выиграл:проиграл возможно:невозможно лучший:худший "
          "публичный:частный внутренний:внешний импорт:экспорт родился:умер",
    "zh": "第一:最后 之前:之后 以前:以后 最大:最小 最高:最低 最多:最少 增加:减少 北:南 东:西 开始:结束 "
          "可能:不可能 合法:非法 内部:外部 进口:出口 出生:去世",
}


@lru_cache(maxsize=None)
def _opposites(lang: str | None) -> dict[str, frozenset[str]]:
    from vouched.text.words import _lang_key

    key = _lang_key(lang) if lang else None
    raw = _OPPOSITES.get(key or "", "") if key else " ".join(_OPPOSITES.values())
    out: dict[str, set[str]] = {}
    for pair in raw.split():
        a, b = (" ".join(words(x)) for x in pair.split(":"))
        out.setdefault(a, set()).add(b)
        out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


def negates(text: str, lang: str | None) -> bool:
    """Does ``text`` hold a negation word of ``lang`` (every language's when None)?"""
    from vouched.text.words import _lang_key

    key = _lang_key(lang) if lang else None
    ws = words(text.replace("n't", " not").replace("n’t", " not"))
    if key == "zh" or key is None:
        if any(w[:1] in _HAN_NEGATIONS and w not in _HAN_NOT_NEGATIONS for w in ws if w and "\u4e00" <= w[0] <= "\u9fff"):
            return True
        if key == "zh":
            return False
    negs = _NEGATIONS.get(key or "") if key else frozenset().union(*_NEGATIONS.values())
    return bool(negs) and any(w in negs for w in ws)


def opposite_asked(question: str, text: str, lang: str | None) -> tuple[str, str] | None:
    """(asked word, its opposite) when the question uses a word that ``text`` lacks while
    ``text`` holds its opposite ("the softest problem" / "the hardest problem"); else None."""
    table = _opposites(lang)
    if not table:
        return None
    have = set(words(text))
    for w in dict.fromkeys(words(question)):
        opp = table.get(w)
        if opp and w not in have:
            hit = next((o for o in sorted(opp) if o in have), None)
            if hit is not None:
                return w, hit
    return None


@dataclass(frozen=True)
class SentenceSupport:
    """Whether the unit an extractive answer would quote says what the question asks."""

    missing: tuple[str, ...] = ()  # anchors of the question (names, codes, numbers, quoted) not in the unit
    negation: bool = False  # the question negates, the unit does not
    opposite: tuple[str, str] | None = None  # (asked word, the unit's opposite word)

    @property
    def passed(self) -> bool:
        return not self.missing and not self.negation and self.opposite is None

    @property
    def reason(self) -> str:
        if self.missing:
            return "the sentence lacks " + ", ".join(self.missing)
        if self.negation:
            return "the question negates what the sentence states"
        if self.opposite is not None:
            return f"the question asks '{self.opposite[0]}', the sentence says '{self.opposite[1]}'"
        return ""


def sentence_support(question: str, text: str, context: str, lang: str | None, anchors: Sequence[str],
                     found=None) -> SentenceSupport:
    """Does ``text`` (with ``context``: its heading and title) hold every anchor of the question,
    and neither leave out a negation the question makes (the heading may make it) nor state the
    opposite of a word it asks?
    ``found(anchor, text)``: how an anchor is matched (default: its plain words, in order, or
    their analysed terms). Pure."""
    whole = f"{context} {text}" if context else text
    if found is None:
        keys = passage_keys(whole, lang or "")

        def found(a: str, _t: str) -> bool:
            ws = words(a)
            return bool(ws) and ((" " + " ".join(ws) + " ") in keys.joined or set(analyze(a, lang)) <= keys.terms
                                 and bool(analyze(a, lang)))
    missing = tuple(a for a in anchors if not found(a, whole))
    negation = negates(question, lang) and not negates(whole, lang)  # "## If nobody is home" heads its answer
    return SentenceSupport(missing, negation, opposite_asked(question, text, lang))
