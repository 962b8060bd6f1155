"""``python -m ui._server [streamlit options]``: ``streamlit run app.py`` with the pages' modules imported first.

Streamlit runs app.py, and so imports what its pages import, on the first visit: a fresh server's first page
would also pay for importing the planner (its pydantic models, the store's SQLAlchemy, pandas, plotly: one to
two seconds of CPU). This launcher imports every module app.py and the page scripts in ui/ import at their top
level (read from their source, so a new page needs nothing here; ui's own small helpers aside) before the server
listens: the imports are
part of the server's start, and the first page only renders. The catalog's facts of every model are computed
then too (:func:`warm_data`), and what all this loaded is frozen out of the garbage collector's scans
(``planner.interpreter.tune_collector``). Options are ``streamlit run``'s, e.g.
``python -m ui._server --server.port 8501 --server.headless true``.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APP = REPO / "app.py"


def page_imports() -> list[str]:
    """The modules app.py and ui/*.py import at their top level (ui's own helpers aside), in a stable order."""
    names: set[str] = set()
    for path in [APP, *sorted((REPO / "ui").glob("*.py"))]:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
    # ui's own helpers are left to the first run: their st.cache_data functions must be made under the runtime
    return sorted(n for n in names if n != "__future__" and n.split(".")[0] != "ui")


def preload() -> None:
    """Import :func:`page_imports` (a page script itself is never imported: it draws when run)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    for name in page_imports():
        importlib.import_module(name)


def warm_data() -> None:
    """Compute what every visitor's first page reads from the data folder: the catalog's facts of every model
    (remembered by the core, planner/catalog/model_facts.py)."""
    from planner.catalog import list_models, model_facts  # noqa: PLC0415 (after the preload's sys.path)

    for spec in list_models():
        model_facts(spec)


def main(argv: list[str]) -> None:
    preload()
    warm_data()
    from planner.interpreter import tune_collector  # noqa: PLC0415 (after the preload's sys.path)

    tune_collector()  # what start-up loaded stays out of the collector's scans (planner/interpreter.py)
    from streamlit.web import cli  # noqa: PLC0415 (after the preload, as `streamlit run` would import it)

    sys.argv = ["streamlit", "run", str(APP), *argv]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])
