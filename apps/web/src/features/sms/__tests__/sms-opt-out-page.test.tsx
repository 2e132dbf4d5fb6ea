import type { SmsOptOut } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok } from '@/test/fake-server';
import { renderSms, serveSms, signIn } from './sms-test-data';

let server: ReturnType<typeof serveSms> | undefined;

beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
});

const OPT_OUTS = '/api/project/p1/sms/opt-outs';

/** The do-not-disturb routes over one in-memory list, searched by phone as the server does. */
function serveOptOuts(initial: SmsOptOut[]) {
  const list = [...initial];
  server = serveSms({}, (request) => {
    if (request.url === OPT_OUTS && request.method === 'GET') {
      const { phone } = request.config.params ?? {};
      const items = list.filter((row) => !phone || row.phone.includes(phone));
      return ok({ items, total: items.length, page: 1, pageSize: 20 });
    }
    if (request.url === OPT_OUTS && request.method === 'POST') {
      const added: SmsOptOut = {
        phone: (request.body as { phone: string }).phone,
        source: 'manual',
        reply: '',
        createdAt: '2026-11-24T02:00:00.000Z',
      };
      list.unshift(added);
      return { status: 201, body: { success: true, status: 201, data: added } };
    }
    if (request.url.startsWith(`${OPT_OUTS}/`) && request.method === 'DELETE') {
      const phone = decodeURIComponent(request.url.slice(OPT_OUTS.length + 1));
      list.splice(
        list.findIndex((row) => row.phone === phone),
        1,
      );
      return ok(null);
    }
    return undefined;
  });
}

describe('免打扰', () => {
  it('lists numbers with where they came from, adds one and removes one after confirming', async () => {
    serveOptOuts([
      { phone: '13800138000', source: 'reply', reply: 'TD', createdAt: '2026-11-23T02:00:00.000Z' },
      { phone: '13900139000', source: 'api', reply: '', createdAt: '2026-11-22T02:00:00.000Z' },
    ]);
    renderSms('/sms/opt-outs');
    const replied = (await screen.findByText('13800138000')).closest('tr') as HTMLElement;
    expect(within(replied).getByText('回复退订')).toBeTruthy();
    expect(within(replied).getByText('TD')).toBeTruthy();
    expect(
      within(screen.getByText('13900139000').closest('tr') as HTMLElement).getByText('开放接口'),
    ).toBeTruthy();

    fireEvent.click(screen.getByRole('button', { name: '添加号码' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByLabelText('手机号'), { target: { value: '12345' } });
    fireEvent.click(within(dialog).getByRole('button', { name: /添\s*加/ }));
    expect(await within(dialog).findByText('手机号须为 11 位中国大陆手机号')).toBeTruthy();
    fireEvent.change(within(dialog).getByLabelText('手机号'), { target: { value: '13700137000' } });
    fireEvent.click(within(dialog).getByRole('button', { name: /添\s*加/ }));
    const added = (await screen.findByText('13700137000')).closest('tr') as HTMLElement;
    expect(within(added).getByText('手动添加')).toBeTruthy();

    fireEvent.click(within(replied).getByRole('button', { name: '移出' }));
    const confirm = (await screen.findByText('将 13800138000 移出免打扰名单？')).closest(
      '.ant-popover',
    ) as HTMLElement;
    fireEvent.click(within(confirm).getByRole('button', { name: /移\s*出/ }));
    await waitFor(() => expect(screen.queryByText('13800138000')).toBeNull());
    expect(server?.requests.some((r) => r.method === 'DELETE' && r.url === `${OPT_OUTS}/13800138000`)).toBe(
      true,
    );
  });

  it('searches by phone on the server', async () => {
    serveOptOuts([
      { phone: '13800138000', source: 'manual', reply: '', createdAt: '2026-11-23T02:00:00.000Z' },
      { phone: '13900139000', source: 'manual', reply: '', createdAt: '2026-11-22T02:00:00.000Z' },
    ]);
    renderSms('/sms/opt-outs');
    expect(await screen.findByText('13900139000')).toBeTruthy();
    const search = screen.getByLabelText('按手机号搜索');
    fireEvent.change(search, { target: { value: '1380013' } });
    fireEvent.keyDown(search, { key: 'Enter', code: 'Enter', keyCode: 13 });
    await waitFor(() => expect(screen.queryByText('13900139000')).toBeNull());
    expect(screen.getByText('13800138000')).toBeTruthy();
  });
});
