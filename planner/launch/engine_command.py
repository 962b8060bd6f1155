"""The engine's own start command for launch settings, and the settings read back from such a command.

One emitter and one reader per engine family; both go through the release's recorded flags, so an option the
release does not know is refused on the way out and rejected on the way back (``argparse_check``).

>>> import json
>>> from planner.launch.releases import release_for
>>> flags, release, _ = release_for("vllm", "0.19.0")
>>> s = LaunchSettings(engine="vllm", release="0.19.0", target="org/t", speculator="org/d", method="draft_model",
...                    draft_tp=1, num_speculative_tokens=4, tp=2, pp=1, kv_dtype="auto", memory_fraction=0.9,
...                    max_model_len=4096, max_num_seqs=64, max_num_batched_tokens=8192)
>>> cmd = emit_engine_command(s, flags, release)
>>> cmd.argv[:3], json.loads(cmd.argv[-1])["model"], json.loads(cmd.argv[-1])["num_speculative_tokens"]
(['vllm', 'serve', 'org/t'], 'org/d', 4)
>>> read_engine_command(cmd.argv, None, "vllm", flags, release).same_deployment(s)
True
"""

from __future__ import annotations

import json

import yaml
from pydantic import BaseModel

from planner.catalog.lookup import get_model
from planner.errors import CatalogError, InputError
from planner.launch.argparse_check import release_parser
from planner.launch.releases import EngineFlags, EngineRelease
from planner.launch.settings import LaunchSettings, NotLaunchableError

#: The TensorRT-LLM options file the command names (written beside the command, mounted in containers).
OPTIONS_FILE = "extra_llm_api_options.yaml"
_WORDS = {"vllm": "vLLM", "vllm-v0": "vLLM", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}


class EngineCommand(BaseModel):
    argv: list[str]
    #: TensorRT-LLM's options (the YAML its ``--extra_llm_api_options`` names); None for the other engines.
    options: dict | None = None


class _Argv:
    """An argv under construction that only takes flags ``release`` defines (and values among their choices)."""

    def __init__(self, head: list[str], engine: str, release: EngineRelease) -> None:
        self.argv, self.engine, self.release = list(head), engine, release

    def missing(self, what: str) -> NotLaunchableError:
        return NotLaunchableError(f"{_WORDS[self.engine]} {self.release.release} has no {what} ({self.release.source})")

    def add(self, option: str, value: object = None) -> None:
        flag = self.release.find(option)
        if flag is None:
            raise self.missing(f"flag {option}")
        if value is None:
            self.argv.append(option)
            return
        text = repr(value) if isinstance(value, float) else str(value)
        if flag.choices is not None and text not in flag.choices:
            raise self.missing(f"{option} {text} (it accepts {', '.join(flag.choices)})")
        self.argv += [option, text]


def _method_value(flags: EngineFlags, accepted: tuple[str, ...] | None, method: str) -> str | None:
    """The engine's name for ``method`` in this release (the newest spelling it accepts)."""
    names = flags.methods.get(method, ())
    if accepted is None:
        return names[-1] if names else None
    return next((name for name in names if name in accepted), None)


def emit_engine_command(settings: LaunchSettings, flags: EngineFlags, release: EngineRelease) -> EngineCommand:
    """The start command of ``settings`` for ``release`` (refused with the reason when it cannot be written)."""
    family = {"vllm-v0": "vllm"}.get(settings.engine, settings.engine)
    return {"vllm": _emit_vllm, "sglang": _emit_sglang, "trtllm": _emit_trtllm}[family](settings, flags, release)


def _weights(cmd: _Argv, flags: EngineFlags, dtype: str | None) -> None:
    if dtype is None:  # the checkpoint's own format: the engine reads its config
        return
    mapped = flags.weight_formats.get(dtype)
    if not isinstance(mapped, tuple):
        raise cmd.missing(f"flag for weight format {dtype}")
    cmd.add(*mapped)


def _kv(cmd: _Argv, flags: EngineFlags, option: str, kv_dtype: str) -> None:
    if kv_dtype not in flags.kv_dtypes:
        raise cmd.missing(f"KV cache dtype {kv_dtype}")
    cmd.add(option, flags.kv_dtypes[kv_dtype])


def _emit_vllm(s: LaunchSettings, flags: EngineFlags, release: EngineRelease) -> EngineCommand:
    cmd = _Argv([*flags.program, s.target], s.engine, release)
    cmd.add("--tensor-parallel-size", s.tp)
    cmd.add("--pipeline-parallel-size", s.pp)
    _weights(cmd, flags, s.dtype)
    _kv(cmd, flags, "--kv-cache-dtype", s.kv_dtype)
    cmd.add("--gpu-memory-utilization", s.memory_fraction)
    cmd.add("--max-model-len", s.max_model_len)
    cmd.add("--max-num-seqs", s.max_num_seqs)
    cmd.add("--max-num-batched-tokens", s.max_num_batched_tokens)
    if s.enforce_eager:
        cmd.add("--enforce-eager")
    if s.method is None:
        return EngineCommand(argv=cmd.argv)
    if release.knows("--speculative-config"):
        method = _method_value(flags, release.speculative_config_methods, s.method)
        if method is None:
            raise cmd.missing(f"speculative method for {s.method}")
        config: dict = {"method": method}
        if s.speculator:
            config["model"] = s.speculator
        config["num_speculative_tokens"] = s.num_speculative_tokens
        if s.draft_tp is not None:
            config["draft_tensor_parallel_size"] = s.draft_tp
        unknown = set(config) - set(release.speculative_config_keys or config)
        if unknown:
            raise cmd.missing(f"speculative-config key {', '.join(sorted(unknown))}")
        cmd.add("--speculative-config", json.dumps(config))
        return EngineCommand(argv=cmd.argv)
    if s.method not in ("draft_model", "eagle", "ngram"):  # the draft's own config names EAGLE; MTP needs a config
        raise cmd.missing(f"flag that selects {s.method} speculation (--speculative-config arrived in 0.8.2)")
    cmd.add("--speculative-model", s.speculator or "[ngram]")
    cmd.add("--num-speculative-tokens", s.num_speculative_tokens)
    if s.draft_tp is not None:
        cmd.add("--speculative-draft-tensor-parallel-size", s.draft_tp)
    return EngineCommand(argv=cmd.argv)


def _same_tp_draft(cmd: _Argv, s: LaunchSettings) -> None:
    if s.draft_tp is not None and s.draft_tp != s.tp:
        raise cmd.missing(f"draft tensor-parallel flag (the draft runs at the target's TP {s.tp}, not {s.draft_tp})")


def _emit_sglang(s: LaunchSettings, flags: EngineFlags, release: EngineRelease) -> EngineCommand:
    cmd = _Argv(list(flags.program), s.engine, release)
    cmd.add("--model-path", s.target)
    cmd.add(flags.host_flag or "--host", "0.0.0.0")
    cmd.add(flags.port_flag or "--port", flags.port)
    cmd.add("--tp-size", s.tp)
    if s.pp > 1 or release.knows("--pp-size"):  # releases before 0.4.7 have no pipeline parallelism
        cmd.add("--pp-size", s.pp)
    _weights(cmd, flags, s.dtype)
    _kv(cmd, flags, "--kv-cache-dtype", s.kv_dtype)
    cmd.add("--mem-fraction-static", s.memory_fraction)
    cmd.add("--context-length", s.max_model_len)
    cmd.add("--max-running-requests", s.max_num_seqs)
    cmd.add("--chunked-prefill-size", s.max_num_batched_tokens)
    if s.enforce_eager:
        cmd.add("--disable-cuda-graph")
    if s.method is not None:
        _same_tp_draft(cmd, s)
        algorithm = _method_value(flags, release.find("--speculative-algorithm").choices, s.method)  # type: ignore[union-attr]
        if algorithm is None:
            raise cmd.missing(f"--speculative-algorithm for {s.method}")
        cmd.add("--speculative-algorithm", algorithm)
        if s.speculator:
            cmd.add("--speculative-draft-model-path", s.speculator)
        k = s.num_speculative_tokens or 0
        cmd.add("--speculative-num-steps", k)
        cmd.add("--speculative-eagle-topk", 1)
        cmd.add("--speculative-num-draft-tokens", k + 1)
    return EngineCommand(argv=cmd.argv)


def _emit_trtllm(s: LaunchSettings, flags: EngineFlags, release: EngineRelease) -> EngineCommand:
    cmd = _Argv([*flags.program, s.target], s.engine, release)
    cmd.add(flags.host_flag or "--host", "0.0.0.0")
    cmd.add(flags.port_flag or "--port", flags.port)
    cmd.add("--backend", "pytorch")
    cmd.add("--tp_size", s.tp)
    cmd.add("--pp_size", s.pp)
    cmd.add("--max_batch_size", s.max_num_seqs)
    cmd.add("--max_num_tokens", s.max_num_batched_tokens)
    cmd.add("--max_seq_len", s.max_model_len)
    cmd.add(flags.options_file_flag or "--extra_llm_api_options", OPTIONS_FILE)
    if s.enforce_eager:
        raise cmd.missing("recorded option that turns CUDA graphs off")
    options: dict = {}
    if s.dtype is not None:
        mapped = flags.weight_formats.get(s.dtype)
        if not isinstance(mapped, dict):
            raise cmd.missing(f"option for weight format {s.dtype}: it reads quantization from the checkpoint")
        options.update(mapped)
    kv: dict = {"free_gpu_memory_fraction": s.memory_fraction}
    if s.kv_dtype != "auto":
        if s.kv_dtype not in flags.kv_dtypes:
            raise cmd.missing(f"KV cache dtype {s.kv_dtype}")
        kv["dtype"] = flags.kv_dtypes[s.kv_dtype]
    options["kv_cache_config"] = kv
    if s.method is not None:
        _same_tp_draft(cmd, s)
        decoding = _method_value(flags, release.speculative_config_methods, s.method)
        spec: dict = {"decoding_type": decoding}
        if s.method == "mtp":
            spec["num_nextn_predict_layers"] = s.num_speculative_tokens
        else:
            spec["max_draft_len"] = s.num_speculative_tokens
        if s.speculator:
            spec["speculative_model"] = s.speculator
        options["speculative_config"] = spec
    return EngineCommand(argv=cmd.argv, options=options)


# ----- reading a command back ------------------------------------------------------------------------------------


def _method_of(flags: EngineFlags, value: str | None, speculator: str | None) -> str | None:
    if value is not None:
        for method, names in flags.methods.items():
            if value in names:
                return method
        names = ", ".join(n for v in flags.methods.values() for n in v)
        raise InputError("speculative method", value, f"one of {names}")
    if speculator is None:
        return None
    try:
        spec = get_model(speculator).speculator
    except CatalogError:
        return "draft_model"
    return spec.kind if spec else "draft_model"


def _weight_format(flags: EngineFlags, option: str, value: str | None) -> str | None:
    if value is None:
        return None
    for fmt, mapped in flags.weight_formats.items():
        as_flag = isinstance(mapped, tuple) and mapped == (option, value)
        if as_flag or (isinstance(mapped, dict) and mapped.get("dtype") == value):
            return fmt
    raise InputError(option, value, "a weight format the planner models")


def _kv_of(flags: EngineFlags, value: str | None) -> str:
    if value is None:
        return "auto"
    found = [kv for kv, name in flags.kv_dtypes.items() if name == value]
    if not found:
        raise InputError("kv_cache_dtype", value, f"one of {', '.join(flags.kv_dtypes.values())}")
    return found[0]


def read_engine_command(
    argv: list[str], options: dict | None, engine: str, flags: EngineFlags, release: EngineRelease
) -> LaunchSettings:
    """The settings an engine command sets, parsed with ``release``'s recorded flags (unknown flags are errors)."""
    head = len(flags.program)
    if list(argv[:head]) != list(flags.program):
        raise InputError("launch command", " ".join(argv[:head]), f"a command starting with {' '.join(flags.program)}")
    parser, dests = release_parser(release, positional_model=flags.model_positional)
    ns = parser.parse_args(argv[head:])

    def get(option: str):
        return getattr(ns, dests[option]) if option in dests else None

    family = {"vllm-v0": "vllm"}.get(engine, engine)
    reader = {"vllm": _read_vllm, "sglang": _read_sglang, "trtllm": _read_trtllm}[family]
    fields = reader(get, ns, options or {}, flags)
    missing = [
        name
        for name in ("memory_fraction", "max_model_len", "max_num_seqs", "max_num_batched_tokens")
        if fields.get(name) is None
    ]
    if missing:
        raise InputError("launch command", " ".join(argv[:head]), f"the flags that set {', '.join(missing)}")
    return LaunchSettings(engine=engine, release=release.release, **fields)


def _read_vllm(get, ns, options: dict, flags: EngineFlags) -> dict:
    dtype = _weight_format(flags, "--quantization", get("--quantization")) or _weight_format(
        flags, "--dtype", get("--dtype")
    )
    fields = {
        "target": ns.model_tag,
        "tp": get("--tensor-parallel-size") or 1,
        "pp": get("--pipeline-parallel-size") or 1,
        "dtype": dtype,
        "kv_dtype": _kv_of(flags, get("--kv-cache-dtype")),
        "memory_fraction": get("--gpu-memory-utilization"),
        "max_model_len": get("--max-model-len"),
        "max_num_seqs": get("--max-num-seqs"),
        "max_num_batched_tokens": get("--max-num-batched-tokens"),
        "enforce_eager": bool(get("--enforce-eager")),
    }
    config = get("--speculative-config")
    if isinstance(config, str):
        config = json.loads(config)
    if config:
        speculator = config.get("model")
        fields.update(
            speculator=speculator,
            method=_method_of(flags, config.get("method"), speculator),
            num_speculative_tokens=config.get("num_speculative_tokens"),
            draft_tp=config.get("draft_tensor_parallel_size"),
        )
    elif get("--speculative-model"):
        model = get("--speculative-model")
        speculator = None if model == "[ngram]" else model
        fields.update(
            speculator=speculator,
            method="ngram" if speculator is None else _method_of(flags, None, speculator),
            num_speculative_tokens=get("--num-speculative-tokens"),
            draft_tp=get("--speculative-draft-tensor-parallel-size"),
        )
    return fields


def _read_sglang(get, ns, options: dict, flags: EngineFlags) -> dict:
    dtype = _weight_format(flags, "--quantization", get("--quantization")) or _weight_format(
        flags, "--dtype", get("--dtype")
    )
    tp = get("--tp-size") or 1
    fields = {
        "target": get("--model-path"),
        "tp": tp,
        "pp": get("--pp-size") or 1,
        "dtype": dtype,
        "kv_dtype": _kv_of(flags, get("--kv-cache-dtype")),
        "memory_fraction": get("--mem-fraction-static"),
        "max_model_len": get("--context-length"),
        "max_num_seqs": get("--max-running-requests"),
        "max_num_batched_tokens": get("--chunked-prefill-size"),
        "enforce_eager": bool(get("--disable-cuda-graph")),
    }
    algorithm = get("--speculative-algorithm")
    if algorithm:
        speculator = get("--speculative-draft-model-path")
        method = _method_of(flags, algorithm, speculator)
        fields.update(
            speculator=speculator,
            method=method,
            num_speculative_tokens=get("--speculative-num-steps"),
            draft_tp=None if method == "ngram" else tp,
        )
    return fields


def _read_trtllm(get, ns, options: dict, flags: EngineFlags) -> dict:
    kv = options.get("kv_cache_config") or {}
    dtype = options.get("dtype")
    tp = get("--tp_size") or 1
    fields = {
        "target": ns.model_tag,
        "tp": tp,
        "pp": get("--pp_size") or 1,
        "dtype": _weight_format(flags, "dtype", dtype) if dtype else None,
        "kv_dtype": _kv_of(flags, kv.get("dtype")),
        "memory_fraction": kv.get("free_gpu_memory_fraction", get("--free_gpu_memory_fraction")),
        "max_model_len": get("--max_seq_len"),
        "max_num_seqs": get("--max_batch_size"),
        "max_num_batched_tokens": get("--max_num_tokens"),
    }
    spec = options.get("speculative_config")
    if spec:
        speculator = spec.get("speculative_model")
        method = _method_of(flags, spec.get("decoding_type"), speculator)
        k = spec.get("num_nextn_predict_layers") if method == "mtp" else spec.get("max_draft_len")
        fields.update(
            speculator=speculator, method=method, num_speculative_tokens=k, draft_tp=None if method == "ngram" else tp
        )
    return fields


def options_yaml(options: dict) -> str:
    """TensorRT-LLM's options file as YAML (keys in the order written)."""
    return yaml.safe_dump(options, sort_keys=False)
