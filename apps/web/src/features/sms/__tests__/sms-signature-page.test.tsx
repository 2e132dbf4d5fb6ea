import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeSignature, renderSms, SIGNATURES, serveSms, signIn } from './sms-test-data';

let server: ReturnType<typeof serveSms> | undefined;

beforeEach(signIn);

afterEach(() => {
  server?.stop();
  server = undefined;
});

// antd labels every dialog by one test id, so a dialog is found by role and its title checked.
async function findDialog(title: string) {
  const dialog = await screen.findByRole('dialog');
  expect(within(dialog).getByText(title)).toBeTruthy();
  return dialog;
}

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const requestsTo = (method: string, url: string) =>
  server?.requests.filter((request) => request.method === method && request.url === url) ?? [];

describe('签名管理', () => {
  it('lists signatures in brackets with source, state and reason, and filters by state on the server', async () => {
    server = serveSms({
      signatures: [
        makeSignature({ id: 's1', name: '示例科技', status: 'approved', proofName: 'license.png' }),
        makeSignature({
          id: 's2',
          name: '示例商城',
          source: 'app',
          status: 'rejected',
          rejectReason: '证明材料不清晰',
        }),
      ],
    });
    const router = renderSms('/sms');

    expect(await screen.findByRole('heading', { name: '短信管理' })).toBeTruthy();
    expect(await screen.findByText('【示例科技】')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/sms/signature');
    expect(screen.getByRole('link', { name: '模板管理' })).toBeTruthy();
    // 已通过 is final: nothing to edit or submit.
    const approved = row('【示例科技】');
    expect(within(approved).getByText('已通过')).toBeTruthy();
    expect(within(approved).queryByRole('button', { name: '编辑' })).toBeNull();
    expect(within(approved).queryByRole('button', { name: '提交审核' })).toBeNull();
    const rejected = row('【示例商城】');
    expect(within(rejected).getByText('App')).toBeTruthy();
    expect(within(rejected).getByText('未通过')).toBeTruthy();
    expect(within(rejected).getByText('证明材料不清晰')).toBeTruthy();
    expect(within(rejected).getByRole('button', { name: '编辑' })).toBeTruthy();
    // Without a proof the server would refuse it, so it is not offered.
    expect(within(rejected).getByRole('button', { name: '提交审核' })).toHaveProperty('disabled', true);

    fireEvent.mouseDown(screen.getByLabelText('按状态筛选'));
    fireEvent.click(await screen.findByTitle('未通过'));

    await waitFor(() => expect(screen.queryByText('【示例科技】')).toBeNull());
    expect(requestsTo('GET', SIGNATURES).at(-1)?.config.params).toEqual({
      page: 1,
      pageSize: 20,
      status: 'rejected',
    });
    expect(router.state.location.search).toBe('?status=rejected');
  });

  it('creates a signature, checking the name rule before the server does', async () => {
    server = serveSms({});
    renderSms('/sms/signature');

    expect(await screen.findByText(/还没有签名/)).toBeTruthy();
    fireEvent.click(screen.getAllByRole('button', { name: '新建签名' })[0] as HTMLElement);
    const dialog = await findDialog('新建签名');
    fireEvent.change(within(dialog).getByLabelText('签名名称'), { target: { value: '【示例】' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));

    expect(await within(dialog).findByText(/不含【】等符号/)).toBeTruthy();
    expect(requestsTo('POST', SIGNATURES)).toHaveLength(0);

    fireEvent.change(within(dialog).getByLabelText('签名名称'), { target: { value: '示例科技' } });
    fireEvent.click(within(dialog).getByRole('button', { name: '创建' }));

    expect(await screen.findByText('【示例科技】')).toBeTruthy();
    expect(requestsTo('POST', SIGNATURES)[0]?.body).toEqual({
      name: '示例科技',
      source: 'enterprise',
      remark: '',
    });
    expect(within(row('【示例科技】')).getByText('待提交')).toBeTruthy();
  });

  it('uploads a proof, then submits the signature for review', async () => {
    server = serveSms({ signatures: [makeSignature()] });
    renderSms('/sms/signature');

    expect(await screen.findByText('【示例科技】')).toBeTruthy();
    fireEvent.click(within(row('【示例科技】')).getByRole('button', { name: '上传证明' }));
    const dialog = await findDialog('上传资质证明：【示例科技】');
    const input = dialog.querySelector('input[type="file"]');
    if (!(input instanceof HTMLInputElement)) throw new Error('no file input');
    fireEvent.change(input, {
      target: { files: [new File(['%PNG'], '营业执照.png', { type: 'image/png' })] },
    });
    expect(await within(dialog).findByText('营业执照.png')).toBeTruthy();
    fireEvent.click(within(dialog).getByRole('button', { name: '上传' }));

    expect(await within(row('【示例科技】')).findByText('营业执照.png')).toBeTruthy();
    const sent = requestsTo('POST', `${SIGNATURES}/s1/proof`)[0]?.body as FormData;
    expect((sent.get('file') as File).name).toBe('营业执照.png');

    const submit = within(row('【示例科技】')).getByRole('button', { name: '提交审核' });
    await waitFor(() => expect(submit).toHaveProperty('disabled', false));
    fireEvent.click(submit);

    expect(await within(row('【示例科技】')).findByText('审核中')).toBeTruthy();
    expect(requestsTo('POST', `${SIGNATURES}/s1/submit`)).toHaveLength(1);
    expect(within(row('【示例科技】')).getByRole('button', { name: '撤回' })).toBeTruthy();
  });

  it('refuses a proof that is not PNG, JPG or PDF without uploading it', async () => {
    server = serveSms({ signatures: [makeSignature()] });
    renderSms('/sms/signature');

    fireEvent.click(
      within(await screen.findByRole('row', { name: /示例科技/ })).getByRole('button', { name: '上传证明' }),
    );
    const dialog = await screen.findByRole('dialog');
    const input = dialog.querySelector('input[type="file"]') as HTMLInputElement;
    fireEvent.change(input, { target: { files: [new File(['x'], 'license.docx')] } });

    expect(await within(dialog).findByText('只支持 PNG、JPG 或 PDF 文件')).toBeTruthy();
    expect(within(dialog).getByRole('button', { name: '上传' })).toHaveProperty('disabled', true);
  });

  it('withdraws a signature under review after confirming', async () => {
    server = serveSms({ signatures: [makeSignature({ status: 'reviewing', proofName: 'a.png' })] });
    renderSms('/sms/signature');

    expect(await screen.findByText('【示例科技】')).toBeTruthy();
    expect(within(row('【示例科技】')).queryByRole('button', { name: '编辑' })).toBeNull();
    fireEvent.click(within(row('【示例科技】')).getByRole('button', { name: '撤回' }));
    const confirm = await screen.findByText('撤回签名【示例科技】的审核？');
    fireEvent.click(
      within(confirm.closest('.ant-popover') as HTMLElement).getByRole('button', { name: '撤回' }),
    );

    expect(await within(row('【示例科技】')).findByText('已撤回')).toBeTruthy();
    expect(requestsTo('POST', `${SIGNATURES}/s1/withdraw`)).toHaveLength(1);
    expect(within(row('【示例科技】')).getByRole('button', { name: '编辑' })).toBeTruthy();
  });
});
