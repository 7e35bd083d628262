"""The REST API's reference page (``docs/api.md``) from its OpenAPI schema,
so the manual says what the code serves:

    python manage.py spectacular --format openapi-json --file var/openapi.json
    python -m tools.api_docs var/openapi.json docs/api.md

``make docs`` runs both; ``tests/annotator/test_docs.py`` fails when the page
is out of date.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

METHODS = ("get", "post", "put", "patch", "delete")
INTRO = """\
# The REST API

Generated from the OpenAPI schema the app serves at `/api/schema/` (browsable
at `/api/docs/`) by `make docs`; do not edit by hand. Authentication: a
session (the web pages) or `Authorization: Token <key>` (`POST
/api/auth/token/`). Errors are JSON with a `detail` naming the problem.

Claims were called predictions before this release. For one more release the
API still reads the old names: `/api/predictions/` (now `/api/claims/`), a
request's `prediction` field (now `claim`), the export kind `predictions` and a
labels line's `prediction_id` (now `claim_id`), and the claims' filter `type`
(now `group`). Responses use the new names. A claim's own fields are in its
`data`, as its kind defines them: an extracted field's `type`, `value` and
`context` (top-level fields before this release), a citation's `citation`,
`start`, `end` and `form`, a RAG answer's `answer` and `query`, an answer
sentence's `sentence`, `block`, `start` and `end`. A project's kind brings
its own settings in its `options` (an extraction project's `entity_schema`,
`extraction_prompt` and `align_threshold`, top-level fields before this
release, still read there); those sent are merged into those stored.

Labels were called annotations before this release: `/api/annotations/` (now
`/api/labels/`) is still served for one release, outside this page. A label's
`correction` holds the right values of some of its claim's `data` fields, those
its kind lets an expert correct (an extracted field's `value` and `type`, a
citation's `citation`, a RAG answer's `answer`, a sentence's `sentence`); the
`corrected_type` and `corrected_value` sent before this release are still read
as the correction of its group and of what the claim says.
"""


def _text(value: str | None) -> str:
    """One table cell or paragraph: no line breaks, no bare pipes."""
    return " ".join((value or "").split()).replace("|", "\\|")


def _ref(schema: dict[str, Any]) -> str:
    """A schema as a short type: a link to a named one, else its type."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for combined in ("allOf", "oneOf", "anyOf"):
        if combined in schema:
            return " or ".join(_ref(s) for s in schema[combined])
    kind = schema.get("type", "object")
    if kind == "array":
        return f"list of {_ref(schema.get('items', {}))}"
    if "enum" in schema:
        return " / ".join(f"`{v}`" for v in schema["enum"] if v not in ("", None))
    return str(kind) + (f" ({schema['format']})" if "format" in schema else "")


def _operation(path: str, method: str, op: dict[str, Any]) -> list[str]:
    lines = [f"### `{method.upper()} {path}`", ""]
    if op.get("description"):
        lines += [_text(op["description"]), ""]
    params = op.get("parameters", [])
    if params:
        lines += [
            "| parameter | in | required | description |",
            "| --- | --- | --- | --- |",
        ]
        lines += [
            f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} "
            f"| {_text(p.get('description'))} |"
            for p in params
        ]
        lines.append("")
    body = op.get("requestBody", {}).get("content", {})
    if body:
        media, content = next(iter(body.items()))
        lines += [f"Request ({media}): {_ref(content.get('schema', {}))}", ""]
    for code, response in op.get("responses", {}).items():
        content = response.get("content", {})
        shown = (
            _ref(next(iter(content.values())).get("schema", {}))
            if content
            else _text(response.get("description")) or "no body"
        )
        lines.append(f"- {code}: {shown}")
    return [*lines, ""]


def _component(name: str, schema: dict[str, Any]) -> list[str]:
    lines = [f"### {name}", ""]
    if schema.get("description"):
        lines += [_text(schema["description"]), ""]
    properties = schema.get("properties", {})
    if not properties:
        return [*lines, f"{_ref(schema)}", ""]
    required = set(schema.get("required", []))
    lines += ["| field | type | description |", "| --- | --- | --- |"]
    for field, spec in properties.items():
        notes = [
            note
            for note, on in (
                ("required", field in required and not spec.get("readOnly")),
                ("read-only", spec.get("readOnly")),
                ("may be null", spec.get("nullable")),
            )
            if on
        ]
        described = _text(spec.get("description"))
        if notes:
            described = f"{described} ({', '.join(notes)})".strip()
        lines.append(f"| `{field}` | {_ref(spec)} | {described} |")
    return [*lines, ""]


def render(schema: dict[str, Any]) -> str:
    """The page: every operation grouped by its tag, then every schema."""
    by_tag: dict[str, list[tuple[str, str, dict]]] = defaultdict(list)
    for path, item in sorted(schema.get("paths", {}).items()):
        for method in METHODS:
            if method in item:
                op = item[method]
                by_tag[(op.get("tags") or ["api"])[0]].append((path, method, op))
    lines = [INTRO]
    for tag in sorted(by_tag):
        lines += [f"## {tag}", ""]
        for path, method, op in by_tag[tag]:
            lines += _operation(path, method, op)
    lines += ["## Schemas", ""]
    for name, component in sorted(
        schema.get("components", {}).get("schemas", {}).items()
    ):
        lines += _component(name, component)
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "schema", type=Path, help="OpenAPI JSON (manage.py spectacular)"
    )
    parser.add_argument("out", type=Path, help="the Markdown page to write")
    args = parser.parse_args(argv)
    schema = json.loads(args.schema.read_text(encoding="utf-8"))
    args.out.write_text(render(schema), encoding="utf-8")


if __name__ == "__main__":
    main()
