import { APIUserAbortError } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, seedTwoProjects, testEnv } from '../../../test/helpers';
import {
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from '../../../test/openai-compatible-server';
import { loadAppSecret } from '../../lib/secret-box';
import {
  createLlmAssist,
  llmAssistFor,
  RERANK_CANDIDATE_CHARS,
  RERANK_PROMPT,
  REWRITE_PROMPT,
} from './llm-assist';

const API_KEY = 'sk-assist-0123456789abcdef';
const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';
const MODEL = 'qwen-turbo';

let upstream: OpenAICompatibleServer;

beforeAll(async () => {
  upstream = await startOpenAICompatibleServer({ apiKey: API_KEY });
});
afterAll(() => upstream.close());
afterEach(() => {
  upstream.requests.length = 0;
  upstream.replyWith({ content: '' });
});

const assist = () => createLlmAssist({ baseUrl: upstream.baseUrl, apiKey: API_KEY, model: MODEL });
const live = () => new AbortController().signal;

const candidates = [
  { id: 'seg-repair', text: '报修后工程师 24 小时内上门维修。' },
  { id: 'seg-hours', text: '营业厅营业时间为每天 9:00 至 18:00，节假日照常营业。' },
  { id: 'seg-modem', text: '光猫属于租用设备，故障可免费上门更换。' },
];

describe('rewrite', () => {
  it('asks the chat model, at temperature 0 and few tokens, for one clean question from the spoken words', async () => {
    upstream.replyWith({ content: '营业厅的营业时间是几点到几点？' });
    const spoken = '喂，你好，那个我想问下就是你们那个营业厅几点开门几点关门啊';

    expect(await assist().rewrite(spoken, live())).toBe('营业厅的营业时间是几点到几点？');

    const [request] = upstream.chatRequests();
    expect(request?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(request?.body).toMatchObject({ model: MODEL, temperature: 0 });
    expect(request?.body.max_tokens).toBeLessThanOrEqual(200);
    expect(request?.body.stream ?? false).toBe(false);
    expect(request?.body.messages).toEqual([
      { role: 'system', content: REWRITE_PROMPT },
      { role: 'user', content: spoken },
    ]);
    // What the prompt must tell any model, whatever its wording.
    expect(REWRITE_PROMPT).toMatch(/语气词/);
    expect(REWRITE_PROMPT).toMatch(/阿拉伯数字/);
    expect(REWRITE_PROMPT).toMatch(/不要回答/);
    expect(REWRITE_PROMPT).toMatch(/一个问题/);
  });

  it('keeps only the question when the model adds a label, quotes, reasoning or a second line', async () => {
    upstream.replyWith({
      content: '<think>来电者问营业时间</think>\n改写后的问题：“营业厅几点开门？”\n（已去掉语气词）',
    });
    expect(await assist().rewrite('喂营业厅几点开门啊', live())).toBe('营业厅几点开门？');
  });

  it('returns the caller’s words when the model answers nothing', async () => {
    upstream.replyWith({ content: '  \n ' });
    expect(await assist().rewrite('光猫红灯一直闪', live())).toBe('光猫红灯一直闪');
  });

  it('returns the caller’s words when the model answers the question instead of restating it', async () => {
    upstream.replyWith({
      content:
        '营业厅的营业时间为每天上午 9 点到下午 6 点，节假日照常营业。如需办理业务，请携带本人身份证件前往就近营业厅，也可以拨打客服热线咨询。',
    });
    expect(await assist().rewrite('营业厅几点开门', live())).toBe('营业厅几点开门');
  });

  it('fails with a Chinese provider error when the model service refuses', async () => {
    upstream.replyWith({ status: 503 });
    await expect(assist().rewrite('光猫红灯', live())).rejects.toThrow(/模型服务暂时不可用（HTTP 503）/);
  });
});

describe('rerank', () => {
  it('shows numbered candidates cut to length, asks for JSON, and maps the picks back to ids best first', async () => {
    upstream.replyWith({ content: '{"ids": ["2", 3]}' });
    const long = { id: 'seg-long', text: `长${'文'.repeat(RERANK_CANDIDATE_CHARS + 50)}` };

    const picked = await assist().rerank('营业时间是几点到几点', [...candidates, long], live());
    expect(picked).toEqual(['seg-hours', 'seg-modem']);

    const [request] = upstream.chatRequests();
    expect(request?.body).toMatchObject({
      model: MODEL,
      temperature: 0,
      response_format: { type: 'json_object' },
    });
    const [system, user] = request?.body.messages ?? [];
    expect(system).toEqual({ role: 'system', content: RERANK_PROMPT });
    expect(RERANK_PROMPT).toContain('{"ids"');
    expect(RERANK_PROMPT).toMatch(/JSON/);
    expect(user.content).toContain('问题：营业时间是几点到几点');
    expect(user.content).toContain('[1] 报修后工程师 24 小时内上门维修。');
    expect(user.content).toContain('[2] 营业厅营业时间为每天 9:00 至 18:00');
    const longLine = (user.content as string).split('\n').find((l) => l.startsWith('[4]')) ?? '';
    expect([...longLine].length).toBe('[4] '.length + RERANK_CANDIDATE_CHARS + 1);
    expect(longLine.endsWith('…')).toBe(true);
    // Ids stay on the server: the model only sees numbers.
    expect(user.content).not.toContain('seg-hours');
  });

  it('shows at most 8 candidates', async () => {
    upstream.replyWith({ content: '{"ids":[9, 8]}' });
    const many = Array.from({ length: 12 }, (_, i) => ({ id: `seg-${i + 1}`, text: `第 ${i + 1} 段` }));
    expect(await assist().rerank('问题', many, live())).toEqual(['seg-8']);
    const user = upstream.chatRequests()[0]?.body.messages[1].content as string;
    expect(user).toContain('[8] 第 8 段');
    expect(user).not.toContain('[9]');
  });

  it('drops unknown and repeated ids, accepts fenced JSON, a bare list and echoed real ids', async () => {
    upstream.enqueue(
      { content: '```json\n{"ids": ["3", "7", "abc", "3", 0, "1"]}\n```' },
      { content: '[2]' },
      { content: '{"ids": ["seg-modem", "seg-unknown"]}' },
      { content: '{"ids": []}' },
    );
    const a = assist();
    expect(await a.rerank('光猫坏了', candidates, live())).toEqual(['seg-modem', 'seg-repair']);
    expect(await a.rerank('营业时间', candidates, live())).toEqual(['seg-hours']);
    expect(await a.rerank('光猫坏了', candidates, live())).toEqual(['seg-modem']);
    expect(await a.rerank('积分兑换', candidates, live())).toEqual([]);
  });

  it('throws on an answer that is not the JSON asked for, so the caller keeps its own ranking', async () => {
    upstream.enqueue(
      { content: '第二个候选最合适。' },
      { content: '{"ids": [2' },
      { content: '{"best": 2}' },
    );
    const a = assist();
    await expect(a.rerank('营业时间', candidates, live())).rejects.toThrow();
    await expect(a.rerank('营业时间', candidates, live())).rejects.toThrow(SyntaxError);
    await expect(a.rerank('营业时间', candidates, live())).rejects.toThrow(/ids/);
  });

  it('asks again without response_format when the server refuses it, and not with it from then on', async () => {
    upstream.replyWith((request) =>
      request.body.response_format
        ? { status: 400, errorMessage: 'response_format is not supported' }
        : { content: '{"ids": ["1"]}' },
    );
    const a = assist();
    expect(await a.rerank('报修', candidates, live())).toEqual(['seg-repair']);
    expect(await a.rerank('报修', candidates, live())).toEqual(['seg-repair']);
    expect(upstream.chatRequests().map((r) => r.body.response_format ?? null)).toEqual([
      { type: 'json_object' },
      null,
      null,
    ]);
  });

  it('asks nothing for no candidates', async () => {
    expect(await assist().rerank('报修', [], live())).toEqual([]);
    expect(upstream.chatRequests()).toHaveLength(0);
  });
});

describe('abort', () => {
  it('gives up on the request as soon as the caller’s signal fires', async () => {
    upstream.replyWith({ content: '{"ids": ["1"]}', delayMs: 5_000 });
    const a = assist();
    for (const step of [
      (signal: AbortSignal) => a.rewrite('营业时间', signal),
      (signal: AbortSignal) => a.rerank('营业时间', candidates, signal),
    ]) {
      const started = performance.now();
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      await expect(step(controller.signal)).rejects.toBeInstanceOf(APIUserAbortError);
      expect(performance.now() - started).toBeLessThan(1_000);
    }
    // An abort is not a refusal of response_format: nothing was asked again without it.
    expect(upstream.chatRequests()).toHaveLength(2);
  });
});

describe('profiles and the hit test', () => {
  let t: Awaited<ReturnType<typeof createTestApp>>;
  let seeded: Awaited<ReturnType<typeof seedTwoProjects>>;
  let ownProvider: string;
  let otherProvider: string;
  let baseA: string;
  let baseB: string;
  let keyA: string;

  const createProvider = async (projectId: string, headers: { authorization: string }) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/llm-providers`,
      headers,
      payload: { name: '通义千问', baseUrl: upstream.baseUrl, model: MODEL, apiKey: API_KEY },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.id as string;
  };
  const createBase = async (projectId: string, headers: { authorization: string }) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/knowledge-bases`,
      headers,
      payload: { name: '宽带常见问题' },
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().data.id as string;
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { APP_SECRET } });
    seeded = await seedTwoProjects(t.db, t.app, 'assist-');
    ownProvider = await createProvider(seeded.a.projectId, seeded.owner);
    otherProvider = await createProvider(seeded.b.projectId, seeded.outsider);
    baseA = await createBase(seeded.a.projectId, seeded.owner);
    baseB = await createBase(seeded.b.projectId, seeded.outsider);
    keyA = (await seedApiKey(t.db, { projectId: seeded.a.projectId })).secret;
  });
  afterAll(() => t.app.close());

  it('builds an assist from the project’s own profile, with its key; another project’s profile yields none', async () => {
    const secret = loadAppSecret(testEnv({ APP_SECRET }));
    upstream.replyWith({ content: '营业时间是几点？' });
    const own = await llmAssistFor(t.db, secret, seeded.a.projectId, ownProvider);
    expect(await own?.rewrite('几点开门', live())).toBe('营业时间是几点？');
    expect(upstream.chatRequests()[0]?.body.model).toBe(MODEL);
    // An assistant that names its own chat model asks that one through the same profile.
    const overridden = await llmAssistFor(t.db, secret, seeded.a.projectId, ownProvider, {
      model: 'qwen-max',
    });
    await overridden?.rewrite('几点开门', live());
    expect(upstream.chatRequests()[1]?.body.model).toBe('qwen-max');

    expect(await llmAssistFor(t.db, secret, seeded.a.projectId, otherProvider)).toBeUndefined();
    expect(
      await llmAssistFor(t.db, secret, seeded.a.projectId, '00000000-0000-4000-8000-000000000000'),
    ).toBeUndefined();
  });

  const consoleHitTest = (
    projectId: string,
    baseId: string,
    headers: Record<string, string>,
    payload: Record<string, unknown>,
  ) =>
    t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/knowledge-bases/${baseId}/hit-test`,
      headers,
      payload,
    });
  const openHitTest = (baseId: string, payload: Record<string, unknown>) =>
    t.app.inject({
      method: 'POST',
      url: `/opendock/v1/knowledge-bases/${baseId}/hit-test`,
      headers: bearer(keyA),
      payload,
    });

  it('hit test: a model profile of the project is accepted; another project’s is a 400 naming the field', async () => {
    const { a } = seeded;
    const ok = await consoleHitTest(a.projectId, baseA, seeded.owner, {
      query: '营业时间',
      llmProviderId: ownProvider,
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await openHitTest(baseA, { query: '营业时间', llmProviderId: ownProvider })).statusCode).toBe(
      200,
    );

    for (const res of [
      await consoleHitTest(a.projectId, baseA, seeded.owner, {
        query: '营业时间',
        llmProviderId: otherProvider,
      }),
      await openHitTest(baseA, { query: '营业时间', llmProviderId: otherProvider }),
    ]) {
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toBe('字段 llmProviderId：模型配置不存在');
    }
    const malformed = await consoleHitTest(a.projectId, baseA, seeded.owner, {
      query: '营业时间',
      llmProviderId: 'not-an-id',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().message).toMatch(/llmProviderId/);
  });

  it('hit test with a model: another project’s member is refused, another project’s base is not found', async () => {
    const { a, b } = seeded;
    const payload = { query: '营业时间', llmProviderId: ownProvider };
    expect((await consoleHitTest(a.projectId, baseA, seeded.outsider, payload)).statusCode).toBe(403);
    expect((await consoleHitTest(a.projectId, baseB, seeded.owner, payload)).statusCode).toBe(404);
    expect((await consoleHitTest(b.projectId, baseB, seeded.owner, payload)).statusCode).toBe(403);
    expect((await openHitTest(baseB, payload)).statusCode).toBe(404);
    expect((await consoleHitTest(a.projectId, baseA, seeded.memberHeaders, payload)).statusCode).toBe(200);
  });
});
