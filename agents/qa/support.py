"""Does a drafted answer rest on the excerpts it was given? A lexical check after the answer model.

Asked about something the material does not hold, on passages that merely share its words, the 1.5B
model answers from its own knowledge of the subject and says `has_answer: true`. Such answers use
words the excerpts never contain ("spawn", "closure", "await"); an answer drawn from the excerpts
reuses theirs. But a faithful paraphrase uses its own words too: the measured shares overlap. On the
development absent questions the model answered, 0.10-0.50 of the answer's own words were in its
excerpts (one 0.93); correct answers to the development FaQuAD and quiz questions had >= 0.71, but
correct paraphrases in the security harness (tests/security) 0.29-0.36. So the check only withholds
an answer most of whose words come from elsewhere (QAConfig.support_min 0.25); evals/reports/qa-dev.md
has the figures. Costs no model call.
"""

from core.text.words import content_words, covers, words


def answer_support(answer: str, question: str, excerpts: str, *, min_words: int) -> float | None:
    """Share of the answer's own content words (those not in the question) found in the excerpts;
    None when it has fewer than `min_words` of them, too few to judge."""
    asked = set(content_words(question))
    own = [word for word in content_words(answer) if word not in asked]
    if len(own) < min_words:
        return None
    tokens = set(words(excerpts))
    return sum(covers(word, tokens) for word in own) / len(own)
