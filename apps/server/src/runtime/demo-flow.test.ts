import { flowGraph, validateFlow } from '@callpilot/contracts';
import { eq } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp } from '../../test/helpers';
import { callFlows, callFlowVersions, projectNumbers } from '../db/schema';
import { ensureDemo } from '../modules/demo/demo.service';
import { DEMO_FLOW_NAME, DEMO_FLOW_NUMBER, demoMockBaseUrl, ensureDemoFlow } from '../modules/demo/demo-flow';
import { demoAssistant, findDemoProject } from './demo-calls';

let t: Awaited<ReturnType<typeof createTestApp>> | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('the demo hotline flow', () => {
  it('is published, valid and answers its own number, once', async () => {
    t = await createTestApp();
    await ensureDemo(t.db, { email: 'demo@example.com', password: 'demo-password' });
    const demo = (await findDemoProject(t.db, 'demo@example.com'))!;
    const assistant = (await demoAssistant(t.db, demo.projectId))!;
    const options = { assistantId: assistant.id, baseUrl: demoMockBaseUrl({ PORT: 3000 }) };
    const flowId = await ensureDemoFlow(t.db, demo.projectId, options);
    expect(flowId).not.toBeNull();
    // A second start leaves it alone.
    expect(await ensureDemoFlow(t.db, demo.projectId, options)).toBeNull();

    const [flow] = await t.db.select().from(callFlows).where(eq(callFlows.projectId, demo.projectId));
    expect(flow).toMatchObject({
      id: flowId,
      name: DEMO_FLOW_NAME,
      publishedVersion: 1,
      draftChanged: false,
    });
    const [version] = await t.db.select().from(callFlowVersions).where(eq(callFlowVersions.flowId, flowId!));
    const graph = flowGraph.parse(version!.graph);
    expect(validateFlow(graph, { flowId: flowId! }).filter((i) => i.severity === 'error')).toEqual([]);
    const http = graph.nodes.find((n) => n.type === 'http');
    expect(http?.type === 'http' && http.data.url).toBe(
      'http://127.0.0.1:3000/api/demo-mock/broadband/bill?phone={{caller}}',
    );
    const [number] = await t.db
      .select()
      .from(projectNumbers)
      .where(eq(projectNumbers.number, DEMO_FLOW_NUMBER));
    expect(number).toMatchObject({
      projectId: demo.projectId,
      inboundFlowId: flowId,
      inboundAssistantId: null,
    });
    // Behind a public address the flow calls the mock through it.
    expect(demoMockBaseUrl({ PORT: 3000, PUBLIC_BASE_URL: 'https://call.example.com/' })).toBe(
      'https://call.example.com',
    );
  });
});
