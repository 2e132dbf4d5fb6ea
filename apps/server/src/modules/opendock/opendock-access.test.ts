import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  type ApiKeyResource,
  type ApiKeyScopes,
  taskSettings as taskSettingsSchema,
} from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES, bearer, seedApiKey } from '../../../test/api-keys';
import { createTestApp, seedUser } from '../../../test/helpers';
import {
  assistants,
  assistantVersions,
  callRequests,
  calls,
  callTasks,
  doNotCall,
  knowledgeBases,
  knowledgeDocuments,
  knowledgeSegments,
  smsMessages,
  smsSignatures,
  smsTemplates,
  taskContacts,
} from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { apiKeyMessages } from '../../plugins/api-key-auth';
import { seedDemoContent } from '../demo/demo-content';
import { multipart } from '../knowledge/fixtures.test-helper';
import { drainKnowledgeQueue } from '../knowledge/worker';

/**
 * Every open-API operation, table-driven: the scope it needs (a key without it is refused and
 * nothing changes; a key with only it gets through), and tenant isolation (a key of project A
 * naming project B's ids reaches nothing of B's). The table must name every /opendock/v1
 * operation of the served OpenAPI document that needs a scope, so a route added later without a
 * row here fails the coverage test.
 */

type Ids = {
  projectId: string;
  assistantId: string;
  taskId: string;
  callId: string;
  knowledgeBaseId: string;
  documentId: string;
  phone: string;
  signatureId: string;
  templateId: string;
  smsId: string;
};
type Request = { url: string; payload?: object | Buffer; headers?: Record<string, string> };
type Operation = {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  scope: [ApiKeyResource, 'read' | 'write'];
  request: (ids: Ids) => Request;
};

const VARIABLES = { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' };
const V1 = '/opendock/v1';
const taskSettings = (assistantId: string) => ({
  name: '接口任务',
  assistantId,
  startDate: '2026-03-01',
  endDate: '2026-03-31',
  windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
  concurrency: 1,
});
const upload = () => {
  const form = multipart([{ name: '说明.txt', content: '营业厅周一至周日 9:00-18:00 营业。' }]);
  return { payload: form.payload, headers: form.headers };
};

const OPERATIONS: Operation[] = [
  {
    method: 'POST',
    path: '/calls',
    scope: ['calls', 'write'],
    request: (ids) => ({
      url: `${V1}/calls`,
      payload: {
        assistantId: ids.assistantId,
        phone: '13800138009',
        variables: VARIABLES,
        simulatedPersona: 'busy',
      },
    }),
  },
  {
    method: 'GET',
    path: '/calls',
    scope: ['records', 'read'],
    request: () => ({ url: `${V1}/calls?limit=100` }),
  },
  {
    method: 'GET',
    path: '/calls/{callId}',
    scope: ['records', 'read'],
    request: (ids) => ({ url: `${V1}/calls/${ids.callId}` }),
  },
  {
    method: 'GET',
    path: '/tasks',
    scope: ['tasks', 'read'],
    request: () => ({ url: `${V1}/tasks?pageSize=100` }),
  },
  {
    method: 'POST',
    path: '/tasks',
    scope: ['tasks', 'write'],
    request: (ids) => ({ url: `${V1}/tasks`, payload: taskSettings(ids.assistantId) }),
  },
  {
    method: 'GET',
    path: '/tasks/{taskId}',
    scope: ['tasks', 'read'],
    request: (ids) => ({ url: `${V1}/tasks/${ids.taskId}` }),
  },
  ...(['start', 'pause', 'resume', 'stop'] as const).map(
    (action): Operation => ({
      method: 'POST',
      path: `/tasks/{taskId}/${action}`,
      scope: ['tasks', 'write'],
      request: (ids) => ({ url: `${V1}/tasks/${ids.taskId}/${action}` }),
    }),
  ),
  {
    method: 'POST',
    path: '/tasks/{taskId}/contacts',
    scope: ['contacts', 'write'],
    request: (ids) => ({
      url: `${V1}/tasks/${ids.taskId}/contacts`,
      payload: { contacts: [{ phone: '13700137009', variables: VARIABLES }] },
    }),
  },
  {
    method: 'GET',
    path: '/tasks/{taskId}/contacts',
    scope: ['contacts', 'read'],
    request: (ids) => ({ url: `${V1}/tasks/${ids.taskId}/contacts` }),
  },
  {
    method: 'GET',
    path: '/assistants',
    scope: ['assistants', 'read'],
    request: () => ({ url: `${V1}/assistants?pageSize=100` }),
  },
  {
    method: 'GET',
    path: '/assistants/{assistantId}',
    scope: ['assistants', 'read'],
    request: (ids) => ({ url: `${V1}/assistants/${ids.assistantId}` }),
  },
  {
    method: 'GET',
    path: '/knowledge-bases',
    scope: ['knowledge', 'read'],
    request: () => ({ url: `${V1}/knowledge-bases?pageSize=100` }),
  },
  {
    method: 'POST',
    path: '/knowledge-bases/{knowledgeBaseId}/documents',
    scope: ['knowledge', 'write'],
    request: (ids) => ({ url: `${V1}/knowledge-bases/${ids.knowledgeBaseId}/documents`, ...upload() }),
  },
  {
    method: 'GET',
    path: '/knowledge-bases/{knowledgeBaseId}/documents/{documentId}',
    scope: ['knowledge', 'read'],
    request: (ids) => ({ url: `${V1}/knowledge-bases/${ids.knowledgeBaseId}/documents/${ids.documentId}` }),
  },
  {
    method: 'POST',
    path: '/knowledge-bases/{knowledgeBaseId}/hit-test',
    scope: ['knowledge', 'read'],
    request: (ids) => ({
      url: `${V1}/knowledge-bases/${ids.knowledgeBaseId}/hit-test`,
      payload: { query: '宽带怎么移机' },
    }),
  },
  {
    method: 'GET',
    path: '/do-not-call',
    scope: ['do_not_call', 'read'],
    request: () => ({ url: `${V1}/do-not-call?pageSize=100` }),
  },
  {
    method: 'POST',
    path: '/do-not-call',
    scope: ['do_not_call', 'write'],
    request: () => ({ url: `${V1}/do-not-call`, payload: { phones: ['13600136009'] } }),
  },
  {
    method: 'DELETE',
    path: '/do-not-call/{phone}',
    scope: ['do_not_call', 'write'],
    request: (ids) => ({ url: `${V1}/do-not-call/${ids.phone}` }),
  },
  {
    method: 'POST',
    path: '/sms',
    scope: ['sms', 'write'],
    request: (ids) => ({
      url: `${V1}/sms`,
      payload: { phone: '13500135009', signatureId: ids.signatureId, templateId: ids.templateId },
    }),
  },
  {
    method: 'GET',
    path: '/sms/{smsId}',
    scope: ['sms', 'read'],
    request: (ids) => ({ url: `${V1}/sms/${ids.smsId}` }),
  },
];

const label = (op: Operation) => `${op.method} ${V1}${op.path}`;

let t: Awaited<ReturnType<typeof createTestApp>>;
let stopClock: () => void;
let dataDir: string;
const a = {} as Ids;
const b = {} as Ids;

/** A project with one of everything an open-API path or body can name. */
async function seedProject(email: string, phone: string): Promise<Ids> {
  const owner = await seedUser(t.db, { email });
  const demo = await seedDemoContent(t.db, owner.projectId, owner.userId);
  const taskId = randomUUID();
  await t.db.insert(callTasks).values({
    id: taskId,
    projectId: owner.projectId,
    name: '回访',
    assistantId: demo.publishedAssistantId,
    assistantName: '宽带客户回访',
    settings: taskSettingsSchema.parse(taskSettings(demo.publishedAssistantId)),
  });
  await t.db.insert(taskContacts).values({
    id: randomUUID(),
    taskId,
    projectId: owner.projectId,
    phone: '13700137000',
    variables: VARIABLES,
  });
  const callId = randomUUID();
  await t.db.insert(calls).values({
    id: callId,
    projectId: owner.projectId,
    direction: 'outbound',
    callerNumber: '02160880000',
    calleeNumber: '13800138000',
    status: 'ended',
    endReason: 'completed',
    startedAt: new Date(Date.parse('2026-03-02T10:00:00+08:00')),
  });
  await t.db.insert(doNotCall).values({ projectId: owner.projectId, phone, source: 'manual' });
  const signatureId = randomUUID();
  const templateId = randomUUID();
  await t.db.insert(smsSignatures).values({
    id: signatureId,
    projectId: owner.projectId,
    name: '接口测试',
    source: 'enterprise',
    status: 'approved',
  });
  await t.db.insert(smsTemplates).values({
    id: templateId,
    projectId: owner.projectId,
    name: '通知',
    type: 'notification',
    content: '您的宽带已开通。',
    status: 'approved',
  });
  const smsId = randomUUID();
  await t.db.insert(smsMessages).values({
    id: smsId,
    projectId: owner.projectId,
    phone: '13500135000',
    signatureName: '接口测试',
    templateName: '通知',
    templateType: 'notification',
    content: '【接口测试】您的宽带已开通。',
    provider: 'outbox',
    status: 'delivered',
    source: 'api',
  });
  const [document] = await t.db
    .select({ id: knowledgeDocuments.id })
    .from(knowledgeDocuments)
    .where(eq(knowledgeDocuments.knowledgeBaseId, demo.knowledgeBaseId));
  return {
    projectId: owner.projectId,
    assistantId: demo.publishedAssistantId,
    taskId,
    callId,
    knowledgeBaseId: demo.knowledgeBaseId,
    documentId: document!.id,
    phone,
    signatureId,
    templateId,
    smsId,
  };
}

/** Everything of a project an open-API request could change, as one comparable value. */
async function snapshot(projectId: string): Promise<string> {
  const tables = [
    calls,
    callRequests,
    callTasks,
    taskContacts,
    doNotCall,
    assistants,
    assistantVersions,
    knowledgeBases,
    knowledgeDocuments,
    knowledgeSegments,
    smsMessages,
  ] as const;
  const parts: unknown[] = [];
  for (const table of tables) {
    const rows = await t.db.select().from(table).where(eq(table.projectId, projectId));
    parts.push(rows.map((row) => JSON.stringify(row)).sort());
  }
  return JSON.stringify(parts);
}

async function send(op: Operation, ids: Ids, scopes: ApiKeyScopes, projectId = a.projectId) {
  const { secret } = await seedApiKey(t.db, { projectId, scopes });
  const request = op.request(ids);
  const isJson = request.payload !== undefined && !Buffer.isBuffer(request.payload);
  const res = await t.app.inject({
    method: op.method,
    url: request.url,
    headers: {
      ...bearer(secret),
      ...(isJson ? { 'content-type': 'application/json' } : {}),
      ...request.headers,
    },
    ...(request.payload !== undefined
      ? { payload: isJson ? JSON.stringify(request.payload) : (request.payload as Buffer) }
      : {}),
  });
  return { status: res.statusCode, body: res.body };
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'opendock-access-'));
  // Sunday evening, time running on: a started task waits for Monday, a placed call ends at once.
  const clock = new VirtualClock({ startAt: Date.parse('2026-03-08T21:00:00+08:00') });
  stopClock = clock.autoAdvance();
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  Object.assign(a, await seedProject('a@example.com', '13900139001'));
  Object.assign(b, await seedProject('b@example.com', '13900139002'));
  await drainKnowledgeQueue(t.db);
}, 60_000);

afterAll(async () => {
  await t?.app.runtime.idle();
  stopClock?.();
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('scopes and isolation of every /opendock/v1 operation', () => {
  it('names every operation of the OpenAPI document that needs a scope', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, unknown>>;
    };
    const documented = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith(`${V1}/`))
      .flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
    const tabled = OPERATIONS.map(label);
    expect(new Set(tabled).size).toBe(tabled.length);
    for (const operation of tabled) expect(documented, operation).toContain(operation);
    // Operations of the platform itself (a key's own details, the document) need no scope.
    const { secret } = await seedApiKey(t.db, { projectId: a.projectId, scopes: {} });
    for (const operation of documented.filter((o) => !tabled.includes(o))) {
      const [method, url] = operation.split(' ') as ['GET', string];
      const res = await t.app.inject({ method, url, headers: bearer(secret) });
      expect(res.json().message ?? '', `${operation} needs a scope but has no row in OPERATIONS`).not.toMatch(
        /该 API 密钥没有/,
      );
    }
  });

  it.each(OPERATIONS.map((op) => [label(op), op] as const))(
    '%s: a key without its scope is refused in Chinese and changes nothing',
    async (_, op) => {
      const [resource, access] = op.scope;
      // Writing needs write: a key that may only read the resource is refused too.
      const lacking = { ...ALL_SCOPES, [resource]: access === 'write' ? 'read' : 'none' };
      const before = await snapshot(a.projectId);
      const res = await send(op, a, lacking);
      expect(res.status, res.body).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({
        success: false,
        code: 'FORBIDDEN',
        message: apiKeyMessages.scope(resource, access),
      });
      expect(await snapshot(a.projectId)).toBe(before);
    },
  );

  it.each(OPERATIONS.map((op) => [label(op), op] as const))(
    "%s: a key of project A never reaches project B's data",
    async (_, op) => {
      const before = await snapshot(b.projectId);
      const res = await send(op, b, ALL_SCOPES);
      expect(res.status, res.body).toBeLessThan(500);
      // Another project's ids are not found; lists and the rest answer with A's data only.
      if (/\{\w+\}/.test(op.path) || (op.method === 'POST' && op.path === '/calls')) {
        expect(res.status, res.body).toBe(404);
      } else if (op.method === 'POST' && op.path === '/tasks') {
        expect(res.status, res.body).toBe(400);
        expect(JSON.parse(res.body).message).toBe('小助手不存在或已删除');
      }
      for (const id of [
        b.assistantId,
        b.taskId,
        b.callId,
        b.knowledgeBaseId,
        b.documentId,
        b.projectId,
        b.smsId,
      ]) {
        expect(res.body).not.toContain(id);
      }
      if (op.path === '/do-not-call' && op.method === 'GET') expect(res.body).not.toContain(b.phone);
      await t.app.runtime.idle();
      expect(await snapshot(b.projectId)).toBe(before);
    },
  );

  it.each(OPERATIONS.map((op) => [label(op), op] as const))(
    '%s: a key with only its scope gets through',
    async (_, op) => {
      const [resource, access] = op.scope;
      const res = await send(op, a, { [resource]: access });
      expect(res.status, res.body).toBeLessThan(500);
      expect([401, 403], res.body).not.toContain(res.status);
      await t.app.runtime.idle();
    },
  );
});
