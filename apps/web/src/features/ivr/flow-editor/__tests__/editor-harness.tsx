import type { FlowDetail } from '@callpilot/contracts';
import { screen } from '@testing-library/react';
import { IvrFlowEditorPage } from '@/features/ivr/pages/ivr-flow-editor-page';
import { useUserStore } from '@/stores/user-store';
import { type FakeReply, ok, type RecordedRequest, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { sampleDetail } from './flow-fixtures';

const P = '/api/project/p1';
const page = <T,>(items: T[]) => ({ items, total: items.length, page: 1, pageSize: 100 });

type Handler = FakeReply | ((request: RecordedRequest) => FakeReply);

/**
 * The editor at /ivr/edit/f1 for a member of project p1, the server answering `detail` and the
 * pickers (other routes by `METHOD /path`); anything else is a 404.
 */
export function renderEditor(detail: FlowDetail = sampleDetail(), routes: Record<string, Handler> = {}) {
  useUserStore.getState().setUserInfo({
    isOwnerOrAdmin: true,
    id: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    profile: '',
    projects: [{ id: 'p1', name: '华东项目', disabled: false, role: 'owner' }],
  });
  localStorage.setItem('token', 'tok-1');
  const defaults: Record<string, Handler> = {
    [`GET ${P}/flows/f1`]: ok(detail),
    [`GET ${P}/flows/options`]: ok([
      { id: 'f1', name: detail.name, publishedVersion: null },
      { id: 'f2', name: '售后流程', publishedVersion: 2 },
    ]),
    [`GET ${P}/flows/audio`]: ok([]),
    [`GET ${P}/assistants`]: ok(page([])),
    [`GET ${P}/voices`]: ok([]),
    [`GET ${P}/speech-providers`]: ok(page([])),
  };
  const all = { ...defaults, ...routes };
  const server = startFakeServer((request) => {
    const reply = all[routeKey(request)];
    if (typeof reply === 'function') return reply(request);
    return (
      reply ?? { status: 404, body: { success: false, status: 404, data: null, message: '请求地址出错' } }
    );
  });
  const router = renderRoute('/ivr/edit/f1', { path: '/ivr/edit/:flowId', element: <IvrFlowEditorPage /> }, [
    '/ivr/list',
  ]);
  return { server, router };
}

// A node on the canvas, by the name xyflow labels it with for screen readers. By label rather than
// role: computing every element's role on a page this size takes most of a test's time in jsdom.
const NODE = { selector: '.react-flow__node' };
export const canvasNode = (name: string) => screen.getByLabelText(name, NODE);
export const findCanvasNode = (name: string) => screen.findByLabelText(name, NODE, { timeout: 8000 });

/** The right-hand panel while a node is selected. */
export const nodePanel = () => screen.getByLabelText('节点设置', { selector: 'aside' });
export const findNodePanel = () => screen.findByLabelText('节点设置', { selector: 'aside' });
