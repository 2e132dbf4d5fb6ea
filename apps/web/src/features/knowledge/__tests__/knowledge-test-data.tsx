import type { KnowledgeBase, KnowledgeDocument, KnowledgeSegment } from '@callpilot/contracts';
import { useUserStore } from '@/stores/user-store';
import { type FakeReply, failure, startFakeServer } from '@/test/fake-server';
import { renderRoute, routeKey } from '@/test/render-route';
import { KnowledgeSection } from '../pages/knowledge-section';

export const ROOT = '/api/project/p1/knowledge-bases';

export const openLimits = {
  assistantLimit: 3,
  knowledgeLimit: 3,
  ttsCloneLimit: 0,
  hasBalance: true,
  concurrentCallin: 2,
  concurrentCallout: 10,
};

export function signIn() {
  localStorage.setItem('token', 'tok-1');
  useUserStore.getState().setUserInfo({
    isOwnerOrAdmin: true,
    id: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    profile: '',
    projects: [{ id: 'p1', disabled: false, name: '华东外呼项目' }],
  });
}

const TIME = '2026-03-01T02:00:00.000Z';

export function makeBase(overrides: Partial<KnowledgeBase> = {}): KnowledgeBase {
  return {
    id: 'kb1',
    name: '售后常见问题',
    description: '退换货、保修与物流',
    chunkSize: 500,
    chunkOverlap: 50,
    documentCount: 2,
    segmentCount: 18,
    pendingCount: 0,
    calibration: null,
    createdAt: TIME,
    updatedAt: TIME,
    ...overrides,
  };
}

export function makeDocument(overrides: Partial<KnowledgeDocument> = {}): KnowledgeDocument {
  return {
    id: 'd1',
    knowledgeBaseId: 'kb1',
    fileName: '退换货政策.pdf',
    fileType: 'pdf',
    sizeBytes: 204_800,
    kind: 'text',
    status: 'ready',
    progress: 100,
    error: '',
    segmentCount: 12,
    createdAt: TIME,
    updatedAt: TIME,
    ...overrides,
  };
}

export function makeSegment(overrides: Partial<KnowledgeSegment> = {}): KnowledgeSegment {
  return {
    id: 's1',
    knowledgeBaseId: 'kb1',
    documentId: 'd1',
    documentName: '退换货政策.pdf',
    position: 1,
    content: '商品签收后 7 天内可无理由退货，需保持包装完好。',
    question: null,
    answer: null,
    similarQuestions: [],
    enabled: true,
    charCount: 24,
    updatedAt: TIME,
    ...overrides,
  };
}

export const paged = <T,>(items: T[], total = items.length, page = 1, pageSize = 20) => ({
  items,
  total,
  page,
  pageSize,
});

type Handler = (request: Parameters<Parameters<typeof startFakeServer>[0]>[0]) => FakeReply | undefined;

/** Serves by `METHOD /path`; a function reply sees the request (its params and body). */
export function serveKnowledge(routes: Record<string, FakeReply | Handler>) {
  return startFakeServer((request) => {
    const reply = routes[routeKey(request)];
    const answer = typeof reply === 'function' ? reply(request) : reply;
    return answer ?? failure(404, '请求地址出错', 'NOT_FOUND');
  });
}

export function renderKnowledge(entry: string) {
  return renderRoute(entry, { path: '/knowledge/*', element: <KnowledgeSection /> });
}
