// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the SMS template variable syntax the user types.
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failure } from '@/test/fake-server';
import { makeSignature, makeTemplate, renderSms, serveSms, signIn, TEMPLATES } from './sms-test-data';

let server: ReturnType<typeof serveSms> | undefined;

beforeEach(signIn);

afterEach(() => {
  server?.stop();
  server = undefined;
});

const row = (text: string) => screen.getByText(text).closest('tr') as HTMLElement;
const requestsTo = (method: string, url: string) =>
  server?.requests.filter((request) => request.method === method && request.url === url) ?? [];

async function openEditor() {
  fireEvent.click((await screen.findAllByRole('button', { name: '新建模板' }))[0] as HTMLElement);
  const drawer = await screen.findByRole('dialog');
  expect(within(drawer).getByText('新建模板')).toBeTruthy();
  return drawer;
}

async function choose(container: HTMLElement, label: string, option: string) {
  fireEvent.mouseDown(within(container).getByLabelText(label));
  fireEvent.click(await screen.findByTitle(option));
}

describe('模板管理', () => {
  it('lists templates with type, content, variables, state and reason', async () => {
    server = serveSms({
      templates: [
        makeTemplate({
          id: 't1',
          name: '验证码',
          type: 'verification',
          content: '您的验证码为${code}，5分钟内有效。',
          variables: ['code'],
          status: 'reviewing',
        }),
        makeTemplate({
          id: 't2',
          name: '双十一活动',
          type: 'marketing',
          status: 'rejected',
          rejectReason: '缺少退订方式',
        }),
      ],
    });
    renderSms('/sms/template');

    expect(await screen.findByText('验证码', { selector: 'span.font-medium' })).toBeTruthy();
    const reviewing = row('您的验证码为${code}，5分钟内有效。');
    expect(within(reviewing).getByText('${code}')).toBeTruthy();
    expect(within(reviewing).getByText('审核中')).toBeTruthy();
    expect(within(reviewing).getByRole('button', { name: '撤回' })).toBeTruthy();
    expect(within(reviewing).queryByRole('button', { name: '编辑' })).toBeNull();
    const rejected = row('双十一活动');
    expect(within(rejected).getByText('推广')).toBeTruthy();
    expect(within(rejected).getByText('缺少退订方式')).toBeTruthy();
  });

  it('blocks submitting a 推广 template without 拒收请回复R until it is fixed, then submits it', async () => {
    server = serveSms({ signatures: [makeSignature({ status: 'approved' })] });
    renderSms('/sms/template');
    const drawer = await openEditor();

    await choose(drawer, '模板类型', '推广');
    fireEvent.change(within(drawer).getByLabelText('模板名称'), { target: { value: '会员日' } });
    const content = within(drawer).getByLabelText('模板内容');
    fireEvent.change(content, { target: { value: '会员日全场8折，欢迎到店选购。' } });

    expect(
      await within(drawer).findByRole('listitem', { name: /错误：请在内容最后加上“拒收请回复R”/ }),
    ).toBeTruthy();
    fireEvent.click(within(drawer).getByRole('button', { name: '提交审核' }));
    expect(await within(drawer).findByText(/项须修改（见下方检查结果），修改后才能提交审核/)).toBeTruthy();
    expect(requestsTo('POST', TEMPLATES)).toHaveLength(0);

    fireEvent.change(content, { target: { value: '会员日全场8折，欢迎到店选购。拒收请回复R' } });
    await waitFor(() =>
      expect(within(drawer).queryByRole('listitem', { name: /错误：请在内容最后加上/ })).toBeNull(),
    );
    fireEvent.click(within(drawer).getByRole('button', { name: '提交审核' }));

    expect(await screen.findByText('会员日')).toBeTruthy();
    expect(await within(row('会员日')).findByText('审核中')).toBeTruthy();
    expect(requestsTo('POST', TEMPLATES)[0]?.body).toEqual({
      type: 'marketing',
      name: '会员日',
      content: '会员日全场8折，欢迎到店选购。拒收请回复R',
      remark: '',
    });
    expect(requestsTo('POST', `${TEMPLATES}/new100/submit`)).toHaveLength(1);
  });

  it("shows the server's refusal in the editor and keeps the draft it saved", async () => {
    const refusal = '模板未通过检查：内容含有被禁止的词语';
    server = serveSms({}, (request) => (request.url.endsWith('/submit') ? failure(400, refusal) : undefined));
    renderSms('/sms/template');
    const drawer = await openEditor();

    fireEvent.change(within(drawer).getByLabelText('模板名称'), { target: { value: '发货通知' } });
    fireEvent.change(within(drawer).getByLabelText('模板内容'), {
      target: { value: '您的订单已发货，请留意查收。' },
    });
    fireEvent.click(within(drawer).getByRole('button', { name: '提交审核' }));

    expect(await within(drawer).findByText(refusal)).toBeTruthy();
    expect(requestsTo('POST', TEMPLATES)).toHaveLength(1);

    // Trying again edits the saved draft rather than creating a second one.
    // jsdom never ends antd's motion, so the spinner's leaving icon stays in the button's name.
    fireEvent.click(within(drawer).getByRole('button', { name: /提交审核/ }));
    await waitFor(() => expect(requestsTo('PUT', `${TEMPLATES}/new100`)).toHaveLength(1));
    expect(requestsTo('POST', TEMPLATES)).toHaveLength(1);
  });

  it('withdraws a template under review and then lets it be edited', async () => {
    server = serveSms({ templates: [makeTemplate({ status: 'reviewing' })] });
    renderSms('/sms/template');

    expect(await screen.findByText('发货通知')).toBeTruthy();
    fireEvent.click(within(row('发货通知')).getByRole('button', { name: '撤回' }));
    const confirm = await screen.findByText('撤回模板「发货通知」的审核？');
    fireEvent.click(
      within(confirm.closest('.ant-popover') as HTMLElement).getByRole('button', { name: '撤回' }),
    );

    expect(await within(row('发货通知')).findByText('已撤回')).toBeTruthy();
    expect(requestsTo('POST', `${TEMPLATES}/t1/withdraw`)).toHaveLength(1);
    fireEvent.click(within(row('发货通知')).getByRole('button', { name: '编辑' }));
    const drawer = await screen.findByRole('dialog');
    expect(within(drawer).getByLabelText('模板内容')).toHaveProperty('value', '您的订单已发货，请留意查收。');
  });
});
