import { randomUUID } from 'node:crypto';
import { assistantConfig } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser, testEnv } from '../../../test/helpers';
import {
  type OpenAICompatibleServer,
  startOpenAICompatibleServer,
} from '../../../test/openai-compatible-server';
import { assistants, assistantVersions, llmProviders, memberships } from '../../db/schema';
import { loadAppSecret } from '../../lib/secret-box';
import { findEmbeddingProvider, resolveProvider } from './llm-providers.service';

const API_KEY = 'sk-live-abcdefghijklmnop1234';
const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
let upstream: OpenAICompatibleServer;
let logs: string[] = [];

beforeAll(async () => {
  upstream = await startOpenAICompatibleServer({ apiKey: API_KEY });
});
afterAll(() => upstream.close());
afterEach(async () => {
  await current?.app.close();
  current = undefined;
  logs = [];
  upstream.requests.length = 0;
  upstream.replyWith({ content: '连接成功' });
});

async function setup() {
  current = await createTestApp({
    env: { APP_SECRET },
    // Everything the server logs, at every level, to prove the key never reaches it.
    logger: { level: 'trace', stream: { write: (line: string) => logs.push(line) } },
  });
  const owner = await seedUser(current.db, { email: 'owner@example.com' });
  const outsider = await seedUser(current.db, { email: 'outsider@example.com' });
  const member = await seedUser(current.db, { email: 'member@example.com', project: null });
  await current.db
    .insert(memberships)
    .values({ projectId: owner.projectId, userId: member.userId, role: 'member' });
  return {
    ...current,
    projectId: owner.projectId,
    owner,
    outsider,
    headers: await loginAs(current.app, 'owner@example.com'),
    outsiderHeaders: await loginAs(current.app, 'outsider@example.com'),
    memberHeaders: await loginAs(current.app, 'member@example.com'),
  };
}

const body = (over: Record<string, unknown> = {}) => ({
  name: '通义千问',
  baseUrl: upstream.baseUrl,
  model: 'qwen-plus',
  apiKey: API_KEY,
  ...over,
});

describe('LLM provider profiles', () => {
  it('creates, lists and reads without ever returning the key; stores it encrypted', async () => {
    const { app, db, projectId, headers } = await setup();
    const created = await app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/llm-providers`,
      headers,
      payload: body({ baseUrl: `${upstream.baseUrl}/`, embeddingModel: 'text-embedding-v3' }),
    });
    expect(created.statusCode).toBe(200);
    expect(created.json().data).toMatchObject({
      name: '通义千问',
      baseUrl: upstream.baseUrl,
      model: 'qwen-plus',
      embeddingModel: 'text-embedding-v3',
      hasApiKey: true,
      apiKeyHint: '1234',
    });
    expect(created.body).not.toContain(API_KEY);
    expect(created.json().data).not.toHaveProperty('apiKey');

    const list = await app.inject({ method: 'GET', url: `/api/project/${projectId}/llm-providers`, headers });
    expect(list.json().data).toMatchObject({ total: 1, page: 1, pageSize: 20 });
    expect(list.json().data.items[0].name).toBe('通义千问');
    expect(list.body).not.toContain(API_KEY);

    const [row] = await db.select().from(llmProviders);
    expect(row?.apiKeyEncrypted).not.toContain(API_KEY);
    expect(row?.apiKeyEncrypted).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    // The capture works (requests were logged), and none of it holds the key.
    expect(logs.length).toBeGreaterThan(3);
    expect(logs.join('\n')).not.toContain(API_KEY);
  });

  it('update keeps the stored key when apiKey is omitted or empty, replaces or clears it on request', async () => {
    const { app, db, projectId, headers } = await setup();
    const id = (
      await app.inject({
        method: 'POST',
        url: `/api/project/${projectId}/llm-providers`,
        headers,
        payload: body(),
      })
    ).json().data.id;
    const url = `/api/project/${projectId}/llm-providers/${id}`;
    const secret = loadAppSecret(testEnv({ APP_SECRET }));

    const { apiKey: _omitted, ...withoutKey } = body();
    const renamed = await app.inject({
      method: 'PUT',
      url,
      headers,
      payload: { ...withoutKey, name: '千问 Plus' },
    });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.json().data).toMatchObject({ name: '千问 Plus', hasApiKey: true, apiKeyHint: '1234' });
    expect((await resolveProvider(db, secret, projectId, id))?.apiKey).toBe(API_KEY);

    await app.inject({ method: 'PUT', url, headers, payload: body({ apiKey: '' }) });
    expect((await resolveProvider(db, secret, projectId, id))?.apiKey).toBe(API_KEY);

    const replaced = await app.inject({
      method: 'PUT',
      url,
      headers,
      payload: body({ apiKey: 'sk-new-key-5678' }),
    });
    expect(replaced.json().data.apiKeyHint).toBe('5678');
    expect((await resolveProvider(db, secret, projectId, id))?.apiKey).toBe('sk-new-key-5678');

    const cleared = await app.inject({
      method: 'PUT',
      url,
      headers,
      payload: body({ apiKey: '', clearApiKey: true }),
    });
    expect(cleared.json().data).toMatchObject({ hasApiKey: false, apiKeyHint: '' });
    expect((await resolveProvider(db, secret, projectId, id))?.apiKey).toBe('');
  });

  it('bad input: 400 with a Chinese message naming the field, and nothing is stored', async () => {
    const { app, db, projectId, headers } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const badUrl = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: body({ baseUrl: 'ftp://example.com' }),
    });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.json().message).toContain('接口地址须为 http(s) 网址');
    const notUrl = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: body({ baseUrl: 'api.deepseek.com' }),
    });
    expect(notUrl.statusCode).toBe(400);
    expect(notUrl.json().message).toContain('接口地址须为 http(s) 网址');
    const noName = await app.inject({ method: 'POST', url, headers, payload: body({ name: '  ' }) });
    expect(noName.statusCode).toBe(400);
    expect(noName.json().message).toContain('请输入配置名称');
    const noModel = await app.inject({ method: 'POST', url, headers, payload: body({ model: undefined }) });
    expect(noModel.json().message).toContain('请输入默认模型');
    expect(await db.select().from(llmProviders)).toHaveLength(0);

    await app.inject({ method: 'POST', url, headers, payload: body() });
    const twin = await app.inject({ method: 'POST', url, headers, payload: body() });
    expect(twin.statusCode).toBe(409);
    expect(twin.json().message).toBe('已存在同名的模型配置「通义千问」');
    expect(await db.select().from(llmProviders)).toHaveLength(1);
  });

  it('refuses to delete a profile an assistant still uses (draft or published version), then deletes it', async () => {
    const { app, db, projectId, headers, owner } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const id = (await app.inject({ method: 'POST', url, headers, payload: body() })).json().data.id;
    const usingConfig = assistantConfig.parse({ brain: { providerId: id } });
    const scriptConfig = assistantConfig.parse({});
    const assistantId = randomUUID();
    await db.insert(assistants).values({
      id: assistantId,
      projectId,
      name: '课程邀约',
      use: 'outbound',
      config: usingConfig,
      createdBy: owner.userId,
    });

    const refused = await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(
      '该模型配置正被小助手「课程邀约」使用，请先在小助手中改用其他模型配置后再删除',
    );

    // The draft moved to the script brain, but calls still run published version 1, which uses it.
    await db.insert(assistantVersions).values({
      assistantId,
      version: 1,
      projectId,
      name: '课程邀约',
      use: 'outbound',
      config: usingConfig,
      draftRevision: 1,
    });
    await db
      .update(assistants)
      .set({ config: scriptConfig, publishedVersion: 1 })
      .where(eq(assistants.id, assistantId));
    expect((await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers })).statusCode).toBe(409);

    await db.update(assistants).set({ deletedAt: new Date() }).where(eq(assistants.id, assistantId));
    const deleted = await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers });
    expect(deleted.statusCode).toBe(200);
    expect(await db.select().from(llmProviders)).toHaveLength(0);
    expect((await app.inject({ method: 'DELETE', url: `${url}/${id}`, headers })).statusCode).toBe(404);
  });

  it('test: one tiny completion through the stored key, with latency and the model’s words', async () => {
    const { app, projectId, headers } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const id = (
      await app.inject({
        method: 'POST',
        url,
        headers,
        payload: body({ embeddingModel: 'text-embedding-v3' }),
      })
    ).json().data.id;
    const res = await app.inject({ method: 'POST', url: `${url}/${id}/test`, headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      ok: true,
      message: '连接成功，模型回复：「连接成功」；向量模型可用（64 维）',
    });
    expect(res.json().data.latencyMs).toBeGreaterThanOrEqual(0);
    const [chat] = upstream.chatRequests();
    expect(chat?.headers.authorization).toBe(`Bearer ${API_KEY}`);
    expect(chat?.body).toMatchObject({ model: 'qwen-plus', max_tokens: 16 });
  });

  it('test failures answer ok:false with a Chinese message and no secret', async () => {
    const { app, projectId, headers } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const wrongKey = 'sk-wrong-0000000000000';
    const id = (
      await app.inject({ method: 'POST', url, headers, payload: body({ apiKey: wrongKey }) })
    ).json().data.id;
    const denied = await app.inject({ method: 'POST', url: `${url}/${id}/test`, headers });
    expect(denied.json().data).toMatchObject({
      ok: false,
      message: '模型服务拒绝了 API Key（HTTP 401），请检查模型配置中的 API Key',
    });
    expect(denied.body).not.toContain(wrongKey);

    await app.inject({ method: 'PUT', url: `${url}/${id}`, headers, payload: body() });
    upstream.replyWith({ status: 503 });
    const down = await app.inject({ method: 'POST', url: `${url}/${id}/test`, headers });
    expect(down.json().data).toMatchObject({
      ok: false,
      message: '模型服务暂时不可用（HTTP 503），请稍后再试',
    });
    expect(logs.join('\n')).not.toContain(API_KEY);
    expect(logs.join('\n')).not.toContain(wrongKey);
  });

  it('a member reads and tests the profiles but cannot create, change or delete them', async () => {
    const { app, db, projectId, headers, memberHeaders } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const id = (await app.inject({ method: 'POST', url, headers, payload: body() })).json().data.id;
    const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, payload?: object) =>
      app.inject({ method, url: path, headers: memberHeaders, ...(payload ? { payload } : {}) });

    expect((await as('GET', url)).json().data.total).toBe(1);
    expect((await as('POST', `${url}/${id}/test`)).json().data.ok).toBe(true);
    for (const res of [
      await as('POST', url, body({ name: '成员新建' })),
      await as('PUT', `${url}/${id}`, body({ name: '成员改名' })),
      await as('DELETE', `${url}/${id}`),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toBe('仅项目所有者或管理员可以管理模型配置');
    }
    const rows = await db.select().from(llmProviders);
    expect(rows.map((row) => row.name)).toEqual(['通义千问']);
  });

  it('another project’s member can neither read, change, test nor delete this project’s profiles', async () => {
    const { app, db, projectId, headers, outsider, outsiderHeaders } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const id = (await app.inject({ method: 'POST', url, headers, payload: body() })).json().data.id;

    for (const [method, path] of [
      ['GET', url],
      ['GET', `${url}/${id}`],
      ['PUT', `${url}/${id}`],
      ['DELETE', `${url}/${id}`],
      ['POST', `${url}/${id}/test`],
      ['POST', url],
    ] as const) {
      const res = await app.inject({
        method,
        url: path,
        headers: outsiderHeaders,
        payload: body({ name: '偷改' }),
      });
      expect(res.statusCode, `${method} ${path}`).toBe(403);
      expect(res.body).not.toContain(API_KEY);
    }
    // Through their own project, the id of ours is simply not there.
    const ownUrl = `/api/project/${outsider.projectId}/llm-providers/${id}`;
    for (const method of ['GET', 'PUT', 'DELETE'] as const) {
      const res = await app.inject({
        method,
        url: ownUrl,
        headers: outsiderHeaders,
        payload: body({ name: '偷改' }),
      });
      expect(res.statusCode, method).toBe(404);
      expect(res.json().message).toBe('模型配置不存在');
    }
    expect(
      (await app.inject({ method: 'POST', url: `${ownUrl}/test`, headers: outsiderHeaders })).statusCode,
    ).toBe(404);
    const [row] = await db.select().from(llmProviders);
    expect(row?.name).toBe('通义千问');
    expect(upstream.chatRequests()).toHaveLength(0);
    const secret = loadAppSecret(testEnv({ APP_SECRET }));
    expect(await resolveProvider(db, secret, outsider.projectId, id)).toBeNull();
  });

  it('resolveProvider and findEmbeddingProvider give other modules the decrypted endpoint', async () => {
    const { app, db, projectId, headers } = await setup();
    const url = `/api/project/${projectId}/llm-providers`;
    const secret = loadAppSecret(testEnv({ APP_SECRET }));
    expect(await findEmbeddingProvider(db, secret, projectId)).toBeNull();
    const chatOnly = (await app.inject({ method: 'POST', url, headers, payload: body() })).json().data.id;
    await app.inject({
      method: 'POST',
      url,
      headers,
      payload: body({ name: '向量', apiKey: 'sk-embed-key-0001', embeddingModel: 'bge-m3' }),
    });
    expect(await resolveProvider(db, secret, projectId, chatOnly)).toEqual({
      baseUrl: upstream.baseUrl,
      model: 'qwen-plus',
      apiKey: API_KEY,
      embeddingModel: '',
    });
    expect(await findEmbeddingProvider(db, secret, projectId)).toMatchObject({
      apiKey: 'sk-embed-key-0001',
      embeddingModel: 'bge-m3',
    });
    expect(await resolveProvider(db, secret, projectId, randomUUID())).toBeNull();
    // Another server secret cannot open the key: a clear, actionable error instead of garbage.
    await expect(
      resolveProvider(db, 'another-secret-0123456789abcdef-xyz', projectId, chatOnly),
    ).rejects.toThrow('模型配置「通义千问」的 API Key 无法解密（服务器密钥已更换），请重新填写 API Key');
  });
});
