import { randomUUID } from 'node:crypto';
import { assistantTemplate, referencedVariables } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { assistants, assistantVersions, knowledgeBases, llmProviders, projectLimits } from '../../db/schema';
import { getPublishedVersion } from './assistants.service';
import { ASSISTANT_TEMPLATES } from './assistants.templates';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
let current: TestApp | undefined;
afterEach(async () => {
  await current?.app.close();
  current = undefined;
});

async function setup() {
  current = await createTestApp();
  const { app, db } = current;
  const a = await seedUser(db, { email: 'owner-a@example.com' });
  const b = await seedUser(db, { email: 'owner-b@example.com' });
  const headers = await loginAs(app, 'owner-a@example.com');
  const headersB = await loginAs(app, 'owner-b@example.com');
  const url = `/api/project/${a.projectId}/assistants`;
  return { ...current, a, b, headers, headersB, url };
}

const assistantCount = async (db: TestApp['db']) => (await db.select().from(assistants)).length;

describe('built-in templates', () => {
  it('offers six complete Chinese templates whose lines only use declared variables', async () => {
    const { app, a, headers } = await setup();
    const res = await app.inject({
      method: 'GET',
      url: `/api/project/${a.projectId}/assistant-templates`,
      headers,
    });
    expect(res.statusCode).toBe(200);
    const templates = res.json().data as Array<{ name: string }>;
    expect(templates.map((t) => t.name)).toEqual([
      '客户回访',
      '活动邀约',
      '预约提醒',
      '满意度调查',
      '售后通知',
      '招聘邀约',
    ]);
    for (const template of ASSISTANT_TEMPLATES) {
      const parsed = assistantTemplate.parse(template);
      const { config } = parsed;
      expect(config.openingLine.length, template.key).toBeGreaterThan(10);
      expect(referencedVariables(config.openingLine).length, template.key).toBeGreaterThan(0);
      expect(config.systemPrompt, template.key).toMatch(
        /## 角色[\s\S]*## 目标[\s\S]*## 通话步骤[\s\S]*## 通话规则/,
      );
      const declared = config.variables.map((v) => v.name);
      const texts = [
        config.openingLine,
        config.systemPrompt,
        ...Object.values(config.conversation).filter((v) => typeof v === 'string'),
      ];
      for (const name of texts.flatMap((text) => referencedVariables(text as string))) {
        expect(declared, `${template.key} uses {{${name}}}`).toContain(name);
      }
      for (const variable of config.variables) expect(variable.sample, variable.name).not.toBe('');
      for (const grade of ['A', 'B', 'C', 'D'] as const) {
        expect(config.intentRules[grade].keywords.length, `${template.key} ${grade}`).toBeGreaterThan(2);
        expect(config.intentRules[grade].description).not.toBe('');
      }
    }
  });
});

describe('assistant CRUD', () => {
  it('creates from a template, lists with filters and pages, edits the draft and deletes softly', async () => {
    const { app, db, headers, url } = await setup();
    const fromTemplate = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: { name: '宽带回访', templateKey: 'customer-follow-up', config: { knowledge: { topK: 5 } } },
    });
    expect(fromTemplate.statusCode).toBe(200);
    const created = fromTemplate.json().data;
    const template = ASSISTANT_TEMPLATES.find((t) => t.key === 'customer-follow-up')!;
    expect(created).toMatchObject({
      name: '宽带回访',
      description: template.description,
      use: 'outbound',
      templateKey: 'customer-follow-up',
      publishedVersion: null,
      hasUnpublishedChanges: true,
      brainMode: 'script',
      knowledgeBaseCount: 0,
    });
    expect(created.config.openingLine).toBe(template.config.openingLine);
    expect(created.config.knowledge.topK).toBe(5);

    const plain = await app.inject({
      method: 'POST',
      url,
      headers,
      payload: { name: '来电接待', description: '前台来电分流', use: 'inbound', status: 'disabled' },
    });
    expect(plain.statusCode).toBe(200);
    expect(plain.json().data.config.openingLine).toBe('');

    const list = async (query: string) =>
      (await app.inject({ method: 'GET', url: `${url}${query}`, headers })).json().data;
    expect((await list('')).total).toBe(2);
    expect((await list('?keyword=分流')).items.map((i: { name: string }) => i.name)).toEqual(['来电接待']);
    expect((await list('?use=outbound')).items.map((i: { name: string }) => i.name)).toEqual(['宽带回访']);
    expect((await list('?status=disabled')).total).toBe(1);
    expect((await list('?keyword=%25')).total).toBe(0);
    const page2 = await list('?pageSize=1&page=2');
    expect(page2).toMatchObject({ total: 2, page: 2, pageSize: 1 });
    expect(page2.items).toHaveLength(1);

    const updated = await app.inject({
      method: 'PUT',
      url: `${url}/${created.id}`,
      headers,
      payload: { name: '宽带回访（新）', config: { ...created.config, openingLine: '您好，{{未声明}}' } },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data.name).toBe('宽带回访（新）');
    expect(updated.json().data.config.openingLine).toBe('您好，{{未声明}}');

    const del = await app.inject({ method: 'DELETE', url: `${url}/${created.id}`, headers });
    expect(del.statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: `${url}/${created.id}`, headers })).statusCode).toBe(404);
    expect((await list('')).total).toBe(1);
    const [row] = await db.select().from(assistants).where(eq(assistants.id, created.id));
    expect(row?.deletedAt).toBeInstanceOf(Date);
  });

  it('refuses bad input with a Chinese message naming the field, and changes nothing', async () => {
    const { app, db, a, b, headers, url } = await setup();
    const ok = await app.inject({ method: 'POST', url, headers, payload: { name: '原名' } });
    const id = ok.json().data.id as string;
    const foreignProvider = randomUUID();
    await db.insert(llmProviders).values({
      id: foreignProvider,
      projectId: b.projectId,
      name: 'B 的模型',
      baseUrl: 'http://127.0.0.1:1/v1',
      model: 'm',
    });
    const foreignBase = randomUUID();
    await db.insert(knowledgeBases).values({ id: foreignBase, projectId: b.projectId, name: 'B 的知识库' });
    const ownBase = randomUUID();
    await db.insert(knowledgeBases).values({ id: ownBase, projectId: a.projectId, name: 'A 的知识库' });

    const cases: Array<[unknown, RegExp]> = [
      [{}, /字段 name：请输入小助手名称/],
      [{ name: '   ' }, /字段 name：请输入小助手名称/],
      [{ name: '名'.repeat(51) }, /字段 name：小助手名称不能超过 50 个字符/],
      [{ name: '好', use: 'sideways' }, /字段 use：用途须为呼出、呼入或呼入呼出/],
      [
        { name: '好', config: { variables: [{ name: '客户 姓名' }] } },
        /字段 config\.variables\.0\.name：变量名为/,
      ],
      [
        { name: '好', config: { variables: [{ name: '甲' }, { name: '甲' }] } },
        /字段 config\.variables：变量名重复：甲/,
      ],
      [{ name: '好', config: { voice: { speed: 3 } } }, /字段 config\.voice\.speed：语速不能超过 2/],
      [{ name: '好', config: { voice: { voiceId: 'en-us' } } }, /字段 config\.voice\.voiceId：音色不存在/],
      [
        { name: '好', config: { brain: { providerId: foreignProvider } } },
        /字段 config\.brain\.providerId：模型配置不存在或不属于本项目/,
      ],
      [
        { name: '好', config: { knowledge: { baseIds: [ownBase, foreignBase] } } },
        /字段 config\.knowledge\.baseIds：知识库不存在或不属于本项目/,
      ],
      [{ name: '好', templateKey: 'no-such-template' }, /字段 templateKey：模板不存在/],
    ];
    for (const [payload, message] of cases) {
      const created = await app.inject({ method: 'POST', url, headers, payload: payload as object });
      expect(created.statusCode, JSON.stringify(payload)).toBe(400);
      expect(created.json().message).toMatch(message);
      if ((payload as { name?: string }).name === '好') {
        const put = await app.inject({
          method: 'PUT',
          url: `${url}/${id}`,
          headers,
          payload: payload as object,
        });
        expect(put.statusCode, JSON.stringify(payload)).toBe(
          (payload as { templateKey?: string }).templateKey ? 200 : 400,
        );
      }
    }
    expect(await assistantCount(db)).toBe(1);
    const [row] = await db.select().from(assistants);
    expect(row?.name).toMatch(/^(原名|好)$/);
    expect(row?.draftRevision).toBeLessThanOrEqual(2);
    const linked = await app.inject({
      method: 'PUT',
      url: `${url}/${id}`,
      headers,
      payload: { name: '原名', config: { knowledge: { baseIds: [ownBase] } } },
    });
    expect(linked.json().data.knowledgeBaseCount).toBe(1);
  });

  it('honours the assistant limit on create and copy, counting only undeleted assistants', async () => {
    const { app, db, a, headers, url } = await setup();
    await db
      .update(projectLimits)
      .set({ hasBalance: true, assistantLimit: 1 })
      .where(eq(projectLimits.projectId, a.projectId));
    const first = await app.inject({ method: 'POST', url, headers, payload: { name: '一号' } });
    expect(first.statusCode).toBe(200);
    const second = await app.inject({ method: 'POST', url, headers, payload: { name: '二号' } });
    expect(second.statusCode).toBe(403);
    expect(second.json()).toMatchObject({
      code: 'LIMIT_REACHED',
      message: '智能小助手数量已达上限（1 个），请联系销售提升额度',
    });
    const copy = await app.inject({ method: 'POST', url: `${url}/${first.json().data.id}/copy`, headers });
    expect(copy.statusCode).toBe(403);
    expect(await assistantCount(db)).toBe(1);
    await app.inject({ method: 'DELETE', url: `${url}/${first.json().data.id}`, headers });
    expect((await app.inject({ method: 'POST', url, headers, payload: { name: '三号' } })).statusCode).toBe(
      200,
    );
  });
});

describe('publishing and versions', () => {
  it('publishes only complete drafts, tracks unpublished changes, lists versions and rolls back', async () => {
    const { app, db, a, headers, url } = await setup();
    const created = (await app.inject({ method: 'POST', url, headers, payload: { name: '回访' } })).json()
      .data;
    const assistantUrl = `${url}/${created.id}`;

    const empty = await app.inject({ method: 'POST', url: `${assistantUrl}/publish`, headers, payload: {} });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toBe('字段 config.openingLine：发布前请填写开场白');

    const save = (config: object) =>
      app.inject({ method: 'PUT', url: assistantUrl, headers, payload: { name: '回访', config } });
    await save({
      openingLine: '您好，{{客户姓名}}，我是小安。',
      systemPrompt: '向{{客户姓名}}介绍{{产品名称}}，优惠见{{活动}}。',
      variables: [{ name: '客户姓名', sample: '王先生' }],
    });
    const undeclared = await app.inject({ method: 'POST', url: `${assistantUrl}/publish`, headers });
    expect(undeclared.statusCode).toBe(400);
    expect(undeclared.json().message).toBe(
      '字段 config.variables：提示词或开场白引用了未声明的变量：产品名称、活动',
    );
    expect(await db.select().from(assistantVersions)).toHaveLength(0);

    const v1Config = {
      openingLine: '您好，{{客户姓名}}，我是小安。',
      systemPrompt: '向{{客户姓名}}介绍宽带。',
      variables: [{ name: '客户姓名', sample: '王先生' }],
    };
    await save(v1Config);
    const v1 = await app.inject({
      method: 'POST',
      url: `${assistantUrl}/publish`,
      headers,
      payload: { note: '首次上线' },
    });
    expect(v1.statusCode).toBe(200);
    expect(v1.json().data).toMatchObject({ publishedVersion: 1, hasUnpublishedChanges: false });

    await save({ ...v1Config, openingLine: '您好，{{客户姓名}}，我是新版小安。' });
    const changed = (await app.inject({ method: 'GET', url: assistantUrl, headers })).json().data;
    expect(changed).toMatchObject({ publishedVersion: 1, hasUnpublishedChanges: true });
    expect((await getPublishedVersion(db, a.projectId, created.id))?.config.openingLine).toBe(
      '您好，{{客户姓名}}，我是小安。',
    );
    const v2 = await app.inject({
      method: 'POST',
      url: `${assistantUrl}/publish`,
      headers,
      payload: { note: '换开场白' },
    });
    expect(v2.json().data).toMatchObject({ publishedVersion: 2, hasUnpublishedChanges: false });

    const rollback = await app.inject({
      method: 'POST',
      url: `${assistantUrl}/versions/1/rollback`,
      headers,
    });
    expect(rollback.statusCode).toBe(200);
    expect(rollback.json().data).toMatchObject({ publishedVersion: 3, hasUnpublishedChanges: false });
    expect(rollback.json().data.config.openingLine).toBe('您好，{{客户姓名}}，我是小安。');

    const versions = (await app.inject({ method: 'GET', url: `${assistantUrl}/versions`, headers })).json()
      .data;
    expect(versions.map((v: { version: number; note: string }) => [v.version, v.note])).toEqual([
      [3, '回滚至 v1'],
      [2, '换开场白'],
      [1, '首次上线'],
    ]);
    expect(versions[0].publishedBy).toBe('owner-a');
    expect(versions[1].config.openingLine).toBe('您好，{{客户姓名}}，我是新版小安。');

    const published = await getPublishedVersion(db, a.projectId, created.id);
    expect(published).toMatchObject({ version: 3, name: '回访' });
    expect((await getPublishedVersion(db, a.projectId, created.id, 2))?.config.openingLine).toContain('新版');
    expect(await getPublishedVersion(db, a.projectId, created.id, 9)).toBeNull();

    const missing = await app.inject({ method: 'POST', url: `${assistantUrl}/versions/9/rollback`, headers });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().message).toBe('版本 v9 不存在');
    const badVersion = await app.inject({
      method: 'POST',
      url: `${assistantUrl}/versions/abc/rollback`,
      headers,
    });
    expect(badVersion.statusCode).toBe(400);
    expect(badVersion.json().message).toMatch(/字段 version：版本号须为数字/);
  });

  it('copies an assistant as an unpublished draft named （副本）', async () => {
    const { app, headers, url } = await setup();
    const created = (
      await app.inject({
        method: 'POST',
        url,
        headers,
        payload: { name: '活动邀约', templateKey: 'event-invitation' },
      })
    ).json().data;
    await app.inject({ method: 'POST', url: `${url}/${created.id}/publish`, headers });
    const copy = await app.inject({ method: 'POST', url: `${url}/${created.id}/copy`, headers });
    expect(copy.statusCode).toBe(200);
    expect(copy.json().data).toMatchObject({
      name: '活动邀约（副本）',
      publishedVersion: null,
      hasUnpublishedChanges: true,
      templateKey: 'event-invitation',
    });
    expect(copy.json().data.config).toEqual(created.config);
  });
});

describe('tenant isolation', () => {
  it("forbids another project's member to read or change this project's assistants", async () => {
    const { app, db, headers, headersB, url } = await setup();
    const created = (
      await app.inject({
        method: 'POST',
        url,
        headers,
        payload: { name: '回访', templateKey: 'customer-follow-up' },
      })
    ).json().data;
    const one = `${url}/${created.id}`;
    const attempts = [
      app.inject({ method: 'GET', url, headers: headersB }),
      app.inject({ method: 'POST', url, headers: headersB, payload: { name: '入侵' } }),
      app.inject({ method: 'GET', url: one, headers: headersB }),
      app.inject({ method: 'PUT', url: one, headers: headersB, payload: { name: '改名' } }),
      app.inject({ method: 'DELETE', url: one, headers: headersB }),
      app.inject({ method: 'POST', url: `${one}/publish`, headers: headersB }),
      app.inject({ method: 'POST', url: `${one}/copy`, headers: headersB }),
      app.inject({ method: 'GET', url: `${one}/versions`, headers: headersB }),
      app.inject({ method: 'POST', url: `${one}/test-chat`, headers: headersB, payload: { messages: [] } }),
    ];
    for (const res of await Promise.all(attempts)) expect(res.statusCode).toBe(403);
    const [row] = await db.select().from(assistants);
    expect(row).toMatchObject({ name: '回访', publishedVersion: null, deletedAt: null });
    expect(await assistantCount(db)).toBe(1);
  });
});
