"""One self-contained HTML page for a campaign: its numbers, and each bug's run as a timeline.

Nothing is fetched: styles and the one small script are inline, and a
content security policy allows only them (the script by its hash), so text
from the program, escaped everywhere, could not run even if it tried.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape
from pathlib import Path

from dnsse.report.console import inputs_line, printed_lines, shell_path, short_target
from dnsse.report.race import find_race
from dnsse.report.story import Story
from dnsse.report.story_text import story_lines
from dnsse.report.timeline import timeline_svg

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px; color: #1d2433; background: #fafbfc; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
code, pre, .mono { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12.5px; }
pre { background: #fff; border: 1px solid #dde2ea; border-radius: 6px; padding: 10px; overflow-x: auto; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin: 14px 0; }
.card { background: #fff; border: 1px solid #dde2ea; border-radius: 8px; padding: 10px 16px; min-width: 120px; }
.card b { display: block; font-size: 20px; } .bad b { color: #c62828; } .good b { color: #2e7d32; }
table { border-collapse: collapse; background: #fff; } td, th { border: 1px solid #dde2ea; padding: 4px 10px; text-align: left; }
.bug { border-left: 4px solid #c62828; padding-left: 14px; margin-top: 18px; }
.scroll { overflow-x: auto; background: #fff; border: 1px solid #dde2ea; border-radius: 6px; }
.lane-bg { fill: #f3f5f9; } .lane:nth-child(odd) .lane-bg { fill: #eef1f6; }
.lane-label { font: 12px ui-monospace, monospace; fill: #1d2433; } .axis { font: 11px sans-serif; fill: #6b7280; }
.step { fill: #cbd5e1; } .step.collective { fill: #3b82f6; } .step.message { fill: #10b981; }
.step.call { fill: #8b5cf6; } .step.sync { fill: #f59e0b; } .step.memory { fill: #94a3b8; }
.step.async { fill: #60a5fa; opacity: .7; } .step.switch { stroke: #ea580c; stroke-width: 2; }
.step.failing { fill: #dc2626; stroke: #7f1d1d; stroke-width: 2; } .failing-mark { fill: #dc2626; font-weight: bold; }
.arrow { stroke: #334155; stroke-width: 1.2; opacity: .55; } .arrow.message { stroke: #059669; opacity: .9; }
.arrow.call { stroke: #7c3aed; opacity: .9; } .head { fill: #334155; }
.arrow.race { stroke: #dc2626; stroke-width: 2.5; opacity: 1; stroke-dasharray: 5 3; } .race-head { fill: #dc2626; }
.step[data-decisive] { stroke: #dc2626; stroke-width: 2.5; }
.what-went-wrong { background: #fff5f5; border: 1px solid #f1c0c0; border-radius: 6px; padding: 10px; }
.what-went-wrong ol { margin: 6px 0 0; padding-left: 22px; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.legend span { display: inline-block; margin-right: 14px; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
"""

# Once laid out, the page logs what a browser test checks: the lanes and race arrows it drew, and how many
# blocks of text are wider than their box (clipped, or spilling out of it).
SCRIPT = (
    "document.addEventListener('DOMContentLoaded', function () {"
    " var lanes = document.querySelectorAll('svg.timeline .lane').length;"
    " var races = document.querySelectorAll('svg.timeline line.arrow.race').length;"
    " var clipped = Array.prototype.filter.call(document.querySelectorAll('p, pre, li, td, th, .what-went-wrong'),"
    " function (box) { return box.scrollWidth > box.clientWidth + 1; }).length;"
    " document.body.setAttribute('data-lanes', String(lanes));"
    " console.log('dnsse report: ' + lanes + ' lanes, ' + races + ' race arrows, ' + clipped + ' clipped');"
    "});"
)

LEGEND = (
    ("collective", "#3b82f6"), ("message", "#10b981"), ("call", "#8b5cf6"), ("sync", "#f59e0b"),
    ("shared memory", "#94a3b8"), ("async transfer", "#60a5fa"), ("start, wait", "#cbd5e1"),
    ("failing step", "#dc2626"), ("what went wrong (dashed red arrow)", "#fff5f5"),
)


def html_page(summary: dict, stories: list[Story | None]) -> str:
    """The page for a campaign ``summary`` (the JSON report, with seed and contributions) and its bugs' stories."""
    script_hash = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    policy = f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-{script_hash}'"
    bugs = summary.get("bugs", [])
    title = f"dnsse: {short_target(str(summary.get('target', '?')))}"
    body = [
        f"<h1>{escape(title)}</h1>",
        f"<div>{escape(str(summary.get('framework', '?')))} · strategy {escape(str(summary.get('strategy', '?')))}"
        f" · seed {escape(str(summary.get('seed', '?')))}</div>",
        _cards(summary),
        _contributions(summary),
    ]
    for number, (bug, story) in enumerate(zip(bugs, stories), start=1):
        body.append(_bug_section(number, bug, story))
    if not bugs:
        body.append("<h2>No bug found</h2>")
        if summary.get("verified"):
            body.append(f"<p>Verified: {escape(str(summary['verified'].get('covers', summary['verified'])))}</p>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f'<meta http-equiv="Content-Security-Policy" content="{escape(policy, quote=False)}">'
        f"<title>{escape(title)}</title><style>{STYLE}</style><script>{SCRIPT}</script></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


def _cards(summary: dict) -> str:
    executions = summary.get("executions", 0)
    elapsed = summary.get("elapsed_s", 0) or 0
    coverage = summary.get("coverage")
    bugs = len(summary.get("bugs", []))
    cards = [
        ("executions", str(executions), ""),
        ("executions/s", f"{executions / elapsed:.0f}" if elapsed else "-", ""),
        ("elapsed", f"{elapsed:.2f}s", ""),
        ("branch coverage", _coverage_shown(coverage), ""),
        ("bugs", str(bugs), "bad" if bugs else "good"),
    ]
    return '<div class="cards">' + "".join(
        f'<div class="card {css}"><b>{escape(value)}</b>{escape(name)}</div>' for name, value, css in cards
    ) + "</div>"


def _coverage_shown(coverage: dict | None) -> str:
    """The report's coverage: a file with no branches shows n/a, not 100%."""
    if not coverage:
        return "not measured"
    return "n/a" if coverage["branches_total"] == 0 else f"{coverage['percent']}%"


def _contributions(summary: dict) -> str:
    rows = summary.get("contributions") or []
    if not rows:
        return ""
    cells = "".join(
        f"<tr><td>{escape(str(row['strategy']))}</td><td>{row['executions']}</td><td>{row['bugs']}</td>"
        f"<td>{escape(str(row.get('first_bug_execution') or '-'))}</td>"
        f"<td>{escape(str(row.get('branches_covered', '-')))}</td></tr>"
        for row in rows
    )
    return (
        "<h2>What each strategy contributed</h2><table><tr><th>strategy</th><th>executions</th><th>bugs</th>"
        f"<th>first bug in execution</th><th>branches it covered</th></tr>{cells}</table>"
    )


def _bug_section(number: int, bug: dict, story: Story | None) -> str:
    parts = [
        '<section class="bug">',
        f"<h2>Bug {number}: {escape(bug['kind'])}</h2>",
        f"<p>{escape(bug['message'])}</p>",
        f"<p>Found in execution {escape(str(bug.get('execution')))}. Replay it: "
        f"<code>dnsse replay {escape(shell_path_text(bug.get('trace', '')))}</code></p>",
    ]
    if bug.get("details"):
        parts.append("<pre>" + escape("\n".join(bug["details"])) + "</pre>")
    if story is None:
        parts.append("<p>The run could not be replayed to draw it.</p></section>")
        return "\n".join(parts)
    inputs = story.trace.inputs
    parts.append(
        "<h3>Inputs</h3>" + (f"<p><code>{escape(inputs_line(inputs))}</code></p>" if inputs else "<p>none</p>")
    )
    parts.append(
        f"<h3>The run, one lane per agent ({len(story.steps)} steps)</h3>"
        '<div class="legend">'
        + "".join(f'<span><i class="swatch" style="background:{colour}"></i>{name}</span>' for name, colour in LEGEND)
        + "</div>"
    )
    race = find_race(story)
    if race is not None:
        steps = "".join(
            f"<li><b>step {step.step}</b> {escape(step.agent)}: {escape(step.detail)}"
            + (f" at <code>{escape(step.location)}</code>" if step.location else "") + "</li>"
            for step in race.steps
        )
        parts.append(
            f'<div class="what-went-wrong"><b>What went wrong:</b> {escape(race.sentence)}<ol>{steps}</ol></div>'
        )
    parts.append(f'<div class="scroll">{timeline_svg(story)}</div>')
    # The terminal's pause sign (U+23F8) is missing from common monospace fonts: the page shows "‖" instead.
    told = "\n".join(story_lines(story)).replace("\u23f8", "\u2016")
    parts.append("<h3>How it happens</h3><pre>" + escape(told) + "</pre>")
    parts.append("<h3>Output</h3><pre>" + escape("\n".join(printed_lines(story, limit=None))) + "</pre>")
    parts.append("</section>")
    return "\n".join(parts)


def shell_path_text(path: str) -> str:
    return shell_path(Path(path)) if path else "?"
