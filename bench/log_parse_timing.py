"""`make bench-hostile`: engine-log parsing time on adversarial logs (prints only, never asserts).

Each input nearly matches one of the parser's patterns over and over (the shapes that made the earlier
regex parser take minutes); the last one is a 5,000,000-character log mixing all of them, the most the
Validation page and ``check-log`` accept. Parsing is linear in the input, so each should take well under
a second and the 5 M-character log a few seconds at most.
"""

from __future__ import annotations

import time

from planner.validation.engine_log import MAX_LOG_CHARS, parse_engine_log

#: Pieces that start a pattern and then never finish it.
NEAR_MISSES = (
    "speculative_config=(",
    "speculative_config=SpeculativeConfig(",
    "'speculative_config': {",
    "{",
    "Memory profiling results: ",
    "Load weight end. ",
    "NVIDIA H100 ",
    "0",
    "1.0 ",
    "max_model_len=",
    "total_gpu_memory (",
)


def adversarial_inputs() -> list[tuple[str, str]]:
    """(label, text) for each adversarial shape, sized like the ones that stalled the old parser."""
    cases = [
        ("repeated speculative_config=( (740K chars)", "speculative_config=(" * 37_000),
        ("repeated braces (460K chars)", "'speculative_config': {" * 20_000),
        ("repeated memory-profiling prefixes (500K chars)", "Memory profiling results: " * 19_231),
        ("8,000 digits", "INFO " + "9" * 8_000 + " for peak activation"),
        ("5,000,000 digits", "9" * 5_000_000),
    ]
    line = "".join(piece * 20 for piece in NEAR_MISSES)
    lines = []
    while sum(map(len, lines)) < MAX_LOG_CHARS - len(line) - 1:
        lines.append(line)
    mixed = "\n".join(lines)[: MAX_LOG_CHARS - 20] + "\nGPU blocks: 1"
    cases.append((f"mixed near-misses, {len(mixed):,} chars in {len(lines):,} lines", mixed))
    short = ("Memory profiling results:\n" * (MAX_LOG_CHARS // 26))[:MAX_LOG_CHARS]
    cases.append((f"{MAX_LOG_CHARS:,} chars of short near-miss lines", short))
    return cases


def main() -> int:
    for label, text in adversarial_inputs():
        start, cpu = time.perf_counter(), time.process_time()
        parse_engine_log(text)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(f"{label:<56} {len(text):>10,} chars  {elapsed:7.3f} s wall  {cpu:7.3f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
