"""Content Writer settings: retrieval per section, prompt budget, output size."""

PROFILE = "writer"
TOP_K = 9  # retrieved per section (the writer profile's default), of which SOURCES_PER_SECTION are shown
SOURCES_PER_SECTION = 5

# ~100 prompt tokens/s on the local 1.5B model: five sources of 450 characters are ~600 tokens.
SOURCE_CHARS = 450
# A section is a few key points, each one or two sentences from one source (~40 tokens): the schema
# bounds the reply, since llama.cpp's server ignores the max_completion_tokens ChatOpenAI sends.
MAX_POINTS = 6
POINT_CHARS = 300
# The other kinds (agents/writer/kinds.py): entries per section, each as long as a point or two.
MAX_CONCEPTS = 3  # study guide: a concept is an explanation plus a check question and its answer
MAX_FAQ = 4
MAX_TERMS = 6
