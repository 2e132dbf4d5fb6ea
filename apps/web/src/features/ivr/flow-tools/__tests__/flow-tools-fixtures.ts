import { type FlowDetail, type FlowGraph, flowGraph } from '@callpilot/contracts';
import type { ReactNode } from 'react';
import { type FakeReply, failure, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { renderRoute } from '@/test/render-route';

export const FLOW = '/api/project/p1/flows/f1';

/**
 * 星河宽带客服热线 in small: 开始 → 欢迎语 → 主菜单 (1 账单 / 2 报修) → 挂机 nodes. Valid as it is;
 * tests break it where they need an error.
 */
export function hotlineGraph(): FlowGraph {
  return flowGraph.parse({
    nodes: [
      { id: 'start', type: 'start', position: { x: 0, y: 0 } },
      { id: 'welcome', type: 'play', name: '欢迎语', data: { text: '您好，欢迎致电星河宽带。' } },
      {
        id: 'menu',
        type: 'menu',
        name: '主菜单',
        data: {
          prompt: '查询账单请按 1，报修请按 2。',
          options: [
            { key: '1', label: '账单' },
            { key: '2', label: '报修' },
          ],
        },
      },
      { id: 'bill', type: 'hangup', name: '账单挂机', data: { text: '您本月账单 128 元。' } },
      { id: 'repair', type: 'hangup', name: '报修挂机', data: { text: '已为您登记报修。' } },
      { id: 'bye', type: 'hangup', name: '再见', data: { text: '再见。' } },
    ],
    edges: [
      { id: 'e1', source: 'start', sourceHandle: 'next', target: 'welcome' },
      { id: 'e2', source: 'welcome', sourceHandle: 'next', target: 'menu' },
      { id: 'e3', source: 'menu', sourceHandle: 'key:1', target: 'bill' },
      { id: 'e4', source: 'menu', sourceHandle: 'key:2', target: 'repair' },
      { id: 'e5', source: 'menu', sourceHandle: 'invalid', target: 'bye' },
      { id: 'e6', source: 'menu', sourceHandle: 'timeout', target: 'bye' },
    ],
  });
}

export function makeFlowDetail(overrides: Partial<FlowDetail> = {}): FlowDetail {
  const graph = hotlineGraph();
  return {
    id: 'f1',
    name: '星河宽带客服热线',
    description: '',
    status: 'published',
    publishedVersion: 1,
    numbers: [],
    calls7d: 0,
    nodeCount: graph.nodes.length,
    updatedAt: '2026-03-01T02:00:00.000Z',
    createdAt: '2026-03-01T02:00:00.000Z',
    draft: graph,
    published: graph,
    issues: [],
    ...overrides,
  };
}

/** Renders one tool as the editor mounts it, inside the real providers, with the call detail page as a stand-in. */
export function renderTool(element: ReactNode) {
  return renderRoute('/ivr/edit/f1', { path: '/ivr/edit/:flowId', element }, ['/call-record/detail/:id']);
}

type Route = FakeReply | ((request: RecordedRequest) => FakeReply | Promise<FakeReply>);

/** The flows API by `METHOD /path` (query strings ignored); anything else is a 404. */
export function serveFlows(routes: Record<string, Route>) {
  return startFakeServer(async (request) => {
    const route = routes[`${request.method} ${request.url.split('?')[0]}`];
    if (!route) return failure(404, '请求地址出错', 'NOT_FOUND');
    return typeof route === 'function' ? route(request) : route;
  });
}

export { ok };
