import { END_REASON_LABELS, RETRYABLE_END_REASONS, type TaskDetail } from '@callpilot/contracts';
import { Descriptions } from 'antd';
import { formatDays } from '../utils/call-task-format';

export function CallTaskSettingsSummary({ task }: { task: TaskDetail }) {
  const { settings } = task;
  const rules = RETRYABLE_END_REASONS.flatMap((outcome) => {
    const rule = settings.retryRules[outcome];
    return rule && rule.maxRetries > 0
      ? [`${END_REASON_LABELS[outcome]}：重拨 ${rule.maxRetries} 次，间隔 ${rule.intervalMinutes} 分钟`]
      : [];
  });
  return (
    <Descriptions
      size="small"
      column={{ xs: 1, md: 2 }}
      items={[
        {
          key: 'assistant',
          label: '小助手',
          children: `${task.assistantName || '-'}${task.assistantVersion !== null ? ` v${task.assistantVersion}` : ''}`,
        },
        {
          key: 'numbers',
          label: '外显号码',
          children: settings.callerNumbers.length > 0 ? settings.callerNumbers.join('、') : '默认号码',
        },
        { key: 'dates', label: '起止日期', children: `${settings.startDate} 至 ${settings.endDate}` },
        {
          key: 'windows',
          label: '呼叫时段',
          children: settings.windows
            .map((window) => `${formatDays(window.days)} ${window.start}-${window.end}`)
            .join('；'),
        },
        {
          key: 'holidays',
          label: '法定节假日',
          children: settings.skipHolidays ? '跳过（调休日照常）' : '照常呼叫',
        },
        { key: 'concurrency', label: '并发数', children: `${settings.concurrency} 路` },
        {
          key: 'cap',
          label: '每号码每日上限',
          children: settings.dailyCapPerNumber > 0 ? `${settings.dailyCapPerNumber} 次` : '不限',
        },
        { key: 'retry', label: '重拨规则', children: rules.length > 0 ? rules.join('；') : '不重拨' },
      ]}
    />
  );
}
