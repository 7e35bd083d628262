// The consistency kind's dashboard panel: runs that sample other models or
// correct flagged sentences, estimated, started, followed and cancelled here.

import { $, POLL_MS, TERMINAL, api, data, url } from "./shared.js";

const kind = JSON.parse($("consistency-data").textContent);

const sample = {
  form: $("sample-form"),
  job: $("sample-job"),
  models: $("sample-models"),
  count: $("sample-count"),
  improver: $("correct-improver"),
  summaries: $("correct-summaries"),
  budget: $("sample-budget"),
  estimate: $("sample-estimate"),
  start: $("sample-start"),
  panel: $("sample-run"),
  runJob: $("sr-job"),
  id: $("sr-id"),
  status: $("sr-status"),
  progress: $("sr-progress"),
  done: $("sr-count"),
  cost: $("sr-cost"),
  runBudget: $("sr-budget"),
  error: $("sr-error"),
  cancel: $("sr-cancel"),
};
const JOB_NAMES = { samples: "Sampling", corrections: "Corrections" };
let consistencyId = kind.live_run;
let consistencyTimer = 0;

// Shows the fields of the chosen job only.
function showJobFields() {
  for (const field of sample.form?.querySelectorAll("[data-job]") || []) {
    field.hidden = field.dataset.job !== sample.job.value;
  }
}

function consistencyParams() {
  const params =
    sample.job.value === "corrections"
      ? { improver: sample.improver.value.trim(), summaries: sample.summaries.checked }
      : {
          samplers: sample.models.value.split(",").map((m) => m.trim()).filter(Boolean),
          samples: Number(sample.count.value),
        };
  return params;
}

function estimateText(e) {
  const cost = e.cost === null ? "no price set for these models" : `about ${Number(e.cost).toFixed(2)}`;
  const tokens =
    `~${e.prompt_tokens.toLocaleString()} prompt and ${e.completion_tokens.toLocaleString()} ` +
    `completion tokens, ${cost}.`;
  const k = e.calls_by_kind;
  if (e.job === "corrections") {
    return (
      `${e.documents} answers with flagged sentences to correct with ${e.models.join(", ")}: ` +
      `${e.calls} calls (${k.correction_calls} corrections, ${k.summary_calls} error summaries), ${tokens}`
    );
  }
  return (
    `${e.documents} answers to sample with ${e.models.join(", ")}: ${e.calls} calls ` +
    `(${k.reformulation_calls} writing prompt variants), ${tokens}`
  );
}

async function consistencyEstimate() {
  sample.estimate.textContent = "Estimating…";
  try {
    const e = await api(kind.urls.estimate, {
      method: "POST",
      body: { project: data.project.id, job: sample.job.value, params: consistencyParams() },
    });
    sample.estimate.textContent = estimateText(e);
    if (e.cost !== null && sample.budget.value === "") sample.budget.value = Number(e.cost).toFixed(2);
  } catch (error) {
    sample.estimate.textContent = `Could not estimate: ${error.message}`;
  }
}

async function consistencyStart(event) {
  event.preventDefault();
  if (sample.budget.value === "") {
    sample.estimate.textContent = "Set a budget: the run stops before its cost would pass it.";
    sample.budget.focus();
    return;
  }
  sample.start.disabled = true;
  try {
    const run = await api(kind.urls.runs, {
      method: "POST",
      body: {
        project: data.project.id,
        job: sample.job.value,
        budget: sample.budget.value,
        params: consistencyParams(),
      },
    });
    consistencyId = run.id;
    sample.estimate.textContent = `${JOB_NAMES[run.job]} run ${run.id} queued.`;
    showConsistency(run);
    pollConsistency();
  } catch (error) {
    sample.start.disabled = false;
    sample.estimate.textContent = `Could not start the run: ${error.message}`;
  }
}

function showConsistency(run) {
  sample.panel.hidden = false;
  sample.runJob.textContent = JOB_NAMES[run.job] || run.job;
  sample.id.textContent = `#${run.id}`;
  sample.status.textContent = run.status;
  sample.status.className = `badge run-${run.status}`;
  const total = run.progress_total || 0;
  sample.progress.value = total ? run.progress_done / total : 0;
  sample.done.textContent = `${run.progress_done} / ${total} answers`;
  sample.cost.textContent = Number(run.cost).toFixed(4);
  sample.runBudget.textContent = Number(run.budget).toFixed(2);
  sample.error.hidden = !run.error;
  sample.error.textContent = run.error || "";
  const done = TERMINAL.has(run.status);
  sample.cancel.hidden = done;
  sample.cancel.disabled = done || Boolean(run.cancel_requested);
  sample.start.disabled = !done;
}

async function pollConsistency() {
  window.clearTimeout(consistencyTimer);
  if (consistencyId === null) return;
  try {
    const run = await api(url(kind.urls.run, consistencyId));
    showConsistency(run);
    if (TERMINAL.has(run.status)) return;
  } catch (error) {
    sample.estimate.textContent = `Run ${consistencyId}: ${error.message}`;
  }
  consistencyTimer = window.setTimeout(pollConsistency, POLL_MS);
}

async function consistencyCancel() {
  if (consistencyId === null) return;
  sample.cancel.disabled = true;
  try {
    showConsistency(await api(url(kind.urls.cancel, consistencyId), { method: "POST" }));
    pollConsistency();
  } catch (error) {
    sample.cancel.disabled = false;
    sample.estimate.textContent = `Could not cancel: ${error.message}`;
  }
}

$("sampling").addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button) return;
  if (button.dataset.action === "sample-estimate") consistencyEstimate();
  else if (button.dataset.action === "sample-cancel") consistencyCancel();
});

if (sample.form) {
  sample.form.addEventListener("submit", consistencyStart);
  sample.job.addEventListener("change", showJobFields);
  showJobFields();
  if (consistencyId !== null) pollConsistency();
}
