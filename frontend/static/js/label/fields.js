// Fills a claim partial (templates/claims/<kind>.html) from a labeling item.
// A partial declares what it shows with attributes, so a new kind of claim
// needs a template and no script:
//   data-field="name"        the item's field as text ("" when empty); a
//                            dotted path reads inside it ("details.status");
//     data-format="score"    a number with two decimals, data-empty otherwise;
//     data-format="check"    true / false / null as yes / no / could not be
//                            checked;
//   data-hide-empty="path"   hidden while that field is empty (null, "", []);
//   data-list="path"         a list filled from that array with its <template>
//                            (data-ev="" is the element itself, data-ev="name"
//                            its field; data-hide-empty="name" inside it hides
//                            while that field of the entry is empty);
//     data-mark="path"       the entry whose index that field holds gets the
//                            class data-mark-class and aria-current="true"
//                            (the deciding one of several);
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
    model_from: item.model ? `from ${item.model}` : "",
  };
}

const CHECK = { true: "yes", false: "no", null: "could not be checked" };

// The value at a dotted path of the item ("details.matched.case_name").
function at(fields, path) {
  return path.split(".").reduce((v, key) => (v == null ? v : v[key]), fields);
}

function empty(value) {
  return value == null || value === "" || (Array.isArray(value) && value.length === 0);
}

function text(value, node) {
  if (node.dataset.format === "score") {
    return typeof value === "number" ? value.toFixed(2) : node.dataset.empty || "";
  }
  if (node.dataset.format === "check") return CHECK[value ?? null] ?? "";
  if (value == null) return node.dataset.empty || "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function fillClaim(root, item) {
  const fields = derived(item);
  for (const node of root.querySelectorAll("[data-field]")) {
    node.textContent = text(at(fields, node.dataset.field), node);
  }
  for (const node of root.querySelectorAll("[data-hide-empty]")) {
    node.hidden = empty(at(fields, node.dataset.hideEmpty));
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
    fillList(list, item.evidence);
  }
  for (const list of root.querySelectorAll("[data-list]")) {
    const marked = list.dataset.mark ? at(fields, list.dataset.mark) : null;
    fillList(list, at(fields, list.dataset.list), marked);
  }
}

function fillList(list, values, marked = null) {
  const template = list.querySelector("template");
  list.replaceChildren(template);
  (values || []).forEach((value, index) => {
    const card = template.content.cloneNode(true);
    for (const node of card.querySelectorAll("[data-ev]")) {
      const name = node.dataset.ev;
      node.textContent = text(name ? value[name] : value, node);
    }
    for (const node of card.querySelectorAll("[data-hide-empty]")) {
      node.hidden = empty(value[node.dataset.hideEmpty]);
    }
    if (index === marked && card.firstElementChild) {
      card.firstElementChild.classList.add(list.dataset.markClass || "marked");
      card.firstElementChild.setAttribute("aria-current", "true");
    }
    list.append(card);
  });
}
