import { type CallSummary, END_REASON_LABELS } from '@callpilot/contracts';
import { Tag } from 'antd';
import { isLive } from '../utils/call-format';

/** How a call ended, or 通话中 while it has not: for lists that show no separate status column. */
export function CallEndReason({ call }: { call: Pick<CallSummary, 'status' | 'endReason'> }) {
  if (call.endReason) return <span>{END_REASON_LABELS[call.endReason]}</span>;
  if (isLive(call.status)) {
    return (
      <Tag color="processing" className="!m-0">
        通话中
      </Tag>
    );
  }
  return <span>-</span>;
}
