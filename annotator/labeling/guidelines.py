"""A project's labeling guideline: Markdown, versioned (every save that
changes it is a new version, old ones are kept), rendered to HTML here and
nowhere else, and cut into sections by heading so the labeling screen can show
beside a claim the section of its type.

The renderer is the trust boundary: guideline text comes from a project admin
but reaches every expert's page as HTML, so raw HTML in it is shown as text and
only http, https and mailto links survive.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from markdown_it import MarkdownIt

from annotator.core.errors import GuidelineInvalid, LabelInvalid
from annotator.models import Guideline, Project
from annotator.projects import access
from pipeline.jsonl import text_problem

GUIDELINE_MAX_CHARS = 100_000

_LINK_SCHEMES = ("http:", "https:", "mailto:")
_SPACE = re.compile(r"\s+")


def _link_allowed(url: str) -> bool:
    # Called by markdown-it on every link and autolink target, before it is
    # written out: a scheme outside the list (javascript:, data:, vbscript:,
    # or a relative URL, whose meaning depends on the page showing it) leaves
    # the link's source as text.
    return url.strip().lower().startswith(_LINK_SCHEMES)


def _link_open(renderer, tokens, idx, options, env) -> str:
    # The labeling page keeps working in its tab; noopener so the opened page
    # cannot reach back into it.
    tokens[idx].attrSet("target", "_blank")
    tokens[idx].attrSet("rel", "noopener noreferrer")
    return renderer.renderToken(tokens, idx, options, env)


class _Markdown(MarkdownIt):
    """MarkdownIt that keeps a link only if ``_link_allowed`` passes it."""

    def validateLink(self, url: str) -> bool:
        return _link_allowed(url)


def _markdown() -> MarkdownIt:
    md = _Markdown("commonmark", {"html": False, "linkify": False})
    md.enable(["table", "strikethrough"])
    # Images would be fetched from elsewhere by every expert's browser (and the
    # CSP refuses them): their source stays text.
    md.disable("image")
    md.add_render_rule("link_open", _link_open)
    return md


_MD = _markdown()


def section_key(name: str) -> str:
    """How a heading and a type name are compared: case and runs of spaces
    ignored (the labeling page gets items' keys made here)."""
    return _SPACE.sub(" ", name).strip().lower()


@dataclass(frozen=True)
class Rendered:
    html: str
    # One per heading: {heading, key, level, html}, html being what follows
    # the heading up to the next heading of the same or a higher level.
    sections: tuple[dict[str, Any], ...]


def _heading_text(inline) -> str:
    # The heading as read, without its Markdown: "`HearingDate`" and
    # "*Hearing* Date" name the types HearingDate and Hearing Date.
    parts = [
        child.content
        for child in inline.children or ()
        if child.type in ("text", "code_inline")
    ]
    return "".join(parts)


@lru_cache(maxsize=16)
def guideline_render(text: str) -> Rendered:
    """The guideline's HTML and its sections. Cached: a version's text never
    changes, and every labeling page renders the latest one."""
    env: dict[str, Any] = {}
    tokens = _MD.parse(text, env)
    headings = [
        (i, int(token.tag[1:]))
        for i, token in enumerate(tokens)
        if token.type == "heading_open"
    ]
    sections = []
    for n, (start, level) in enumerate(headings):
        end = next((i for i, other in headings[n + 1 :] if other <= level), len(tokens))
        heading = _heading_text(tokens[start + 1])
        body = tokens[start + 3 : end]  # after heading_open, inline, heading_close
        sections.append(
            {
                "heading": heading,
                "key": section_key(heading),
                "level": level,
                "html": _MD.renderer.render(body, _MD.options, env),
            }
        )
    html = _MD.renderer.render(tokens, _MD.options, env)
    return Rendered(html=html, sections=tuple(sections))


def section_keys(type_name: str, display_name: str = "") -> list[str]:
    """The keys of the sections a claim of this type is shown beside, in the
    order they are tried: its raw type name's, then its display name's. The
    labeling page shows the first section whose heading has one of them."""
    keys = (section_key(type_name), section_key(display_name))
    return list(dict.fromkeys(k for k in keys if k))


def guideline_latest(project: Project) -> Guideline | None:
    return Guideline.objects.filter(project=project).order_by("-version").first()


def guideline_get(project: Project, version: int) -> Guideline | None:
    if not 0 < version < 2**31:  # the column's range: no such version
        return None
    return Guideline.objects.filter(project=project, version=version).first()


def _text_clean(text: Any) -> str:
    if not isinstance(text, str):
        raise GuidelineInvalid("text: must be text")
    # A browser's textarea sends CRLF: the same guideline typed twice is the
    # same version.
    text = text.replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if not text.strip():
        raise GuidelineInvalid("text: the guideline is empty")
    if len(text) > GUIDELINE_MAX_CHARS:
        raise GuidelineInvalid(
            f"text: {len(text)} characters, over the limit of {GUIDELINE_MAX_CHARS}"
        )
    problem = text_problem(text)
    if problem:
        raise GuidelineInvalid(f"text: {problem}")
    return text


def guideline_preview(text: Any) -> str:
    """The HTML ``text`` would render to, checked as a save checks it."""
    return guideline_render(_text_clean(text)).html


def guideline_save(*, project: Project, user, text: Any) -> tuple[Guideline, bool]:
    """Save ``text`` as the project's next guideline version.

    Returns the latest version and whether it is new: text identical to the
    latest version's makes none. Raises PermissionDenied unless ``user`` is
    an admin of the project, GuidelineInvalid for text that cannot be one.
    """

    if access.project_role(user, project) not in access.MANAGE:
        raise PermissionDenied(
            f"editing the guideline needs the role admin on project {project.name!r}"
        )
    text = _text_clean(text)
    with transaction.atomic():
        # Two admins saving at once: the second waits here, then numbers its
        # version after the first's (or finds the same text and makes none).
        Project.objects.select_for_update().filter(pk=project.pk).first()
        latest = guideline_latest(project)
        if latest is not None and latest.text == text:
            return latest, False
        guideline = Guideline.objects.create(
            project=project,
            version=(latest.version if latest else 0) + 1,
            text=text,
            created_by=user,
        )
    return guideline, True


def label_guideline_version(*, project_id: int, version: Any) -> int | None:
    """The guideline version a label records: the one the client sent, which
    must be a version of the label's project, or the latest one when it sent
    none (None while the project has no guideline). LabelInvalid otherwise."""
    if version is None:
        return (
            Guideline.objects.filter(project_id=project_id)
            .aggregate(latest=Max("version"))
            .get("latest")
        )
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise LabelInvalid("guideline_version: a guideline version number, 1 or more")
    if (
        version >= 2**31
        or not Guideline.objects.filter(project_id=project_id, version=version).exists()
    ):
        raise LabelInvalid(
            f"guideline_version: the project has no guideline version {version}"
        )
    return version


def guideline_data(guideline: Guideline | None) -> dict[str, Any] | None:
    """A version as the labeling page and the API show it."""
    if guideline is None:
        return None
    rendered = guideline_render(guideline.text)
    return {
        "version": guideline.version,
        "text": guideline.text,
        "html": rendered.html,
        "sections": [dict(section) for section in rendered.sections],
        "created_by": guideline.created_by.get_username()
        if guideline.created_by
        else None,
        "created_at": guideline.created_at,
    }


def guideline_page_data(project: Project) -> dict[str, Any] | None:
    """The latest version for the labeling page: its HTML (the G panel) and
    its sections (shown beside items of their type); labels made on the page
    record its version."""
    guideline = guideline_latest(project)
    if guideline is None:
        return None
    rendered = guideline_render(guideline.text)
    return {
        "version": guideline.version,
        "html": rendered.html,
        "sections": [
            {"key": s["key"], "heading": s["heading"], "html": s["html"]}
            for s in rendered.sections
        ],
    }
