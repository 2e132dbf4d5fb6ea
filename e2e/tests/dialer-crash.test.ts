import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { login, type RunningServer, startServer, stopServer, tempDir } from '../support/server';

const running: RunningServer[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of running) await stopServer(s, 'SIGKILL');
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const chinaDate = (ms: number) => new Date(ms + 8 * 3600_000).toISOString().slice(0, 10);

describe('the dialer survives kill -9 of the server', () => {
  it('restarts, closes cut-off calls as 系统中断, retries them, and never exceeds any contact’s attempts', async () => {
    const dir = tempDir('dialer-crash');
    dirs.push(dir);
    // Simulated calls run 50× faster, so a task of minutes of calls takes seconds.
    const env = { DATA_DIR: dir, DEMO_PASSWORD: 'crash-pass', SIM_TIME_SCALE: '50' };
    const first = await startServer(env);
    running.push(first);
    const token = await login(first.url, 'demo@example.com', 'crash-pass');
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const me = (await (await fetch(`${first.url}/api/user/current`, { headers })).json()) as {
      data: { projects: { id: string }[] };
    };
    const projectId = me.data.projects[0]!.id;
    const api = (server: RunningServer) => async (method: string, url: string, body?: unknown) => {
      const res = await fetch(`${server.url}/api/project/${projectId}${url}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      // biome-ignore lint/suspicious/noExplicitAny: answers of several routes, checked field by field below
      const json = (await res.json()) as { data: any; message: string };
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${json.message}`);
      return json.data;
    };
    let call = api(first);
    const assistants = await call('GET', '/assistants?pageSize=50');
    const assistant = assistants.items.find((a: { publishedVersion: number | null }) => a.publishedVersion);
    const now = Date.now();
    const task = await call('POST', '/tasks', {
      name: '崩溃恢复',
      assistantId: assistant.id,
      startDate: chinaDate(now - 24 * 3600_000),
      endDate: chinaDate(now + 30 * 24 * 3600_000),
      windows: [{ days: [1, 2, 3, 4, 5, 6, 7], start: '00:00', end: '24:00' }],
      skipHolidays: false,
      concurrency: 6,
      dailyCapPerNumber: 0,
      retryRules: {
        interrupted: { maxRetries: 1, intervalMinutes: 1 },
        no_answer: { maxRetries: 1, intervalMinutes: 1 },
        busy: { maxRetries: 1, intervalMinutes: 1 },
      },
    });
    const phones = Array.from({ length: 24 }, (_, i) => `1390000${String(i).padStart(4, '0')}`);
    const preview = await call('POST', `/tasks/${task.id}/imports/paste`, { text: phones.join('\n') });
    await call('POST', `/tasks/${task.id}/imports/${preview.importId}/commit`, {
      importId: preview.importId,
      mapping: preview.mapping,
    });
    await call('POST', `/tasks/${task.id}/actions/start`);

    // Kill the server while calls are live and some are already done.
    for (let i = 0; ; i++) {
      const detail = await call('GET', `/tasks/${task.id}`);
      if (detail.activeCalls >= 3 && detail.counts.finished >= 1) break;
      if (i > 600) throw new Error('the task never got under way');
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopServer(first, 'SIGKILL');

    const second = await startServer({ ...env, PORT: String(first.port) });
    running.push(second);
    call = api(second);
    for (let i = 0; ; i++) {
      const detail = await call('GET', `/tasks/${task.id}`);
      if (detail.state === 'completed') break;
      if (i > 1200)
        throw new Error(`the task did not complete after the restart: ${JSON.stringify(detail.counts)}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    const contacts = (await call('GET', `/tasks/${task.id}/contacts?pageSize=100`)).items;
    const calls = (await call('GET', `/calls?taskId=${task.id}&pageSize=100`)).items as Array<{
      id: string;
      contactId: string;
      endReason: string;
      status: string;
    }>;
    expect(contacts).toHaveLength(24);
    for (const contact of contacts) {
      expect(['done', 'failed', 'skipped']).toContain(contact.status);
      expect(contact.attempts).toBeLessThanOrEqual(2);
      const own = calls.filter((c) => c.contactId === contact.id).map((c) => c.id);
      expect(own.sort()).toEqual(
        Array.from({ length: contact.attempts }, (_, i) => `${contact.id}.${i + 1}`),
      );
    }
    for (const c of calls) expect(c.status).toBe('ended');
    const interrupted = calls.filter((c) => c.endReason === 'interrupted');
    expect(interrupted.length).toBeGreaterThanOrEqual(1);
    // Each cut-off first attempt was called again, unless the callee had opted out before the cut:
    // then the number is on the do-not-call list and the retry is skipped, as it must be.
    for (const c of interrupted.filter((c) => c.id.endsWith('.1'))) {
      const contact = contacts.find((x: { id: string }) => x.id === c.contactId);
      if (contact.status === 'skipped') {
        expect(contact.skipReason).toBe('免打扰号码');
        continue;
      }
      expect(calls.some((other) => other.id === `${c.contactId}.2`)).toBe(true);
    }
  }, 240_000);
});
