// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the SMS template variable syntax.
import type { SmsBatchPreview, SmsMessage } from '@callpilot/contracts';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ok } from '@/test/fake-server';
import { makeSignature, makeTemplate, renderSms, serveSms, signIn } from './sms-test-data';

let server: ReturnType<typeof serveSms> | undefined;

beforeEach(signIn);
afterEach(() => {
  server?.stop();
  server = undefined;
  vi.useRealTimers();
});

const MESSAGES = '/api/project/p1/sms/messages';
const UPLOADS = '/api/project/p1/sms/batches/uploads';
const requestsTo = (method: string, url: string) =>
  server?.requests.filter((request) => request.method === method && request.url === url) ?? [];

async function choose(label: string, option: string) {
  fireEvent.mouseDown(await screen.findByLabelText(label));
  fireEvent.click(await screen.findByTitle(option));
}

const approved = {
  signatures: [makeSignature({ id: 's1', name: '云呼科技', status: 'approved' })],
  templates: [
    makeTemplate({
      id: 't1',
      name: '会员日活动',
      type: 'marketing',
      // With 【云呼科技】 and a name the text runs past 70 characters: two parts.
      content: `\${name}您好，${'会员日全场八折优惠欢迎光临'.repeat(5)}拒收请回复R`,
      variables: ['name'],
      status: 'approved',
    }),
  ],
};

describe('单条发送', () => {
  it('previews the exact text and its parts, says a 推广 SMS waits at night, and shows the result', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-24T21:30:00+08:00'));
    const waiting: Partial<SmsMessage> = {
      id: 'm1',
      phone: '13800138000',
      status: 'waiting',
      content: '【云呼科技】张三您好…',
      parts: 2,
      timeline: [{ status: 'waiting', at: '2026-11-24T13:30:00.000Z', detail: '将于 11-25 08:00 发出' }],
    };
    server = serveSms(approved, (request) =>
      request.url === MESSAGES
        ? { status: 201, body: { success: true, status: 201, data: waiting } }
        : undefined,
    );
    renderSms('/sms/send');

    await choose('签名', '【云呼科技】');
    await choose('模板', '会员日活动');
    fireEvent.change(await screen.findByLabelText('变量 ${name}'), { target: { value: '张三' } });

    const preview = screen.getByRole('complementary', { name: '短信预览' });
    const text = `【云呼科技】张三您好，${'会员日全场八折优惠欢迎光临'.repeat(5)}拒收请回复R`;
    expect(await within(preview).findByText(text)).toBeTruthy();
    expect(within(preview).getByText(new RegExp(`共 ${text.length} 字，按 2 条计费`))).toBeTruthy();
    expect(within(preview).getByText(/现在提交将等待至明天 08:00 发出/)).toBeTruthy();

    fireEvent.change(screen.getByLabelText('手机号'), { target: { value: '+86 138 0013 8000' } });
    fireEvent.click(screen.getByRole('button', { name: '发送' }));
    expect(await within(preview).findByText('等待发送时段：将于 11-25 08:00 发出')).toBeTruthy();
    expect(requestsTo('POST', MESSAGES)[0]?.body).toEqual({
      phone: '+86 138 0013 8000',
      signatureId: 's1',
      templateId: 't1',
      variables: { name: '张三' },
    });
    expect(within(preview).getByRole('link', { name: '查看发送记录' })).toBeTruthy();
  });

  it('sends a 推广 SMS without a notice in the daytime, and links to 签名管理 when none is approved', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-24T10:00:00+08:00'));
    server = serveSms({ templates: approved.templates });
    renderSms('/sms/send');
    expect(await screen.findByRole('link', { name: '签名管理' })).toBeTruthy();
    await choose('模板', '会员日活动');
    expect(screen.queryByText(/现在提交将等待/)).toBeNull();
  });
});

const preview = (overrides: Partial<SmsBatchPreview> = {}): SmsBatchPreview => ({
  uploadId: 'u1',
  fileName: '名单.csv',
  signatureId: 's1',
  templateId: 't1',
  headers: ['手机号', '姓名', '昵称'],
  variables: ['name'],
  sample: [{ 手机号: '13800138000', 姓名: '张三', 昵称: '三哥' }],
  mapping: { phone: '手机号', variables: { name: '姓名' } },
  rows: 5,
  valid: 3,
  counts: { invalid: 1, duplicate: 1, opted_out: 0, variable: 0, over_cap: 0 },
  texts: [{ row: 2, phone: '13800138000', content: '【云呼科技】张三您好', parts: 1 }],
  estimatedParts: 3,
  sendAfter: null,
  ...overrides,
});

describe('批量发送', () => {
  it('uploads a list, recounts with another mapping, and confirms', async () => {
    server = serveSms(approved, (request) => {
      if (request.url === UPLOADS) return ok(preview());
      if (request.url === `${UPLOADS}/u1/preview`) {
        return ok(
          preview({
            mapping: { phone: '手机号', variables: { name: '昵称' } },
            texts: [{ row: 2, phone: '13800138000', content: '【云呼科技】三哥您好', parts: 1 }],
          }),
        );
      }
      if (request.url === `${UPLOADS}/u1/commit`) {
        return ok({ id: 'b1', accepted: 3, rejected: 2, total: 5 });
      }
      if (request.url === '/api/project/p1/sms/batches')
        return ok({ items: [], total: 0, page: 1, pageSize: 10 });
      return undefined;
    });
    renderSms('/sms/send?mode=batch');
    await choose('批量发送签名', '【云呼科技】');
    await choose('批量发送模板', '会员日活动');
    const input = document.querySelector('input[type="file"]') as HTMLInputElement;
    fireEvent.change(input, { target: { files: [new File(['手机号,姓名\n13800138000,张三'], '名单.csv')] } });

    expect(await screen.findByText('第 2 行 13800138000（1 条）')).toBeTruthy();
    expect(screen.getByText('【云呼科技】张三您好')).toBeTruthy();
    expect(requestsTo('POST', UPLOADS)[0]?.config.params).toEqual({ signatureId: 's1', templateId: 't1' });
    const counts = screen.getByText('号码无效').closest('table') as HTMLElement;
    expect(within(counts).getByText('预计计费条数')).toBeTruthy();

    await choose('变量 name 的列', '昵称');
    expect(await screen.findByText('【云呼科技】三哥您好')).toBeTruthy();
    expect(requestsTo('POST', `${UPLOADS}/u1/preview`)[0]?.body).toEqual({
      mapping: { phone: '手机号', variables: { name: '昵称' } },
    });

    fireEvent.click(screen.getByRole('button', { name: '确认发送 3 条' }));
    expect(await screen.findByText('已提交：3 条进入发送队列，2 行未通过')).toBeTruthy();
    expect(requestsTo('POST', `${UPLOADS}/u1/commit`)[0]?.body).toEqual({
      mapping: { phone: '手机号', variables: { name: '昵称' } },
    });
    expect(screen.getByRole('button', { name: '下载未通过行' })).toBeTruthy();
    expect(await screen.findByText('还没有批量发送记录')).toBeTruthy();
  });
});

const SETTINGS = '/api/project/p1/sms/settings';
const savedAliyun = {
  provider: 'aliyun',
  keyId: 'LTAI5tExample',
  hasSecret: true,
  sdkAppId: null,
  region: null,
  qualificationId: '12345',
  dailyCapPerNumber: 5,
  updatedAt: '2026-11-24T02:00:00.000Z',
  pushUrls: {
    receipts: 'https://console.example.com/api/sms-push/aliyun/p1/t0ken/receipts',
    replies: 'https://console.example.com/api/sms-push/aliyun/p1/t0ken/replies',
  },
};

describe('服务商设置', () => {
  it('never shows the saved secret and keeps it when left blank', async () => {
    server = serveSms({}, (request) => {
      if (request.url !== SETTINGS) return undefined;
      return request.method === 'PUT' ? ok({ ...savedAliyun, dailyCapPerNumber: 3 }) : ok(savedAliyun);
    });
    renderSms('/sms/settings');
    const secret = (await screen.findByLabelText('AccessKey Secret')) as HTMLInputElement;
    expect(secret.value).toBe('');
    expect(secret.placeholder).toBe('已保存，留空则不修改');
    expect((screen.getByLabelText('AccessKey ID') as HTMLInputElement).value).toBe('LTAI5tExample');
    // Where to point the vendor's receipt and reply pushes.
    const push = screen.getByRole('region', { name: '回执与上行地址' });
    expect(push.textContent).toContain(savedAliyun.pushUrls.receipts);
    expect(push.textContent).toContain(savedAliyun.pushUrls.replies);

    fireEvent.change(screen.getByLabelText('每个号码每日上限'), { target: { value: '3' } });
    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    expect(await screen.findByText('已保存')).toBeTruthy();
    expect(requestsTo('PUT', SETTINGS)[0]?.body).toEqual({
      provider: 'aliyun',
      accessKeyId: 'LTAI5tExample',
      qualificationId: '12345',
      dailyCapPerNumber: 3,
    });
  });

  it('asks for the secret again when the key id changes', async () => {
    server = serveSms({}, (request) => (request.url === SETTINGS ? ok(savedAliyun) : undefined));
    renderSms('/sms/settings');
    const keyId = await screen.findByLabelText('AccessKey ID');
    fireEvent.change(keyId, { target: { value: 'LTAI5tOther' } });
    await waitFor(() =>
      expect((screen.getByLabelText('AccessKey Secret') as HTMLInputElement).placeholder).toBe(
        '请输入AccessKey Secret',
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: '保存' }));
    expect(await screen.findByText('请输入AccessKey Secret')).toBeTruthy();
    expect(requestsTo('PUT', SETTINGS)).toHaveLength(0);
  });

  it('is read-only for members', async () => {
    signIn();
    const { useUserStore } = await import('@/stores/user-store');
    useUserStore.getState().setUserInfo({ ...useUserStore.getState().userInfo, isOwnerOrAdmin: false });
    server = serveSms({}, (request) => (request.url === SETTINGS ? ok(savedAliyun) : undefined));
    renderSms('/sms/settings');
    expect(await screen.findByText('仅项目所有者或管理员可以修改短信服务商设置')).toBeTruthy();
    await waitFor(() =>
      expect((screen.getByLabelText('AccessKey ID') as HTMLInputElement).disabled).toBe(true),
    );
    expect(screen.queryByRole('button', { name: '保存' })).toBeNull();
  });
});
