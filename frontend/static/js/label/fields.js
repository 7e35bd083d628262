// Fills a claim partial (templates/claims/<kind>.html) from a labeling item.
// A partial declares what it shows with attributes, so a new kind of claim
// needs a template and no script:
//   data-field="name"        the item's field as text ("" when empty);
//     data-format="score"    a number with two decimals, data-empty otherwise;
//   data-diff="name"         two of these: their fields' character diff
//                            (for an item whose context_found is false, the
//                            first as claimed and the second "not found");
//   data-diff-legend         shown only while the diff highlights something;
//   data-evidence            a list filled from item.evidence with its
//                            <template>, whose data-ev="name" elements get
//                            each evidence item's field.
// Everything reaches the page through textContent (claims are untrusted).

import { renderDiff } from "./diff.js";

// Fields computed from the item for display.
function derived(item) {
  return {
    ...item,
    type_raw: item.type_display === item.type ? "" : `(${item.type})`,
    model_from: item.model ? `from ${item.model}` : "",
  };
}

function text(value, node) {
  if (node.dataset.format === "score") {
    return typeof value === "number" ? value.toFixed(2) : node.dataset.empty || "";
  }
  if (value == null) return node.dataset.empty || "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function fillClaim(root, item) {
  const fields = derived(item);
  for (const node of root.querySelectorAll("[data-field]")) {
    node.textContent = text(fields[node.dataset.field], node);
  }
  const diffs = root.querySelectorAll("[data-diff]");
  let differs = false;
  if (diffs.length === 2) {
    const [a, b] = diffs;
    differs = renderDiff(
      a,
      b,
      fields[a.dataset.diff] || "",
      fields[b.dataset.diff] || "",
      item.context_found ?? null,
    );
  }
  for (const legend of root.querySelectorAll("[data-diff-legend]")) legend.hidden = !differs;
  for (const list of root.querySelectorAll("[data-evidence]")) {
    const template = list.querySelector("template");
    list.replaceChildren(template);
    for (const evidence of item.evidence || []) {
      const card = template.content.cloneNode(true);
      for (const node of card.querySelectorAll("[data-ev]")) {
        node.textContent = text(evidence[node.dataset.ev], node);
      }
      list.append(card);
    }
  }
}
