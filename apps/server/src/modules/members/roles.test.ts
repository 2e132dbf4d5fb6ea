import type { ProjectRole } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs, seedUser } from '../../../test/helpers';
import { memberships } from '../../db/schema';
import { seedDemoContent } from '../demo/demo-content';

/**
 * What each role may do, one representative write of each area, against the real routes. The
 * expected status of an allowed write is the route's own answer (200, or 409 for a task with no
 * contacts): what matters is that permission let it through or stopped it with 403.
 */
const APP_SECRET = 'test-app-secret-0123456789abcdef-0123';
const ROLES: ProjectRole[] = ['owner', 'admin', 'member', 'readonly'];

let t: Awaited<ReturnType<typeof createTestApp>>;
let projectId = '';
let taskId = '';
const headers = {} as Record<ProjectRole, { authorization: string }>;

beforeAll(async () => {
  t = await createTestApp({ env: { APP_SECRET } });
  const owner = await seedUser(t.db, { email: 'owner@example.com' });
  projectId = owner.projectId;
  const demo = await seedDemoContent(t.db, projectId, owner.userId);
  for (const role of ROLES.slice(1)) {
    const u = await seedUser(t.db, { email: `${role}@example.com`, project: null });
    await t.db.insert(memberships).values({ projectId, userId: u.userId, role });
  }
  for (const role of ROLES) headers[role] = await loginAs(t.app, `${role}@example.com`);
  const task = await t.app.inject({
    method: 'POST',
    url: `/api/project/${projectId}/tasks`,
    headers: headers.owner,
    payload: {
      name: '回访任务',
      assistantId: demo.publishedAssistantId,
      startDate: '2026-03-01',
      endDate: '2026-03-31',
      windows: [{ days: [1, 2, 3, 4, 5], start: '09:00', end: '20:00' }],
      concurrency: 1,
    },
  });
  expect(task.statusCode, task.body).toBe(200);
  taskId = task.json().data.id;
}, 60_000);
afterAll(async () => {
  await t?.app.close();
});

let n = 0;
const unique = () => ++n;

type Write = {
  area: string;
  method: 'POST' | 'PUT';
  path: () => string;
  payload: () => object;
  allowed: Record<ProjectRole, number>;
};

const managers = { owner: 200, admin: 200, member: 403, readonly: 403 };
const writers = { owner: 200, admin: 200, member: 200, readonly: 403 };

const WRITES: Write[] = [
  {
    area: '小助手新建',
    method: 'POST',
    path: () => 'assistants',
    payload: () => ({ name: `助手${unique()}`, use: 'outbound', templateKey: 'customer-follow-up' }),
    allowed: writers,
  },
  {
    area: '任务启动',
    method: 'POST',
    path: () => `tasks/${taskId}/actions/start`,
    payload: () => ({}),
    // No contacts yet: the task's own refusal (409) shows the role was let through.
    allowed: { owner: 409, admin: 409, member: 409, readonly: 403 },
  },
  {
    area: '线路新建',
    method: 'POST',
    path: () => 'trunks',
    payload: () => ({
      name: `线路${unique()}`,
      kind: 'register',
      registrar: 'sip.carrier.example.com:5060',
      username: `0216088${String(unique()).padStart(4, '0')}`,
      password: 'trunk-pass-1',
    }),
    allowed: managers,
  },
  {
    area: 'API 密钥新建',
    method: 'POST',
    path: () => 'api-keys',
    payload: () => ({
      name: `密钥${unique()}`,
      scopes: { calls: 'read' },
      ipAllowlist: [],
      rateLimitPerMinute: 60,
    }),
    allowed: managers,
  },
  {
    area: 'Webhook 新建',
    method: 'POST',
    path: () => 'webhooks',
    payload: () => ({ url: `https://hooks.example.com/${unique()}`, events: ['call.ended'] }),
    allowed: managers,
  },
  {
    area: '短信服务商设置',
    method: 'PUT',
    path: () => 'sms/settings',
    payload: () => ({ provider: 'outbox', dailyCapPerNumber: 5 }),
    allowed: managers,
  },
  {
    area: '邀请成员',
    method: 'POST',
    path: () => 'invitations',
    payload: () => ({ email: `new${unique()}@example.com`, role: 'member' }),
    allowed: managers,
  },
];

describe('roles × writes', { timeout: 30_000 }, () => {
  for (const w of WRITES) {
    for (const role of ROLES) {
      it(`${w.area} as ${role} → ${w.allowed[role]}`, async () => {
        const res = await t.app.inject({
          method: w.method,
          url: `/api/project/${projectId}/${w.path()}`,
          headers: headers[role],
          payload: w.payload(),
        });
        expect(res.statusCode, res.body).toBe(w.allowed[role]);
        if (res.statusCode === 403)
          expect(res.json().message).toMatch(/只读成员不能修改项目数据|仅项目所有者或管理员/);
        if (role === 'readonly') expect(res.json().message).toBe('只读成员不能修改项目数据');
      });
    }
  }

  it('read-only sees every list the console opens', async () => {
    for (const path of [
      'assistants',
      'tasks',
      'knowledge-bases',
      'flows',
      'members',
      'invitations',
      'balance-limit',
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/project/${projectId}/${path}`,
        headers: headers.readonly,
      });
      expect(res.statusCode, `${path}: ${res.body}`).toBe(200);
    }
    // A read sent as POST is marked read-only-safe.
    const balance = await t.app.inject({
      method: 'POST',
      url: `/api/project/${projectId}/balance`,
      headers: headers.readonly,
    });
    expect(balance.statusCode).toBe(200);
  });

  it('tells the console the current role', async () => {
    for (const role of ROLES) {
      const res = await t.app.inject({ method: 'GET', url: '/api/user/current', headers: headers[role] });
      expect(res.json().data).toMatchObject({ role, isOwnerOrAdmin: role === 'owner' || role === 'admin' });
    }
  });
});
