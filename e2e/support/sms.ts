import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { chooseOption, expectVisible, textOf, waitForToastsToLeave } from './console';

// A 1×1 PNG: the server checks the file's own bytes, not its name.
const PROOF_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);

export const smsRowOf = (p: Page, text: string) => p.locator('.ant-table-tbody tr').filter({ hasText: text });

/** 签名管理 as a user works it: create a signature, upload its proof, submit it for review. */
export async function submitSignatureInConsole(p: Page, signature: string) {
  await p.getByRole('link', { name: '签名管理', exact: true }).click();
  await p.waitForURL((url) => url.pathname === '/sms/signature');
  await waitForToastsToLeave(p);
  await p.getByRole('button', { name: '新建签名' }).first().click();
  const signatureDialog = p.getByRole('dialog').filter({ hasText: '新建签名' });
  await signatureDialog.getByLabel('签名名称').fill(signature);
  await signatureDialog.getByRole('button', { name: /^创\s*建$/ }).click();
  const signatureRow = smsRowOf(p, `【${signature}】`);
  await expectVisible(signatureRow, 'the new signature in the list');
  expect(await textOf(signatureRow)).toContain('待提交');

  await signatureRow.getByRole('button', { name: '上传证明' }).click();
  const proofDialog = p.getByRole('dialog').filter({ hasText: '上传资质证明' });
  await proofDialog
    .locator('input[type=file]')
    .setInputFiles({ name: '营业执照.png', mimeType: 'image/png', buffer: PROOF_PNG });
  await expectVisible(proofDialog.getByText('营业执照.png'), 'the chosen file name');
  await proofDialog.getByRole('button', { name: /^上\s*传$/ }).click();
  await expect.poll(() => textOf(signatureRow), { timeout: 10_000 }).toContain('营业执照.png');

  await waitForToastsToLeave(p);
  await signatureRow.getByRole('button', { name: '提交审核' }).click();
  await expect.poll(() => textOf(signatureRow), { timeout: 10_000 }).toContain('审核中');
  await expectVisible(signatureRow.getByRole('button', { name: '撤回' }), '撤回 while under review');
}

/**
 * 模板管理 as a user works it: a first text the linter refuses (its complaint shown and submission
 * refused), then the fixed text submitted for review.
 */
export async function submitTemplateInConsole(
  p: Page,
  template: {
    name: string;
    type: '验证码' | '通知' | '推广';
    rejected: string;
    complaint: RegExp;
    fixed: string;
  },
) {
  await p.getByRole('link', { name: '模板管理', exact: true }).click();
  await p.waitForURL((url) => url.pathname === '/sms/template');
  await waitForToastsToLeave(p);
  await p.getByRole('button', { name: '新建模板' }).first().click();
  const editor = p.locator('.ant-drawer').filter({ hasText: '新建模板' });
  await expectVisible(editor, 'the template editor');
  await chooseOption(p, editor.getByLabel('模板类型'), template.type);
  await editor.getByRole('textbox', { name: '模板名称' }).fill(template.name);
  const content = editor.getByRole('textbox', { name: '模板内容' });
  await content.fill(template.rejected);
  const complaint = editor.getByRole('listitem', { name: template.complaint });
  await expectVisible(complaint, "the linter's complaint");
  await editor.getByRole('button', { name: /提交审核/ }).click();
  await expectVisible(editor.getByText(/修改后才能提交审核/).first(), 'the refusal to submit');

  await content.fill(template.fixed);
  await expect.poll(() => complaint.count()).toBe(0);
  await editor.getByRole('button', { name: /提交审核/ }).click();
  const templateRow = smsRowOf(p, template.name);
  await expectVisible(templateRow, 'the submitted template in the list');
  await expect.poll(() => textOf(templateRow), { timeout: 10_000 }).toContain('审核中');
  expect(await textOf(templateRow)).toContain(template.type);
}
