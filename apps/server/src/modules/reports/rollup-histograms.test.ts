import { randomUUID } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedUser } from '../../../test/helpers';
import { callStatsHistogram, calls, callTurns } from '../../db/schema';
import {
  latencyBucket,
  latencyBucketMs,
  percentileFromBuckets,
  recomputeHistograms,
} from './rollup-histograms';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let t: TestApp;
let projectId: string;
let otherProjectId: string;
beforeAll(async () => {
  t = await createTestApp();
  projectId = (await seedUser(t.db, { email: 'hist@example.com' })).projectId;
  otherProjectId = (await seedUser(t.db, { email: 'hist-other@example.com' })).projectId;
});
afterAll(() => t?.app.close());

describe('latency buckets', () => {
  it('are a quarter octave wide, so a bucket read back is within 10% of any speech latency in it', () => {
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(1)).toBe(4);
    expect(latencyBucket(3)).toBe(8);
    expect(latencyBucket(-5)).toBe(0);
    for (const ms of [35, 120, 480, 999, 1500, 4200, 60_000]) {
      const back = latencyBucketMs(latencyBucket(ms));
      expect(Math.abs(back - ms) / ms, `${ms} ms → ${back}`).toBeLessThan(0.1);
    }
    // Increasing: a longer latency never lands in an earlier bucket.
    let previous = -1;
    for (let ms = 0; ms < 5000; ms += 7) {
      expect(latencyBucket(ms)).toBeGreaterThanOrEqual(previous);
      previous = latencyBucket(ms);
    }
  });

  it('read percentiles by nearest rank', () => {
    const values = [100, 100, 100, 200, 200, 400, 400, 800, 800, 3000];
    const counts = new Map<number, number>();
    for (const v of values) counts.set(latencyBucket(v), (counts.get(latencyBucket(v)) ?? 0) + 1);
    const buckets = [...counts].map(([bucket, count]) => ({ bucket, count }));
    // 5th of 10 → 200; 10th of 10 → 3000; each within a bucket's error.
    expect(percentileFromBuckets(buckets, 0.5)).toBeCloseTo(200, -1);
    expect(Math.abs(percentileFromBuckets(buckets, 0.95)! - 3000) / 3000).toBeLessThan(0.1);
    expect(percentileFromBuckets([], 0.5)).toBeNull();
    expect(percentileFromBuckets([{ bucket: 3, count: 0 }], 0.5)).toBeNull();
  });
});

const HOUR = new Date('2026-11-20T02:00:00Z');

async function seedCall(
  values: Partial<typeof calls.$inferInsert> & { startedAt: Date },
  latencies: (Record<string, number> | null)[] = [],
) {
  const id = randomUUID();
  await t.db.insert(calls).values({
    id,
    projectId,
    direction: 'outbound',
    callerNumber: '02160880001',
    calleeNumber: '13800138000',
    status: 'ended',
    ...values,
  });
  if (latencies.length)
    await t.db.insert(callTurns).values(
      latencies.map((latency, index) => ({
        callId: id,
        index,
        speaker: latency ? ('assistant' as const) : ('callee' as const),
        text: '您好',
        startMs: index * 1000,
        endMs: index * 1000 + 500,
        latency,
      })),
    );
  return id;
}

const rowsOf = (project: string) =>
  t.db
    .select({
      assistantId: callStatsHistogram.assistantId,
      version: callStatsHistogram.assistantVersion,
      kind: callStatsHistogram.kind,
      bucket: callStatsHistogram.bucket,
      count: callStatsHistogram.count,
    })
    .from(callStatsHistogram)
    .where(and(eq(callStatsHistogram.projectId, project), eq(callStatsHistogram.hour, HOUR)));

describe('recomputeHistograms', () => {
  it("fills the hour's hang-up turns and latency histograms from calls, and recomputing gives the same rows", async () => {
    const answered = { answeredAt: HOUR, hangupBy: 'callee' as const };
    const lat = (ms: number) => ({
      recognitionMs: ms,
      retrievalMs: 0,
      brainMs: ms * 2,
      firstTokenMs: 1,
      synthesisMs: ms,
    });
    const started = new Date(HOUR.getTime() + 10 * 60_000);
    // Version 3: hung up at turn 2 twice, at turn 45 (capped to 30) once.
    await seedCall({ ...answered, startedAt: started, assistantVersion: 3, turnCount: 2 }, [lat(100), null]);
    await seedCall({ ...answered, startedAt: started, assistantVersion: 3, turnCount: 2 }, [lat(100)]);
    await seedCall({ ...answered, startedAt: started, assistantVersion: 3, turnCount: 45 }, [lat(800)]);
    // Not counted as hang-ups: the assistant ended it; never answered; started the hour after.
    await seedCall({
      answeredAt: HOUR,
      hangupBy: 'assistant',
      startedAt: started,
      assistantVersion: 3,
      turnCount: 4,
    });
    await seedCall({ hangupBy: 'callee', startedAt: started, assistantVersion: 3, turnCount: 0 });
    await seedCall(
      { ...answered, startedAt: new Date(HOUR.getTime() + 3_600_000), assistantVersion: 3, turnCount: 1 },
      [lat(5000)],
    );
    // No assistant: '' / 0.
    await seedCall({ ...answered, startedAt: HOUR, turnCount: 1 });
    // Another project's call in the same hour.
    await t.db.insert(calls).values({
      id: randomUUID(),
      projectId: otherProjectId,
      direction: 'outbound',
      callerNumber: '1',
      calleeNumber: '2',
      status: 'ended',
      startedAt: started,
      answeredAt: HOUR,
      hangupBy: 'callee',
      turnCount: 7,
    });

    await recomputeHistograms(t.db, projectId, HOUR);
    const first = await rowsOf(projectId);
    const pick = (kind: string) =>
      first
        .filter((r) => r.kind === kind)
        .map((r) => [r.assistantId, r.version, r.bucket, r.count])
        .sort();
    expect(pick('hangup_turn')).toEqual(
      [
        ['', 0, 1, 1],
        ['', 3, 2, 2],
        ['', 3, 30, 1],
      ].sort(),
    );
    expect(pick('latency_recognition')).toEqual(
      [
        ['', 3, latencyBucket(100), 2],
        ['', 3, latencyBucket(800), 1],
      ].sort(),
    );
    expect(pick('latency_brain')).toEqual(
      [
        ['', 3, latencyBucket(200), 2],
        ['', 3, latencyBucket(1600), 1],
      ].sort(),
    );
    expect(pick('latency_retrieval')).toEqual([['', 3, 0, 3]]);

    await t.db.insert(callStatsHistogram).values({
      projectId,
      hour: HOUR,
      kind: 'hangup_turn',
      bucket: 17,
      count: 99,
    });
    await recomputeHistograms(t.db, projectId, HOUR);
    expect(
      (await rowsOf(projectId)).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
    ).toEqual(first.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))));
    // Inside a transaction, as the rollup worker calls it; the other project is untouched.
    await t.db.transaction((tx) => recomputeHistograms(tx, projectId, HOUR));
    expect(await rowsOf(otherProjectId)).toEqual([]);
  });
});
