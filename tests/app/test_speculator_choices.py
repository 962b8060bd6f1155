"""The sidebar offers heads and draft-free methods beside draft models, and each travels in the link."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.app.conftest import REPO


def _app(query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def _query(at) -> dict[str, str]:
    return {k: (v[-1] if isinstance(v, list) else v) for k, v in at.query_params.items()}


def _metric(at, label_start: str) -> str:
    return next(m.value for m in at.metric if m.label.startswith(label_start))


H100_8B = {"t": "meta-llama/Llama-3.1-8B", "n": "1x-h100-sxm-80gb", "tp": "1"}


def test_choosing_ngram_in_the_sidebar_writes_the_method_to_the_link():
    at = _app(H100_8B)
    draft = at.sidebar.selectbox(key="scenario_draft")
    assert "n-gram lookup (no draft model)" in draft.options
    assert "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B" in draft.options
    draft.set_value("n-gram lookup (no draft model)")
    at.run()
    assert not at.exception and _query(at)["m"] == "ngram"
    with_ngram = int(_metric(at, "KV cache tokens").replace(",", ""))
    at.sidebar.selectbox(key="scenario_draft").set_value("(no draft)")
    at.run()
    alone = int(_metric(at, "KV cache tokens").replace(",", ""))
    # no weights and no KV of its own: only the larger CUDA graphs of K + 1 tokens per sequence cost memory
    assert 0.97 * alone < with_ngram < alone


def test_a_head_in_the_link_is_sized_and_shown_in_the_sidebar():
    at = _app({**H100_8B, "d": "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"})
    assert not at.exception
    assert any("2,048 tokens" in w.value for w in at.warning)  # the length the head was trained at
    assert at.sidebar.selectbox(key="scenario_draft").value == "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    alone = _app({**H100_8B, "d": "none"})
    assert _metric(at, "KV cache tokens") != _metric(alone, "KV cache tokens")


def test_mtp_for_a_target_without_mtp_layers_is_a_message_not_a_traceback():
    at = _app({**H100_8B, "m": "mtp"})
    assert not at.exception
    assert any("MTP" in e.value for e in at.error)


def test_performance_estimates_ngram_and_states_its_own_alpha():
    at = _app({**H100_8B, "m": "ngram"})
    at.switch_page("ui/performance.py").run()
    assert not at.exception
    # open-ended prompts (data/draft_free_acceptance.json)
    assert any("α 0.20: this speculator's own" in c.value for c in at.caption)
    banners = [b.value for b in [*at.success, *at.info, *at.warning]]
    assert any(v.startswith(("**RECOMMEND**", "**ENABLE**", "**DISABLE**")) for v in banners)
