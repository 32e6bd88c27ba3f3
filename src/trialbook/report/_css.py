"""The HTML report's stylesheet, inline in every page (the page fetches nothing)."""

from __future__ import annotations

__all__ = ["CSS"]

# Okabe-Ito colours (report/_plots.py) as light cell backgrounds, each with its symbol and word
CSS = """
:root { --ink: #1a1a1a; --muted: #555; --rule: #ccc; --blue: #0072B2; --verm: #D55E00; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--ink); background: #fff; margin: 0 auto; max-width: 76rem; padding: 1rem 1.5rem; }
h1 { font-size: 1.5rem; margin: .2rem 0 .6rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; border-top: 2px solid var(--rule); padding-top: .8rem; margin-top: 2rem;
  overflow-wrap: anywhere; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 .4rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3rem 1.2rem; }
a { color: var(--blue); }
.headline { font-size: 1.1rem; font-weight: 600; background: #eef5fb; border-left: 4px solid var(--blue);
  padding: .45rem .7rem; }
.note { color: #6b3a00; background: #fff6e5; border-left: 4px solid #E69F00; padding: .3rem .7rem; }
.noplot { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; margin: .4rem 0 .8rem; font-variant-numeric: tabular-nums; }
caption { caption-side: bottom; text-align: left; color: var(--muted); font-size: .85rem; padding-top: .3rem; }
th, td { border-bottom: 1px solid #e4e4e4; padding: .2rem .6rem; text-align: left; vertical-align: top; }
thead th { border-bottom: 2px solid var(--rule); }
.num { text-align: right; white-space: nowrap; }
.pair { display: flex; flex-wrap: wrap; gap: 0 2.5rem; align-items: flex-start; }
.fig { display: flex; flex-wrap: wrap; gap: .5rem 2rem; align-items: flex-start; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
.matrix td, .matrix th { padding: .1rem .35rem; }
figure { margin: 0; flex: 1 1 26rem; max-width: 40rem; }
figure svg { width: 100%; height: auto; display: block; }
.wide figure { flex-basis: 100%; max-width: 52rem; }
figcaption { color: var(--muted); font-size: .85rem; }
.numbers { flex: 0 1 auto; }
.scroll { overflow-x: auto; }
.wrap td, .wrap th[scope] { overflow-wrap: anywhere; }
.wrap td:first-child { min-width: 8rem; }
.wrap td:last-child { min-width: 14rem; }
.grid td.o { text-align: center; white-space: nowrap; font-size: .85rem; }
.o { padding: .05rem .35rem; border-radius: 3px; }
.o a { color: inherit; }
.pass { background: #cfe3f2; color: #003a5c; }
.fail { background: #f6d2bd; color: #6e2b00; }
.timeout { background: #fbe3b3; color: #5c3d00; }
.infra { background: #e2e2e2; color: #333; }
.none { color: var(--muted); }
.tag { font-weight: normal; font-size: .8rem; color: #6b3a00; }
.flips li { margin: .2rem 0; }
footer { margin-top: 2.5rem; color: var(--muted); font-size: .85rem; border-top: 1px solid var(--rule); padding-top: .5rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  nav, .noplot { display: none; }
  a { color: inherit; text-decoration: none; }
  section { break-before: page; }
  figure, table, .headline { break-inside: avoid; }
  .scroll { overflow: visible; }
  details > summary { display: none; }
  .o, .headline, .note { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""
