// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${name} is the SMS template variable syntax the user types.
import { render, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { SmsTemplateLintPanel } from '../components/sms-template-lint-panel';

describe('SmsTemplateLintPanel', () => {
  it('shows what to change in a failing 推广 template, rule by rule, with its billed parts', () => {
    const content = `【限时】会员专享，全场低至5折，详见 t.cn/abc ${'欢迎选购'.repeat(10)}`;
    render(<SmsTemplateLintPanel type="marketing" content={content} signatureName="示例商城" />);

    expect(screen.getByText(/有 \d+ 项须修改/)).toBeTruthy();

    const issues = within(screen.getByRole('list', { name: '问题' }));
    expect(issues.getByRole('listitem', { name: /错误：内容中含有【】/ })).toBeTruthy();
    expect(issues.getByRole('listitem', { name: /错误：“t\.cn\/abc” 是短链接/ })).toBeTruthy();
    expect(issues.getByRole('listitem', { name: /错误：请在内容最后加上“拒收请回复R”/ })).toBeTruthy();
    expect(issues.getByRole('listitem', { name: /建议：.*按 2 条计费/ })).toBeTruthy();

    const rules = within(screen.getByRole('list', { name: '审核规则' }));
    expect(rules.getByRole('listitem', { name: '不含【】：须修改' })).toBeTruthy();
    expect(rules.getByRole('listitem', { name: '以“拒收请回复R”结尾：须修改' })).toBeTruthy();
    expect(rules.getByRole('listitem', { name: '不含验证码用语：通过' })).toBeTruthy();
    // Every rule is explained, passed or not, and 验证码-only rules are not listed for 推广.
    expect(rules.getByText(/推广短信必须让收信人可以退订/)).toBeTruthy();
    expect(rules.queryByRole('listitem', { name: /含“验证码”或“校验码”/ })).toBeNull();

    const parts = within(screen.getByRole('list', { name: '分条预览' })).getAllByRole('listitem');
    expect(parts).toHaveLength(2);
    expect(parts[0]?.getAttribute('aria-label')).toBe('第 1 条，67 字');
    expect(parts[0]?.textContent).toContain('【示例商城】【限时】');
    expect(screen.getByText('2 条')).toBeTruthy();
  });

  it('passes a good 验证码 template and previews it as one part with the signature and a 6-digit code', () => {
    render(
      <SmsTemplateLintPanel
        type="verification"
        content="您的验证码为${code}，5分钟内有效，请勿泄露给他人。"
        signatureName="示例科技"
      />,
    );

    expect(screen.getByText('符合全部规则，可以提交审核')).toBeTruthy();
    expect(screen.queryByRole('list', { name: '问题' })).toBeNull();
    const rules = within(screen.getByRole('list', { name: '审核规则' })).getAllByRole('listitem');
    expect(rules.length).toBeGreaterThan(5);
    for (const rule of rules) expect(rule.getAttribute('aria-label')).toMatch(/：通过$/);

    const parts = within(screen.getByRole('list', { name: '分条预览' })).getAllByRole('listitem');
    expect(parts).toHaveLength(1);
    expect(parts[0]?.textContent).toContain('【示例科技】您的验证码为123456，5分钟内有效，请勿泄露给他人。');
    expect(screen.getByText('1 条')).toBeTruthy();
    expect(screen.getByText('约 34 字')).toBeTruthy();
  });
});
