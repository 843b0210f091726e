"""Content Planner settings: retrieval depth, prompt budget, and how coverage and gaps are judged."""

PROFILE = "planner"
TOP_K = 18  # a broad view of the material; the planner profile allows up to 20

DEFAULT_SECTIONS = 5
MAX_SECTIONS = 8
MAX_CHUNKS_PER_SECTION = 6

# The 1.5B local model reads ~100 prompt tokens/s: the chunks are shown as topics, one line each
# (a section's header, its chunk count and a short excerpt), never their full text.
GROUP_CHUNKS = 4  # a long section is shown as several topics of at most this many chunks
EXCERPT_CHARS = 110
TITLE_CHARS = 80
GOAL_CHARS = 200

# coverage = min(1, supporting chunks / FULL_SUPPORT) x mean relevance of those chunks (0..1).
FULL_SUPPORT = 3
GAP_BELOW = 0.3  # a section whose coverage is below this is listed as a gap

# A whole-project plan queries with the project's document titles and headings, up to this length.
BROAD_QUERY_CHARS = 500
