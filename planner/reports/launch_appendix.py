"""The launch configuration as a report appendix: the engine command, its options file and the Kubernetes manifest.

>>> from planner.catalog.lookup import get_model, get_node
>>> from planner.deployment import Deployment
>>> sections = launch_sections(Deployment.on_node(get_model("Llama-3.1-70B"), get_node("1x-h100-sxm-80gb")))
>>> sections[0].title, "does not fit" in sections[0].text
('Appendix: launch configuration', True)
"""

from __future__ import annotations

from planner.deployment import Deployment
from planner.launch import NotLaunchableError, launch_config
from planner.launch.releases import FAMILY
from planner.memory.types import MemoryPlan
from planner.reports.document import Section

TITLE = "Appendix: launch configuration"


def launch_sections(dep: Deployment, plan: MemoryPlan | None = None) -> list[Section]:
    """The appendix sections of ``dep``'s launch, or one section saying why there is no command."""
    if dep.engine not in FAMILY:
        return [Section(title=TITLE, text=f"{dep.engine} has no server command to launch.")]
    try:
        config = launch_config(dep, plan)
    except NotLaunchableError as exc:
        return [Section(title=TITLE, text=f"No launch command: {exc.reason}.")]
    intro = (
        f"Start the planned deployment with {config.engine} {config.release}. Every value comes from the plan; "
        "lines starting '# assumed:' are values the planner filled in."
    )
    if config.kernels_note:
        intro += f" Note: {config.kernels_note}."
    sections = [Section(title=TITLE, text=intro, code=config.command, notes=[f"Flags: {config.release_source}"])]
    if config.options_file:
        sections.append(Section(title=f"Appendix: {config.options_file_name}", code=config.options_file))
    sections.append(Section(title="Appendix: docker run", code=config.docker))
    sections.append(Section(title="Appendix: Kubernetes manifest", code=config.kubernetes))
    return sections
