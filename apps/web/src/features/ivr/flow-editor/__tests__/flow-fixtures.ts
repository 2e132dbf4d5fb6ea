import { type FlowDetail, type FlowGraph, flowGraph } from '@callpilot/contracts';

/** 开始 → 欢迎语 → 主菜单 (1 → 账单播报, 2 → 挂机), as the editor receives it from the server. */
export function sampleGraph(): FlowGraph {
  return flowGraph.parse({
    nodes: [
      { id: 'start', type: 'start', name: '开始', position: { x: 0, y: 0 } },
      { id: 'welcome', type: 'play', name: '欢迎语', position: { x: 300, y: 0 }, data: { text: '您好' } },
      {
        id: 'menu',
        type: 'menu',
        name: '主菜单',
        position: { x: 600, y: 0 },
        data: {
          prompt: '账单请按 1，挂机请按 2',
          options: [
            { key: '1', label: '账单' },
            { key: '2', label: '挂机' },
          ],
        },
      },
      { id: 'bill', type: 'play', name: '账单播报', position: { x: 900, y: 0 }, data: { text: '本月账单' } },
      { id: 'bye', type: 'hangup', name: '再见', position: { x: 900, y: 200 } },
    ],
    edges: [
      { id: 'e1', source: 'start', sourceHandle: 'next', target: 'welcome' },
      { id: 'e2', source: 'welcome', sourceHandle: 'next', target: 'menu' },
      { id: 'e3', source: 'menu', sourceHandle: 'key:1', target: 'bill' },
      { id: 'e4', source: 'menu', sourceHandle: 'key:2', target: 'bye' },
    ],
  });
}

/** The flow as GET /flows/:id answers it, its draft `graph`. */
export function sampleDetail(graph: FlowGraph = sampleGraph()): FlowDetail {
  return {
    id: 'f1',
    name: '客服热线',
    description: '',
    status: 'draft',
    publishedVersion: null,
    numbers: [],
    calls7d: 0,
    nodeCount: graph.nodes.length,
    updatedAt: '2026-03-01T02:00:00.000Z',
    createdAt: '2026-03-01T02:00:00.000Z',
    draft: graph,
    published: null,
    issues: [],
  };
}

/**
 * What jsdom lacks for @xyflow/react to draw nodes (reactflow.dev's testing guide): a
 * ResizeObserver that reports at once, DOMMatrixReadOnly for the zoom, and sizes for elements.
 */
export function mockReactFlowDom() {
  class ResizeObserver {
    constructor(private readonly callback: ResizeObserverCallback) {}
    observe(target: Element) {
      this.callback([{ target } as ResizeObserverEntry], this as unknown as globalThis.ResizeObserver);
    }
    unobserve() {}
    disconnect() {}
  }
  class DOMMatrixReadOnly {
    m22: number;
    constructor(transform: string) {
      const scale = transform?.match(/scale\(([1-9.])\)/)?.[1];
      this.m22 = scale !== undefined ? +scale : 1;
    }
  }
  globalThis.ResizeObserver = ResizeObserver as unknown as typeof globalThis.ResizeObserver;
  (globalThis as { DOMMatrixReadOnly: unknown }).DOMMatrixReadOnly = DOMMatrixReadOnly;
  Object.defineProperties(globalThis.HTMLElement.prototype, {
    offsetHeight: {
      configurable: true,
      get() {
        return Number.parseFloat(this.style.height) || 1;
      },
    },
    offsetWidth: {
      configurable: true,
      get() {
        return Number.parseFloat(this.style.width) || 1;
      },
    },
  });
  (globalThis.SVGElement.prototype as unknown as { getBBox: () => DOMRect }).getBBox = () =>
    ({ x: 0, y: 0, width: 0, height: 0 }) as DOMRect;
}
