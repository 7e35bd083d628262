"""The held-out style: a decision of another Canadian administrative tribunal
(social security, workplace insurance, employment standards), with its own
entity types, so that a scorer can be tested on documents unlike its training
set."""

from __future__ import annotations

import random
from datetime import date, timedelta

from .builder import Builder, full_name, person
from .lexicon import (
    CITY_PROVINCES,
    FIRST,
    FORMAT_SURFACES,
    LAST,
    MEMBER_FIRST,
    MEMBER_LAST,
    TRIBUNALS,
    date_value,
    format_date,
)


def tribunal_decision(b: Builder, rng: random.Random) -> None:
    tribunal, section, respondent, code = rng.choice(TRIBUNALS)
    claimant = person(rng, FIRST + MEMBER_FIRST, LAST + MEMBER_LAST)
    member = person(rng, MEMBER_FIRST, MEMBER_LAST)
    city, province = rng.choice(CITY_PROVINCES)
    year = rng.randint(2014, 2024)
    heard = date(year, 1, 1) + timedelta(days=rng.randint(0, 300))
    decided = heard + timedelta(days=rng.randint(1, 60))
    event = heard - timedelta(days=rng.randint(60, 900))
    fmt = rng.choice(("us", "uk", "dotted", "iso"))
    form = rng.choice(tuple(FORMAT_SURFACES))
    b.ent(tribunal, "Tribunal", tribunal)
    b.add("\n")
    b.ent(section, "Tribunal", section)
    b.add(f"\n\nCitation: {claimant['first_name'][0]}. {claimant['last_name'][0]}. v. ")
    b.ent(respondent, "Respondent", respondent)
    b.add(f", {decided.year} {code}{rng.randint(1, 999)}\n")
    b.add(f"Tribunal file number: {code}-{year % 100:02d}-{rng.randint(1, 9999):04d}\n")
    b.add(rng.choice(("Appellant: ", "Claimant: ", "Applicant: ")))
    b.ent(full_name(claimant), "ClaimantName", claimant)
    b.add("\nRespondent: ")
    b.ent(respondent, "Respondent", respondent)
    b.add(rng.choice(("\nTribunal member: ", "\nDecision by: ", "\nAdjudicator: ")))
    b.ent(full_name(member), "MemberName", member)
    b.add("\nType of hearing: ")
    b.ent(rng.choice(FORMAT_SURFACES[form]), "HearingFormat", form)
    b.add("\nHearing date: ")
    b.ent(format_date(heard, fmt), "HearingDate", date_value(heard), cue="Hearing")
    b.add("\nHearing location: ")
    b.ent(city, "City", city)
    b.add(", ")
    b.ent(province, "Province", province)
    b.add("\nDecision date: ")
    b.ent(format_date(decided, fmt), "DecisionDate", date_value(decided), cue="Decis")
    b.add("\n\nDECISION\n\n")
    b.add("The appeal is " + rng.choice(("allowed", "dismissed", "allowed in part")))
    b.add(".\n\nOVERVIEW\n\n")
    b.add("The Appellant, ")
    b.ent(full_name(claimant), "ClaimantName", claimant)
    b.add(", worked for a warehouse in ")
    b.ent(city, "City", city)
    b.add(" until ")
    b.ent(format_date(event, fmt), "EventDate", date_value(event))
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
    b.ent(rng.choice(FORMAT_SURFACES[form][1:]), "HearingFormat", form)
    b.add(" on ")
    b.ent(format_date(heard, fmt), "HearingDate", date_value(heard), cue="hearing")
    b.add(". The Appellant attended with a representative from a legal clinic in ")
    b.ent(city, "City", city)
    b.add(".\n\nI find that the Appellant has shown just cause. ")
    b.add("The reasons follow.\n\n")
    b.ent(full_name(member), "MemberName", member)
    b.add("\nMember, ")
    b.ent(section, "Tribunal", section)
    b.add("\n")
