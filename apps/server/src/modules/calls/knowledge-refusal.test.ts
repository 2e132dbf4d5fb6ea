import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assistantConfig, type CallDetail, type CallTurn } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { assistants } from '../../db/schema';
import { TRANSFER_OFFER } from '../../engine/brain/script-brain';
import { VirtualClock } from '../../engine/clock';
import { DEFAULT_QUESTIONS } from '../../engine/telephony/sim/personas';
import { createKnowledgeBase, uploadDocuments } from '../knowledge/knowledge.service';
import { drainKnowledgeQueue } from '../knowledge/worker';
import { processDirty } from '../reports/rollup-worker';

/**
 * A simulated call through the real runtime, knowledge and call store: the caller asks what the
 * assistant's base does not cover, the assistant refuses instead of guessing, offers a person,
 * and the question turns up in the knowledge report's gaps.
 */

let t: Awaited<ReturnType<typeof createTestApp>>;
let stopClock: () => void;
let dataDir: string;
let projectId: string;
let assistantId: string;
let baseId: string;
let headers: Record<string, string>;

/** A base about modem lights only: the simulated caller's everyday questions are not in it. */
const MODEM_GUIDE = [
  '光猫的 PON 灯常亮表示光纤注册成功，闪烁表示正在注册。',
  'LOS 灯红色闪烁表示光信号中断，请检查尾纤是否弯折或松脱。',
  '重启光猫时请先断电十秒再通电，等待三分钟后再测试上网。',
].join('\n\n');

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'knowledge-refusal-'));
  const clock = new VirtualClock({ startAt: Date.now() });
  stopClock = clock.autoAdvance();
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  const user = await seedUser(t.db, { email: 'refusal@example.com' });
  projectId = user.projectId;
  headers = await loginAs(t.app, 'refusal@example.com');
  const base = await createKnowledgeBase(t.db, projectId, {
    name: '光猫指示灯',
    description: '',
    chunkSize: 500,
    chunkOverlap: 50,
  });
  baseId = base.id;
  await uploadDocuments(t.db, projectId, baseId, [
    { fileName: '光猫指示灯.txt', bytes: Buffer.from(MODEM_GUIDE), truncated: false },
  ]);
  await drainKnowledgeQueue(t.db);
  const config = assistantConfig.parse({
    openingLine: '您好，这里是星河宽带客服，请问有什么可以帮您？',
    knowledge: { baseIds: [baseId], topK: 3, scoreThreshold: 0.3 },
    conversation: { transferNumber: '4008008000', transferWhen: 'on_request' },
  });
  assistantId = randomUUID();
  await t.db
    .insert(assistants)
    .values({ id: assistantId, projectId, name: '宽带客服', use: 'inbound', config });
}, 60_000);

afterAll(async () => {
  stopClock?.();
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const get = async (url: string) => {
  const res = await t.app.inject({ method: 'GET', url, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
};

/** The day of a moment in China time, as the report ranges take it. */
const chinaDay = (at: string) => new Date(Date.parse(at) + 8 * 3_600_000).toISOString().slice(0, 10);

describe('a question the knowledge cannot answer, on a call', () => {
  it('is refused with an offer of a person, records no answer, and becomes a knowledge gap', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/calls/test`,
      headers,
      payload: { assistantId, persona: 'asks_question' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const callId = res.json().data.callId as string;
    await t.app.runtime.idle();

    const call = (await get(`/api/project/${projectId}/calls/${callId}`)) as CallDetail;
    expect(call.endReason).toBe('completed');
    const turns: CallTurn[] = call.turns;
    const asked = turns.filter(
      (turn) => turn.speaker === 'callee' && DEFAULT_QUESTIONS.some((q) => turn.text.includes(q)),
    );
    expect(asked.length).toBeGreaterThan(0);
    const replies = asked.map((question) => turns[question.index + 1]!);
    // The first refusal offers a person (the assistant may transfer); none is answered from the base.
    expect(replies[0]?.text).toContain(TRANSFER_OFFER);
    expect(replies[0]?.text).toContain('稍后会有专人联系您');
    for (const reply of replies) {
      expect(reply.speaker).toBe('assistant');
      expect(reply.segments.filter((s) => s.used !== false)).toEqual([]);
    }

    await processDirty(t.db);
    const day = chinaDay(call.startedAt);
    const gaps = await get(`/api/project/${projectId}/reports/knowledge/gaps?from=${day}&to=${day}`);
    const inGaps = (turn: CallTurn) =>
      gaps.topics.some(
        (topic: { knowledgeBaseId: string; examples: { callId: string; turnIndex: number }[] }) =>
          topic.knowledgeBaseId === baseId &&
          topic.examples.some((e) => e.callId === callId && e.turnIndex === turn.index),
      );
    for (const question of asked) expect(inGaps(question), question.text).toBe(true);

    const report = await get(`/api/project/${projectId}/reports/knowledge?from=${day}&to=${day}`);
    expect(report.figures.questions.value).toBeGreaterThanOrEqual(asked.length);
    expect(report.figures.hitRate.value).toBe(0);
  });
});
