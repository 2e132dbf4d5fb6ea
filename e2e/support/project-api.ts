import type { CallList, TaskSummary } from '@callpilot/contracts';
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
