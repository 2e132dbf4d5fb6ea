import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { launchBrowser } from '../support/browser';
import { expectVisible, openLoggedIn, textOf, waitForToastsToLeave } from '../support/console';
import { tempDir } from '../support/server';

const baseUrl = inject('baseUrl');
let browser: Browser;
let context: BrowserContext | undefined;
let filesDir: string;

// Words of this run only: the demo project is shared with the other files of the suite.
const run = Date.now().toString(36).slice(-5);
const STANDARD = `机顶盒${run}`;
const VARIANTS = [`小盒子${run}`, `电视盒${run}`];
const IMPORTED = `遥控器${run}`;
const IMPORT_FILE = '口语词典.csv';

beforeAll(async () => {
  browser = await launchBrowser();
  filesDir = tempDir('knowledge-terms-files');
  // One new entry, one row whose variant already belongs to the entry added by hand, one without a standard.
  fs.writeFileSync(
    path.join(filesDir, IMPORT_FILE),
    `\uFEFF标准词,口语说法\r\n${IMPORTED},摇控${run}|遥控板${run}\r\n路由器${run},${VARIANTS[0]}\r\n,没有标准词\r\n`,
  );
});
afterAll(async () => {
  await browser?.close();
  if (filesDir) fs.rmSync(filesDir, { recursive: true, force: true });
});
afterEach(async () => {
  await context?.close();
  context = undefined;
});

describe('口语词典', () => {
  it('adds, finds, imports with refused rows to download, and deletes the project’s own terms', async () => {
    const opened = await openLoggedIn(browser, baseUrl, inject('demoEmail'), inject('demoPassword'));
    context = opened.context;
    const p = opened.page;

    await p.getByRole('link', { name: '知识库', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/knowledge/list');
    await p.getByRole('button', { name: '口语词典', exact: true }).click();
    await p.waitForURL((url) => url.pathname === '/knowledge/terms');
    await expectVisible(p.getByRole('heading', { name: '口语词典', level: 1 }), 'the page heading');
    await expectVisible(p.getByText(/对本项目的所有知识库生效/), 'what the dictionary does');

    // 添加词条: the standard and the variants, each confirmed with Enter.
    await p.getByRole('button', { name: '添加词条', exact: true }).first().click();
    const dialog = p.getByRole('dialog').filter({ hasText: '添加词条' });
    await expectVisible(dialog, 'the add dialog');
    await dialog.getByLabel('标准词').fill(STANDARD);
    const variants = dialog.getByLabel('口语说法');
    for (const variant of VARIANTS) {
      await variants.fill(variant);
      await variants.press('Enter');
    }
    await dialog.getByRole('button', { name: '添加', exact: true }).click();
    await expectVisible(p.getByText('词条已添加', { exact: true }), 'the added toast');
    const row = p.getByRole('row').filter({ hasText: STANDARD });
    await expectVisible(row, 'the new entry');
    for (const variant of VARIANTS) await expectVisible(row.getByText(variant, { exact: true }), variant);

    // Found by one of its variants.
    const search = p.getByRole('searchbox', { name: '搜索词条' });
    await search.fill(VARIANTS[1]!);
    await search.press('Enter');
    await expect.poll(() => p.getByRole('row').filter({ hasText: run }).count(), { timeout: 10_000 }).toBe(1);
    await search.fill('');
    await search.press('Enter');

    // Import: the good row lands, the others come back with their reasons and as a CSV.
    await waitForToastsToLeave(p);
    await p.locator('input[type=file]').setInputFiles(path.join(filesDir, IMPORT_FILE));
    const notice = p.getByRole('alert').filter({ hasText: '导入完成' });
    await expectVisible(notice, 'the import result', 15_000);
    expect(await textOf(notice)).toContain('导入完成：新增 1 条，合并 0 条，2 行未导入');
    expect(await textOf(notice)).toContain(`第 3 行：口语说法“${VARIANTS[0]}”已属于标准词“${STANDARD}”`);
    expect(await textOf(notice)).toContain('第 4 行：请输入标准词');
    await expectVisible(p.getByRole('row').filter({ hasText: IMPORTED }), 'the imported entry');

    const downloading = p.waitForEvent('download', { timeout: 15_000 });
    await notice.getByRole('button', { name: '下载未导入的行' }).click();
    const download = await downloading;
    expect(download.suggestedFilename()).toBe('口语词典未导入的行.csv');
    const text = fs.readFileSync(await download.path(), 'utf8');
    expect(text.replace(/^\uFEFF/, '').split('\r\n')).toEqual([
      '行号,标准词,口语说法,原因',
      `3,路由器${run},${VARIANTS[0]},口语说法“${VARIANTS[0]}”已属于标准词“${STANDARD}”`,
      '4,,没有标准词,请输入标准词',
      '',
    ]);

    // Deleted after confirmation, and gone after a reload too.
    for (const standard of [STANDARD, IMPORTED]) {
      await p.getByRole('row').filter({ hasText: standard }).getByRole('button', { name: '删除' }).click();
      await p
        .locator('.ant-popover')
        .filter({ hasText: `删除词条「${standard}」？` })
        .getByRole('button', { name: '删除' })
        .click();
      await expect
        .poll(() => p.getByRole('row').filter({ hasText: standard }).count(), { timeout: 10_000 })
        .toBe(0);
    }
    await p.reload();
    await expectVisible(p.getByRole('heading', { name: '口语词典', level: 1 }), 'the page after a reload');
    await expect.poll(() => p.getByRole('row').filter({ hasText: run }).count(), { timeout: 10_000 }).toBe(0);
  });
});
