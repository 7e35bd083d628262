"""The default styles: decisions of the Immigration and Refugee Board of Canada
laid out as a bilingual header (``irb_header``), running prose (``narrative``)
or a case summary table (``tabular``), all about one set of :class:`Facts`."""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from .builder import Builder, Slot, full_name, person, split_article
from .lexicon import (
    CANADIAN_ORGS,
    COUNTRIES,
    DIVISIONS,
    FIRST,
    GANGS,
    GROUNDS,
    LAST,
    MEMBER_FIRST,
    MEMBER_LAST,
    NGOS,
    PARTIES,
    PERSONAL_AGENTS,
    POLICE,
    REGIONS,
    Country,
    Office,
    date_value,
    format_date,
    random_date,
)
from .templates import REASONS

_IRB = "Immigration and Refugee Board of Canada"
_IRB_FR = "Commission de l'immigration et du statut de réfugié du Canada"


def _org_slot(org: str) -> Slot:
    prefix, name = split_article(org)
    return Slot(name, "Organization", name, prefix=prefix)


def _sep(rng: random.Random) -> str:
    return rng.choice(("   ", "\t", " : ", ":\n", "\n", "  ", ": "))


@dataclass
class Facts:
    """What a default-style decision is about."""

    division: str
    file_no: str
    country: Country
    transit: str
    city: str
    city2: str
    office: Office
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


def facts(rng: random.Random) -> Facts:
    country = rng.choice(COUNTRIES)
    cities = list(country.cities)
    rng.shuffle(cities)
    transit = rng.choice([c.name for c in COUNTRIES if c.name != country.name])
    division = rng.choices(("RPD", "RAD", "IAD"), weights=(6, 1, 3))[0]
    office = rng.choice(REGIONS)
    year = rng.randint(2008, 2023)
    first = date(year, 1, 1) + timedelta(days=rng.randint(0, 330))
    hearings = [first]
    for _ in range(rng.choices((0, 1, 2), weights=(6, 3, 1))[0]):
        hearings.append(hearings[-1] + timedelta(days=rng.randint(5, 90)))
    decision = hearings[-1] + timedelta(days=rng.choice((0, 0, rng.randint(1, 150))))
    events = sorted(random_date(rng, year - 9, year - 1) for _ in range(3))
    letter = office.file_letter + rng.choice("ABC")
    file_no = f"{letter}{year % 10}-{rng.randint(0, 99999):05d}"
    if rng.random() < 0.6:
        persecutor, is_org = rng.choice(GANGS + POLICE), True
    else:
        persecutor, is_org = rng.choice(PERSONAL_AGENTS), False
    ngos = rng.sample(NGOS, 2)
    return Facts(
        division=division,
        file_no=file_no,
        country=country,
        transit=transit,
        city=cities[0],
        city2=cities[1 % len(cities)],
        office=office,
        claimant=person(rng, FIRST, LAST),
        female=rng.random() < 0.45,
        member=person(rng, MEMBER_FIRST, MEMBER_LAST),
        counsel=person(rng, MEMBER_FIRST + FIRST, MEMBER_LAST + LAST),
        interpreter=person(rng, FIRST, LAST) if rng.random() < 0.6 else None,
        hearings=hearings,
        decision=decision,
        events=events,
        virtual=rng.random() < (0.7 if year >= 2020 else 0.15),
        public=rng.random() < (0.7 if division == "IAD" else 0.08),
        persecutor=persecutor,
        persecutor_is_org=is_org,
        police=rng.choice(POLICE),
        ngos=ngos,
        party=rng.choice(PARTIES),
        ground=rng.choice(GROUNDS),
        accepted=rng.random() < 0.5,
    )


def reason_slots(f: Facts, rng: random.Random, date_fmt: str) -> dict[str, Any]:
    he, his, him = ("she", "her", "her") if f.female else ("he", "his", "him")
    country = f.country.name
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
        "claimant": Slot(full_name(f.claimant), "ClaimantName", f.claimant),
        "Mr": ("Ms. " if f.female else "Mr. ") + f.claimant["last_name"],
        "country": Slot(country, "GPE", country),
        "city": Slot(f.city, "GPE", f.city),
        "city2": Slot(f.city2, "GPE", f.city2),
        "transit": Slot(f.transit, "GPE", f.transit),
        "office": Slot(f.office.city, "GPE", f.office.city),
        "province": Slot(f.office.province, "GPE", f.office.province),
        "persecutor": persecutor,
        "police": _org_slot(f.police),
        "ngo": _org_slot(f.ngos[0]),
        "ngo2": _org_slot(f.ngos[1]),
        "party": _org_slot(f.party),
        "cborg": _org_slot(rng.choice(CANADIAN_ORGS)),
        "ground": f.ground,
        "lang": f.country.language,
        "event_date": Slot(
            format_date(f.events[1], date_fmt), "EventDate", date_value(f.events[1])
        ),
        "event_month": Slot(
            format_date(f.events[0], "month"),
            "EventDate",
            date_value(f.events[0], partial=True),
        ),
        "event_year": str(f.events[2].year),
        "hearing_date": Slot(
            format_date(hearing, date_fmt),
            "HearingDate",
            date_value(hearing),
            cue="hearing",
        ),
        "member": Slot(full_name(f.member), "JudgeName", f.member, cue="Member"),
        "division": Slot(
            DIVISIONS[f.division].name, "Organization", DIVISIONS[f.division].name
        ),
    }


def _reasons(
    b: Builder,
    f: Facts,
    rng: random.Random,
    *,
    date_fmt: str,
    numbered: bool,
    count: int,
) -> None:
    slots = reason_slots(f, rng, date_fmt)
    templates = [REASONS[0]] + rng.sample(REASONS[1:], count - 1)
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


def _hearing_type(b: Builder, f: Facts, rng: random.Random, *, prose: bool) -> None:
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


def _public_private(b: Builder, f: Facts, rng: random.Random, *, prose: bool) -> None:
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


def _signature(b: Builder, f: Facts, rng: random.Random, date_fmt: str) -> None:
    if rng.random() < 0.5:
        b.add("(signed) ")
    b.ent(full_name(f.member), "JudgeName", f.member, cue=None)
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
        format_date(f.decision, date_fmt),
        "DecisionDate",
        date_value(f.decision),
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


def irb_header(b: Builder, f: Facts, rng: random.Random) -> None:
    name, name_fr, abbr_fr, party_label = DIVISIONS[f.division]
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
            full_name(f.claimant).upper()
            if rng.random() < 0.4
            else full_name(f.claimant),
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
            b.ent(format_date(d, fmt), "HearingDate", date_value(d), cue="audience")

    def place() -> None:
        b.add("Place of Hearing / Lieu de l'audience" + _sep(rng))
        b.ent(f.office.city, "GPE", f.office.city)
        b.add(", ")
        b.ent(f.office.province, "GPE", f.office.province)
        if rng.random() < 0.6:
            b.add("\nHearing format / Mode d'audience" + _sep(rng))
            _hearing_type(b, f, rng, prose=False)

    def decided() -> None:
        b.add("Date of Decision / Date de la décision" + _sep(rng))
        b.ent(
            format_date(f.decision, fmt),
            "DecisionDate",
            date_value(f.decision),
            cue="décision",
        )

    def panel() -> None:
        label = rng.choice(("Panel / Tribunal", "Member / Commissaire", "Panel"))
        b.add(label + _sep(rng))
        b.ent(full_name(f.member), "JudgeName", f.member, cue=label.split()[-1])

    def counsel() -> None:
        b.add("Claimant's Counsel / Conseil(s) du demandeur d'asile" + _sep(rng))
        b.ent(full_name(f.counsel), "CounselName", f.counsel, cue="Conseil")
        if f.interpreter:
            b.add("\nInterpreter / Interprète" + _sep(rng))
            b.ent(
                full_name(f.interpreter), "InterpreterName", f.interpreter, cue="Inter"
            )

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


def narrative(b: Builder, f: Facts, rng: random.Random) -> None:
    name, name_fr, abbr_fr, _ = DIVISIONS[f.division]
    fmt = rng.choice(("uk", "uk", "ordinal", "us"))
    b.ent(name.upper() if rng.random() < 0.5 else name, "Organization", name)
    label = f"{f.division} File No."
    b.add("\n")
    b.ent(label, "FileLabel", label)
    b.add(f" / No de dossier de la {abbr_fr} : {f.file_no}\n\n")
    who = "claim for refugee protection of" if f.division == "RPD" else "appeal of"
    b.add(f"In the matter of the {who} ")
    b.ent(full_name(f.claimant), "ClaimantName", f.claimant)
    b.add(rng.choice((".\n\n", ", a citizen of ")))
    if b.parts[-1].endswith("of "):
        b.ent(f.country.name, "GPE", f.country.name)
        b.add(".\n\n")
    if f.hearings[0].day > 20 and len(f.hearings) > 1:
        b.add("The hearing began in ")
        first = f.hearings[0]
        b.ent(
            format_date(first, "month"),
            "HearingDate",
            date_value(first, partial=True),
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
        b.ent(format_date(d, fmt), "HearingDate", date_value(d), cue="eard")
    b.add(", at ")
    b.ent(f.office.city, "GPE", f.office.city)
    b.add(", ")
    b.ent(f.office.province, "GPE", f.office.province)
    b.add(rng.choice((", before Member ", ". Presiding member: ", ", before ")))
    b.ent(full_name(f.member), "JudgeName", f.member, cue="ember")
    b.add(". The hearing was held ")
    _public_private(b, f, rng, prose=True)
    b.add(".\n")
    if rng.random() < 0.5:
        b.add("Décision rendue le ")
        b.ent(
            format_date(f.decision, "fr"),
            "DecisionDate",
            date_value(f.decision),
            cue="rendue",
        )
    else:
        b.add("Decision rendered on ")
        b.ent(
            format_date(f.decision, fmt),
            "DecisionDate",
            date_value(f.decision),
            cue="rendered",
        )
    b.add(".\n")
    if rng.random() < 0.6:
        b.add("Counsel for the claimant: ")
        b.ent(full_name(f.counsel), "CounselName", f.counsel, cue="Counsel")
        b.add(". ")
    if f.interpreter and rng.random() < 0.7:
        b.add("Interpreter: ")
        b.ent(full_name(f.interpreter), "InterpreterName", f.interpreter, cue="Interp")
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


def tabular(b: Builder, f: Facts, rng: random.Random) -> None:
    name = DIVISIONS[f.division].name
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
        else full_name(f.claimant)
    )
    b.ent(shown, "ClaimantName", f.claimant)
    b.add("\nCountry of reference: ")
    b.ent(f.country.name, "GPE", f.country.name)
    b.add("\nHearing date(s): ")
    for i, d in enumerate(f.hearings):
        if i:
            b.add("; ")
        b.ent(format_date(d, fmt), "HearingDate", date_value(d), cue="Hearing")
    b.add("\nHearing mode: ")
    _hearing_type(b, f, rng, prose=False)
    b.add("\nHearing status: ")
    _public_private(b, f, rng, prose=False)
    b.add("\nLocation: ")
    b.ent(f.office.city, "GPE", f.office.city)
    b.add(", ")
    b.ent(f.office.province, "GPE", f.office.province)
    b.add("\nMember: ")
    shown = (
        f"{f.member['last_name'].upper()}, {f.member['first_name']}"
        if upper
        else full_name(f.member)
    )
    b.ent(shown, "JudgeName", f.member, cue="Member")
    b.add("\nDecision date: ")
    b.ent(
        format_date(f.decision, fmt),
        "DecisionDate",
        date_value(f.decision),
        cue="Decision",
    )
    b.add("\nOutcome: " + ("Positive" if f.accepted else "Negative"))
    b.add("\nCounsel: ")
    b.ent(full_name(f.counsel), "CounselName", f.counsel, cue="Counsel")
    b.add("\n\nSummary of reasons:\n")
    _reasons(b, f, rng, date_fmt=fmt, numbered=False, count=rng.randint(2, 5))
