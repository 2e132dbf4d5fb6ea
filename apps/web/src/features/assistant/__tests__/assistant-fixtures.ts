import {
  type AssistantDetail,
  type AssistantSummary,
  type AssistantTemplate,
  assistantConfig,
  speechSettings,
} from '@callpilot/contracts';
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { createElement } from 'react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { AppProvider } from '@/app/provider';
import { setRequestNavigator } from '@/lib/request';
import { EMPTY_USER_INFO, useUserStore } from '@/stores/user-store';
import { type FakeReply, failure, ok, startFakeServer } from '@/test/fake-server';
import { routeKey } from '@/test/render-route';
import { AssistantSection } from '../pages/assistant-section';

export const limits = {
  assistantLimit: 10,
  knowledgeLimit: 5,
  ttsCloneLimit: 0,
  hasBalance: false,
  concurrentCallin: 1,
  concurrentCallout: 1,
};

export function summary(index: number, overrides: Partial<AssistantSummary> = {}): AssistantSummary {
  return {
    id: `a${index}`,
    name: `小助手${index}`,
    description: `描述${index}`,
    use: 'outbound',
    status: 'enabled',
    publishedVersion: null,
    hasUnpublishedChanges: false,
    brainMode: 'script',
    knowledgeBaseCount: 0,
    createdAt: '2026-03-01T02:00:00.000Z',
    updatedAt: '2026-03-02T02:00:00.000Z',
    ...overrides,
  };
}

export function detail(overrides: Partial<AssistantDetail> = {}): AssistantDetail {
  return {
    ...summary(1),
    name: '课程回访小助手',
    description: '回访试听课客户',
    publishedVersion: 2,
    templateKey: null,
    config: assistantConfig.parse({
      openingLine: '您好{{客户姓名}}，我是示例教育的小李。',
      systemPrompt: '你是示例教育的课程顾问，为{{客户姓名}}介绍{{产品名称}}。',
      variables: [
        { name: '客户姓名', sample: '张先生', required: true },
        { name: '产品名称', sample: '少儿编程课', required: false },
      ],
      knowledge: { baseIds: ['kb1'], topK: 3, scoreThreshold: 0.3 },
    }),
    ...overrides,
  };
}

export const templates: AssistantTemplate[] = [
  {
    key: 'customer-follow-up',
    name: '客户回访',
    category: '回访',
    description: '回访近期咨询过的客户，了解需求并邀约到店。',
    use: 'outbound',
    config: assistantConfig.parse({ openingLine: '您好，我是客户经理。' }),
  },
  {
    key: 'event-invitation',
    name: '活动邀约',
    category: '营销',
    description: '邀请客户参加线下活动。',
    use: 'outbound',
    config: assistantConfig.parse({}),
  },
];

/** Signs in the project's owner, or a plain member with `{ member: true }`. */
export function signIn({ member = false }: { member?: boolean } = {}) {
  localStorage.setItem('token', 'tok-1');
  useUserStore.setState({
    userInfo: {
      ...EMPTY_USER_INFO,
      id: 'u1',
      isOwnerOrAdmin: !member,
      projects: [{ id: 'p1', disabled: false, name: '华东外呼项目' }],
    },
  });
}

export const commonReplies: Record<string, FakeReply> = {
  'GET /api/project/p1/balance-limit': ok(limits),
  'GET /api/project/p1/voices': ok([{ provider: 'espeak', voiceId: 'cmn', name: '普通话', language: 'zh' }]),
  'GET /api/project/p1/llm-providers': ok({ items: [], total: 0, page: 1, pageSize: 100 }),
  'GET /api/project/p1/speech-providers': ok({ items: [], total: 0, page: 1, pageSize: 100 }),
  'GET /api/project/p1/synthesis-providers': ok({ items: [], total: 0, page: 1, pageSize: 100 }),
  'GET /api/project/p1/speech-settings': ok(speechSettings.parse({})),
  'GET /api/project/p1/knowledge-bases': ok({
    items: [
      {
        id: 'kb1',
        name: '课程问答',
        description: '',
        chunkSize: 500,
        chunkOverlap: 50,
        documentCount: 1,
        segmentCount: 12,
        pendingCount: 0,
        createdAt: '2026-03-01T02:00:00.000Z',
        updatedAt: '2026-03-01T02:00:00.000Z',
      },
    ],
    total: 1,
    page: 1,
    pageSize: 100,
  }),
};

type Handler = (request: Parameters<Parameters<typeof startFakeServer>[0]>[0]) => FakeReply | undefined;

/** Serves the assistant section from `replies` (by `METHOD /path`), or a handler for anything dynamic. */
export function serveAssistant(replies: Record<string, FakeReply> = {}, handler?: Handler) {
  return startFakeServer(
    (request) =>
      handler?.(request) ??
      { ...commonReplies, ...replies }[routeKey(request)] ??
      failure(404, '请求地址出错'),
  );
}

/** Renders the section the way the shell does (one route for every /assistant/... path). */
export function renderAssistant(entry: string) {
  const element: ReactNode = createElement(AssistantSection);
  const router = createMemoryRouter([{ path: '/assistant/:editType', element }], { initialEntries: [entry] });
  setRequestNavigator((to) => {
    void router.navigate(to);
  });
  render(createElement(AppProvider, null, createElement(RouterProvider, { router })));
  return router;
}
