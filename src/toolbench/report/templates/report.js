"use strict";
// The sample explorer. Every record string is model output or data text: it reaches the page
// only through textContent (never innerHTML), and images only as checked data: URIs.
(function () {
  const PAGE = 200;
  const IMAGE = /^data:image\/(png|jpeg|gif);base64,[A-Za-z0-9+/=]+$/;
  const $ = (id) => document.getElementById(id);
  let data = null;
  let matches = [];
  let shown = 0;
  let selected = null;

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  async function load() {
    const b64 = $("payload").textContent.trim();
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return JSON.parse(await new Response(stream).text());
  }

  function text(index) {
    return typeof index === "number" ? data.texts[index] || "" : "";
  }

  function fillFilters() {
    const tasks = [...new Set(data.records.map((r) => r.t))].sort();
    for (const t of tasks) $("f-task").appendChild(new Option(t, t));
    data.runs.forEach((run, i) => $("f-run").appendChild(new Option(run.label + " (" + run.model + ")", String(i))));
  }

  function haystack(r) {
    if (r._hay === undefined) {
      const gold = (r.g || []).map(text).join("\n");
      r._hay = [r.i, r.pred, r.msg, text(r.q), gold].join("\n").toLowerCase();
    }
    return r._hay;
  }

  function applyFilters() {
    const task = $("f-task").value, run = $("f-run").value, status = $("f-status").value;
    const success = $("f-success").value, needle = $("f-text").value.trim().toLowerCase();
    matches = data.records.filter((r) =>
      (!task || r.t === task) &&
      (!run || String(r.r) === run) &&
      (!status || r.s === status) &&
      (!success || String(r.ok === true) === success) &&
      (!needle || haystack(r).includes(needle)));
    shown = 0;
    $("samples").tBodies[0].replaceChildren();
    more();
  }

  function more() {
    const body = $("samples").tBodies[0];
    for (const r of matches.slice(shown, shown + PAGE)) {
      const row = el("tr");
      row.dataset.task = r.t;
      row.dataset.id = r.i;
      row.dataset.run = String(r.r);
      row.appendChild(el("td", data.runs[r.r].label));
      row.appendChild(el("td", r.t));
      row.appendChild(el("td", r.i));
      row.appendChild(el("td", r.e, "num"));
      row.appendChild(el("td", r.s));
      row.appendChild(el("td", r.ok === true ? "yes" : r.ok === false ? "no" : "-", "ok-" + String(r.ok)));
      const msg = r.msg || "";
      const cell = el("td", msg.length > 200 ? msg.slice(0, 200) + "…" : msg, "msg");
      if (msg.length > 200) cell.title = msg;  // the whole message on hover (and in the detail)
      row.appendChild(cell);
      row.addEventListener("click", () => { select(row); show(r); });
      body.appendChild(row);
    }
    shown = Math.min(matches.length, shown + PAGE);
    $("count").textContent = matches.length + " of " + data.records.length + " records" +
      (shown < matches.length ? " (" + shown + " listed)" : "");
    $("more").hidden = shown >= matches.length;
  }

  function select(row) {
    if (selected) selected.classList.remove("selected");
    selected = row;
    row.classList.add("selected");
  }

  function section(parent, title, body, open) {
    parent.appendChild(el("h4", title));
    if (body === undefined) return;
    const pre = el("pre", body === "" ? "(empty)" : body);
    if (open === false) {
      const fold = el("details");
      fold.appendChild(el("summary", "show"));
      fold.appendChild(pre);
      parent.appendChild(fold);
    } else {
      parent.appendChild(pre);
    }
  }

  function diffView(parent, d) {
    if (d.kind === "state") {
      parent.appendChild(el("h4", "world state diff (" + d.summary + ")"));
      const table = el("table", null, "grid state");
      const head = el("tr");
      for (const h of ["key", "", "prediction", "closest gold"]) head.appendChild(el("th", h));
      table.appendChild(head);
      for (const row of d.rows) {
        const tr = el("tr");
        tr.appendChild(el("td", row.key, "mono"));
        tr.appendChild(el("td", row.kind, row.kind));
        tr.appendChild(el("td", row.predicted, "mono " + row.kind));
        tr.appendChild(el("td", row.gold, "mono " + row.kind));
        table.appendChild(tr);
      }
      parent.appendChild(table);
      return;
    }
    parent.appendChild(el("h4", "diff (- closest gold, + prediction)"));
    const pre = el("pre", null, "diff");
    for (const [tag, line] of d.lines) {
      const cls = tag === "+" ? "add" : tag === "-" ? "del" : "same";
      pre.appendChild(el("div", tag + " " + line, cls));
    }
    parent.appendChild(pre);
  }

  function show(r) {
    const box = $("detail");
    box.replaceChildren();
    const run = data.runs[r.r];
    box.appendChild(el("h3", r.t + " #" + r.i + " · epoch " + r.e + " · " + run.label + " (" + run.model + ")"));
    const verdict = r.s === "infra_error" ? "infra error (left out of scores)" :
      (r.ok ? "succeeded" : "failed") + (r.s === "model_error" ? " (model error)" : "");
    box.appendChild(el("p", verdict, "ok-" + String(r.ok)));
    if (r.note) box.appendChild(el("p", r.note, "warn"));
    if (r.q !== undefined) section(box, "query", text(r.q));
    if (r.det !== undefined) section(box, "details", r.det);
    if (r.msg) section(box, "message", r.msg);
    section(box, "prediction", r.pred);
    if (r.gl !== undefined) section(box, "closest gold (label " + (r.gl + 1) + " of " + r.g.length + ")", text(r.g[r.gl]));
    if (r.d) diffView(box, r.d);
    const metrics = Object.entries(r.m || {}).map(([k, v]) => k + " " + (typeof v === "number" ? v.toFixed(3) : String(v)));
    // Tokens a model did not report (scripted models, agents) and an unknown latency are
    // left out rather than shown as zeros; a latency is rounded as `toolbench show` rounds it.
    const numbers = [metrics.join(", ") || "(no per-sample metrics)"];
    if (r.tok[0] || r.tok[1]) numbers.push("tokens " + r.tok[0] + " in / " + r.tok[1] + " out");
    const lat = Number(r.lat);
    if (lat > 0) numbers.push("latency " + (lat >= 1 ? lat.toFixed(1) + " s" : Math.round(lat * 1000) + " ms"));
    section(box, "metrics, tokens, latency", numbers.join("\n"));
    if (r.img) {
      box.appendChild(el("h4", "images"));
      const row = el("div", null, "images");
      for (const [name, uri] of Object.entries(r.img)) {
        const fig = el("figure");
        if (typeof uri === "string" && IMAGE.test(uri)) {
          const img = el("img");
          img.alt = name;
          img.src = uri;
          fig.appendChild(img);
        } else {
          fig.appendChild(el("p", "not embedded: " + String(uri).slice(1), "warn"));
        }
        fig.appendChild(el("figcaption", name));
        row.appendChild(fig);
      }
      box.appendChild(row);
    }
    if (r.calls) {
      r.calls.forEach((c, i) => section(box, "call " + (i + 1) + (c.role ? " (" + c.role + ")" : "") + ": " + c.step,
        c.text + (c.tools ? "\ntool calls: " + c.tools : "")));
      (r.trace || []).forEach((t, i) => section(box, "world, step " + (i + 1), t));
    }
    if (r.p !== undefined) {
      const said = r.pm === true ? "rebuilt; matches the recorded prompt hash" :
        r.pm === false ? "rebuilt; DIFFERS from what the model was shown" : "rebuilt";
      section(box, "prompt (" + said + ")", text(r.p), false);
    }
  }

  function jump(task, id) {
    $("f-task").value = task;
    $("f-run").value = "";
    $("f-status").value = "";
    $("f-success").value = "";
    $("f-text").value = id;
    applyFilters();
    const hit = matches.findIndex((r) => r.i === id);
    const rows = $("samples").tBodies[0].rows;
    if (hit >= 0 && rows[hit]) { select(rows[hit]); show(matches[hit]); }
    $("explorer").scrollIntoView();
  }

  async function main() {
    try {
      data = await load();
    } catch (err) {
      $("count").textContent = "could not read the embedded data: " + err;
      return;
    }
    fillFilters();
    for (const id of ["f-task", "f-run", "f-status", "f-success"]) $(id).addEventListener("change", applyFilters);
    let timer = 0;
    $("f-text").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(applyFilters, 150); });
    $("more").addEventListener("click", more);
    for (const row of document.querySelectorAll("tr.jump")) {
      row.addEventListener("click", () => jump(row.dataset.task, row.dataset.id));
    }
    applyFilters();
    document.body.dataset.ready = "true";
  }

  main();
})();
