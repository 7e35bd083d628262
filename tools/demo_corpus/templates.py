"""Text templates: the sentences of a decision's reasons, and the invented
passages a hallucinating LLM offers as context.

A ``{name}`` in a reason is filled by :meth:`Builder.fill` from the slots of
:func:`tools.demo_corpus.irb.reason_slots`; ``{v}`` in a hallucination is the
predicted value as written.
"""

# The first reason opens every decision; the others are drawn without
# replacement.
REASONS = (
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


# Invented contexts for each type; for enums, for each value.
HALLUCINATIONS: dict[str, tuple[str, ...] | dict[str, tuple[str, ...]]] = {
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


# Padding that keeps invented words the larger part of a hallucinated context.
INVENTED_TAILS = (
    ", as confirmed in the supplementary record",
    " according to the testimony summarised above",
    ", which the panel accepts without reservation",
    " as set out in the disclosure package",
    ", a point not contested by counsel at any stage",
)
