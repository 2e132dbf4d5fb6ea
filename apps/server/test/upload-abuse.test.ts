import { randomUUID } from 'node:crypto';
import { assistantConfig, DEFAULT_WINDOWS, taskSettings } from '@callpilot/contracts';
import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTasks, knowledgeDocuments, knowledgeTerms, taskImports } from '../src/db/schema';
import { createAssistant } from '../src/modules/assistants/assistants.service';
import { findTemplate } from '../src/modules/assistants/assistants.templates';
import { makeDocx } from '../src/modules/knowledge/fixtures.test-helper';
import { createTestApp, loginAs, seedUser, tableCounts } from './helpers';
import { officeBomb, PNG_BYTES } from './zip-fixtures';

/**
 * Hostile uploads through the real routes: archive bombs and files whose content is not what
 * their name says are refused with a message naming the field, and nothing of them is stored.
 */
let t: Awaited<ReturnType<typeof createTestApp>>;
let projectId: string;
let taskId: string;
let owner: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp();
  const user = await seedUser(t.db, { email: 'uploads@example.com' });
  projectId = user.projectId;
  owner = await loginAs(t.app, 'uploads@example.com');
  const template = findTemplate('customer-follow-up')!;
  const assistant = await createAssistant(
    t.db,
    projectId,
    user.userId,
    {
      name: '回访助手',
      description: '',
      use: 'outbound',
      status: 'enabled',
      config: assistantConfig.parse(template.config),
    },
    template.key,
  );
  taskId = randomUUID();
  const settings = taskSettings.parse({
    name: '导入测试',
    assistantId: assistant.id,
    startDate: '2025-05-01',
    endDate: '2025-05-31',
    windows: DEFAULT_WINDOWS,
    concurrency: 1,
  });
  await t.db.insert(callTasks).values({
    id: taskId,
    projectId,
    name: settings.name,
    state: 'draft',
    assistantId: assistant.id,
    assistantName: assistant.name,
    settings,
    createdBy: user.userId,
  });
}, 120_000);

afterAll(async () => {
  await t?.app.close();
});

function multipart(field: string, fileName: string, content: Buffer) {
  const boundary = `----abuse${Math.random().toString(16).slice(2)}`;
  return {
    payload: Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${fileName}"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      ),
      content,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

const post = (url: string, body: ReturnType<typeof multipart>) =>
  t.app.inject({ method: 'POST', url, payload: body.payload, headers: { ...owner, ...body.headers } });

/** Rows of the tables an upload could write, and the shared ones tableCounts covers. */
async function stored() {
  const n = async (table: typeof knowledgeDocuments | typeof knowledgeTerms | typeof taskImports) =>
    (await t.db.select({ n: count() }).from(table))[0]!.n;
  return {
    ...(await tableCounts(t.db)),
    documents: await n(knowledgeDocuments),
    terms: await n(knowledgeTerms),
    imports: await n(taskImports),
  };
}

describe('hostile uploads', () => {
  it('refuse an xlsx archive bomb as a task contact list, storing no import', async () => {
    const before = await stored();
    const res = await post(
      `/api/project/${projectId}/tasks/${taskId}/imports`,
      multipart('file', '客户名单.xlsx', officeBomb('xl/workbook.xml')),
    );
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toBe('字段 file：解压后超过 100 MB，疑似压缩炸弹，已拒绝');
    expect(await stored()).toEqual(before);
    expect(await t.db.select().from(taskImports).where(eq(taskImports.taskId, taskId))).toEqual([]);
  });

  it('refuse a PNG named .xlsx as a contact list, saying what it really is', async () => {
    const before = await stored();
    const res = await post(
      `/api/project/${projectId}/tasks/${taskId}/imports`,
      multipart('file', '客户名单.xlsx', PNG_BYTES),
    );
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toBe(
      '字段 file：文件内容与扩展名不符：应为Excel（.xlsx）表格，实际是PNG 图片',
    );
    expect(await stored()).toEqual(before);
  });

  it('refuse an xlsx archive bomb as a 口语词典 import', async () => {
    const before = await stored();
    const res = await post(
      `/api/project/${projectId}/knowledge-terms/import`,
      multipart('file', '词典.xlsx', officeBomb('xl/workbook.xml')),
    );
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toBe('字段 file：解压后超过 100 MB，疑似压缩炸弹，已拒绝');
    expect(await stored()).toEqual(before);
  });

  it('reject a docx archive bomb and a disguised PNG among knowledge documents, storing only the real one', async () => {
    const created = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/knowledge-bases`,
      headers: owner,
      payload: { name: '上传检查' },
    });
    const baseId = created.json().data.id as string;
    const boundary = '----kbabuse';
    const part = (name: string, content: Buffer) =>
      Buffer.concat([
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="${name}"\r\n` +
            'Content-Type: application/octet-stream\r\n\r\n',
        ),
        content,
        Buffer.from('\r\n'),
      ]);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/knowledge-bases/${baseId}/documents`,
      headers: { ...owner, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: Buffer.concat([
        part('产品手册.docx', officeBomb('word/document.xml')),
        part('截图.txt', PNG_BYTES),
        part('真的手册.docx', await makeDocx(['宽带安装需要一个工作日。'])),
        Buffer.from(`--${boundary}--\r\n`),
      ]),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.rejected).toEqual([
      { fileName: '产品手册.docx', reason: '解压后超过 100 MB，疑似压缩炸弹，已拒绝' },
      { fileName: '截图.txt', reason: '文件内容与扩展名不符：应为txt 文本，实际是PNG 图片' },
    ]);
    const names = await t.db
      .select({ fileName: knowledgeDocuments.fileName })
      .from(knowledgeDocuments)
      .where(eq(knowledgeDocuments.knowledgeBaseId, baseId));
    expect(names).toEqual([{ fileName: '真的手册.docx' }]);
  });
});
