import { flowGraph, validateFlow } from '@callpilot/contracts';
import { beforeEach, describe, expect, it } from 'vitest';
import { FLOW_CLIPBOARD_KEY, PASTE_OFFSET } from '../graph-ops';
import { HISTORY_LIMIT, selectCanRedo, selectCanUndo, selectDirty, useFlowEditorStore } from '../store';
import { sampleGraph } from './flow-fixtures';

const store = () => useFlowEditorStore.getState();
const node = (id: string) => store().graph.nodes.find((n) => n.id === id);
const edgesFrom = (id: string) => store().graph.edges.filter((e) => e.source === id);

beforeEach(() => store().load('f1', sampleGraph(), '客服热线'));

describe('flow editor store', () => {
  it('undoes and redoes edits, one step per field typed in a row, and knows when it is back to saved', () => {
    expect(selectDirty(store())).toBe(false);
    for (const text of ['您', '您好，', '您好，欢迎'])
      store().updateNode('welcome', (n) => ({ ...n, data: { ...n.data, text } }) as typeof n, 'text');
    store().addNode('hangup', { x: 0, y: 300 });
    expect(store().graph.nodes).toHaveLength(6);
    expect(selectDirty(store())).toBe(true);

    store().undo();
    expect(store().graph.nodes).toHaveLength(5);
    expect(node('welcome')?.data).toMatchObject({ text: '您好，欢迎' });
    // The three keystrokes were one step: one undo restores the text as loaded.
    store().undo();
    expect(node('welcome')?.data).toMatchObject({ text: '您好' });
    expect(selectDirty(store())).toBe(false);
    expect(selectCanUndo(store())).toBe(false);

    store().redo();
    store().redo();
    expect(store().graph.nodes).toHaveLength(6);
    expect(selectCanRedo(store())).toBe(false);
    // A new edit after undoing drops the redo branch.
    store().undo();
    store().updateNode('bye', (n) => ({ ...n, name: '结束' }));
    expect(selectCanRedo(store())).toBe(false);
  });

  it('keeps at most 100 undo steps', () => {
    for (let i = 0; i < HISTORY_LIMIT + 20; i++)
      store().moveNodes([{ id: 'bye', position: { x: i, y: 0 } }], false);
    expect(store().past).toHaveLength(HISTORY_LIMIT);
    for (let i = 0; i < HISTORY_LIMIT + 20; i++) store().undo();
    // The oldest 20 steps are gone: undo stops at x 19, not at the loaded position.
    expect(node('bye')?.position).toEqual({ x: 19, y: 0 });
  });

  it('copies nodes with the edges among them and pastes them into another flow under new ids', () => {
    store().select(['menu', 'bill', 'bye']);
    expect(store().copySelection()).toBe(3);
    expect(JSON.parse(localStorage.getItem(FLOW_CLIPBOARD_KEY) ?? '{}').nodes).toHaveLength(3);

    // Another flow, opened later (the clipboard outlives the page).
    store().load(
      'f2',
      flowGraph.parse({ nodes: [{ id: 'start', type: 'start', position: { x: 0, y: 0 } }], edges: [] }),
      '售后',
    );
    const result = store().paste();
    expect(result).toEqual({ pasted: 3, skippedStart: false });
    const pasted = store().graph.nodes.filter((n) => n.type !== 'start');
    expect(pasted.map((n) => n.name).sort()).toEqual(['主菜单', '再见', '账单播报']);
    expect(pasted.every((n) => !['menu', 'bill', 'bye'].includes(n.id))).toBe(true);
    const menu = pasted.find((n) => n.name === '主菜单');
    expect(menu?.position).toEqual({ x: 600 + PASTE_OFFSET, y: PASTE_OFFSET });
    // The menu's two exits lead to the pasted copies; the edge from 欢迎语 (not copied) is not there.
    const byId = new Map(pasted.map((n) => [n.id, n.name]));
    expect(
      store()
        .graph.edges.map((e) => [byId.get(e.source), e.sourceHandle, byId.get(e.target)])
        .sort(),
    ).toEqual([
      ['主菜单', 'key:1', '账单播报'],
      ['主菜单', 'key:2', '再见'],
    ]);
    expect(store().selectedNodeIds.sort()).toEqual(pasted.map((n) => n.id).sort());

    // Pasting again lands a step further, not on top of the first copy.
    store().paste();
    const copies = store().graph.nodes.filter((n) => n.name === '主菜单');
    expect(copies.map((n) => n.position.x).sort()).toEqual([600 + PASTE_OFFSET, 600 + 2 * PASTE_OFFSET]);
  });

  it('refuses to paste a 开始 node and says so', () => {
    store().select(['start']);
    store().copySelection();
    expect(store().paste()).toEqual({ pasted: 0, skippedStart: true });
    expect(store().graph.nodes.filter((n) => n.type === 'start')).toHaveLength(1);
    expect(selectCanUndo(store())).toBe(false);

    store().select(['start', 'welcome']);
    store().copySelection();
    expect(store().paste()).toEqual({ pasted: 1, skippedStart: true });
    expect(store().graph.nodes.filter((n) => n.name === '欢迎语')).toHaveLength(2);
  });

  it('gives an exit one edge: connecting it again replaces the edge', () => {
    store().connect({ source: 'menu', sourceHandle: 'key:1', target: 'bye' });
    expect(
      edgesFrom('menu')
        .map((e) => [e.sourceHandle, e.target])
        .sort(),
    ).toEqual([
      ['key:1', 'bye'],
      ['key:2', 'bye'],
    ]);
    // Nothing enters the start, and an exit the node does not have connects nothing.
    store().connect({ source: 'bill', sourceHandle: 'next', target: 'start' });
    store().connect({ source: 'bill', sourceHandle: 'key:9', target: 'bye' });
    expect(edgesFrom('bill')).toEqual([]);
  });

  it('moves an edge with its menu key when the key is typed over, and drops it with its option', () => {
    store().updateNode('menu', (n) =>
      n.type === 'menu'
        ? { ...n, data: { ...n.data, options: [{ key: '3', label: '账单' }, n.data.options[1] as never] } }
        : n,
    );
    expect(
      edgesFrom('menu')
        .map((e) => [e.sourceHandle, e.target])
        .sort(),
    ).toEqual([
      ['key:2', 'bye'],
      ['key:3', 'bill'],
    ]);
    store().updateNode('menu', (n) =>
      n.type === 'menu' ? { ...n, data: { ...n.data, options: n.data.options.slice(0, 1) } } : n,
    );
    expect(edgesFrom('menu').map((e) => e.sourceHandle)).toEqual(['key:3']);
    expect(validateFlow(store().graph).some((i) => i.code === 'dangling_edge')).toBe(false);
  });

  it('never deletes the start node', () => {
    expect(store().deleteElements(['start', 'welcome'], [])).toEqual({ refusedStart: true });
    expect(store().graph.nodes.map((n) => n.id)).toEqual(['start', 'menu', 'bill', 'bye']);
    // The welcome node's edges went with it.
    expect(
      store()
        .graph.edges.map((e) => e.id)
        .sort(),
    ).toEqual(['e3', 'e4']);
  });

  it('lays the flow out left to right from the start, keeping every edge, as one undo step', async () => {
    store().addNode('sms', { x: -500, y: -500 });
    const before = store().graph.edges;
    await store().autoLayout();
    const { nodes, edges } = store().graph;
    expect(edges).toEqual(before);
    const x = (id: string) => nodes.find((n) => n.id === id)?.position.x ?? Number.NaN;
    // The start alone in the first column, then each step further right.
    expect(nodes.filter((n) => n.type !== 'start').every((n) => n.position.x > x('start'))).toBe(true);
    expect(x('welcome')).toBeLessThan(x('menu'));
    expect(x('menu')).toBeLessThan(x('bill'));
    store().undo();
    expect(store().graph.nodes.find((n) => n.type === 'sms')?.position).toEqual({ x: -500, y: -500 });
  });
});
