import type { CallStatus } from '@callpilot/contracts';
import { Badge } from 'antd';
import { isLive } from '@/entities/call/utils/call-format';

export function CallRecordStatus({ status }: { status: CallStatus }) {
  // Ringing counts as live too: the list's point is "this call is not over yet".
  return isLive(status) ? (
    <Badge status="processing" text="通话中" />
  ) : (
    <Badge status="default" text="已结束" />
  );
}
