import { randomUUID } from 'node:crypto';
import { type FlowEdge, type FlowGraph, flowGraph } from '@callpilot/contracts';
import { and, eq } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { callFlows, callFlowVersions, projectNumbers } from '../../db/schema';
import type { Env } from '../../env';
import { DEMO_MOCK_BILL_PATH } from './demo-mock.routes';

export const DEMO_FLOW_NAME = '星河宽带客服热线';
/** The demo's IVR hotline: a Shanghai landline next to the assistant's service line. */
export const DEMO_FLOW_NUMBER = '02160881001';
/** The demo's human desk, where 0 (人工) and the assistant's transfer requests go. */
export const DEMO_AGENT_NUMBER = '4008006688';

/**
 * The mock endpoint as the flow calls it: the public address when the operator set one, else
 * loopback to this server's port (the flow HTTP guard lets exactly that through).
 */
export const demoMockBaseUrl = (env: Pick<Env, 'PUBLIC_BASE_URL' | 'PORT'>) =>
  (env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.PORT}`).replace(/\/+$/, '');

/**
 * 星河宽带客服热线: greeting; business hours (Mon–Sat 08:00–20:00, public holidays closed);
 * a menu with 1 账单查询 (an HTTP lookup of the caller's bill, with an apology when the system
 * is down), 2 报修 (the demo assistant) and 0 人工 (the human desk, a voicemail when nobody
 * answers); no or wrong keys hang up; after hours the caller leaves a message.
 */
export function demoFlowGraph(options: { assistantId: string; baseUrl: string }): FlowGraph {
  const edges: FlowEdge[] = [];
  const link = (source: string, sourceHandle: string, target: string) =>
    edges.push({ id: `${source}-${sourceHandle.replace(':', '-')}-${target}`, source, sourceHandle, target });
  link('start', 'next', 'greeting');
  link('greeting', 'next', 'hours');
  link('hours', 'branch:open', 'menu');
  link('hours', 'else', 'after_hours');
  link('menu', 'key:1', 'bill_lookup');
  link('menu', 'key:2', 'repair');
  link('menu', 'key:0', 'agent');
  link('menu', 'invalid', 'bye_no_choice');
  link('menu', 'timeout', 'bye_no_choice');
  link('bill_lookup', 'success', 'bill_play');
  link('bill_lookup', 'failure', 'bill_sorry');
  link('bill_play', 'next', 'bye_bill');
  link('bill_sorry', 'next', 'bye_bill_failed');
  link('repair', 'next', 'bye_repair');
  link('repair', 'transfer', 'agent');
  link('agent', 'busy', 'agent_voicemail');
  link('agent', 'no_answer', 'agent_voicemail');
  link('agent', 'failed', 'agent_voicemail');
  link('agent_voicemail', 'next', 'bye_message');
  link('after_hours', 'next', 'bye_after_hours');

  const at = (x: number, y: number) => ({ x: x * 260, y: y * 150 });
  const hangup = (id: string, name: string, text: string, reason: string, x: number) => ({
    id,
    type: 'hangup' as const,
    name,
    position: at(x, 6),
    data: { text, reason },
  });
  return flowGraph.parse({
    nodes: [
      { id: 'start', type: 'start', name: '开始', position: at(2, 0), data: {} },
      {
        id: 'greeting',
        type: 'play',
        name: '欢迎语',
        position: at(2, 1),
        data: { text: '您好，欢迎致电星河宽带客服热线。', interruptible: true },
      },
      {
        id: 'hours',
        type: 'condition',
        name: '营业时间',
        position: at(2, 2),
        data: {
          branches: [
            {
              id: 'open',
              name: '营业时间内',
              match: 'all',
              rules: [
                {
                  kind: 'business_hours',
                  windows: [{ days: [1, 2, 3, 4, 5, 6], start: '08:00', end: '20:00' }],
                  holidays: 'closed',
                },
              ],
            },
          ],
        },
      },
      {
        id: 'menu',
        type: 'menu',
        name: '主菜单',
        position: at(1, 3),
        data: {
          prompt: '查询账单请按 1，故障报修请按 2，人工服务请按 0。',
          options: [
            { key: '1', label: '账单查询' },
            { key: '2', label: '报修' },
            { key: '0', label: '人工' },
          ],
          timeoutSec: 5,
          maxRetries: 2,
        },
      },
      {
        id: 'bill_lookup',
        type: 'http',
        name: '查询账单',
        position: at(0, 4),
        data: {
          method: 'GET',
          url: `${options.baseUrl}${DEMO_MOCK_BILL_PATH}?phone={{caller}}`,
          timeoutMs: 3000,
          retries: 1,
          mappings: [
            { variable: 'amount', path: 'data.amount' },
            { variable: 'due_date', path: 'data.dueDate' },
            { variable: 'plan', path: 'data.plan' },
          ],
        },
      },
      {
        id: 'bill_play',
        type: 'play',
        name: '播报账单',
        position: at(0, 5),
        data: {
          text: '您本月账单 {{amount}} 元，请于 {{due_date}} 前缴清。您当前的套餐是 {{plan}}。',
          interruptible: false,
        },
      },
      {
        id: 'bill_sorry',
        type: 'play',
        name: '账单查询失败',
        position: at(-1, 5),
        data: {
          text: '抱歉，账单系统暂时无法查询，请稍后再拨或通过星河宽带 App 查看。',
          interruptible: false,
        },
      },
      {
        id: 'repair',
        type: 'assistant',
        name: '报修',
        position: at(1, 4),
        data: {
          assistantId: options.assistantId,
          // The demo assistant's variables, as a caller of the hotline fills them.
          variables: [
            { name: '客户姓名', value: '机主' },
            { name: '公司名称', value: '星河宽带' },
            { name: '产品名称', value: '星河宽带' },
          ],
        },
      },
      {
        id: 'agent',
        type: 'transfer',
        name: '人工客服',
        position: at(2, 4),
        data: {
          target: DEMO_AGENT_NUMBER,
          callerId: 'caller',
          ringTimeoutSec: 30,
          prompt: '正在为您转接人工客服，请稍候。',
        },
      },
      {
        id: 'agent_voicemail',
        type: 'voicemail',
        name: '人工忙时留言',
        position: at(2, 5),
        data: { prompt: '人工客服暂时无法接听，请在提示音后留言，我们会尽快回电。', maxSeconds: 60 },
      },
      {
        id: 'after_hours',
        type: 'voicemail',
        name: '非工作时间留言',
        position: at(3, 3),
        data: {
          prompt:
            '现在是非工作时间，我们的服务时间是周一至周六早八点到晚八点。请在提示音后留言，我们将在工作时间回电。',
          maxSeconds: 60,
        },
      },
      hangup('bye_bill', '挂机（账单已播报）', '感谢您的来电，再见。', '账单已播报', -0.5),
      hangup('bye_bill_failed', '挂机（账单查询失败）', '', '账单查询失败', -1.5),
      hangup('bye_repair', '挂机（报修完成）', '感谢您的来电，再见。', '报修完成', 0.5),
      hangup('bye_no_choice', '挂机（未选择）', '抱歉，没有收到有效的选择，再见。', '未选择', 1.5),
      hangup('bye_message', '挂机（已留言）', '留言已收到，再见。', '人工忙时留言', 2.5),
      hangup('bye_after_hours', '挂机（非工作时间）', '留言已收到，再见。', '非工作时间', 3.5),
    ],
    edges,
    settings: {},
  });
}

/**
 * The demo hotline: the flow, published as version 1, and its number. Once the number exists
 * the demo is left alone, so an owner who deletes or rebinds it does not get it back on the
 * next start; installations whose demo predates flows get it on their first start with them.
 * Returns the flow's id, or null when the demo already had its hotline.
 */
export async function ensureDemoFlow(
  db: Database,
  projectId: string,
  options: { assistantId: string; baseUrl: string },
): Promise<string | null> {
  const [number] = await db
    .select({ number: projectNumbers.number })
    .from(projectNumbers)
    .where(and(eq(projectNumbers.projectId, projectId), eq(projectNumbers.number, DEMO_FLOW_NUMBER)))
    .limit(1);
  if (number) return null;
  const graph = demoFlowGraph(options);
  const flowId = randomUUID();
  return db.transaction(async (tx) => {
    await tx.insert(callFlows).values({
      id: flowId,
      projectId,
      name: DEMO_FLOW_NAME,
      description: '演示：欢迎语、营业时间判断、按键菜单（1 账单查询 / 2 报修 / 0 人工）、非工作时间留言。',
      draft: graph,
      publishedVersion: 1,
      draftChanged: false,
    });
    await tx.insert(callFlowVersions).values({ flowId, version: 1, graph, note: '演示项目初始版本' });
    // Another project may already answer this number (it is unique among bound numbers): then
    // the demo keeps its flow unbound rather than failing its start.
    const bound = await tx
      .insert(projectNumbers)
      .values({
        projectId,
        number: DEMO_FLOW_NUMBER,
        label: '星河宽带客服热线（演示）',
        inboundFlowId: flowId,
      })
      .onConflictDoNothing()
      .returning({ number: projectNumbers.number });
    if (bound.length === 0)
      await tx
        .insert(projectNumbers)
        .values({ projectId, number: DEMO_FLOW_NUMBER, label: '星河宽带客服热线（演示）' })
        .onConflictDoNothing();
    return flowId;
  });
}
