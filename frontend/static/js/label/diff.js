// The evidence diff: the LLM's context against the document span it was
// aligned to, character by character, as highlighted runs ("d-ins" only in
// the context, "d-del" only in the document, "d-chg" replaced).

import { span } from "./dom.js";

const DIFF_LIMIT = 400; // characters per side; beyond that the diff is skipped

// Fills contextNode and spanNode with the two sides of the diff; found is
// false when the context matches no passage of the document (the span is then
// meaningless and not shown), null when it was not looked for yet. Returns
// whether a difference is highlighted (the legend shows only then).
export function renderDiff(contextNode, spanNode, context, aligned, found = true) {
  if (found === false || !aligned) {
    contextNode.textContent = context;
    spanNode.replaceChildren(
      found === null
        ? span("(not checked yet)", "d-none")
        : span("Not found in the document: no passage of it matches the LLM's context.", "d-none"),
    );
    return false;
  }
  if (context.length > DIFF_LIMIT || aligned.length > DIFF_LIMIT) {
    contextNode.textContent = context;
    spanNode.textContent = aligned;
    return false;
  }
  const { a, b } = diffChars(context, aligned);
  contextNode.replaceChildren(...a.map(([cls, text]) => (cls ? span(text, cls) : text)));
  spanNode.replaceChildren(...b.map(([cls, text]) => (cls ? span(text, cls) : text)));
  return [...a, ...b].some(([cls]) => cls);
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
