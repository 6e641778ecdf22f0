-- Durable background jobs (memory extraction first). Workers claim rows with
-- FOR UPDATE SKIP LOCKED and hold them under a lease; a crashed worker's lease expires and
-- another worker retries the job. dedupe_key makes enqueueing idempotent per
-- (thread, message range).
CREATE TABLE IF NOT EXISTS {schema}.vault_jobs (
    id            bigserial PRIMARY KEY,
    kind          text NOT NULL,
    dedupe_key    text NOT NULL UNIQUE,
    thread_id     text NOT NULL,
    payload       jsonb NOT NULL,
    -- pending -> running -> done | failed (attempts exhausted); running with an expired
    -- lease counts as pending again.
    status        text NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    max_attempts  integer NOT NULL DEFAULT 5,
    last_error    text,
    -- What the expensive step produced, saved before it is applied, so a retry after a crash
    -- in the apply step does not pay for the LLM call again.
    result        jsonb,
    run_after     timestamptz NOT NULL DEFAULT now(),
    lease_token   uuid,
    leased_until  timestamptz,
    worker_id     text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    finished_at   timestamptz
);

-- The claim query scans only live jobs.
CREATE INDEX IF NOT EXISTS vault_jobs_ready_idx
    ON {schema}.vault_jobs (kind, run_after, id) WHERE status IN ('pending', 'running');
CREATE INDEX IF NOT EXISTS vault_jobs_thread_idx
    ON {schema}.vault_jobs (thread_id, id);

-- Per-thread extraction watermark: the ids of the thread's messages already handed to a job.
-- Updated in the same transaction as the enqueue, so a span is never enqueued twice and a
-- message is never skipped, even when compaction removes messages from the thread's state.
CREATE TABLE IF NOT EXISTS {schema}.vault_job_watermarks (
    kind         text NOT NULL,
    thread_id    text NOT NULL,
    message_ids  text[] NOT NULL DEFAULT '{}',
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (kind, thread_id)
);
