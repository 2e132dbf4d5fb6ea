import { type AssistantConfig, assistantConfig, type RetrievedSegment } from '@callpilot/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  fakeEmbedding,
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from '../../../test/openai-compatible-server';
import { createBrain } from './create-brain';
import { createEmbedder } from './embeddings';
import { ProviderError } from './openai-client';
import type { Brain, BrainEvent, BrainTurn } from './types';

const API_KEY = 'sk-test-0123456789abcdef';

let server: OpenAICompatibleServer;
beforeAll(async () => {
  server = await startOpenAICompatibleServer({ apiKey: API_KEY });
});
afterAll(() => server.close());
beforeEach(() => {
  server.requests.length = 0;
  server.replyWith({ content: '您好，我是测试模型。' });
});

const config = (overrides: Record<string, unknown> = {}): AssistantConfig =>
  assistantConfig.parse({
    systemPrompt: '你是某某教育的课程顾问小王，负责邀约家长参加周末试听课。',
    brain: { providerId: 'p1', model: 'qwen-plus', temperature: 0.3, maxTokens: 200 },
    conversation: { transferNumber: '400-123-4567' },
    ...overrides,
  });

const knowledge: RetrievedSegment[] = [
  {
    id: 's1',
    knowledgeBaseId: 'kb',
    documentId: 'd',
    documentName: 'faq.csv',
    content: '问：试听课在哪里上？\n答：朝阳区建国路 88 号三层。',
    question: '试听课在哪里上？',
    answer: '朝阳区建国路 88 号三层。',
    score: 0.9,
  },
];

const brainFor = (apiKey = API_KEY, extra: { timeoutMs?: number } = {}): Brain =>
  createBrain({
    config: config(),
    provider: { baseUrl: server.baseUrl, model: 'default-model', apiKey },
    ...extra,
  });

async function collect(brain: Brain, turn: Partial<BrainTurn> = {}) {
  const events: BrainEvent[] = [];
  for await (const event of brain.turn({
    config: config(),
    history: [
      { role: 'assistant', content: '您好，我是某某教育的小王。' },
      { role: 'user', content: '你好' },
      { role: 'assistant', content: '周六有一节免费试听课，您有兴趣吗？' },
    ],
    utterance: '试听课在哪里上',
    knowledge,
    knowledgeVerdict: null,
    turnIndex: 2,
    ...turn,
  })) {
    events.push(event);
  }
  return {
    events,
    deltas: events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])),
    reply: events.flatMap((e) => (e.type === 'delta' ? [e.text] : [])).join(''),
    actions: events.flatMap((e) => (e.type === 'action' ? [{ action: e.action, detail: e.detail }] : [])),
    intents: events.flatMap((e) => (e.type === 'intent' ? [{ grade: e.grade, reason: e.reason }] : [])),
  };
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(ProviderError);
    return err as ProviderError;
  }
  throw new Error('expected a provider error');
}

describe('OpenAI-compatible brain against a local protocol server', () => {
  it('streams the reply and sends prompt, knowledge, history, model settings and the key', async () => {
    server.replyWith({ content: '试听课在朝阳区建国路 88 号三层，周六上午十点开始。', chunkSize: 5 });
    const brain = brainFor();
    expect(brain.mode).toBe('llm');
    const r = await collect(brain);
    expect(r.reply).toBe('试听课在朝阳区建国路 88 号三层，周六上午十点开始。');
    // It streamed: several deltas, not one block.
    expect(r.deltas.length).toBeGreaterThan(3);
    expect(r.actions).toEqual([]);

    const [request] = server.chatRequests();
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const body = request?.body;
    expect(body).toMatchObject({ model: 'qwen-plus', temperature: 0.3, max_tokens: 200, stream: true });
    const system = body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toContain('你是某某教育的课程顾问小王');
    expect(system.content).toContain('不要使用 Markdown');
    expect(system.content).toContain('问：试听课在哪里上？\n答：朝阳区建国路 88 号三层。');
    expect(body.messages.slice(1).map((m: { role: string; content: string }) => [m.role, m.content])).toEqual(
      [
        ['assistant', '您好，我是某某教育的小王。'],
        ['user', '你好'],
        ['assistant', '周六有一节免费试听课，您有兴趣吗？'],
        ['user', '试听课在哪里上'],
      ],
    );
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual([
      'end_call',
      'transfer_to_human',
      'send_sms',
      'set_intent_grade',
    ]);
  });

  it('the prompt states the confidence and threshold above it, and lists the usable knowledge', async () => {
    const r = await collect(brainFor(), {
      knowledgeVerdict: { verdict: 'answer', confidence: 0.86, threshold: 0.3 },
    });
    expect(r.reply).toBe('您好，我是测试模型。');
    const system: string = server.chatRequests()[0]?.body.messages[0].content;
    expect(system).toContain('置信度 0.86，不低于阈值 0.30');
    expect(system).toContain('答：朝阳区建国路 88 号三层。');
    expect(system).not.toContain('未找到可信的答案');
  });

  it('below the threshold: no trustworthy answer, do not guess, follow up, offer a person', async () => {
    await collect(brainFor(), {
      knowledge: [],
      knowledgeVerdict: { verdict: 'low_confidence', confidence: 0.18, threshold: 0.3 },
    });
    const system: string = server.chatRequests()[0]?.body.messages[0].content;
    expect(system).toContain('未找到可信的答案：置信度 0.18 低于 0.30');
    expect(system).toContain('不要凭猜测或常识回答');
    expect(system).toContain('稍后会有专人跟进联系');
    expect(system).toContain('是否需要转人工服务');
    expect(system).not.toContain('朝阳区建国路');
  });

  it('a refusal offers no transfer when the assistant has no transfer number', async () => {
    const noTransfer = config({ conversation: { transferNumber: '' } });
    const brain = createBrain({
      config: noTransfer,
      provider: { baseUrl: server.baseUrl, model: 'default-model', apiKey: API_KEY },
    });
    await collect(brain, {
      config: noTransfer,
      knowledge: [],
      knowledgeVerdict: { verdict: 'no_match', confidence: 0, threshold: 0.3 },
    });
    const system: string = server.chatRequests()[0]?.body.messages[0].content;
    expect(system).toContain('知识库中没有找到与客户问题相关的内容');
    expect(system).toContain('稍后会有专人跟进联系');
    expect(system).not.toContain('是否需要转人工服务');
    expect(system).not.toContain('transfer_to_human');
  });

  it('uses the profile’s model when the assistant names none, and offers no transfer without a number', async () => {
    const cfg = config({ brain: { providerId: 'p1', model: '' }, conversation: { transferNumber: '' } });
    await collect(brainFor(), { config: cfg });
    const body = server.chatRequests()[0]?.body;
    expect(body.model).toBe('default-model');
    expect(body.tools.map((t: { function: { name: string } }) => t.function.name)).not.toContain(
      'transfer_to_human',
    );
    expect(body.messages[0].content).not.toContain('transfer_to_human');
  });

  it('assembles streamed tool calls: goodbye, end call and intent', async () => {
    server.replyWith({
      content: '好的，不打扰您了，再见。',
      toolCalls: [
        { name: 'set_intent_grade', arguments: JSON.stringify({ grade: 'C', reason: '客户暂时没有时间' }) },
        { name: 'end_call', arguments: JSON.stringify({ reason: '客户在忙' }) },
      ],
    });
    const r = await collect(brainFor(), { utterance: '我在开会，没空' });
    expect(r.reply).toBe('好的，不打扰您了，再见。');
    expect(r.intents).toEqual([{ grade: 'C', reason: '客户暂时没有时间' }]);
    expect(r.actions).toEqual([{ action: 'end_call', detail: '客户在忙' }]);
    expect(r.events.map((e) => e.type).slice(-2)).toEqual(['intent', 'action']);
  });

  it('transfer and SMS tool calls become actions; a bare transfer speaks the transfer line', async () => {
    server.replyWith({
      toolCalls: [
        { name: 'transfer_to_human', arguments: '{"reason":"客户要求人工"}' },
        { name: 'send_sms', arguments: '{"content":"试听地址：朝阳区建国路 88 号三层"}' },
      ],
    });
    const r = await collect(brainFor(), { utterance: '我要找人工' });
    expect(r.reply).toBe('好的，正在为您转接人工客服，请稍候。');
    expect(r.actions).toEqual([
      { action: 'transfer', detail: '客户要求人工' },
      { action: 'send_sms', detail: '试听地址：朝阳区建国路 88 号三层' },
    ]);
  });

  it('when the model only records an intent, asks once more for the words to say', async () => {
    server.enqueue(
      { toolCalls: [{ name: 'set_intent_grade', arguments: '{"grade":"A","reason":"主动询问报名"}' }] },
      { content: '太好了，我帮您登记周六上午的试听。' },
    );
    const r = await collect(brainFor(), { utterance: '那我怎么报名' });
    expect(r.reply).toBe('太好了，我帮您登记周六上午的试听。');
    expect(r.intents).toEqual([{ grade: 'A', reason: '主动询问报名' }]);
    const [first, second] = server.chatRequests();
    expect(second?.body.tool_choice).toBe('none');
    expect(second?.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: expect.any(String) });
    expect(second?.body.messages.at(-2).tool_calls[0].function.name).toBe('set_intent_grade');
    expect(first?.body.tool_choice).toBe('auto');
  });

  it('an opt-out reaches the do-not-call list even when the model forgets to act on it', async () => {
    server.replyWith({ content: '好的，抱歉打扰您了。' });
    const r = await collect(brainFor(), { utterance: '以后别再打了' });
    expect(r.actions.map((a) => a.action)).toEqual(['opt_out', 'end_call']);
    // The rules still grade it when the model does not.
    expect(r.intents).toEqual([{ grade: 'D', reason: '客户明确拒绝：「别再打」' }]);
  });

  it('silence gets the configured re-prompt without calling the model', async () => {
    const r = await collect(brainFor(), { utterance: null });
    expect(r.reply).toBe('您好，请问您还在听吗？');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('a wrong key: a Chinese error that names the key, never contains it', async () => {
    const wrongKey = 'sk-wrong-key-9999999999';
    const err = await failure(collect(brainFor(wrongKey)));
    expect(err.kind).toBe('auth');
    expect(err.statusCode).toBe(502);
    expect(err.message).toBe('模型服务拒绝了 API Key（HTTP 401），请检查模型配置中的 API Key');
    expect(err.message).not.toContain(wrongKey);
  });

  it('rate limits and server errors: Chinese errors; a 5xx is retried once', async () => {
    server.replyWith({ status: 429 });
    expect((await failure(collect(brainFor()))).message).toBe(
      '模型服务请求过于频繁或额度不足（HTTP 429），请稍后再试',
    );
    server.requests.length = 0;
    server.replyWith({ status: 500 });
    expect((await failure(collect(brainFor()))).message).toBe('模型服务暂时不可用（HTTP 500），请稍后再试');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('an upstream message is shown for a bad request, with anything key-like masked', async () => {
    server.replyWith({ status: 400, errorMessage: `model not supported for key ${API_KEY}` });
    const err = await failure(collect(brainFor()));
    expect(err.message).toBe('模型服务拒绝了请求（HTTP 400）：model not supported for key ***');
  });

  it('a provider that does not answer in time: timeout error', async () => {
    server.replyWith({ delayMs: 5_000, content: '太迟了' });
    const started = Date.now();
    const err = await failure(collect(brainFor(API_KEY, { timeoutMs: 300 })));
    expect(err.kind).toBe('timeout');
    expect(err.message).toContain('模型服务响应超时');
    // One retry, so two timeouts at most, far below the scripted delay.
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('an unreachable endpoint: connection error naming the address to check', async () => {
    const brain = createBrain({
      config: config(),
      provider: { baseUrl: 'http://127.0.0.1:9/v1', model: 'm', apiKey: API_KEY },
    });
    const err = await failure(collect(brain));
    expect(err.kind).toBe('network');
    expect(err.message).toBe('无法连接模型服务，请检查接口地址是否正确、服务是否已启动');
  });

  it('an abort ends the turn quietly and promptly', async () => {
    server.replyWith({ delayMs: 5_000, content: '不会听到' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = Date.now();
    const r = await collect(brainFor(), { signal: controller.signal });
    expect(r.events).toEqual([]);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('sends no Authorization header when the profile has no key (Ollama, vLLM)', async () => {
    const open = await startOpenAICompatibleServer();
    try {
      const brain = createBrain({
        config: config(),
        provider: { baseUrl: open.baseUrl, model: 'm', apiKey: '' },
      });
      await collect(brain);
      expect(open.chatRequests()[0]?.headers.authorization).toBeUndefined();
    } finally {
      await open.close();
    }
  });
});

describe('embeddings', () => {
  it('embeds in batches of at most 64, in input order', async () => {
    const embed = createEmbedder({ baseUrl: server.baseUrl, apiKey: API_KEY, model: 'text-embedding-v3' });
    const texts = Array.from({ length: 130 }, (_, i) => `第 ${i} 段：试听课地址与时间`);
    const vectors = await embed(texts);
    expect(vectors).toHaveLength(130);
    expect(vectors[77]).toEqual(fakeEmbedding(texts[77]!));
    const calls = server.requests.filter((r) => r.path === '/v1/embeddings');
    expect(calls.map((c) => c.body.input.length)).toEqual([64, 64, 2]);
    expect(calls[0]?.body.model).toBe('text-embedding-v3');
  });

  it('a failing endpoint: the same Chinese provider errors', async () => {
    server.failEmbeddings(503);
    try {
      const embed = createEmbedder({ baseUrl: server.baseUrl, apiKey: API_KEY, model: 'm' });
      expect((await failure(embed(['你好']))).message).toBe('模型服务暂时不可用（HTTP 503），请稍后再试');
    } finally {
      server.failEmbeddings(null);
    }
  });
});
