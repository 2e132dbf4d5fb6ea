import type { FlowNodeOf } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { useFlowEditorStore } from '../store';
import { canvasNode, findCanvasNode, findNodePanel, nodePanel, renderEditor } from './editor-harness';
import { mockReactFlowDom } from './flow-fixtures';

beforeAll(mockReactFlowDom);

let stop: (() => void) | undefined;
afterEach(() => {
  stop?.();
  stop = undefined;
});

const panel = nodePanel;
const graphNode = <T extends FlowNodeOf<'menu'> | FlowNodeOf<'condition'> | FlowNodeOf<'play'>>(id: string) =>
  useFlowEditorStore.getState().graph.nodes.find((n) => n.id === id) as T;

async function open(name: string) {
  stop = renderEditor().server.stop;
  fireEvent.click(await findCanvasNode(name));
  await findNodePanel();
}

describe('节点设置', () => {
  it('edits a menu’s keys: the flow and the node’s exits on the canvas follow', async () => {
    await open('主菜单');
    fireEvent.click(within(panel()).getByRole('button', { name: /添加按键/ }));
    expect(graphNode<FlowNodeOf<'menu'>>('menu').data.options.map((o) => o.key)).toEqual(['1', '2', '3']);
    fireEvent.change(within(panel()).getByLabelText('选项说明 3'), { target: { value: '人工服务' } });
    expect(await within(canvasNode('主菜单')).findByText('3 人工服务')).toBeTruthy();

    // A key the contracts refuse is said under the option, in Chinese.
    fireEvent.change(within(panel()).getByLabelText('按键 3'), { target: { value: 'a' } });
    expect(within(panel()).getByText('按键须为 1-4 位数字或 *')).toBeTruthy();
    fireEvent.change(within(panel()).getByLabelText('按键 3'), { target: { value: '0' } });
    expect(within(panel()).queryByText('按键须为 1-4 位数字或 *')).toBeNull();

    // Removing option 2 removes its exit and the edge that left by it.
    fireEvent.click(within(panel()).getByRole('button', { name: '删除按键 2' }));
    expect(graphNode<FlowNodeOf<'menu'>>('menu').data.options.map((o) => o.key)).toEqual(['1', '0']);
    expect(useFlowEditorStore.getState().graph.edges.some((e) => e.sourceHandle === 'key:2')).toBe(false);
    await waitFor(() => expect(within(canvasNode('主菜单')).queryByText('2 挂机')).toBeNull());
  });

  it('builds a condition from the palette: branches, weekdays and business hours', async () => {
    stop = renderEditor().server.stop;
    await findCanvasNode('主菜单');
    fireEvent.click(screen.getByRole('button', { name: '添加条件分支' }));
    // The new node is selected and starts with a 工作时间 branch.
    const form = await findNodePanel();
    const id = useFlowEditorStore.getState().selectedNodeIds[0] as string;
    expect(graphNode<FlowNodeOf<'condition'>>(id).data.branches[0]?.rules[0]?.kind).toBe('business_hours');
    expect(within(form).getByRole('group', { name: '时段 1星期' })).toBeTruthy();

    // Saturday joins the working week.
    fireEvent.click(within(within(form).getByRole('group', { name: '时段 1星期' })).getByLabelText('周六'));
    const hours = graphNode<FlowNodeOf<'condition'>>(id).data.branches[0]?.rules[0];
    expect(hours?.kind === 'business_hours' && hours.windows[0]?.days).toEqual([1, 2, 3, 4, 5, 6]);

    // A second branch, 周末, with a weekday rule limited to Saturday and Sunday.
    fireEvent.click(within(form).getByRole('button', { name: /添加分支/ }));
    fireEvent.change(within(form).getByLabelText('分支名称 2'), { target: { value: '周末' } });
    const weekend = within(form).getByRole('region', { name: '分支 周末' });
    fireEvent.click(within(weekend).getByRole('button', { name: /添加条件/ }));
    fireEvent.click(await screen.findByRole('menuitem', { name: '星期' }));
    const days = await within(weekend).findByRole('group', { name: '条件 1星期' });
    for (const day of ['周一', '周二', '周三', '周四', '周五'])
      fireEvent.click(within(days).getByLabelText(day));
    fireEvent.click(within(days).getByLabelText('周六'));
    fireEvent.click(within(days).getByLabelText('周日'));
    const branch = graphNode<FlowNodeOf<'condition'>>(id).data.branches[1];
    expect(branch?.name).toBe('周末');
    expect(branch?.rules).toEqual([{ kind: 'weekday', days: [6, 7] }]);
    // Each branch is an exit on the canvas, after which 其他 catches the rest.
    expect(within(canvasNode('条件分支')).getByText('周末')).toBeTruthy();
    expect(within(canvasNode('条件分支')).getByText('其他')).toBeTruthy();
  });

  it('offers the system variables after {{ and inserts the one chosen', async () => {
    await open('欢迎语');
    const text = within(panel()).getByLabelText('放音内容') as HTMLTextAreaElement;
    fireEvent.change(text, { target: { value: '您好{{' } });
    const list = await screen.findByRole('listbox', { name: '可插入的变量' });
    expect(within(list).getByRole('option', { name: /主叫号码/ })).toBeTruthy();
    expect(within(list).getByRole('option', { name: /小助手意向等级/ })).toBeTruthy();

    // Typing narrows the list; a click inserts the whole reference.
    fireEvent.change(text, { target: { value: '您好{{call' } });
    await waitFor(() => expect(within(list).queryByRole('option', { name: /小助手意向等级/ })).toBeNull());
    fireEvent.click(within(list).getByRole('option', { name: /\{\{caller\}\}\s*主叫号码/ }));
    expect(graphNode<FlowNodeOf<'play'>>('welcome').data.text).toBe('您好{{caller}}');
    expect(screen.queryByRole('listbox', { name: '可插入的变量' })).toBeNull();

    // The flow's own variables are offered too: a 收号 node's variable once one sets it.
    useFlowEditorStore.getState().addNode('collect', { x: 0, y: 400 });
    fireEvent.click(await findCanvasNode('欢迎语'));
    const again = within(await screen.findByRole('complementary', { name: '节点设置' })).getByLabelText(
      '放音内容',
    );
    fireEvent.change(again, { target: { value: '您好{{digits_' } });
    expect(await screen.findByRole('option', { name: /\{\{digits_input\}\}\s*由「收号」设置/ })).toBeTruthy();
  });
});
