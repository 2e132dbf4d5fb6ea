import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { knowledgeSegments, loginFailures } from '../src/db/schema';
import { rowsOf } from '../src/modules/calls/calls.service';
import { seedDemoContent } from '../src/modules/demo/demo-content';
import { calibrationsSettled } from '../src/modules/knowledge/calibrate';
import { drainKnowledgeQueue } from '../src/modules/knowledge/worker';
import { bearer, seedApiKey } from './api-keys';
import { createTestApp, loginAs, seedUser } from './helpers';
import {
  bodyMutations,
  HOSTILE_QUERY_VALUES,
  HOSTILE_SEGMENTS,
  hostileMultiparts,
  LEAKS,
  type OpenApiDocument,
  type OpenApiOperation,
  sampleFor,
} from './openapi-walk';

/**
 * Every operation of the served OpenAPI document, fed what a broken or hostile client sends: NUL
 * and lone surrogates in every path segment, query parameter and JSON string (and key), wrong
 * types, huge strings, malformed JSON and multipart, no or a bogus token, and another tenant's
 * ids. Requests go as the owner of project A (a member with every right, so they get as deep as
 * they can) and without a token; the open API's operations (/opendock/v1) with an API key of
 * project A that may do everything, and with project B's ids. Nothing may answer 5xx; every refusal is the envelope with a
 * Chinese message that leaks no internals, and a malformed request writes nothing. Fixtures are
 * real (a published assistant, an indexed document, a task with an import, a call...) so the
 * hostile value is the only thing wrong with a request and it reaches as deep as the input goes.
 * Driven by the document, it covers a route added later without being told.
 */

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
type Ids = Record<string, string>;

let t: TestApp;
let doc: OpenApiDocument;
let member: Headers;
let webDist: string;
const ids: { a: Ids; b: Ids } = { a: {}, b: {} };
const MEMBER_EMAIL = 'member-a@example.com';

async function api(headers: Headers, method: string, url: string, payload?: object) {
  const res = await t.app.inject({ method: method as 'GET', url, headers, ...(payload ? { payload } : {}) });
  if (res.statusCode >= 300) throw new Error(`fixture ${method} ${url}: ${res.body}`);
  return res.json().data;
}

/** A project with one of everything a path or a body can name, created as a user would. */
async function seedProject(email: string): Promise<Ids> {
  const user = await seedUser(t.db, { email });
  const headers = await loginAs(t.app, email);
  const demo = await seedDemoContent(t.db, user.projectId, user.userId);
  const p = `/api/project/${user.projectId}`;
  const provider = await api(headers, 'POST', `${p}/llm-providers`, {
    name: '模型',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'm',
  });
  const trunk = await api(headers, 'POST', `${p}/trunks`, {
    name: '电信中继',
    kind: 'register',
    registrar: 'sip.example.com:5060',
    username: '02160880000',
    password: 'trunk-pass-1234',
  });
  const speechProvider = await api(headers, 'POST', `${p}/speech-providers`, {
    name: '识别',
    baseUrl: 'http://127.0.0.1:9/v1',
    model: 'm',
  });
  await api(headers, 'POST', `${p}/numbers`, { number: '02160880000', label: '总机', trunkId: trunk.id });
  await api(headers, 'POST', `${p}/do-not-call`, { phone: '13900000001', reason: '投诉' });
  const task = await api(headers, 'POST', `${p}/tasks`, {
    name: '回访任务',
    assistantId: demo.publishedAssistantId,
    startDate: '2030-03-01',
    endDate: '2030-03-31',
    windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
    concurrency: 1,
  });
  const paste = await api(headers, 'POST', `${p}/tasks/${task.id}/imports/paste`, {
    text: '13700001111,张三',
  });
  const assistant = await api(headers, 'GET', `${p}/assistants/${demo.publishedAssistantId}`);
  const callId = randomUUID();
  await t.app.runtime.calls.create({
    id: callId,
    projectId: user.projectId,
    direction: 'outbound',
    callerNumber: '02160880000',
    calleeNumber: '13800000000',
    assistantId: demo.publishedAssistantId,
    assistantName: '宽带客户回访',
    assistantVersion: 1,
    startedAt: new Date(Date.now() - 60_000),
  });
  return {
    projectId: user.projectId,
    assistantId: demo.publishedAssistantId,
    version: '1',
    knowledgeBaseId: demo.knowledgeBaseId,
    providerId: provider.id,
    trunkId: trunk.id,
    speechProviderId: speechProvider.id,
    number: '02160880000',
    phone: '13900000001',
    taskId: task.id,
    importId: paste.importId,
    callId,
    file: `${callId}.wav`,
    host: 'fuzz.example.com',
    apiKey: (await seedApiKey(t.db, { projectId: user.projectId })).secret,
    config: JSON.stringify({ ...assistant.config, brain: { ...assistant.config.brain, providerId: null } }),
  };
}

/** Ids that only exist once the indexer has run; a reindex replaces the segments and their ids. */
async function refreshIndexedIds() {
  await drainKnowledgeQueue(t.db);
  for (const project of [ids.a, ids.b]) {
    const [segment] = await t.db
      .select({ id: knowledgeSegments.id, documentId: knowledgeSegments.documentId })
      .from(knowledgeSegments)
      .where(eq(knowledgeSegments.knowledgeBaseId, project.knowledgeBaseId!))
      .orderBy(knowledgeSegments.position)
      .limit(1);
    project.documentId = segment!.documentId;
    project.segmentId = segment!.id;
  }
}

beforeAll(async () => {
  // A console build, so paths outside the API reach the console's fallback rather than its 503.
  webDist = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-web-'));
  fs.writeFileSync(path.join(webDist, 'index.html'), '<!doctype html><title>控制台</title>');
  t = await createTestApp({ env: { WEB_DIST: webDist } });
  await t.app.ready();
  ids.a = await seedProject(MEMBER_EMAIL);
  ids.b = await seedProject('member-b@example.com');
  await refreshIndexedIds();
  member = await loginAs(t.app, MEMBER_EMAIL);
  await countWrites();
  doc = (await t.app.inject({ method: 'GET', url: '/docs/json' })).json();
}, 60_000);
afterAll(async () => {
  await t?.app.close();
  fs.rmSync(webDist, { recursive: true, force: true });
});

/**
 * Counts every row any statement writes, in this test's database only (a transaction id would be
 * cluster-wide, and other test files write to the same PostgreSQL server at the same time).
 */
async function countWrites() {
  await t.db.execute(sql`create sequence hostile_writes`);
  await t.db.execute(sql`create function hostile_count_write() returns trigger language plpgsql
    as $$ begin perform nextval('hostile_writes'); return null; end $$`);
  // The open API's request log and keys' last use are written in batches, whenever they flush:
  // a write there belongs to no particular request. Rate-limit counters count every request to a
  // public endpoint, malformed ones too, by design.
  await t.db.execute(sql`do $$ declare name text; begin
    for name in select tablename from pg_tables where schemaname = 'public'
        and tablename not in ('api_key_requests', 'api_keys', 'rate_limit_hits') loop
      execute format('create trigger hostile_count_write after insert or update or delete on %I
        for each row execute function hostile_count_write()', name);
    end loop;
  end $$`);
}

/** How many rows have been written so far: a request that leaves it alone wrote nothing. */
async function writeMark(): Promise<string> {
  const [row] = rowsOf<{ mark: string }>(
    await t.db.execute(sql`select last_value::text || ':' || is_called::text as mark from hostile_writes`),
  );
  return row!.mark;
}

interface Probe {
  label: string;
  method: string;
  url: string;
  headers?: Headers;
  payload?: string | Buffer;
  /** Another tenant's project or ids: anything but a refusal is a leak. */
  crossTenant?: boolean;
}

const problems: string[] = [];
let requests = 0;
let lastMark = '';

/** One request: answered, in the envelope when refused, and a refusal changed nothing. */
async function probe(p: Probe): Promise<number> {
  requests++;
  let status: number;
  let body = '';
  try {
    const res = await t.app.inject({
      method: p.method as 'GET',
      url: p.url,
      headers: p.headers ?? {},
      ...(p.payload !== undefined ? { payload: p.payload } : {}),
      // One address per request: the login throttle is another test's subject, not this one's.
      remoteAddress: `10.${(requests >> 16) & 255}.${(requests >> 8) & 255}.${requests & 255}`,
      payloadAsStream: true,
    });
    status = res.statusCode;
    const stream = res.stream();
    if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      // A live event stream never ends by itself; its status line is the answer.
      stream.on('error', () => {});
      res.raw.res.destroy();
    } else {
      const chunks: Buffer[] = [];
      for await (const chunk of stream) chunks.push(chunk as Buffer);
      body = Buffer.concat(chunks).toString('utf8');
    }
  } catch (err) {
    lastMark = await writeMark();
    problems.push(`${p.method} ${p.url.slice(0, 140)} [${p.label}]: no answer: ${(err as Error).message}`);
    return 0;
  }
  // What a request that got through queued (a reindex, a base's recalibration) settles before the
  // next one is judged.
  if (status < 400) {
    await drainKnowledgeQueue(t.db);
    await calibrationsSettled();
  }
  const mark = await writeMark();
  const wrote = mark !== lastMark;
  lastMark = mark;
  const problem = judge(status, body, wrote, p.crossTenant);
  if (problem) problems.push(`${p.method} ${p.url.slice(0, 140)} [${p.label}] → ${status}: ${problem}`);
  return status;
}

function judge(status: number, body: string, wrote: boolean, crossTenant?: boolean): string | undefined {
  if (status >= 500) return body.slice(0, 200);
  if (status < 400) return crossTenant ? "another tenant's data answered" : undefined;
  let envelope: { success?: unknown; status?: unknown; message?: unknown; code?: unknown };
  try {
    envelope = JSON.parse(body);
  } catch {
    return `not the JSON envelope: ${body.slice(0, 200)}`;
  }
  if (envelope.success !== false || envelope.status !== status || typeof envelope.code !== 'string')
    return `not the error envelope: ${body.slice(0, 200)}`;
  if (typeof envelope.message !== 'string' || !/[\u4e00-\u9fa5]/.test(envelope.message))
    return `message is not Chinese: ${body.slice(0, 200)}`;
  const leak = LEAKS.find((re) => re.test(body));
  if (leak) return `leaks internals (${leak}): ${body.slice(0, 200)}`;
  // Malformed input is refused before anything runs; business refusals (a wrong password, a
  // wrong code) rightly count the attempt.
  const malformed = envelope.code === 'VALIDATION_FAILED' || status === 413 || status === 415;
  if (malformed && wrote) return 'a refused request wrote to the database';
  return undefined;
}

const PARAM = /\{(\w+)\}/g;
let unique = 0;

/**
 * Values the schemas cannot tell: real ids, a usable schedule, credentials of the right shape,
 * names no earlier request took. With them a request is valid but for the one hostile value.
 */
const fixtureOf = (project: Ids, n = String(unique).padStart(4, '0')) => {
  return (name: string): unknown => {
    switch (name) {
      case 'assistantId':
      case 'knowledgeBaseId':
      case 'documentId':
      case 'taskId':
      case 'importId':
      case 'callId':
      case 'trunkId':
        return project[name];
      case 'config':
        return JSON.parse(project.config!);
      case 'baseIds':
        return [project.knowledgeBaseId];
      case 'callerNumbers':
        return [project.number];
      // The offline script brain: no model endpoint to wait for.
      case 'providerId':
        return null;
      case 'version':
      case 'assistantVersion':
        return 1;
      case 'templateKey':
        return 'customer-follow-up';
      case 'name':
        return `名称${n}`;
      case 'number':
        return `0216088${n}`;
      case 'phone':
        return '13900000002';
      case 'email':
        return `fuzz${n}@example.com`;
      case 'target':
        return 'fuzz@example.com';
      case 'password':
        return 'good-pass-12';
      // Never the member's own: a request that got through must not change their password.
      case 'oldPassword':
        return 'wrong-pass-1';
      case 'code':
        return '123456';
      case 'token':
        return 'A'.repeat(43);
      case 'startDate':
        return '2030-03-01';
      case 'endDate':
        return '2030-03-31';
      case 'windows':
        return [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }];
      case 'mapping':
        return { phone: '号码', name: '姓名' };
      // A SIP trunk's addresses and account (the kind the sampler picks is 'register').
      case 'registrar':
        return 'sip.example.com:5060';
      case 'signallingAddress':
        return '203.0.113.10:5060';
      case 'outboundProxy':
      case 'authUsername':
        return '';
      case 'username':
        return '02160880000';
      case 'peerAddresses':
        return ['203.0.113.0/24'];
      default:
        return undefined;
    }
  };
};

const VARIABLES = { 客户姓名: '张先生', 公司名称: '星河宽带', 产品名称: '千兆宽带套餐' };

/**
 * Bodies the schema alone describes badly (fields that exclude each other, values the assistant
 * requires); a function builds the body for a project.
 */
const BODY_OVERRIDES: Record<string, unknown | ((project: Ids) => unknown)> = {
  // A callee who is busy at once, so the call is over before the next operations are judged.
  'POST /opendock/v1/calls': (project: Ids) => ({
    assistantId: project.assistantId,
    phone: '13900000002',
    variables: VARIABLES,
    simulatedPersona: 'busy',
  }),
  'POST /opendock/v1/tasks/{taskId}/contacts': {
    contacts: [{ phone: '13900000002', name: '张三', variables: VARIABLES }],
  },
  'POST /auth/login': { email: 'fuzz@example.com', password: 'wrong-pass-1' },
  'PUT /api/project/{projectId}/knowledge-bases/{knowledgeBaseId}/segments/{segmentId}': {
    content: '宽带安装一般在受理后 3 个工作日内完成。',
    enabled: true,
  },
};

/** The operation's path with its parameters filled, one of them optionally replaced by a raw segment. */
function fillPath(template: string, project: Ids, raw?: { name: string; value: string }) {
  return template.replace(PARAM, (_, name: string) =>
    raw?.name === name ? raw.value : encodeURIComponent(project[name] ?? 'x'),
  );
}

function query(op: OpenApiOperation, project: Ids, raw?: { name: string; value: string }) {
  const parts: string[] = [];
  for (const param of op.parameters ?? []) {
    if (param.in !== 'query') continue;
    if (raw?.name === param.name) parts.push(`${param.name}=${raw.value}`);
    else if (param.required) {
      const value = sampleFor(doc, param.schema, param.name, fixtureOf(project));
      parts.push(`${param.name}=${encodeURIComponent(String(value))}`);
    }
  }
  return parts.length ? `?${parts.join('&')}` : '';
}

const jsonSchemaOf = (op: OpenApiOperation) => op.requestBody?.content['application/json']?.schema;
const json = { 'content-type': 'application/json' };

/** Everything hostile about one operation, sent as a member of project A unless it is public. */
async function walk(method: string, path: string, op: OpenApiOperation) {
  const M = method.toUpperCase();
  const guarded = (op.security?.length ?? 0) > 0;
  const open = path.startsWith('/opendock/');
  const auth = guarded ? (open ? bearer(ids.a.apiKey!) : member) : {};
  const pathParams = [...path.matchAll(PARAM)].map((m) => m[1]!);
  const queryParams = (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const schema = jsonSchemaOf(op);
  unique++;
  const override = BODY_OVERRIDES[`${M} ${path}`];
  const body = (project: Ids) =>
    typeof override === 'function'
      ? override(project)
      : (override ?? (schema ? sampleFor(doc, schema, '', fixtureOf(project)) : undefined));
  if (pathParams.includes('segmentId')) await refreshIndexedIds();
  const baseUrl = fillPath(path, ids.a) + query(op, ids.a);
  const baseBody = body(ids.a);
  const payloadOf = (value: unknown) => (value === undefined ? {} : { payload: JSON.stringify(value) });
  const send = (label: string, over: Partial<Probe>) =>
    probe({
      label,
      method: M,
      url: baseUrl,
      headers: { ...auth, ...(baseBody !== undefined ? json : {}) },
      ...payloadOf(baseBody),
      ...over,
    });

  for (const name of pathParams) {
    for (const [label, value] of HOSTILE_SEGMENTS) {
      await send(`path ${name}: ${label}`, {
        url: fillPath(path, ids.a, { name, value }) + query(op, ids.a),
      });
    }
  }
  for (const name of queryParams) {
    for (const [label, value] of HOSTILE_QUERY_VALUES) {
      await send(`query ${name}: ${label}`, {
        url: fillPath(path, ids.a) + query(op, ids.a, { name, value }),
      });
    }
    await send(`query ${name}: repeated`, {
      url: `${fillPath(path, ids.a)}${query(op, ids.a) || '?'}&${name}=1&${name}=%00`,
    });
  }
  if (baseBody !== undefined) {
    for (const mutation of bodyMutations(baseBody)) {
      await send(`body ${mutation.label}`, { payload: JSON.stringify(mutation.body) });
    }
  }
  if (M === 'POST' || M === 'PUT' || M === 'PATCH' || M === 'DELETE') {
    for (const [label, payload] of [
      ['malformed JSON', '{"name":'],
      ['JSON array', '[]'],
      ['JSON string with NUL', '"\\u0000"'],
      ['JSON null', 'null'],
      ['__proto__', '{"__proto__":{"admin":true}}'],
      ['deeply nested', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
      ['deeply nested object', `${'{"a":'.repeat(50_000)}"\\u0000"${'}'.repeat(50_000)}`],
      ['over the body limit', JSON.stringify({ x: 'x'.repeat(1_100_000) })],
    ] as const) {
      await send(`body: ${label}`, { headers: { ...auth, ...json }, payload });
    }
    await send('body: text/plain', {
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'x\u0000',
    });
    // The full set only where multipart is read: elsewhere the content type alone is refused (415).
    const [first, ...rest] = hostileMultiparts();
    const status = await send(first!.label, {
      headers: { ...auth, ...first!.headers },
      payload: first!.payload,
    });
    if (status !== 415) {
      for (const m of rest) await send(m.label, { headers: { ...auth, ...m.headers }, payload: m.payload });
    }
  }
  if (guarded) {
    await send('no token', { headers: baseBody !== undefined ? json : {} });
    await send('bogus token', { headers: { authorization: 'Bearer \u00ff%00garbage', ...json } });
    if (pathParams[0]) {
      await send('no token, path %00', {
        headers: {},
        url: fillPath(path, ids.a, { name: pathParams[0], value: '%00' }),
      });
    }
  }
  if (guarded && pathParams.includes('projectId')) {
    // A member of A asking for project B, with B's own ids and body...
    await send("another tenant's project", {
      url: fillPath(path, ids.b) + query(op, ids.b),
      ...payloadOf(body(ids.b)),
      crossTenant: true,
    });
    // ...and for B's resources inside their own project A.
    const foreignIds: Ids = { ...ids.b, projectId: ids.a.projectId! };
    const foreignUrl = fillPath(path, foreignIds) + query(op, foreignIds);
    const foreignBody = body(foreignIds);
    if (foreignUrl !== baseUrl || JSON.stringify(foreignBody) !== JSON.stringify(baseBody)) {
      await send("another tenant's ids in the own project", {
        url: foreignUrl,
        ...payloadOf(foreignBody),
        crossTenant: true,
      });
    }
  }
  if (guarded && open) {
    // The key implies the project: B's ids (and B's ids in the body) with A's key reach nothing.
    const foreignUrl = fillPath(path, ids.b) + query(op, ids.b);
    const foreignBody = body(ids.b);
    if (foreignUrl !== baseUrl || JSON.stringify(foreignBody) !== JSON.stringify(baseBody)) {
      await send("another tenant's ids with the own key", {
        url: foreignUrl,
        ...payloadOf(foreignBody),
        crossTenant: true,
      });
    }
  }
  // A request above may have ended the member's session (logout, token refresh): log in again,
  // past any lock that wrong current passwords put on the account.
  const me = await t.app.inject({ method: 'GET', url: '/api/user/current', headers: member });
  if (me.statusCode !== 200) {
    await t.db.delete(loginFailures);
    Object.assign(member, await loginAs(t.app, MEMBER_EMAIL));
    lastMark = await writeMark();
  }
}

describe('hostile input to every operation of the OpenAPI document', () => {
  it('never answers 5xx, refuses in the Chinese envelope, leaks nothing and changes nothing', async () => {
    const operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, op]) => ({ method, path, op })),
    );
    expect(operations.length).toBeGreaterThan(80);
    // Deletions last, so the fixtures the other operations name still exist when they run.
    operations.sort((x, y) => Number(x.method === 'delete') - Number(y.method === 'delete'));
    lastMark = await writeMark();
    for (const { method, path, op } of operations) await walk(method, path, op);
    // Paths outside the document: the console's fallback and unknown API paths.
    for (const url of ['/%00', '/api/%00', '/api/project/%00', '/assets/%00.js', '/%ED%A0%80']) {
      await probe({ label: 'outside the document', method: 'GET', url, headers: member });
    }
    expect(requests).toBeGreaterThan(1500);
    expect(
      problems,
      `${problems.length} of ${requests} requests:\n${problems.slice(0, 60).join('\n')}`,
    ).toEqual([]);
  }, 180_000);
});
