"""``python -m planner saved list|show|export``: the saved scenarios and quotes of the store, for scripts.

The same store as the app (``PLANNER_DATABASE_URL`` for a team's PostgreSQL, else the SQLite file under the
planner's home). ``export`` writes a saved quote's document as saved (PDF, XLSX, HTML, Markdown or JSON), so
quotes made in batch with ``quote … --save NAME`` come out as customer documents. The CLI acts as this
machine, or as the person ``PLANNER_USER`` names (:func:`planner.cli.common.cli_actor`): it lists their own items and
the team's, each with its owner and visibility; ``--owner ID`` picks a teammate's item of a shared name, and
every export is recorded in the item's history.

>>> import argparse
>>> parser = argparse.ArgumentParser(); register(parser.add_subparsers())
>>> parser.parse_args(["saved", "export", "Q1", "--format", "md"]).format
'md'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from planner.cli.common import add_json_flag, cli_actor, emit, write_report
from planner.errors import InputError
from planner.reports import FORMATS, Report
from planner.validation import list_quotes, list_scenarios, load_quote, load_scenario, record_export

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
    show.add_argument("--owner", metavar="ID", help="a teammate's item of that name (their owner_id)")
    add_json_flag(show)
    show.set_defaults(handler=_show)
    export = actions.add_parser("export", help="a saved quote's document as saved")
    export.add_argument("name")
    export.add_argument("--format", choices=FORMATS, default="pdf")
    export.add_argument("--out", metavar="FILE", help="where to write it (default: the quote's name and format)")
    export.add_argument("--owner", metavar="ID", help="a teammate's quote of that name (their owner_id)")
    export.set_defaults(handler=_export)


def _owner(item, actor) -> dict:
    return {
        "owner_id": item.owner_id,
        "owner": item.owner_name,
        "visibility": item.visibility,
        "changed_at": item.changed_at,
        "changed_by": item.changed_by,
        "version": item.version,
        "yours": item.owned_by(actor),
    }


def _list(args: argparse.Namespace) -> int:
    actor = cli_actor()
    quotes = list_quotes(actor=actor) if args.kind in ("quote", "all") else None
    scenarios = list_scenarios(actor=actor) if args.kind in ("scenario", "all") else None
    rows = [
        {"kind": "quote", "name": q.name, "customer": q.customer, "target": q.scenario.target, "saved_at": q.created_at}
        | _owner(q, actor)
        for q in (quotes.quotes if quotes else [])
    ] + [
        {"kind": "scenario", "name": s.name, "customer": "", "target": s.scenario.target, "saved_at": s.created_at}
        | _owner(s, actor)
        for s in (scenarios.scenarios if scenarios else [])
    ]
    problems = (quotes.problems if quotes else []) + (scenarios.problems if scenarios else [])
    lines = [
        f"{r['kind']:<9} {r['name']:<40} {r['target']:<36} {r['saved_at']}  "
        f"{'you' if r['yours'] else r['owner']} ({r['visibility']})"
        for r in rows
    ] or ["nothing saved"]
    emit(args, {"saved": rows, "problems": problems}, lines + [f"  {p}" for p in problems])
    return 0


def _show(args: argparse.Namespace) -> int:
    if args.kind == "quote":
        quote = load_quote(args.name, actor=cli_actor(), owner_id=args.owner)
        payload = {
            "name": quote.name,
            "customer": quote.customer,
            "prepared_by": quote.prepared_by,
            "notes": quote.notes,
            "saved_at": quote.created_at,
            "scenario": quote.scenario.model_dump(mode="json"),
            "quote": quote.result,
        } | _owner(quote, cli_actor())
        summary = (quote.result.get("summary") or {}).get("text", "") if isinstance(quote.result, dict) else ""
        lines = [f"quote {quote.name} (saved {quote.created_at}; owner {quote.owner_name}, {quote.visibility})"]
        lines += [f"  customer: {quote.customer}"] if quote.customer else []
        lines += [f"  prepared by: {quote.prepared_by}"] if quote.prepared_by else []
        lines += [f"  notes: {quote.notes}"] if quote.notes else []
        lines += [f"  {summary}"] if summary else []
    else:
        saved = load_scenario(args.name, actor=cli_actor(), owner_id=args.owner)
        payload = {"name": saved.name, "notes": saved.notes, "saved_at": saved.created_at} | _owner(saved, cli_actor())
        payload["scenario"] = saved.scenario.model_dump(mode="json")
        lines = [f"scenario {saved.name} (saved {saved.created_at}; owner {saved.owner_name}, {saved.visibility})"]
        lines += [f"  {k}: {v}" for k, v in payload["scenario"].items() if v is not None]
    emit(args, payload, lines)
    return 0


def _export(args: argparse.Namespace) -> int:
    actor = cli_actor()
    quote = load_quote(args.name, actor=actor, owner_id=args.owner)
    default = "quote-" + "".join(c if c.isalnum() else "-" for c in quote.name)[:60] + f".{args.format}"
    out = Path(args.out or default)
    if out.suffix.lstrip(".").lower() != args.format:
        raise InputError("out", str(out)[:100], f"a file ending in .{args.format} (the --format chosen)")
    write_report(Report.from_json(quote.result), out)
    record_export("quote", quote.id, args.format, actor=actor)
    sys.stdout.write(f"wrote {out}\n")
    return 0
