"""Source dates keep their order in right-to-left text (issue 19: a Persian source date read "20-01-2022")."""

from hypothesis import given
from hypothesis import strategies as st

from vouched.answer.events import CitedSource, DoneEvent, SentenceEvent
from vouched.server.openai import FaceOptions, completion
from vouched.text.dates import LRI, PDI, display_date


def test_rtl_dates_are_isolated_and_ltr_dates_untouched():
    assert display_date("2022-01-20", "fa") == f"{LRI}2022-01-20{PDI}"
    assert display_date("2022-01-20", "ar") == f"{LRI}2022-01-20{PDI}"
    assert display_date("2022-01-20", "fa-IR") == f"{LRI}2022-01-20{PDI}"
    for lang in ("en", "es", "pt", "fr", "de", "ru", "zh", "hi"):
        assert display_date("2022-01-20", lang) == "2022-01-20"
    assert display_date(None, "fa") == "" and display_date("", "fa") == ""


@given(st.dates().map(lambda d: d.isoformat()), st.sampled_from(["fa", "ar", "en", "zh"]))
def test_the_date_itself_is_never_changed(iso, lang):
    shown = display_date(iso, lang)
    assert shown.strip(LRI + PDI) == iso
    assert (shown != iso) == (lang in ("fa", "ar"))


def test_openai_sources_list_isolates_a_persian_date():
    src = CitedSource(number=1, id="c1", doc_id="d", title="اسکله", date="2022-01-20")
    events = [SentenceEvent(text="قایق‌ها صبح بار خالی می‌کنند.", sources=(1,)),
              DoneEvent(outcome="answered", sources=(src,), trace_id="t", lang="fa")]
    content = completion(events, options=FaceOptions(inline_citations=True))["choices"][0]["message"]["content"]
    assert content.endswith(f"[1] اسکله — {LRI}2022-01-20{PDI}")
