import {
  CALL_DIRECTION_LABELS,
  type CallDetail,
  END_REASON_LABELS,
  HANGUP_BY_LABELS,
  SIM_PERSONA_LABELS,
} from '@callpilot/contracts';
import { Descriptions, type DescriptionsProps } from 'antd';
import { formatCallTime, formatTalkTime } from '@/entities/call/utils/call-format';
import { CallRecordStatus } from './call-record-status';

export function CallRecordFacts({ call }: { call: CallDetail }) {
  const items: DescriptionsProps['items'] = [
    { key: 'direction', label: '方向', children: CALL_DIRECTION_LABELS[call.direction] },
    { key: 'caller', label: '主叫', children: call.callerNumber || '-' },
    { key: 'callee', label: '被叫', children: call.calleeNumber || '-' },
    ...(call.taskName ? [{ key: 'task', label: '任务', children: call.taskName }] : []),
    ...(call.contactName ? [{ key: 'contact', label: '联系人', children: call.contactName }] : []),
    {
      key: 'assistant',
      label: '小助手',
      children: `${call.assistantName || '-'}（${call.assistantVersion === null ? '草稿' : `v${call.assistantVersion}`}）`,
    },
    ...(call.persona
      ? [{ key: 'persona', label: '模拟客户', children: SIM_PERSONA_LABELS[call.persona] }]
      : []),
    { key: 'status', label: '状态', children: <CallRecordStatus status={call.status} /> },
    {
      key: 'endReason',
      label: '结束原因',
      children: call.endReason ? END_REASON_LABELS[call.endReason] : '-',
    },
    { key: 'hangupBy', label: '挂断方', children: call.hangupBy ? HANGUP_BY_LABELS[call.hangupBy] : '-' },
    { key: 'startedAt', label: '开始时间', children: formatCallTime(call.startedAt) },
    { key: 'answeredAt', label: '接通时间', children: formatCallTime(call.answeredAt) },
    { key: 'endedAt', label: '结束时间', children: formatCallTime(call.endedAt) },
    { key: 'talk', label: '通话时长', children: formatTalkTime(call.talkSeconds) },
    { key: 'turns', label: '轮次', children: call.turnCount },
    ...(call.transferNumber
      ? [
          {
            key: 'transfer',
            label: '转接号码',
            children: `${call.transferNumber}（${formatCallTime(call.transferredAt)}）`,
          },
        ]
      : []),
  ];
  return <Descriptions size="small" column={{ xs: 1, sm: 2, lg: 4 }} items={items} />;
}
