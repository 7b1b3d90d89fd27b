"""The report's inline style and script: no external asset, no network.

The script filters the table (text box, verdict checkboxes, or the address: ``#q=TEXT``,
``#verdict=loop,suspect``), hides the charts of hidden rows, keeps the filter in the
address, and shows the step and call of the dot nearest the pointer in a chart (also from
the address: ``#point=chart-0:12``). Without the script, the table and links still work.
"""

from __future__ import annotations

__all__ = ["CSS", "SCRIPT"]

CSS = """
body{font:14px system-ui,sans-serif;margin:24px;color:#1f2328}
[hidden]{display:none!important}
#controls{position:sticky;top:0;background:#fff;padding:8px 0;border-bottom:1px solid #d0d7de;z-index:1}
#controls input[type=search]{width:28em;padding:3px 6px}
#controls label{margin-left:12px}#shown{margin-left:16px;color:#57606a}
table{border-collapse:collapse;margin:12px 0}
td,th{padding:3px 8px;border-bottom:1px solid #d0d7de;text-align:right;vertical-align:top}
th{background:#f6f8fa}
td.l,th.l{text-align:left}td.nowrap{white-space:nowrap}td.path{text-align:left;overflow-wrap:anywhere;min-width:16em;max-width:40em;color:#57606a}
tr:target,section:target{background:#fff8c5}
.loop{color:#cf222e;font-weight:600}.suspect{color:#9a6700}
section.chart{margin:20px 0;padding:4px 8px}section.chart h3{margin:4px 0}
svg{border:1px solid #d0d7de;background:#fff}svg.timeline{max-width:100%;height:auto}svg rect.hot{stroke:#000;stroke-width:1.5}
.legend{color:#57606a;font-size:12px}
#tip{position:absolute;background:#1f2328;color:#fff;padding:3px 7px;border-radius:4px;
font:12px ui-monospace,monospace;pointer-events:none;max-width:60em;white-space:pre-wrap}
"""

SCRIPT = """
"use strict";
(function () {
  const rows = Array.from(document.querySelectorAll("#runs tbody tr"));
  const box = document.getElementById("filter");
  const checks = Array.from(document.querySelectorAll("#controls input.verdict"));
  const shown = document.getElementById("shown");
  const tip = document.getElementById("tip");
  let hot = null;

  function apply() {
    const text = box.value.trim().toLowerCase();
    const on = new Set(checks.filter((c) => c.checked).map((c) => c.value));
    let count = 0;
    for (const row of rows) {
      const visible = on.has(row.dataset.verdict) && (!text || row.dataset.search.includes(text));
      row.hidden = !visible;
      count += visible ? 1 : 0;
      const chart = row.dataset.chart ? document.getElementById(row.dataset.chart) : null;
      if (chart) chart.hidden = !visible;
    }
    shown.textContent = count + " of " + rows.length + " runs shown";
  }

  function remember() {
    const params = new URLSearchParams();
    if (box.value) params.set("q", box.value);
    const on = checks.filter((c) => c.checked).map((c) => c.value);
    if (on.length < checks.length) params.set("verdict", on.join(","));
    const hash = params.toString();
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (error) {
      /* some browsers refuse this on file: pages; the filter still works */
    }
  }

  function fromAddress() {
    if (!location.hash.includes("=")) return;
    const params = new URLSearchParams(location.hash.slice(1));
    if (params.has("q")) box.value = params.get("q");
    if (params.has("verdict")) {
      const wanted = params.get("verdict").split(",");
      for (const c of checks) c.checked = wanted.includes(c.value);
    }
    apply();
    if (params.has("point")) showPoint(params.get("point"));
  }

  function show(dot) {
    if (hot) hot.classList.remove("hot");
    hot = dot;
    dot.classList.add("hot");
    tip.textContent = "step " + dot.dataset.step + ": " + dot.parentNode.dataset.call;
    const at = dot.getBoundingClientRect();
    tip.style.left = at.left + window.scrollX + 10 + "px";
    tip.style.top = at.top + window.scrollY - 30 + "px";
    tip.hidden = false;
  }

  function hide() {
    if (hot) hot.classList.remove("hot");
    hot = null;
    tip.hidden = true;
  }

  function showPoint(spec) {
    const [chart, step] = spec.split(":");
    const section = document.getElementById(chart);
    const dot = section ? section.querySelector("rect[data-step='" + CSS.escape(step) + "']") : null;
    if (dot) show(dot);
  }

  function dots(svg) {
    if (!svg.loopfuseDots) {
      svg.loopfuseDots = Array.from(svg.querySelectorAll("rect[data-step]")).map((el) => [
        parseFloat(el.getAttribute("x")) + 1.5, parseFloat(el.getAttribute("y")) + 2.5, el,
      ]);
    }
    return svg.loopfuseDots;
  }

  function nearest(svg, event) {
    const frame = svg.getBoundingClientRect();
    const scale = svg.viewBox.baseVal.width / frame.width;
    const x = (event.clientX - frame.left) * scale;
    const y = (event.clientY - frame.top) * scale;
    let best = null;
    let bestDistance = 400; /* nothing farther than 20 units away */
    for (const [dx, dy, el] of dots(svg)) {
      const distance = (dx - x) * (dx - x) + (dy - y) * (dy - y);
      if (distance < bestDistance) {
        best = el;
        bestDistance = distance;
      }
    }
    return best;
  }

  for (const svg of document.querySelectorAll("svg.timeline")) {
    svg.addEventListener("mousemove", (event) => {
      const dot = nearest(svg, event);
      if (dot) show(dot);
      else hide();
    });
    svg.addEventListener("mouseleave", hide);
  }
  box.addEventListener("input", () => { apply(); remember(); });
  for (const c of checks) c.addEventListener("change", () => { apply(); remember(); });
  window.addEventListener("hashchange", fromAddress);
  apply();
  fromAddress();
})();
"""
