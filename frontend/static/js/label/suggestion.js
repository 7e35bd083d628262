// A correction the app suggests for the claim (a consistency run's improver
// rewriting a flagged sentence), shown as a word diff the expert accepts (A)
// or rejects (R). The decision goes with the label: accepted sends it as the
// label's correction of what the claim says. A partial opts in with
//   data-suggestion="path"   hidden unless the item has text at that path
//                            (the suggested correction);
//   data-suggestion-diff     the claim's value against it, word by word;
//   data-suggestion-state    the decision so far, in words.

import { span } from "./dom.js";
import { renderDraft } from "./render.js";
import { data, state } from "./state.js";

const TOKEN_LIMIT = 400; // words and spaces per side; beyond that no diff

function at(item, path) {
  return path.split(".").reduce((v, key) => (v == null ? v : v[key]), item);
}

function suggested(item) {
  const node = document.querySelector("#claim [data-suggestion]");
  if (!item || !node) return null;
  const text = at(item, node.dataset.suggestion);
  return typeof text === "string" && text ? text : null;
}

// Runs of [class, text] for the text a becomes b: "" kept, "d-del" removed,
// "d-ins" added; by longest common subsequence of words and spaces.
export function diffWords(a, b) {
  const x = a.match(/\s+|\S+/g) || [];
  const y = b.match(/\s+|\S+/g) || [];
  if (x.length > TOKEN_LIMIT || y.length > TOKEN_LIMIT) {
    return [["d-del", a], ["d-ins", b]];
  }
  const width = y.length + 1;
  const table = new Uint16Array((x.length + 1) * width);
  for (let i = x.length - 1; i >= 0; i--) {
    for (let j = y.length - 1; j >= 0; j--) {
      table[i * width + j] =
        x[i] === y[j]
          ? table[(i + 1) * width + j + 1] + 1
          : Math.max(table[(i + 1) * width + j], table[i * width + j + 1]);
    }
  }
  const runs = [];
  const add = (cls, text) => {
    const last = runs[runs.length - 1];
    if (last && last[0] === cls) last[1] += text;
    else runs.push([cls, text]);
  };
  let i = 0;
  let j = 0;
  while (i < x.length || j < y.length) {
    if (i < x.length && j < y.length && x[i] === y[j]) {
      add("", x[i++]);
      j++;
    } else if (j >= y.length || (i < x.length && table[(i + 1) * width + j] >= table[i * width + j + 1])) {
      add("d-del", x[i++]);
    } else {
      add("d-ins", y[j++]);
    }
  }
  return runs;
}

// Fills the partial's suggestion block for the item on screen.
export function renderSuggestion(item) {
  const root = document.querySelector("#claim [data-suggestion]");
  if (!root) return;
  const text = suggested(item);
  root.hidden = text === null;
  if (text === null) return;
  const value = typeof item.value === "string" ? item.value : JSON.stringify(item.value);
  const diff = root.querySelector("[data-suggestion-diff]");
  if (diff) diff.replaceChildren(...diffWords(value, text).map(([cls, t]) => (cls ? span(t, cls) : t)));
  const decided = root.querySelector("[data-suggestion-state]");
  if (decided) {
    decided.textContent =
      state.draft.suggestion === "accepted"
        ? "Accepted: the correction goes with your label."
        : state.draft.suggestion === "rejected"
          ? "Rejected: the correction is recorded as wrong."
          : "Not decided: accept (A) or reject (R) it, then label the sentence.";
  }
  root.dataset.decision = state.draft.suggestion || "";
}

export function acceptSuggestion() {
  const text = suggested(state.current);
  if (text === null) return;
  state.draft.suggestion = "accepted";
  state.draft.correction = { [data.project.correction_keys.value]: text };
  renderSuggestion(state.current);
  renderDraft();
}

export function rejectSuggestion() {
  const text = suggested(state.current);
  if (text === null) return;
  state.draft.suggestion = "rejected";
  if (state.draft.correction?.[data.project.correction_keys.value] === text) state.draft.correction = null;
  renderSuggestion(state.current);
  renderDraft();
}
