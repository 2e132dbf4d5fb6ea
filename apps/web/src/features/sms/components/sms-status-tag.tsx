import { SMS_REVIEW_STATUS_LABELS, type SmsReviewStatus } from '@callpilot/contracts';
import { Tag } from 'antd';

const COLOR: Record<SmsReviewStatus, string> = {
  draft: 'default',
  reviewing: 'processing',
  approved: 'success',
  rejected: 'error',
  withdrawn: 'warning',
};

export function SmsStatusTag({ status }: { status: SmsReviewStatus }) {
  return <Tag color={COLOR[status]}>{SMS_REVIEW_STATUS_LABELS[status]}</Tag>;
}
