import { and, eq, type SQL, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callStatsHistogram } from '../../db/schema';

/** The drizzle transaction the rollup worker recomputes a project-hour in (or the database itself). */
export type RollupExecutor = Database | Parameters<Parameters<Database['transaction']>[0]>[0];

/** Hang-ups after this many turns or more share the last bucket, so a long call cannot widen the funnel. */
export const HANGUP_TURN_CAP = 30;

export const LATENCY_COMPONENTS = ['recognition', 'retrieval', 'brain', 'synthesis'] as const;
export type LatencyComponentName = (typeof LATENCY_COMPONENTS)[number];

/**
 * Latencies are kept as a log-scale histogram: bucket = floor(log2(ms + 1) × 4), a quarter of an
 * octave per bucket. A bucket spans a factor of 2^(1/4) ≈ 1.19, so a percentile read back as the
 * bucket's geometric middle is within ~9% of the true value (19% across the whole bucket; read
 * back in whole milliseconds, so below ~30 ms the rounding dominates, faster than any speech
 * component that matters). 0 ms to an hour fits in about 90 buckets, so a month of hours sums to
 * a small histogram where averaging hourly percentiles would be wrong. The epsilon keeps exact
 * powers of two in the same bucket in JavaScript and in SQL, whose logarithms may round either
 * side of the integer.
 */
const BUCKETS_PER_OCTAVE = 4;
const EPSILON = 1e-9;

export function latencyBucket(ms: number): number {
  const value = Math.max(0, ms);
  return Math.floor((Math.log(value + 1) / Math.LN2) * BUCKETS_PER_OCTAVE + EPSILON);
}

/** The bucket's representative latency: its geometric middle, in whole milliseconds. */
export function latencyBucketMs(bucket: number): number {
  return Math.max(0, Math.round(2 ** ((bucket + 0.5) / BUCKETS_PER_OCTAVE) - 1));
}

/**
 * The q-quantile (0-1) of a histogram as the representative value of the bucket holding the
 * ceil(q × n)-th sample (nearest rank); null when there are no samples.
 */
export function percentileFromBuckets(
  buckets: readonly { bucket: number; count: number }[],
  q: number,
  readBucket: (bucket: number) => number = latencyBucketMs,
): number | null {
  const sorted = [...buckets].filter((b) => b.count > 0).sort((x, y) => x.bucket - y.bucket);
  const total = sorted.reduce((sum, b) => sum + b.count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const b of sorted) {
    seen += b.count;
    if (seen >= rank) return readBucket(b.bucket);
  }
  return readBucket(sorted[sorted.length - 1]!.bucket);
}

/**
 * The histograms of the calls `where` selects (a condition on `calls`), per assistant and
 * version: the one definition both the rollup (one project-hour) and the assistant report's
 * narrowed reads (a number or a task, dimensions the histogram rollup does not keep) aggregate.
 * Columns: assistant_id, assistant_version, kind, bucket, count.
 */
export function histogramSelect(where: SQL): SQL {
  return sql`
    select coalesce(calls.assistant_id, '') as assistant_id, coalesce(calls.assistant_version, 0) as assistant_version,
           'hangup_turn' as kind, least(calls.turn_count, ${HANGUP_TURN_CAP}) as bucket, count(*)::int as count
    from calls
    where ${where} and calls.status = 'ended' and calls.answered_at is not null and calls.hangup_by = 'callee'
    group by 1, 2, 4
    union all
    select coalesce(calls.assistant_id, ''), coalesce(calls.assistant_version, 0),
           'latency_' || v.component,
           floor(ln(greatest(v.ms, 0) + 1) / ln(2) * ${BUCKETS_PER_OCTAVE} + ${EPSILON})::int,
           count(*)::int
    from calls
    join call_turns t on t.call_id = calls.id
    cross join lateral (values
      ('recognition', (t.latency->>'recognitionMs')::double precision),
      ('retrieval', (t.latency->>'retrievalMs')::double precision),
      ('brain', (t.latency->>'brainMs')::double precision),
      ('synthesis', (t.latency->>'synthesisMs')::double precision)
    ) as v(component, ms)
    where ${where} and calls.status = 'ended' and t.speaker = 'assistant' and jsonb_typeof(t.latency) = 'object' and v.ms is not null
    group by 1, 2, 3, 4`;
}

/**
 * Rewrites call_stats_histogram for one project-hour from calls and call_turns (never increments:
 * the rollup worker calls this inside its recompute of a dirty hour, so a rebuild equals the live
 * rows). A call belongs to the hour it started; '' and 0 stand for "no assistant / no version".
 * Hang-ups count on answered calls the callee ended, by the turns they had got to; latencies per
 * measured component of each assistant turn. Ended calls only, like every
 * rollup: a live call is in no report until it ends.
 */
export async function recomputeHistograms(tx: RollupExecutor, projectId: string, hour: Date) {
  await tx
    .delete(callStatsHistogram)
    .where(and(eq(callStatsHistogram.projectId, projectId), eq(callStatsHistogram.hour, hour)));
  const start = hour.toISOString();
  const end = new Date(hour.getTime() + 3_600_000).toISOString();
  await tx.execute(sql`
    insert into call_stats_histogram (project_id, hour, assistant_id, assistant_version, kind, bucket, count)
    select ${projectId}, ${start}::timestamptz, h.assistant_id, h.assistant_version, h.kind, h.bucket, h.count
    from (${histogramSelect(
      sql`calls.project_id = ${projectId} and calls.started_at >= ${start}::timestamptz and calls.started_at < ${end}::timestamptz`,
    )}) h`);
}
