"""From plan to running engine: the launch command and manifests of a deployment, and the deployment a command sets.

``launch_config(dep)`` plans ``dep`` (or takes its plan), refuses with the plan's reason when it does not fit or
would not start, and writes the engine's start command for a recorded release (``data/engine_flags.json``), its
options file (TensorRT-LLM), a ``docker run`` line and a Kubernetes manifest. Every value comes from the plan;
what the planner assumed is said in a comment. ``read_launch_command(text)`` parses a command back (with the
release's recorded flags) into ``LaunchSettings``; ``deployment_from_settings`` turns them into a deployment.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine_version="0.19.0",
...                          max_model_len=8192, max_num_seqs=64)
>>> config = launch_config(dep)
>>> config.command.splitlines()[-1]
'  --max-num-batched-tokens 8192'
>>> read_launch_command(config.command).same_deployment(config.settings)
True
"""

from __future__ import annotations

from typing import Literal

import yaml
from pydantic import BaseModel

from planner.deployment import Deployment
from planner.errors import InputError
from planner.launch.container import docker_run, image_for, kubernetes_objects, manifest_yaml, name_for
from planner.launch.engine_command import (
    OPTIONS_FILE,
    emit_engine_command,
    options_yaml,
    read_engine_command,
)
from planner.launch.quote import quoted_deployment
from planner.launch.releases import (
    FAMILY,
    command_engine,
    engine_env,
    engine_flags,
    engine_for_release,
    engine_from_env,
    release_for,
)
from planner.launch.settings import LaunchSettings, NotLaunchableError, deployment_from_settings, launch_settings
from planner.launch.shell_text import shell_block, split_command, split_env
from planner.memory import plan_memory
from planner.memory.types import MemoryPlan
from planner.speed.kernels.aiconfigurator_tables import kernel_tables

__all__ = [
    "FORMATS",
    "LaunchConfig",
    "LaunchSettings",
    "NotLaunchableError",
    "deployment_from_settings",
    "kernels_note",
    "launch_config",
    "launch_settings",
    "quoted_deployment",
    "read_launch_command",
    "render_launch",
]

LaunchFormat = Literal["vllm", "sglang", "trtllm", "docker", "k8s"]
FORMATS: tuple[str, ...] = ("vllm", "sglang", "trtllm", "docker", "k8s")
_ENGINE_WORDS = {"vllm": "vLLM", "vllm-v0": "vLLM (V0 engine)", "sglang": "SGLang", "trtllm": "TensorRT-LLM"}
#: The flag each engine uses for a planned value, for the comments that say what the planner assumed.
_FLAG_NAMES = {
    "vllm": {
        "memory_fraction": "--gpu-memory-utilization",
        "max_model_len": "--max-model-len",
        "max_num_seqs": "--max-num-seqs",
        "max_num_batched_tokens": "--max-num-batched-tokens",
        "draft_tp": "draft_tensor_parallel_size",
    },
    "sglang": {
        "memory_fraction": "--mem-fraction-static",
        "max_model_len": "--context-length",
        "max_num_seqs": "--max-running-requests",
        "max_num_batched_tokens": "--chunked-prefill-size",
        "draft_tp": "draft TP (= --tp-size)",
    },
    "trtllm": {
        "memory_fraction": "kv_cache_config.free_gpu_memory_fraction",
        "max_model_len": "--max_seq_len",
        "max_num_seqs": "--max_batch_size",
        "max_num_batched_tokens": "--max_num_tokens",
        "draft_tp": "draft TP (= --tp_size)",
    },
}
_WHY = {
    "memory_fraction": "the engine's default as the plan applies it",
    "max_model_len": "the target's context window",
    "max_num_seqs": "the engine's default as the plan applies it",
    "max_num_batched_tokens": "the engine's default as the plan applies it",
    "draft_tp": "the engine's default draft TP",
}


class LaunchConfig(BaseModel):
    """One deployment's launch: the settings, the engine command, its options file, docker and Kubernetes."""

    settings: LaunchSettings
    engine: str
    release: str
    release_source: str
    #: The engine's start command as a shell block (comments on top).
    command: str
    #: TensorRT-LLM's options YAML (the file ``extra_llm_api_options.yaml`` the command names), else None.
    options_file: str | None = None
    options_file_name: str | None = None
    docker: str
    kubernetes: str
    comments: list[str]
    #: Where the planner prices the engine's steps on this GPU from kernels measured with another release of it than
    #: the one launched: that, in words (None where it is the same release, or no measured tables cover them).
    kernels_note: str | None = None


def _comments(dep: Deployment, settings: LaunchSettings, release: str, source: str, note: str | None) -> list[str]:
    family = FAMILY[dep.engine]
    spec = f" + {dep.speculator_name}" if dep.is_speculative else ""
    lines = [
        f"{_ENGINE_WORDS[dep.engine]} launch of {dep.target.id}{spec} on {dep.gpus_per_replica}x {dep.gpu.id} "
        f"(TP {dep.tp}, PP {dep.pp}), written by the Speculative Decoding Capacity Planner from its memory plan",
        f"engine: {dep.engine} {release}",
        f"flags as recorded for this release from {source}",
    ]
    if note:
        lines.append(f"assumed: {note}")
    for name in settings.assumed:
        if name in _FLAG_NAMES[family]:
            value = getattr(settings, name)
            lines.append(f"assumed: {_FLAG_NAMES[family][name]} {value} ({_WHY[name]}; the deployment left it unset)")
    if settings.method is not None:
        lines += [f"assumed: {text}" for text in engine_flags(dep.engine).speculative_assumptions]
    if dep.dtype is None:
        lines.append(f"weights load in the checkpoint's own format ({dep.target_format.id}); no flag sets it")
    return lines


def kernels_note(dep: Deployment, release: str) -> str | None:
    """Where the planner prices ``dep``'s engine on its GPU from kernels measured with a release of the engine other
    than ``release`` (the one launched), that in words; else None. The measured tables are of one release per engine
    (:mod:`planner.speed.kernels`), and another release's kernels may run at another speed."""
    tables = kernel_tables(dep.gpu.id, dep.engine)
    if tables is None or tables.version == release:
        return None
    return (
        f"the planner prices these steps from kernels measured with {tables.engine_name} {tables.version} where its "
        f"tables cover them; {release}'s kernels may run at another speed"
    )


def launch_config(dep: Deployment, plan: MemoryPlan | None = None) -> LaunchConfig:
    """The launch of ``dep`` (``NotLaunchableError`` with the plan's reason when it does not fit or would not start)."""
    if dep.engine not in FAMILY:
        raise NotLaunchableError(f"engine {dep.engine} has no server command (one of {', '.join(FAMILY)})")
    plan = plan if plan is not None else plan_memory(dep, with_suggestions=False)
    flags, release, note = release_for(dep.engine, dep.engine_version)
    settings = launch_settings(dep, plan, release=release.release)
    if dep.engine_version is None:
        settings = settings.model_copy(update={"assumed": tuple(a for a in settings.assumed if a != "release")})
    cmd = emit_engine_command(settings, flags, release)
    comments = _comments(dep, settings, release.release, release.source, note)
    priced = kernels_note(dep, release.release)
    if priced:
        comments.append(f"note: {priced}")
    env = engine_env(dep.engine, release.release)
    if env:
        assignments = " ".join(f"{name}={value}" for name, value in env.items())
        plain = _ENGINE_WORDS[engine_for_release(dep.engine, release.release)]
        comments.append(
            f"environment: {assignments} selects {_ENGINE_WORDS[dep.engine]}; a plain launch of {release.release} "
            f"starts {plain} ({flags.engine_env_source})"
        )
    env_words = [f"{name}={value}" for name, value in env.items()]
    head = len(flags.program) + (1 if flags.model_positional else 0)
    options = options_yaml(cmd.options) if cmd.options is not None else None
    image = image_for(flags, release, dep.engine_version)
    gpus = dep.gpus_per_replica
    cache_bytes = int(1.1 * (plan.per_gpu.target_weights_bytes + plan.per_gpu.draft_weights_bytes) * gpus)
    name = name_for(dep.target.id)
    k8s_notes = [
        *comments,
        f"image {image} ({flags.image_source}); readiness on GET {flags.health_path} ({flags.health_source})",
        f"model cache: a volume of the loaded weights + 10% ({cache_bytes / 2**30:,.0f} GiB); "
        f"/dev/shm: {flags.shm_source}",
    ]
    return LaunchConfig(
        settings=settings,
        engine=dep.engine,
        release=release.release,
        release_source=release.source,
        command=shell_block([*env_words, *cmd.argv], comments, head=head + len(env_words)),
        options_file=(f"# options file: {OPTIONS_FILE}\n" + options) if options else None,
        options_file_name=OPTIONS_FILE if options else None,
        docker="".join(f"# {c}\n" for c in comments) + docker_run(cmd, flags, image, gpus, head, env),
        kubernetes=manifest_yaml(kubernetes_objects(cmd, flags, image, gpus, name, cache_bytes, env), k8s_notes),
        comments=comments,
        kernels_note=priced,
    )


def render_launch(config: LaunchConfig, fmt: str) -> str:
    """The text of one format: the engine command (+ its options file), the docker line, or the manifest."""
    if fmt == "docker":
        return config.docker + "\n"
    if fmt == "k8s":
        return config.kubernetes
    family = FAMILY[config.engine]
    if fmt != family:
        raise InputError("format", fmt, f"{family}, docker or k8s for a {config.engine} deployment")
    text = config.command + "\n"
    if config.options_file:
        text += f"\n# --- {config.options_file_name} ---\n" + config.options_file
    return text


def _engine_of(words: list[str], markers: dict[str, str]) -> tuple[str, str | None]:
    if "engine" in markers:
        engine, _, version = markers["engine"].partition(" ")
        if engine in FAMILY:
            return engine, version or None
    found = command_engine(words)
    if found is None:
        programs = ", ".join(" ".join(engine_flags(e).program) for e in dict.fromkeys(FAMILY.values()))
        raise InputError("launch command", " ".join(words[:3]), f"a command starting with one of: {programs}")
    return found, None


def read_launch_command(
    text: str, *, options_file: str | None = None, engine_version: str | None = None
) -> LaunchSettings:
    """The settings a launch command sets, read with its release's recorded flags (``# engine:`` line or
    ``engine_version``; else the newest recorded release). ``options_file``: TensorRT-LLM's options YAML."""
    words, markers = split_command(text.split("\n# --- ", maxsplit=1)[0])
    env, words = split_env(words)
    if not words:
        raise InputError("launch command", " ".join(env), "the engine's start command after its environment")
    engine, marked = _engine_of(words, markers)
    version = engine_version or marked
    engine = engine_from_env(engine_for_release(engine, version), env)
    flags, release, _ = release_for(engine, version)
    words = [flags.program[0], *words[1:]]  # the interpreter as the record spells it (python, python3)
    if options_file is None and "\n# --- " in text:
        options_file = text.split("\n# --- ", 1)[1].split("\n", 1)[1]
    options = yaml.safe_load(options_file) if options_file else None
    return read_engine_command(words, options, engine, flags, release)
