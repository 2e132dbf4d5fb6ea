import type { CallDetail, FlowGraph } from '@callpilot/contracts';
import { flowGraph } from '@callpilot/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSipTestApp, type SipTestApp } from '../../test/sip-app';
import {
  fillScenario,
  freeMediaPort,
  freeUdpPort,
  killSipps,
  runSipp,
  SIPP_PCAPS,
  sippOrWarn,
} from '../engine/telephony/sip/sipp-test-support';

/*
 * A call flow answering a real phone line: TELEPHONY=sip, an IP trunk whose peer is SIPp on
 * loopback, a number on it bound to a published flow (a menu: 1 账单, 2 报修). SIPp dials the
 * number, presses 2 (RFC 4733) over the menu prompt and waits for the flow to hang up; the call
 * record's path is the one the caller keyed.
 */
const HOST = '127.0.0.1';
const NUMBER = '02160881002';
const KEY_AWAIT_BYE = new URL('../engine/telephony/sip/testdata/sipp-key-await-bye.xml', import.meta.url)
  .pathname;

const menuFlow: FlowGraph = flowGraph.parse({
  nodes: [
    { id: 'start', type: 'start', name: '开始' },
    {
      id: 'menu',
      type: 'menu',
      name: '主菜单',
      data: {
        prompt: '查询账单请按1，报修请按2。',
        options: [
          { key: '1', label: '账单' },
          { key: '2', label: '报修' },
        ],
        timeoutSec: 8,
        maxRetries: 0,
      },
    },
    { id: 'bill', type: 'play', name: '账单查询', data: { text: '您本月账单一百二十八元。' } },
    { id: 'repair', type: 'play', name: '报修登记', data: { text: '已为您登记报修。' } },
    { id: 'bye', type: 'hangup', name: '结束', data: { reason: '已处理' } },
    { id: 'nothing', type: 'hangup', name: '未选择', data: { reason: '未按键' } },
  ],
  edges: [
    { id: 'e1', source: 'start', sourceHandle: 'next', target: 'menu' },
    { id: 'e2', source: 'menu', sourceHandle: 'key:1', target: 'bill' },
    { id: 'e3', source: 'menu', sourceHandle: 'key:2', target: 'repair' },
    { id: 'e4', source: 'menu', sourceHandle: 'invalid', target: 'nothing' },
    { id: 'e5', source: 'menu', sourceHandle: 'timeout', target: 'nothing' },
    { id: 'e6', source: 'bill', sourceHandle: 'next', target: 'bye' },
    { id: 'e7', source: 'repair', sourceHandle: 'next', target: 'bye' },
  ],
});

let t: SipTestApp;
const haveSipp = sippOrWarn('the SIP flow call test');

beforeAll(async () => {
  if (!haveSipp) return;
  t = await createSipTestApp({ name: 'sip-flow-calls', email: 'sip-flow@example.com', rtpPorts: 10 });
  const trunk = await t.must('POST', '/trunks', {
    name: '本机测试线路',
    kind: 'ip',
    signallingAddress: `${HOST}:5999`,
    peerAddresses: [HOST],
  });
  await t.must('POST', '/numbers', { number: NUMBER, label: '客服热线', trunkId: trunk.id });
  const flow = await t.must('POST', '/flows', { name: '客服热线' });
  await t.must('PUT', `/flows/${flow.id}/draft`, { graph: menuFlow });
  await t.must('POST', `/flows/${flow.id}/publish`, { note: '上线' });
  await t.must('PUT', `/numbers/${NUMBER}/inbound`, { assistantId: null, flowId: flow.id });
  await t.untilTrunksLoaded(1);
}, 30_000);

afterAll(async () => {
  killSipps();
  await t?.close();
});

describe.runIf(haveSipp)('a flow answering a real SIP call', () => {
  it('takes the key the caller pressed: menu → 按键 2 → 报修登记 → 挂机, recorded as the call’s path', async () => {
    const run = await runSipp({
      scenario: fillScenario(KEY_AWAIT_BYE, t.dataDir, {
        __PCAPS__: SIPP_PCAPS,
        __KEY__: '2',
        __WAIT_MS__: 10_000,
      }),
      dir: t.dataDir,
      port: await freeUdpPort(),
      mediaPort: await freeMediaPort(),
      remote: `${HOST}:${t.sipPort}`,
      args: ['-s', NUMBER],
      timeoutS: 14,
    });
    // SIPp's scenario passes only if the flow hung up on it (the BYE came).
    expect(run.code, run.output).toBe(0);

    let detail: CallDetail | undefined;
    for (let i = 0; i < 100 && detail?.status !== 'ended'; i++) {
      const list = await t.must('GET', '/calls?page=1&pageSize=10');
      const id = list.items[0]?.id as string | undefined;
      if (id) detail = await t.must('GET', `/calls/${id}`);
      if (detail?.status !== 'ended') await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(detail).toMatchObject({
      direction: 'inbound',
      status: 'ended',
      endReason: 'completed',
      hangupBy: 'assistant',
    });
    expect(detail?.flow).toMatchObject({ flowName: '客服热线', flowVersion: 1 });
    const steps = detail?.flow?.steps ?? [];
    expect(steps.map((s) => [s.nodeName, s.exit])).toEqual([
      ['开始', 'next'],
      ['主菜单', 'key:2'],
      ['报修登记', 'next'],
      ['结束', null],
    ]);
    expect(steps[1]).toMatchObject({ input: '2', detail: expect.stringContaining('按键 2') });
    // The transcript: the prompt (cut short by the key), the key, the flow's line.
    const turns = detail?.turns ?? [];
    expect(turns.map((turn) => (turn.speaker === 'callee' ? `按 ${turn.dtmf}` : turn.text))).toEqual([
      '查询账单请按1，报修请按2。',
      '按 2',
      '已为您登记报修。',
    ]);
  }, 30_000);
});
