"""A synthetic ASYLEX-like corpus: documents, LLM-style predictions, gold labels.

The documents imitate Canadian Immigration and Refugee Board decisions (the
paper's ASYLEX setting) in several layouts; the predictions imitate what
black-box LLMs return for them, including the mistakes of the paper's Table 2;
the labels say which predictions are safe passages. Tests, the demo and the
quality benchmark use it, so it is seeded and byte-for-byte reproducible and
uses nothing but :mod:`random`.

Every prediction carries ``extra["kind"]`` naming what the fake LLM did:

SAFE (the context is in the document, near-verbatim, and supports the value)
    exact            copied verbatim: the entity plus one or two neighbouring words
    case             letter case changed
    ocr_split        one space inserted inside a word, or a scan's split word mended
    inserted_tokens  one word of the document left out of the context
    elided_tokens    a run of words (often another date) skipped
    translation      one word swapped for its French/English cognate
    whitespace       line breaks, tabs and runs of spaces collapsed to one space
UNSAFE
    hallucinated_context  a plausible sentence that is not in the document
    bad_grounding         real text from the document that does not support the value
    incorrect_entity      a real span of another kind (claimant named as judge,
                          decision date as hearing date, "IAD File No." as an
                          organisation)
    wrong_value           the right context with a different value (a day off,
                          day and month swapped, another country, Public/Private
                          swapped)

Unsafe predictions other than hallucinations may also carry
``extra["mistranscription"]`` naming a surface change made to their context.
Mistranscribed contexts keep matches / alignment length well above 0.6.

Document ids are ``demo-0000``, ``demo-0001``, ... for every seed: mixing
corpora made with different seeds needs the caller to rename them. Document
``i`` depends only on ``seed`` and ``i`` (not on ``docs``), so a larger corpus
extends a smaller one with the same seed and styles.
"""

from __future__ import annotations

import json
import random
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from .jsonl import document_to_json, label_to_json, prediction_to_json, write_jsonl
from .types import Document, Label, Prediction

STYLES: tuple[str, ...] = ("irb_header", "narrative", "tabular")
"""Styles produced by default."""

HELD_OUT_STYLES: tuple[str, ...] = ("tribunal",)
"""Styles produced only when asked for, to test generalisation."""

SAFE_KINDS: tuple[str, ...] = (
    "exact",
    "case",
    "ocr_split",
    "inserted_tokens",
    "elided_tokens",
    "translation",
    "whitespace",
)
MISTRANSCRIPTION_KINDS: tuple[str, ...] = SAFE_KINDS[1:]
UNSAFE_KINDS: tuple[str, ...] = (
    "hallucinated_context",
    "bad_grounding",
    "incorrect_entity",
    "wrong_value",
)

DEFAULT_TYPES: tuple[str, ...] = (
    "HearingDate",
    "DecisionDate",
    "JudgeName",
    "GPE",
    "Organization",
    "PublicOrPrivateHearing",
    "HearingType",
)
TRIBUNAL_TYPES: tuple[str, ...] = (
    "ClaimantName",
    "HearingDate",
    "DecisionDate",
    "Tribunal",
    "City",
    "HearingFormat",
)


@dataclass(frozen=True)
class ModelProfile:
    """How often a fake source LLM errs.

    ``unsafe_rate`` is the share of its predictions that are unsafe;
    ``mistranscription_rate`` the share of safe ones whose context is not
    copied verbatim; ``unsafe_weights`` weigh :data:`UNSAFE_KINDS` in order.
    """

    unsafe_rate: float
    mistranscription_rate: float
    unsafe_weights: tuple[float, float, float, float]


# Bigger models err less (paper 5.4); o4-mini is best, llama-4-scout worst with
# 42% mistranscriptions (paper 5.5). Documents go to models in turn, so the
# overall unsafe share is the mean of the rates, about 18%.
MODELS: dict[str, ModelProfile] = {
    "o4-mini": ModelProfile(0.05, 0.05, (0.10, 0.30, 0.20, 0.40)),
    "gpt-4.1": ModelProfile(0.09, 0.08, (0.15, 0.30, 0.20, 0.35)),
    "gpt-4.1-mini": ModelProfile(0.15, 0.14, (0.20, 0.25, 0.25, 0.30)),
    "gpt-4.1-nano": ModelProfile(0.24, 0.22, (0.25, 0.25, 0.25, 0.25)),
    "llama-4-scout": ModelProfile(0.36, 0.42, (0.35, 0.25, 0.20, 0.20)),
}

_FAMILY = {
    "HearingDate": "date",
    "DecisionDate": "date",
    "EventDate": "date",
    "JudgeName": "name",
    "ClaimantName": "name",
    "CounselName": "name",
    "InterpreterName": "name",
    "MemberName": "name",
    "GPE": "text",
    "Organization": "text",
    "Tribunal": "text",
    "City": "text",
    "Province": "text",
    "Respondent": "text",
    "FileLabel": "text",
    "PublicOrPrivateHearing": "enum",
    "HearingType": "enum",
    "HearingFormat": "enum",
}
_ENUMS = {
    "PublicOrPrivateHearing": ("Public", "Private"),
    "HearingType": ("In Person", "Virtual"),
    "HearingFormat": ("In person", "Teleconference", "Videoconference", "Written"),
}
# Spans of another kind an LLM mistakes for each type (incorrect_entity).
_CONFUSABLE = {
    "HearingDate": ("DecisionDate", "EventDate"),
    "DecisionDate": ("HearingDate", "EventDate"),
    "JudgeName": ("ClaimantName", "CounselName", "InterpreterName"),
    "ClaimantName": ("MemberName", "CounselName"),
    "GPE": ("Organization", "ClaimantName"),
    "Organization": ("FileLabel", "GPE"),
    "Tribunal": ("Respondent",),
    "City": ("Province", "Respondent"),
}


def _date_fields(value: str) -> dict[str, Any]:
    return {
        "description": value,
        "fields": {
            "yyyy": "year",
            "mm": "month, null if unknown",
            "dd": "day, null if unknown",
        },
        "render": "date",
    }


def demo_schema() -> dict[str, Any]:
    """The schema of the default styles (paper section 4), as schema JSON."""
    return {
        "name": "asylex-demo",
        "instructions": "Documents are decisions of the Immigration and Refugee "
        "Board of Canada. Copy as context the entity plus one or two "
        "neighbouring words.",
        "entity_types": {
            "HearingDate": _date_fields("a date on which the hearing was held"),
            "DecisionDate": _date_fields("the date the decision was made or signed"),
            "JudgeName": {
                "description": "the presiding member or judge",
                "fields": {"first_name": "given name", "last_name": "family name"},
                "render": "name",
            },
            "GPE": {
                "description": "a geopolitical entity: country, province, city",
                "display_name": "GPE",
            },
            "Organization": {
                "description": "an organisation, including divisions, "
                "departments, agencies, parties and armed groups"
            },
            "PublicOrPrivateHearing": {
                "description": "whether the hearing was public or private",
                "enum": list(_ENUMS["PublicOrPrivateHearing"]),
            },
            "HearingType": {
                "description": "whether the hearing was in person or virtual",
                "enum": list(_ENUMS["HearingType"]),
            },
        },
    }


def tribunal_schema() -> dict[str, Any]:
    """The schema of the held-out ``"tribunal"`` style, as schema JSON."""
    return {
        "name": "tribunal-demo",
        "instructions": "Documents are decisions of Canadian administrative "
        "tribunals (social security, employment).",
        "entity_types": {
            "ClaimantName": {
                "description": "the appellant or claimant",
                "fields": {"first_name": "given name", "last_name": "family name"},
                "render": "name",
            },
            "HearingDate": _date_fields("a date on which the hearing was held"),
            "DecisionDate": _date_fields("the date of the decision"),
            "Tribunal": {"description": "the tribunal, division or section deciding"},
            "City": {"description": "a city named in the decision"},
            "HearingFormat": {
                "description": "how the hearing was held",
                "enum": list(_ENUMS["HearingFormat"]),
            },
        },
    }


# --------------------------------------------------------------------------
# Word banks

_COUNTRIES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Nigeria", ("Lagos", "Abuja", "Port Harcourt", "Ibadan"), "Yoruba"),
    ("Mexico", ("Guadalajara", "Monterrey", "Acapulco", "Puebla"), "Spanish"),
    ("Colombia", ("Bogotá", "Cali", "Medellín", "Cúcuta"), "Spanish"),
    ("Haiti", ("Port-au-Prince", "Cap-Haïtien", "Gonaïves"), "Haitian Creole"),
    ("Pakistan", ("Lahore", "Karachi", "Peshawar", "Quetta"), "Urdu"),
    ("India", ("Amritsar", "Ludhiana", "Chennai", "Jalandhar"), "Punjabi"),
    ("Sri Lanka", ("Jaffna", "Colombo", "Batticaloa", "Trincomalee"), "Tamil"),
    ("China", ("Fuzhou", "Guangzhou", "Chengdu", "Wenzhou"), "Mandarin"),
    ("Iran", ("Tehran", "Shiraz", "Tabriz", "Mashhad"), "Farsi"),
    ("Iraq", ("Baghdad", "Erbil", "Mosul", "Basra"), "Arabic"),
    ("Syria", ("Aleppo", "Homs", "Damascus", "Latakia"), "Arabic"),
    ("Eritrea", ("Asmara", "Keren", "Massawa"), "Tigrinya"),
    ("Ethiopia", ("Addis Ababa", "Gondar", "Dire Dawa"), "Amharic"),
    ("Somalia", ("Mogadishu", "Kismayo", "Baidoa"), "Somali"),
    ("Afghanistan", ("Kabul", "Herat", "Mazar-i-Sharif", "Jalalabad"), "Dari"),
    ("Turkey", ("Istanbul", "Diyarbakır", "Ankara", "Izmir"), "Turkish"),
    ("Hungary", ("Miskolc", "Budapest", "Debrecen"), "Hungarian"),
    ("Czech Republic", ("Ostrava", "Brno", "Kladno"), "Czech"),
    ("Albania", ("Tirana", "Shkodër", "Durrës"), "Albanian"),
    ("Democratic Republic of the Congo", ("Kinshasa", "Goma", "Bukavu"), "Lingala"),
    ("Burundi", ("Bujumbura", "Gitega"), "Kirundi"),
    ("Cameroon", ("Douala", "Yaoundé", "Bamenda"), "French"),
    ("Zimbabwe", ("Harare", "Bulawayo", "Mutare"), "Shona"),
    ("Kenya", ("Nairobi", "Mombasa", "Kisumu"), "Swahili"),
    ("Uganda", ("Kampala", "Gulu", "Entebbe"), "Luganda"),
    ("Ghana", ("Accra", "Kumasi", "Tamale"), "Twi"),
    ("Jamaica", ("Kingston", "Montego Bay", "Spanish Town"), "English"),
    ("Saint Vincent and the Grenadines", ("Kingstown", "Georgetown"), "English"),
    ("Honduras", ("San Pedro Sula", "Tegucigalpa", "La Ceiba"), "Spanish"),
    ("El Salvador", ("San Salvador", "Santa Ana", "San Miguel"), "Spanish"),
    ("Guatemala", ("Guatemala City", "Quetzaltenango"), "Spanish"),
    ("Venezuela", ("Caracas", "Maracaibo", "Valencia"), "Spanish"),
    ("Russia", ("Moscow", "Saint Petersburg", "Grozny"), "Russian"),
    ("Ukraine", ("Kyiv", "Kharkiv", "Odesa"), "Ukrainian"),
    ("Georgia", ("Tbilisi", "Batumi", "Kutaisi"), "Georgian"),
    ("Egypt", ("Cairo", "Alexandria", "Asyut"), "Arabic"),
    ("Libya", ("Tripoli", "Benghazi", "Misrata"), "Arabic"),
    ("Sudan", ("Khartoum", "Omdurman", "Nyala"), "Arabic"),
    ("Yemen", ("Sana'a", "Aden", "Taiz"), "Arabic"),
    ("Bangladesh", ("Dhaka", "Sylhet", "Chittagong"), "Bengali"),
    ("Nepal", ("Kathmandu", "Pokhara"), "Nepali"),
    ("Myanmar", ("Yangon", "Mandalay", "Sittwe"), "Burmese"),
    ("Saudi Arabia", ("Riyadh", "Jeddah", "Dammam"), "Arabic"),
    ("Lebanon", ("Beirut", "Sidon", "Tyre"), "Arabic"),
    ("Rwanda", ("Kigali", "Butare"), "Kinyarwanda"),
    ("Guinea", ("Conakry", "Kankan"), "Pular"),
    ("Algeria", ("Algiers", "Oran", "Constantine"), "Arabic"),
    ("Peru", ("Lima", "Arequipa", "Cusco"), "Spanish"),
)
_REGIONS = (  # IRB office: file-number letter, city, province
    ("T", "Toronto", "Ontario"),
    ("T", "Mississauga", "Ontario"),
    ("T", "Ottawa", "Ontario"),
    ("T", "Hamilton", "Ontario"),
    ("M", "Montréal", "Quebec"),
    ("M", "Québec City", "Quebec"),
    ("V", "Vancouver", "British Columbia"),
    ("V", "Calgary", "Alberta"),
    ("V", "Edmonton", "Alberta"),
    ("V", "Winnipeg", "Manitoba"),
    ("T", "Halifax", "Nova Scotia"),
    ("V", "Regina", "Saskatchewan"),
)
_FIRST = (
    "Ahmed Amina Chen Daniela Emeka Fatima Gustavo Hana Ibrahim Jasmine Kwame Lina "
    "Mohammed Nadia Olga Pedro Qiang Rania Samuel Tamara Umar Valentina Wei Yusuf "
    "Zainab Arjun Beatriz Dmitri Esther Farid Gabriela Hassan Irina Joseph Kateryna "
    "Luis Mariam Nikolai Oluwaseun Priya Rashid Sofia Thabo Víctor Yara Abdi Carmen "
    "Dawit Elif Faisal Giorgi Hamid Imani Jean-Pierre Kamal Leila Miguel Natalia"
).split()
_LAST = (
    "Okafor Hernández Rodríguez Joseph Khan Singh Sivakumar Lin Rahimi Al-Hassan "
    "Haddad Tesfaye Bekele Abdullahi Ahmadi Yılmaz Horváth Novák Hoxha Mukendi "
    "Niyonzima Fotso Moyo Otieno Mensah Campbell Baptiste López Castillo Morales "
    "Pérez Ivanov Kovalenko Beridze Mansour El-Masri Osman Saleh Rahman Shrestha "
    "Aung Nguyen Al-Qahtani Khoury Uwimana Diallo Benali Quispe Mahmoud Begum "
    "Chaudhry Gill Mohammadi Nkosi Kamau Asante Duarte Petrov"
).split()
_MEMBER_FIRST = (
    "Jane Paul Marie-Claude Robert Sylvie David Catherine Michael Louise Andrew "
    "Nathalie Stephen Karen Pierre Heather Jacques Linda Brian Isabelle Gordon "
    "Diane Marc Patricia François Susan Alain Deborah Richard Geneviève Kenneth"
).split()
_MEMBER_LAST = (
    "Smith Tremblay Gagnon MacDonald Roy Wilson Côté Martin Bouchard Thompson "
    "Lavoie Campbell Fortin Anderson Gauthier Morrison Ouellet Fraser Bélanger "
    "Stewart Pelletier Henderson Lévesque Reid Bergeron McLean Girard Sutherland "
    "Leblanc Chisholm Caron Kerr Poirier Hughes Dufour"
).split()
_CANADIAN_ORGS = (
    "Canada Border Services Agency",
    "Immigration, Refugees and Citizenship Canada",
    "Federal Court",
    "Legal Aid Ontario",
    "Royal Canadian Mounted Police",
    "Canadian Council for Refugees",
    "FCJ Refugee Centre",
    "Toronto Police Service",
)
_NGOS = (
    "Amnesty International",
    "Human Rights Watch",
    "the United Nations High Commissioner for Refugees",
    "the International Organization for Migration",
    "the United States Department of State",
    "the International Crisis Group",
    "Freedom House",
    "the Immigration and Refugee Board Research Directorate",
    "Médecins Sans Frontières",
    "the International Committee of the Red Cross",
    "Reporters Without Borders",
    "the Danish Immigration Service",
)
_POLICE = (
    "the National Police",
    "the Federal Police",
    "the State Security Service",
    "the Ministry of the Interior",
    "the Criminal Investigation Department",
    "the National Intelligence Service",
    "the Gendarmerie",
    "the Presidential Guard",
    "the Revolutionary Guard",
    "the Directorate of Military Intelligence",
)
_PARTIES = (
    "the People's Democratic Party",
    "the Movement for Democratic Change",
    "the Union for Progress",
    "the Liberal Democratic Alliance",
    "the National Front for Justice",
    "the Green Party",
    "the Students' Union",
    "the Teachers' Federation",
    "the Women's League for Peace",
    "the Committee for the Defence of Human Rights",
)
_GANGS = (
    "the Mara Salvatrucha",
    "Barrio 18",
    "the Jalisco New Generation Cartel",
    "Los Zetas",
    "the Basij",
    "Boko Haram",
    "Al-Shabaab",
    "the Gulf Clan",
    "the Black Axe confraternity",
    "the Shower Posse",
)
_PERSONAL_AGENTS = (
    "her former partner",
    "his former business associates",
    "the family of his late wife",
    "local gang members",
    "his paternal uncles",
    "a neighbourhood militia",
)
_GROUNDS = (
    "political opinion",
    "religion",
    "sexual orientation",
    "membership in a particular social group",
    "ethnicity",
    "race",
    "nationality",
)
_TRANSLATIONS = {
    "chambers": "chambres",
    "decision": "décision",
    "refugee": "réfugié",
    "refugees": "réfugiés",
    "member": "membre",
    "members": "membres",
    "public": "publique",
    "private": "privée",
    "person": "personne",
    "virtual": "virtuelle",
    "tribunal": "tribunal",
    "division": "section",
    "appeal": "appel",
    "minister": "ministre",
    "citizenship": "citoyenneté",
    "protection": "protection",
    "hearing": "audience",
    "date": "date",
    "claimant": "demandeur",
    "federal": "fédérale",
    "national": "nationale",
    "interior": "intérieur",
    "commission": "commission",
    "social": "sociale",
    "security": "sécurité",
    "general": "générale",
    "videoconference": "vidéoconférence",
    "teleconference": "téléconférence",
    "held": "tenue",
}
_BACK_TRANSLATIONS = {v: k for k, v in _TRANSLATIONS.items() if v != k}
_TRANSLATIONS = {k: v for k, v in _TRANSLATIONS.items() if k != v}

_MONTHS = (
    "January February March April May June July August September October "
    "November December"
).split()
_MOIS = (
    "janvier février mars avril mai juin juillet août septembre octobre novembre "
    "décembre"
).split()


# --------------------------------------------------------------------------
# Dates


def _date_value(d: date, *, partial: bool = False) -> dict[str, Any]:
    return {
        "yyyy": f"{d.year:04d}",
        "mm": f"{d.month:02d}",
        "dd": None if partial else f"{d.day:02d}",
    }


def _ordinal(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _format_date(d: date, fmt: str) -> str:
    month = _MONTHS[d.month - 1]
    if fmt == "us":
        return f"{month} {d.day}, {d.year}"
    if fmt == "us_abbr":
        short = month if len(month) <= 4 else month[:3] + "."
        return f"{short} {d.day}, {d.year}"
    if fmt == "uk":
        return f"{d.day} {month} {d.year}"
    if fmt == "iso":
        return d.isoformat()
    if fmt == "dmy":
        return f"{d.day:02d}/{d.month:02d}/{d.year}"
    if fmt == "dotted":
        return f"{d.day:02d}.{d.month:02d}.{d.year}"
    if fmt == "fr":
        day = "1er" if d.day == 1 else str(d.day)
        return f"{day} {_MOIS[d.month - 1]} {d.year}"
    if fmt == "ordinal":
        return f"the {_ordinal(d.day)} day of {month}, {d.year}"
    if fmt == "month":
        return f"{month} {d.year}"
    if fmt == "mois":
        return f"{_MOIS[d.month - 1]} {d.year}"
    raise ValueError(f"unknown date format {fmt!r}")


def _random_date(rng: random.Random, first_year: int, last_year: int) -> date:
    start = date(first_year, 1, 1)
    return start + timedelta(days=rng.randrange((date(last_year, 12, 31) - start).days))


# --------------------------------------------------------------------------
# Building a document while recording where its entities are


@dataclass
class _Mention:
    type: str
    value: Any
    start: int
    end: int
    cue_start: int
    ocr_at: int | None = None  # a space the "scanner" put inside the surface


@dataclass
class _Slot:
    """An entity to be written into a template: ``prefix`` then ``surface``."""

    surface: str
    type: str
    value: Any
    cue: str | None = None
    prefix: str = ""


class _Builder:
    def __init__(self, rng: random.Random, ocr_rate: float):
        self.rng = rng
        self.ocr_rate = ocr_rate
        self.parts: list[str] = []
        self.pos = 0
        self.mentions: list[_Mention] = []

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.pos += len(text)

    def ent(
        self, surface: str, type_: str, value: Any, *, cue: str | None = None
    ) -> None:
        start = self.pos
        cue_start = start
        if cue:
            recent = "".join(self.parts[-8:])
            found = recent.rfind(cue)
            if found >= 0 and len(recent) - found <= 90:
                cue_start = start - (len(recent) - found)
        ocr_at = None
        if self.ocr_rate and self.rng.random() < self.ocr_rate:
            cut = _ocr_cut(surface, self.rng)
            if cut is not None:
                surface = surface[:cut] + " " + surface[cut:]
                ocr_at = start + cut
        self.add(surface)
        self.mentions.append(_Mention(type_, value, start, self.pos, cue_start, ocr_at))

    def fill(self, template: str, slots: dict[str, Any]) -> None:
        """Write ``template``; ``{name}`` takes text or a :class:`_Slot`."""
        for i, piece in enumerate(_PLACEHOLDER.split(template)):
            if i % 2 == 0:
                self.add(piece)
                continue
            slot = slots[piece]
            if isinstance(slot, _Slot):
                self.add(slot.prefix)
                self.ent(slot.surface, slot.type, slot.value, cue=slot.cue)
            else:
                self.add(slot)

    def text(self) -> str:
        return "".join(self.parts)


_PLACEHOLDER = re.compile(r"\{(\w+)\}")


def _ocr_cut(surface: str, rng: random.Random) -> int | None:
    words = [m for m in re.finditer(r"[^\W\d_]{5,}", surface)]
    if not words:
        return None
    word = rng.choice(words)
    return word.start() + rng.randint(1, len(word.group()) - 2)


def _person(rng: random.Random, first: Sequence[str], last: Sequence[str]) -> dict:
    return {"first_name": rng.choice(first), "last_name": rng.choice(last)}


def _full(name: dict) -> str:
    return f"{name['first_name']} {name['last_name']}"


def _article(org: str) -> tuple[str, str]:
    """``"the National Police"`` -> ``("the ", "National Police")``."""
    return ("the ", org[4:]) if org.startswith("the ") else ("", org)


def _org_slot(org: str) -> _Slot:
    prefix, name = _article(org)
    return _Slot(name, "Organization", name, prefix=prefix)


def _sep(rng: random.Random) -> str:
    return rng.choice(("   ", "\t", " : ", ":\n", "\n", "  ", ": "))


@dataclass
class _Facts:
    """What a default-style decision is about."""

    division: str
    file_no: str
    country: tuple[str, tuple[str, ...], str]
    transit: str
    city: str
    city2: str
    office: tuple[str, str, str]
    claimant: dict
    female: bool
    member: dict
    counsel: dict
    interpreter: dict | None
    hearings: list[date]
    decision: date
    events: list[date]
    virtual: bool
    public: bool
    persecutor: str
    persecutor_is_org: bool
    police: str
    ngos: list[str]
    party: str
    ground: str
    accepted: bool


def _facts(rng: random.Random) -> _Facts:
    country = rng.choice(_COUNTRIES)
    cities = list(country[1])
    rng.shuffle(cities)
    transit = rng.choice([c[0] for c in _COUNTRIES if c[0] != country[0]])
    division = rng.choices(("RPD", "RAD", "IAD"), weights=(6, 1, 3))[0]
    office = rng.choice(_REGIONS)
    year = rng.randint(2008, 2023)
    first = date(year, 1, 1) + timedelta(days=rng.randint(0, 330))
    hearings = [first]
    for _ in range(rng.choices((0, 1, 2), weights=(6, 3, 1))[0]):
        hearings.append(hearings[-1] + timedelta(days=rng.randint(5, 90)))
    decision = hearings[-1] + timedelta(days=rng.choice((0, 0, rng.randint(1, 150))))
    events = sorted(_random_date(rng, year - 9, year - 1) for _ in range(3))
    letter = office[0] + rng.choice("ABC")
    file_no = f"{letter}{year % 10}-{rng.randint(0, 99999):05d}"
    if rng.random() < 0.6:
        persecutor, is_org = rng.choice(_GANGS + _POLICE), True
    else:
        persecutor, is_org = rng.choice(_PERSONAL_AGENTS), False
    ngos = rng.sample(_NGOS, 2)
    return _Facts(
        division=division,
        file_no=file_no,
        country=country,
        transit=transit,
        city=cities[0],
        city2=cities[1 % len(cities)],
        office=office,
        claimant=_person(rng, _FIRST, _LAST),
        female=rng.random() < 0.45,
        member=_person(rng, _MEMBER_FIRST, _MEMBER_LAST),
        counsel=_person(rng, _MEMBER_FIRST + _FIRST, _MEMBER_LAST + _LAST),
        interpreter=_person(rng, _FIRST, _LAST) if rng.random() < 0.6 else None,
        hearings=hearings,
        decision=decision,
        events=events,
        virtual=rng.random() < (0.7 if year >= 2020 else 0.15),
        public=rng.random() < (0.7 if division == "IAD" else 0.08),
        persecutor=persecutor,
        persecutor_is_org=is_org,
        police=rng.choice(_POLICE),
        ngos=ngos,
        party=rng.choice(_PARTIES),
        ground=rng.choice(_GROUNDS),
        accepted=rng.random() < 0.5,
    )


_DIVISIONS = {
    "RPD": (
        "Refugee Protection Division",
        "Section de la protection des réfugiés",
        "SPR",
        "Claimant(s) / Demandeur(s) d'asile",
    ),
    "RAD": (
        "Refugee Appeal Division",
        "Section d'appel des réfugiés",
        "SAR",
        "Appellant(s) / Appelant(e)(s)",
    ),
    "IAD": (
        "Immigration Appeal Division",
        "Section d'appel de l'immigration",
        "SAI",
        "Appellant(s) / Appelant(e)(s)",
    ),
}
_IRB = "Immigration and Refugee Board of Canada"
_IRB_FR = "Commission de l'immigration et du statut de réfugié du Canada"


def _reason_slots(f: _Facts, rng: random.Random, date_fmt: str) -> dict[str, Any]:
    he, his, him = ("she", "her", "her") if f.female else ("he", "his", "him")
    country = f.country[0]
    if f.persecutor_is_org:
        persecutor: Any = _org_slot(f.persecutor)
    else:
        persecutor = f.persecutor
    hearing = rng.choice(f.hearings)
    return {
        "he": he,
        "He": he.capitalize(),
        "his": his,
        "him": him,
        "claimant": _Slot(_full(f.claimant), "ClaimantName", f.claimant),
        "Mr": ("Ms. " if f.female else "Mr. ") + f.claimant["last_name"],
        "country": _Slot(country, "GPE", country),
        "city": _Slot(f.city, "GPE", f.city),
        "city2": _Slot(f.city2, "GPE", f.city2),
        "transit": _Slot(f.transit, "GPE", f.transit),
        "office": _Slot(f.office[1], "GPE", f.office[1]),
        "province": _Slot(f.office[2], "GPE", f.office[2]),
        "persecutor": persecutor,
        "police": _org_slot(f.police),
        "ngo": _org_slot(f.ngos[0]),
        "ngo2": _org_slot(f.ngos[1]),
        "party": _org_slot(f.party),
        "cborg": _org_slot(rng.choice(_CANADIAN_ORGS)),
        "ground": f.ground,
        "lang": f.country[2],
        "event_date": _Slot(
            _format_date(f.events[1], date_fmt), "EventDate", _date_value(f.events[1])
        ),
        "event_month": _Slot(
            _format_date(f.events[0], "month"),
            "EventDate",
            _date_value(f.events[0], partial=True),
        ),
        "event_year": str(f.events[2].year),
        "hearing_date": _Slot(
            _format_date(hearing, date_fmt),
            "HearingDate",
            _date_value(hearing),
            cue="hearing",
        ),
        "member": _Slot(_full(f.member), "JudgeName", f.member, cue="Member"),
        "division": _Slot(
            _DIVISIONS[f.division][0], "Organization", _DIVISIONS[f.division][0]
        ),
    }


_REASONS = (
    "The claimant, {claimant}, is a citizen of {country}. {He} alleges a fear of "
    "persecution at the hands of {persecutor} by reason of {his} {ground}.",
    "{He} states that on {event_date}, individuals linked to {persecutor} came to "
    "{his} home in {city} and threatened to kill {him} if {he} did not leave.",
    "In {event_month}, {he} was detained for three days by {police} and was released "
    "only after {his} family paid a bribe.",
    "{Mr} fled {country} and travelled through {transit} before arriving in "
    "{office}, where {he} made a claim for refugee protection.",
    "At the hearing held on {hearing_date}, the claimant testified through an "
    "interpreter in the {lang} language.",
    "The panel has reviewed the National Documentation Package for {country}, "
    "including reports from {ngo} and {ngo2}, which describe abuses by {police}.",
    "The claimant filed a letter from {party} confirming {his} membership since "
    "{event_year}, and a medical report from a clinic in {city}.",
    "The panel finds that {city2} is a viable internal flight alternative, as "
    "{persecutor} has not shown any interest in pursuing {him} outside {city}.",
    "The Minister intervened on the issue of credibility and filed documents from "
    "{cborg} regarding the claimant's stay in {transit}.",
    "The panel is not satisfied that {police} would offer adequate state protection "
    "to the claimant if {he} were to return to {country}.",
    "La commissaire a examiné la preuve documentaire concernant {country}, "
    "notamment les rapports de {ngo}.",
    "The claimant's identity as a national of {country} is established by {his} "
    "passport, the original of which is held by {cborg}.",
    "According to {ngo}, journalists and activists in {city} are routinely harassed, "
    "and complaints to {police} are rarely investigated.",
    "The determinative issue in this claim is credibility. {Mr} gave vague and "
    "evasive answers about the events of {event_month} in {city}.",
    "Counsel for the claimant relied on the Chairperson's Guideline 4 and on a "
    "psychological report prepared in {office}, {province}.",
    "These reasons are issued by {member} of the {division} pursuant to section "
    "169 of the Immigration and Refugee Protection Act.",
)


def _reasons(
    b: _Builder,
    f: _Facts,
    rng: random.Random,
    *,
    date_fmt: str,
    numbered: bool,
    count: int,
) -> None:
    slots = _reason_slots(f, rng, date_fmt)
    templates = [_REASONS[0]] + rng.sample(_REASONS[1:], count - 1)
    for i, template in enumerate(templates, start=1):
        if numbered:
            b.add(f"[{i}] ")
        b.fill(template, slots)
        b.add("\n\n")
    outcome = (
        "is a Convention refugee and accepts the claim"
        if f.accepted
        else "is neither a Convention refugee nor a person in need of protection and "
        "rejects the claim"
    )
    if f.division == "IAD":
        outcome = "appeal is allowed" if f.accepted else "appeal is dismissed"
        b.add(f"{rng.choice(('DISPOSITION', 'DECISION'))}\n\nThe {outcome}.\n\n")
    else:
        b.add(f"{rng.choice(('DETERMINATION', 'CONCLUSION'))}\n\n")
        b.add(f"The panel finds that the claimant {outcome}.\n\n")


def _hearing_type(b: _Builder, f: _Facts, rng: random.Random, *, prose: bool) -> None:
    value = "Virtual" if f.virtual else "In Person"
    if prose:
        options = (
            ("by videoconference", "via Microsoft Teams", "virtually", "by video link")
            if f.virtual
            else ("in person", "in person at the Board's offices", "face to face")
        )
    else:
        options = (
            (
                "By videoconference / Par vidéoconférence",
                "Virtual hearing",
                "Videoconference (MS Teams)",
            )
            if f.virtual
            else ("In person / En personne", "In-person hearing", "In person")
        )
    b.ent(rng.choice(options), "HearingType", value)


def _public_private(b: _Builder, f: _Facts, rng: random.Random, *, prose: bool) -> None:
    value = "Public" if f.public else "Private"
    if prose:
        options = (
            ("in public", "in open court", "as a public hearing")
            if f.public
            else ("in camera", "in private", "in camera (huis clos)")
        )
    else:
        options = (
            ("Public hearing / Audience publique", "Public proceeding", "Public")
            if f.public
            else (
                "Private Proceeding / Huis clos",
                "In camera / À huis clos",
                "Private",
            )
        )
    b.ent(rng.choice(options), "PublicOrPrivateHearing", value)


def _signature(b: _Builder, f: _Facts, rng: random.Random, date_fmt: str) -> None:
    if rng.random() < 0.5:
        b.add("(signed) ")
    b.ent(_full(f.member), "JudgeName", f.member, cue=None)
    b.add(rng.choice(("\n", "\nMember / Commissaire\n", ", Member\n")))
    lead, trail = rng.choice(
        (
            ("Dated: ", "\n"),
            ("Decision date: ", "\n"),
            ("", "\nDate of decision\n"),
            ("Date de la décision : ", "\n"),
            ("", "\nDate\n"),
        )
    )
    b.add(lead)
    b.ent(
        _format_date(f.decision, date_fmt),
        "DecisionDate",
        _date_value(f.decision),
        cue=lead.split()[0] if lead else None,
    )
    b.add(trail)
    if rng.random() < 0.6:
        b.add(
            "\nJudicial Review – Under section 72 of the Immigration and Refugee "
            "Protection Act, you may make an application to the "
        )
        b.ent("Federal Court", "Organization", "Federal Court")
        b.add(" for leave to apply for judicial review of this decision.\n")


def _irb_header(b: _Builder, f: _Facts, rng: random.Random) -> None:
    name, name_fr, abbr_fr, party_label = _DIVISIONS[f.division]
    fmt = rng.choice(("us", "us", "us_abbr", "uk"))
    b.ent(_IRB, "Organization", _IRB)
    b.add("\n" + _IRB_FR + "\n\n")
    b.ent(name, "Organization", name)
    b.add(f"\n{name_fr}\n\n")
    label = f"{f.division} File No."
    b.ent(label, "FileLabel", label)
    b.add(f" / No de dossier de la {abbr_fr} : {f.file_no}\n")
    _public_private(b, f, rng, prose=False)
    b.add(
        rng.choice(
            (
                "\n\nReasons and decision – Motifs et décision\n\n",
                "\n\nREASONS AND DECISION\n\n",
            )
        )
    )

    def claimant() -> None:
        b.add(party_label + _sep(rng))
        b.ent(
            _full(f.claimant).upper() if rng.random() < 0.4 else _full(f.claimant),
            "ClaimantName",
            f.claimant,
            cue="d'asile",
        )

    def hearing() -> None:
        b.add("Date(s) of Hearing / Date(s) de l'audience" + _sep(rng))
        joiner = rng.choice(("\n", "; ", ", ", "\n\t\t\t"))
        for i, d in enumerate(f.hearings):
            if i:
                b.add(joiner)
            b.ent(_format_date(d, fmt), "HearingDate", _date_value(d), cue="audience")

    def place() -> None:
        b.add("Place of Hearing / Lieu de l'audience" + _sep(rng))
        b.ent(f.office[1], "GPE", f.office[1])
        b.add(", ")
        b.ent(f.office[2], "GPE", f.office[2])
        if rng.random() < 0.6:
            b.add("\nHearing format / Mode d'audience" + _sep(rng))
            _hearing_type(b, f, rng, prose=False)

    def decided() -> None:
        b.add("Date of Decision / Date de la décision" + _sep(rng))
        b.ent(
            _format_date(f.decision, fmt),
            "DecisionDate",
            _date_value(f.decision),
            cue="décision",
        )

    def panel() -> None:
        label = rng.choice(("Panel / Tribunal", "Member / Commissaire", "Panel"))
        b.add(label + _sep(rng))
        b.ent(_full(f.member), "JudgeName", f.member, cue=label.split()[-1])

    def counsel() -> None:
        b.add("Claimant's Counsel / Conseil(s) du demandeur d'asile" + _sep(rng))
        b.ent(_full(f.counsel), "CounselName", f.counsel, cue="Conseil")
        if f.interpreter:
            b.add("\nInterpreter / Interprète" + _sep(rng))
            b.ent(_full(f.interpreter), "InterpreterName", f.interpreter, cue="Inter")

    fields: list[Callable[[], None]] = [
        claimant,
        hearing,
        place,
        decided,
        panel,
        counsel,
    ]
    if rng.random() < 0.3:
        fields[3], fields[4] = fields[4], fields[3]
    for write in fields:
        write()
        b.add("\n")
    b.add("Designated Representative / Représentant(e) désigné(e)" + _sep(rng))
    b.add("Nil / Aucun\nMinister's Counsel / Conseil du ministre" + _sep(rng))
    b.add("N/A / S.O.\n\n")
    if "HearingType" not in {m.type for m in b.mentions}:
        b.add("The hearing was held ")
        _hearing_type(b, f, rng, prose=True)
        b.add(".\n\n")
    _reasons(b, f, rng, date_fmt=fmt, numbered=True, count=rng.randint(3, 7))
    _signature(b, f, rng, fmt)


def _narrative(b: _Builder, f: _Facts, rng: random.Random) -> None:
    name, name_fr, abbr_fr, _ = _DIVISIONS[f.division]
    fmt = rng.choice(("uk", "uk", "ordinal", "us"))
    b.ent(name.upper() if rng.random() < 0.5 else name, "Organization", name)
    label = f"{f.division} File No."
    b.add("\n")
    b.ent(label, "FileLabel", label)
    b.add(f" / No de dossier de la {abbr_fr} : {f.file_no}\n\n")
    who = "claim for refugee protection of" if f.division == "RPD" else "appeal of"
    b.add(f"In the matter of the {who} ")
    b.ent(_full(f.claimant), "ClaimantName", f.claimant)
    b.add(rng.choice((".\n\n", ", a citizen of ")))
    if b.parts[-1].endswith("of "):
        b.ent(f.country[0], "GPE", f.country[0])
        b.add(".\n\n")
    if f.hearings[0].day > 20 and len(f.hearings) > 1:
        b.add("The hearing began in ")
        first = f.hearings[0]
        b.ent(
            _format_date(first, "month"),
            "HearingDate",
            _date_value(first, partial=True),
            cue="hearing",
        )
        b.add(" and was heard ")
    else:
        b.add("Heard ")
    _hearing_type(b, f, rng, prose=True)
    b.add(" on ")
    for i, d in enumerate(f.hearings):
        if i:
            b.add(" and " if i == len(f.hearings) - 1 else ", ")
        b.ent(_format_date(d, fmt), "HearingDate", _date_value(d), cue="eard")
    b.add(", at ")
    b.ent(f.office[1], "GPE", f.office[1])
    b.add(", ")
    b.ent(f.office[2], "GPE", f.office[2])
    b.add(rng.choice((", before Member ", ". Presiding member: ", ", before ")))
    b.ent(_full(f.member), "JudgeName", f.member, cue="ember")
    b.add(". The hearing was held ")
    _public_private(b, f, rng, prose=True)
    b.add(".\n")
    if rng.random() < 0.5:
        b.add("Décision rendue le ")
        b.ent(
            _format_date(f.decision, "fr"),
            "DecisionDate",
            _date_value(f.decision),
            cue="rendue",
        )
    else:
        b.add("Decision rendered on ")
        b.ent(
            _format_date(f.decision, fmt),
            "DecisionDate",
            _date_value(f.decision),
            cue="rendered",
        )
    b.add(".\n")
    if rng.random() < 0.6:
        b.add("Counsel for the claimant: ")
        b.ent(_full(f.counsel), "CounselName", f.counsel, cue="Counsel")
        b.add(". ")
    if f.interpreter and rng.random() < 0.7:
        b.add("Interpreter: ")
        b.ent(_full(f.interpreter), "InterpreterName", f.interpreter, cue="Interp")
        b.add(".")
    b.add(
        rng.choice(
            (
                "\n\nREASONS FOR DECISION\n\n",
                "\n\nREASONS\n\n",
                "\n\nMOTIFS DE LA DÉCISION / REASONS\n\n",
            )
        )
    )
    _reasons(
        b, f, rng, date_fmt=fmt, numbered=rng.random() < 0.5, count=rng.randint(3, 6)
    )
    _signature(b, f, rng, rng.choice((fmt, "fr")))


def _tabular(b: _Builder, f: _Facts, rng: random.Random) -> None:
    name = _DIVISIONS[f.division][0]
    fmt = rng.choice(("iso", "dmy"))
    b.add(rng.choice(("DECISION RECORD", "CASE SUMMARY", "NOTICE OF DECISION")))
    b.add("\n\nTribunal: ")
    b.ent(_IRB, "Organization", _IRB)
    b.add("\nDivision: ")
    b.ent(name, "Organization", name)
    b.add("\n")
    label = rng.choice(("File number", f"{f.division} File No."))
    b.ent(label, "FileLabel", label)
    b.add(f": {f.file_no}\n")
    b.add(rng.choice(("Claimant", "Person concerned", "Subject")) + ": ")
    upper = rng.random() < 0.5
    shown = (
        f"{f.claimant['last_name'].upper()}, {f.claimant['first_name']}"
        if upper
        else _full(f.claimant)
    )
    b.ent(shown, "ClaimantName", f.claimant)
    b.add("\nCountry of reference: ")
    b.ent(f.country[0], "GPE", f.country[0])
    b.add("\nHearing date(s): ")
    for i, d in enumerate(f.hearings):
        if i:
            b.add("; ")
        b.ent(_format_date(d, fmt), "HearingDate", _date_value(d), cue="Hearing")
    b.add("\nHearing mode: ")
    _hearing_type(b, f, rng, prose=False)
    b.add("\nHearing status: ")
    _public_private(b, f, rng, prose=False)
    b.add("\nLocation: ")
    b.ent(f.office[1], "GPE", f.office[1])
    b.add(", ")
    b.ent(f.office[2], "GPE", f.office[2])
    b.add("\nMember: ")
    shown = (
        f"{f.member['last_name'].upper()}, {f.member['first_name']}"
        if upper
        else _full(f.member)
    )
    b.ent(shown, "JudgeName", f.member, cue="Member")
    b.add("\nDecision date: ")
    b.ent(
        _format_date(f.decision, fmt),
        "DecisionDate",
        _date_value(f.decision),
        cue="Decision",
    )
    b.add("\nOutcome: " + ("Positive" if f.accepted else "Negative"))
    b.add("\nCounsel: ")
    b.ent(_full(f.counsel), "CounselName", f.counsel, cue="Counsel")
    b.add("\n\nSummary of reasons:\n")
    _reasons(b, f, rng, date_fmt=fmt, numbered=False, count=rng.randint(2, 5))


_SST_SECTIONS = (
    (
        "Social Security Tribunal of Canada",
        "General Division – Employment Insurance Section",
        "Canada Employment Insurance Commission",
        "GE",
    ),
    (
        "Social Security Tribunal of Canada",
        "General Division – Income Security Section",
        "Minister of Employment and Social Development",
        "GP",
    ),
    (
        "Social Security Tribunal of Canada",
        "Appeal Division",
        "Canada Employment Insurance Commission",
        "AD",
    ),
    (
        "Workplace Safety and Insurance Appeals Tribunal",
        "Vice-Chair Panel",
        "Workplace Safety and Insurance Board",
        "WS",
    ),
    (
        "Employment Standards Tribunal",
        "Adjudication Panel",
        "Director of Employment Standards",
        "ES",
    ),
)
_CITY_PROVINCES = tuple((c, p) for _, c, p in _REGIONS) + (
    ("Sudbury", "Ontario"),
    ("Moncton", "New Brunswick"),
    ("St. John's", "Newfoundland and Labrador"),
    ("Saskatoon", "Saskatchewan"),
    ("Kelowna", "British Columbia"),
    ("Sherbrooke", "Quebec"),
    ("Charlottetown", "Prince Edward Island"),
    ("Thunder Bay", "Ontario"),
)
_FORMAT_SURFACES = {
    "In person": ("In person", "in person", "in-person hearing"),
    "Teleconference": ("Teleconference", "by teleconference", "by telephone"),
    "Videoconference": ("Videoconference", "by videoconference", "by Zoom video"),
    "Written": ("Written questions and answers", "in writing", "on the record"),
}


def _tribunal(b: _Builder, rng: random.Random) -> None:
    tribunal, section, respondent, code = rng.choice(_SST_SECTIONS)
    claimant = _person(rng, _FIRST + _MEMBER_FIRST, _LAST + _MEMBER_LAST)
    member = _person(rng, _MEMBER_FIRST, _MEMBER_LAST)
    city, province = rng.choice(_CITY_PROVINCES)
    year = rng.randint(2014, 2024)
    heard = date(year, 1, 1) + timedelta(days=rng.randint(0, 300))
    decided = heard + timedelta(days=rng.randint(1, 60))
    event = heard - timedelta(days=rng.randint(60, 900))
    fmt = rng.choice(("us", "uk", "dotted", "iso"))
    form = rng.choice(tuple(_FORMAT_SURFACES))
    b.ent(tribunal, "Tribunal", tribunal)
    b.add("\n")
    b.ent(section, "Tribunal", section)
    b.add(f"\n\nCitation: {claimant['first_name'][0]}. {claimant['last_name'][0]}. v. ")
    b.ent(respondent, "Respondent", respondent)
    b.add(f", {decided.year} {code}{rng.randint(1, 999)}\n")
    b.add(f"Tribunal file number: {code}-{year % 100:02d}-{rng.randint(1, 9999):04d}\n")
    b.add(rng.choice(("Appellant: ", "Claimant: ", "Applicant: ")))
    b.ent(_full(claimant), "ClaimantName", claimant)
    b.add("\nRespondent: ")
    b.ent(respondent, "Respondent", respondent)
    b.add(rng.choice(("\nTribunal member: ", "\nDecision by: ", "\nAdjudicator: ")))
    b.ent(_full(member), "MemberName", member)
    b.add("\nType of hearing: ")
    b.ent(rng.choice(_FORMAT_SURFACES[form]), "HearingFormat", form)
    b.add("\nHearing date: ")
    b.ent(_format_date(heard, fmt), "HearingDate", _date_value(heard), cue="Hearing")
    b.add("\nHearing location: ")
    b.ent(city, "City", city)
    b.add(", ")
    b.ent(province, "Province", province)
    b.add("\nDecision date: ")
    b.ent(_format_date(decided, fmt), "DecisionDate", _date_value(decided), cue="Decis")
    b.add("\n\nDECISION\n\n")
    b.add("The appeal is " + rng.choice(("allowed", "dismissed", "allowed in part")))
    b.add(".\n\nOVERVIEW\n\n")
    b.add("The Appellant, ")
    b.ent(_full(claimant), "ClaimantName", claimant)
    b.add(", worked for a warehouse in ")
    b.ent(city, "City", city)
    b.add(" until ")
    b.ent(_format_date(event, fmt), "EventDate", _date_value(event))
    b.add(". The ")
    b.ent(respondent, "Respondent", respondent)
    b.add(
        rng.choice(
            (
                " decided that she voluntarily left her employment without just cause.",
                " refused the application because it was filed late.",
                " found that he was not available for work while taking a course.",
            )
        )
    )
    b.add("\n\nThe hearing was held ")
    b.ent(rng.choice(_FORMAT_SURFACES[form][1:]), "HearingFormat", form)
    b.add(" on ")
    b.ent(_format_date(heard, fmt), "HearingDate", _date_value(heard), cue="hearing")
    b.add(". The Appellant attended with a representative from a legal clinic in ")
    b.ent(city, "City", city)
    b.add(".\n\nI find that the Appellant has shown just cause. ")
    b.add("The reasons follow.\n\n")
    b.ent(_full(member), "MemberName", member)
    b.add("\nMember, ")
    b.ent(section, "Tribunal", section)
    b.add("\n")


# --------------------------------------------------------------------------
# Contexts


class _Words:
    def __init__(self, text: str):
        self.text = text
        self.spans = [m.span() for m in re.finditer(r"\S+", text)]
        self.starts = [s for s, _ in self.spans]

    def index(self, pos: int) -> int:
        return max(bisect_right(self.starts, pos) - 1, 0)


@dataclass
class _Window:
    first: int  # word indices, inclusive
    last: int
    ent_first: int
    ent_last: int


def _window(words: _Words, m: _Mention, rng: random.Random) -> _Window:
    """The entity plus one or two neighbouring words, 15 to 120 characters."""
    cue = words.index(m.cue_start)
    ent_first, ent_last = words.index(m.start), words.index(m.end - 1)
    first = max(min(cue, ent_first) - rng.choice((0, 1, 1, 2)), 0)
    last = min(ent_last + rng.choice((0, 0, 1, 2)), len(words.spans) - 1)
    if cue == ent_first and first == ent_first and ent_first > 0:
        first -= 1

    def length(a: int, b: int) -> int:
        return words.spans[b][1] - words.spans[a][0]

    while length(first, last) > 120 and last > ent_last:
        last -= 1
    while length(first, last) > 120 and first < ent_first:
        first += 1
    while length(first, last) < 15:
        if last + 1 < len(words.spans):
            last += 1
        elif first > 0:
            first -= 1
        else:
            break
    return _Window(first, last, ent_first, ent_last)


def _span_text(words: _Words, first: int, last: int) -> str:
    return words.text[words.spans[first][0] : words.spans[last][1]]


def _drop_words(words: _Words, w: _Window, run: int, rng: random.Random) -> str | None:
    """Leave out ``run`` interior words outside the entity."""
    options = [
        i
        for i in range(w.first + 1, w.last - run + 1)
        if i + run - 1 < w.ent_first or i > w.ent_last
    ]
    rng.shuffle(options)
    total = words.spans[w.last][1] - words.spans[w.first][0]
    for i in options:
        gap = words.spans[i + run - 1][1] - words.spans[i][0]
        if gap <= 0.5 * (total - gap):
            left = words.text[words.spans[w.first][0] : words.spans[i][0]].rstrip()
            right = words.text[words.spans[i + run - 1][1] : words.spans[w.last][1]]
            return left + " " + right.lstrip()
    return None


def _mistranscribe(
    kind: str, words: _Words, w: _Window, m: _Mention, rng: random.Random
) -> str | None:
    """The context of ``kind``, or ``None`` when it does not apply here."""
    exact = _span_text(words, w.first, w.last)
    if kind == "exact":
        return exact
    if kind == "case":
        changed = rng.choice((str.lower, str.lower, str.upper, str.title))(exact)
        return changed if changed != exact else exact.swapcase()
    if kind == "ocr_split":
        start = words.spans[w.first][0]
        if m.ocr_at is not None and start < m.ocr_at < start + len(exact):
            return exact[: m.ocr_at - start] + exact[m.ocr_at - start + 1 :]
        if rng.random() < 0.3 and w.last > w.first:
            spaces = [i for i, ch in enumerate(exact) if ch == " "]
            i = rng.choice(spaces) if spaces else None
            return None if i is None else exact[:i] + exact[i + 1 :]
        cut = _ocr_cut(exact, rng)
        return None if cut is None else exact[:cut] + " " + exact[cut:]
    if kind == "inserted_tokens":
        if w.last - w.first < 2:
            w = _Window(max(w.first - 1, 0), w.last, w.ent_first, w.ent_last)
        return _drop_words(words, w, 1, rng)
    if kind == "elided_tokens":
        cue = words.index(m.cue_start)
        if cue < w.ent_first - 2:  # skip what lies between the cue and the entity
            gap = w.ent_first - cue - 1
            wide = _Window(cue, w.last, w.ent_first, w.ent_last)
            dropped = _drop_words(words, wide, gap, rng)
            if dropped is not None:
                return dropped
        first = max(w.first - 3, 0)
        return _drop_words(
            words,
            _Window(first, w.last, w.ent_first, w.ent_last),
            rng.choice((2, 3)),
            rng,
        )
    if kind == "translation":
        tokens = list(re.finditer(r"[^\W\d_]+", exact))
        rng.shuffle(tokens)
        for t in tokens:
            word = t.group()
            other = _TRANSLATIONS.get(word.lower()) or _BACK_TRANSLATIONS.get(
                word.lower()
            )
            if other:
                if word[0].isupper():
                    other = other.upper() if word.isupper() else other.capitalize()
                if len(word) <= 0.25 * len(exact):
                    return exact[: t.start()] + other + exact[t.end() :]
        return None
    if kind == "whitespace":
        for first in range(w.first, max(w.first - 4, -1), -1):
            text = _span_text(words, first, w.last)
            if len(text) <= 130 and re.search(r"\n|\t|  ", text):
                return " ".join(text.split())
        return None
    raise ValueError(f"unknown kind {kind!r}")


# --------------------------------------------------------------------------
# Unsafe predictions


def _supports(type_: str, value: Any, context: str) -> bool:
    """Whether ``context`` plausibly states ``value`` (a cheap guard)."""
    low = context.lower()
    family = _FAMILY[type_]
    if family == "date":
        return value["yyyy"] in low
    if family == "name":
        return value["last_name"].lower() in low or value["first_name"].lower() in low
    if family == "enum":
        words = (
            "public publique private privée camera huis clos open"
            if type_ == "PublicOrPrivateHearing"
            else "person personne virtual video teams zoom telephone tele face writing "
            "written record"
        )
        return any(w in low for w in words.split())
    return value.lower() in low or low in value.lower()


def _shift_date(value: dict, rng: random.Random) -> dict:
    d = date(int(value["yyyy"]), int(value["mm"] or 1), int(value["dd"] or 1))
    partial = value["dd"] is None
    moves = ["day", "month", "year", "swap"] if not partial else ["month", "year"]
    move = rng.choice(moves)
    if move == "swap" and (d.day > 12 or d.day == d.month):
        move = "day"
    if move == "day":
        d = d + timedelta(days=rng.choice((-1, 1, 1, -2, 2, 7, -10, 14)))
    elif move == "month":
        month = rng.choice([m for m in range(1, 13) if m != d.month])
        d = d.replace(month=month, day=min(d.day, 28))
    elif move == "year":
        d = d.replace(year=d.year + rng.choice((-1, 1, -2, 2, 3)), day=min(d.day, 28))
    else:
        d = d.replace(month=d.day, day=d.month)
    return _date_value(d, partial=partial)


def _other_value(
    type_: str, value: Any, rng: random.Random, doc_values: Sequence[Any]
) -> Any:
    family = _FAMILY[type_]
    if family == "date":
        return _shift_date(value, rng)
    if family == "name":
        move = rng.random()
        if move < 0.4:
            return {**value, "first_name": rng.choice(_MEMBER_FIRST + _FIRST)}
        if move < 0.7:
            return {**value, "last_name": rng.choice(_MEMBER_LAST + _LAST)}
        return _person(rng, _MEMBER_FIRST, _MEMBER_LAST)
    if family == "enum":
        return rng.choice([v for v in _ENUMS[type_] if v != value])
    others = [v for v in doc_values if isinstance(v, str) and v != value]
    if others and rng.random() < 0.4:
        return rng.choice(others)
    if type_ in ("GPE", "City"):
        pool = [c[0] for c in _COUNTRIES] + [c for c in _COUNTRIES[0][1]]
        pool += [c for _, c, _ in _REGIONS] + [p for _, _, p in _REGIONS]
        if type_ == "City":
            pool = [c for c, _ in _CITY_PROVINCES]
        return rng.choice(pool)
    bank = _NGOS + _POLICE + _PARTIES + _CANADIAN_ORGS
    if type_ == "Tribunal":
        bank = tuple(s[i] for s in _SST_SECTIONS for i in (0, 1))
    return _article(rng.choice(bank))[1]


_HALLUCINATIONS = {
    "HearingDate": (
        "the matter was heard on {v} before the panel",
        "hearing resumed {v} at the request of counsel",
        "the claimant appeared for the sitting of {v}",
    ),
    "DecisionDate": (
        "these reasons were signed on {v}",
        "written reasons issued {v} by the panel",
        "the decision took effect {v}",
    ),
    "JudgeName": (
        "{v} sat alone as the assigned panel",
        "Member {v} heard the appeal",
        "before the Honourable {v}",
    ),
    "ClaimantName": (
        "sworn evidence was given by {v}",
        "{v} filed the notice of appeal",
        "submissions received from {v}",
    ),
    "GPE": (
        "the claimant resided in {v} for several years",
        "born and raised in {v}",
        "the family relocated to {v}",
    ),
    "City": ("the worker moved to {v} for the job", "her employer relocated to {v}"),
    "Organization": (
        "a report issued by {v}",
        "the claimant sought help from {v}",
        "letter of support from {v}",
    ),
    "Tribunal": ("the appeal was filed with the {v}", "remitted to the {v}"),
    "PublicOrPrivateHearing": {
        "Public": (
            "the proceedings were open to the public",
            "members of the press attended",
        ),
        "Private": (
            "the hearing was closed to the public",
            "held in camera pursuant to the Act",
        ),
    },
    "HearingType": {
        "In Person": (
            "the claimant appeared in person in the room",
            "attended the hearing room in person",
        ),
        "Virtual": (
            "the hearing took place via Microsoft Teams",
            "participants joined by video",
        ),
    },
    "HearingFormat": {
        "In person": ("everyone was physically present in the room",),
        "Teleconference": ("the parties joined by telephone",),
        "Videoconference": ("the parties joined over video",),
        "Written": ("the appeal proceeded on written submissions",),
    },
}


def _hallucinate(type_: str, value: Any, rng: random.Random) -> tuple[Any, str]:
    if rng.random() < 0.3:
        value = _other_value(type_, value, rng, ())
    family = _FAMILY[type_]
    options = _HALLUCINATIONS[type_]
    if family == "enum":
        return value, rng.choice(options[value])
    if family == "date":
        d = date(int(value["yyyy"]), int(value["mm"] or 1), int(value["dd"] or 1))
        fmt = "month" if value["dd"] is None else rng.choice(("us", "uk", "iso"))
        shown = _format_date(d, fmt)
    elif family == "name":
        shown = _full(value)
    else:
        shown = value
    context = rng.choice(options).format(v=shown)
    # An invented frame around a long real name would still align: keep the
    # invented words the larger part, as in a real hallucinated passage.
    tails = list(_INVENTED_TAILS)
    rng.shuffle(tails)
    while len(shown) > 0.3 * len(context) and tails:
        context += tails.pop()
    return value, context


_INVENTED_TAILS = (
    ", as confirmed in the supplementary record",
    " according to the testimony summarised above",
    ", which the panel accepts without reservation",
    " as set out in the disclosure package",
    ", a point not contested by counsel at any stage",
)


# --------------------------------------------------------------------------
# The corpus


@dataclass(frozen=True)
class Corpus:
    """Documents, their predictions, gold labels and the schema they follow."""

    documents: list[Document]
    predictions: list[Prediction]
    labels: list[Label]
    schema: dict[str, Any] = field(default_factory=dict)


def _weighted_order(
    kinds: Sequence[str], weights: Sequence[float], rng: random.Random
) -> list[str]:
    """``kinds`` in a random order, heavier ones likelier to come first."""
    keyed = [
        (rng.random() ** (1.0 / w), k)
        for k, w in zip(kinds, weights, strict=True)
        if w > 0
    ]
    return [k for _, k in sorted(keyed, reverse=True)]


_MISTRANSCRIPTION_WEIGHTS = (0.2, 0.15, 0.15, 0.15, 0.1, 0.25)


class _DocPredictor:
    """Makes one fake LLM's predictions for one document."""

    def __init__(
        self,
        text: str,
        mentions: list[_Mention],
        targets: Sequence[str],
        profile: ModelProfile,
        rng: random.Random,
    ):
        self.text = text
        self.words = _Words(text)
        self.mentions = mentions
        self.targets = targets
        self.profile = profile
        self.rng = rng

    def mistranscribed(self, m: _Mention, w: _Window) -> tuple[str, str]:
        rng = self.rng
        for kind in _weighted_order(
            MISTRANSCRIPTION_KINDS, _MISTRANSCRIPTION_WEIGHTS, rng
        ):
            context = _mistranscribe(kind, self.words, w, m, rng)
            if context is not None and context != _span_text(
                self.words, w.first, w.last
            ):
                return kind, context
        return "exact", _span_text(self.words, w.first, w.last)

    def safe(self, m: _Mention) -> tuple[Any, str, dict[str, Any]]:
        w = _window(self.words, m, self.rng)
        if self.rng.random() < self.profile.mistranscription_rate:
            kind, context = self.mistranscribed(m, w)
        else:
            kind, context = "exact", _span_text(self.words, w.first, w.last)
        return m.value, context, {"kind": kind}

    def _surface(self, m: _Mention, extra: dict[str, Any]) -> str:
        w = _window(self.words, m, self.rng)
        if self.rng.random() < self.profile.mistranscription_rate / 2:
            kind, context = self.mistranscribed(m, w)
            if kind != "exact":
                extra["mistranscription"] = kind
            return context
        return _span_text(self.words, w.first, w.last)

    def unsafe(self, kind: str, m: _Mention) -> tuple[Any, str, dict] | None:
        rng = self.rng
        extra: dict[str, Any] = {"kind": kind}
        if kind == "hallucinated_context":
            value, context = _hallucinate(m.type, m.value, rng)
            if context.lower() in self.text.lower():
                return None
            return value, context, extra
        if kind == "bad_grounding":
            others = [o for o in self.mentions if o.type != m.type]
            rng.shuffle(others)
            for o in others[:6]:
                context = self._surface(o, extra)
                if not _supports(m.type, m.value, context):
                    return m.value, context, extra
            return None
        if kind == "incorrect_entity":
            sources = [
                o for o in self.mentions if o.type in _CONFUSABLE.get(m.type, ())
            ]
            if not sources:
                return None
            o = rng.choice(sources)
            value = o.value
            if _FAMILY[m.type] == "text" and _FAMILY[o.type] == "name":
                value = _full(o.value)
            elif _FAMILY[m.type] != _FAMILY[o.type]:
                return None
            if value == m.value and o.type in self.targets:
                return None  # e.g. a decision date on the day of the hearing
            return value, self._surface(o, extra), extra
        if kind == "wrong_value":
            doc_values = [o.value for o in self.mentions if o.type == m.type]
            for _ in range(4):
                value = _other_value(m.type, m.value, rng, doc_values)
                if value in doc_values and _FAMILY[m.type] != "text":
                    continue
                context = self._surface(m, extra)
                if value != m.value and not self._states(m.type, value, context):
                    return value, context, extra
            return None
        raise ValueError(f"unknown kind {kind!r}")

    def _states(self, type_: str, value: Any, context: str) -> bool:
        family = _FAMILY[type_]
        low = context.lower()
        if family == "text":
            return value.lower() in low
        if family == "name":
            return _full(value).lower() in low
        if family == "date":
            # Another date of the same type inside the window would make it true.
            start = self.text.lower().find(low)
            return any(
                o.value == value
                for o in self.mentions
                if o.type == type_
                and start >= 0
                and start <= o.start < start + len(low)
            )
        return _supports(type_, value, context) and value.lower() in low

    def predict(self, doc_id: str, model: str) -> tuple[list[Prediction], list[Label]]:
        rng = self.rng
        by_type: dict[str, list[_Mention]] = {}
        for m in self.mentions:
            if m.type in self.targets:
                by_type.setdefault(m.type, []).append(m)
        chosen = [rng.choice(by_type[t]) for t in self.targets if t in by_type]
        rest = [m for t in self.targets for m in by_type.get(t, []) if m not in chosen]
        rng.shuffle(rest)
        chosen += rest[: max(rng.randint(8, 12) - len(chosen), 0)]
        order = {t: i for i, t in enumerate(self.targets)}
        chosen.sort(key=lambda m: (order[m.type], m.start))
        predictions, labels = [], []
        for j, m in enumerate(chosen):
            made = None
            if rng.random() < self.profile.unsafe_rate:
                for kind in _weighted_order(
                    UNSAFE_KINDS, self.profile.unsafe_weights, rng
                ):
                    made = self.unsafe(kind, m)
                    if made is not None:
                        break
            label = "unsafe" if made is not None else "safe"
            value, context, extra = made if made is not None else self.safe(m)
            pid = f"{doc_id}-p{j:02d}"
            predictions.append(
                Prediction(
                    id=pid,
                    document_id=doc_id,
                    type=m.type,
                    value=value,
                    context=context,
                    model=model,
                    extra=extra,
                )
            )
            labels.append(
                Label(prediction_id=pid, label=label, extra={"kind": extra["kind"]})
            )
        return predictions, labels


def _make_document(
    style: str, rng: random.Random
) -> tuple[str, list[_Mention], tuple[str, ...]]:
    ocr_rate = 0.0 if rng.random() < 0.6 else rng.choice((0.05, 0.1, 0.2))
    b = _Builder(rng, ocr_rate)
    if style == "tribunal":
        _tribunal(b, rng)
        return b.text(), b.mentions, TRIBUNAL_TYPES
    f = _facts(rng)
    {"irb_header": _irb_header, "narrative": _narrative, "tabular": _tabular}[style](
        b, f, rng
    )
    return b.text(), b.mentions, DEFAULT_TYPES


def generate_corpus(
    *, docs: int = 200, seed: int = 0, styles: Sequence[str] | None = None
) -> Corpus:
    """Generate a reproducible demo corpus.

    Args:
        docs: how many documents.
        seed: the same seed (and styles) gives byte-identical output.
        styles: document layouts to draw from; default :data:`STYLES`. The
            held-out ``"tribunal"`` style appears only when named here.

    Returns:
        A :class:`Corpus` whose schema covers every style drawn from.

    Raises:
        ValueError: an unknown style or a negative ``docs``.
    """
    chosen = tuple(styles) if styles is not None else STYLES
    unknown = [s for s in chosen if s not in STYLES + HELD_OUT_STYLES]
    if unknown or not chosen:
        raise ValueError(
            f"unknown styles {unknown}; pick from {STYLES + HELD_OUT_STYLES}"
        )
    if docs < 0:
        raise ValueError("docs must be >= 0")
    models = tuple(MODELS)
    documents, predictions, labels = [], [], []
    for i in range(docs):
        rng = random.Random(f"safepassage-demo:{seed}:{','.join(chosen)}:{i}")
        style = rng.choice(chosen)
        model = models[i % len(models)]
        text, mentions, targets = _make_document(style, rng)
        doc_id = f"demo-{i:04d}"
        documents.append(
            Document(id=doc_id, text=text, metadata={"style": style, "model": model})
        )
        predictor = _DocPredictor(text, mentions, targets, MODELS[model], rng)
        p, lab = predictor.predict(doc_id, model)
        predictions += p
        labels += lab
    return Corpus(documents, predictions, labels, _schema_for(chosen))


def _schema_for(styles: Sequence[str]) -> dict[str, Any]:
    default = any(s in STYLES for s in styles)
    tribunal = "tribunal" in styles
    if default and not tribunal:
        return demo_schema()
    if tribunal and not default:
        return tribunal_schema()
    merged = demo_schema()
    merged["name"] = "asylex-and-tribunal-demo"
    merged["entity_types"] = {
        **tribunal_schema()["entity_types"],
        **merged["entity_types"],
    }
    return merged


def write_corpus(corpus: Corpus, out_dir: str | Path) -> dict[str, Path]:
    """Write documents.jsonl, predictions.jsonl, labels.jsonl and schema.json.

    Returns:
        The path of each file, keyed ``documents``, ``predictions``, ``labels``,
        ``schema``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "documents": out / "documents.jsonl",
        "predictions": out / "predictions.jsonl",
        "labels": out / "labels.jsonl",
        "schema": out / "schema.json",
    }
    write_jsonl(paths["documents"], map(document_to_json, corpus.documents))
    write_jsonl(paths["predictions"], map(prediction_to_json, corpus.predictions))
    write_jsonl(paths["labels"], map(label_to_json, corpus.labels))
    paths["schema"].write_text(
        json.dumps(corpus.schema, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    return paths
