"""``python -m planner saved list|show|export``: the saved scenarios and quotes of the store, for scripts.

The same store as the app (``PLANNER_DATABASE_URL`` for a team's PostgreSQL, else the SQLite file under the
planner's home). ``export`` writes a saved quote's document as saved (PDF, XLSX, HTML, Markdown or JSON), so
quotes made in batch with ``quote … --save NAME`` come out as customer documents.

>>> import argparse
>>> parser = argparse.ArgumentParser(); register(parser.add_subparsers())
>>> parser.parse_args(["saved", "export", "Q1", "--format", "md"]).format
'md'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from planner.cli.common import add_json_flag, emit, write_report
from planner.errors import InputError
from planner.reports import FORMATS, Report
from planner.validation import list_quotes, list_scenarios, load_quote, load_scenario

KINDS = ("quote", "scenario")


def register(subparsers) -> None:
    parser = subparsers.add_parser("saved", help="list, show and export the saved scenarios and quotes")
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="every saved quote and scenario, by name")
    listing.add_argument("--kind", choices=(*KINDS, "all"), default="all")
    add_json_flag(listing)
    listing.set_defaults(handler=_list)
    show = actions.add_parser("show", help="one saved quote or scenario")
    show.add_argument("name")
    show.add_argument("--kind", choices=KINDS, default="quote")
    add_json_flag(show)
    show.set_defaults(handler=_show)
    export = actions.add_parser("export", help="a saved quote's document as saved")
    export.add_argument("name")
    export.add_argument("--format", choices=FORMATS, default="pdf")
    export.add_argument("--out", metavar="FILE", help="where to write it (default: the quote's name and format)")
    export.set_defaults(handler=_export)


def _list(args: argparse.Namespace) -> int:
    quotes = list_quotes() if args.kind in ("quote", "all") else None
    scenarios = list_scenarios() if args.kind in ("scenario", "all") else None
    rows = [
        {"kind": "quote", "name": q.name, "customer": q.customer, "target": q.scenario.target, "saved_at": q.created_at}
        for q in (quotes.quotes if quotes else [])
    ] + [
        {"kind": "scenario", "name": s.name, "customer": "", "target": s.scenario.target, "saved_at": s.created_at}
        for s in (scenarios.scenarios if scenarios else [])
    ]
    problems = (quotes.problems if quotes else []) + (scenarios.problems if scenarios else [])
    lines = [f"{r['kind']:<9} {r['name']:<40} {r['target']:<36} {r['saved_at']}" for r in rows] or ["nothing saved"]
    emit(args, {"saved": rows, "problems": problems}, lines + [f"  {p}" for p in problems])
    return 0


def _show(args: argparse.Namespace) -> int:
    if args.kind == "quote":
        quote = load_quote(args.name)
        payload = {
            "name": quote.name,
            "customer": quote.customer,
            "prepared_by": quote.prepared_by,
            "notes": quote.notes,
            "saved_at": quote.created_at,
            "scenario": quote.scenario.model_dump(mode="json"),
            "quote": quote.result,
        }
        summary = (quote.result.get("summary") or {}).get("text", "") if isinstance(quote.result, dict) else ""
        lines = [f"quote {quote.name} (saved {quote.created_at})"]
        lines += [f"  customer: {quote.customer}"] if quote.customer else []
        lines += [f"  prepared by: {quote.prepared_by}"] if quote.prepared_by else []
        lines += [f"  notes: {quote.notes}"] if quote.notes else []
        lines += [f"  {summary}"] if summary else []
    else:
        saved = load_scenario(args.name)
        payload = {"name": saved.name, "notes": saved.notes, "saved_at": saved.created_at}
        payload["scenario"] = saved.scenario.model_dump(mode="json")
        lines = [f"scenario {saved.name} (saved {saved.created_at})"]
        lines += [f"  {k}: {v}" for k, v in payload["scenario"].items() if v is not None]
    emit(args, payload, lines)
    return 0


def _export(args: argparse.Namespace) -> int:
    quote = load_quote(args.name)
    default = "quote-" + "".join(c if c.isalnum() else "-" for c in quote.name)[:60] + f".{args.format}"
    out = Path(args.out or default)
    if out.suffix.lstrip(".").lower() != args.format:
        raise InputError("out", str(out)[:100], f"a file ending in .{args.format} (the --format chosen)")
    write_report(Report.from_json(quote.result), out)
    sys.stdout.write(f"wrote {out}\n")
    return 0
