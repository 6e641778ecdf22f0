"""Presidio recognizers added to the built-in ones: secrets, street addresses, account numbers,
dates of birth, cue-introduced names (people and places from the NER model: names.py).

Each recognizer is a list of compiled regexes (case handled in the regex itself, not by
Presidio's global IGNORECASE) whose named group ``value`` is the span reported; a validator can
veto a match. Cues ("my password is", "born on") are part of the regex so the span covers only
the sensitive value and a context-free look-alike is never reported.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from presidio_analyzer import LocalRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from presidio_analyzer.predefined_recognizers import EmailRecognizer, PhoneRecognizer
from spacy.lang.en.stop_words import STOP_WORDS
from tldextract import TLDExtract

from langmem_vault.privacy._redaction.names import NerPeoplePlacesRecognizer
from langmem_vault.privacy._redaction.policy import Entity
from langmem_vault.privacy._redaction.vocabulary import NOT_A_NAME


@dataclass(frozen=True)
class Rule:
    """One regex; the span is group ``value`` if present, else the whole match."""

    regex: re.Pattern[str]
    score: float
    validate: Callable[[str], bool] | None = None


class RegexRecognizer(LocalRecognizer):
    """A recognizer from a list of :class:`Rule` for one entity type.

    Example:
        >>> r = RegexRecognizer(Entity.SECRET, [Rule(re.compile(r"pw=(?P<value>\\S+)"), 0.9)])
        >>> [(x.start, x.end) for x in r.analyze("pw=abc", ["SECRET"])]
        [(3, 6)]
    """

    def __init__(self, entity: Entity, rules: Sequence[Rule], name: str | None = None) -> None:
        self.rules = list(rules)
        super().__init__(supported_entities=[entity.value], name=name or f"{entity.value}_rules")

    def load(self) -> None:
        """Nothing to load: the regexes are compiled at import."""

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        """Every rule match as a result of this recognizer's entity type."""
        entity = self.supported_entities[0]
        if entity not in entities:
            return []
        results = []
        for rule in self.rules:
            for m in rule.regex.finditer(text):
                group = "value" if "value" in rule.regex.groupindex else 0
                start, end = m.span(group)
                value = text[start:end]
                if start == end or (rule.validate is not None and not rule.validate(value)):
                    continue
                results.append(RecognizerResult(entity, start, end, rule.score))
        return results


# --- secrets ---------------------------------------------------------------------------------

_SECRET_PREFIXED = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-(?:api\d\d-)?)?[A-Za-z0-9_-]{20,}"  # OpenAI / Anthropic
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"  # Stripe
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,}"  # GitHub
    r"|xox[abporsx]-[A-Za-z0-9-]{10,}"  # Slack
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key id
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API key
    r"|glpat-[A-Za-z0-9_-]{20,}|hf_[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{36}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # JWT
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----"
    r")",
    re.DOTALL,
)
_SECRET_BEARER = re.compile(r"\b[Bb]earer\s+(?P<value>[A-Za-z0-9._~+/-]{16,}=*)")
_SECRET_URL_CREDENTIALS = re.compile(r"://[^\s:/@]+:(?P<value>[^\s@/]{3,})@")
_SECRET_CUE = re.compile(
    r"(?i:(?<![A-Za-z])(?:password|passwd|pwd|passcode|passphrase|pass\s?word|pin(?:\s?code)?"
    r"|api[\s_-]?key|access[\s_-]?key|secret[\s_-]?key|(?:auth|access|api|bearer|refresh)?"
    r"[\s_-]?token|client[\s_-]?secret|credentials?)"
    r"(?:\s+(?:for|to|of|on|at)\s+(?:[\w.'-]+\s+){0,3}?)?\s*(?:is|was|are|=|:|->)\s*)"
    r"[\"'`]?(?P<value>[^\s\"'`]{4,200}?)[\"'`]?(?=[.,;:!?)]*(?:\s|$))"
)
_GENERIC_TOKEN = re.compile(r"(?<![\w/+=-])(?P<value>[A-Za-z0-9_+/=-]{24,})(?![\w/+=-])")

# Words that follow "password is" / "token was" in ordinary talk about credentials.
_NOT_A_PASSWORD_WORDS = """
valid invalid wrong correct incorrect weak strong short long same different secure insecure
required needed missing empty fine okay good bad new old temporary stored saved there here gone
broken
"""
_NOT_A_PASSWORD = frozenset(_NOT_A_PASSWORD_WORDS.split())


def _plausible_password(value: str) -> bool:
    word = value.lower()
    if not (word.isalpha() and word.islower()):
        return True  # digits, symbols or capitals: a chosen secret, not an English word
    return not (
        word in STOP_WORDS
        or word in _NOT_A_PASSWORD
        or word.endswith(("ed", "ing", "ly", "able", "ible"))
    )


def _high_entropy(value: str) -> bool:
    # Random keys mix cases and digits; git SHAs, UUIDs and snake_case identifiers do not.
    if not (any(c.isupper() for c in value) and any(c.islower() for c in value)):
        return False
    if sum(c.isdigit() for c in value) < 2:
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= 3.5


SECRET_RULES = [
    Rule(_SECRET_PREFIXED, 0.95),
    Rule(_SECRET_BEARER, 0.9),
    Rule(_SECRET_URL_CREDENTIALS, 0.9),
    Rule(_SECRET_CUE, 0.85, _plausible_password),
    Rule(_GENERIC_TOKEN, 0.7, _high_entropy),
]

# --- street addresses --------------------------------------------------------------------

_STREET_TYPES = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl"
    r"|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Close|Crescent|Cres|Row"
    r"|Trail|Trl|Alley|Gardens|Grove|Mews|Hill|Walk|Plaza|Loop|Pike"
)
_STREET = re.compile(
    r"\b(?P<value>\d{1,6}[A-Za-z]?(?:-\d{1,5})?,?\s+"
    r"(?:[NSEWnsew]\.?\s+|(?i:north|south|east|west)\s+)?"
    r"(?P<name>(?:[A-Za-z][A-Za-z'.-]*\s+){0,3}?(?:[A-Za-z][A-Za-z'.-]*|\d{1,3}(?:st|nd|rd|th)))"
    rf"\s+(?i:{_STREET_TYPES})\.?(?![\w])"
    r"(?:,?\s+(?i:apt|apartment|suite|ste|unit|flat|floor|fl|room|#)\.?\s*#?\s*[A-Za-z0-9-]{1,6})?"
    # ", Springfield, IL 62704" / ", Portland OR 97201" / ", London SW1A 1AA"; a lowercase
    # city only counts when a state and ZIP code follow it.
    r"(?:,\s+[A-Z][a-z]+(?:\s+[A-Z][a-z]+){0,2}"
    r"(?:,?\s+[A-Z]{1,2}\d[A-Z\d]?\s+\d[A-Z]{2}|,?\s+[A-Z]{2}(?![\w])(?:\s+\d{5}(?:-\d{4})?)?)?"
    r"|,\s+[a-z]+(?:\s+[a-z]+){0,2},?\s+[A-Za-z]{2}\s+\d{5}(?:-\d{4})?)?)"
)
_PO_BOX = re.compile(r"\b(?P<value>(?i:P\.?\s?O\.?\s?Box|Post\s+Office\s+Box)\s+\d{1,6})\b")


def _street_name_ok(value: str) -> bool:
    # "5 miles down the road" has the shape of an address; real street names are not made of
    # function words.
    m = _STREET.fullmatch(value) or _STREET.match(value)
    name = m.group("name") if m else value
    return not any(w.lower().strip(".'") in STOP_WORDS for w in name.split())


# Portuguese, Spanish, Catalan, Italian: the street type first, the number after the name
# ("Rua Augusta 301", "Calle Mayor, 5", "Avenida da Liberdade 12", "Carrer de Balmes 12").
# The types that are also everyday words ("via", "plaza") need a capitalised name after them.
_NAME_WORD = r"[A-Z\u00c0-\u00dd][\w'.-]*"
_PARTICLE = r"(?:d[aeo]s?|de|del|dels|de la|de las|de los|la|las|los|dei|della|delle|di)\s+"
_ROMANCE_NAME = rf"(?:{_PARTICLE})?{_NAME_WORD}(?:\s+(?:{_PARTICLE})?{_NAME_WORD}){{0,3}}"
_ROMANCE_LOWER_NAME = r"(?:[a-z\u00e0-\u00ff][\w'.-]*\s+){0,3}?[a-z\u00e0-\u00ff][\w'.-]*"
# the floor and door ("3\u00ba B", "2\u00ba Esq."), then a postal code and town ("1100-053 Lisboa")
_FLOOR = r"(?:,?\s+\d{1,2}\u00ba(?:\s?[A-Za-z]{1,4}\.?)?)?"
_POSTAL = r"(?:,?\s+(?:\d{4}-\d{3}|\d{5})\s+[^\W\d_][\w'-]+)?"
_NUMBER_AFTER = rf",?\s+(?:n(?:\.|\u00ba|o)?\s*)?\d{{1,5}}[A-Za-z]?(?!\w){_FLOOR}{_POSTAL}"
_ROMANCE_STREET = re.compile(
    r"(?<![\w/])(?P<value>"
    rf"(?:(?i:rua|calle|avenida|avda\.?|travessa|carrer|paseo|passeig|alameda|estrada|"
    rf"pra\u00e7a|praca|viale|corso|vicolo|rambla)\s+(?:{_ROMANCE_NAME}|{_ROMANCE_LOWER_NAME})"
    rf"|(?:Av\.|R\.|C/|Via|Plaza|Piazza|Largo|Camino|Ronda|Pl\.)\s*{_ROMANCE_NAME})"
    rf"{_NUMBER_AFTER})"
)
# French: the number first, then the type ("12 rue de Rivoli", "5 bd Saint-Germain"); the
# types that are also English words need a particle or a capitalised name after them.
_FRENCH_STREET = re.compile(
    r"(?<!\w)(?P<value>\d{1,4}(?:\s?(?:bis|ter))?,?\s+"
    r"(?:(?i:rue|boulevard|bd|impasse|all\u00e9e|allee|quai|chauss\u00e9e)\s+"
    r"(?:(?i:de la|de l'|du|des|de|d'|la|le|l')\s*)?[\w\u00c0-\u00ff'-]+"
    r"(?:(?=[\s-]+[a-z\u00e0-\u00ff][\w'-]*,?\s+\d{5}\b)[\s-]+[a-z\u00e0-\u00ff][\w'-]*)?"
    r"|(?i:avenue|av\.|place|chemin|cours|passage|route|square)\s+"
    r"(?:(?i:de la|de l'|du|des|de|d')\s*[\w\u00c0-\u00ff'-]+|[A-Z\u00c0-\u00dd][\w'-]+))"
    r"(?:[\s-]+(?:(?i:de la|du|des|de|d'|la|le)\s*)?[A-Z\u00c0-\u00dd][\w'-]*){0,3}"
    rf"{_POSTAL})"
)
# German: a compound street name, then the number ("Hauptstra\u00dfe 5", "Berliner Str. 12",
# "K\u00f6nigsallee 2").
_GERMAN_TYPES = r"stra\u00dfe|strasse|str\.|gasse|allee|weg|platz|damm|ufer|chaussee"
_GERMAN_STREET = re.compile(
    r"(?<!\w)(?P<value>"
    rf"(?:[A-Z\u00c4\u00d6\u00dc][a-z\u00e4\u00f6\u00fc\u00df-]{{2,}}(?:{_GERMAN_TYPES})"
    rf"|(?i:[a-z\u00e4\u00f6\u00fc\u00df-]{{3,}}(?:stra\u00dfe|strasse))"
    rf"|[A-Z\u00c4\u00d6\u00dc][a-z\u00e4\u00f6\u00fc\u00df]+(?:er|es)?\s+(?:Stra\u00dfe|Strasse|Str\.|Weg|Gasse|Allee|Platz|Damm))"
    rf"\s+\d{{1,3}}[a-z]?(?!\w){_POSTAL})"
)

ADDRESS_RULES = [
    Rule(_STREET, 0.85, _street_name_ok),
    Rule(_PO_BOX, 0.85),
    Rule(_ROMANCE_STREET, 0.85),
    Rule(_FRENCH_STREET, 0.85),
    Rule(_GERMAN_STREET, 0.85),
]

# --- account and document numbers ----------------------------------------------------------

_ACCOUNT = re.compile(
    r"(?i:\b(?:(?:bank|checking|savings|brokerage|current|deposit|loan|credit union|routing"
    r"|member(?:ship)?|customer|client|policy|loyalty|frequent flyer|subscriber|patient"
    r"|passport|(?:driver'?s?\s)?licen[cs]e|tax|medicare|medicaid|insurance)\s+)?"
    r"(?:account|acct\.?|a/c|routing|membership|member|customer|policy|passport|licen[cs]e"
    r"|sort code|tax id|ein|itin)"
    r"(?:\s+(?:number|num|no\.?|nr|#|id|code))?"
    r"(?:\s+(?:on|for|of|at|with|in)\s+(?:[\w.'-]+\s+){0,3}?)?\s*(?:is|was|:|=|#|-)?\s*(?:#\s*)?)"
    r"(?P<value>[A-Z0-9](?:[A-Z0-9]|[- ](?=[A-Z0-9])){4,30})(?![\w-])"
)


def _enough_digits(value: str) -> bool:
    return sum(c.isdigit() for c in value) >= 5


ACCOUNT_RULES = [Rule(_ACCOUNT, 0.85, _enough_digits)]

# --- US social security numbers introduced by a cue ----------------------------------------
# Presidio scores a bare 9-digit or dotted SSN at 0.05; with "SSN" right before it, it is one.

_SSN_CUE = re.compile(
    r"(?i:\b(?:ssn|social\s+security(?:\s+(?:number|no\.?|#))?|social)\s*(?:is|was|:|#|=)?\s*)"
    r"(?P<value>\d{3}([- .]?)\d{2}\2\d{4})(?!\d)"
)


def _valid_ssn(value: str) -> bool:
    digits = "".join(c for c in value if c.isdigit())
    area, group, serial = digits[:3], digits[3:5], digits[5:]
    return area not in {"000", "666"} and area[0] != "9" and group != "00" and serial != "0000"


SSN_RULES = [Rule(_SSN_CUE, 0.9, _valid_ssn)]

# --- dates of birth --------------------------------------------------------------------------

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DAY = r"(?:[0-3]?\d)(?:st|nd|rd|th)?"
_DATE = (
    rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|[0-3]?\d[/.-][0-3]?\d[/.-](?:\d{{4}}|\d{{2}})"
    rf"|{_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?|{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?"
    rf"|{_MONTH},?\s+\d{{4}}|(?:19|20)\d{{2}})"
)
_DOB = re.compile(
    r"(?i:\b(?:born|birthday|birth\s?date|date\s+of\s+birth|d\.?o\.?b\.?)"
    r"(?:\s+(?:is|was|falls|on|in|:|=)){0,3}[\s:=,-]*(?:[A-Za-z ,]{0,24}?\s(?:on|in)\s+)?)"
    rf"(?P<value>(?i:{_DATE}))(?!\d)"
)

DOB_RULES = [Rule(_DOB, 0.85)]

# --- names introduced by a cue -------------------------------------------------------------

# Latin-1 letters too, so "José Müller" is one name, not "Jos".
_UP, _LOW = "A-ZÀ-ÖØ-Þ", "a-zß-öø-ÿ"
_WORD = rf"[{_UP}][{_LOW}]+"
_NAME = rf"{_WORD}(?:[-'][{_UP}]?[{_LOW}]+)?(?:\s+(?:van |de |von |da |O')?{_WORD}(?:-{_WORD})?)?"
_RELATION = (
    r"wife|husband|partner|spouse|son|daughter|mom|mum|mother|dad|father|brother|sister"
    r"|friend|best friend|boss|manager|colleague|coworker|co-worker|neighbou?r|doctor|dentist"
    r"|therapist|girlfriend|boyfriend|fianc[ée]e?|cousin|aunt|uncle|niece|nephew|grandma"
    r"|grandmother|grandpa|grandfather|kid|child|baby|teacher|landlord|landlady|lawyer"
    r"|accountant|mentor|roommate|flatmate|nanny|tutor|coach|assistant|client|team lead"
)
_PERSON_CUES = re.compile(
    rf"(?:(?i:\bmy\s+(?:name\s+is|full\s+name\s+is)|\bcall\s+me|\bi\s+am\s+called"
    rf"|\bmy\s+(?:(?:older|younger|little|big|new|old|ex-?)\s+)?(?:{_RELATION})(?:'s\s+name\s+is|,|\s+is)?"
    rf"|\b(?:named|called))\s+|\b(?:Mr|Mrs|Ms|Miss|Mx|Dr|Prof)\.?\s+)(?P<value>{_NAME})"
)


def _not_a_common_word(value: str) -> bool:
    first = value.split()[0].casefold()
    return (
        first not in STOP_WORDS and value.casefold() not in NOT_A_NAME and (first not in NOT_A_NAME)
    )


PERSON_RULES = [Rule(_PERSON_CUES, 0.8, _not_a_common_word)]


class OfflineEmailRecognizer(EmailRecognizer):
    """Presidio's email recognizer, validating domains with tldextract's bundled suffix list.

    Presidio calls the module-level ``tldextract.extract``, whose first use downloads the public
    suffix list; this instance never touches the network and writes no cache.
    """

    _extract = TLDExtract(suffix_list_urls=(), cache_dir=None, fallback_to_snapshot=True)

    def __init__(self) -> None:
        super().__init__(supported_entity=Entity.EMAIL.value)

    def validate_result(self, pattern_text: str) -> bool:
        """True when the address ends in a known public suffix."""
        return bool(self._extract(pattern_text).fqdn)


class DigitGatedPhoneRecognizer(PhoneRecognizer):
    """Presidio's phone recognizer (the phonenumbers library), run only when it can match.

    The library scans the text once per region and was a fifth of the time per memory; a phone
    number has at least 7 digits, and most memories have none. Regions: Presidio's defaults
    with its invalid "UK"/"FE" codes replaced by GB and FR, and CA dropped (same plan as US).
    """

    MIN_DIGITS = 7

    def __init__(self) -> None:
        super().__init__(
            supported_entity=Entity.PHONE.value,
            supported_regions=("US", "GB", "DE", "FR", "IL", "IN", "BR"),
        )

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        """Phone numbers, or nothing at once when the text has too few digits."""
        if sum(c.isdigit() for c in text) < self.MIN_DIGITS:
            return []
        # Presidio annotates the parameter as non-optional but never reads it here.
        results: list[RecognizerResult] = super().analyze(
            text,
            entities,
            nlp_artifacts,  # type: ignore[arg-type]
        )
        return results


def custom_recognizers() -> list[LocalRecognizer]:
    """The recognizers this package adds, one per rule family."""
    return [
        RegexRecognizer(Entity.SECRET, SECRET_RULES),
        RegexRecognizer(Entity.STREET_ADDRESS, ADDRESS_RULES),
        RegexRecognizer(Entity.ACCOUNT_NUMBER, ACCOUNT_RULES),
        RegexRecognizer(Entity.DATE_OF_BIRTH, DOB_RULES),
        RegexRecognizer(Entity.US_SSN, SSN_RULES, name="ssn_cues"),
        RegexRecognizer(Entity.PERSON, PERSON_RULES, name="person_cues"),
        NerPeoplePlacesRecognizer(),
        OfflineEmailRecognizer(),
    ]
