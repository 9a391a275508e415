"""vouched.guard.verify: verdicts, cue lists per language, and the invariances the design promises."""

from __future__ import annotations

import random
import tomllib
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vouched.embed import HashingEmbedder
from vouched.guard.verify import (
    CUE_LANGS,
    VerifySettings,
    analyse,
    decide,
    judge,
    load_cues,
    passage_sentences,
    verify_claim,
)

LEX = VerifySettings()  # embedder=None → lexical support with its own threshold
RULES = VerifySettings(model=False)  # the hand rules, which the English model replaces by default
DIGITS = {
    "persian": str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹"),
    "arabic": str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩"),
    "devanagari": str.maketrans("0123456789", "०१२३४५६७८९"),
}


def verdict(claim: str, *passages: str, lang: str | None = None, settings: VerifySettings = RULES) -> str:
    return verify_claim(claim, list(passages), lang=lang, settings=settings).verdict


# --- cue files ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", CUE_LANGS)
def test_cue_file_shape(lang):
    raw = resources.files("vouched.guard.verify_words").joinpath(f"{lang}.toml").read_text("utf-8")
    data = tomllib.loads(raw)
    assert set(data) <= {"negation", "negation_suffixes", "opposites"}
    assert data["negation"], "every language needs negation cues"
    en = [g["name"] for g in tomllib.loads(
        resources.files("vouched.guard.verify_words").joinpath("en.toml").read_text("utf-8"))["opposites"]]
    assert [g["name"] for g in data["opposites"]] == en, "opposite groups are aligned across languages by name"
    cues = load_cues(lang)
    for name, a, b in cues.opposites:
        assert a and b and not (a & b), (lang, name)


def test_unknown_language_falls_back_to_english():
    assert load_cues("xx").lang == "en"


# Per language: (positive passage, claim that agrees, claim negated, claim with the opposite word).
CASES = {
    "en": ("Metformin increases insulin sensitivity in elderly patients.",
           "Metformin increases insulin sensitivity in elderly patients.",
           "Metformin does not increase insulin sensitivity in elderly patients.",
           "Metformin reduces insulin sensitivity in elderly patients."),
    "es": ("La metformina aumenta la sensibilidad a la insulina en pacientes ancianos.",
           "La metformina aumenta la sensibilidad a la insulina en pacientes ancianos.",
           "La metformina no aumenta la sensibilidad a la insulina en pacientes ancianos.",
           "La metformina disminuye la sensibilidad a la insulina en pacientes ancianos."),
    "pt": ("A metformina aumenta a sensibilidade à insulina em pacientes idosos.",
           "A metformina aumenta a sensibilidade à insulina em pacientes idosos.",
           "A metformina não aumenta a sensibilidade à insulina em pacientes idosos.",
           "A metformina reduz a sensibilidade à insulina em pacientes idosos."),
    "fr": ("La metformine augmente la sensibilité à l'insuline chez les patients âgés.",
           "La metformine augmente la sensibilité à l'insuline chez les patients âgés.",
           "La metformine n'augmente pas la sensibilité à l'insuline chez les patients âgés.",
           "La metformine diminue la sensibilité à l'insuline chez les patients âgés."),
    "de": ("Metformin erhöht die Insulinempfindlichkeit bei älteren Patienten.",
           "Metformin erhöht die Insulinempfindlichkeit bei älteren Patienten.",
           "Metformin erhöht die Insulinempfindlichkeit bei älteren Patienten nicht.",
           "Metformin senkt die Insulinempfindlichkeit bei älteren Patienten."),
    "fa": ("متفورمین حساسیت به انسولین را در بیماران سالمند افزایش می‌دهد.",
           "متفورمین حساسیت به انسولین را در بیماران سالمند افزایش می‌دهد.",
           "متفورمین حساسیت به انسولین را در بیماران سالمند افزایش نمی‌دهد.",
           "متفورمین حساسیت به انسولین را در بیماران سالمند کاهش می‌دهد."),
    "ru": ("Метформин увеличивает чувствительность к инсулину у пожилых пациентов.",
           "Метформин увеличивает чувствительность к инсулину у пожилых пациентов.",
           "Метформин не увеличивает чувствительность к инсулину у пожилых пациентов.",
           "Метформин снижает чувствительность к инсулину у пожилых пациентов."),
    "ar": ("الميتفورمين يزيد حساسية الأنسولين لدى المرضى المسنين.",
           "الميتفورمين يزيد حساسية الأنسولين لدى المرضى المسنين.",
           "الميتفورمين لا يزيد حساسية الأنسولين لدى المرضى المسنين.",
           "الميتفورمين يقلل حساسية الأنسولين لدى المرضى المسنين."),
    "hi": ("मेटफॉर्मिन बुजुर्ग रोगियों में इंसुलिन संवेदनशीलता बढ़ाता है।",
           "मेटफॉर्मिन बुजुर्ग रोगियों में इंसुलिन संवेदनशीलता बढ़ाता है।",
           "मेटफॉर्मिन बुजुर्ग रोगियों में इंसुलिन संवेदनशीलता नहीं बढ़ाता है।",
           "मेटफॉर्मिन बुजुर्ग रोगियों में इंसुलिन संवेदनशीलता घटाता है।"),
}


@pytest.mark.parametrize("lang", sorted(CASES))
def test_negation_and_opposites_per_language(lang):
    passage, same, negated, opposite = CASES[lang]
    assert verdict(same, passage, lang=lang) == "supported"
    neg = verify_claim(negated, [passage], lang=lang, settings=RULES)
    assert neg.verdict == "contradicted" and "negation:claim" in neg.cues, neg
    opp = verify_claim(opposite, [passage], lang=lang, settings=RULES)
    assert opp.verdict == "contradicted" and "opposite:direction" in opp.cues, opp


def test_negation_suffix_english():
    v = verify_claim("Metformin doesn't increase insulin sensitivity.", ["Metformin increases insulin sensitivity."],
                     settings=RULES)
    assert v.verdict == "contradicted" and v.cues == ("negation:claim",)


def test_negation_in_evidence_only():
    v = verify_claim("Metformin increases insulin sensitivity.", ["Metformin did not increase insulin sensitivity."],
                     settings=RULES)
    assert v.cues == ("negation:evidence",) and v.verdict == "contradicted"


def test_both_negated_is_supported():
    assert verdict("Metformin does not increase insulin sensitivity.",
                   "Metformin did not increase insulin sensitivity in the trial.") == "supported"


def test_unrelated_passage_is_insufficient():
    v = verify_claim("Metformin increases insulin sensitivity.", ["The committee met in Geneva to discuss fishing quotas."],
                     settings=RULES)
    assert v.verdict == "insufficient" and v.reason.startswith("best support")


def test_missing_entity_is_insufficient_when_the_rule_is_on():
    claim, passage = "IL-18 increases plaque instability.", "IL-6 increases plaque instability in mice."
    v = judge(claim, [passage], settings=VerifySettings(entity_rule=True, model=False))
    assert v.verdict == "insufficient" and v.cues == ("entity:il-18",)
    # off (the default): the number 18 is still a value the passage does not state
    assert verify_claim(claim, [passage], settings=RULES).cues == ("value:18",)


def test_coverage_counts_words_anywhere_in_the_cited_passages():
    claim = "Metformin increases insulin sensitivity in elderly diabetic patients."
    one = "Metformin increases insulin sensitivity."
    strict = VerifySettings(coverage_threshold=0.7, lexical_threshold=0.3, model=False)
    assert judge(claim, [one], settings=strict).reason.startswith("the cited passages hold 57%")
    assert judge(claim, [one + " Patients were elderly and diabetic."], settings=strict).verdict == "supported"


def test_opposite_found_in_a_later_window_sentence_becomes_the_span():
    claim = "Metformin increases insulin sensitivity in elderly patients."
    passage = "Metformin and insulin sensitivity in elderly patients were studied. Insulin sensitivity fell: metformin reduced it."
    v = verify_claim(claim, [passage], settings=RULES)
    assert v.verdict == "contradicted" and v.cues == ("opposite:direction",)
    assert "reduced" in v.span.text
    assert judge(claim, [passage], settings=VerifySettings(window=1, model=False)).verdict == "supported"


def test_number_absent_from_cited_passages():
    passage = "Of the patients, 32% discontinued the treatment."
    assert verdict("32% of patients discontinued the treatment.", passage) == "supported"
    for s in (RULES, LEX):  # the values rule also overrules the model's "supported"
        v = verify_claim("61% of patients discontinued the treatment.", [passage], settings=s)
        assert v.verdict == "insufficient" and v.cues == ("value:61",)
    strict = VerifySettings(values="contradicted", model=False)
    assert judge("61% of patients discontinued the treatment.", [passage], settings=strict).verdict == "contradicted"
    off = VerifySettings(values="ignore", model=False)
    assert judge("61% of patients discontinued the treatment.", [passage], settings=off).verdict == "supported"


def test_span_is_the_best_sentence_with_offsets():
    passages = ["Unrelated opening words here. Aspirin reduces fever in adults.", "Nothing about it."]
    v = verify_claim("Aspirin reduces fever in adults.", passages)
    assert v.span is not None and v.span.text == "Aspirin reduces fever in adults."
    assert passages[v.span.passage][v.span.start:v.span.end] == v.span.text


def test_empty_inputs():
    assert verify_claim("Aspirin reduces fever.", []).verdict == "insufficient"
    assert verify_claim("", ["Aspirin reduces fever."]).verdict == "insufficient"
    assert verify_claim("Aspirin reduces fever.", ["   "]).span is None


class _FixedEmbedder:
    """Every text on the same direction: cosine 1, so only the cues decide."""

    model_id, dim = "fixed", 4

    def __init__(self):
        self.calls = []

    def embed_queries(self, texts):
        self.calls.append(("q", list(texts)))
        return np.tile(np.array([1.0, 0, 0, 0], dtype=np.float32), (len(texts), 1))

    def embed_passages(self, texts, progress=None):
        self.calls.append(("p", list(texts)))
        return np.tile(np.array([1.0, 0, 0, 0], dtype=np.float32), (len(texts), 1))


def test_cross_language_cues_with_an_embedder():
    """A Spanish claim over an English source: lexical overlap is nil, the embedding carries support,
    and negation is read with each side's own list."""
    emb = _FixedEmbedder()
    passage = "Metformin increases insulin sensitivity."
    assert verify_claim("La metformina no aumenta la sensibilidad a la insulina.", [passage], embedder=emb,
                        lang="es").verdict == "contradicted"
    assert verify_claim("La metformina aumenta la sensibilidad a la insulina.", [passage], embedder=emb,
                        lang="es").verdict == "supported"
    assert verify_claim("El fármaco aumenta la sensibilidad.", [passage], lang="es").verdict == "insufficient"


def test_persian_claim_over_english_source_reads_each_side_with_its_own_list():
    emb = _FixedEmbedder()
    v = verify_claim("متفورمین حساسیت به انسولین را کاهش می‌دهد.", ["Metformin increases insulin sensitivity."],
                     embedder=emb)
    assert v.verdict == "contradicted" and v.cues == ("opposite:direction",)


def test_embedder_sees_only_claim_and_cited_sentences_with_ascii_digits():
    emb = _FixedEmbedder()
    verify_claim("Dose of ۴۰ mg.", ["A dose of 40 mg. Twice a day."], embedder=emb)
    assert emb.calls == [("q", ["Dose of 40 mg."]), ("p", ["A dose of 40 mg.", "Twice a day."])]


def test_cosine_count_must_match_sentences():
    with pytest.raises(ValueError):
        analyse("A claim.", ["One. Two."], [0.5])


# --- properties -------------------------------------------------------------------------------

SUBJECTS = ["Metformin", "Aspirin", "The vaccine", "Vitamin D", "Exercise", "Statin therapy", "IL-18", "CD44v6"]
VERBS = ["increases", "reduces", "does not affect", "improves", "inhibits", "is associated with", "lowers"]
OBJECTS = ["insulin sensitivity", "blood pressure", "tumour growth", "mortality in adults", "bone density"]
TAILS = ["", " in 40 patients", " by 12%", " after 3 months", " in 2019", " at 1.5 mg per day"]


@st.composite
def sentence(draw):
    return f"{draw(st.sampled_from(SUBJECTS))} {draw(st.sampled_from(VERBS))} {draw(st.sampled_from(OBJECTS))}" \
           f"{draw(st.sampled_from(TAILS))}."


@settings(max_examples=150, deadline=None)
@given(claim=sentence(), sents=st.lists(sentence(), min_size=1, max_size=6), seed=st.integers(0, 10**6),
       use_embedder=st.booleans())
def test_verdict_invariant_to_sentence_order(claim, sents, seed, use_embedder):
    emb = HashingEmbedder(dim=64) if use_embedder else None
    shuffled = sents[:]
    random.Random(seed).shuffle(shuffled)
    a = verify_claim(claim, [" ".join(sents)], embedder=emb, lang="en")
    b = verify_claim(claim, [" ".join(shuffled)], embedder=emb, lang="en")
    assert (a.verdict, a.span.text, a.cues) == (b.verdict, b.span.text, b.cues)


@settings(max_examples=150, deadline=None)
@given(claim=sentence(), sents=st.lists(sentence(), min_size=1, max_size=5),
       script_claim=st.sampled_from([None, *DIGITS]), script_passage=st.sampled_from([None, *DIGITS]),
       use_embedder=st.booleans())
def test_verdict_invariant_to_digit_script(claim, sents, script_claim, script_passage, use_embedder):
    emb = HashingEmbedder(dim=64) if use_embedder else None
    passage = " ".join(sents)
    base = verify_claim(claim, [passage], embedder=emb, lang="en")
    c = claim.translate(DIGITS[script_claim]) if script_claim else claim
    p = passage.translate(DIGITS[script_passage]) if script_passage else passage
    other = verify_claim(c, [p], embedder=emb, lang="en")
    assert (base.verdict, base.cues) == (other.verdict, other.cues)
    assert round(base.support, 6) == round(other.support, 6)


@settings(max_examples=100, deadline=None)
@given(text=st.lists(sentence(), min_size=0, max_size=6).map(" ".join), pad=st.text(" \n", max_size=3))
def test_spans_are_substrings_at_their_offsets(text, pad):
    passages = [pad + text, text + pad]
    for s in passage_sentences(passages):
        assert passages[s.passage][s.start:s.end] == s.text


@settings(max_examples=100, deadline=None)
@given(claim=sentence(), sents=st.lists(sentence(), min_size=1, max_size=5), t1=st.floats(0, 1), t2=st.floats(0, 1))
def test_a_higher_threshold_never_finds_more_support(claim, sents, t1, t2):
    lo, hi = sorted((t1, t2))
    ev = analyse(claim, [" ".join(sents)], lang="en")
    if decide(ev, VerifySettings(lexical_threshold=lo)).verdict == "insufficient":
        assert decide(ev, VerifySettings(lexical_threshold=hi)).verdict == "insufficient"


@settings(max_examples=100, deadline=None)
@given(claim=sentence(), sents=st.lists(sentence(), min_size=1, max_size=5))
def test_claim_equal_to_a_sentence_is_never_insufficient_for_lack_of_support(claim, sents):
    v = verify_claim(claim, [" ".join([*sents, claim])], lang="en")
    assert not v.reason.startswith("best support")
    assert v.verdict in ("supported", "insufficient") or v.cues  # contradicted only with a named cue


# --- the fitted model (English) ----------------------------------------------------------------


def test_shipped_model_file_has_both_variants_and_provenance():
    import json

    from vouched.guard.verify import MODEL_FEATURES, load_model

    raw = json.loads(resources.files("vouched.guard.verify_words").joinpath("model.json").read_text("utf-8"))
    models = load_model()
    assert set(models) == {"words", "embed"}
    for name, m in models.items():
        prov = raw["provenance"][name]
        assert "train" in prov["trained_on"] and "test claims never used" in prov["trained_on"]
        assert prov["command"].startswith("vouched bench verify --fit --save")
        assert set(m.features) <= set(MODEL_FEATURES) and m.weights.shape == (len(m.features), 3)
        assert np.all(m.scale > 0)
    assert not any(f.startswith(("cos_", "flip_")) for f in models["words"].features)
    assert any(f.startswith("flip_") for f in models["embed"].features)


def test_model_reads_english_negation_and_direction_and_explains_itself():
    passage, same, negated, opposite = CASES["en"]
    assert verdict(same, passage, settings=LEX) == "supported"
    neg = verify_claim(negated, [passage], lang="en")
    assert neg.verdict == "contradicted" and neg.cues[0] == "negation:claim" and neg.reason.startswith("model (")
    opp = verify_claim(opposite, [passage], lang="en")
    assert opp.verdict == "contradicted" and opp.cues[0] == "opposite:direction"
    far = verify_claim("Metformin increases insulin sensitivity.", ["The committee met in Geneva to discuss fishing quotas."])
    assert far.verdict == "insufficient" and far.reason.startswith("model (")


def test_other_languages_never_reach_the_model():
    passage, same, negated, _ = CASES["es"]
    for claim in (same, negated):
        assert not verify_claim(claim, [passage], lang="es").reason.startswith("model")


def test_flip_claim():
    from vouched.guard.verify import flip_claim

    assert flip_claim("Aspirin does not reduce fever.") == "Aspirin does reduce fever."
    assert flip_claim("Aspirin increases bleeding.") == "Aspirin decreases bleeding."
    assert flip_claim("Aspirin is used in children.") == "Aspirin is not used in children."
    assert flip_claim("Aspirin for ۴۰ children.") == "It is not true that aspirin for 40 children."


def test_model_with_an_embedder_embeds_the_flipped_claim():
    emb = _FixedEmbedder()
    v = verify_claim("Metformin increases insulin sensitivity.", ["Metformin increases insulin sensitivity."],
                     embedder=emb, lang="en")
    assert emb.calls[0] == ("q", ["Metformin increases insulin sensitivity.", "Metformin decreases insulin sensitivity."])
    assert v.reason.startswith("model (")
