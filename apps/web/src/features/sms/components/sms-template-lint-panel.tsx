import {
  lintSmsTemplate,
  SMS_MULTI_PART_LENGTH,
  SMS_SINGLE_PART_LENGTH,
  SMS_TEMPLATE_TYPE_LABELS,
  type SmsLintIssue,
  type SmsTemplateType,
  smsLength,
  smsLintRulesFor,
} from '@callpilot/contracts';
import { Alert } from 'antd';
import { useMemo } from 'react';

type Props = {
  type: SmsTemplateType;
  content: string;
  /** The signature's name without brackets; the 【name】 counts towards the length. */
  signatureName?: string;
  /** Sample values to preview with; without them each variable takes an assumed length. */
  values?: Record<string, string>;
};

type RuleState = 'passed' | 'error' | 'warning';

const STATE_LABEL: Record<RuleState, string> = { passed: '通过', error: '须修改', warning: '建议修改' };
const STATE_MARK: Record<RuleState, string> = { passed: '✓', error: '✗', warning: '!' };
const STATE_COLOR: Record<RuleState, string> = {
  passed: 'text-green-600',
  error: 'text-red-600',
  warning: 'text-amber-600',
};

const issueColor = (issue: SmsLintIssue) =>
  issue.level === 'error'
    ? 'border-red-200 bg-red-50 text-red-700'
    : 'border-amber-200 bg-amber-50 text-amber-800';

/**
 * The linter's live result under a template form: the same rules the server applies before a
 * template goes to review, each explained, so the user fixes here what a reviewer would reject
 * hours later.
 */
export function SmsTemplateLintPanel({ type, content, signatureName, values }: Props) {
  const result = useMemo(
    () => lintSmsTemplate({ type, content, signatureName, values }),
    [type, content, signatureName, values],
  );
  const rules = smsLintRulesFor(type);
  const titleOf = new Map(rules.map((rule) => [rule.id, rule.title]));
  const stateOf = (ruleId: string): RuleState => {
    const levels = result.issues.filter((issue) => issue.rule === ruleId).map((issue) => issue.level);
    if (levels.includes('error')) return 'error';
    return levels.includes('warning') ? 'warning' : 'passed';
  };
  const errors = result.issues.filter((issue) => issue.level === 'error').length;
  const warnings = result.issues.length - errors;
  const sentLength = result.preview.reduce((sum, part) => sum + smsLength(part), 0);

  return (
    <section aria-label="模板检查" className="flex flex-col gap-4 text-sm">
      <Alert
        showIcon
        type={errors > 0 ? 'error' : warnings > 0 ? 'warning' : 'success'}
        title={
          errors > 0
            ? `有 ${errors} 项须修改，修改后才能提交审核`
            : warnings > 0
              ? `可以提交审核，另有 ${warnings} 条建议`
              : '符合全部规则，可以提交审核'
        }
      />

      <dl aria-label="字数与计费" className="grid grid-cols-3 gap-2">
        <div>
          <dt className="text-gray-500">模板字数</dt>
          <dd className="text-base font-medium">{result.length} 字</dd>
        </div>
        <div>
          <dt className="text-gray-500">发送字数（含签名）</dt>
          <dd className="text-base font-medium">约 {sentLength} 字</dd>
        </div>
        <div>
          <dt className="text-gray-500">计费条数</dt>
          <dd className="text-base font-medium">{result.partsWithSignature} 条</dd>
        </div>
      </dl>

      {result.issues.length > 0 && (
        <div>
          <h4 className="mb-2 font-medium">需要修改</h4>
          <ul aria-label="问题" className="flex flex-col gap-2">
            {result.issues.map((issue) => (
              <li
                // The linter never repeats a message within a rule.
                key={`${issue.rule}:${issue.message}`}
                aria-label={`${issue.level === 'error' ? '错误' : '建议'}：${issue.message}`}
                className={`rounded border px-3 py-2 ${issueColor(issue)}`}
              >
                <span className="font-medium">{titleOf.get(issue.rule) ?? issue.rule}：</span>
                {issue.message}
              </li>
            ))}
          </ul>
        </div>
      )}

      <div>
        <h4 className="mb-2 font-medium">
          分条预览
          <span className="ml-2 font-normal text-gray-500">
            {SMS_SINGLE_PART_LENGTH} 字以内 1 条，超过按每 {SMS_MULTI_PART_LENGTH} 字 1 条
          </span>
        </h4>
        {result.preview.length === 0 ? (
          <p className="text-gray-500">输入内容后显示预览。</p>
        ) : (
          <ol aria-label="分条预览" className="flex flex-col gap-2">
            {result.preview.map((part, index) => (
              <li
                // biome-ignore lint/suspicious/noArrayIndexKey: parts have no identity besides their order
                key={index}
                aria-label={`第 ${index + 1} 条，${smsLength(part)} 字`}
                className="rounded bg-gray-50 px-3 py-2"
              >
                <div className="mb-1 text-xs text-gray-500">
                  第 {index + 1} 条 · {smsLength(part)} 字
                </div>
                <div className="break-all whitespace-pre-wrap">{part}</div>
              </li>
            ))}
          </ol>
        )}
      </div>

      <div>
        <h4 className="mb-2 font-medium">{SMS_TEMPLATE_TYPE_LABELS[type]}模板的审核规则</h4>
        <ul aria-label="审核规则" className="flex flex-col gap-2">
          {rules.map((rule) => {
            const state = stateOf(rule.id);
            return (
              <li key={rule.id} aria-label={`${rule.title}：${STATE_LABEL[state]}`} className="flex gap-2">
                <span aria-hidden className={`w-4 shrink-0 font-bold ${STATE_COLOR[state]}`}>
                  {STATE_MARK[state]}
                </span>
                <div>
                  <div className={state === 'passed' ? '' : STATE_COLOR[state]}>{rule.title}</div>
                  <div className="text-xs text-gray-500">
                    {rule.explanation}
                    <span className="ml-1 text-gray-400">（依据：{rule.source}）</span>
                  </div>
                </div>
              </li>
            );
          })}
        </ul>
      </div>
    </section>
  );
}
