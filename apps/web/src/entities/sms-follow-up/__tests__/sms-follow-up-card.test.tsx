// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the SMS template variable syntax.
import type { SmsFollowUpRule, SmsSignature, SmsTemplate } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useUserStore } from '@/stores/user-store';
import { failure, ok, startFakeServer } from '@/test/fake-server';
import { renderRoute } from '@/test/render-route';
import { SmsFollowUpCard } from '../components/sms-follow-up-card';

const TIME = '2026-03-01T02:00:00.000Z';
const review = {
  status: 'approved',
  rejectReason: null,
  provider: 'outbox',
  submittedAt: TIME,
  reviewedAt: TIME,
  createdAt: TIME,
  updatedAt: TIME,
} as const;
const SIGNATURE: SmsSignature = {
  id: 's1',
  name: '星河宽带',
  source: 'enterprise',
  remark: '',
  proofName: 'a.png',
  ...review,
};
const TEMPLATE: SmsTemplate = {
  id: 't1',
  name: '回访感谢',
  type: 'notification',
  content: '${name}您好，您咨询的${plan}已为您预留。',
  variables: ['name', 'plan'],
  remark: '',
  ...review,
};

let server: ReturnType<typeof startFakeServer> | undefined;
afterEach(() => {
  server?.stop();
  server = undefined;
});
beforeEach(() => {
  localStorage.setItem('token', 'tok-1');
  useUserStore.getState().setUserInfo({
    isOwnerOrAdmin: true,
    id: 'u1',
    email: 'owner@example.com',
    displayName: '王小明',
    profile: '',
    projects: [{ id: 'p1', disabled: false, name: '华东外呼项目' }],
  });
});

function serve(options: { templates?: SmsTemplate[] } = {}) {
  const rules: SmsFollowUpRule[] = [];
  server = startFakeServer((request) => {
    const paged = (items: unknown[]) => ok({ items, total: items.length, page: 1, pageSize: 100 });
    if (request.url === '/api/project/p1/sms/signatures') return paged([SIGNATURE]);
    if (request.url === '/api/project/p1/sms/templates') return paged(options.templates ?? [TEMPLATE]);
    if (request.url === '/api/project/p1/sms/follow-up-rules' && request.method === 'GET') return ok(rules);
    if (request.url === '/api/project/p1/sms/follow-up-rules' && request.method === 'POST') {
      const body = request.body as Omit<SmsFollowUpRule, 'id'>;
      const rule = {
        ...body,
        id: `r${rules.length + 1}`,
        signatureName: SIGNATURE.name,
        templateName: TEMPLATE.name,
        problem: null,
        createdAt: TIME,
      } as SmsFollowUpRule;
      rules.push(rule);
      return ok(rule);
    }
    return failure(404, '请求地址出错', 'NOT_FOUND');
  });
  return rules;
}

function renderCard() {
  renderRoute('/assistant/edit', {
    path: '/assistant/edit',
    element: (
      <SmsFollowUpCard
        projectId="p1"
        owner={{ ownerType: 'assistant', ownerId: 'a1' }}
        variableNames={['套餐名称']}
      />
    ),
  });
}

async function choose(container: HTMLElement, label: string, option: string) {
  fireEvent.mouseDown(within(container).getByLabelText(label));
  const options = await screen.findAllByTitle(option);
  fireEvent.click(options[options.length - 1] as HTMLElement);
}

describe('跟进短信', () => {
  it('requires a source for every template variable, previews the text and saves the mapping', async () => {
    const rules = serve();
    renderCard();
    expect(await screen.findByText(/还没有跟进短信规则/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: '添加规则' }));
    const dialog = await screen.findByRole('dialog');
    await choose(dialog, '签名', '【星河宽带】');
    await choose(dialog, '模板', '回访感谢');

    // Saving without the variables' sources names each missing one and sends nothing.
    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    expect(await within(dialog).findByText('请为变量「name」选择取值来源')).toBeTruthy();
    expect(within(dialog).getByText('请为变量「plan」选择取值来源')).toBeTruthy();
    expect(server?.requests.some((r) => r.method === 'POST')).toBe(false);

    await choose(dialog, '${name} 的取值来源', '客户姓名');
    await choose(dialog, '${plan} 的取值来源', '固定值');
    // What the assistant asked to send exists only when the assistant asks.
    expect(screen.queryByTitle('助手要发送的内容')).toBeNull();
    fireEvent.change(within(dialog).getByLabelText('${plan} 的固定值'), { target: { value: '千兆宽带' } });
    const preview = within(dialog).getByRole('region', { name: '短信预览' });
    await waitFor(() =>
      expect(preview.textContent).toContain('【星河宽带】张先生您好，您咨询的千兆宽带已为您预留。'),
    );

    fireEvent.click(within(dialog).getByRole('button', { name: '保存' }));
    await waitFor(() => expect(rules).toHaveLength(1));
    expect(rules[0]).toMatchObject({
      ownerType: 'assistant',
      ownerId: 'a1',
      trigger: 'grade',
      grades: ['A'],
      signatureId: 's1',
      templateId: 't1',
      variableMap: { name: { from: 'contact_name' }, plan: { from: 'fixed', value: '千兆宽带' } },
      enabled: true,
    });
    const list = await screen.findByRole('list', { name: '跟进短信规则' });
    expect(within(list).getByText('意向等级为 A（有明确意向） 时')).toBeTruthy();
  });

  it('points to 短信管理 when nothing is approved yet', async () => {
    serve({ templates: [] });
    renderCard();
    fireEvent.click(await screen.findByRole('button', { name: '添加规则' }));
    const dialog = await screen.findByRole('dialog');
    const link = await within(dialog).findByRole('link', { name: '短信管理' });
    expect(link.getAttribute('href')).toBe('/sms/template');
    expect(within(dialog).getByText('项目还没有已通过审核的模板')).toBeTruthy();
  });
});
