"""Performance page: renders the verdict and four charts, follows α, shows bad input as a message."""

from __future__ import annotations

from tests.app.conftest import page
from ui._speed_common import ACCEPTANCE_MODES

TAU_MODE = next(label for label, field in ACCEPTANCE_MODES.items() if field == "mean_accepted_len")


def _verdict(at) -> str:
    shown = [*at.success, *at.info, *at.warning]
    return next(e.value for e in shown if e.value.startswith("**"))


def test_renders_verdict_metrics_and_charts():
    at = page("performance.py").run()
    assert not at.exception and not at.error
    assert _verdict(at).startswith("**RECOMMEND**")
    assert {m.label for m in at.metric} >= {"Speedup", "Optimal K", "Break-even α"}
    assert len(at.get("plotly_chart")) == 4
    sources = [m.value for m in at.markdown if m.value.startswith("Step times:")]
    assert sources and ("kernel times measured on" in sources[0] or "roofline estimate" in sources[0])


def test_the_verdict_follows_the_speedup_and_low_acceptance_only_warns():
    at = page("performance.py").run()
    at.number_input(key="perf_alpha").set_value(0.54).run()  # below the 0.55 advisory, still 1.10x at batch 1 (CLI)
    assert not at.exception
    assert not _verdict(at).startswith("**DISABLE**")  # a low α warns; only the predicted speedup decides
    assert any("α = 0.540 is below α = 0.55" in w.value for w in at.warning)
    at.number_input(key="perf_alpha").set_value(0.05).run()
    assert _verdict(at).startswith("**DISABLE**")


def test_serving_under_load_draws_the_rate_curves():
    at = page("performance.py").run()
    at.toggle(key="perf_serving").set_value(True).run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 7  # + throughput/latency, occupancy, TTFT/TPOT against rate
    assert any("capacity" in c.value for c in at.caption)


def test_large_batch_is_a_slowdown():
    at = page("performance.py").run()
    at.number_input(key="perf_batch").set_value(1024).run()
    assert _verdict(at).startswith("**DISABLE**")


def test_bad_acceptance_is_an_error_message_not_a_traceback():
    at = page("performance.py").run()
    at.selectbox(key="perf_acceptance_mode").set_value(TAU_MODE).run()
    at.number_input(key="perf_mean_accepted_len").set_value(7.0).run()  # K = 5 allows τ <= 6
    assert not at.exception
    assert any("mean_accepted_len" in e.value for e in at.error)


def test_no_draft_is_a_hint():
    at = page("performance.py").run()
    at.selectbox(key="scenario_draft").set_value("(no draft)").run()
    assert not at.exception
    assert any("draft" in i.value for i in at.info)


def test_a_deployment_that_does_not_fit_is_not_recommended():
    at = page("performance.py").run()
    at.sidebar.selectbox(key="scenario_node").set_value("1x-h100-sxm-80gb")
    at.sidebar.number_input(key="scenario_tp").set_value(1)
    at.run()
    assert not at.exception
    assert any("Cannot run" in e.value for e in at.error)
    assert not any("RECOMMEND" in s.value for s in at.success)
    assert not at.metric
    # each reason once, and only fixes that were re-planned and fit and start
    errors = " ".join(e.value for e in at.error)
    assert errors.count("weights need") <= 1
    assert all("still does not fit" not in m.value for m in at.markdown)


def test_mlperfs_set_is_a_choice_of_lengths_with_its_means():
    at = page("performance.py").run()
    at.radio(key="perf_lengths").set_value("MLPerf OpenOrca").run()
    assert not at.exception and not at.error
    means = {m.label: m.value for m in at.metric}
    assert (means["Prompt tokens (mean)"], means["Output tokens (mean)"]) == ("222", "294")
    speedup = next(m for m in at.metric if m.label == "Speedup")
    assert "MLPerf OpenOrca lengths" in speedup.help


def test_sharegpt_like_lengths_take_the_datasets_means_and_name_them():
    at = page("performance.py").run()
    at.radio(key="perf_lengths").set_value("ShareGPT-like").run()
    assert not at.exception and not at.error
    assert {"Prompt tokens (mean)", "Output tokens (mean)"} <= {m.label for m in at.metric}
    speedup = next(m for m in at.metric if m.label == "Speedup")
    assert "ShareGPT-like lengths" in speedup.help and "202 + 179 tokens per request on average" in speedup.help
    at.toggle(key="perf_serving").set_value(True).run()  # the simulated replica draws the same lengths
    assert not at.exception and any("ShareGPT-like lengths" in c.value for c in at.caption)
    at.radio(key="perf_lengths").set_value("Fixed").run()
    assert not at.exception and at.number_input(key="perf_prompt").value > 0
