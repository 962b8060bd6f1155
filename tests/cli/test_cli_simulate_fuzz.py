"""1,000 seeded `simulate` argument combinations, in process: every one exits 0 with finite figures or 2 with one
line naming the argument or the work budget; none is an internal error, prints NaN or runs without bound (the
shared input types bound rates, concurrency, seeds and lengths; the work budget refuses or stops a run)."""

from __future__ import annotations

import json
import random

from planner.cli import main
from tests.cli.in_process import all_finite, run_in_process

BASE = ["simulate", "--target", "Llama-3.1-8B", "--node", "1x-h100-sxm-80gb", "--tp", "1", "--json"]
CHOICES = {
    "--request-rate": ["1e-300", "5e-324", "nan", "inf", "-1", "0", "1e6", "1e7", "0.5", "40", "abc", "", "1e-6"],
    "--concurrency": [str(10**30), "0", "-5", "1", "64", "1e3", "100001", "2.5"],
    "--offline": [None],
    "--seed": ["-1", "0", str(2**32), "4294967295", "x", "7"],
    "--num-prompts": ["0", "1", "40", "100001", "1000000", "-3", "1e3", "20"],
    "--prompt-tokens": ["0", "1", "128", "9999999", "2147483648", "-1"],
    "--output-tokens": ["0", "1", "64", "100000", "-1", "2147483648"],
    "--dataset": ["sharegpt", "other"],
    "--max-num-batched-tokens": ["16", "8192", "1", "0", "2048"],
    "--alpha": ["nan", "-0.1", "0.7", "1", "1.5"],
    "--tau": ["0.5", "3", "70", "inf"],
    "--rho": ["0.5", "2", "-1"],
    "--k": ["0", "3", "65", "x"],
}
ARRIVALS = ("--request-rate", "--concurrency", "--offline")


def combinations(count: int = 1000, seed: int = 22) -> list[list[str]]:
    rng = random.Random(seed)
    combos = []
    for _ in range(count):
        args = list(BASE)
        if rng.random() < 0.7:
            args += ["--draft", "Llama-3.2-1B"]
        names = [rng.choice(ARRIVALS)] if rng.random() < 0.9 else rng.sample(ARRIVALS, 2)
        names += rng.sample([n for n in CHOICES if n not in ARRIVALS], rng.randint(0, 4))
        if "--num-prompts" not in names:  # keep the valid runs small: this tests refusals, not throughput
            args += ["--num-prompts", rng.choice(["8", "30"])]
        for name in names:
            value = rng.choice(CHOICES[name])
            args += [name] if value is None else [name, value]
        combos.append(args)
    return combos


def test_a_thousand_simulate_combinations_end_in_a_result_or_one_line():
    codes = {0: 0, 2: 0}
    for args in combinations():
        code, out, err = run_in_process(args)
        assert code in (0, 2), (args, err)
        codes[code] += 1
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("error: "), (args, err)
        else:
            payload = json.loads(out)
            assert all_finite(payload), args
            assert payload["requests_per_s"] > 0 and payload["tpot_s"]["mean"] >= 0, args  # 0 with 1 output token
    assert codes[0] >= 50 and codes[2] >= 500, codes  # both outcomes are exercised


def test_the_work_budget_refuses_a_long_run_naming_its_limit(capsys):
    long = ["--request-rate", "100", "--num-prompts", "100000", "--output-tokens", "190"]
    assert main([*BASE, "--draft", "Llama-3.2-1B", *long]) == 2
    assert "request-steps (the work budget of one run)" in capsys.readouterr().err
    tiny_budget = ["--request-rate", "100", "--dataset", "sharegpt", "--num-prompts", "20000"]
    assert main([*BASE, *tiny_budget, "--max-num-batched-tokens", "16"]) == 2
    assert "work budget" in capsys.readouterr().err
