import net from 'node:net';
import { type CallDetail, type FlowDetail, flowGraph, validateFlow } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs } from '../../test/helpers';
import { callFlowVersions } from '../db/schema';
import { ensureDemo } from '../modules/demo/demo.service';
import {
  DEMO_AGENT_NUMBER,
  DEMO_FLOW_NAME,
  DEMO_FLOW_NUMBER,
  demoMockBaseUrl,
  ensureDemoFlow,
} from '../modules/demo/demo-flow';
import { demoAssistant, findDemoProject, seedDemoFlowCalls } from './demo-calls';

/** A port nothing listens on yet: the app is told it is its own, then listens there. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let t: Awaited<ReturnType<typeof createTestApp>>;
let port: number;
let projectId: string;
let flowId: string;
let headers: Record<string, string>;
beforeAll(async () => {
  port = await freePort();
  t = await createTestApp({ env: { PORT: String(port) } });
  // Listening, as the server is when it seeds the demo: the hotline's bill lookups reach the mock.
  await t.app.listen({ port, host: '127.0.0.1' });
  await ensureDemo(t.db, { email: 'demo@example.com', password: 'demo-password' });
  projectId = (await findDemoProject(t.db, 'demo@example.com'))!.projectId;
  const assistant = (await demoAssistant(t.db, projectId))!;
  const options = { assistantId: assistant.id, baseUrl: demoMockBaseUrl({ PORT: port }) };
  flowId = (await ensureDemoFlow(t.db, projectId, options))!;
  // A second start leaves the hotline alone.
  expect(await ensureDemoFlow(t.db, projectId, options)).toBeNull();
  headers = await loginAs(t.app, 'demo@example.com', 'demo-password');
});
afterAll(() => t.app.close());

const api = async <T>(path: string): Promise<T> => {
  const res = await t.app.inject({ method: 'GET', url: `/api/project/${projectId}${path}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as T;
};

describe('the demo hotline', () => {
  it('is a published, valid flow answering its own number', async () => {
    const flow = await api<FlowDetail>(`/flows/${flowId}`);
    expect(flow).toMatchObject({ name: DEMO_FLOW_NAME, status: 'published', publishedVersion: 1 });
    expect(flow.numbers).toEqual([DEMO_FLOW_NUMBER]);
    // The server's own checks (references included) find nothing to fix, and neither does the editor's.
    expect(flow.issues.filter((i) => i.severity === 'error')).toEqual([]);
    const [version] = await t.db.select().from(callFlowVersions).where(eq(callFlowVersions.flowId, flowId));
    expect(validateFlow(flowGraph.parse(version!.graph), { flowId })).toEqual([]);
    const bill = flow.published?.nodes.find((n) => n.id === 'bill_lookup');
    expect(bill?.type === 'http' && bill.data.url).toBe(
      `http://127.0.0.1:${port}/api/demo-mock/broadband/bill?phone={{caller}}`,
    );
    expect(demoMockBaseUrl({ PORT: 3000, PUBLIC_BASE_URL: 'https://call.example.com/' })).toBe(
      'https://call.example.com',
    );
  });

  it('has inbound calls in its history that took the flow, each with its path', async () => {
    const made = await seedDemoFlowCalls(t.app.runtime.engine, t.db, projectId, { count: 10 });
    expect(made).toBe(10);
    expect(await seedDemoFlowCalls(t.app.runtime.engine, t.db, projectId, { count: 10 })).toBe(0);

    const list = await api<{ total: number; items: { id: string; calleeNumber: string }[] }>(
      '/calls?pageSize=100&direction=inbound',
    );
    expect(list.total).toBe(10);
    expect(new Set(list.items.map((c) => c.calleeNumber))).toEqual(new Set([DEMO_FLOW_NUMBER]));
    const details = await Promise.all(list.items.map((c) => api<CallDetail>(`/calls/${c.id}`)));
    const paths = details.map((d) => d.flow?.steps.map((s) => s.nodeId) ?? []);
    for (const [i, detail] of details.entries()) {
      expect(detail.flow).toMatchObject({ flowId, flowName: DEMO_FLOW_NAME, flowVersion: 1 });
      expect(paths[i]!.slice(0, 3)).toEqual(['start', 'greeting', 'hours']);
    }
    const took = (nodeId: string, exit?: string) =>
      details.filter((d) =>
        d.flow?.steps.some((s) => s.nodeId === nodeId && (exit === undefined || s.exit === exit)),
      );
    // 1 账单查询 reached the mock endpoint and read the bill out.
    const bills = took('bill_lookup', 'success');
    expect(bills.length).toBeGreaterThan(0);
    expect(bills[0]!.flow!.steps.find((s) => s.nodeId === 'bill_lookup')!.output).toMatchObject({
      amount: '128.00',
      due_date: '2026-12-05',
    });
    // 2 报修 talked to the assistant, 0 人工 reached the desk (or left a message when it was busy).
    expect(took('repair').length).toBeGreaterThan(0);
    expect(details.some((d) => d.endReason === 'transferred' && d.transferNumber === DEMO_AGENT_NUMBER)).toBe(
      true,
    );
    expect(took('agent_voicemail').length).toBeGreaterThan(0);
    // No key, wrong keys and after-hours callers each end where the flow says.
    expect(took('menu', 'timeout').length).toBeGreaterThan(0);
    expect(took('menu', 'invalid').length).toBeGreaterThan(0);
    expect(took('after_hours').length).toBeGreaterThan(0);

    // The canvas statistics of the published flow count them.
    const from = new Date(Date.now() - 31 * 24 * 3600_000).toISOString();
    const stats = await api<{ calls: number; nodes: { nodeId: string; reached: number }[] }>(
      `/flows/${flowId}/stats?from=${encodeURIComponent(from)}`,
    );
    expect(stats.calls).toBe(10);
    expect(stats.nodes.find((n) => n.nodeId === 'greeting')?.reached).toBe(10);
  }, 30_000);
});
