"""Reading the prose of an implicit-mode reply: rules 5-8 of the classifier.

``classify_reply`` (in ``implicit``) comes here only for a reply that is not empty and holds no
call attempt; ``classify_prose`` gives its bucket (``cannot``, ``ask`` or ``answer``) and a
reason. The prose is read sentence by sentence, lower-cased, with code fences left out. The
rules, in order:

5. **An explicit statement that the tools do not fit is ``cannot``**: "none of the available
   APIs", "no suitable tool", "I don't have access to a tool that...", "cannot ... with the
   provided tools", "not supported by the given APIs" (and a few non-English forms). This wins
   over a question in the same reply: once the model has judged the toolset, a following
   question is nearly always an offer or a workaround, and the judgement is what the benchmark
   measures.
6. **A request for information is ``ask``**: a question sentence that is not a polite closing
   or an offer ("Is there anything else...?", "Would you like me to...?", "Shall I...?"), or an
   imperative request ("Please provide...", "Let me know which...", "I need the date").
7. **A generic statement of inability** ("I'm sorry, I can't do that") is ``cannot`` when the
   reply asks for nothing; with a request for information it is read as waiting for that
   information, so rule 6 decides (``ask``).
8. Otherwise ``answer``.

An inability sentence that blames missing *information* ("I can't call the API until you tell
me the date", "I cannot proceed with the available tools without knowing the city") is not a
``cannot`` cue at all, in either rule 5 or 7: the model noticed a gap in the request, not in the
tools. Rhetorical questions that the reply answers itself still read as questions; that is rare
in replies to a tool-use dialogue and keeping the rule simple keeps it predictable.

The text is model output: no regex here can backtrack badly (every repetition is bounded or
cannot overlap with what follows it).
"""

from __future__ import annotations

import re

# -- prose: cannot, ask, answer ------------------------------------------------------------------

_QUOTES = str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"'})
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_T = r"(?:apis?|tools?|functions?|endpoints?|plugins?)"
_AV = r"(?:available|provided|given|listed|offered|existing|current|accessible|supplied)"
_ADJ = (
    r"(?:suitable|relevant|appropriate|applicable|matching|available|existing|such|specific"
    r"|dedicated|single|proper|compatible|corresponding|provided|listed|given|usable|right)"
)
_NEG = r"(?:cannot|can't|can not|unable to|not able to|won't be able to)"
_CAN = r"(?:can|could|will|would|allows?|supports?|provides?|fits?|matches?|handles?|covers?|does)"


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{pattern})" for pattern in patterns))


#: Statements about the toolset (rule 5).
_TOOLSET_CANNOT = _any(
    rf"\bnone of (?:the |these |those |my |your |our )?(?:{_AV} )?{_T}\b",
    rf"\bnone of (?:them|these|those) (?:(?:is |are |seems? )?(?:{_ADJ}|able|capable)|{_CAN})\b",
    rf"\bno (?:{_ADJ} )+{_T}\b(?! calls?| (?:is |are )?(?:needed|required|necessary))",
    rf"\bno {_T} (?:(?:is |are )?(?:available|provided|offered|among)|exists?|that|which|for"
    rf"|{_CAN})\b",
    rf"\b(?:do not|don't|does not|doesn't) (?:currently )?(?:have|include|contain|offer|provide) "
    rf"(?:access to )?(?:(?:a|an|any|the) )?(?:{_ADJ} )*(?:{_T}|capabilit(?:y|ies)|ability)\b"
    r"(?! calls?)",
    rf"\b(?:isn't|is not|aren't|are not) (?:an?|any) (?:{_ADJ} )*{_T}\b(?! calls?| requests?)",
    rf"\b{_NEG}\b[^.?!]{{0,80}}\b(?:with|using|via|through|from) (?:any of )?"
    rf"(?:the |these |those |my |your )?(?:{_AV} )?{_T}\b",
    rf"\b(?:{_AV} {_T}|{_T} (?:{_AV}|(?:that |which )?(?:i|we) (?:have|can use)))\b[^.?!]{{0,60}}"
    rf"\b(?:{_NEG}|do not|don't|does not|doesn't|lacks?) (?:\w+ ){{0,2}}?"
    r"(?:support|allow|cover|handle|include|offer|provide|let|perform|fit|match|do|help)",
    rf"\bnot (?:supported|covered|possible|available|offered|provided|doable) "
    rf"(?:by|with|through|via|among|in|using) (?:any of )?(?:the |these |my )?(?:{_AV} )?{_T}\b",
    rf"\b(?:beyond|outside|out of) (?:the scope of )?(?:the |my |these )?(?:{_AV} )?"
    rf"(?:{_T}|capabilities|toolset|scope)\b",
    rf"\black(?:s|ing)? (?:(?:a|an|any|the) )?(?:{_ADJ} )*(?:{_T}|capabilit(?:y|ies)|ability)\b",
    rf"\b(?:{_T}|capability|functionality) (?:for|to|that can|that could)\b[^.?!]{{0,60}}"
    r"\b(?:isn't|is not|aren't|are not|wasn't|was not) (?:currently )?"
    r"(?:available|provided|offered|included|listed|among)\b",
    rf"\b(?:don't|doesn't|do not|does not|cannot|can't) (?:match|fit|correspond to) "
    rf"any of (?:the |these |my )?(?:{_AV} )?{_T}\b",
    r"\bgive_up_and_restart\b",
    r"\bninguna de las (?:apis|herramientas|funciones)\b",
    r"\bno tengo (?:acceso a )?(?:una|ninguna) (?:api|herramienta|función)\b",
    r"\bkeine (?:passende|geeignete|verfügbare)n? (?:api|funktion|werkzeug|tool)",
    r"\baucune? (?:des |de ces )?(?:api|outils?|fonctions?)\b",
)
#: First-person inability without naming the tools (rule 7).
_SELF_CANNOT = _any(
    rf"\b(?:i|we)(?:'m| am|'re| are)? (?:really |currently |simply |still )?{_NEG}\b",
    r"\b(?:i|we) (?:don't|do not) have access to\b",
    r"\b(?:that|this|it) (?:is not|isn't) something i can\b",
    r"\bno puedo\b|\bich kann (?:das |dies )?nicht\b|\bje ne (?:peux|suis pas en mesure)\b",
)
#: The sentence blames missing information, not the tools: no cannot cue in it counts.
_INFO_GAP = _any(
    r"\b(?:until|unless|once|as soon as) you\b",
    r"\bif you (?:provide|tell|give|specify|share|let me know|confirm)\b",
    r"\bbefore i can\b",
    r"\bneed (?:to know|more|your|you to|some|additional|further|a few)\b",
    r"\byou (?:haven't|have not|didn't|did not|never) (?:yet )?"
    r"(?:provide|give|gave|specif|tell|told|mention|say|said|share)",
    r"\b(?:haven't|hasn't|have not|has not|wasn't|was not|not yet) (?:been )?"
    r"(?:provided|given|specified|mentioned|shared)\b",
    r"\bmissing (?:some |the |required |necessary |key )?"
    r"(?:information|details|values?|parameters?|arguments?|inputs?|data)\b",
    r"\b(?:information|details|values?|parameters?|arguments?|inputs?) (?:is |are )?missing\b",
    r"\bwithout (?:knowing|more|further|additional|your|that information|these details)\b",
)
#: Requests for information that are not questions (rule 6).
_INFO_REQUEST = _any(
    r"\b(?:please|kindly|pls)\b[^.?!]{0,30}?\b(?:provide|specify|tell|share|give|send|confirm"
    r"|clarify|let me know|indicate|supply|choose|select|pick|enter|mention|state)\b",
    r"\blet me know (?:the|your|which|what|when|where|who|how|whether)\b",
    r"\b(?:could|can|would|will) you (?:please |kindly )?(?:provide|specify|tell|share|give|send"
    r"|confirm|clarify|let me know|indicate|mention)\b",
    r"\b(?:i|we)(?: would| will|'ll|'d| still| first| just)? (?:need|require) (?:to know "
    r"|from you )?(?:the|your|a few|some|more|additional|further|which|what|when)\b",
    r"\bnot sure (?:which|what|when|where|who|whether|if you)\b",
    r"\b(?:until|unless|once|as soon as|if) you (?:provide|tell|give|specify|share|confirm"
    r"|let me know|send|clarify|mention|indicate)\b",
    r"\b(?:provide|specify|tell|share|give|send) me (?:the|your|with|which|what|when|where)\b",
    r"\bpor favor,? (?:indique|proporcione|dime|d[ií]game|especifique)\b",
    r"\bbitte (?:geben|nennen|teilen|sagen)\b",
    r"\bveuillez (?:pr[ée]ciser|indiquer|fournir|me dire)\b",
)
#: Polite closings and offers: questions that ask for nothing.
_CLOSING = _any(
    r"\b(?:anything|something) (?:else|more)\b",
    r"\belse (?:i can|can i|you(?:'d| would) like|you need)\b",
    r"\b(?:can|may|could) i (?:help|assist|do)\b|\bhow (?:else )?(?:can|may) i\b",
    r"\b(?:would|do) you (?:like|want) me to\b|\bwant me to\b|\b(?:shall|should) i\b",
    r"\b(?:any|other|more|further) (?:questions|help|assistance)\b",
    r"\bif you (?:need|have|want|would like|'d like)\b",
    r"\bdoes (?:that|this) help\b|\bis (?:that|this) (?:helpful|all)\b|\bhope (?:this|that) helps",
    r"\bwould you like (?:to (?:know|learn|hear|see)|more|any)\b",
    r"\bsonst noch\b|\balgo más\b|\bautre chose\b",
)


def classify_prose(reply: str) -> tuple[str, str]:
    """Rules 5-8 on the reply's prose (code fences are left out: they hold no questions)."""
    sentences = _sentences(reply)
    if any(_TOOLSET_CANNOT.search(s) and not _INFO_GAP.search(s) for s in sentences):
        return "cannot", "says no available API fits"
    for sentence in sentences:
        if _CLOSING.search(sentence):
            continue
        if _is_question(sentence):
            return "ask", "question to the user"
        if _INFO_REQUEST.search(sentence):
            return "ask", "asks the user for information"
    if any(_SELF_CANNOT.search(s) and not _INFO_GAP.search(s) for s in sentences):
        return "cannot", "says it cannot do this"
    return "answer", "reply without a call, a question or a refusal"


def _sentences(reply: str) -> list[str]:
    prose = " ".join(reply.split("```")[0::2]).translate(_QUOTES).lower()
    return [s.strip() for s in _SENTENCE_BREAK.split(prose) if s.strip()]


def _is_question(sentence: str) -> bool:
    return sentence.rstrip("\"'*_)]»").endswith(("?", "？")) or sentence.startswith("¿")
