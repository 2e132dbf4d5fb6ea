import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedTwoProjects, seedUser } from '../../../test/helpers';
import { assistantVersions, auditLog, callFlowVersions, memberships, publishReviews } from '../../db/schema';

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
type Headers = Record<string, string>;
let t: TestApp;
let cast: Awaited<ReturnType<typeof seedTwoProjects>>;
let readonly: Headers;
let base: string;

beforeAll(async () => {
  t = await createTestApp();
  cast = await seedTwoProjects(t.db, t.app, 'rv-');
  const r = await seedUser(t.db, { email: 'rv-readonly@example.com', project: null });
  await t.db.insert(memberships).values({ projectId: cast.a.projectId, userId: r.userId, role: 'readonly' });
  readonly = await loginAs(t.app, 'rv-readonly@example.com');
  base = `/api/project/${cast.a.projectId}`;
});
afterAll(() => t?.app.close());

async function call(headers: Headers, method: 'GET' | 'POST' | 'PUT', path: string, payload?: object) {
  return t.app.inject({ method, url: `${base}${path}`, headers, ...(payload ? { payload } : {}) });
}
async function data(headers: Headers, method: 'GET' | 'POST' | 'PUT', path: string, payload?: object) {
  const res = await call(headers, method, path, payload);
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
  return res.json().data;
}

const config = (opening: string) => ({
  openingLine: opening,
  systemPrompt: '介绍宽带套餐。',
  variables: [],
});

async function publishedAssistant(name: string) {
  const created = await data(cast.owner, 'POST', '/assistants', { name, config: config('您好，我是小安。') });
  await data(cast.owner, 'POST', `/assistants/${created.id}/publish`, { note: '首次上线' });
  return created.id as string;
}

describe('发布审核 (script review)', () => {
  it('lets members publish directly until the project turns review on; then only owner/admin may', async () => {
    const id = await publishedAssistant('直接发布');
    await data(cast.memberHeaders, 'PUT', `/assistants/${id}`, {
      name: '直接发布',
      config: config('改过的开场白。'),
    });
    expect((await call(cast.memberHeaders, 'POST', `/assistants/${id}/publish`, {})).statusCode).toBe(200);

    // A member cannot switch review on; the owner can.
    expect((await call(cast.memberHeaders, 'PUT', '/review-settings', { required: true })).statusCode).toBe(
      403,
    );
    expect(await data(cast.owner, 'PUT', '/review-settings', { required: true })).toEqual({ required: true });
    const refused = await call(cast.memberHeaders, 'POST', `/assistants/${id}/publish`, {});
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toContain('请提交审核');
    const rollback = await call(cast.memberHeaders, 'POST', `/assistants/${id}/versions/1/rollback`);
    expect(rollback.statusCode).toBe(403);
    // Owners still publish directly.
    expect((await call(cast.owner, 'POST', `/assistants/${id}/publish`, {})).statusCode).toBe(200);
    const [setting] = await t.db
      .select()
      .from(auditLog)
      .where(eq(auditLog.action, 'project.settings_changed'));
    expect(setting).toMatchObject({ actor: 'rv-owner@example.com', summary: '开启发布审核' });
  });

  it('approving publishes the submitted snapshot, shows the diff against live, and records who did what', async () => {
    const id = await publishedAssistant('回访助手');
    await data(cast.memberHeaders, 'PUT', `/assistants/${id}`, {
      name: '回访助手',
      config: config('您好，我是新版小安。'),
    });
    const submitted = await data(cast.memberHeaders, 'POST', '/reviews', {
      kind: 'assistant',
      targetId: id,
      note: '改开场白',
    });
    expect(submitted).toMatchObject({ status: 'pending', submittedBy: 'rv-member', baseVersion: 1 });

    // The member keeps editing after submitting: approval must publish what was submitted.
    await data(cast.memberHeaders, 'PUT', `/assistants/${id}`, {
      name: '回访助手',
      config: config('还没提交的草稿。'),
    });

    const detail = await data(cast.owner, 'GET', `/reviews/${submitted.id}`);
    expect(detail.liveVersion).toBe(1);
    expect(detail.changes).toEqual([
      expect.objectContaining({
        path: 'config.openingLine',
        label: '开场白',
        kind: 'changed',
        before: '您好，我是小安。',
        after: '您好，我是新版小安。',
      }),
    ]);

    // Members and read-only cannot decide.
    expect((await call(cast.memberHeaders, 'POST', `/reviews/${submitted.id}/approve`, {})).statusCode).toBe(
      403,
    );
    expect((await call(readonly, 'POST', `/reviews/${submitted.id}/approve`, {})).statusCode).toBe(403);

    const approved = await data(cast.owner, 'POST', `/reviews/${submitted.id}/approve`, { comment: '可以' });
    expect(approved).toMatchObject({ status: 'approved', decidedBy: 'rv-owner', publishedVersion: 2 });
    const [v2] = await t.db
      .select()
      .from(assistantVersions)
      .where(eq(assistantVersions.reviewId, submitted.id));
    expect((v2!.config as { openingLine: string }).openingLine).toBe('您好，我是新版小安。');
    const assistant = await data(cast.owner, 'GET', `/assistants/${id}`);
    expect(assistant.config.openingLine).toBe('还没提交的草稿。');
    expect(assistant.publishedVersion).toBe(2);

    const versions = await data(cast.owner, 'GET', `/assistants/${id}/versions`);
    expect(versions[0]).toMatchObject({ version: 2, publishedBy: 'rv-owner', submittedBy: 'rv-member' });
    expect(versions[1]).toMatchObject({ version: 1, submittedBy: null });

    // Deciding twice is refused.
    expect(
      (await call(cast.owner, 'POST', `/reviews/${submitted.id}/reject`, { comment: '晚了' })).statusCode,
    ).toBe(409);
    const actions = (await t.db.select().from(auditLog).where(eq(auditLog.targetId, id))).map(
      (e) => e.action,
    );
    expect(actions).toEqual(expect.arrayContaining(['review.submitted', 'review.approved']));
  });

  it('rejects with a required comment, replaces an earlier pending submission, and reviews flows too', async () => {
    const flow = await data(cast.owner, 'POST', '/flows', { name: '热线' });
    const graph = (text: string) => ({
      nodes: [
        { id: 'start', type: 'start', name: '', position: { x: 0, y: 0 }, data: {} },
        { id: 'hello', type: 'play', name: '欢迎语', position: { x: 0, y: 0 }, data: { text } },
        { id: 'bye', type: 'hangup', name: '', position: { x: 0, y: 0 }, data: {} },
      ],
      edges: [
        { id: 'e1', source: 'start', sourceHandle: 'next', target: 'hello' },
        { id: 'e2', source: 'hello', sourceHandle: 'next', target: 'bye' },
      ],
    });
    await data(cast.memberHeaders, 'PUT', `/flows/${flow.id}/draft`, { graph: graph('您好') });
    const first = await data(cast.memberHeaders, 'POST', '/reviews', { kind: 'flow', targetId: flow.id });
    expect(first.baseVersion).toBeNull();
    await data(cast.memberHeaders, 'PUT', `/flows/${flow.id}/draft`, { graph: graph('您好，欢迎致电') });
    const second = await data(cast.memberHeaders, 'POST', '/reviews', { kind: 'flow', targetId: flow.id });
    expect((await data(cast.owner, 'GET', `/reviews/${first.id}`)).status).toBe('withdrawn');

    const noReason = await call(cast.owner, 'POST', `/reviews/${second.id}/reject`, { comment: ' ' });
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toContain('驳回原因');
    const detail = await data(cast.owner, 'GET', `/reviews/${second.id}`);
    // Never published: the whole graph is new.
    expect(detail.changes.map((c: { path: string }) => c.path)).toEqual(
      expect.arrayContaining(['nodes[hello]', 'edges[e1]']),
    );
    const rejected = await data(cast.owner, 'POST', `/reviews/${second.id}/reject`, {
      comment: '欢迎语太短',
    });
    expect(rejected).toMatchObject({ status: 'rejected', comment: '欢迎语太短' });
    expect(
      await t.db.select().from(callFlowVersions).where(eq(callFlowVersions.flowId, flow.id)),
    ).toHaveLength(0);

    const third = await data(cast.memberHeaders, 'POST', '/reviews', {
      kind: 'flow',
      targetId: flow.id,
      note: '再试',
    });
    await data(cast.owner, 'POST', `/reviews/${third.id}/approve`, {});
    const versions = await data(cast.owner, 'GET', `/flows/${flow.id}/versions`);
    expect(versions[0]).toMatchObject({
      version: 1,
      publishedByName: 'rv-owner',
      submittedByName: 'rv-member',
      live: true,
    });

    const pending = await data(cast.owner, 'GET', '/reviews?status=rejected&kind=flow');
    expect(pending.items.map((r: { id: string }) => r.id)).toEqual([second.id]);
  });

  it('refuses a draft that could not be published, and keeps projects apart', async () => {
    const created = await data(cast.owner, 'POST', '/assistants', { name: '空白' });
    const refused = await call(cast.memberHeaders, 'POST', '/reviews', {
      kind: 'assistant',
      targetId: created.id,
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toContain('开场白');
    expect(
      await t.db.select().from(publishReviews).where(eq(publishReviews.targetId, created.id)),
    ).toHaveLength(0);

    const id = await publishedAssistant('隔离');
    const review = await data(cast.memberHeaders, 'POST', '/reviews', { kind: 'assistant', targetId: id });
    const other = `/api/project/${cast.b.projectId}`;
    // Another project's path: 403; this project's review through another project: 404.
    expect(
      (await t.app.inject({ method: 'GET', url: `${base}/reviews/${review.id}`, headers: cast.outsider }))
        .statusCode,
    ).toBe(403);
    const through = await t.app.inject({
      method: 'POST',
      url: `${other}/reviews/${review.id}/approve`,
      headers: cast.outsider,
      payload: {},
    });
    expect(through.statusCode).toBe(404);
    // Submitting another project's assistant through one's own project: 404.
    const foreign = await t.app.inject({
      method: 'POST',
      url: `${other}/reviews`,
      headers: cast.outsider,
      payload: { kind: 'assistant', targetId: id },
    });
    expect(foreign.statusCode).toBe(404);
  });
});
