import { randomUUID } from 'node:crypto';
import type { AssistantReport, CallTurn, UsedSegment } from '@callpilot/contracts';
import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import {
  assistants,
  assistantVersions,
  callStatsHistogram,
  callStatsHourly,
  knowledgeGaps,
  knowledgeSegmentHitsHourly,
  knowledgeStatsHourly,
} from '../../db/schema';
import type { NewCallRecord } from '../../engine/call/ports';
import { CallEventHub } from '../calls/call-events';
import { CallRepository } from '../calls/call-repository';
import { markMissingHours, processDirty } from './rollup-worker';

/**
 * The rollups follow every write that changes an ended call's figures, through the one writer of
 * calls (the repository), as they happen live; and rebuilt from nothing after a restart they
 * equal what was built live, row for row, in all four tables.
 */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let t: TestApp;
let projectId: string;
let userId: string;
let owner: Record<string, string>;
let live: CallRepository;
const assistantId = randomUUID();
const baseId = 'kb-rollup-marks';
const THRESHOLD = 0.5;

/** A China-time instant: '2026-11-02 09:00:00' → Date. */
const cn = (text: string) => new Date(`${text.replace(' ', 'T')}+08:00`);
const plus = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000);

beforeAll(async () => {
  t = await createTestApp();
  ({ projectId, userId } = await seedUser(t.db, { email: 'rollup-marks@example.com' }));
  owner = await loginAs(t.app, 'rollup-marks@example.com');
  const config = { knowledge: { baseIds: [baseId], topK: 3, scoreThreshold: THRESHOLD } };
  await t.db
    .insert(assistants)
    .values({ id: assistantId, projectId, name: '销售助手', use: 'outbound', config, publishedVersion: 1 });
  await t.db.insert(assistantVersions).values({
    assistantId,
    version: 1,
    projectId,
    name: '销售助手',
    use: 'outbound',
    config,
    draftRevision: 1,
  });
  // Not the app's repository: its rollup worker is not woken, so only processDirty below settles.
  live = repository('rollup-marks-live');
});
afterAll(() => t?.app.close());

function repository(processOwner: string) {
  return new CallRepository(t.db, new CallEventHub(), { owner: processOwner, singleProcess: true });
}

function newCall(startedAt: Date, extra: Partial<NewCallRecord> = {}): NewCallRecord {
  return {
    id: randomUUID(),
    projectId,
    direction: 'outbound',
    callerNumber: '02160880001',
    calleeNumber: '13800138000',
    assistantId,
    assistantName: '销售助手',
    assistantVersion: 1,
    startedAt,
    ...extra,
  };
}

const callee = (index: number, text: string, startMs = index * 2000): CallTurn => ({
  index,
  speaker: 'callee',
  text,
  dtmf: null,
  startMs,
  endMs: startMs + 1500,
  interrupted: false,
  latency: null,
  segments: [],
});
const reply = (index: number, segments: UsedSegment[] = [], brainMs = 800): CallTurn => ({
  index,
  speaker: 'assistant',
  text: '好的',
  dtmf: null,
  startMs: index * 2000,
  endMs: index * 2000 + 1500,
  interrupted: false,
  latency: { recognitionMs: 200, retrievalMs: 30, brainMs, firstTokenMs: 300, synthesisMs: 120 },
  segments,
});
const segment = (score: number): UsedSegment => ({
  id: 'seg-1',
  knowledgeBaseId: baseId,
  documentName: 'faq.csv',
  content: '套餐资费',
  score,
});

/** An answered call with a question the knowledge base answered and one it could not, ended. */
async function talkedCall(startedAt: Date, end: { endReason: 'completed' | 'opt_out'; seconds: number }) {
  const call = newCall(startedAt);
  await live.create(call);
  await live.answered(projectId, call.id, plus(startedAt, 4));
  await live.turn(projectId, call.id, callee(0, '你们的套餐多少钱'));
  await live.turn(projectId, call.id, reply(1, [segment(0.9)]));
  await live.turn(projectId, call.id, callee(2, '可以送宽带吗'));
  await live.turn(projectId, call.id, reply(3));
  await live.end(projectId, call.id, {
    endReason: end.endReason,
    hangupBy: 'callee',
    endedAt: plus(startedAt, end.seconds),
  });
  return call;
}

/** The hour's call_stats_hourly figures summed over its rows. */
async function hour(at: Date) {
  const h = callStatsHourly;
  const [row] = await t.db
    .select({
      calls: sql<number>`coalesce(sum(${h.calls}), 0)::int`,
      answered: sql<number>`coalesce(sum(${h.answered}), 0)::int`,
      optOut: sql<number>`coalesce(sum(${h.optOut}), 0)::int`,
      overLimit: sql<number>`coalesce(sum(${h.overLimit}), 0)::int`,
      gradeA: sql<number>`coalesce(sum(${h.gradeA}), 0)::int`,
      gradeC: sql<number>`coalesce(sum(${h.gradeC}), 0)::int`,
      talk: sql<number>`coalesce(sum(${h.talkSecondsSum}), 0)::int`,
    })
    .from(h)
    .where(
      and(eq(h.projectId, projectId), eq(h.hour, new Date(Math.floor(at.getTime() / 3_600_000) * 3_600_000))),
    );
  return row!;
}

async function assistantReport(query: string): Promise<AssistantReport> {
  const res = await t.app.inject({
    url: `/api/project/${projectId}/reports/assistant?${query}`,
    headers: owner,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

describe('the rollups follow each change to an ended call', () => {
  it('an opt-out ends the call, counted with its turns, latencies and questions', async () => {
    const startedAt = cn('2026-11-16 09:05:00');
    await talkedCall(startedAt, { endReason: 'opt_out', seconds: 64 });
    await processDirty(t.db);
    expect(await hour(startedAt)).toMatchObject({ calls: 1, answered: 1, optOut: 1, talk: 60 });
    const histogram = await t.db
      .select()
      .from(callStatsHistogram)
      .where(and(eq(callStatsHistogram.projectId, projectId), eq(callStatsHistogram.kind, 'latency_brain')));
    expect(histogram.reduce((n, r) => n + r.count, 0)).toBe(2);
    const knowledge = await t.db
      .select()
      .from(knowledgeStatsHourly)
      .where(
        and(eq(knowledgeStatsHourly.projectId, projectId), eq(knowledgeStatsHourly.knowledgeBaseId, baseId)),
      );
    expect(knowledge).toMatchObject([{ questions: 2, hits: 1, noAnswer: 1 }]);
  });

  it('a refusal at the inbound limit counts at once, though the call never ran', async () => {
    const startedAt = cn('2026-11-16 10:00:00');
    const call = newCall(startedAt, {
      direction: 'inbound',
      callerNumber: '13800138001',
      calleeNumber: '4001',
    });
    expect(await live.createInbound(call, 0)).toBe('over_limit');
    await processDirty(t.db);
    expect(await hour(startedAt)).toMatchObject({ calls: 1, answered: 0, overLimit: 1 });
  });

  it('the analysis grades the call after it ended, and a person re-grades it', async () => {
    const startedAt = cn('2026-11-16 11:00:00');
    const call = await talkedCall(startedAt, { endReason: 'completed', seconds: 34 });
    await processDirty(t.db);
    expect(await hour(startedAt)).toMatchObject({ calls: 1, gradeA: 0 });

    await live.analysis(projectId, call.id, {
      grade: 'A',
      reason: '有意向',
      summary: '',
      fields: {},
      by: 'rules',
    });
    await processDirty(t.db);
    expect(await hour(startedAt)).toMatchObject({ gradeA: 1, gradeC: 0 });

    await live.setHumanGrade(projectId, call.id, 'C', userId);
    await processDirty(t.db);
    expect(await hour(startedAt)).toMatchObject({ gradeA: 0, gradeC: 1 });
    const report = await assistantReport('from=2026-11-16&to=2026-11-16');
    expect(report.grading).toMatchObject([{ version: 1, regraded: 1, agreed: 0 }]);
    expect(report.grading[0]?.matrix.A.C).toBe(1);
  });

  it('the sweep closing a call a dead process left counts it as interrupted', async () => {
    const startedAt = cn('2026-11-16 12:00:00');
    const dead = repository('rollup-marks-dead');
    const call = newCall(startedAt);
    await dead.create(call);
    await dead.answered(projectId, call.id, plus(startedAt, 3));
    await processDirty(t.db);
    // Live: in no report yet.
    expect(await hour(startedAt)).toMatchObject({ calls: 0 });
    expect(await live.closeOrphaned([call.id], plus(startedAt, 43))).toEqual([call.id]);
    await processDirty(t.db);
    expect(await hour(startedAt)).toMatchObject({ calls: 1, answered: 1, talk: 40 });
  });

  it('a stored recording that moves the turns moves the knowledge gap with them', async () => {
    const startedAt = cn('2026-11-16 13:00:00');
    const call = await talkedCall(startedAt, { endReason: 'completed', seconds: 30 });
    await processDirty(t.db);
    const gapAt = async () =>
      (
        await t.db
          .select({ askedAt: knowledgeGaps.askedAt })
          .from(knowledgeGaps)
          .where(eq(knowledgeGaps.callId, call.id))
      ).map((g) => g.askedAt.toISOString());
    expect(await gapAt()).toEqual([plus(startedAt, 4).toISOString()]);

    await live.recordingPending(projectId, call.id, 'mix');
    const claimed = await live.claimRecording('rollup-marks-mixer', 60_000);
    expect(claimed?.id).toBe(call.id);
    await live.recordingReady(projectId, call.id, 'rollup-marks-mixer', {
      key: `${call.id}.wav`,
      durationMs: 20_000,
      turns: [0, 1, 2, 3].map((index) => ({
        index,
        startMs: 1000 + index * 3000,
        endMs: 2500 + index * 3000,
      })),
    });
    await processDirty(t.db);
    expect(await gapAt()).toEqual([plus(startedAt, 7).toISOString()]);
  });

  it('puts calls at 23:59:59 and 00:00:00 China time on their own days, a call spanning midnight on the day it started', async () => {
    // Answered at 23:59:50, ended the next day: a call of the 17th.
    await talkedCall(cn('2026-11-17 23:59:46'), { endReason: 'completed', seconds: 120 });
    await talkedCall(cn('2026-11-17 23:59:59'), { endReason: 'completed', seconds: 10 });
    await talkedCall(cn('2026-11-18 00:00:00'), { endReason: 'completed', seconds: 10 });
    await processDirty(t.db);
    const daily = await assistantReport('from=2026-11-17&to=2026-11-18&granularity=day');
    expect(daily.trend.points.map((p) => [p.at, p.values.calls])).toEqual([
      ['2026-11-16T16:00:00.000Z', 2],
      ['2026-11-17T16:00:00.000Z', 1],
    ]);
    const next = await assistantReport('from=2026-11-18&to=2026-11-18');
    expect(next.rows[0]).toMatchObject({ calls: 1, avgTalkSeconds: 6 });
  });
});

describe('rollups rebuilt after a restart', () => {
  const tables = [
    {
      name: 'call_stats_hourly',
      rows: () =>
        t.db
          .select()
          .from(callStatsHourly)
          .where(eq(callStatsHourly.projectId, projectId))
          .orderBy(
            asc(callStatsHourly.hour),
            asc(callStatsHourly.direction),
            asc(callStatsHourly.assistantId),
            asc(callStatsHourly.assistantVersion),
            asc(callStatsHourly.lineNumber),
            asc(callStatsHourly.flowId),
            asc(callStatsHourly.taskId),
          ),
    },
    {
      name: 'call_stats_histogram',
      rows: () =>
        t.db
          .select()
          .from(callStatsHistogram)
          .where(eq(callStatsHistogram.projectId, projectId))
          .orderBy(
            asc(callStatsHistogram.hour),
            asc(callStatsHistogram.assistantId),
            asc(callStatsHistogram.assistantVersion),
            asc(callStatsHistogram.kind),
            asc(callStatsHistogram.bucket),
          ),
    },
    {
      name: 'knowledge_stats_hourly',
      rows: () =>
        t.db
          .select()
          .from(knowledgeStatsHourly)
          .where(eq(knowledgeStatsHourly.projectId, projectId))
          .orderBy(asc(knowledgeStatsHourly.hour), asc(knowledgeStatsHourly.knowledgeBaseId)),
    },
    {
      name: 'knowledge_segment_hits_hourly',
      rows: () =>
        t.db
          .select()
          .from(knowledgeSegmentHitsHourly)
          .where(eq(knowledgeSegmentHitsHourly.projectId, projectId))
          .orderBy(
            asc(knowledgeSegmentHitsHourly.hour),
            asc(knowledgeSegmentHitsHourly.knowledgeBaseId),
            asc(knowledgeSegmentHitsHourly.segmentId),
          ),
    },
    {
      name: 'knowledge_gaps',
      rows: () =>
        t.db
          .select()
          .from(knowledgeGaps)
          .where(eq(knowledgeGaps.projectId, projectId))
          .orderBy(
            asc(knowledgeGaps.callId),
            asc(knowledgeGaps.turnIndex),
            asc(knowledgeGaps.knowledgeBaseId),
          ),
    },
  ];

  it('equal the ones built live as the calls above ended, row for row', async () => {
    await processDirty(t.db);
    const built = [];
    for (const table of tables) {
      const rows = await table.rows();
      expect(rows.length, table.name).toBeGreaterThan(0);
      built.push(rows);
    }

    // The restart: nothing kept, the start-up backfill (RollupWorker.start) marks every hour.
    for (const table of [
      callStatsHourly,
      callStatsHistogram,
      knowledgeStatsHourly,
      knowledgeSegmentHitsHourly,
      knowledgeGaps,
    ])
      await t.db.delete(table).where(eq(table.projectId, projectId));
    await markMissingHours(t.db, projectId);
    // The seven hours the calls above started in (two just before midnight share one).
    expect(await processDirty(t.db)).toBeGreaterThan(0);

    for (const [i, table] of tables.entries()) expect(await table.rows(), table.name).toEqual(built[i]);
  });

  it("fill in the knowledge rollup's project row where an older version wrote only the bases'", async () => {
    const built = await tables[2]!.rows();
    await t.db
      .delete(knowledgeStatsHourly)
      .where(
        and(eq(knowledgeStatsHourly.projectId, projectId), eq(knowledgeStatsHourly.knowledgeBaseId, '')),
      );
    await markMissingHours(t.db, projectId);
    expect(await processDirty(t.db)).toBeGreaterThan(0);
    expect(await tables[2]!.rows()).toEqual(built);
  });

  it('fill in the segment hits (常用分段) of hours an older version rolled up without them', async () => {
    const built = await tables[3]!.rows();
    await t.db.delete(knowledgeSegmentHitsHourly).where(eq(knowledgeSegmentHitsHourly.projectId, projectId));
    await markMissingHours(t.db, projectId);
    expect(await processDirty(t.db)).toBeGreaterThan(0);
    expect(await tables[3]!.rows()).toEqual(built);
  });
});
