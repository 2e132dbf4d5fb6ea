import { type FlowGraph, flowGraph, validateFlow } from '@callpilot/contracts';
import { describe, expect, it } from 'vitest';
import { diffFlowGraphs, formatFlowValue, isFlowDiffEmpty } from '../flow-diff';
import { hotlineGraph } from './flow-tools-fixtures';

const edit = (graph: FlowGraph, change: (draft: FlowGraph) => void): FlowGraph => {
  const copy = structuredClone(graph);
  change(copy);
  return flowGraph.parse(copy);
};

describe('diffFlowGraphs', () => {
  it('finds nothing between a graph and itself, whatever the order of keys and edge ids', () => {
    const live = hotlineGraph();
    const draft = edit(live, (g) => {
      g.edges = g.edges.map((e) => ({
        target: e.target,
        sourceHandle: e.sourceHandle,
        source: e.source,
        id: `x-${e.id}`,
      }));
    });
    const diff = diffFlowGraphs(live, draft);
    expect(isFlowDiffEmpty(diff)).toBe(true);
    expect(diff.nodesMoved).toEqual([]);
  });

  it('reports added and removed nodes and the edges that came and went with them', () => {
    const live = hotlineGraph();
    const draft = edit(live, (g) => {
      g.nodes = g.nodes.filter((n) => n.id !== 'repair');
      g.nodes.push(
        flowGraph.shape.nodes.element.parse({
          id: 'agent',
          type: 'transfer',
          name: '转人工',
          data: { target: '02160880000' },
        }),
      );
      g.edges = g.edges.filter((e) => e.target !== 'repair');
      g.edges.push({ id: 'e9', source: 'menu', sourceHandle: 'key:2', target: 'agent' });
    });
    const diff = diffFlowGraphs(live, draft);
    expect(diff.nodesAdded.map((n) => n.id)).toEqual(['agent']);
    expect(diff.nodesRemoved.map((n) => n.id)).toEqual(['repair']);
    expect(diff.nodesChanged).toEqual([]);
    expect(diff.edgesAdded).toEqual([
      expect.objectContaining({ sourceTitle: '主菜单', exitLabel: '2 报修', targetTitle: '转人工' }),
    ]);
    expect(diff.edgesRemoved).toEqual([
      expect.objectContaining({ sourceTitle: '主菜单', exitLabel: '2 报修', targetTitle: '报修挂机' }),
    ]);
  });

  it('names the changed settings of a node in Chinese, with the values before and after', () => {
    const live = hotlineGraph();
    const draft = edit(live, (g) => {
      const menu = g.nodes.find((n) => n.id === 'menu');
      if (menu?.type !== 'menu') throw new Error('fixture');
      menu.name = '主菜单（新）';
      menu.data.timeoutSec = 8;
      menu.data.options.push({ key: '0', label: '人工' });
      menu.data.prompt = '查询账单请按 1，报修请按 2，人工请按 0。';
    });
    const [change] = diffFlowGraphs(live, draft).nodesChanged;
    expect(change?.after.id).toBe('menu');
    expect(change?.changes.map((c) => c.label)).toEqual(['节点名称', '菜单提示音', '按键选项', '等待时长']);
    const timeout = change?.changes.find((c) => c.field === 'timeoutSec');
    expect([timeout?.before, timeout?.after]).toEqual([5, 8]);
    const options = change?.changes.find((c) => c.field === 'options');
    expect(formatFlowValue(options?.before)).toBe('1、2');
    expect(formatFlowValue(options?.after)).toBe('1、2、0');
  });

  it('sets apart a node that was only moved, and a rewired exit, from settings changes', () => {
    const live = hotlineGraph();
    const draft = edit(live, (g) => {
      const welcome = g.nodes.find((n) => n.id === 'welcome');
      if (welcome) welcome.position = { x: 300, y: 120 };
      const timeout = g.edges.find((e) => e.sourceHandle === 'timeout');
      if (timeout) timeout.target = 'menu';
    });
    const diff = diffFlowGraphs(live, draft);
    expect(diff.nodesChanged).toEqual([]);
    expect(diff.nodesMoved.map((n) => n.id)).toEqual(['welcome']);
    expect(diff.edgesAdded.map((e) => `${e.exitLabel}→${e.targetTitle}`)).toEqual(['超时→主菜单']);
    expect(diff.edgesRemoved.map((e) => `${e.exitLabel}→${e.targetTitle}`)).toEqual(['超时→再见']);
  });

  it('reports the flow voice and recogniser, and falls back to the key for a field it cannot name', () => {
    const live = hotlineGraph();
    const draft = edit(live, (g) => {
      g.settings.voice.speed = 1.2;
      g.settings.recognizerId = 'r1';
    });
    const diff = diffFlowGraphs(live, draft);
    expect(diff.settingsChanged.map((c) => [c.label, c.before, c.after])).toEqual([
      ['语速', 1, 1.2],
      ['语音识别配置', null, 'r1'],
    ]);

    // A field a newer editor writes still shows up, by its key (drafts are not re-parsed here).
    const newer = structuredClone(live);
    Object.assign(newer.nodes.find((n) => n.id === 'bye')?.data ?? {}, { futureField: true });
    expect(diffFlowGraphs(live, newer).nodesChanged[0]?.changes.map((c) => c.label)).toEqual(['futureField']);
  });

  it('stays a diff of what callers hear: a valid draft against a broken live version', () => {
    const live = edit(hotlineGraph(), (g) => {
      g.edges = g.edges.filter((e) => e.sourceHandle !== 'invalid');
    });
    expect(validateFlow(live).some((issue) => issue.severity === 'error')).toBe(true);
    const diff = diffFlowGraphs(live, hotlineGraph());
    expect(diff.edgesAdded.map((e) => `${e.sourceTitle}「${e.exitLabel}」→${e.targetTitle}`)).toEqual([
      '主菜单「输入错误」→再见',
    ]);
  });
});

describe('formatFlowValue', () => {
  it('shows short values inline and leaves long or structured ones to the field name', () => {
    expect(formatFlowValue(true)).toBe('是');
    expect(formatFlowValue('')).toBe('（空）');
    expect(formatFlowValue('x'.repeat(50))).toBe(`${'x'.repeat(40)}…`);
    expect(formatFlowValue({ a: 1 })).toBe('');
    expect(formatFlowValue([{ weird: 1 }])).toBe('');
  });
});
