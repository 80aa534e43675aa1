"""Room: view. Owns the HTML page of a session; may import view.model.

One self-contained HTML page of a session: the seed's n_k chart (inline SVG), the call table
and the timeline. Nothing is loaded from the network: CSS and the little JS (search) are inline.

Owns: rendering a `SessionView` to HTML. Imports only view.model. Every piece of transcript text
is escaped; long texts are cut with an expander, so a 10,000-message session stays light (the
DOM grows linearly, and the search script walks it once per query).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator

from .model import Event, SessionView

PREVIEW_CHARS = 1500  # a result longer than this shows its start, the rest behind an expander

CSS = """
:root{--bg:#fff;--fg:#1d2330;--mut:#667085;--line:#e4e7ec;--unc:#4e79a7;--rd:#59a14f;--wr:#f28e2b;
--out:#b07aa1;--err:#d92d20;--cost:#111}
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:var(--fg);background:var(--bg);
margin:0 auto;max-width:1200px;padding:16px 24px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:24px 0 8px}
.meta{display:flex;flex-wrap:wrap;gap:8px 20px;margin:8px 0 4px}.meta div{white-space:nowrap}
.meta b{font-weight:600}.mut{color:var(--mut)}.warn{color:#b54708}
svg text{font:11px system-ui,sans-serif;fill:var(--mut)}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:10px;height:10px;
margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;font-size:12.5px}th,td{padding:3px 6px;border-bottom:1px solid var(--line);
text-align:right;white-space:nowrap}th{position:sticky;top:0;background:#f9fafb}td.l,th.l{text-align:left;
white-space:normal}tr:target{background:#fff7d6}
.ev{border-left:3px solid var(--line);padding:2px 10px;margin:4px 0}.ev.prompt{border-color:#2e90fa}
.ev.tool_use{border-color:#7f56d9}.ev.tool_result{border-color:#12b76a}.ev.err{border-color:var(--err)}
.ev.err>.h,.ev.err summary{color:var(--err)}.ev.compact{border-color:#f79009;background:#fffaeb}
.ev .h{font-weight:600}.tag{font-size:11px;border-radius:8px;padding:0 6px;margin-left:6px;background:#f2f4f7;color:#344054}
.tag.denied,.tag.interrupted{background:#fee4e2;color:#b42318}.tag.cut{background:#fef0c7;color:#93370d}
pre{white-space:pre-wrap;word-break:break-word;margin:2px 0;font:12px/1.4 ui-monospace,Menlo,monospace}
details>summary{cursor:pointer}.sub{margin-left:18px;border-left:2px dashed #d0d5dd;padding-left:10px}
#q{width:320px;padding:4px 8px}.hide{display:none}a.k{color:inherit}
"""

SCRIPT = """
const q=document.getElementById('q'),evs=[...document.querySelectorAll('.ev')],n=document.getElementById('qn');
q.addEventListener('input',()=>{const s=q.value.toLowerCase();let c=0;
for(const e of evs){const hit=!s||e.textContent.toLowerCase().includes(s);e.classList.toggle('hide',!hit);
if(hit&&s){c++;for(const d of e.querySelectorAll('details'))d.open=true}}n.textContent=s?c+' match'+(c==1?'':'es'):''});
const m=location.hash.match(/^#search=(.*)$/);if(m){q.value=decodeURIComponent(m[1]);q.dispatchEvent(new Event('input'))}
document.body.dataset.ready='1';
"""


def esc(s: object) -> str:
    return html.escape(str(s), quote=True)


def _fmt_cost(v: float | None) -> str:
    return "—" if v is None else f"${v:,.4f}"


def _fmt_ms(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v / 1000:,.2f} s" if v >= 1000 else f"{v:,.0f} ms"


def render(view: SessionView, title: str | None = None) -> str:
    """The whole page as one string."""
    parts: list[str] = [
        "<!doctype html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width,initial-scale=1'>",
        f"<title>{esc(title or 'session ' + view.session_id)}</title><style>{CSS}</style></head><body>",
    ]
    parts += _header(view, title)
    parts.append("<h2>Input tokens per call (n<sub>k</sub>)</h2>")
    parts.append(chart(view))
    parts.append("<h2>Calls</h2>")
    parts += _table(view)
    parts.append("<h2>Timeline</h2><p><input id=q type=search placeholder='search the transcript' "
                 "aria-label=search> <span id=qn class=mut></span></p><div id=timeline>")
    parts += _timeline(view, view.events)
    parts.append(f"</div><script>{SCRIPT}</script></body></html>")
    return "".join(parts)


def _header(v: SessionView, title: str | None) -> list[str]:
    calls = len(v.calls)
    hit = v.cache_hit_rate
    peak = v.peak_n
    items = [
        ("source", "Claude Code transcript" if v.source == "claude-code" else "loopwright session"),
        ("model", ", ".join(v.models) or "—"),
        ("result", v.subtype or "—"),
        ("tool-use turns T", v.tool_use_turns),
        ("model calls", calls),
        ("total cost", _fmt_cost(v.cost if calls or v.total_cost_usd is not None else None)),
        ("duration", _fmt_ms(v.duration_ms)),
        ("cache hit rate", "—" if hit is None else f"{hit:.0%}"),
        ("window W", f"{v.window:,}" if v.window else "unknown"),
        ("peak n_k", f"{peak:,}" + (f" ({peak / v.window:.1%} of W)" if v.window else "")),
    ]
    left = v.forecast_calls_left()
    if left is not None:
        items.append(("forecast", f"{left:,} more calls before W at the observed growth"))
    out = [f"<h1>{esc(title or 'Session ' + v.session_id)}</h1><div class=mut>{esc(v.path)}</div><div class=meta>"]
    out += [f"<div><span class=mut>{esc(k)}</span> <b>{esc(val)}</b></div>" for k, val in items]
    out.append("</div>")
    for w in v.warnings:
        out.append(f"<div class=warn>⚠ {esc(w)}</div>")
    return out


def chart(v: SessionView, width: int = 1100, height: int = 300) -> str:
    """Stacked bars of n_k (uncached / cache read / cache write) and the output tokens, the
    cumulative cost as a line, W as a horizontal line, compactions marked. One <g class=bar>
    per call with a <title> of its exact figures."""
    calls = v.calls
    if not calls:
        return "<p class=mut>No model calls in this transcript.</p>"
    left, right, top, bottom = 64, 64, 10, 28
    pw, ph = width - left - right, height - top - bottom
    peak = max(max(c.n + c.output_tokens for c in calls), 1)
    ymax = max(peak, v.window or 0) if v.window and v.window <= peak * 4 else peak
    ymax = int(ymax * 1.08) or 1
    step = pw / len(calls)
    bw = max(1.0, step * 0.8)

    def y(t: float) -> float:
        return top + ph - ph * t / ymax

    out = [f"<svg id=chart width={width} height={height} viewBox='0 0 {width} {height}' role=img "
           f"aria-label='input tokens per model call'>"]
    for i in range(5):  # y grid
        t = ymax * i / 4
        out.append(f"<line x1={left} x2={left + pw} y1={y(t):.1f} y2={y(t):.1f} stroke='#eee'/>"
                   f"<text x={left - 6} y={y(t) + 4:.1f} text-anchor=end>{_short_num(t)}</text>")
    total_cost, cum = 0.0, []
    for i, c in enumerate(calls):
        x = left + i * step + (step - bw) / 2
        total_cost += c.cost_usd or 0.0
        cum.append(total_cost)
        segs = [(c.input_tokens, "var(--unc)"), (c.cache_read, "var(--rd)"), (c.cache_write, "var(--wr)"),
                (c.output_tokens, "var(--out)")]
        base = 0
        g = [f"<g class=bar data-k={c.k} data-n={c.n}><title>{esc(_tip(v, i))}</title>"]
        for val, color in segs:
            if val:
                g.append(f"<rect x={x:.2f} y={y(base + val):.2f} width={bw:.2f} height={ph * val / ymax:.2f} "
                         f"fill='{color}'/>")
                base += val
        if not base:  # a call with no usage recorded still gets its (empty) bar
            g.append(f"<rect x={x:.2f} y={y(0) - 1:.2f} width={bw:.2f} height=1 fill='#ccc'/>")
        g.append("</g>")
        out.append("".join(g))
        if c.after_compaction:
            out.append(f"<line x1={x - 1:.1f} x2={x - 1:.1f} y1={top} y2={top + ph} stroke='#f79009' "
                       f"stroke-dasharray='4 3'><title>compaction before call {c.k}</title></line>")
    if v.window and v.window <= ymax:
        out.append(f"<line x1={left} x2={left + pw} y1={y(v.window):.1f} y2={y(v.window):.1f} stroke='var(--err)' "
                   f"stroke-dasharray='6 4'/><text x={left + 4} y={y(v.window) - 4:.1f} style='fill:var(--err)'>"
                   f"W = {v.window:,}</text>")
    if total_cost > 0:  # the cumulative cost on its own axis (right)
        pts = " ".join(f"{left + i * step + step / 2:.1f},{top + ph - ph * cc / (total_cost * 1.08):.1f}"
                       for i, cc in enumerate(cum))
        out.append(f"<polyline class=cost points='{pts}' fill=none stroke='var(--cost)' stroke-width=1.5/>")
        ty = top + ph - ph / 1.08
        out.append(f"<line x1={left + pw} x2={left + pw + 4} y1={ty:.1f} y2={ty:.1f} stroke='var(--cost)'/>"
                   f"<text x={left + pw + 6} y={ty + 4:.1f} style='fill:var(--cost)'>{esc(_fmt_cost(total_cost))}</text>"
                   f"<text x={left + pw + 6} y={top + ph:.1f} style='fill:var(--cost)'>$0</text>")
    label_every = max(1, len(calls) // 20)
    for i in range(0, len(calls), label_every):
        out.append(f"<text x={left + i * step + step / 2:.1f} y={height - 10} text-anchor=middle>{calls[i].k}</text>")
    out.append("</svg>")
    legend = ("<div class=legend><span><i class=sw style='background:var(--unc)'></i>uncached input</span>"
              "<span><i class=sw style='background:var(--rd)'></i>cache read</span>"
              "<span><i class=sw style='background:var(--wr)'></i>cache write</span>"
              "<span><i class=sw style='background:var(--out)'></i>output</span>"
              "<span><i class=sw style='background:var(--cost);height:2px'></i>cumulative cost</span>"
              "<span><i class=sw style='background:var(--err);height:2px'></i>window W</span></div>")
    return "".join(out) + legend


def _short_num(t: float) -> str:
    if t >= 1e6:
        return f"{t / 1e6:.1f}M"
    return f"{t / 1e3:.0f}k" if t >= 1e3 else f"{t:.0f}"


def _tip(v: SessionView, i: int) -> str:
    c = v.calls[i]
    g = v.growth(i)
    return (f"call {c.k}: n_k = {c.n:,} (uncached {c.input_tokens:,}, cache read {c.cache_read:,}, "
            f"cache write {c.cache_write:,})" + ("" if g is None else f", growth {g:+,}")
            + f", output {c.output_tokens:,}, cost {_fmt_cost(c.cost_usd)}")


def _table(v: SessionView) -> list[str]:
    out = ["<table id=calls><thead><tr><th>#</th><th>n_k</th><th>growth a+r</th><th>output</th>"
           "<th>cache read</th><th>cache write</th><th>cost</th><th>latency</th><th class=l>stop</th>"
           "<th class=l>tools</th><th class=l>model</th></tr></thead><tbody>"]
    for i, c in enumerate(v.calls):
        g = v.growth(i)
        grow = "compacted" if c.after_compaction else ("—" if g is None else f"{g:+,}")
        out.append(f"<tr id=call-{c.k}><td><a class=k href='#call-{c.k}'>{c.k}</a></td><td>{c.n:,}</td>"
                   f"<td>{grow}</td><td>{c.output_tokens:,}</td><td>{c.cache_read:,}</td><td>{c.cache_write:,}</td>"
                   f"<td>{_fmt_cost(c.cost_usd)}</td><td>{_fmt_ms(c.latency_ms)}</td><td class=l>{esc(c.stop_reason or '')}"
                   f"</td><td class=l>{esc(', '.join(c.tools))}</td><td class=l>{esc(c.model)}</td></tr>")
    out.append("</tbody></table>")
    return out


def _body(text: str) -> str:
    if len(text) <= PREVIEW_CHARS:
        return f"<pre>{esc(text)}</pre>"
    return (f"<pre>{esc(text[:PREVIEW_CHARS])}</pre><details><summary class=mut>show all "
            f"{len(text):,} characters</summary><pre>{esc(text[PREVIEW_CHARS:])}</pre></details>")


def _timeline(view: SessionView, events: list[Event]) -> Iterator[str]:
    seen_call: set[int] = set()
    raw: list[Event] = []  # consecutive entries shown as recorded, folded into one line
    for e in [*events, None]:
        if e is not None and e.kind == "raw":
            raw.append(e)
            continue
        if raw:
            yield _raw_group(raw)
            raw = []
        if e is None:
            break
        if e.call is not None and e.call not in seen_call:
            seen_call.add(e.call)
            yield f"<div class='mut' id=t-call-{e.call}><a href='#call-{e.call}'>call {e.call}</a></div>"
        cls = f"ev {e.kind}" + (" err" if e.is_error else "")
        tags = "".join(f"<span class='tag {esc(f.split()[0])}'>{esc(f)}</span>" for f in e.flags)
        if e.kind in ("prompt", "text", "text_user", "queued"):
            label = {"prompt": "user", "text": "assistant", "text_user": "user", "queued": "queued message"}[e.kind]
            yield f"<div class='{cls}'><div class=h>{label}{tags}</div>{_body(e.text)}</div>"
        elif e.kind == "thinking":
            yield f"<div class='{cls}'><details><summary>thinking</summary>{_body(e.text)}</details></div>"
        elif e.kind == "tool_use":
            yield (f"<div class='{cls}'><details><summary><b>{esc(e.title)}</b> <span class=mut>"
                   f"{esc(_one_line(e.text))}</span></summary>{_body(e.text)}</details>")
            for sub in e.children:
                yield "<div class=sub>" + _sub_header(sub)
                yield from _timeline(sub, sub.events)
                yield "</div>"
            yield "</div>"
        elif e.kind == "tool_result":
            yield (f"<div class='{cls}'><details{' open' if e.is_error else ''}><summary>result of "
                   f"{esc(e.title)}{' (error)' if e.is_error else ''}{tags} <span class=mut>"
                   f"{len(e.text):,} chars</span></summary>{_body(e.text)}</details></div>")
        elif e.kind == "subagent":
            for sub in e.children:
                yield f"<div class='{cls} sub'>" + _sub_header(sub)
                yield from _timeline(sub, sub.events)
                yield "</div>"
        else:  # system, compact, result, rewind, fork, hook
            yield f"<div class='{cls}'><div class=h>{esc(e.kind)}: {esc(e.title)}{tags}</div>{_body(e.text)}</div>"


def _raw_group(raw: list[Event]) -> str:
    counts: dict[str, int] = {}
    for e in raw:
        counts[e.title] = counts.get(e.title, 0) + 1
    names = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in counts.items())
    body = "".join(f"<div class=mut>{esc(e.title)}</div>{_body(e.text)}" for e in raw)
    return (f"<div class='ev raw'><details><summary class=mut>{len(raw)} other "
            f"entr{'y' if len(raw) == 1 else 'ies'} ({esc(names)}), shown as recorded</summary>{body}</details></div>")


def _sub_header(sub: SessionView) -> str:
    return (f"<div class=mut>subagent {esc(sub.session_id)}: {len(sub.calls)} calls, "
            f"{_fmt_cost(sub.cost)}</div>")


def _one_line(s: str, n: int = 100) -> str:
    try:
        obj = json.loads(s)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        s = " ".join(f"{k}={v}" for k, v in obj.items())
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"
