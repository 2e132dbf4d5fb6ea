import { SMS_MESSAGE_STATUS_LABELS, type SmsMessageStatus } from '@callpilot/contracts';
import { Tag } from 'antd';

/** Grey before it leaves, blue while the carrier has it, green or red once the receipt says. */
export const SMS_MESSAGE_STATUS_COLOR: Record<SmsMessageStatus, string> = {
  queued: 'default',
  waiting: 'gold',
  submitted: 'blue',
  accepted: 'cyan',
  delivered: 'success',
  failed: 'error',
  blocked: 'volcano',
};

export function SmsMessageStatusTag({ status }: { status: SmsMessageStatus }) {
  return <Tag color={SMS_MESSAGE_STATUS_COLOR[status]}>{SMS_MESSAGE_STATUS_LABELS[status]}</Tag>;
}
