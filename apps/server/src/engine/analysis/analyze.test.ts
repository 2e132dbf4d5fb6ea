import { type AssistantConfig, assistantConfig, type CallTurn, type EndReason } from '@callpilot/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from '../../../test/openai-compatible-server';
import { findTemplate } from '../../modules/assistants/assistants.templates';
import { analyzeCall } from './analyze';

const config = (conversation: Record<string, unknown> = {}): AssistantConfig => {
  const base = findTemplate('customer-follow-up')!.config;
  return assistantConfig.parse({ ...base, conversation: { ...base.conversation, ...conversation } });
};

/** A conversation from alternating lines: the assistant first. */
function dialogue(...lines: (string | { dtmf: string })[]): CallTurn[] {
  return lines.map((line, index) => ({
    index,
    speaker: index % 2 === 0 ? 'assistant' : 'callee',
    text: typeof line === 'string' ? line : '',
    dtmf: typeof line === 'string' ? null : line.dtmf,
    startMs: index * 5000,
    endMs: index * 5000 + 3000,
    interrupted: false,
    latency: null,
    segments: [],
  }));
}

const OPENING = '您好，请问是王先生吗？我是星河宽带的客服小安，请问现在方便吗？';
const analyze = (
  turns: CallTurn[],
  endReason: EndReason = 'completed',
  extra: Partial<Parameters<typeof analyzeCall>[0]> = {},
) => analyzeCall({ config: config(), turns, endReason, liveGrade: null, ...extra });

describe('analysis by rules', () => {
  it.each([
    ['busy', '客户忙线，未接通。'],
    ['no_answer', '无人接听，未接通。'],
    ['powered_off', '客户手机关机，未接通。'],
    ['vacant', '号码为空号，未接通。'],
    ['rejected', '客户拒接，未接通。'],
    ['voicemail', '电话转入语音信箱，未与客户通话。'],
    ['failed', '呼叫失败，未与客户通话。'],
  ] as const)('unanswered %s: no grade, a one-line summary', async (endReason, summary) => {
    expect(await analyze([], endReason)).toEqual({
      grade: null,
      reason: '未接通',
      summary,
      fields: {},
      by: 'rules',
    });
  });

  it('a voicemail that got a message says so', async () => {
    expect((await analyze(dialogue('您好，请回电。'), 'voicemail')).summary).toBe(
      '电话转入语音信箱，已留言。',
    );
  });

  it('A: the assistant’s own A keywords in the callee’s words', async () => {
    const result = await analyze(
      dialogue(OPENING, '方便。', '您对宽带满意吗？', '挺满意的，我想续费，怎么办理？'),
    );
    expect(result).toMatchObject({ grade: 'A', by: 'rules' });
    expect(result.reason).toContain('续费');
    expect(result.summary).toContain('有明确意向');
    expect(result.summary).toContain('续费');
    expect(result.summary).toContain('通话正常结束');
    expect(result.fields).toEqual({ 客户问题: '挺满意的，我想续费，怎么办理？' });
  });

  it('B: interest without commitment', async () => {
    const result = await analyze(
      dialogue(OPENING, '方便，你说。', '我们有新套餐。', '可以了解一下，发我看看。'),
    );
    expect(result.grade).toBe('B');
  });

  it('C: a short call with nothing positive in it', async () => {
    const result = await analyze(dialogue(OPENING, '嗯。'), 'callee_hangup');
    expect(result).toMatchObject({ grade: 'C', reason: '通话较短，客户未表达意向' });
    expect(result.summary).toContain('客户中途挂断');
  });

  it('C: the assistant’s C keywords', async () => {
    expect((await analyze(dialogue(OPENING, '还行吧，一般般。'))).grade).toBe('C');
  });

  it('D: an opt-out, whatever else was said', async () => {
    const result = await analyze(
      dialogue(OPENING, '好的好的。', '我们有优惠。', '不需要，别再打了。'),
      'opt_out',
    );
    expect(result).toMatchObject({ grade: 'D', reason: '客户明确拒绝并要求不再来电' });
    expect(result.summary).toContain('别再打了');
    expect(result.summary).toContain('免打扰');
  });

  it('D: the assistant’s D keywords without an opt-out', async () => {
    expect((await analyze(dialogue(OPENING, '我对你们的服务很不满意。'))).grade).toBe('D');
  });

  it('the brain’s live grade counts when it is stronger than the words', async () => {
    const result = await analyze(dialogue(OPENING, '嗯。'), 'completed', {
      liveGrade: { grade: 'A', reason: '客户同意预约上门' },
    });
    expect(result).toMatchObject({ grade: 'A', reason: '通话中判断：客户同意预约上门' });
  });

  it('asking for a human is at least B, and a transfer records the number', async () => {
    const turns = dialogue(OPENING, '我要找人工客服。', '好的，正在为您转接人工客服，请稍候。');
    const result = await analyzeCall({
      config: config({ transferNumber: '400-800-8000' }),
      turns,
      endReason: 'transferred',
      liveGrade: null,
    });
    expect(result.grade).toBe('B');
    expect(result.fields.转人工号码).toBe('400-800-8000');
    expect(result.summary).toContain('转接人工');
  });

  it('records the keys the callee pressed', async () => {
    const result = await analyze(dialogue('办理请按1。', { dtmf: '1' }, '好的，已为您登记。'));
    expect(result.fields.客户按键).toBe('1');
  });
});

describe('analysis by the model', () => {
  const API_KEY = 'sk-analysis-test';
  let server: OpenAICompatibleServer;
  beforeAll(async () => {
    server = await startOpenAICompatibleServer({ apiKey: API_KEY });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.requests.length = 0;
  });
  const provider = () => ({ baseUrl: server.baseUrl, model: 'qwen-plus', apiKey: API_KEY });
  const turns = dialogue(OPENING, '方便。', '您对宽带满意吗？', '还可以吧，下个月到期，到时候再说。');

  it('asks the model for JSON and uses its grade, summary and fields', async () => {
    server.replyWith({
      content:
        '```json\n{"grade":"B","reason":"客户表示到期再考虑","summary":"客户对宽带基本满意，下月到期后再考虑续费。","fields":{"到期时间":"下个月"}}\n```',
    });
    const result = await analyze(turns, 'completed', { provider: provider() });
    expect(result).toEqual({
      grade: 'B',
      reason: '客户表示到期再考虑',
      summary: '客户对宽带基本满意，下月到期后再考虑续费。',
      fields: { 到期时间: '下个月' },
      by: 'llm',
    });
    const [request] = server.chatRequests();
    expect(request?.body.model).toBe('qwen-plus');
    const prompt = JSON.stringify(request?.body.messages);
    expect(prompt).toContain('客户：还可以吧，下个月到期，到时候再说。');
    expect(prompt).toContain('A（有明确意向）');
  });

  it('an opt-out stays D whatever the model says', async () => {
    server.replyWith({ content: '{"grade":"C","reason":"无","summary":"客户拒绝。","fields":{}}' });
    const result = await analyze(dialogue(OPENING, '别再打了。'), 'opt_out', { provider: provider() });
    expect(result).toMatchObject({ grade: 'D', by: 'llm' });
  });

  it.each([
    ['the server fails', { status: 500 }],
    ['the reply is not JSON', { content: '这位客户意向一般。' }],
    ['the JSON has the wrong shape', { content: '{"grade":"E","summary":""}' }],
  ])('falls back to the rules when %s', async (_case, reply) => {
    server.replyWith(reply);
    const result = await analyze(turns, 'completed', { provider: provider() });
    expect(server.chatRequests().length).toBeGreaterThan(0);
    expect(result).toEqual(await analyze(turns, 'completed'));
    expect(result).toMatchObject({ by: 'rules', grade: expect.stringMatching(/^[ABC]$/) });
  });

  it('does not ask the model about unanswered calls', async () => {
    const result = await analyze([], 'busy', { provider: provider() });
    expect(result.grade).toBeNull();
    expect(server.chatRequests()).toEqual([]);
  });
});
