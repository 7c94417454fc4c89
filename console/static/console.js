// tablestore console: the script of every page, plain JavaScript with no
// library. Each part starts only on the page that has its elements. Pages
// work without it, except importing and the live charts.
"use strict";

(function () {
  const body = document.body;
  const csrf = body.dataset.csrf || "";
  body.classList.add("js");

  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v; else e.setAttribute(k, v);
    }
    for (const k of kids) e.append(k);
    return e;
  };

  // ---- Query page: the $filter editor checks as you type --------------
  function filterEditor() {
    const ta = $("#filter");
    const status = $("#filter-status");
    if (!ta || !status || !ta.dataset.planUrl) return;
    const form = ta.form;
    let timer = 0, seq = 0, lastError = null;

    async function check() {
      const n = ++seq;
      const params = new URLSearchParams({ filter: ta.value, select: $("#select").value });
      if ($("#reverse").checked) params.set("reverse", "1");
      if ($("#index") && $("#index").value) params.set("index", $("#index").value);
      let ans;
      try {
        const r = await fetch(ta.dataset.planUrl + "?" + params, { headers: { Accept: "application/json" } });
        ans = await r.json();
      } catch (e) {
        return; // the page's own run reports real failures
      }
      if (n !== seq) return; // a newer check is under way
      status.textContent = "";
      if (ans.ok) {
        lastError = null;
        ta.removeAttribute("aria-invalid");
        const p = ans.plan;
        const parts = ["✓ valid · plan: " + p.kind];
        if (p.ranges.length) parts.push(p.ranges.length === 1 ? "1 key range" : p.ranges.length + " key ranges");
        parts.push("residual: " + (p.residual || "none"));
        status.append(el("span", { class: "ok", id: "filter-ok" }, parts.join(" · ")));
        for (const w of p.warnings || []) {
          status.append(el("span", { class: "warn filter-warning" }, "⚠ " + w));
        }
        return;
      }
      const e = ans.error;
      lastError = e;
      ta.setAttribute("aria-invalid", "true");
      const where = e.column ? "column " + e.column + ": " : "";
      status.append(el("span", { class: "err", id: "filter-live-error", title: "click to go to the error" },
        "✗ " + where + e.message + (e.code ? " (" + e.code + ")" : "")));
      if (typeof e.offset === "number" || typeof e.pos === "number") {
        const off = e.offset || 0;
        const v = ta.value;
        const at = v.slice(off, off + 1) || " ";
        status.append(el("pre", { class: "caret", id: "filter-live-caret" }, v.slice(0, off), el("mark", {}, at), v.slice(off + 1)));
      }
    }
    const plan = $("#plan");
    const later = () => {
      if (plan) plan.classList.toggle("stale", ta.value !== plan.dataset.filter);
      clearTimeout(timer);
      timer = setTimeout(check, 250);
    };
    ta.addEventListener("input", later);
    $("#select").addEventListener("input", later);
    $("#reverse").addEventListener("change", later);
    if ($("#index")) $("#index").addEventListener("change", later);
    status.addEventListener("click", () => {
      if (!lastError || typeof lastError.offset !== "number") return;
      ta.focus();
      ta.setSelectionRange(lastError.offset, lastError.offset + 1);
    });
    ta.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
      else if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
    });
    if (ta.value.trim() !== "") check();
  }

  // ---- Entity page: typed property rows --------------------------------
  function entityEditor() {
    const rows = $("#prop-rows");
    const tpl = $("#row-template");
    if (!rows || !tpl) return;
    const hints = {
      "Edm.String": "text", "Edm.Int32": "-2147483648 to 2147483647", "Edm.Int64": "whole number, 64-bit",
      "Edm.Double": "1.5, 2e10, NaN, Infinity", "Edm.Boolean": "true or false",
      "Edm.DateTime": "2026-01-02T03:04:05.1234567Z", "Edm.Guid": "01234567-89ab-cdef-0123-456789abcdef",
      "Edm.Binary": "base64",
    };
    let next = 0;
    for (const input of $$("[name^='p.']", rows)) {
      const m = /^p\.(\d+)\./.exec(input.name);
      if (m) next = Math.max(next, Number(m[1]) + 1);
    }
    // The value widget for a type: a text area for String and Binary, a
    // choice for Boolean, a line for the rest.
    function widget(type, name, value) {
      let w;
      if (type === "Edm.Boolean") {
        w = el("select", { name, class: "prop-value", "aria-label": "value" },
          el("option", {}, "true"), el("option", {}, "false"));
        w.value = value === "false" ? "false" : "true";
      } else if (type === "Edm.String" || type === "Edm.Binary") {
        w = el("textarea", { name, class: "prop-value mono", rows: "1", "aria-label": "value" });
        w.value = value;
      } else {
        w = el("input", { name, class: "prop-value mono", "aria-label": "value" });
        w.value = value;
      }
      w.placeholder = hints[type] || "";
      return w;
    }
    function wire(tr) {
      const type = $(".prop-type", tr);
      type.addEventListener("change", () => {
        const old = $(".prop-value", tr);
        const esc = $(".prop-esc", tr);
        if (type.value !== "Edm.String" && esc) {
          esc.value = "0";
          const hint = $(".hint", tr);
          if (hint) hint.remove();
        }
        old.replaceWith(widget(type.value, old.name, old.value));
      });
      const del = $(".prop-del", tr);
      if (del) {
        const label = del.closest("label");
        const btn = el("button", { type: "button", class: "linklike-danger remove-row", title: "remove this property" }, "Remove");
        btn.addEventListener("click", () => tr.remove());
        label.replaceWith(btn);
      }
    }
    $$("tr.prop-row", rows).forEach(wire);
    const add = $("#add-prop");
    add.addEventListener("click", () => {
      const tr = tpl.content.firstElementChild.cloneNode(true);
      for (const input of $$("[name^='p.0.']", tr)) input.name = input.name.replace(/^p\.0\./, "p." + next + ".");
      next++;
      rows.append(tr);
      wire(tr);
      $(".prop-name", tr).focus();
    });
  }

  // ---- Import page: the file goes in chunks, each committed -------------
  function importer() {
    const form = $("#import-form");
    if (!form) return;
    const CHUNK = 1 << 20;
    const progress = $("#import-progress"), status = $("#import-status"), issues = $("#import-issues");
    const post = (url, bodyData, type) => fetch(url, {
      method: "POST", body: bodyData,
      headers: { "X-CSRF-Token": csrf, "Content-Type": type, Accept: "application/json" },
    });
    function show(st, size) {
      const pct = size ? Math.min(100, Math.round(100 * st.received / size)) : 100;
      progress.value = pct;
      status.textContent = (st.done ? (st.stopped ? "Stopped: " : "Done: ") : pct + "% · ") +
        st.imported.toLocaleString() + " imported, " + st.rejected.toLocaleString() + " rejected, " +
        st.lines.toLocaleString() + " lines read" + (st.error ? " · " + st.error : "");
      issues.textContent = "";
      for (const i of st.issues || []) {
        issues.append(el("li", {}, "line " + i.line + ": " + i.message + (i.code ? " (" + i.code + ")" : "")));
      }
    }
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const file = $("#file").files[0];
      if (!file) return;
      const format = $("#format").value || (/\.csv$/i.test(file.name) ? "csv" : "jsonl");
      const button = $("#import-start");
      button.disabled = true;
      $("#import-run").hidden = false;
      $("#import-after").hidden = true;
      progress.value = 0;
      status.textContent = "Starting…";
      issues.textContent = "";
      try {
        const start = form.dataset.startUrl;
        let r = await post(start, new URLSearchParams({ format, mode: $("#mode").value, onerror: $("#onerror").value }),
          "application/x-www-form-urlencoded");
        let ans = await r.json();
        if (!r.ok) throw new Error(ans.error || "the import did not start (" + r.status + ")");
        const id = ans.id;
        let offset = 0, busy = 0;
        for (let tries = 0; tries < 100000; tries++) {
          const end = Math.min(offset + CHUNK, file.size);
          const last = end >= file.size ? "1" : "0";
          r = await post(start + "/" + encodeURIComponent(id) + "?offset=" + offset + "&last=" + last,
            file.slice(offset, end), "application/octet-stream");
          ans = await r.json();
          if (r.status === 409 && typeof ans.received === "number") {
            offset = ans.received; // resume where the import is
            if (ans.done) { show(ans, file.size); break; }
            continue;
          }
          if (r.status === 503 && busy < 30) {
            // The server's memory is busy: send the same chunk again soon.
            busy++;
            status.textContent = "Waiting: " + (ans.error || "the server is busy");
            const wait = Number(r.headers.get("Retry-After")) || 2;
            await new Promise((done) => setTimeout(done, wait * 1000));
            continue;
          }
          if (!r.ok) throw new Error(ans.error || "the import failed (" + r.status + ")");
          busy = 0;
          show(ans, file.size);
          offset = ans.received;
          if (ans.done) break;
        }
        $("#import-after").hidden = false;
      } catch (e) {
        status.textContent = "Failed: " + e.message;
      } finally {
        button.disabled = false;
      }
    });
  }

  // ---- Health page: live state and charts from the server's metrics ---
  function health() {
    const charts = $("#charts");
    const holder = charts || $("#no-metrics");
    if (!holder || !holder.dataset.metricsUrl) return;
    const url = holder.dataset.metricsUrl;
    const keep = 150, every = 2000; // five minutes of samples
    const samples = [];
    const rps = [], errs = [], mean = [], p95 = [];

    function quantile(q, before, after) {
      // Prometheus' histogram_quantile over the increase of each bucket.
      const inc = after.map((b, i) => ({ le: b.le, count: b.count - ((before[i] && before[i].count) || 0) }));
      const total = inc.length ? inc[inc.length - 1].count : 0;
      if (total <= 0) return null;
      const rank = q * total;
      let prevLe = 0, prevCount = 0;
      for (const b of inc) {
        if (b.count >= rank) {
          if (b.le === "+Inf") return prevLe;
          return prevLe + (b.le - prevLe) * ((rank - prevCount) / Math.max(b.count - prevCount, 1e-9));
        }
        prevLe = b.le; prevCount = b.count;
      }
      return prevLe;
    }

    function niceMax(v) {
      if (!(v > 0)) return 1;
      const p = Math.pow(10, Math.floor(Math.log10(v)));
      for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
      return 10 * p;
    }

    const NS = "http://www.w3.org/2000/svg";
    function svgEl(tag, attrs) {
      const e = document.createElementNS(NS, tag);
      for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
      return e;
    }
    // draw plots the series over the time the page has watched: at least
    // one minute, at most the five minutes kept.
    function draw(svg, series, digits) {
      const W = 640, H = 180, L = 52, R = 10, T = 10, B = 22;
      const now = Date.now();
      const watched = samples.length ? now - samples[0].t : 0;
      const span = Math.max(60000, Math.min(keep * every, watched));
      let top = 0;
      for (const s of series) for (const [, v] of s.points) top = Math.max(top, v);
      top = niceMax(top);
      while (svg.firstChild) svg.firstChild.remove();
      for (const f of [0, 0.5, 1]) {
        const y = T + (H - T - B) * (1 - f);
        svg.append(svgEl("line", { x1: L, x2: W - R, y1: y, y2: y, class: "grid-line" }));
        const label = svgEl("text", { x: L - 6, y: y + 4, "text-anchor": "end" });
        label.textContent = (top * f).toFixed(digits);
        svg.append(label);
      }
      const ago = "−" + (Math.round(span / 6000) / 10) + " min";
      for (const [x, text, anchor] of [[L, ago, "start"], [W - R, "now", "end"]]) {
        const t = svgEl("text", { x, y: H - 6, "text-anchor": anchor });
        t.textContent = text;
        svg.append(t);
      }
      for (const s of series) {
        const pts = s.points.filter(([t]) => now - t <= span).map(([t, v]) => {
          const x = L + (W - L - R) * (1 - (now - t) / span);
          const y = T + (H - T - B) * (1 - v / top);
          return x.toFixed(1) + "," + y.toFixed(1);
        });
        if (pts.length) svg.append(svgEl("polyline", { points: pts.join(" "), class: s.cls }));
      }
    }

    function setHealth(s) {
      const box = $("#health-state");
      if (!box) return;
      box.classList.toggle("ok", s.healthy);
      box.classList.toggle("bad", !s.healthy);
      $("#health-word").textContent = s.healthy ? "Healthy" : "Fault";
      if (s.healthy) $("#health-text").textContent = "The store accepts writes.";
      else if (s.fault) $("#health-text").textContent = s.fault;
    }

    async function tick() {
      let s;
      try {
        const r = await fetch(url, { headers: { Accept: "application/json" } });
        s = await r.json();
        if (!r.ok) throw new Error(s.error || r.status);
      } catch (e) {
        if (charts) $("#metrics-status").textContent = "Cannot read the metrics: " + e.message;
        return;
      }
      setHealth(s);
      if (!charts) return;
      if (!s.available || s.error) {
        $("#metrics-status").textContent = s.error ? "Cannot read the metrics: " + s.error : "No metrics are available.";
        return;
      }
      s.t = Date.now();
      const prev = samples[samples.length - 1];
      samples.push(s);
      if (samples.length > keep) samples.shift();
      if (prev) {
        const dt = (s.t - prev.t) / 1000;
        const dn = s.requests - prev.requests;
        if (dt > 0 && dn >= 0) { // a restart resets the counters: skip that step
          rps.push([s.t, dn / dt]);
          errs.push([s.t, Math.max(0, s.errors - prev.errors) / dt]);
          const dc = s.durationCount - prev.durationCount;
          const ds = s.durationSum - prev.durationSum;
          if (dc > 0 && ds >= 0) {
            mean.push([s.t, 1000 * ds / dc]);
            const q = quantile(0.95, prev.buckets, s.buckets);
            if (q !== null) p95.push([s.t, 1000 * q]);
          }
        }
      }
      const cutoff = s.t - keep * every;
      for (const a of [rps, errs, mean, p95]) while (a.length && a[0][0] < cutoff) a.shift();
      draw($("#chart-rps"), [{ cls: "s1", points: rps }, { cls: "s3", points: errs }], 1);
      draw($("#chart-latency"), [{ cls: "s1", points: mean }, { cls: "s2", points: p95 }], 1);
      const last = rps.length ? rps[rps.length - 1][1] : null;
      const lastMean = mean.length ? mean[mean.length - 1][1] : null;
      $("#metrics-status").textContent = last === null ? "Waiting for the next sample…" :
        "Now: " + last.toFixed(1) + " requests/s" + (lastMean === null ? "" : ", mean latency " + lastMean.toFixed(2) + " ms") +
        " · " + s.inFlight + " in flight · " + s.requests.toLocaleString() + " requests since the server started";
    }
    tick();
    setInterval(tick, every);
  }

  // ---- Changes page: the live tail of the change feed -------------------
  // Server-sent events: each change's event id is its cursor, so the
  // browser reconnects where it left off when a stream ends; Pause closes
  // the stream and Continue opens one after the last change shown.
  function changesTail() {
    const tail = $("#tail");
    if (!tail || !tail.dataset.streamUrl) return;
    const tbody = $("#changes tbody");
    const maxRows = Number(tail.dataset.maxRows) || 1000;
    const withEntity = $$("#changes thead th").length > 8;
    const state = $("#tail-state"), toggle = $("#tail-toggle");
    let es = null, last = "", shown = 0;

    function setState(text, cls) {
      state.textContent = text;
      state.className = "tail-state" + (cls ? " " + cls : "");
    }
    function streamURL() {
      if (!last) return tail.dataset.streamUrl;
      const u = new URL(tail.dataset.streamUrl, location.href);
      u.searchParams.set("from", last);
      return u.pathname + u.search;
    }
    function keyCell(text, link) {
      return link ? el("td", {}, el("a", { href: link }, text)) : el("td", {}, text);
    }
    function row(c) {
      const rk = c.op === "deleteRange" ? "[" + (c.rk || "start") + ", " + (c.toRk || "end") + ")" : c.rk;
      const cells = [
        el("td", { class: "num mono" }, String(c.seq)),
        el("td", { class: "op op-" + c.op }, c.op),
        keyCell(c.pk, c.link),
        keyCell(rk, c.link),
        el("td", { class: "mono" }, c.etag || "—"),
        el("td", { class: "mono muted" }, c.timestamp),
        el("td", { class: "mono muted", title: "the commit's first change, and this change's place in it" },
          String(c.commit) + (c.count > 1 ? " (" + (c.index + 1) + "/" + c.count + ")" : "")),
        el("td", { class: "mono cursor" }, c.cursor),
      ];
      if (withEntity) cells.push(el("td", { class: "mono", title: c.entity || "" }, c.entity || ""));
      const tr = el("tr", { class: "change fresh" }, ...cells);
      setTimeout(() => tr.classList.remove("fresh"), 1500);
      return tr;
    }
    function stop(text, cls) {
      if (es) es.close();
      es = null;
      setState(text, cls);
    }
    function open() {
      setState("Connecting…");
      toggle.textContent = "Pause";
      toggle.disabled = false;
      es = new EventSource(streamURL());
      es.addEventListener("ready", (ev) => {
        const d = JSON.parse(ev.data);
        if (d.cursor && !last) last = d.cursor;
        setState(shown ? "Live" : "Live: waiting for changes", "live");
      });
      es.addEventListener("change", (ev) => {
        const c = JSON.parse(ev.data);
        tbody.prepend(row(c));
        while (tbody.rows.length > maxRows) tbody.deleteRow(-1);
        last = c.cursor;
        shown++;
        $("#tail-count").textContent = shown.toLocaleString();
        $("#tail-cursor").textContent = last;
        setState("Live", "live");
      });
      es.addEventListener("pause", (ev) => {
        const d = JSON.parse(ev.data);
        if (d.cursor) last = d.cursor;
        stop("Paused: " + d.message + "; press Continue for more", "paused");
        toggle.textContent = "Continue";
      });
      es.addEventListener("end", (ev) => {
        stop("Ended: " + JSON.parse(ev.data).message, "ended");
        toggle.disabled = true;
      });
      es.addEventListener("failure", (ev) => {
        const d = JSON.parse(ev.data);
        stop("Stopped: " + d.message + (d.code ? " (" + d.code + ")" : ""), "failed");
        toggle.textContent = "Retry";
      });
      es.onerror = () => {
        if (!es) return;
        if (es.readyState === EventSource.CLOSED) {
          stop("The stream was refused: too many live streams (close other Changes pages), the server is busy, " +
            "or the session has ended; press Retry or reload the page", "failed");
          toggle.textContent = "Retry";
        } else {
          setState("Reconnecting…");
        }
      };
    }
    toggle.addEventListener("click", () => {
      if (es) {
        stop("Paused", "paused");
        toggle.textContent = "Continue";
      } else {
        open();
      }
    });
    $("#tail-clear").addEventListener("click", () => {
      tbody.replaceChildren();
      shown = 0;
      $("#tail-count").textContent = "0";
    });
    open();
  }

  // ---- Query page: choose the grid's columns, select rows to delete ----
  function gridTools() {
    const grid = $("#grid");
    const form = $("#grid-form");
    if (!grid || !form) return;
    const heads = $$("thead th", grid);
    const table = location.pathname;
    let hidden = [];
    try { hidden = JSON.parse(localStorage.getItem("tablestore.columns:" + table) || "[]"); } catch (e) { hidden = []; }
    function show(name, on) {
      const i = heads.findIndex((th) => th.dataset.col === name);
      if (i < 0) return;
      for (const tr of $$("tr", grid)) {
        if (tr.children[i]) tr.children[i].hidden = !on;
      }
    }
    for (const box of $$(".col-toggle", form)) {
      const name = box.dataset.col;
      if (hidden.includes(name)) { box.checked = false; show(name, false); }
      box.addEventListener("change", () => {
        show(name, box.checked);
        hidden = hidden.filter((n) => n !== name);
        if (!box.checked) hidden.push(name);
        try { localStorage.setItem("tablestore.columns:" + table, JSON.stringify(hidden)); } catch (e) { /* private mode */ }
      });
    }
    const all = $("#select-all");
    const rows = $$('input[name="e"]', grid);
    const button = $("#delete-selected");
    const sync = () => {
      const n = rows.filter((r) => r.checked).length;
      button.disabled = n === 0;
      button.textContent = n ? "Delete selected (" + n + ")" : "Delete selected";
      all.checked = n > 0 && n === rows.length;
      all.indeterminate = n > 0 && n < rows.length;
    };
    all.hidden = false;
    all.addEventListener("change", () => { for (const r of rows) r.checked = all.checked; sync(); });
    for (const r of rows) r.addEventListener("change", sync);
    form.addEventListener("submit", (ev) => {
      if (!confirm(button.dataset.confirm)) ev.preventDefault();
    });
    sync();
  }

  filterEditor();
  gridTools();
  entityEditor();
  importer();
  health();
  changesTail();
})();
