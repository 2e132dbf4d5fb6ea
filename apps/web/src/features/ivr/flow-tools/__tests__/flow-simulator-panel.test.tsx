import type { FlowNode, FlowSimulationState } from '@callpilot/contracts';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { useState } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FlowSimulatorPanel } from '../flow-simulator-panel';
import { FLOW, hotlineGraph, ok, renderTool, serveFlows } from './flow-tools-fixtures';

const SIM = `${FLOW}/simulations/s1`;

let stop = () => {};
afterEach(() => {
  // Unmounting ends the session with a request; the fake server must still be there to take it.
  cleanup();
  stop();
});

let play: ReturnType<typeof vi.spyOn>;
beforeEach(() => {
  Object.assign(URL, { createObjectURL: vi.fn(() => 'blob:prompt'), revokeObjectURL: vi.fn() });
  play = vi.spyOn(HTMLMediaElement.prototype, 'play').mockResolvedValue(undefined);
  vi.spyOn(HTMLMediaElement.prototype, 'pause').mockImplementation(() => {});
});

type Step = FlowSimulationState['steps'][number];
const step = (
  nodeId: string,
  nodeType: Step['nodeType'],
  nodeName: string,
  extra: Partial<Step> = {},
): Step => ({
  nodeId,
  nodeType,
  nodeName,
  atMs: 0,
  durationMs: 3,
  exit: 'next',
  input: null,
  output: {},
  detail: '',
  flowId: null,
  variables: {},
  ...extra,
});
const prompt = (index: number, nodeId: string, text: string) => ({
  nodeId,
  text,
  audioUrl: `${SIM}/prompts/${index}`,
});

const atMenu: FlowSimulationState = {
  simulationId: 's1',
  steps: [step('start', 'start', ''), step('welcome', 'play', '欢迎语', { atMs: 5, durationMs: 2400 })],
  prompts: [
    prompt(0, 'welcome', '您好，欢迎致电星河宽带。'),
    prompt(1, 'menu', '查询账单请按 1，报修请按 2。'),
  ],
  waiting: { nodeId: 'menu', kind: 'digits', timeoutSec: 5 },
  ended: null,
  variables: { caller: '13800138000' },
};

const afterKeyOne: FlowSimulationState = {
  ...atMenu,
  steps: [
    ...atMenu.steps,
    step('menu', 'menu', '主菜单', { input: '1', exit: 'key:1', output: { digits: '1' }, detail: '按键 1' }),
    step('bill', 'hangup', '账单挂机', { exit: null, detail: '挂机' }),
  ],
  prompts: [...atMenu.prompts, prompt(2, 'bill', '您本月账单 128 元。')],
  waiting: null,
  ended: { reason: '流程挂机', nodeId: 'bill' },
  variables: { caller: '13800138000', digits: '1' },
};

function Harness({ onHighlight }: { onHighlight: (path: string[], active: string | null) => void }) {
  const [open, setOpen] = useState(true);
  const [renamed, setRenamed] = useState(false);
  // A new but equal graph on every render, as an editor deriving it would hand over.
  const graph = hotlineGraph();
  if (renamed) graph.nodes[1] = { ...(graph.nodes[1] as FlowNode), name: '新欢迎语' };
  return (
    <>
      <p>{open ? '面板打开' : '面板关闭'}</p>
      <button type="button" onClick={() => setRenamed(true)}>
        改名
      </button>
      <FlowSimulatorPanel
        projectId="p1"
        flowId="f1"
        graph={graph}
        open={open}
        onClose={() => setOpen(false)}
        onHighlight={onHighlight}
      />
    </>
  );
}

async function startAtMenu(routes: Parameters<typeof serveFlows>[0]) {
  const server = serveFlows({
    [`POST ${FLOW}/simulations`]: ok(atMenu),
    [`GET ${SIM}/prompts/0`]: ok('RIFF0'),
    [`GET ${SIM}/prompts/1`]: ok('RIFF1'),
    [`GET ${SIM}/prompts/2`]: ok('RIFF2'),
    [`DELETE ${SIM}`]: ok(null),
    ...routes,
  });
  stop = server.stop;
  const onHighlight = vi.fn();
  renderTool(<Harness onHighlight={onHighlight} />);
  fireEvent.click(await screen.findByText('开始模拟'));
  // Role queries over the whole drawer are slow on a busy machine; the waiting tag is enough here.
  await screen.findByText('等待按键');
  return { server, onHighlight };
}

const posts = (server: { requests: { method: string; url: string; body: unknown }[] }) =>
  server.requests.filter((r) => r.method === 'POST').map((r) => [r.url, r.body]);

describe('FlowSimulatorPanel', () => {
  it('runs the graph, waits at the menu for a key, and follows the key to the end of the flow', async () => {
    const { server, onHighlight } = await startAtMenu({ [`POST ${SIM}/input`]: ok(afterKeyOne) });

    expect(posts(server)[0]).toEqual([
      `${FLOW}/simulations`,
      { callerNumber: '13800138000', calleeNumber: '', graph: hotlineGraph() },
    ]);
    expect(onHighlight).toHaveBeenLastCalledWith(['start', 'welcome'], 'menu');
    const input = screen.getByRole('region', { name: '来电者输入' });
    expect(within(input).getByText('等待按键')).toBeTruthy();
    expect(within(input).getByText('主菜单')).toBeTruthy();
    const talk = screen.getByRole('region', { name: '对话' });
    expect(within(talk).getByText('查询账单请按 1，报修请按 2。')).toBeTruthy();

    const dialPad = screen.getByRole('group', { name: '拨号盘' });
    expect(
      within(dialPad)
        .getAllByRole('button')
        .map((key) => key.textContent),
    ).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#']);
    fireEvent.click(within(dialPad).getByText('1'));

    expect(await screen.findByText('模拟结束：流程挂机')).toBeTruthy();
    expect(posts(server)[1]).toEqual([`${SIM}/input`, { kind: 'digits', value: '1' }]);
    expect(onHighlight).toHaveBeenLastCalledWith(['start', 'welcome', 'menu', 'bill'], null);
    const log = screen.getByRole('list', { name: '步骤记录' });
    const menuStep = within(log).getAllByRole('listitem')[2] as HTMLElement;
    expect(menuStep.textContent).toContain('主菜单');
    expect(within(menuStep).getByText('输入：1')).toBeTruthy();
    expect(within(menuStep).getByText('出口：1 账单')).toBeTruthy();
    expect(within(menuStep).getByText('设置：digits = 1')).toBeTruthy();
    expect(within(talk).getByText('按键 1')).toBeTruthy();
    expect(within(talk).getByText('您本月账单 128 元。')).toBeTruthy();
    const variables = screen.getByRole('table', { name: '变量' });
    expect(within(variables).getByText('digits').nextElementSibling?.textContent).toBe('1');
    expect(screen.queryByText('等待按键')).toBeNull();

    expect(screen.queryByText('流程已修改，点「重新开始」按最新内容模拟')).toBeNull();
    fireEvent.click(screen.getByText('改名'));
    expect(await screen.findByText('流程已修改，点「重新开始」按最新内容模拟')).toBeTruthy();
    expect(screen.getByText('重新开始')).toBeTruthy();
  });

  it('lets the caller stay silent until the timeout, then hang up', async () => {
    const retried: FlowSimulationState = {
      ...atMenu,
      steps: [...atMenu.steps],
      prompts: [...atMenu.prompts, prompt(2, 'menu', '抱歉，没有收到您的按键。')],
      waiting: { nodeId: 'menu', kind: 'digits', timeoutSec: 5 },
    };
    const hungUp: FlowSimulationState = {
      ...retried,
      steps: [...retried.steps, step('menu', 'menu', '主菜单', { exit: null, detail: '来电者挂机' })],
      waiting: null,
      ended: { reason: '来电者挂机', nodeId: 'menu' },
    };
    const replies = [retried, hungUp];
    const { server, onHighlight } = await startAtMenu({ [`POST ${SIM}/input`]: () => ok(replies.shift()) });

    fireEvent.click(screen.getByText('超时'));
    expect(await screen.findByText('抱歉，没有收到您的按键。')).toBeTruthy();
    expect(screen.getByText('（不作回应，等待超时）')).toBeTruthy();
    fireEvent.click(screen.getByText('挂断'));

    expect(await screen.findByText('模拟结束：来电者挂机')).toBeTruthy();
    expect(screen.getByText('结束于「主菜单」')).toBeTruthy();
    expect(
      posts(server)
        .slice(1)
        .map(([, body]) => body),
    ).toEqual([{ kind: 'timeout' }, { kind: 'hangup' }]);
    expect(onHighlight).toHaveBeenLastCalledWith(['start', 'welcome', 'menu'], null);
  });

  it('plays the new prompts one after another and ends the session when the panel closes', async () => {
    const { server, onHighlight } = await startAtMenu({});
    const prompts = () => server.requests.filter((r) => r.url.includes('/prompts/')).map((r) => r.url);

    await waitFor(() => expect(prompts()).toEqual([`${SIM}/prompts/0`]));
    await waitFor(() => expect(play).toHaveBeenCalledTimes(1));
    fireEvent.ended(document.querySelector('audio') as HTMLAudioElement);
    await waitFor(() => expect(prompts()).toEqual([`${SIM}/prompts/0`, `${SIM}/prompts/1`]));

    // ▶ on a bubble replays that prompt.
    fireEvent.ended(document.querySelector('audio') as HTMLAudioElement);
    fireEvent.click(await screen.findByRole('button', { name: '播放第 1 条提示音' }));
    await waitFor(() => expect(prompts()).toHaveLength(3));
    expect(prompts()[2]).toBe(`${SIM}/prompts/0`);

    fireEvent.click(document.querySelector('.ant-drawer-close') as HTMLElement);
    expect(await screen.findByText('面板关闭')).toBeTruthy();
    await waitFor(() =>
      expect(server.requests.some((r) => r.method === 'DELETE' && r.url === SIM)).toBe(true),
    );
    expect(onHighlight).toHaveBeenLastCalledWith([], null);
  });

  it('does not play by itself with 自动播放 off', async () => {
    const server = serveFlows({ [`POST ${FLOW}/simulations`]: ok(atMenu), [`DELETE ${SIM}`]: ok(null) });
    stop = server.stop;
    renderTool(<Harness onHighlight={vi.fn()} />);
    fireEvent.click(await screen.findByRole('switch', { name: '自动播放' }));
    fireEvent.click(screen.getByText('开始模拟'));
    await screen.findByText('等待按键');
    expect(server.requests.some((r) => r.url.includes('/prompts/'))).toBe(false);
    expect(play).not.toHaveBeenCalled();
  });
});
