// biome-ignore-all lint/suspicious/noTemplateCurlyInString: SMS templates write their variables as ${name}.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import {
  knowledgeDocuments,
  smsFollowUpRules,
  smsMessages,
  smsSignatures,
  smsTemplates,
} from '../../db/schema';
import { VirtualClock } from '../../engine/clock';
import { seedDemoContent } from '../demo/demo-content';
import { sendCallSms, sendFollowUpSms } from './sms-follow-up';

type Headers = Record<string, string>;
let t: Awaited<ReturnType<typeof createTestApp>>;
let stopClock: () => void;
let dataDir: string;
let a: { userId: string; projectId: string };
let b: { userId: string; projectId: string };
let owner: Headers;
let outsider: Headers;
let assistantId: string;
let signatureId: string;
let templateId: string;
let draftTemplateId: string;
let otherProjectTemplateId: string;

async function approved(projectId: string, content: string, status: 'approved' | 'draft' = 'approved') {
  const sig = randomUUID();
  const tpl = randomUUID();
  await t.db
    .insert(smsSignatures)
    .values({ id: sig, projectId, name: `云呼${sig.slice(0, 4)}`, source: 'enterprise', status });
  const variables = [...new Set([...content.matchAll(/\$\{([^}]*)\}/g)].map((m) => m[1] as string))];
  await t.db.insert(smsTemplates).values({
    id: tpl,
    projectId,
    name: `回访${tpl.slice(0, 4)}`,
    type: 'notification',
    content,
    variables,
    status,
  });
  return { signatureId: sig, templateId: tpl };
}

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sms-rules-'));
  const clock = new VirtualClock({ startAt: Date.now() });
  stopClock = clock.autoAdvance();
  t = await createTestApp({ env: { DATA_DIR: dataDir }, clock });
  await t.app.ready();
  a = await seedUser(t.db, { email: 'rules@example.com' });
  b = await seedUser(t.db, { email: 'rules-other@example.com' });
  owner = await loginAs(t.app, 'rules@example.com');
  outsider = await loginAs(t.app, 'rules-other@example.com');
  const demo = await seedDemoContent(t.db, a.projectId, a.userId);
  assistantId = demo.publishedAssistantId;
  ({ signatureId, templateId } = await approved(a.projectId, '${name}您好，感谢接听，有疑问请回电${line}'));
  draftTemplateId = (await approved(a.projectId, '${name}您好', 'draft')).templateId;
  otherProjectTemplateId = (await approved(b.projectId, '您好')).templateId;
  for (let i = 0; i < 200; i++) {
    const docs = await t.db
      .select()
      .from(knowledgeDocuments)
      .where(eq(knowledgeDocuments.knowledgeBaseId, demo.knowledgeBaseId));
    if (docs.every((d) => d.status === 'ready')) break;
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);

afterAll(async () => {
  stopClock?.();
  await t?.app.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const base = (projectId = a.projectId) => `/api/project/${projectId}/sms/follow-up-rules`;
const send = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, headers: Headers, payload?: object) =>
  t.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

const gradeRule = () => ({
  ownerType: 'assistant',
  ownerId: assistantId,
  trigger: 'grade',
  grades: ['A', 'B', 'C', 'D'],
  signatureId,
  templateId,
  variableMap: { name: { from: 'contact_name' }, line: { from: 'line_number' } },
});

describe('跟进短信规则 CRUD', () => {
  it('refuses what cannot work, naming the field, and changes nothing', async () => {
    const cases: [object, number, string][] = [
      [{ ...gradeRule(), grades: [] }, 400, '请至少选择一个等级'],
      [{ ...gradeRule(), variableMap: { name: { from: 'contact_name' } } }, 400, '${line}'],
      [
        { ...gradeRule(), variableMap: { name: { from: 'assistant_text' }, line: { from: 'line_number' } } },
        400,
        '助手要发送的内容',
      ],
      [{ ...gradeRule(), templateId: otherProjectTemplateId }, 400, '模板：所选模板不存在'],
      [{ ...gradeRule(), ownerId: 'nope' }, 404, '助手不存在'],
      [{ ...gradeRule(), ownerType: 'task' }, 404, '任务不存在'],
      [{ ...gradeRule(), trigger: 'always' }, 400, '触发条件'],
    ];
    const before = await t.db.select().from(smsFollowUpRules);
    for (const [payload, status, message] of cases) {
      const res = await send('POST', base(), owner, payload);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().message).toContain(message);
    }
    expect(await t.db.select().from(smsFollowUpRules)).toEqual(before);
  });

  it('creates, lists (saying what is not approved), edits and deletes; another project sees nothing', async () => {
    const before = await t.db.select().from(smsFollowUpRules);
    const made = await send('POST', base(), owner, {
      ...gradeRule(),
      templateId: draftTemplateId,
      variableMap: { name: { from: 'fixed', value: '尊敬的客户' }, leftover: { from: 'contact_name' } },
    });
    expect(made.statusCode, made.body).toBe(200);
    const rule = made.json().data;
    expect(rule).toMatchObject({ trigger: 'grade', grades: ['A', 'B', 'C', 'D'], enabled: true });
    expect(rule.variableMap).toEqual({ name: { from: 'fixed', value: '尊敬的客户' } });
    expect(rule.problem).toContain('尚未通过审核');

    const list = await send('GET', `${base()}?ownerType=assistant&ownerId=${assistantId}`, owner);
    // The demo assistant comes with a rule of its own; the new one is listed after it.
    expect(list.json().data.map((r: { id: string }) => r.id)).toEqual([...before.map((r) => r.id), rule.id]);

    // A member of another project: refused on this project's paths, not found through their own.
    for (const [method, url, payload] of [
      ['GET', `${base()}?ownerType=assistant&ownerId=${assistantId}`],
      ['POST', base(), gradeRule()],
      ['PUT', `${base()}/${rule.id}`, gradeRule()],
      ['DELETE', `${base()}/${rule.id}`],
    ] as const) {
      expect((await send(method, url, outsider, payload)).statusCode, `${method} ${url}`).toBe(403);
    }
    const theirs = base(b.projectId);
    expect(
      (await send('GET', `${theirs}?ownerType=assistant&ownerId=${assistantId}`, outsider)).statusCode,
    ).toBe(404);
    expect((await send('PUT', `${theirs}/${rule.id}`, outsider, gradeRule())).statusCode).toBe(404);
    expect((await send('DELETE', `${theirs}/${rule.id}`, outsider)).statusCode).toBe(404);
    expect(
      (await send('GET', `${base()}?ownerType=assistant&ownerId=${assistantId}`, owner)).json().data,
    ).toHaveLength(before.length + 1);

    const edited = await send('PUT', `${base()}/${rule.id}`, owner, { ...gradeRule(), enabled: false });
    expect(edited.statusCode, edited.body).toBe(200);
    expect(edited.json().data).toMatchObject({ templateId, enabled: false, problem: null });

    expect((await send('DELETE', `${base()}/${rule.id}`, owner)).statusCode).toBe(200);
    expect((await send('DELETE', `${base()}/${rule.id}`, owner)).statusCode).toBe(404);
    expect(await t.db.select().from(smsFollowUpRules)).toEqual(before);
  });
});

describe('SMS of a call', () => {
  it('sends one follow-up SMS for a graded call, and none again when it is analysed again', async () => {
    // A test call has no contact, so the name is fixed; the line number is the call's own.
    const rule = (
      await send('POST', base(), owner, {
        ...gradeRule(),
        variableMap: { name: { from: 'fixed', value: '张先生' }, line: { from: 'line_number' } },
      })
    ).json().data;
    const started = await t.app.inject({
      method: 'POST',
      url: `/api/project/${a.projectId}/calls/test`,
      headers: owner,
      payload: { assistantId, persona: 'interested', version: 1, calleeNumber: '13912345678' },
    });
    expect(started.statusCode, started.body).toBe(200);
    const callId = started.json().data.callId as string;
    await t.app.runtime.idle();

    const records = await t.db.select().from(smsMessages).where(eq(smsMessages.callId, callId));
    const mine = records.filter((r) => r.ruleId === rule.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ source: 'follow_up', phone: '13912345678' });
    expect(mine[0]!.content).toMatch(/张先生您好，感谢接听，有疑问请回电\d+/);
    // The demo assistant's own rule (A or B) sent its SMS too, once.
    expect(records.every((r) => r.source === 'follow_up' && r.ruleId)).toBe(true);

    expect(await sendFollowUpSms(t.db, { projectId: a.projectId, callId })).toEqual([]);
    expect(await t.db.select().from(smsMessages).where(eq(smsMessages.callId, callId))).toHaveLength(
      records.length,
    );
    await send('DELETE', `${base()}/${rule.id}`, owner);
  }, 60_000);

  it("sends the assistant's request by its 'requested' rule, or records it as free text", async () => {
    const [call] = await t.db.select().from(smsMessages).limit(1);
    const callId = call!.callId!;
    const request = {
      projectId: a.projectId,
      callId,
      to: '13912345678',
      template: 'assistant_send_sms' as const,
      variables: { content: '门店地址：星河路 1 号', assistantName: '回访助手' },
    };

    const [free] = await sendCallSms(t.db, request);
    expect(free).toMatchObject({
      source: 'assistant',
      ruleId: null,
      callId,
      content: '门店地址：星河路 1 号',
    });

    const { templateId: addressTemplate } = await approved(a.projectId, '${name}您好，${text}');
    const rule = (
      await send('POST', base(), owner, {
        ownerType: 'assistant',
        ownerId: assistantId,
        trigger: 'requested',
        signatureId,
        templateId: addressTemplate,
        variableMap: { name: { from: 'fixed', value: '客户' }, text: { from: 'assistant_text' } },
      })
    ).json().data;
    const [templated] = await sendCallSms(t.db, request);
    expect(templated).toMatchObject({ source: 'assistant', ruleId: rule.id, templateId: addressTemplate });
    expect(templated!.content).toContain('客户您好，门店地址：星河路 1 号');
    const [flow] = await sendCallSms(t.db, {
      ...request,
      template: 'flow_sms',
      variables: { content: '流程短信', flowName: '流程' },
    });
    expect(flow).toMatchObject({ source: 'flow', ruleId: null });
    const byRule = await t.db
      .select()
      .from(smsMessages)
      .where(and(eq(smsMessages.callId, callId), eq(smsMessages.ruleId, rule.id)));
    expect(byRule).toHaveLength(1);
  });

  it('records a rule that cannot send as 未发送 with the reason, once', async () => {
    const [sent] = await t.db.select().from(smsMessages).where(eq(smsMessages.source, 'follow_up')).limit(1);
    const callId = sent!.callId!;
    const { signatureId: draftSignature, templateId: draftTemplate } = await approved(
      a.projectId,
      '您好，感谢接听。',
      'draft',
    );
    const rule = (
      await send('POST', base(), owner, {
        ...gradeRule(),
        signatureId: draftSignature,
        templateId: draftTemplate,
        variableMap: {},
      })
    ).json().data;
    expect(rule.problem).not.toBeNull();
    const [blocked] = await sendFollowUpSms(t.db, { projectId: a.projectId, callId });
    expect(blocked).toMatchObject({ status: 'blocked', ruleId: rule.id, callId, source: 'follow_up' });
    expect(blocked!.errorMessage).toMatch(/^跟进规则未能发送：签名【.+】尚未通过审核/);
    expect(await sendFollowUpSms(t.db, { projectId: a.projectId, callId })).toEqual([]);
    await send('DELETE', `${base()}/${rule.id}`, owner);
  });
});
