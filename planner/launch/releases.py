"""The flags each recorded engine release accepts (``data/engine_flags.json``), and which release a plan launches on.

A launch command is written for a recorded release only: the requested release itself, else the nearest recorded
release below it (said in a note), so a flag a release does not know is never emitted.

The flags are the program's (vLLM V0 and V1 share ``vllm serve``): a plan is written with the flags of the recorded
release it names, or the nearest below, among the releases the planner profiles for that program. A round trip reads a
command back as the engine its plain launch starts: vLLM from 0.8 starts V1 (``vllm``) unless the plan needs V0.

>>> flags, release, note = release_for("vllm", "0.8.2")
>>> release.knows("--speculative-config"), release.knows("--speculative-model")
(True, True)
>>> release_for("vllm", "0.8.3")[1].knows("--speculative-model")  # removed in 0.8.3
False
>>> release_for("vllm", None)[1].release  # the newest recorded V1 release
'0.34.0'
>>> [r.release for r in recorded_releases("vllm-v0")]  # releases whose plain launch starts the V0 engine
['0.6.6.post1', '0.7.3']
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from planner.engines.profiles import list_engine_profiles
from planner.engines.versions import parse_version
from planner.errors import CatalogError, InputError, first_pydantic_error
from planner.facts import data_cache, read_data_file

FlagType = Literal["int", "float", "str", "bool", "json"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FlagSpec(_Strict):
    """One argument definition: its option strings, value type, literal choices and line in the release's source."""

    options: tuple[str, ...]
    type: FlagType
    choices: tuple[str, ...] | None = None
    line: int | None = None


class OptionsFileKeys(_Strict):
    source: str
    keys: dict[str, str]


class EngineRelease(_Strict):
    release: str
    source: str
    note: str = ""
    flags: tuple[FlagSpec, ...]
    speculative_config_keys: tuple[str, ...] | None = None
    speculative_config_methods: tuple[str, ...] | None = None
    options_file_keys: OptionsFileKeys | None = None

    def find(self, option: str) -> FlagSpec | None:
        """The definition that accepts ``option`` (any of its spellings), or None."""
        return next((flag for flag in self.flags if option in flag.options), None)

    def knows(self, option: str) -> bool:
        return self.find(option) is not None

    def source_of(self, option: str) -> str:
        """The URL of ``option``'s definition, to the line where the release's record has it."""
        flag = self.find(option)
        return f"{self.source}#L{flag.line}" if flag and flag.line else self.source

    @property
    def version(self) -> tuple[int, int, int]:
        return parse_version(self.release) if self.release[:1].isdigit() else (0, 0, 0)


class EngineFlags(_Strict):
    """How one engine is started, and its recorded releases (oldest first)."""

    program: tuple[str, ...]
    model_positional: bool
    program_source: str
    image: str
    image_source: str
    port: int
    port_flag: str | None = None
    host_flag: str | None = None
    health_path: str
    health_source: str
    shm_size: str | None
    shm_source: str
    options_file_flag: str | None = None
    weight_formats: dict[str, tuple[str, str] | dict[str, str]]
    kv_dtypes: dict[str, str]
    methods: dict[str, tuple[str, ...]]
    methods_source: str
    #: Values every speculative command of this engine sets that the plan does not hold (said in a comment).
    speculative_assumptions: tuple[str, ...] = ()
    #: The environment that starts an engine id where the release's plain launch starts another (vLLM V0 from 0.8).
    engine_env: dict[str, dict[str, str]] = {}
    engine_env_source: str = ""
    releases: tuple[EngineRelease, ...]


#: The planner's engine ids, to the command-line family that starts them (vLLM's V0 and V1 share ``vllm serve``).
FAMILY: dict[str, str] = {"vllm": "vllm", "vllm-v0": "vllm", "sglang": "sglang", "trtllm": "trtllm"}


@data_cache
def _engine_flags() -> dict[str, EngineFlags]:
    raw = read_data_file("engine_flags.json")
    try:
        return {name: EngineFlags.model_validate(entry) for name, entry in raw["engines"].items()}
    except ValidationError as exc:
        raise CatalogError(f"engine_flags.json: {first_pydantic_error(exc)}") from exc


def engine_flags(engine: str) -> EngineFlags:
    """The recorded command line of ``engine`` (an id of ``planner.deployment.ENGINES``)."""
    family = FAMILY.get(engine)
    if family is None:
        raise InputError("engine", engine, f"one with a launch command: {', '.join(FAMILY)}")
    return _engine_flags()[family]


def _ranges(engine: str) -> list[tuple[tuple[int, int, int], tuple[int, int, int]]]:
    return [
        (parse_version(p.min_version), parse_version(p.max_version))
        for p in list_engine_profiles()
        if p.engine == engine
    ]


def _launches(engine: str, version: tuple[int, int, int]) -> bool:
    """A plain launch of ``engine``'s program at ``version`` starts ``engine``: a release the planner profiles for it,
    and not one where a later engine of the same program is the default (vLLM V1 from 0.8 over V0)."""
    if not any(low <= version < high for low, high in _ranges(engine)):
        return False
    mine = min(low for low, _ in _ranges(engine))
    return not any(
        other != engine and FAMILY[other] == FAMILY[engine] and low > mine and low <= version < high
        for other in FAMILY
        for low, high in _ranges(other)
    )


def recorded_releases(engine: str) -> tuple[EngineRelease, ...]:
    """The recorded releases whose plain launch starts ``engine`` (vLLM before 0.8 is the V0 engine ``vllm-v0``)."""
    return tuple(r for r in engine_flags(engine).releases if r.version == (0, 0, 0) or _launches(engine, r.version))


def _program_releases(engine: str) -> tuple[EngineRelease, ...]:
    """The recorded releases of ``engine``'s program that the planner profiles for any engine it starts."""
    return tuple(
        r
        for r in engine_flags(engine).releases
        if r.version == (0, 0, 0)
        or any(
            low <= r.version < high
            for other in FAMILY
            if FAMILY[other] == FAMILY[engine]
            for low, high in _ranges(other)
        )
    )


def engine_for_release(engine: str, version: str | None) -> str:
    """The engine id of ``engine``'s command family whose releases include ``version`` (vLLM 0.9.2 is ``vllm-v0``)."""
    if version is None or not version[:1].isdigit():  # a source record stands for every release
        return engine
    wanted = parse_version(version)
    for candidate, family in FAMILY.items():
        if family == FAMILY.get(engine) and _launches(candidate, wanted):
            return candidate
    return engine


def engine_env(engine: str, release: str) -> dict[str, str]:
    """The environment a launch of ``engine`` at ``release`` needs to start ``engine`` rather than the engine the
    release's plain launch starts (empty where the plain launch starts it).

    >>> engine_env("vllm-v0", "0.9.2"), engine_env("vllm-v0", "0.7.3"), engine_env("vllm", "0.9.2")
    ({'VLLM_USE_V1': '0'}, {}, {})
    """
    if engine_for_release(engine, release) == engine:
        return {}
    env = engine_flags(engine).engine_env.get(engine)
    if env is None:
        raise InputError("engine_version", release, f"a release whose plain launch starts {engine}")
    return dict(env)


def engine_from_env(engine: str, env: dict[str, str]) -> str:
    """The engine id a command's environment selects within ``engine``'s program (``engine`` when none does).

    >>> engine_from_env("vllm", {"VLLM_USE_V1": "0"}), engine_from_env("vllm", {})
    ('vllm-v0', 'vllm')
    """
    for candidate, wanted in engine_flags(engine).engine_env.items():
        if wanted and all(env.get(name) == value for name, value in wanted.items()):
            return candidate
    return engine


_PYTHON = re.compile(r"^python(3(\.\d+)?)?$")


def command_engine(words: list[str]) -> str | None:
    """The engine family whose program starts ``words`` (``python`` and ``python3`` are the same interpreter)."""
    for family in dict.fromkeys(FAMILY.values()):
        program = list(_engine_flags()[family].program)
        head = list(words[: len(program)])
        if head and _PYTHON.match(head[0]) and _PYTHON.match(program[0]):
            head[0] = program[0]
        if head == program:
            return family
    return None


def release_for(engine: str, version: str | None) -> tuple[EngineFlags, EngineRelease, str | None]:
    """The recorded release a command for ``engine`` at ``version`` is written for, and a note when it is not
    ``version`` itself (None: the newest recorded release)."""
    flags = engine_flags(engine)
    releases = recorded_releases(engine)
    unversioned = [r for r in releases if r.version == (0, 0, 0)]
    if unversioned:  # one source record stands for every release (TensorRT-LLM)
        return flags, unversioned[-1], unversioned[-1].note or None
    if version is None:
        newest = releases[-1]
        return flags, newest, f"release {newest.release}: the newest recorded {engine} release (none was chosen)"
    wanted = parse_version(version)
    releases = _program_releases(engine)
    exact = [r for r in releases if r.version == wanted]
    if exact:
        return flags, exact[-1], None
    below = [r for r in releases if r.version <= wanted]
    if not below:
        names = ", ".join(r.release for r in releases)
        raise InputError("engine_version", version, f"a release with recorded flags for {engine}: {names} or later")
    return flags, below[-1], f"flags as recorded for {below[-1].release}, the nearest recorded release below {version}"
