import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../test/helpers';
import { seedDemoContent } from '../modules/demo/demo-content';

/**
 * The five ways hostile input used to reach PostgreSQL and come back as a 500 (found by a fuzz of
 * every operation; test/hostile-input.test.ts now walks them all): each is a 400 naming the field,
 * and nothing is written.
 */
let t: Awaited<ReturnType<typeof createTestApp>>;
let auth: { authorization: string };
let project: string;
let assistantId: string;
let knowledgeBaseId: string;
let taskId: string;

beforeAll(async () => {
  t = await createTestApp();
  const user = await seedUser(t.db, { email: 'guard@example.com' });
  project = `/api/project/${user.projectId}`;
  auth = await loginAs(t.app, 'guard@example.com');
  const demo = await seedDemoContent(t.db, user.projectId, user.userId);
  assistantId = demo.publishedAssistantId;
  knowledgeBaseId = demo.knowledgeBaseId;
  const task = await t.app.inject({
    method: 'POST',
    url: `${project}/tasks`,
    headers: auth,
    payload: {
      name: '回访任务',
      assistantId,
      startDate: '2030-03-01',
      endDate: '2030-03-31',
      windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
      concurrency: 1,
    },
  });
  taskId = task.json().data.id;
}, 60_000);
afterAll(() => t?.app.close());

const send = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown, headers = auth) =>
  t.app.inject({
    method,
    url,
    headers: { ...headers, ...(payload !== undefined ? { 'content-type': 'application/json' } : {}) },
    // JSON.stringify writes a lone surrogate as the escape `\ud800`, as a hostile client would.
    ...(payload !== undefined ? { payload: JSON.stringify(payload) } : {}),
  });

const refused = (res: Awaited<ReturnType<typeof send>>, message: string) => {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ success: false, status: 400, code: 'VALIDATION_FAILED', message });
};

describe('NUL and lone surrogates', () => {
  it('are refused in path segments, before the membership check and on public routes', async () => {
    refused(await send('GET', '/api/project/%00/members'), '字段 projectId：不能包含控制字符 NUL');
    refused(
      await send('GET', '/api/project/%00/members', undefined, {} as never),
      '字段 projectId：不能包含控制字符 NUL',
    );
    refused(await send('GET', '/api/oem/%00', undefined, {} as never), '字段 host：不能包含控制字符 NUL');
    refused(await send('GET', `${project}/assistants/a%00b`), '字段 assistantId：不能包含控制字符 NUL');
  });

  it('are refused in query parameters', async () => {
    refused(await send('GET', `${project}/assistants?keyword=%00`), '字段 keyword：不能包含控制字符 NUL');
    refused(await send('GET', `${project}/calls?tags=a&tags=%00`), '字段 tags.1：不能包含控制字符 NUL');
  });

  it('are refused anywhere in a JSON body, naming the field, and nothing changes', async () => {
    refused(
      await send('PUT', '/api/profile', { displayName: '名字', profile: 'a\u0000b' }),
      '字段 profile：不能包含控制字符 NUL',
    );
    const me = await send('GET', '/api/profile');
    expect(me.json().data).toMatchObject({ displayName: 'guard', profile: '' });

    const before = (await send('GET', `${project}/assistants/${assistantId}`)).json().data;
    const { name, description, use, status, config } = before;
    refused(
      await send('PUT', `${project}/assistants/${assistantId}`, {
        name,
        description,
        use,
        status,
        config: { ...config, openingLine: 'x\ud800y' },
      }),
      '字段 config.openingLine：包含无效的 Unicode 字符',
    );
    expect((await send('GET', `${project}/assistants/${assistantId}`)).json().data).toEqual(before);

    refused(
      await send('POST', `${project}/calls/test`, {
        assistantId,
        persona: 'interested',
        variables: { 'k\u0000': 'v' },
      }),
      '字段 variables：键名不能包含控制字符 NUL',
    );
    refused(
      await send('POST', `${project}/do-not-call`, { phone: '13900000001', reason: '\u0000' }),
      '字段 reason：不能包含控制字符 NUL',
    );
    expect((await send('GET', `${project}/do-not-call`)).json().data.total).toBe(0);
  });

  it('lets paired surrogates (emoji) through', async () => {
    const res = await send('PUT', '/api/profile', { displayName: '名字😀', profile: '你好 👋' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ displayName: '名字😀', profile: '你好 👋' });
  });
});

describe('malformed multipart on both upload routes', () => {
  const boundary = '----guard0123456789';
  const multipart = (body: string | Buffer, type = `multipart/form-data; boundary=${boundary}`) => ({
    headers: { ...auth, 'content-type': type },
    payload: body,
  });
  const part = (field: string, filename: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
    `Content-Type: text/plain\r\n\r\n13800000000\r\n--${boundary}--\r\n`;

  const routes = () => [
    { url: `${project}/knowledge-bases/${knowledgeBaseId}/documents`, field: 'files' },
    { url: `${project}/tasks/${taskId}/imports`, field: 'file' },
  ];

  it('answers no boundary, a cut-off part and a NUL in a file name with 400 naming the field', async () => {
    for (const { url, field } of routes()) {
      const post = (body: ReturnType<typeof multipart>) => t.app.inject({ method: 'POST', url, ...body });
      const malformed = `字段 ${field}：上传内容不完整或格式不正确，请重新选择文件上传`;
      refused(await post(multipart(part('file', 'a.csv'), 'multipart/form-data')), malformed);
      refused(
        await post(
          multipart(
            `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\n\r\n138`,
          ),
        ),
        malformed,
      );
      refused(await post(multipart(`--${boundary}\r\nContent-Dispos`)), malformed);
      refused(
        await post(multipart(part('file', 'a\u0000.csv'))),
        `字段 ${field}：文件名不能包含控制字符 NUL`,
      );
    }
    const documents = await send('GET', `${project}/knowledge-bases/${knowledgeBaseId}/documents`);
    expect(documents.json().data.total).toBe(1);
  });

  it('still takes a well-formed upload', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: `${project}/tasks/${taskId}/imports`,
      ...multipart(part('file', '名单.csv').replace('13800000000', '号码\r\n13800000000')),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ fileName: '名单.csv', rows: 1, valid: 1 });
  });
});
