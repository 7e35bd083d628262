// The labeling page: one prediction at a time, keyboard first, nothing lost.
//
// Decisions are applied locally at once (the next item is already in memory),
// written to a localStorage outbox and sent in the background; the server
// de-duplicates by the label's client id, so resending after a reload or a
// dropped connection never stores a label twice. Document text is untrusted:
// it only ever reaches the page through textContent.

const data = JSON.parse(document.getElementById("label-data").textContent);
const urls = data.urls;
const OUTBOX_KEY = `safepassage:outbox:${data.user.id}:${data.project.id}`;
const FAILED_KEY = `safepassage:failed:${data.user.id}:${data.project.id}`;
const DECIDED_KEY = `safepassage:decided:${data.user.id}:${data.project.id}`;
const DECIDED_MS = 60 * 60 * 1000; // how long a decision is remembered here
const DIFF_LIMIT = 400; // characters per side; beyond that the diff is skipped
const RETRY_MS = [500, 1000, 2000, 5000, 10000, 30000];
const BATCH_MAX = 100; // labels per request (the server takes up to 500)
const NOTE_MAX = 10000; // characters; the server refuses longer notes

const $ = (id) => document.getElementById(id);
const el = {
  item: $("item"),
  empty: $("empty"),
  progress: $("progress"),
  sync: $("sync"),
  typeDisplay: $("type-display"),
  typeRaw: $("type-raw"),
  model: $("model"),
  value: $("value-display"),
  hypothesis: $("hypothesis"),
  current: $("current-label"),
  draft: $("draft"),
  machine: $("machine"),
  alignScore: $("align-score"),
  context: $("context"),
  span: $("span"),
  doc: $("doc"),
  docId: $("doc-id"),
  expandBtn: $("expand-btn"),
  siblings: $("siblings"),
  detour: $("detour"),
  detourWhy: $("detour-why"),
  noteForm: $("note-form"),
  noteInput: $("note-input"),
  correctForm: $("correct-form"),
  correctType: $("correct-type"),
  correctValue: $("correct-value"),
  help: $("help"),
  history: $("history"),
  historyRows: $("history-rows"),
  historyPage: $("history-page"),
  noteCount: $("note-count"),
  failed: $("failed"),
  failedRows: $("failed-rows"),
  failedButton: $("failed-button"),
};

// --- state -------------------------------------------------------------------

const state = {
  queue: [], // items waiting, in order
  current: null,
  shownAt: 0,
  detour: "", // why the current item is not the queue's (sibling, history)
  draft: { note: "", corrected_type: "", corrected_value: null },
  undo: [], // this session's decisions, newest last: {client_id, item}
  labelled: loadDecided(), // prediction ids decided here lately, not undone
  expanded: false,
  documents: new Map(), // document id -> full text (fetched on expand)
  progress: data.progress, // the server's count at the last batch
  sentSince: 0, // labels the server stored since that count
  fetching: false,
  exhaustedAt: 0,
  historyPage: 1,
};

const outbox = {
  ops: loadJSON(OUTBOX_KEY, []),
  inflight: new Set(), // client ids being sent now
  flushing: false,
  failures: 0,
  solo: 0, // labels still to send one at a time, after a batch was refused
  timer: 0,
  save() {
    localStorage.setItem(OUTBOX_KEY, JSON.stringify(this.ops));
  },
  push(op) {
    this.ops.push(op);
    this.save();
    schedule(0);
  },
  labelledPredictions() {
    const ids = new Set();
    for (const op of this.ops) if (op.kind === "label") ids.add(op.prediction);
    return ids;
  },
};

// Decisions are remembered across reloads for a while: a page rendered while
// the outbox's last send was still in flight lists those predictions again,
// since the server had not stored their labels yet.
function loadDecided() {
  const cutoff = Date.now() - DECIDED_MS;
  const kept = Object.entries(loadJSON(DECIDED_KEY, {})).filter(([, at]) => at > cutoff);
  return new Set(kept.map(([id]) => Number(id)));
}

function saveDecided(id, decided) {
  const all = loadJSON(DECIDED_KEY, {});
  if (decided) all[id] = Date.now();
  else delete all[id];
  localStorage.setItem(DECIDED_KEY, JSON.stringify(all));
}

function loadJSON(key, fallback) {
  try {
    const raw = localStorage.getItem(key);
    return raw ? JSON.parse(raw) : fallback;
  } catch {
    return fallback;
  }
}

function uuid() {
  if (crypto.randomUUID) return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// --- server ------------------------------------------------------------------

class HttpError extends Error {
  constructor(status, body) {
    super(`HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

async function api(method, url, body) {
  const response = await fetch(url, {
    method,
    credentials: "same-origin",
    headers: {
      Accept: "application/json",
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
      ...(method === "GET" ? {} : { "X-CSRFToken": csrfToken() }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // A proxy's HTML error page: the status says enough.
    if (response.ok) throw new HttpError(502, null);
  }
  if (!response.ok) throw new HttpError(response.status, json);
  return json;
}

// The cookie, when there is one: logging in again in another tab rotates the
// token this page was rendered with.
function csrfToken() {
  const cookie = document.cookie
    .split("; ")
    .find((part) => part.startsWith("csrftoken="));
  return cookie ? decodeURIComponent(cookie.slice("csrftoken=".length)) : data.csrf_token;
}

function schedule(ms) {
  clearTimeout(outbox.timer);
  outbox.timer = setTimeout(flush, ms);
}

// Sends the outbox head first, in order: a label and its undo must reach the
// server in the order they were given.
async function flush() {
  if (outbox.flushing) return;
  outbox.flushing = true;
  try {
    while (outbox.ops.length) {
      const head = outbox.ops[0];
      if (head.kind === "label") await sendLabels();
      else await sendUndo(head);
      outbox.failures = 0;
    }
  } catch (error) {
    outbox.failures += 1;
    const wait = RETRY_MS[Math.min(outbox.failures - 1, RETRY_MS.length - 1)];
    schedule(wait);
    state.offline = error instanceof HttpError ? error.status : "offline";
    state.offlineWhy = error instanceof HttpError ? firstMessage(error.body) : "";
  } finally {
    outbox.flushing = false;
    if (!outbox.failures) state.offline = null;
    renderStatus();
  }
}

// The labels at the head of the outbox, in one request. The server answers
// each label on its own: the refused ones are set aside, the others are done.
async function sendLabels() {
  const size = outbox.solo > 0 ? 1 : BATCH_MAX;
  const batch = [];
  for (const op of outbox.ops) {
    if (op.kind !== "label" || batch.length >= size) break;
    batch.push(op);
  }
  for (const op of batch) outbox.inflight.add(op.client_id);
  let results;
  try {
    const reply = await api("POST", urls.labels, { labels: batch.map(labelBody) });
    results = reply?.results || [];
  } catch (error) {
    if (retryable(error)) throw error;
    if (batch.length > 1) {
      // Refused as a whole (too large for a proxy, say): one at a time, so
      // that only the label at fault is set aside.
      outbox.solo = batch.length;
      return;
    }
    results = [{ status: "error", error: refusal(error) }];
  } finally {
    for (const op of batch) outbox.inflight.delete(op.client_id);
  }
  outbox.solo = Math.max(0, outbox.solo - batch.length);
  const refused = [];
  batch.forEach((op, i) => {
    const result = results[i] || { status: "error", error: "the server gave no answer" };
    if (result.status === "error") refused.push({ op, why: result.error || "refused" });
    else if (result.status === "created") state.sentSince += 1;
  });
  setAside(refused);
  const sent = new Set(batch.map((op) => op.client_id));
  outbox.ops = outbox.ops.filter((op) => !(op.kind === "label" && sent.has(op.client_id)));
  outbox.save();
}

function labelBody({ kind, hypothesis, ...label }) {
  return label;
}

async function sendUndo(head) {
  try {
    const reply = await api("DELETE", `${urls.undo}${head.client_id}/`);
    if (reply?.prediction != null) state.sentSince -= 1;
  } catch (error) {
    if (retryable(error)) throw error;
    // Refused: there is nothing to take back on the server.
  }
  outbox.ops = outbox.ops.filter((op) => op !== head);
  outbox.save();
}

// Worth sending again unchanged, with backoff: the connection dropped, the
// server failed or asked to slow down. 401/403 too: the session expired, and
// the labels wait for the expert to log in again (the status line says so);
// they are not the labels' fault. Any other 4xx is an answer about the labels
// themselves, which resending as is cannot change.
function retryable(error) {
  if (!(error instanceof HttpError)) return true;
  return error.status >= 500 || [401, 403, 408, 429].includes(error.status);
}

function refusal(error) {
  const said = firstMessage(error.body);
  return said ? `${said} (HTTP ${error.status})` : `refused (HTTP ${error.status})`;
}

// The first message in an error body ({detail}, {field: [messages]}, ...).
function firstMessage(body) {
  if (typeof body === "string") return body;
  if (Array.isArray(body)) {
    for (const part of body) {
      const found = firstMessage(part);
      if (found) return found;
    }
  } else if (body && typeof body === "object") {
    if (typeof body.detail === "string") return body.detail;
    if (typeof body.error === "string" && body.error) return body.error;
    for (const [name, part] of Object.entries(body)) {
      const found = firstMessage(part);
      if (found) return name === "non_field_errors" ? found : `${name}: ${found}`;
    }
  }
  return "";
}

// --- labels set aside -----------------------------------------------------------
// Labels the server refused are kept in this browser under another key (never
// silently dropped), listed with the reason; the expert resends or discards
// each.

function loadFailed() {
  const failed = loadJSON(FAILED_KEY, []);
  return Array.isArray(failed) ? failed : [];
}

function saveFailed(failed) {
  localStorage.setItem(FAILED_KEY, JSON.stringify(failed));
  renderFailed();
}

function setAside(entries) {
  if (!entries.length) return;
  const failed = loadFailed();
  for (const { op, why } of entries) failed.push({ ...op, why, at: Date.now() });
  saveFailed(failed);
}

function takeFailed(clientId) {
  const failed = loadFailed();
  const entry = failed.find((f) => f.client_id === clientId);
  if (entry) saveFailed(failed.filter((f) => f !== entry));
  return entry;
}

function resend(clientId) {
  const entry = takeFailed(clientId);
  if (!entry) return;
  const { why, at, ...op } = entry;
  // A new client id: the refused one was never stored, and a refusal of the
  // id itself ("already used") would only come back.
  const fresh = { ...op, client_id: uuid() };
  for (const u of state.undo) if (u.client_id === op.client_id) u.client_id = fresh.client_id;
  outbox.push(fresh);
  renderStatus();
}

function discard(clientId) {
  const entry = takeFailed(clientId);
  if (!entry) return;
  // Undecided again: the prediction may come back to the queue.
  if (!outbox.labelledPredictions().has(entry.prediction)) {
    state.labelled.delete(entry.prediction);
    saveDecided(entry.prediction, false);
  }
  renderStatus();
}

function openFailed() {
  closePanels();
  renderFailed();
  el.failed.hidden = false;
}

function renderFailed() {
  const failed = loadFailed();
  el.failedRows.replaceChildren(
    ...failed.map((f) => {
      const tr = document.createElement("tr");
      const what = document.createElement("button");
      what.type = "button";
      what.dataset.prediction = String(f.prediction);
      what.textContent = f.hypothesis || `prediction ${f.prediction}`;
      const cells = [
        what,
        `${f.label}${f.note ? " ✎" : ""}`,
        typeof f.why === "string" ? f.why : firstMessage(f.why) || "refused",
      ].map((content) => {
        const td = document.createElement("td");
        td.append(content);
        return td;
      });
      cells[2].className = "why";
      const td = document.createElement("td");
      for (const [action, text] of [
        ["resend", "Resend"],
        ["discard", "Discard"],
      ]) {
        const button = document.createElement("button");
        button.type = "button";
        button.textContent = text;
        button.dataset.failed = action;
        button.dataset.clientId = f.client_id;
        td.append(button, " ");
      }
      tr.append(...cells, td);
      return tr;
    }),
  );
  if (!failed.length && !el.failed.hidden) el.failed.hidden = true;
  renderStatus();
}

async function fetchMore() {
  if (state.fetching) return;
  if (state.exhaustedAt && performance.now() - state.exhaustedAt < 15000) return;
  state.fetching = true;
  try {
    const reply = await api("POST", urls.next, {
      count: data.batch_size,
      exclude: [...heldIds()],
    });
    const held = heldIds();
    const fresh = reply.items.filter((item) => !held.has(item.id));
    state.queue.push(...fresh);
    state.exhaustedAt = fresh.length ? 0 : performance.now();
    if (!state.current && state.queue.length) next();
    refreshProgress();
  } catch (error) {
    state.exhaustedAt = performance.now() - 10000; // try again in ~5 s
  } finally {
    state.fetching = false;
    renderStatus();
  }
}

// Counting what is left scans the project: asked once per batch, off the
// path of the next item.
async function refreshProgress() {
  try {
    const progress = await api("GET", urls.progress);
    state.progress = progress;
    state.sentSince = 0;
    renderStatus();
  } catch {
    // shown again at the next batch
  }
}

function heldIds() {
  const ids = outbox.labelledPredictions();
  for (const item of state.queue) ids.add(item.id);
  if (state.current) ids.add(state.current.id);
  for (const id of state.labelled) ids.add(id);
  return ids;
}

// --- decisions ---------------------------------------------------------------

function decide(label) {
  const item = state.current;
  if (!item) return;
  const seconds = (performance.now() - state.shownAt) / 1000;
  const op = {
    kind: "label",
    client_id: uuid(),
    hypothesis: item.hypothesis, // shown if the label is set aside; not sent
    prediction: item.id,
    label,
    note: state.draft.note,
    corrected_type: state.draft.corrected_type,
    corrected_value: state.draft.corrected_value,
    seconds_spent: Math.round(Math.min(seconds, 3600) * 1000) / 1000,
  };
  item.my_label = { ...op };
  state.undo.push({ client_id: op.client_id, item, wasDetour: state.detour });
  if (state.undo.length > 200) state.undo.shift();
  state.labelled.add(item.id);
  saveDecided(item.id, true);
  // A set-aside label of the same prediction is replaced, as it would have
  // been on the server.
  const failed = loadFailed();
  if (failed.some((f) => f.prediction === item.id))
    saveFailed(failed.filter((f) => f.prediction !== item.id));
  next();
  // Persist and send after the next item is on screen.
  outbox.push(op);
}

function undo() {
  const last = state.undo.pop();
  if (!last) return;
  const at = outbox.ops.findIndex(
    (op) => op.kind === "label" && op.client_id === last.client_id,
  );
  if (at >= 0 && !outbox.inflight.has(last.client_id)) {
    outbox.ops.splice(at, 1); // never sent: forget it
    outbox.save();
  } else if (takeFailed(last.client_id)) {
    // Set aside: the server never stored it.
  } else {
    outbox.push({ kind: "undo", client_id: last.client_id });
  }
  state.labelled.delete(last.item.id);
  saveDecided(last.item.id, false);
  last.item.my_label = null;
  if (state.current && !state.detour) state.queue.unshift(state.current);
  show(last.item, last.wasDetour);
  renderStatus();
}

function next() {
  const item = state.queue.shift() || null;
  show(item, "");
  if (state.queue.length < data.batch_size / 2) fetchMore();
}

// Open a prediction that is not next in the queue (another one on the same
// document, or a past label to change); the queue resumes after it.
async function open(predictionId, why) {
  if (state.current && state.current.id === predictionId) return;
  const queued = state.queue.findIndex((item) => item.id === predictionId);
  let item;
  if (queued >= 0) {
    [item] = state.queue.splice(queued, 1);
  } else {
    try {
      item = await api("GET", `${urls.item}${predictionId}/`);
    } catch {
      return;
    }
  }
  if (state.current && !state.detour) state.queue.unshift(state.current);
  show(item, why);
}

// --- rendering ---------------------------------------------------------------

function show(item, detour) {
  state.current = item;
  state.detour = item ? detour : "";
  state.draft = {
    note: item?.my_label?.note || "",
    corrected_type: item?.my_label?.corrected_type || "",
    corrected_value: item?.my_label?.corrected_value ?? null,
  };
  state.expanded = false;
  closePanels();
  if (!item) {
    el.item.hidden = true;
    el.empty.hidden = false;
    renderStatus();
    document.dispatchEvent(new CustomEvent("label:rendered", { detail: { id: null } }));
    return;
  }
  el.empty.hidden = true;
  el.item.hidden = false;
  el.item.dataset.predictionId = String(item.id);

  el.detour.hidden = !detour;
  el.detourWhy.textContent = detour;
  el.typeDisplay.textContent = item.type_display;
  el.typeRaw.textContent = item.type_display === item.type ? "" : `(${item.type})`;
  el.model.textContent = item.model ? `from ${item.model}` : "";
  el.value.textContent = item.value_display;
  el.hypothesis.textContent = item.hypothesis;
  renderCurrentLabel(item);
  renderDraft();
  renderMachine(item);

  const align = item.align;
  el.alignScore.textContent =
    align.score == null ? "not aligned" : align.score.toFixed(2);
  renderDiff(item.context || "", align.text || "");
  renderDocument(item);
  renderSiblings(item);
  renderStatus();
  state.shownAt = performance.now();
  document.dispatchEvent(new CustomEvent("label:rendered", { detail: { id: item.id } }));
}

function renderCurrentLabel(item) {
  const mine = item.my_label;
  el.current.hidden = !mine;
  el.current.textContent = mine
    ? `Your label: ${mine.label} (a new decision replaces it)`
    : "";
}

function renderDraft() {
  const parts = [];
  if (state.draft.corrected_type || state.draft.corrected_value != null) {
    const value =
      state.draft.corrected_value == null
        ? ""
        : ` = ${typeof state.draft.corrected_value === "string" ? state.draft.corrected_value : JSON.stringify(state.draft.corrected_value)}`;
    parts.push(`correction: ${state.draft.corrected_type || state.current?.type}${value}`);
  }
  if (state.draft.note) parts.push(`note: ${state.draft.note}`);
  el.draft.hidden = !parts.length;
  el.draft.textContent = parts.join(" · ");
}

function renderMachine(item) {
  const m = item.machine;
  el.machine.hidden = !m;
  el.machine.replaceChildren();
  if (!m) return;
  const line = [`verdict ${m.verdict || "unchecked"}`];
  if (m.reason) line.push(m.reason.replace(/_/g, " "));
  if (m.score != null) line.push(`score ${m.score.toFixed(3)} (${m.scored_by || "?"})`);
  for (const s of m.scores) line.push(`${s.scorer}: ${s.score.toFixed(3)}`);
  el.machine.textContent = `Machine: ${line.join(" · ")}`;
}

function span(text, cls) {
  const node = document.createElement("span");
  node.className = cls;
  node.textContent = text;
  return node;
}

function renderDiff(context, aligned) {
  if (!aligned) {
    el.context.replaceChildren(span(context, "d-ins"));
    el.span.replaceChildren(span("(the context was not found in the document)", "d-none"));
    return;
  }
  if (context.length > DIFF_LIMIT || aligned.length > DIFF_LIMIT) {
    el.context.textContent = context;
    el.span.textContent = aligned;
    return;
  }
  const { a, b } = diffChars(context, aligned);
  el.context.replaceChildren(...a.map(([cls, text]) => (cls ? span(text, cls) : text)));
  el.span.replaceChildren(...b.map(([cls, text]) => (cls ? span(text, cls) : text)));
}

// Character diff by longest common subsequence (both sides <= DIFF_LIMIT, so
// the table is at most 160k cells). Returns runs for each side: [class, text]
// with class "" (same), "d-ins" (only in the context), "d-del" (only in the
// document) or "d-chg" (replaced: a removal next to an insertion).
export function diffChars(a, b) {
  const n = a.length;
  const m = b.length;
  const width = m + 1;
  const table = new Uint16Array((n + 1) * width);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * width + j] =
        a[i] === b[j]
          ? table[(i + 1) * width + j + 1] + 1
          : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const ops = []; // [op, charA, charB]: "=" | "-" (a only) | "+" (b only)
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push(["=", a[i++], b[j++]]);
    } else if (table[(i + 1) * width + j] >= table[i * width + j + 1]) {
      ops.push(["-", a[i++], ""]);
    } else {
      ops.push(["+", "", b[j++]]);
    }
  }
  while (i < n) ops.push(["-", a[i++], ""]);
  while (j < m) ops.push(["+", "", b[j++]]);

  const sideA = [];
  const sideB = [];
  const add = (side, cls, text) => {
    if (!text) return;
    const last = side[side.length - 1];
    if (last && last[0] === cls) last[1] += text;
    else side.push([cls, text]);
  };
  for (let k = 0; k < ops.length; ) {
    if (ops[k][0] === "=") {
      add(sideA, "", ops[k][1]);
      add(sideB, "", ops[k][2]);
      k++;
      continue;
    }
    let onlyA = "";
    let onlyB = "";
    while (k < ops.length && ops[k][0] !== "=") {
      onlyA += ops[k][1];
      onlyB += ops[k][2];
      k++;
    }
    const changed = onlyA && onlyB;
    add(sideA, changed ? "d-chg" : "d-ins", onlyA);
    add(sideB, changed ? "d-chg" : "d-del", onlyB);
  }
  return { a: sideA, b: sideB };
}

function renderDocument(item) {
  const doc = item.document;
  el.docId.textContent = doc.external_id;
  let text;
  let offset;
  const full = state.expanded ? state.documents.get(doc.id) : undefined;
  if (full !== undefined) {
    text = full;
    offset = 0;
  } else {
    text = doc.window_text;
    offset = doc.window_start;
  }
  el.expandBtn.firstChild.textContent = state.expanded ? "Collapse " : "Expand ";
  const nodes = [];
  if (offset > 0) nodes.push(span("… ", "d-none"));
  const { start, end } = item.align;
  if (start != null && end != null && end > start) {
    const s = Math.max(0, start - offset);
    const e = Math.max(s, end - offset);
    nodes.push(text.slice(0, s), span(text.slice(s, e), "d-hit"), text.slice(e));
  } else {
    nodes.push(text);
  }
  if (offset + text.length < doc.length) nodes.push(span(" …", "d-none"));
  el.doc.replaceChildren(...nodes);
  el.doc.classList.toggle("expanded", state.expanded);
  if (state.expanded) el.doc.querySelector(".d-hit")?.scrollIntoView({ block: "center" });
}

function renderSiblings(item) {
  const rows = item.siblings.map((s) => {
    const li = document.createElement("li");
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.prediction = String(s.id);
    button.textContent = s.hypothesis;
    if (s.id === item.id) {
      li.className = "here";
      button.disabled = true;
    }
    const label = state.labelled.has(s.id)
      ? "labelled"
      : s.my_label || "";
    li.append(button, label ? span(` ${label}`, "sib-label") : "");
    return li;
  });
  el.siblings.replaceChildren(...rows);
}

function renderStatus() {
  const p = state.progress || {};
  const pending = outbox.ops.filter((op) => op.kind === "label").length;
  const pace = p.per_hour == null ? "" : ` · ${Math.round(p.per_hour)}/hour`;
  // Approximate between batches (a label stored while the batch request was
  // on its way counts twice until the next one); exact at each batch.
  const done = (p.done || 0) + state.sentSince + pending;
  const left = Math.max(0, (p.remaining || 0) - state.sentSince - pending);
  el.progress.textContent = `done ${done} · left ${left}${pace}`;
  const failed = loadFailed().length;
  el.failedButton.hidden = !failed;
  el.failedButton.textContent = `${failed} set aside: review`;
  const parts = [];
  if (pending) parts.push(`${pending} unsent`);
  if (state.offline === "offline") parts.push("offline, retrying");
  else if (state.offline === 401 || state.offline === 403)
    parts.push(
      `session expired or access changed (${state.offlineWhy || state.offline}): ` +
        "log in again in another tab",
    );
  else if (state.offline === 429) parts.push("server busy, retrying");
  else if (state.offline) parts.push(`server error ${state.offline}, retrying`);
  if (failed) parts.push(`${failed} refused by the server (kept in this browser)`);
  el.sync.textContent = parts.length ? parts.join(" · ") : "all saved";
  el.sync.classList.toggle("warn", Boolean(state.offline || failed));
}

// --- panels ------------------------------------------------------------------

function closePanels() {
  el.noteForm.hidden = true;
  el.correctForm.hidden = true;
  el.help.hidden = true;
  el.history.hidden = true;
  el.failed.hidden = true;
}

function panelOpen() {
  return !(
    el.noteForm.hidden &&
    el.correctForm.hidden &&
    el.help.hidden &&
    el.history.hidden &&
    el.failed.hidden
  );
}

function openNote() {
  if (!state.current) return;
  closePanels();
  el.noteForm.hidden = false;
  el.noteInput.value = state.draft.note.slice(0, NOTE_MAX);
  renderNoteCount();
  el.noteInput.focus();
}

function renderNoteCount() {
  const used = el.noteInput.value.length;
  el.noteCount.textContent = `${used.toLocaleString()} / ${NOTE_MAX.toLocaleString()}`;
  el.noteCount.classList.toggle("warn", used >= NOTE_MAX * 0.9);
}

function openCorrect() {
  const item = state.current;
  if (!item) return;
  closePanels();
  const types = new Set([...data.project.entity_types, item.type]);
  el.correctType.replaceChildren(
    ...[...types].sort().map((t) => {
      const option = document.createElement("option");
      option.value = t;
      option.textContent = t;
      return option;
    }),
  );
  el.correctType.value = state.draft.corrected_type || item.type;
  const value = state.draft.corrected_value ?? item.value;
  el.correctValue.value =
    value == null ? "" : typeof value === "string" ? value : JSON.stringify(value);
  el.correctForm.hidden = false;
  el.correctValue.focus();
  el.correctValue.select();
}

function saveCorrection() {
  const item = state.current;
  const type = el.correctType.value;
  const raw = el.correctValue.value.trim();
  let value = raw;
  if (raw.startsWith("{") || raw.startsWith("[")) {
    try {
      value = JSON.parse(raw);
    } catch {
      value = raw;
    }
  }
  const sameValue = JSON.stringify(value) === JSON.stringify(item.value);
  state.draft.corrected_type = type === item.type ? "" : type;
  state.draft.corrected_value = sameValue ? null : value;
  closePanels();
  renderDraft();
}

async function toggleExpand() {
  const item = state.current;
  if (!item) return;
  state.expanded = !state.expanded;
  if (state.expanded && !state.documents.has(item.document.id)) {
    if (item.document.length <= item.document.window_text.length) {
      state.documents.set(item.document.id, item.document.window_text);
    } else {
      try {
        const doc = await api("GET", `${urls.document}${item.document.id}/`);
        state.documents.set(item.document.id, doc.text);
      } catch {
        state.expanded = false;
      }
    }
    if (state.current !== item) return;
  }
  renderDocument(item);
}

function stepSibling(delta) {
  const item = state.current;
  if (!item) return;
  const at = item.siblings.findIndex((s) => s.id === item.id);
  const target = item.siblings[at + delta];
  if (target) open(target.id, "another prediction on this document");
}

async function openHistory(page) {
  closePanels();
  el.history.hidden = false;
  state.historyPage = Math.max(1, page);
  let reply;
  try {
    reply = await api("GET", `${urls.mine}?page=${state.historyPage}`);
  } catch {
    el.historyRows.replaceChildren();
    el.historyPage.textContent = "could not load";
    return;
  }
  el.historyPage.textContent = `page ${state.historyPage} · ${reply.count} labels`;
  el.historyRows.replaceChildren(
    ...reply.results.map((a) => {
      const tr = document.createElement("tr");
      const cells = [
        new Date(a.updated_at).toLocaleTimeString(),
        a.hypothesis,
        a.document_external_id,
        a.label + (a.note ? " ✎" : ""),
      ].map((text) => {
        const td = document.createElement("td");
        td.textContent = text;
        return td;
      });
      const td = document.createElement("td");
      const button = document.createElement("button");
      button.type = "button";
      button.textContent = "Change";
      button.dataset.prediction = String(a.prediction);
      td.append(button);
      tr.append(...cells, td);
      return tr;
    }),
  );
}

// --- input -------------------------------------------------------------------

const actions = {
  safe: () => decide("safe"),
  unsafe: () => decide("unsafe"),
  unsure: () => decide("unsure"),
  undo,
  note: openNote,
  correct: openCorrect,
  expand: toggleExpand,
  help: () => {
    const wasOpen = !el.help.hidden;
    closePanels();
    el.help.hidden = wasOpen;
  },
  history: () => openHistory(1),
  failed: openFailed,
  "history-prev": () => openHistory(state.historyPage - 1),
  "history-next": () => openHistory(state.historyPage + 1),
  back: () => next(), // the detour item is dropped; the queue item was put back
  close: closePanels,
  prevSibling: () => stepSibling(-1),
  nextSibling: () => stepSibling(1),
};

const keys = {
  s: "safe",
  j: "safe",
  u: "unsafe",
  k: "unsafe",
  " ": "unsure",
  l: "unsure",
  z: "undo",
  n: "note",
  c: "correct",
  e: "expand",
  h: "history",
  "?": "help",
  "[": "prevSibling",
  "]": "nextSibling",
};
const DECISIONS = new Set(["safe", "unsafe", "unsure", "undo"]);

document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const target = event.target;
  const typing =
    target instanceof HTMLInputElement ||
    target instanceof HTMLTextAreaElement ||
    target instanceof HTMLSelectElement;
  if (event.key === "Escape") {
    closePanels();
    if (typing) target.blur();
    return;
  }
  if (typing) {
    if (target === el.noteInput && event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      el.noteForm.requestSubmit();
    }
    return;
  }
  const action = keys[event.key.length === 1 ? event.key.toLowerCase() : event.key];
  if (!action) return;
  event.preventDefault();
  // Holding a key down must not label a run of predictions.
  if (DECISIONS.has(action) && (event.repeat || panelOpen())) return;
  actions[action]();
});

document.addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button || !document.getElementById("labeling").contains(button)) return;
  if (button.dataset.failed) {
    if (button.dataset.failed === "resend") resend(button.dataset.clientId);
    else discard(button.dataset.clientId);
  } else if (button.dataset.prediction) {
    const id = Number(button.dataset.prediction);
    const why = el.history.contains(button)
      ? "changing a past label"
      : el.failed.contains(button)
        ? "a label set aside"
        : "another prediction on this document";
    closePanels();
    open(id, why);
  } else if (button.dataset.action && actions[button.dataset.action]) {
    actions[button.dataset.action]();
  }
  // Keep keyboard focus on the page, not on the clicked button (Space would
  // press it again).
  if (button.type !== "submit") button.blur();
});

el.noteInput.maxLength = NOTE_MAX;
el.noteInput.addEventListener("input", renderNoteCount);

el.noteForm.addEventListener("submit", (event) => {
  event.preventDefault();
  state.draft.note = el.noteInput.value.trim();
  closePanels();
  el.noteInput.blur();
  renderDraft();
});

el.correctForm.addEventListener("submit", (event) => {
  event.preventDefault();
  saveCorrection();
  el.correctValue.blur();
});

window.addEventListener("online", () => schedule(0));
window.addEventListener("storage", (event) => {
  // Another tab of the same expert changed the outbox.
  if (event.key === OUTBOX_KEY) outbox.ops = loadJSON(OUTBOX_KEY, []);
  if (event.key === FAILED_KEY) renderFailed();
});

// --- start -------------------------------------------------------------------

{
  const held = heldIds();
  state.queue = data.items.filter((item) => !held.has(item.id));
  next();
  renderFailed();
  if (outbox.ops.length) schedule(0);
  // With nothing on screen, look again now and then: leases expire, other
  // experts' "unsure" labels put predictions back.
  setInterval(() => {
    if (!state.current) fetchMore();
  }, 15000);
}
