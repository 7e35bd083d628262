// The admin dashboard: charts are server-rendered SVG; this module drives the
// buttons (promote / roll back a scorer version, retrain now, cancel) and the
// live training panel, which polls the running training run. Everything from
// the server reaches the page through textContent, never as HTML.

import { $, POLL_MS, TERMINAL, api, data, url } from "./dashboard/shared.js";

const LOG_LINES = 20;
const el = {
  message: $("dash-message"),
  retrain: $("retrain-btn"),
  panel: $("training"),
  id: $("tr-id"),
  status: $("tr-status"),
  progress: $("tr-progress"),
  percent: $("tr-percent"),
  stage: $("tr-stage"),
  epoch: $("tr-epoch"),
  loss: $("tr-loss"),
  valF1: $("tr-val-f1"),
  valOn: $("tr-val-on"),
  goldF1: $("tr-gold-f1"),
  log: $("tr-log"),
  cancel: $("tr-cancel"),
  reload: $("tr-reload"),
};

let runId = data.live_training;
let pollTimer = 0;

function say(text, kind = "") {
  el.message.textContent = text;
  el.message.className = `dash-message ${kind}`;
}

// --- scorer versions ---------------------------------------------------------

async function activate(button) {
  const { id, version } = button.dataset;
  const verb = button.textContent.trim();
  if (!window.confirm(`${verb} to scorer ${version}? Every claim is checked again with it.`)) {
    return;
  }
  button.disabled = true;
  say(`${verb}: activating ${version}…`);
  try {
    await api(url(data.urls.activate, id), { method: "POST" });
    say(`${version} is now the active scorer; claims are being checked again.`, "ok");
    window.location.reload();
  } catch (error) {
    button.disabled = false;
    say(`Could not activate ${version}: ${error.message}`, "warn");
  }
}

// --- training ----------------------------------------------------------------

function fmt(value, digits) {
  return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
}

function show(run) {
  el.panel.hidden = false;
  el.id.textContent = `#${run.id}`;
  el.status.textContent = run.status;
  el.status.className = `badge run-${run.status}`;
  const progress = Math.max(0, Math.min(1, Number(run.progress) || 0));
  el.progress.value = progress;
  el.percent.textContent = `${Math.round(progress * 100)}%`;
  el.stage.textContent = run.stage || "–";
  el.epoch.textContent = run.epoch ?? "–";
  el.loss.textContent = fmt(run.loss, 4);
  // The run's metrics arrive when it finishes: the final validation F1 and
  // what it was measured on, and the gold-set F1, the one the page calls F1.
  const metrics = run.metrics || {};
  const validation = metrics.validation || null;
  el.valF1.textContent = fmt(validation ? validation.f1 : run.val_f1, 3);
  el.valOn.textContent = validation
    ? `(${validation.source === "silver" ? "silver pairs" : "expert labels"})`
    : "";
  if (metrics.gold) el.goldF1.textContent = fmt(metrics.gold.f1, 3);
  else el.goldF1.textContent = run.status === "succeeded" ? "no gold labels yet" : "–";
  const lines = (run.log || "").trimEnd().split("\n");
  el.log.textContent = lines.slice(-LOG_LINES).join("\n");
  el.log.scrollTop = el.log.scrollHeight;
  const done = TERMINAL.has(run.status);
  el.cancel.hidden = done;
  el.cancel.disabled = done || Boolean(run.cancel_requested);
  el.reload.hidden = !done;
  el.retrain.disabled = !done;
  if (done && run.error) {
    say(`Training ${run.status}: ${run.error}`, "warn");
  } else if (done) {
    // The training service records whether the new version was promoted, and why.
    const verdict = metrics.promoted ? "promoted" : "not promoted";
    const why = metrics.reason ? ` ${metrics.version || "The new version"} ${verdict}: ${metrics.reason}.` : "";
    if (run.status === "succeeded") say(`Training succeeded.${why} Reload to see the new version.`, "ok");
    else say(`Training ${run.status}.`);
  }
}

async function poll() {
  window.clearTimeout(pollTimer);
  if (runId === null) return;
  try {
    const run = await api(url(data.urls.training_run, runId));
    show(run);
    if (TERMINAL.has(run.status)) return;
  } catch (error) {
    say(`Training run ${runId}: ${error.message}`, "warn");
  }
  pollTimer = window.setTimeout(poll, POLL_MS);
}

async function retrain() {
  el.retrain.disabled = true;
  say("Starting a training run…");
  try {
    const run = await api(data.urls.training_runs, {
      method: "POST",
      body: { project: data.project.id },
    });
    runId = run.id;
    say(`Training run ${run.id} queued.`);
    show(run);
    poll();
  } catch (error) {
    el.retrain.disabled = false;
    say(`Could not start training: ${error.message}`, "warn");
  }
}

async function cancel() {
  if (runId === null) return;
  el.cancel.disabled = true;
  try {
    await api(url(data.urls.cancel, runId), { method: "POST" });
    say(`Cancel requested for training run ${runId}; the worker stops at the next step.`);
    poll();
  } catch (error) {
    el.cancel.disabled = false;
    say(`Could not cancel: ${error.message}`, "warn");
  }
}

// --- grading with an LLM -------------------------------------------------------

const grade = {
  form: $("grade-form"),
  model: $("grade-model"),
  budget: $("grade-budget"),
  estimate: $("grade-estimate"),
  start: $("grade-start"),
  panel: $("grade-run"),
  id: $("gr-id"),
  runModel: $("gr-model"),
  status: $("gr-status"),
  progress: $("gr-progress"),
  count: $("gr-count"),
  cost: $("gr-cost"),
  runBudget: $("gr-budget"),
  error: $("gr-error"),
  cancel: $("gr-cancel"),
};
let gradingId = data.live_grading;
let gradingTimer = 0;

async function gradingEstimate() {
  grade.estimate.textContent = "Estimating…";
  try {
    const e = await api(data.urls.grading_estimate, {
      method: "POST",
      // No params: prices are the deployment's (LLM_PRICES), never a run's.
      body: { project: data.project.id, model: grade.model.value.trim() },
    });
    const cost = e.cost === null ? "no price set for this model" : `about ${Number(e.cost).toFixed(2)}`;
    grade.estimate.textContent =
      `${e.claims} claims to grade with ${e.model}: ` +
      `~${e.prompt_tokens.toLocaleString()} prompt and ${e.completion_tokens.toLocaleString()} ` +
      `completion tokens, ${cost}.`;
    if (e.cost !== null && grade.budget.value === "") grade.budget.value = Number(e.cost).toFixed(2);
  } catch (error) {
    grade.estimate.textContent = `Could not estimate: ${error.message}`;
  }
}

async function gradingStart(event) {
  event.preventDefault();
  if (grade.budget.value === "") {
    grade.estimate.textContent = "Set a budget: the run stops before its cost would pass it.";
    grade.budget.focus();
    return;
  }
  grade.start.disabled = true;
  try {
    const run = await api(data.urls.grading_runs, {
      method: "POST",
      body: {
        project: data.project.id,
        model: grade.model.value.trim(),
        budget: grade.budget.value,
      },
    });
    gradingId = run.id;
    grade.estimate.textContent = `Grading run ${run.id} queued.`;
    showGrading(run);
    pollGrading();
  } catch (error) {
    grade.start.disabled = false;
    grade.estimate.textContent = `Could not start grading: ${error.message}`;
  }
}

function showGrading(run) {
  grade.panel.hidden = false;
  grade.id.textContent = `#${run.id}`;
  grade.runModel.textContent = run.model;
  grade.status.textContent = run.status;
  grade.status.className = `badge run-${run.status}`;
  const total = run.progress_total || 0;
  grade.progress.value = total ? run.progress_done / total : 0;
  grade.count.textContent = `${run.progress_done} / ${total} claims`;
  grade.cost.textContent = Number(run.cost).toFixed(4);
  grade.runBudget.textContent = Number(run.budget).toFixed(2);
  grade.error.hidden = !run.error;
  grade.error.textContent = run.error || "";
  const done = TERMINAL.has(run.status);
  grade.cancel.hidden = done;
  grade.cancel.disabled = done || Boolean(run.cancel_requested);
  grade.start.disabled = !done;
}

async function pollGrading() {
  window.clearTimeout(gradingTimer);
  if (gradingId === null) return;
  try {
    const run = await api(url(data.urls.grading_run, gradingId));
    showGrading(run);
    if (TERMINAL.has(run.status)) return;
  } catch (error) {
    grade.estimate.textContent = `Grading run ${gradingId}: ${error.message}`;
  }
  gradingTimer = window.setTimeout(pollGrading, POLL_MS);
}

async function gradingCancel() {
  if (gradingId === null) return;
  grade.cancel.disabled = true;
  try {
    showGrading(await api(url(data.urls.grading_cancel, gradingId), { method: "POST" }));
    pollGrading();
  } catch (error) {
    grade.cancel.disabled = false;
    grade.estimate.textContent = `Could not cancel: ${error.message}`;
  }
}

// --- operating point: preview a target recall, then apply it -------------------

const op = {
  form: $("op-form"),
  target: $("op-target"),
  apply: $("op-apply"),
  result: $("op-result"),
  threshold: $("op-threshold"),
  recall: $("op-recall"),
  precision: $("op-precision"),
  workload: $("op-workload"),
  message: $("op-message"),
};
// The target the shown preview was computed for: Apply sends that one only.
let previewed = null;

function opTarget() {
  const value = Number(op.target.value);
  if (op.target.value === "" || !(value > 0 && value <= 1)) {
    op.message.textContent = "The target recall must be a number above 0 and at most 1 (0.95: flag 95% of hallucinations).";
    return null;
  }
  return value;
}

function pct(value) {
  return value === null || value === undefined ? "n/a" : `${(100 * value).toFixed(1)}%`;
}

function showPoint(p) {
  op.result.hidden = false;
  const calibrated = p.calibrated_p_safe === null ? "" : ` (calibrated P(safe) ${fmt(p.calibrated_p_safe, 3)})`;
  op.threshold.textContent = `${fmt(p.threshold, 4)}${calibrated}; now ${fmt(p.current_threshold, 4)}`;
  // The gold recall aims above the target: on new claims it holds with
  // the stated confidence, not just half the time.
  op.recall.textContent =
    `${pct(p.gold.recall)} of ${p.gold.n_unsafe} unsafe (aiming at ${pct(p.gold_recall_aimed)}, ` +
    `so that new claims reach ${pct(p.target_recall)} with ${pct(p.confidence)} confidence)`;
  op.precision.textContent = `${pct(p.gold.precision)} of ${p.gold.flagged} flagged, on ${p.gold.n} gold labels`;
  const w = p.workload;
  op.workload.textContent =
    `experts would see ${w.flagged.toLocaleString()} of ${w.total.toLocaleString()} claims (${pct(w.fraction)})`;
}

async function opPreview() {
  const target = opTarget();
  if (target === null) return;
  op.message.textContent = "Computing…";
  op.apply.disabled = true;
  try {
    const path = `${url(data.urls.operating_point, op.form.dataset.scorer)}?target_recall=${encodeURIComponent(target)}`;
    showPoint(await api(path));
    previewed = target;
    op.apply.disabled = false;
    op.message.textContent = `Preview for a target recall of ${target}: nothing has changed yet.`;
  } catch (error) {
    previewed = null;
    op.message.textContent = `Could not preview: ${error.message}`;
  }
}

async function opApply(event) {
  event.preventDefault();
  if (previewed === null || Number(op.target.value) !== previewed) {
    op.apply.disabled = true;
    op.message.textContent = "Preview this target first.";
    return;
  }
  op.apply.disabled = true;
  try {
    const scorer = await api(url(data.urls.operating_point, op.form.dataset.scorer), {
      method: "POST",
      body: { target_recall: previewed },
    });
    showPoint(scorer.operating_point);
    op.message.textContent =
      `Applied: threshold ${fmt(scorer.threshold, 4)}. Every claim is being checked again with it.`;
  } catch (error) {
    op.apply.disabled = false;
    op.message.textContent = `Could not apply: ${error.message}`;
  }
}

async function calibrate(button) {
  button.disabled = true;
  op.message.textContent = "Fitting the calibration…";
  try {
    const scorer = await api(url(data.urls.calibrate, op.form.dataset.scorer), { method: "POST", body: {} });
    const c = scorer.calibration;
    op.message.textContent =
      `Calibrated (${c.method}) on ${c.n} gold labels: ECE ${fmt(c.ece_raw, 3)} raw, ${fmt(c.ece_calibrated, 3)} calibrated. Reload to see the diagram.`;
  } catch (error) {
    op.message.textContent = `Could not calibrate: ${error.message}`;
  }
  button.disabled = false;
}

// --- wiring ------------------------------------------------------------------

document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || !$("dashboard").contains(button)) return;
  const action = button.dataset.action;
  if (action === "activate") activate(button);
  else if (action === "retrain") retrain();
  else if (action === "cancel") cancel();
  else if (action === "reload") window.location.reload();
  else if (action === "grade-estimate") gradingEstimate();
  else if (action === "grade-cancel") gradingCancel();
  else if (action === "op-preview") opPreview();
  else if (action === "calibrate") calibrate(button);
});

if (op.form) {
  op.form.addEventListener("submit", opApply);
  // A changed target needs a new preview before it can be applied.
  op.target.addEventListener("input", () => {
    op.apply.disabled = previewed === null || Number(op.target.value) !== previewed;
  });
}

if (grade.form) {
  grade.form.addEventListener("submit", gradingStart);
  if (gradingId !== null) pollGrading();
}

if (runId !== null) {
  el.retrain.disabled = true;
  poll();
}
