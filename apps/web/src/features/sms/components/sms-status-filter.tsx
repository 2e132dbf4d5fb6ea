import { SMS_REVIEW_STATUS_LABELS, type SmsReviewStatus, smsReviewStatus } from '@callpilot/contracts';
import { Select } from 'antd';

const OPTIONS = [
  { value: 'all', label: '全部状态' },
  ...smsReviewStatus.options.map((status) => ({ value: status, label: SMS_REVIEW_STATUS_LABELS[status] })),
];

export function SmsStatusFilter({
  value,
  onChange,
}: {
  value: SmsReviewStatus | undefined;
  onChange: (status: SmsReviewStatus | undefined) => void;
}) {
  return (
    <Select
      aria-label="按状态筛选"
      className="w-36"
      value={value ?? 'all'}
      options={OPTIONS}
      onChange={(next: string) => onChange(next === 'all' ? undefined : (next as SmsReviewStatus))}
    />
  );
}
