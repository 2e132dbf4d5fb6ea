import type { CallList, TaskSummary } from '@callpilot/contracts';
import { expect } from 'vitest';
import { login } from './server';

/** The demo project's API as its owner: for set-up and checks the console is not under test for. */
export type ProjectApi = {
  projectId: string;
  headers: Record<string, string>;
  /** Calls `/api/project/<id><path>` and answers the envelope's data; throws with the body otherwise. */
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
  get<T>(path: string): Promise<T>;
};

/** Logs in and opens the first project of the user (the demo owner's demo project). */
export async function openProjectApi(baseUrl: string, email: string, password: string): Promise<ProjectApi> {
  const token = await login(baseUrl, email, password);
  const headers = { authorization: `Bearer ${token}` };
  const me = (await (await fetch(`${baseUrl}/api/user/current`, { headers })).json()) as {
    data: { projects: { id: string }[] };
  };
  const projectId = me.data.projects[0]!.id;
  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${baseUrl}/api/project/${projectId}${path}`, {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = (await res.json()) as { data: T; message?: string };
    if (!res.ok) throw new Error(`${method} ${path} failed (${res.status}): ${JSON.stringify(json)}`);
    return json.data;
  };
  return { projectId, headers, call, get: (path) => call('GET', path) };
}

// The demo project's background content (apps/server/src/modules/calls/demo-calls.ts and
// apps/server/src/modules/tasks/demo-tasks.ts): 200 calls, then three tasks dialled by the dialer.
export const DEMO_ASSISTANT = '宽带客户回访';
export const DEMO_CALLS = 200;
export const DEMO_TASKS = 3;

/**
 * The demo history (its calls, then its tasks dialled by a dialer on a simulated clock) is produced
 * in the background after the server starts: until it is over the server is busy with it, list
 * totals still grow and the task list still changes. Settled here, so a test measures the console
 * and the live engine, not the seeding. Recordings may still be mixing: the newest call's first.
 */
export async function demoSettled(api: ProjectApi, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let state = 'no answer yet';
  while (Date.now() < deadline) {
    const calls = [];
    for (let page = 1; ; page++) {
      const list = await api.get<CallList>(`/calls?pageSize=100&page=${page}`);
      calls.push(...list.items);
      if (calls.length >= list.total || list.items.length === 0) break;
    }
    const live = calls.filter((c) => c.status !== 'ended').length;
    const tasks = await api.get<{ items: TaskSummary[] }>('/tasks?pageSize=100');
    const demo = tasks.items.filter((t) => t.id.startsWith('demo-task-'));
    const tasksDone =
      demo.length >= DEMO_TASKS && demo.every((t) => t.state !== 'running' && t.state !== 'pending');
    state =
      `${calls.length} calls, ${live} still live, demo tasks ` +
      JSON.stringify(demo.map((t) => [t.name, t.state, `${t.counts.finished}/${t.counts.total}`]));
    if (calls.length >= DEMO_CALLS && live === 0 && tasksDone) return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
  throw new Error(`the demo project did not settle in ${timeoutMs} ms: ${state}`);
}

/** A China-time calendar date (YYYY-MM-DD), as task dates are written. */
export const chinaDate = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 10);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Creates, fills (24 numbers from `phonePrefix`) and starts a task of the demo's published
 * assistant that may call at any hour, at concurrency 6, retrying an interrupted, unanswered or
 * busy call once a minute later: what the fault tests cut off mid-way. Answers the task's id.
 */
export async function startRetryingTask(api: ProjectApi, name: string, phonePrefix: string): Promise<string> {
  const assistants = await api.get<{ items: { id: string; publishedVersion: number | null }[] }>(
    '/assistants?pageSize=50',
  );
  const assistant = assistants.items.find((a) => a.publishedVersion)!;
  const now = Date.now();
  const retry = { maxRetries: 1, intervalMinutes: 1 };
  const task = await api.call<{ id: string }>('POST', '/tasks', {
    name,
    assistantId: assistant.id,
    startDate: chinaDate(now - 24 * 3600_000),
    endDate: chinaDate(now + 30 * 24 * 3600_000),
    windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }],
    skipHolidays: false,
    concurrency: 6,
    dailyCapPerNumber: 0,
    retryRules: { interrupted: retry, no_answer: retry, busy: retry },
  });
  await importAndStart(api, task.id, phoneRange(phonePrefix, 24));
  return task.id;
}

/** `count` numbers: `prefix` followed by 0000, 0001, … */
export const phoneRange = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);

/** Pastes the numbers into the task's contact list with the proposed mapping, then starts it. */
export async function importAndStart(api: ProjectApi, taskId: string, phones: string[]): Promise<void> {
  const preview = await api.call<{ importId: string; mapping: unknown }>(
    'POST',
    `/tasks/${taskId}/imports/paste`,
    {
      text: phones.join('\n'),
    },
  );
  await api.call('POST', `/tasks/${taskId}/imports/${preview.importId}/commit`, {
    importId: preview.importId,
    mapping: preview.mapping,
  });
  await api.call('POST', `/tasks/${taskId}/actions/start`);
}

/** Waits until the task has calls live and some already done: the moment to cut it off. */
export async function taskUnderWay(api: ProjectApi, taskId: string): Promise<void> {
  for (let i = 0; ; i++) {
    const detail = await api.get<TaskSummary & { activeCalls: number }>(`/tasks/${taskId}`);
    if (detail.activeCalls >= 3 && detail.counts.finished >= 1) return;
    if (i > 600) throw new Error('the task never got under way');
    await sleep(50);
  }
}

/** Waits for 已完成, reading through failures while the server or its database comes back. */
export async function taskCompleted(api: ProjectApi, taskId: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let counts: unknown = null;
  while (Date.now() < deadline) {
    const detail = await api.get<TaskSummary>(`/tasks/${taskId}`).catch(() => null);
    if (detail?.state === 'completed') return;
    counts = detail?.counts ?? counts;
    await sleep(100);
  }
  throw new Error(`the task did not complete: ${JSON.stringify(counts)}`);
}

export interface TaskOutcome {
  contacts: { id: string; status: string; attempts: number; skipReason: string | null }[];
  calls: { id: string; contactId: string; endReason: string; status: string }[];
}

/**
 * The task's contacts and calls once it completed, checked for what no fault may break: a final
 * state for every contact, never more attempts than the retry rules allow, exactly one ended call
 * record per attempt (none dialled twice, none lost).
 */
export async function checkedTaskOutcome(api: ProjectApi, taskId: string): Promise<TaskOutcome> {
  const contacts = (
    await api.get<{ items: TaskOutcome['contacts'] }>(`/tasks/${taskId}/contacts?pageSize=100`)
  ).items;
  const calls = (await api.get<{ items: TaskOutcome['calls'] }>(`/calls?taskId=${taskId}&pageSize=100`))
    .items;
  expect(contacts).toHaveLength(24);
  for (const contact of contacts) {
    expect(['done', 'failed', 'skipped']).toContain(contact.status);
    expect(contact.attempts).toBeLessThanOrEqual(2);
    const own = calls.filter((c) => c.contactId === contact.id).map((c) => c.id);
    expect(own.sort()).toEqual(Array.from({ length: contact.attempts }, (_, i) => `${contact.id}.${i + 1}`));
  }
  for (const c of calls) expect(c.status).toBe('ended');
  return { contacts, calls };
}
