-- Measured at 1M chunks (benchmarks/retrieval_scale.py): vectors stored out of line (TOAST) cost
-- ~3 buffer reads per exact distance, and an HNSW graph built with ef_construction 64 left whole
-- clusters unreachable under a project filter (Recall@10 0.938 in the 10k-100k bucket; 0.988 with 128).
ALTER TABLE chunks ALTER COLUMN embedding SET STORAGE PLAIN;
DROP INDEX IF EXISTS chunks_embedding_idx;
CREATE INDEX chunks_embedding_idx ON chunks USING hnsw (embedding vector_cosine_ops)
    WITH (m = 16, ef_construction = 128);
