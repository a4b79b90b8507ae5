// Airship dashboard: the browser side. Plain ES2020, no framework, no build.
//
// Every answer of the API is untrusted: it reaches the page only as text
// nodes and attribute values (never as HTML), and a URL made from it has
// each path segment encoded with encodeURIComponent.
"use strict";
(() => {
  // ---------------------------------------------------------------- DOM

  const SVG_NS = "http://www.w3.org/2000/svg";
  const $ = (id) => document.getElementById(id);

  // el builds an HTML element: attrs are attributes (on* functions become
  // listeners; null, undefined and false are left out), children are nodes
  // or strings, which become text nodes.
  function el(tag, attrs, ...children) {
    return build(document.createElement(tag), attrs, children);
  }

  function svg(tag, attrs, ...children) {
    return build(document.createElementNS(SVG_NS, tag), attrs, children);
  }

  function build(node, attrs, children) {
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (typeof v === "function") node.addEventListener(k.replace(/^on/, ""), v);
      else node.setAttribute(k, v === true ? "" : String(v));
    }
    append(node, children);
    return node;
  }

  // setChildren replaces node's children; like el, it leaves out null,
  // undefined and false, which replaceChildren would show as text.
  function setChildren(node, ...children) {
    node.replaceChildren();
    append(node, children);
  }

  function append(node, children) {
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      if (Array.isArray(c)) append(node, c);
      else if (c instanceof Node) node.appendChild(c);
      else node.appendChild(document.createTextNode(String(c)));
    }
  }

  // keepFocus runs fn, which replaces part of root, and focuses again the
  // element with the same data-focus key as the one focused before.
  function keepFocus(root, fn) {
    const active = document.activeElement;
    const key = active && root.contains(active) ? active.getAttribute("data-focus") : null;
    fn();
    if (key && !root.contains(active)) {
      const again = root.querySelector(`[data-focus="${CSS.escape(key)}"]`);
      if (again) again.focus({ preventScroll: true });
    }
  }

  // ---------------------------------------------------------------- formats

  const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: "base" });
  const absFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
  const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });
  const relFormat = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
  const UNITS = [["year", 31536000], ["month", 2592000], ["week", 604800], ["day", 86400],
    ["hour", 3600], ["minute", 60], ["second", 1]];

  // parseTime answers a Date, or null for a missing or zero Go time.
  function parseTime(t) {
    if (!t) return null;
    const d = new Date(t);
    return isNaN(d.getTime()) || d.getUTCFullYear() < 1971 ? null : d;
  }

  function relative(d) {
    const s = (d.getTime() - Date.now()) / 1000;
    for (const [unit, n] of UNITS) {
      if (Math.abs(s) >= n || unit === "second") return relFormat.format(Math.round(s / n), unit);
    }
    return "";
  }

  // timeEl shows a time as relative, with the absolute time as its title.
  function timeEl(t) {
    const d = parseTime(t);
    if (!d) return el("span", { class: "muted" }, "—");
    return el("time", { datetime: d.toISOString(), title: absFormat.format(d), "data-rel": "" }, relative(d));
  }

  function duration(sec) {
    if (typeof sec !== "number" || !isFinite(sec) || sec < 0) return "—";
    if (sec < 1) return `${Math.round(sec * 1000)} ms`;
    if (sec < 60) return `${sec < 10 ? sec.toFixed(1) : Math.floor(sec)} s`;
    const m = Math.floor(sec / 60);
    if (m < 60) return `${m} m ${Math.floor(sec % 60)} s`;
    return `${Math.floor(m / 60)} h ${m % 60} m`;
  }

  const yesNo = (b) => (b ? "yes" : "no");
  const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const clip = (s, n) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

  // ---------------------------------------------------------------- states

  // Every state maps to one class family, st-ok, st-info, st-progress,
  // st-warn, st-error or st-idle, which colours it; the text is always shown.
  const PHASE_CLASS = {
    "not run": "idle", running: "progress", applied: "info", ready: "ok",
    drifted: "warn", moved: "ok", failed: "error", unknown: "idle",
  };
  const RESULT_CLASS = {
    running: "progress", succeeded: "ok", failed: "error", accepted: "info", refused: "warn",
  };
  const HOST_OK = new Set(["provisioned", "available", "ready", "externally provisioned"]);
  const HOST_IDLE = new Set(["", "unknown", "unmanaged", "none"]);

  const phaseClass = (state) => PHASE_CLASS[state] || "idle";
  const resultClass = (result) => RESULT_CLASS[result] || "idle";

  function hostClass(h) {
    const state = (h.state || "").toLowerCase();
    if (h.errorType || h.errorMessage || state.includes("error") ||
        (h.operationalStatus || "").toLowerCase() === "error") return "error";
    if (HOST_OK.has(state)) return "ok";
    if (HOST_IDLE.has(state)) return "idle";
    return "progress";
  }

  function chartClass(c) {
    if (c.satisfied) return "ok";
    return c.missing || c.lastError ? "error" : "warn";
  }

  function badge(text, cls) {
    return el("span", { class: `badge st-${cls}` }, text);
  }

  // ---------------------------------------------------------------- paths

  const seg = encodeURIComponent;
  const planPath = (name) => `/plans/${seg(name)}`;
  const phasePath = (name) => `/phases/${seg(name)}`;

  // hostPath is the action URL of a host; it refuses segments that a URL
  // cannot carry as they are ("", "." and "..").
  function hostPath(h, action) {
    const parts = [h.cluster, h.namespace, h.name];
    if (parts.some((p) => !p || p === "." || p === "..")) throw new Error("this host cannot be addressed");
    return `/api/hosts/${parts.map(seg).join("/")}/${action}`;
  }

  // localLink answers a link of the server (Attention.link) if it is a path
  // of this site, else null.
  function localLink(link) {
    if (typeof link !== "string" || !link.startsWith("/") || link.startsWith("//") || link.includes("\\")) return null;
    return link;
  }

  // ---------------------------------------------------------------- errors and the fetch helper

  const errors = new Map(); // key -> message, shown in the page's banner

  function setError(key, message) {
    if (message) errors.set(key, message);
    else if (!errors.delete(key)) return;
    renderBanner();
  }

  function renderBanner() {
    const banner = $("banner");
    banner.replaceChildren(...[...errors].map(([key, message]) => el("p", {},
      el("span", {}, message), " ",
      el("button", { type: "button", class: "link", onclick: () => setError(key, null) }, "Dismiss"))));
    banner.hidden = errors.size === 0;
  }

  // api fetches JSON from the server. A failure is shown in the page's
  // banner under errorKey (cleared by the next success) and thrown.
  async function api(path, { method = "GET", body, signal, errorKey = "load" } = {}) {
    const opts = { method, cache: "no-store", credentials: "same-origin", signal, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    try {
      const resp = await fetch(path, opts);
      const text = await resp.text();
      let data = null;
      try { data = text ? JSON.parse(text) : null; } catch (e) { data = undefined; }
      if (!resp.ok) {
        const why = data && typeof data.error === "string" ? data.error : `${resp.status} ${resp.statusText}`;
        throw new Error(`${method} ${path}: ${why}`);
      }
      if (data === undefined) throw new Error(`${method} ${path}: the answer is not JSON`);
      setError(errorKey, null);
      return data;
    } catch (e) {
      if (e.name !== "AbortError") setError(errorKey, e.message.startsWith(method) ? e.message : `${method} ${path}: ${e.message}`);
      throw e;
    }
  }

  function notice(message) {
    const n = el("p", { class: "notice" }, message, " ",
      el("button", { type: "button", class: "link", onclick: () => n.remove() }, "Dismiss"));
    $("runs").prepend(n);
  }

  // ---------------------------------------------------------------- confirmation dialog

  // confirmAction asks in the page's dialog; Escape or Cancel answer false.
  function confirmAction(title, message, confirmLabel) {
    const dialog = $("confirm");
    if (dialog.open) return Promise.resolve(false);
    const before = document.activeElement;
    $("confirm-title").textContent = title;
    $("confirm-message").textContent = message;
    $("confirm-ok").textContent = confirmLabel;
    dialog.returnValue = "";
    dialog.showModal();
    $("confirm-cancel").focus();
    return new Promise((resolve) => {
      dialog.addEventListener("close", () => {
        if (before && before.isConnected) before.focus();
        resolve(dialog.returnValue === "confirm");
      }, { once: true });
    });
  }

  // ---------------------------------------------------------------- menu

  // openMenu shows the shared popup menu beside anchor with items
  // [{label, run}]; arrow keys move, Escape and Tab close it.
  function openMenu(anchor, label, items) {
    const menu = $("host-menu");
    closeMenu();
    const buttons = items.map((item) => el("button", {
      type: "button", role: "menuitem", tabindex: "-1",
      onclick: () => { closeMenu(); anchor.focus(); item.run(); },
    }, item.label));
    menu.setAttribute("aria-label", label);
    menu.replaceChildren(...buttons);
    menu.hidden = false;
    const r = anchor.getBoundingClientRect();
    menu.style.top = `${Math.min(r.bottom + 2, window.innerHeight - menu.offsetHeight - 4)}px`;
    menu.style.left = `${Math.max(4, Math.min(r.left, window.innerWidth - menu.offsetWidth - 4))}px`;
    anchor.setAttribute("aria-expanded", "true");
    menu.anchor = anchor;
    buttons[0].focus();
  }

  function closeMenu() {
    const menu = $("host-menu");
    if (menu.hidden) return;
    menu.hidden = true;
    if (menu.anchor) menu.anchor.setAttribute("aria-expanded", "false");
  }

  function onMenuKey(e) {
    const menu = $("host-menu");
    const items = [...menu.querySelectorAll("[role=menuitem]")];
    const i = items.indexOf(document.activeElement);
    const moves = { ArrowDown: i + 1, ArrowUp: i - 1, Home: 0, End: items.length - 1 };
    if (e.key in moves) {
      e.preventDefault();
      items[(moves[e.key] + items.length) % items.length].focus();
    } else if (e.key === "Escape" || e.key === "Tab") {
      e.preventDefault();
      closeMenu();
      if (menu.anchor) menu.anchor.focus();
    }
  }

  // ---------------------------------------------------------------- run progress panels

  const runs = new Map(); // run ID -> panel state

  // showRun opens (or finds) the progress panel of a run and loads it.
  function showRun(id, label) {
    let r = runs.get(id);
    if (!r) {
      r = { id, result: "running", events: [], keys: new Set(), loading: false, again: false };
      r.badge = badge("running", "progress");
      r.title = el("span", {}, label || `Run ${id}`);
      r.info = el("span", { class: "muted" });
      r.message = el("p", { class: "run-message" });
      r.list = el("ol", { class: "run-events" });
      r.panel = el("section", { class: "run", "aria-label": `Run ${id}` },
        el("header", {}, el("strong", {}, r.title), " ", r.badge, " ", r.info,
          el("button", { type: "button", class: "link close", "aria-label": `Close run ${id}`,
            onclick: () => { r.panel.remove(); runs.delete(id); } }, "Close")),
        r.message, r.list);
      runs.set(id, r);
      $("runs").prepend(r.panel);
    }
    loadRun(r);
    return r;
  }

  async function loadRun(r) {
    if (r.loading) { r.again = true; return; }
    r.loading = true;
    try {
      do {
        r.again = false;
        const run = await api(`/api/runs/${seg(r.id)}`, { errorKey: `run ${r.id}` }).catch(() => null);
        if (run && runs.get(r.id) === r) updateRun(r, run);
      } while (r.again);
    } finally {
      r.loading = false;
    }
  }

  function updateRun(r, run) {
    r.result = run.result || "unknown";
    r.title.textContent = `${run.kind || "run"} ${run.name || ""}`.trim();
    r.badge.textContent = r.result;
    r.badge.className = `badge st-${resultClass(r.result)}`;
    const start = parseTime(run.start);
    r.info.textContent = [start ? `started ${absFormat.format(start)}` : "", run.seconds ? duration(run.seconds) : "",
      run.by ? `by ${run.by}` : ""].filter(Boolean).join(" · ");
    r.message.textContent = run.message || "";
    const fresh = (run.events || []).filter((e) => !r.keys.has(eventKey(e)));
    if (fresh.length === 0) return;
    fresh.forEach((e) => r.keys.add(eventKey(e)));
    r.events = r.events.concat(fresh).sort((a, b) => timeValue(a.time) - timeValue(b.time)).slice(-500);
    r.list.replaceChildren(...r.events.map(eventItem));
    r.list.scrollTop = r.list.scrollHeight;
  }

  function addRunEvent(r, e) {
    const key = eventKey(e);
    if (r.keys.has(key)) return;
    r.keys.add(key);
    r.events.push(e);
    const atEnd = r.list.scrollTop + r.list.clientHeight >= r.list.scrollHeight - 4;
    r.list.appendChild(eventItem(e));
    if (r.events.length > 500) { r.events.shift(); r.list.firstChild.remove(); }
    if (atEnd) r.list.scrollTop = r.list.scrollHeight;
  }

  const timeValue = (t) => (parseTime(t) || new Date(0)).getTime();
  const eventKey = (e) => [e.time, e.phase, e.type, e.object, e.message].join("\u0000");

  function eventItem(e) {
    const d = parseTime(e.time);
    return el("li", { class: /warn|error|fail/i.test(e.type || "") ? "warn" : null },
      el("time", { datetime: d ? d.toISOString() : null }, d ? d.toLocaleTimeString() : "—"), " ",
      e.phase ? el("span", { class: "tag" }, e.phase) : null, " ",
      e.type ? el("span", { class: "muted" }, e.type) : null, " ",
      e.object ? el("code", {}, e.object) : null, " ", e.message || "");
  }

  function refreshRuns() {
    for (const r of runs.values()) if (r.result === "running") loadRun(r);
  }

  async function startRun(path, body, what) {
    const accepted = await api(path, { method: "POST", body, errorKey: "action" }).catch(() => null);
    if (accepted && accepted.runID) showRun(accepted.runID, what);
    else if (accepted) notice(accepted.message || `${what}: accepted`);
  }

  async function runPlan(plan, resumeFrom) {
    const what = resumeFrom ? `plan ${plan} from ${resumeFrom}` : `plan ${plan}`;
    if (!await confirmAction(`Run ${what}?`, `This runs the phases of plan ${plan}${resumeFrom ? `, starting at phase ${resumeFrom}` : ""}, against the live clusters.`, "Run")) return;
    await startRun(`/api/plans/${seg(plan)}/run`, resumeFrom ? { resumeFrom } : {}, what);
  }

  async function runPhase(phase) {
    if (!await confirmAction(`Run phase ${phase}?`, `This runs phase ${phase} against its cluster.`, "Run")) return;
    await startRun(`/api/phases/${seg(phase)}/run`, {}, `phase ${phase}`);
  }

  const HOST_ACTIONS = [["power-on", "Power on"], ["power-off", "Power off"], ["reboot", "Reboot"], ["inspect", "Inspect"]];

  async function hostAction(h, action, label) {
    const who = `${h.namespace}/${h.name}`;
    if (!await confirmAction(`${label} ${who}?`, `${label} host ${who} of cluster ${h.cluster}.`, label)) return;
    let path;
    try { path = hostPath(h, action); } catch (e) { setError("action", `${label} ${who}: ${e.message}`); return; }
    const res = await api(path, { method: "POST", body: {}, errorKey: "action" }).catch(() => null);
    if (res) notice(`${label} ${who}: ${res.message || "accepted"}`);
  }

  // ---------------------------------------------------------------- info, header and navigation

  let info = { site: "Airship", allowActions: false, plans: [] };
  const allowActions = () => info.allowActions === true;

  async function loadInfo() {
    try {
      const got = await api("/api/info", { errorKey: "info" });
      if (got) info = { ...got, plans: Array.isArray(got.plans) ? got.plans : [] };
    } catch (e) { /* shown in the banner */ }
    $("site").textContent = info.site || "Airship";
    $("context").textContent = [info.context ? `context ${info.context}` : "", info.version || ""].filter(Boolean).join(" · ");
    renderNav();
  }

  function renderNav() {
    const links = [["/overview", "Overview", "overview", ""],
      ...info.plans.map((p) => [planPath(p), `Plan ${p}`, "plan", p]),
      ["/hosts", "Hosts", "hosts", ""], ["/clusters", "Clusters", "clusters", ""], ["/charts", "Charts", "charts", ""],
      ["/certificates", "Certificates", "certificates", ""], ["/audit", "Audit", "audit", ""]];
    const route = matchRoute(location.pathname) || {};
    $("nav").replaceChildren(...links.map(([href, label, name, param]) => el("li", {},
      el("a", { href, "aria-current": route.name === name && route.param === param ? "page" : null }, label))));
  }

  function setTitle(title) {
    document.title = `${title} · ${info.site || "Airship"}`;
  }

  // ---------------------------------------------------------------- router

  const ROUTES = [
    [/^\/(?:overview)?$/, "overview"], [/^\/plans\/([^/]+)$/, "plan"], [/^\/phases\/([^/]+)$/, "phase"],
    [/^\/hosts$/, "hosts"], [/^\/clusters$/, "clusters"], [/^\/charts$/, "charts"],
    [/^\/certificates$/, "certificates"], [/^\/audit$/, "audit"],
  ];

  function matchRoute(pathname) {
    for (const [re, name] of ROUTES) {
      const m = re.exec(pathname);
      if (!m) continue;
      try { return { name, param: m[1] === undefined ? "" : decodeURIComponent(m[1]) }; } catch (e) { return null; }
    }
    return null;
  }

  let current = null; // the mounted page: {page, param, query, root, body, state, ...}

  function showRoute() {
    if (current) {
      current.abort.abort();
      if (current.page.unmount) current.page.unmount(current);
    }
    closeMenu();
    errors.delete("load");
    errors.delete("action");
    renderBanner();
    const route = matchRoute(location.pathname) || { name: "notFound", param: "" };
    const page = PAGES[route.name];
    const ctx = { page, param: route.param, query: new URLSearchParams(location.search), abort: new AbortController(),
      state: {}, loading: false, again: false, root: el("div", { class: `page page-${route.name}` }) };
    current = ctx;
    setTitle(page.title(ctx.param));
    page.mount(ctx);
    $("page").replaceChildren(ctx.root);
    renderNav();
    if (page.api) load(ctx);
  }

  function navigate(url) {
    history.pushState(null, "", url);
    showRoute();
    window.scrollTo(0, 0);
    $("main").focus({ preventScroll: true });
  }

  function onLinkClick(e) {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = e.target.closest && e.target.closest("a");
    if (!a || a.hasAttribute("download") || (a.getAttribute("target") || "_self") !== "_self") return;
    const href = a.getAttribute("href");
    if (!href || href.startsWith("#")) return;
    const url = new URL(href, location.href);
    if (url.origin !== location.origin || !matchRoute(url.pathname)) return;
    e.preventDefault();
    navigate(url.pathname + url.search + url.hash);
  }

  // load fetches the page's JSON; a change that comes while it is under
  // way makes it fetch once more after, not once per change.
  async function load(ctx) {
    if (ctx.loading) { ctx.again = true; return; }
    ctx.loading = true;
    try {
      do {
        ctx.again = false;
        let data;
        try {
          data = await api(ctx.page.api(ctx.param), { signal: ctx.abort.signal });
        } catch (e) {
          if (current === ctx && !ctx.data) (ctx.status || ctx.body).replaceChildren(el("p", { class: "muted" }, "No data."));
          continue;
        }
        if (current !== ctx) return;
        ctx.data = data;
        keepFocus(ctx.root, () => ctx.page.update(ctx, data));
      } while (ctx.again && current === ctx);
    } finally {
      ctx.loading = false;
    }
  }

  // ---------------------------------------------------------------- live updates

  const live = { lost: false, retry: 0, wait: 5000 };

  function setLive(ok) {
    const b = $("live");
    b.textContent = ok ? "live" : "disconnected, reconnecting…";
    b.className = `badge st-${ok ? "ok" : "warn"}`;
  }

  function connect() {
    const es = new EventSource("/api/events");
    es.addEventListener("open", () => {
      setLive(true);
      live.wait = 5000;
      if (live.lost) {
        live.lost = false;
        refreshAll();
      }
    });
    es.addEventListener("error", () => {
      setLive(false);
      live.lost = true;
      if (es.readyState === EventSource.CLOSED) { // the server refused the stream: try again later
        clearTimeout(live.retry);
        live.retry = setTimeout(connect, live.wait);
        live.wait = Math.min(live.wait * 2, 60000);
      }
    });
    es.addEventListener("change", (e) => onChange(parseData(e).topics));
    es.addEventListener("runevent", (e) => {
      const d = parseData(e);
      const r = runs.get(d.runID);
      if (r && d.event) addRunEvent(r, d.event);
    });
  }

  function parseData(e) {
    try { return JSON.parse(e.data) || {}; } catch (err) { return {}; }
  }

  function onChange(topics) {
    if (!Array.isArray(topics)) return;
    if (topics.includes("runs")) refreshRuns();
    if (!current || !current.page.api) return;
    const wants = current.page.topics;
    if (!wants || topics.some((t) => wants.includes(t))) load(current);
  }

  async function refreshAll() {
    await loadInfo();
    refreshRuns();
    if (current && current.page.api) load(current);
  }

  // ---------------------------------------------------------------- building blocks of pages

  // table makes a table with the given column headings and rows.
  function table(caption, headings, rows, attrs) {
    return el("div", { class: "scroll" }, el("table", attrs || {},
      caption ? el("caption", {}, caption) : null,
      el("thead", {}, el("tr", {}, headings.map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, rows)));
  }

  function cells(...values) {
    return values.map((v) => el("td", {}, v === undefined || v === null || v === "" ? "—" : v));
  }

  function empty(text) {
    return el("p", { class: "muted" }, text);
  }

  function facts(pairs) {
    return el("dl", { class: "facts" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "")
      .map(([k, v]) => el("div", {}, el("dt", {}, k), el("dd", {}, v))));
  }

  // basic is the mount of a page that is a heading and a body.
  function basic(heading) {
    return (ctx) => {
      ctx.body = el("div", { class: "body" }, empty("Loading…"));
      append(ctx.root, [el("h1", {}, typeof heading === "function" ? heading(ctx.param) : heading), ctx.body]);
    };
  }

  function lastRunText(run) {
    if (!run) return "never run";
    const start = parseTime(run.start);
    return [run.result, duration(run.seconds), start ? relative(start) : ""].filter(Boolean).join(" · ");
  }

  const asList = (v) => (Array.isArray(v) ? v : []);

  // ---------------------------------------------------------------- overview

  const SEVERITY = { error: ["error", "✖", "Error"], warning: ["warn", "▲", "Warning"] };

  function updateOverview(ctx, o) {
    const attention = asList(o.attention);
    const counts = Object.entries(o.counts || {});
    const activity = asList(o.activity);
    setChildren(ctx.body,
      el("section", { "aria-labelledby": "h-attention" }, el("h2", { id: "h-attention" }, "Needs attention"),
        attention.length ? el("ul", { class: "attention" }, attention.map(attentionItem))
          : el("p", {}, badge("✔ all well", "ok"), " Nothing needs attention.")),
      counts.length ? el("section", { "aria-labelledby": "h-counts" }, el("h2", { id: "h-counts" }, "Counts"),
        el("dl", { class: "counts" }, counts.map(countTile))) : null,
      el("section", { "aria-labelledby": "h-activity" }, el("h2", { id: "h-activity" }, "Recent activity"),
        activity.length ? table(null, ["Time", "Cluster", "Type", "Object", "Reason", "Message"], activity.map(activityRow))
          : empty("No recent activity.")));
  }

  function attentionItem(a) {
    const [cls, icon, label] = SEVERITY[a.severity] || ["idle", "•", a.severity || "Note"];
    const link = localLink(a.link);
    const what = `${a.kind || ""} ${a.name || ""}`.trim();
    return el("li", { class: `sev-${cls}` },
      el("span", { class: `badge st-${cls}` }, el("span", { "aria-hidden": "true" }, icon), ` ${label}`), " ",
      link ? el("a", { href: link, "data-focus": `att:${link}:${what}` }, what) : el("strong", {}, what),
      a.cluster ? el("span", { class: "muted" }, ` in ${a.cluster}`) : null,
      el("span", {}, `: ${a.message || ""}`));
  }

  function countTile([key, n]) {
    const page = key.split(/[.:/ ]/)[0];
    const known = ["hosts", "clusters", "charts", "certificates", "audit", "plans"].includes(page);
    const label = known && page !== "plans" ? el("a", { href: `/${page}` }, key) : key;
    return el("div", {}, el("dt", {}, label), el("dd", {}, String(n)));
  }

  function activityRow(a) {
    return el("tr", { class: a.type === "Warning" ? "row-warn" : null },
      cells(timeEl(a.time), a.cluster, a.type === "Warning" ? badge("Warning", "warn") : a.type, a.object, a.reason, a.message));
  }

  // ---------------------------------------------------------------- plan

  const BOX = { w: 232, h: 110, gapX: 76, gapY: 22, pad: 14 };

  function mountPlan(ctx) {
    basic((p) => `Plan ${p}`)(ctx);
    if (allowActions()) {
      ctx.root.insertBefore(el("p", { class: "actions" }, el("button", { type: "button", class: "primary",
        onclick: () => runPlan(ctx.param) }, "Run plan")), ctx.body);
    }
  }

  function updatePlan(ctx, plan) {
    const phases = asList(plan.phases);
    setChildren(ctx.body,
      plan.description ? el("p", {}, plan.description) : null,
      phases.length ? el("div", { class: "graph-wrap" }, planGraph(plan, phases)) : empty("This plan has no phases."),
      el("h2", {}, "Phases"),
      table(null, ["Phase", "Cluster", "Executor", "State", "Objects", "Last run", "Message", allowActions() ? "Actions" : null].filter(Boolean),
        phases.map((p) => phaseRow(ctx, p))));
  }

  // layoutWaves answers each phase's position: one column per wave; phases
  // no wave names go in a last column.
  function layoutWaves(plan, phases) {
    const waves = asList(plan.waves).map((w) => asList(w).filter((i) => Number.isInteger(i) && i >= 0 && i < phases.length));
    const placed = new Set(waves.flat());
    const rest = phases.map((_, i) => i).filter((i) => !placed.has(i));
    if (rest.length) waves.push(rest);
    const pos = new Map();
    waves.forEach((wave, col) => wave.forEach((i, row) => {
      if (!pos.has(phases[i].name)) pos.set(phases[i].name, { x: BOX.pad + col * (BOX.w + BOX.gapX), y: BOX.pad + row * (BOX.h + BOX.gapY) });
    }));
    const cols = Math.max(1, waves.length);
    const rows = Math.max(1, ...waves.map((w) => w.length));
    return { pos, width: 2 * BOX.pad + cols * BOX.w + (cols - 1) * BOX.gapX, height: 2 * BOX.pad + rows * BOX.h + (rows - 1) * BOX.gapY };
  }

  function planGraph(plan, phases) {
    const { pos, width, height } = layoutWaves(plan, phases);
    const edges = svg("g", { class: "edges" });
    for (const p of phases) {
      const to = pos.get(p.name);
      for (const dep of asList(p.dependsOn)) {
        const from = pos.get(dep);
        if (to && from) edges.appendChild(svg("path", { d: edgePath(from, to), "marker-end": "url(#arrow)" }));
      }
    }
    return svg("svg", { class: "graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "group",
      "aria-label": `Phases of plan ${plan.name || ""}, by wave` },
    svg("defs", {}, svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }))),
    edges, phases.filter((p) => pos.has(p.name)).map((p) => phaseBox(p, pos.get(p.name))));
  }

  function edgePath(from, to) {
    const x1 = from.x + BOX.w, y1 = from.y + BOX.h / 2, x2 = to.x - 2, y2 = to.y + BOX.h / 2;
    const bend = Math.max(30, Math.abs(x2 - x1) / 2);
    return `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
  }

  function phaseBox(p, at) {
    const state = p.state || "unknown";
    const run = p.lastRun;
    const start = run && parseTime(run.start);
    const label = `Phase ${p.name}, ${state}${p.cluster ? `, cluster ${p.cluster}` : ""}, last run: ${lastRunText(p.lastRun)}`;
    return svg("a", { href: phasePath(p.name), class: `node st-${phaseClass(state)}`, "data-phase": p.name, "data-state": state,
      "data-focus": `box:${p.name}`, "aria-label": label },
    svg("title", {}, p.message ? `${label}. ${p.message}` : label),
    svg("g", { transform: `translate(${at.x},${at.y})` },
      svg("rect", { class: "box", width: BOX.w, height: BOX.h, rx: 6 }),
      svg("rect", { class: "stripe", width: 6, height: BOX.h, rx: 3 }),
      svg("text", { x: 14, y: 21, class: "name" }, clip(p.name, 27)),
      svg("text", { x: 14, y: 40, class: "sub" }, clip(p.cluster ? `cluster ${p.cluster}` : "no cluster", 32)),
      svg("text", { x: 14, y: 60, class: "state" }, clip(state, 30)),
      svg("text", { x: 14, y: 80, class: "sub" }, clip(run ? `last run ${run.result || "?"}, ${duration(run.seconds)}` : "never run", 34)),
      run ? svg("text", { x: 14, y: 98, class: "sub" }, start ? relative(start) : "") : null));
  }

  function phaseRow(ctx, p) {
    const state = p.state || "unknown";
    const run = p.lastRun;
    return el("tr", { "data-phase": p.name, "data-state": state },
      el("th", { scope: "row" }, el("a", { href: phasePath(p.name), "data-focus": `link:${p.name}` }, p.name)),
      cells(p.cluster, p.executor, badge(state, phaseClass(state)), objectCounts(p),
        run ? [badge(run.result || "?", resultClass(run.result)), ` ${duration(run.seconds)}, `, timeEl(run.start)] : "never",
        p.message),
      allowActions() ? el("td", {}, el("button", { type: "button", "data-focus": `from:${p.name}`,
        onclick: () => runPlan(ctx.param, p.name) }, "Run from here")) : null);
  }

  // objectCounts says how many of a phase's objects are applied, ready and
  // drifted (a PlanPhase's counts; a PhaseDetail lists them in objectList).
  function objectCounts(p) {
    const { objects: total = 0, applied = 0, ready = 0, drifted = 0 } = p;
    if (!total) return "no objects";
    const text = `${applied}/${total} applied, ${ready}/${total} ready`;
    return drifted ? [text, ", ", el("span", { class: "warn-text" }, `${drifted} drifted`)] : text;
  }

  // ---------------------------------------------------------------- phase

  const PHASE_TABS = [["objects", "Objects"], ["rendered", "Rendered"], ["executor", "Executor"], ["sources", "Sources"]];

  function mountPhase(ctx) {
    ctx.state.tab = "objects";
    ctx.head = el("div", { class: "phase-head" }, empty("Loading…"));
    ctx.status = ctx.head;
    ctx.tabs = new Map();
    const tablist = el("div", { role: "tablist", "aria-label": "Phase details", onkeydown: (e) => onTabKey(ctx, e) });
    const panels = PHASE_TABS.map(([id, label]) => {
      const tab = el("button", { type: "button", role: "tab", id: `tab-${id}`, "aria-controls": `panel-${id}`,
        onclick: () => selectTab(ctx, id) }, label);
      const panel = el("div", { role: "tabpanel", id: `panel-${id}`, "aria-labelledby": `tab-${id}`, tabindex: "0" });
      tablist.appendChild(tab);
      ctx.tabs.set(id, { tab, panel, label });
      return panel;
    });
    ctx.body = el("div", { class: "body" }, tablist, panels);
    append(ctx.root, [el("h1", {}, `Phase ${ctx.param}`), ctx.head, ctx.body]);
    selectTab(ctx, ctx.state.tab);
  }

  function selectTab(ctx, id, focus) {
    ctx.state.tab = id;
    for (const [tid, { tab, panel }] of ctx.tabs) {
      tab.setAttribute("aria-selected", String(tid === id));
      tab.tabIndex = tid === id ? 0 : -1;
      panel.hidden = tid !== id;
    }
    if (focus) ctx.tabs.get(id).tab.focus();
  }

  function onTabKey(ctx, e) {
    const ids = PHASE_TABS.map(([id]) => id);
    const i = ids.indexOf(ctx.state.tab);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: ids.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    selectTab(ctx, ids[(to + ids.length) % ids.length], true);
  }

  function updatePhase(ctx, d) {
    const state = d.state || "unknown";
    const run = d.lastRun;
    setChildren(ctx.head,
      el("p", { "data-phase": d.name, "data-state": state }, badge(state, phaseClass(state)), " ", d.message || ""),
      facts([["Cluster", d.cluster], ["Executor", d.executor], ["Objects", objectCounts(d)],
        ["Depends on", asList(d.dependsOn).length ? asList(d.dependsOn).map((n, i) => [i ? ", " : "", el("a", { href: phasePath(n) }, n)]) : null],
        ["Last run", run ? [badge(run.result || "?", resultClass(run.result)), ` ${duration(run.seconds)}, `, timeEl(run.start),
          run.by ? ` by ${run.by}` : "", run.message ? ` — ${run.message}` : "", " ",
          run.id ? el("button", { type: "button", class: "link", onclick: () => showRun(run.id, `phase ${d.name}`) }, "Show progress") : null]
          : "never"]]),
      allowActions() ? el("p", { class: "actions" }, el("button", { type: "button", class: "primary", "data-focus": "run-phase",
        onclick: () => runPhase(ctx.param) }, "Run phase")) : null);
    const objects = asList(d.objectList);
    const drifted = objects.filter((o) => o.drifted).length;
    ctx.tabs.get("objects").tab.textContent = `Objects (${objects.length}${drifted ? `, ${drifted} drifted` : ""})`;
    ctx.tabs.get("objects").panel.replaceChildren(objects.length
      ? table(null, ["Object", "Applied", "Ready", "Drifted", "Message"], objects.map(objectRow))
      : empty("No objects."));
    ctx.tabs.get("rendered").panel.replaceChildren(d.renderError
      ? el("p", { class: "error-text" }, `Cannot render: ${d.renderError}`)
      : el("pre", {}, d.rendered || ""));
    ctx.tabs.get("executor").panel.replaceChildren(el("pre", {}, d.executorDocument || ""));
    ctx.tabs.get("sources").panel.replaceChildren(facts([["Bundle path", d.bundlePath ? el("code", {}, d.bundlePath) : null]]),
      asList(d.sources).length ? el("ul", { class: "sources" }, asList(d.sources).map(sourceItem))
        : empty("No sources."));
  }

  // sourceItem is a file of the phase's kustomize tree, its text folded.
  function sourceItem(f) {
    const name = [el("span", { class: "muted" }, f.kind || "", " "), el("code", {}, f.path || "")];
    if (f.text) return el("li", {}, el("details", {}, el("summary", {}, name), el("pre", {}, f.text)));
    return el("li", {}, name, f.note ? [" ", el("span", { class: "muted" }, `(${f.note})`)] : null);
  }

  function objectRow(o) {
    return el("tr", { class: o.drifted ? "row-warn" : null },
      el("th", { scope: "row" }, el("code", {}, o.id)),
      cells(yesNo(o.applied), o.ready ? "yes" : badge("not ready", "progress"), o.drifted ? badge("drifted", "warn") : "no",
        asList(o.diff).length ? [o.message || "", driftList(o.diff)] : o.message));
  }

  // driftList shows where a drifted object differs: "path: live → applied".
  function driftList(lines) {
    return el("ul", { class: "drift", "aria-label": "live against rendered" }, asList(lines).map((l) => el("li", {}, el("code", {}, l))));
  }

  // ---------------------------------------------------------------- hosts

  const HOST_COLS = [
    ["cluster", "Cluster", (h) => h.cluster],
    ["name", "Namespace/name", (h) => `${h.namespace || ""}/${h.name || ""}`],
    ["state", "State", (h) => h.state],
    ["status", "Operational status", (h) => h.operationalStatus],
    ["power", "Power", (h) => h.power || "unknown"],
    ["online", "Online", (h) => yesNo(h.online)],
    ["sip", "SIP cluster", (h) => h.sipCluster],
    ["role", "Role", (h) => (h.role || "") + (h.standby ? " (standby)" : "")],
    ["rack", "Rack", (h) => h.rack],
    ["consumer", "Consumer", (h) => h.consumer],
    ["machine", "Machine", (h) => h.machine],
    ["node", "Node", (h) => h.node],
    ["error", "Error", (h) => (h.errorType ? `${h.errorType}: ${h.errorMessage || ""}` : h.errorMessage)],
  ].map(([key, label, get]) => ({ key, label, get: (h) => get(h) || "" }));

  const hostKey = (h) => `${h.cluster}/${h.namespace}/${h.name}`;

  // Up to ROW_LIMIT rows are all in the table; past it only the rows in
  // view (and OVERSCAN more each side) are, between two spacer rows, so
  // that 10,000 hosts scroll, filter and update as fast as 100.
  const ROW_LIMIT = 1000;
  const OVERSCAN = 20;

  function mountHosts(ctx) {
    const s = ctx.state;
    s.q = ctx.query.get("q") || "";
    s.sort = HOST_COLS.some((c) => c.key === ctx.query.get("sort")) ? ctx.query.get("sort") : "";
    s.dir = ctx.query.get("dir") === "desc" ? "desc" : "asc";
    s.rows = [];
    s.byKey = new Map();
    s.cache = new Map(); // host key -> {json, row}: a row is rebuilt only when its host changed
    s.rowH = 31;
    s.filter = el("input", { type: "search", id: "host-filter", value: s.q, placeholder: "Filter (press /)",
      "aria-describedby": "host-count", autocomplete: "off", spellcheck: "false", oninput: () => onFilterInput(ctx) });
    s.count = el("span", { id: "host-count", role: "status" }, "Loading…");
    ctx.status = s.count;
    s.heads = HOST_COLS.map((c) => el("th", { scope: "col" }, el("button", { type: "button", class: "sort", onclick: () => sortBy(ctx, c.key) },
      c.label, el("span", { class: "arrow", "aria-hidden": "true" }))));
    const actions = allowActions();
    const colKeys = HOST_COLS.map((c) => c.key);
    if (actions) colKeys.splice(2, 0, "actions");
    s.pads = [0, 1].map(() => el("tr", { class: "pad", "aria-hidden": "true" }, el("td", { colspan: colKeys.length })));
    s.tbody = el("tbody", { onclick: (e) => onHostClick(ctx, e) });
    s.thead = el("thead", {}, el("tr", {}, s.heads.slice(0, 2), actions ? el("th", { scope: "col" }, "Actions") : null, s.heads.slice(2)));
    s.table = el("table", { class: "hosts" }, el("colgroup", {}, colKeys.map((k) => el("col", { class: `c-${k}` }))), s.thead, s.tbody);
    s.scroller = el("div", { class: "scroll tall", onscroll: () => { if (s.windowed) scheduleRender(ctx); } }, s.table);
    s.none = el("p", { class: "muted", hidden: true }, "No host matches the filter.");
    ctx.body = el("div", { class: "body" },
      el("div", { class: "toolbar" }, el("label", { for: "host-filter" }, "Filter "), s.filter, " ", s.count), s.scroller, s.none);
    append(ctx.root, [el("h1", {}, "Hosts"), ctx.body]);
    s.onKey = (e) => {
      const t = e.target;
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey || t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) return;
      e.preventDefault();
      s.filter.focus();
      s.filter.select();
      // A driver that sends the character as an event of its own would
      // type it into the filter: eat it, up to the key's release.
      const eat = (k) => { if (k.key === "/") k.preventDefault(); };
      document.addEventListener("keypress", eat, { capture: true, once: true });
      document.addEventListener("keyup", () => document.removeEventListener("keypress", eat, true), { once: true });
    };
    s.onResize = () => scheduleRender(ctx);
    document.addEventListener("keydown", s.onKey);
    window.addEventListener("resize", s.onResize);
    showSort(ctx);
  }

  function unmountHosts(ctx) {
    document.removeEventListener("keydown", ctx.state.onKey);
    window.removeEventListener("resize", ctx.state.onResize);
    cancelAnimationFrame(ctx.state.frame);
    clearTimeout(ctx.state.typing);
  }

  function updateHosts(ctx, hosts) {
    const s = ctx.state;
    const cache = new Map();
    s.rows = asList(hosts).map((h) => {
      const key = hostKey(h);
      const json = JSON.stringify(h);
      const old = s.cache.get(key);
      const row = old && old.json === json ? old.row : { h, key, values: HOST_COLS.map((c) => c.get(h)), tr: null };
      row.text = row.text || row.values.join("\n").toLowerCase();
      cache.set(key, { json, row });
      return row;
    });
    s.cache = cache;
    s.byKey = new Map(s.rows.map((r) => [r.key, r]));
    s.sorted = null;
    s.shown = null;
    scheduleRender(ctx);
  }

  function onFilterInput(ctx) {
    const s = ctx.state;
    clearTimeout(s.typing);
    s.typing = setTimeout(() => {
      s.q = s.filter.value;
      s.shown = null;
      s.scroller.scrollTop = 0;
      syncHostsURL(ctx);
      scheduleRender(ctx);
    }, 100);
  }

  function sortBy(ctx, key) {
    const s = ctx.state;
    s.dir = s.sort === key && s.dir === "asc" ? "desc" : "asc";
    s.sort = key;
    s.sorted = null;
    s.shown = null;
    s.scroller.scrollTop = 0;
    showSort(ctx);
    syncHostsURL(ctx);
    scheduleRender(ctx);
  }

  function showSort(ctx) {
    const s = ctx.state;
    HOST_COLS.forEach((c, i) => {
      const on = s.sort === c.key;
      s.heads[i].setAttribute("aria-sort", on ? (s.dir === "asc" ? "ascending" : "descending") : "none");
      s.heads[i].querySelector(".arrow").textContent = on ? (s.dir === "asc" ? " ▲" : " ▼") : "";
    });
  }

  function syncHostsURL(ctx) {
    const s = ctx.state;
    const q = new URLSearchParams();
    if (s.q) q.set("q", s.q);
    if (s.sort) { q.set("sort", s.sort); q.set("dir", s.dir); }
    const query = q.toString();
    history.replaceState(null, "", `/hosts${query ? `?${query}` : ""}`);
  }

  // scheduleRender renders the hosts table at the next animation frame,
  // once however many times it is called before.
  function scheduleRender(ctx) {
    if (ctx.state.frame) return;
    ctx.state.frame = requestAnimationFrame(() => {
      ctx.state.frame = 0;
      if (current === ctx) renderHosts(ctx);
    });
  }

  function shownRows(s) {
    if (s.shown) return s.shown;
    if (!s.sorted) {
      const col = HOST_COLS.findIndex((c) => c.key === s.sort);
      const sign = s.dir === "desc" ? -1 : 1;
      s.sorted = col < 0 ? s.rows : s.rows.slice().sort((a, b) =>
        sign * (collator.compare(a.values[col], b.values[col]) || collator.compare(a.key, b.key)));
    }
    const terms = s.q.toLowerCase().split(/\s+/).filter(Boolean);
    s.shown = terms.length ? s.sorted.filter((r) => terms.every((t) => r.text.includes(t))) : s.sorted;
    return s.shown;
  }

  function renderHosts(ctx) {
    const s = ctx.state;
    const shown = shownRows(s);
    s.windowed = shown.length > ROW_LIMIT;
    let start = 0;
    let end = shown.length;
    if (s.windowed) {
      const top = Math.max(0, s.scroller.scrollTop - s.thead.offsetHeight);
      start = Math.max(0, Math.floor(top / s.rowH) - OVERSCAN);
      end = Math.min(shown.length, start + Math.ceil(s.scroller.clientHeight / s.rowH) + 2 * OVERSCAN);
    }
    s.table.setAttribute("aria-rowcount", String(shown.length + 1));
    s.pads[0].style.height = `${start * s.rowH}px`;
    s.pads[1].style.height = `${(shown.length - end) * s.rowH}px`;
    const trs = [s.pads[0]];
    for (let i = start; i < end; i++) {
      const r = shown[i];
      if (!r.tr) r.tr = hostRow(r.h);
      r.tr.setAttribute("aria-rowindex", String(i + 2));
      trs.push(r.tr);
    }
    trs.push(s.pads[1]);
    const active = document.activeElement;
    const activeRow = s.tbody.contains(active) ? active.closest("tr").getAttribute("data-host") : null;
    patchRows(s.tbody, trs);
    if (activeRow && !active.isConnected) { // its host changed: focus the new row's button
      const r = s.byKey.get(activeRow);
      const button = r && r.tr && r.tr.isConnected && r.tr.querySelector("button");
      if (button) button.focus({ preventScroll: true });
    }
    s.count.textContent = `${shown.length} of ${plural(s.rows.length, "host")}`;
    s.none.hidden = shown.length > 0 || s.rows.length === 0;
    const first = trs[1];
    if (s.windowed && first && first.offsetHeight && Math.abs(first.offsetHeight - s.rowH) > 0.5) {
      s.rowH = first.offsetHeight; // measured once the rows are laid out
      scheduleRender(ctx);
    }
  }

  // patchRows makes tbody's rows trs, moving only the rows that are not
  // already in place: a change of one host touches one row.
  function patchRows(tbody, trs) {
    if (tbody.rows.length === 0) {
      const frag = document.createDocumentFragment();
      trs.forEach((tr) => frag.appendChild(tr));
      tbody.appendChild(frag);
      return;
    }
    const want = new Set(trs);
    for (const tr of [...tbody.rows]) if (!want.has(tr)) tr.remove();
    let at = tbody.firstChild;
    for (const tr of trs) {
      if (at === tr) at = at.nextSibling;
      else tbody.insertBefore(tr, at);
    }
  }

  // hostRow builds a row of the hosts table; the actions column, if any,
  // comes after the name so that it is in view without scrolling.
  function hostRow(h) {
    const cls = hostClass(h);
    const tr = document.createElement("tr");
    tr.setAttribute("data-host", hostKey(h));
    tr.setAttribute("data-state", h.state || "");
    if (cls === "error") tr.className = "row-error";
    for (const c of HOST_COLS) {
      const v = c.get(h);
      const cell = tr.appendChild(document.createElement(c.key === "name" ? "th" : "td"));
      if (c.key === "name") cell.scope = "row";
      if (v) cell.title = v; // cells cut with an ellipsis show all on hover
      if (c.key === "state") cell.appendChild(badge(v || "unknown", cls));
      else if (c.key === "status" && v.toLowerCase() === "error") cell.appendChild(badge(v, "error"));
      else if (c.key === "error" && v) { cell.className = "error-text"; cell.textContent = v; }
      else cell.textContent = v;
      if (c.key === "name" && allowActions()) {
        tr.insertCell().appendChild(el("button", { type: "button", class: "row-menu", "aria-haspopup": "menu", "aria-expanded": "false",
          "aria-label": `Actions for ${h.namespace}/${h.name}` }, "Actions ▾"));
      }
    }
    return tr;
  }

  function onHostClick(ctx, e) {
    const button = e.target.closest("button.row-menu");
    if (!button) return;
    const row = ctx.state.byKey.get(button.closest("tr").getAttribute("data-host"));
    if (!row) return;
    const h = row.h;
    openMenu(button, `Actions for ${h.namespace}/${h.name}`,
      HOST_ACTIONS.map(([action, label]) => ({ label, run: () => hostAction(h, action, label) })));
  }

  // ---------------------------------------------------------------- clusters

  function updateClusters(ctx, list) {
    const clusters = asList(list);
    const byName = new Map(clusters.map((c) => [c.name, c]));
    const children = new Map();
    const roots = [];
    for (const c of clusters) {
      if (c.parent && c.parent !== c.name && byName.has(c.parent)) {
        if (!children.has(c.parent)) children.set(c.parent, []);
        children.get(c.parent).push(c);
      } else roots.push(c);
    }
    const seen = new Set();
    const branch = (c) => {
      if (seen.has(c.name)) return null;
      seen.add(c.name);
      const kids = (children.get(c.name) || []).map(branch).filter(Boolean);
      return el("li", {}, clusterCard(c), kids.length ? el("ul", { class: "tree" }, kids) : null);
    };
    const items = roots.map(branch).filter(Boolean);
    items.push(...clusters.filter((c) => !seen.has(c.name)).map(branch).filter(Boolean)); // parents in a cycle
    ctx.body.replaceChildren(items.length ? el("ul", { class: "tree root" }, items) : empty("No clusters."));
  }

  function clusterCard(c) {
    const nodes = asList(c.nodes);
    const moved = asList(c.moved);
    return el("article", { class: "card", "data-cluster": c.name },
      el("h2", {}, c.name, " ", c.reachable ? badge("reachable", "ok") : badge("unreachable", "error")),
      facts([["Built from", c.parent], ["Server", c.server ? el("code", {}, c.server) : null], ["Version", c.version],
        ["Kubeconfig sources", asList(c.kubeconfigSources).join(", ")], ["Message", c.message]]),
      nodes.length ? table(`Nodes of ${c.name}`, ["Node", "Ready", "Kubelet", "Roles", "Provider ID"], nodes.map((n) =>
        el("tr", {}, el("th", { scope: "row" }, n.name), cells(n.ready ? badge("ready", "ok") : badge("not ready", "error"),
          n.kubeletVersion, n.roles, n.providerID)))) : empty("No nodes."),
      moved.length ? table(`Namespaces moved into ${c.name}`, ["Namespace", "Phase", "From", "Done"], moved.map((m) =>
        el("tr", {}, el("th", { scope: "row" }, m.namespace), cells(el("a", { href: phasePath(m.phase) }, m.phase), m.from,
          m.done ? badge("done", "ok") : badge("not yet", "progress"))))) : null);
  }

  // ---------------------------------------------------------------- charts

  function updateCharts(ctx, list) {
    const manifests = asList(list);
    ctx.body.replaceChildren(...(manifests.length ? manifests.map(manifestCard) : [empty("No Armada manifests.")]));
  }

  function manifestCard(m) {
    return el("article", { class: "card" },
      el("h2", {}, `${m.namespace}/${m.name}`, " ", m.satisfied ? badge("satisfied", "ok") : badge("not satisfied", "warn")),
      facts([["Cluster", m.cluster], ["Summary", m.summary]]),
      asList(m.groups).map((g) => el("section", { class: g.missing ? "group missing" : "group" },
        el("h3", {}, `Group ${g.name}`, " ", g.missing ? badge("missing", "error") : g.satisfied ? badge("satisfied", "ok") : badge("not satisfied", "warn")),
        asList(g.charts).length ? table(null, ["Chart", "Release", "Namespace", "State", "Satisfied", "Revision", "Helm status", "Last error"],
          asList(g.charts).map(chartRow)) : empty("No charts."))));
  }

  function chartRow(c) {
    const cls = chartClass(c);
    const state = c.state || c.targetState ? `${c.state || "—"} → ${c.targetState || "—"}` : "";
    return el("tr", { class: cls === "error" ? "row-error" : null },
      el("th", { scope: "row" }, c.name, c.missing ? [" ", badge("missing", "error")] : null),
      cells(c.release, c.namespace, state, badge(c.satisfied ? "satisfied" : "not satisfied", cls),
        c.revision ? String(c.revision) : "", c.helmStatus, c.lastError ? el("span", { class: "error-text" }, c.lastError) : ""));
  }

  // ---------------------------------------------------------------- certificates

  function updateCertificates(ctx, list) {
    const certs = asList(list).slice().sort((a, b) =>
      (timeValue(a.notAfter) || Infinity) - (timeValue(b.notAfter) || Infinity) || collator.compare(a.name || "", b.name || ""));
    ctx.body.replaceChildren(certs.length ? table(null, ["Name", "Kind", "CA", "Subject", "Hosts", "Expires", "Days left", "Generated", "Status"],
      certs.map(certRow)) : empty("No certificates."));
  }

  function certRow(c) {
    const d = parseTime(c.notAfter);
    const status = c.expiring ? badge(c.daysLeft < 0 ? "expiring (expired)" : "expiring", c.daysLeft < 0 ? "error" : "warn") : badge("ok", "ok");
    return el("tr", { class: c.expiring ? "row-warn" : null, "data-cert": c.name },
      el("th", { scope: "row" }, c.name),
      cells(c.kind, c.ca, c.subject, asList(c.hosts).join(", "),
        d ? el("time", { datetime: d.toISOString(), title: absFormat.format(d) }, dateFormat.format(d)) : "unknown",
        d ? String(c.daysLeft) : "", yesNo(c.generated), d || c.expiring ? status : badge("no expiry known", "idle")));
  }

  // ---------------------------------------------------------------- audit

  function updateAudit(ctx, list) {
    const records = asList(list);
    ctx.body.replaceChildren(records.length ? table(null, ["Time", "Who", "Remote", "Action", "Target", "Result", "Message"],
      records.map((a) => el("tr", {}, cells(timeEl(a.time), a.who, a.remote, a.action, a.target,
        badge(a.result || "?", resultClass(a.result)), a.message)))) : empty("No actions yet."));
  }

  // ---------------------------------------------------------------- pages

  const PAGES = {
    overview: { topics: null, api: () => "/api/overview", title: () => "Overview", mount: basic("Overview"), update: updateOverview },
    plan: { topics: ["plans", "runs"], api: (p) => `/api/plans/${seg(p)}`, title: (p) => `Plan ${p}`, mount: mountPlan, update: updatePlan },
    phase: { topics: ["phases", "runs"], api: (p) => `/api/phases/${seg(p)}`, title: (p) => `Phase ${p}`, mount: mountPhase, update: updatePhase },
    hosts: { topics: ["hosts"], api: () => "/api/hosts", title: () => "Hosts", mount: mountHosts, unmount: unmountHosts, update: updateHosts },
    clusters: { topics: ["clusters"], api: () => "/api/clusters", title: () => "Clusters", mount: basic("Clusters"), update: updateClusters },
    charts: { topics: ["charts"], api: () => "/api/charts", title: () => "Charts", mount: basic("Charts"), update: updateCharts },
    certificates: { topics: ["certificates"], api: () => "/api/certificates", title: () => "Certificates", mount: basic("Certificates"), update: updateCertificates },
    audit: { topics: ["audit"], api: () => "/api/audit", title: () => "Audit", mount: basic("Audit"), update: updateAudit },
    notFound: {
      title: () => "Not found",
      mount: (ctx) => append(ctx.root, [el("h1", {}, "Not found"),
        el("p", {}, "No page here. ", el("a", { href: "/overview" }, "Go to the overview"), ".")]),
    },
  };

  // ---------------------------------------------------------------- start

  function refreshRelativeTimes() {
    for (const t of document.querySelectorAll("time[data-rel]")) {
      const d = parseTime(t.getAttribute("datetime"));
      if (d) t.textContent = relative(d);
    }
  }

  async function start() {
    document.addEventListener("click", onLinkClick);
    document.addEventListener("pointerdown", (e) => {
      if (!$("host-menu").hidden && !e.target.closest("#host-menu, .row-menu")) closeMenu();
    });
    $("host-menu").addEventListener("keydown", onMenuKey);
    window.addEventListener("popstate", showRoute);
    document.addEventListener("scroll", closeMenu, { capture: true, passive: true });
    setInterval(refreshRelativeTimes, 60000); // only relabels times on the page: no fetch
    await loadInfo();
    showRoute();
    connect();
  }

  start();
})();
