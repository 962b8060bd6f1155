"""1,000 seeded `search` argument combinations, in process: every one exits 0 with finite figures or 2 with one line
naming the argument (or the size of the space); none is an internal error or prints NaN.

The valid combinations stay on tiny spaces (one node type, TP 1, plain or n-gram serving): this tests refusals and
the shape of an answer, not the search's speed (``make bench-search`` measures that).
"""

from __future__ import annotations

import json
import random

from tests.cli.in_process import all_finite, run_in_process

BASE = ["search", "--target", "Llama-3.1-8B", "--json"]
#: Every option with valid (first) and hostile values.
CHOICES = {
    "--nodes": ["1x-h100-sxm-80gb", "no-such-node", "", ",,,", "1x-h100-sxm-80gb," * 70, "x" * 300, "all\x00"],
    "--engines": ["vllm", "sglang", "tensorrt-llm", "nope", "vllm,", "\u202e"],
    "--methods": ["none", "ngram", "none,ngram", "draft_model", "bogus", "none," * 70],
    "--k": ["1", "1-2", "0", "9-1", "1-99999", "x", "2,3", "-1"],
    "--tp": ["1", "0", "3-1", "1.5", "4097", "1,1"],
    "--dtypes": ["bf16", "fp8", "fp8:fp8", "bf16:nope", "int3", ":", "bf16:fp8:fp8"],
    "--batch-caps": ["8", "8,16", "0", "1-5000", "nan", "-8"],
    "--requests-per-s": ["1", "0.5", "0", "-1", "nan", "inf", "1e-300", "5e-324", "1e308"],
    "--concurrency": ["4", "0", "-3", "1e3", str(10**30), "2.5"],
    "--prompt-tokens": ["128", "0", "-1", "2147483648", "9999999", "x"],
    "--output-tokens": ["32", "0", "1", "-5", "100000000"],
    "--dataset": ["sharegpt", "other"],
    "--ttft-slo-ms": ["500", "0", "-1", "nan", "inf", "1e-300"],
    "--tpot-slo-ms": ["40", "0", "nan", "1e308"],
    "--percentile": ["99", "50", "0", "100.1", "nan", "-1"],
}
#: The tiny space every valid combination searches unless the draw overrides a part of it.
SMALL = {"--nodes": "1x-h100-sxm-80gb", "--methods": "none", "--k": "1", "--tp": "1", "--dtypes": "bf16",
         "--batch-caps": "8"}  # fmt: skip


def combinations(count: int = 1000, seed: int = 22) -> list[list[str]]:
    rng = random.Random(seed)
    combos = []
    for _ in range(count):
        chosen = dict(SMALL)
        load = rng.choice(["--requests-per-s", "--concurrency", "both", "neither"])
        for name in ("--requests-per-s", "--concurrency") if load == "both" else () if load == "neither" else (load,):
            chosen[name] = CHOICES[name][0]
        if rng.random() < 0.85:
            chosen["--prompt-tokens"], chosen["--output-tokens"] = "128", "32"
        for name in rng.sample(list(CHOICES), rng.randint(0, 3)):
            values = CHOICES[name]
            # a third of the draws keep a valid value, so that valid runs are exercised too
            chosen[name] = rng.choice(values[:1] if rng.random() < 0.33 else values)
        if chosen.get("--methods", "none") != "none" or chosen.get("--dataset"):
            chosen["--nodes"], chosen["--tp"], chosen["--batch-caps"] = SMALL["--nodes"], "1", "8"
        args = list(BASE)
        for name, value in chosen.items():
            args += [name, value]
        combos.append(args)
    return combos


def test_a_thousand_search_combinations_end_in_an_answer_or_one_line():
    codes = {0: 0, 2: 0}
    for args in combinations():
        code, out, err = run_in_process(args)
        assert code in (0, 2), (args, err)
        codes[code] += 1
        if code == 2:
            assert err.count("\n") == 1 and err.startswith("error: ") and len(err) < 700, (args, err)
        else:
            payload = json.loads(out)
            assert len(payload["points"]) >= max(1, payload["fitting_points"]), args
            assert all_finite(payload["points"]) and all_finite(payload["frontier"]), args
    assert codes[0] >= 50 and codes[2] >= 500, codes  # both outcomes are exercised
