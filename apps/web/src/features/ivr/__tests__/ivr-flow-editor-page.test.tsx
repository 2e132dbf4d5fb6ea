import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  canvasNode,
  findCanvasNode,
  findNodePanel,
  nodePanel,
  renderEditor,
} from '../flow-editor/__tests__/editor-harness';
import { mockReactFlowDom, sampleDetail } from '../flow-editor/__tests__/flow-fixtures';
import { useFlowEditorStore } from '../flow-editor/store';

beforeAll(mockReactFlowDom);

let stop: (() => void) | undefined;
afterEach(() => {
  stop?.();
  stop = undefined;
});

const nodeName = () => within(nodePanel()).getByLabelText('节点名称');

describe('流程编辑', () => {
  it('opens the draft on the canvas and lists its problems; a problem’s link selects its node', async () => {
    const { server } = renderEditor();
    stop = server.stop;
    // The first test of the file loads the editor's modules cold.
    expect(await findCanvasNode('主菜单')).toBeTruthy();
    expect(within(canvasNode('主菜单')).getByText('按键 1 / 2')).toBeTruthy();
    expect(within(canvasNode('主菜单')).getByText('1 账单')).toBeTruthy();
    expect(screen.getByRole('textbox', { name: '流程名称' })).toHaveProperty('value', '客服热线');
    // Nothing selected: the side panel holds the flow's settings.
    expect(screen.getByRole('complementary', { name: '流程设置' })).toBeTruthy();

    const issues = screen.getByRole('region', { name: '问题' });
    const link = await within(issues).findByRole('button', { name: /「账单播报」的出口「下一步」未连接/ });
    expect(within(issues).getByText(/错误 \d+/).textContent).not.toBe('错误 0');
    fireEvent.click(link);
    expect(await findNodePanel()).toBeTruthy();
    expect(nodeName()).toHaveProperty('value', '账单播报');
    expect(useFlowEditorStore.getState().selectedNodeIds).toEqual(['bill']);
    // The node carries an error badge until its exit is connected.
    expect(within(canvasNode('账单播报')).getByRole('img', { name: /个错误/ })).toBeTruthy();
  });

  it('saves the graph as drawn, name included, and undoes with Ctrl+Z', async () => {
    let saved: unknown;
    const { server } = renderEditor(sampleDetail(), {
      'PUT /api/project/p1/flows/f1/draft': (request) => {
        saved = request.body;
        return {
          status: 200,
          body: {
            success: true,
            status: 200,
            data: { updatedAt: '2026-03-02T02:00:00.000Z', issues: [] },
            message: 'ok',
          },
        };
      },
    });
    stop = server.stop;
    fireEvent.click(await findCanvasNode('欢迎语'));
    fireEvent.change(await screen.findByLabelText('节点名称'), { target: { value: '开场白' } });
    expect(await findCanvasNode('开场白')).toBeTruthy();
    fireEvent.change(screen.getByRole('textbox', { name: '流程名称' }), {
      target: { value: '星河客服热线' },
    });
    expect(screen.getByText('未保存')).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: /保存/ }));
    await waitFor(() => expect(saved).toBeDefined());
    const body = saved as {
      name: string;
      graph: { nodes: { id: string; name: string }[]; edges: unknown[] };
    };
    expect(body.name).toBe('星河客服热线');
    expect(body.graph.nodes.find((n) => n.id === 'welcome')?.name).toBe('开场白');
    expect(body.graph).toEqual(useFlowEditorStore.getState().graph);
    await waitFor(() => expect(screen.queryByText('未保存')).toBeNull());

    // Undo is the canvas's, outside text fields: the rename goes back and the flow is unsaved again.
    act(() => {
      (document.activeElement as HTMLElement | null)?.blur();
    });
    fireEvent.keyDown(window, { key: 'z', ctrlKey: true });
    expect(await findCanvasNode('欢迎语')).toBeTruthy();
    expect(screen.getByText('未保存')).toBeTruthy();
  });
});
