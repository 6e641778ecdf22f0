"""Person names from the spaCy doc: the model's PERSON spans, cleaned, plus names it missed.

en_core_web_sm misses or mislabels many names in short sentences ("Sven", "Ines Rodriguez",
"Grace" as ORG, "Maria" as NORP). A capitalised proper-noun run counts as a name when the words
around it are ones people, not things, get: a verb of talking or meeting before it ("call X",
"lunch with X", "send it to X"), or a verb of saying/deciding or "and I" after it ("X said",
"X and I"). Known non-names (languages, tools, brands, months) never count. The model's own
place labels are not trusted here: it tags "Ines Rodriguez" LOC and "Ingrid's" FAC, while the
person cues rarely precede a real place ("lunch with", "I've known", "X said").
"""

from __future__ import annotations

import re

from presidio_analyzer import LocalRecognizer, RecognizerResult
from presidio_analyzer.nlp_engine import NlpArtifacts
from spacy.lang.en.stop_words import STOP_WORDS
from spacy.tokens import Doc, Token

from langmem_vault.privacy._redaction.policy import Entity
from langmem_vault.privacy._redaction.vocabulary import (
    IMPERATIVES,
    NOT_A_NAME,
    RESIDENCE_CUE,
    RESIDENCE_WORD,
)

_BEFORE = re.compile(
    r"(?i)(?:\b(?:with|call|called|calling|ask|asked|tell|told|met|meet|meeting|known|know|"
    r"owe|thank|thanks|invite|invited|email|emailed|text|texted|message|ping|pinged|remind|"
    r"hug|miss|love|married|marry|dating|date|visit(?:ing|ed)? with|hi|hello|hey|dear|"
    r"cc|congratulate|congrats)"
    r"|\b(?:send|sent|give|gave|show|showed|talk|talked|speak|spoke|write|wrote|forward|"
    r"forwarded|introduce|introduced|mention|mentioned|hand|handed|reply|replied|"
    r"explain|explained|report|reported|listen|listened)\b[^.!?\n]{0,30}\bto)\s*,?$"
)
_AFTER = re.compile(
    r"(?i)^\s*(?:'s\b|’s\b|,\s*my\b|and\s+I\b|and\s+me\b|from\s+(?!the\b)\w+|"
    r"(?:said|says|told|asked|wants|wanted|thinks|thought|recommended|suggested|approved|"
    r"agreed|promised|sent|called|texted|emailed|invited|loves|likes|hates|is\s+my|was\s+my|"
    r"prefers|lives|moved|joined|turned)\b)"
)


def _name_word(token: Token) -> bool:
    text = token.text
    return (
        len(text) >= 2
        and text[0].isupper()
        and text[1:].replace("'", "").replace("-", "").isalpha()
        and not text[1:].isupper()
        and text.casefold() not in NOT_A_NAME
        and text.casefold() not in STOP_WORDS
    )


def _runs(doc: Doc) -> list[tuple[int, int]]:
    """Token index ranges [i, j) of 1-3 consecutive name-shaped words."""
    runs, i = [], 0
    while i < len(doc):
        if _name_word(doc[i]) and doc[i].lower_ not in IMPERATIVES:
            j = i + 1
            while j < len(doc) and j - i < 3 and _name_word(doc[j]):
                j += 1
            runs.append((i, j))
            i = j
        else:
            i += 1
    return runs


def name_shaped(word: str) -> bool:
    """A word that can be (part of) a name someone wrote: capitalised, two letters or more,
    neither a stop word nor a known non-name.

    Example:
        >>> [name_shaped(w) for w in ("Zoe", "zoe", "My", "Python", "Leeds,")]
        [True, False, False, False, True]
    """
    word = word.strip(".,'’")
    folded = word.casefold()
    return (
        len(word) >= 2
        and word[0].isupper()
        and folded not in NOT_A_NAME
        and folded not in STOP_WORDS
    )


def person_ok(surface: str) -> bool:
    """Whether a model PERSON span looks like a name someone wrote, not a tool or a month.

    Lowercase "python" or "bob" as a verb is not a name the user wrote, nor is a span whose
    only capitalised words are common ones ("My", "User").
    """
    words = surface.split()
    if any(any(c.isdigit() for c in w) for w in words):
        return False
    return any(name_shaped(w) for w in words)


_LETTER_START = re.compile(r"[^\W\d_]\S*")


def needs_ner(doc: Doc) -> bool:
    """Whether the NER model can change what :class:`NerPeoplePlacesRecognizer` reports.

    A place is reported only after a residence cue, and a person (model span or context name)
    only when it holds a :func:`name_shaped` word: checked on the tokens, on the whitespace
    words and on those words from their first letter on ("(Zoe)"), so a span cut inside a
    word is covered too. Without either, the model's output is never read, and the caller
    skips the model (about three quarters of the time per text).

    Example:
        >>> from spacy.lang.en import English
        >>> nlp = English()
        >>> [needs_ner(nlp(t)) for t in ("i like tea", "I moved to leeds", "ask (Zoe)")]
        [False, True, True]
    """
    text = doc.text
    if RESIDENCE_WORD.search(text):
        return True
    return (
        any(name_shaped(t.text) for t in doc)
        or any(name_shaped(w) for w in text.split())
        or any(name_shaped(m.group()) for m in _LETTER_START.finditer(text))
    )


class NerPeoplePlacesRecognizer(LocalRecognizer):
    """PERSON and LOCATION from the spaCy doc, minus the model's usual false positives.

    - model PERSON spans: leading verbs trimmed ("Use Kotlin"), dropped when made only of
      known non-names;
    - context names: proper-noun runs in a person context (see the module docstring);
    - LOCATION (GPE/LOC) only after a residence cue ("I live in", "moved to", "from"): a city
      in "the conference is in Berlin" identifies nobody, "I live in Berlin" does.

    Example:
        >>> NerPeoplePlacesRecognizer().supported_entities
        ['PERSON', 'LOCATION']
    """

    MODEL_SCORE = 0.85
    CONTEXT_SCORE = 0.7

    def __init__(self) -> None:
        super().__init__(
            supported_entities=[Entity.PERSON.value, Entity.LOCATION.value], name="spacy_ner"
        )

    def load(self) -> None:
        """The spaCy pipeline is run once by the analyzer; nothing to load here."""

    def analyze(
        self, text: str, entities: list[str], nlp_artifacts: NlpArtifacts | None = None
    ) -> list[RecognizerResult]:
        """Filtered model spans plus context names."""
        if nlp_artifacts is None:
            return []
        results = []
        for span in nlp_artifacts.entities:
            label = span.label_
            if label not in entities:
                continue
            tokens = list(span)
            if label == Entity.PERSON.value:
                while tokens and tokens[0].lower_ in IMPERATIVES:
                    tokens = tokens[1:]
                if not tokens:
                    continue
            start, end = tokens[0].idx, span.end_char
            surface = text[start:end]
            if surface.endswith(("'s", "’s")):
                end -= 2
                surface = surface[:-2]
            if label == Entity.PERSON.value and not person_ok(surface):
                continue
            if label == Entity.LOCATION.value and (
                surface.casefold() in NOT_A_NAME
                or not RESIDENCE_CUE.search(text[max(0, start - 60) : start])
            ):
                continue
            results.append(RecognizerResult(label, start, end, self.MODEL_SCORE))
        if Entity.PERSON.value in entities and isinstance(nlp_artifacts.tokens, Doc):
            people = [r for r in results if r.entity_type == Entity.PERSON.value]
            results.extend(self._context_names(text, nlp_artifacts.tokens, people))
        return results

    def _context_names(
        self, text: str, doc: Doc, people: list[RecognizerResult]
    ) -> list[RecognizerResult]:
        found: list[RecognizerResult] = []
        for i, j in _runs(doc):
            start, end = doc[i].idx, doc[j - 1].idx + len(doc[j - 1])
            before, after = text[max(0, start - 50) : start], text[end : end + 30]
            # "X and Y": Y counts when X was already taken for a person.
            after_person = (
                i >= 2
                and doc[i - 1].lower_ == "and"
                and any(p.end == doc[i - 2].idx + len(doc[i - 2]) for p in (*people, *found))
            )
            if _BEFORE.search(before) or _AFTER.search(after) or after_person:
                found.append(RecognizerResult(Entity.PERSON.value, start, end, self.CONTEXT_SCORE))
        return found
