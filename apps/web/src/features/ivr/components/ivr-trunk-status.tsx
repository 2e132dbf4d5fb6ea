import { TRUNK_STATE_LABELS, type TrunkState, type TrunkStatus } from '@callpilot/contracts';
import { Tag, Tooltip } from 'antd';
import dayjs from 'dayjs';

const time = (iso: string) => dayjs(iso).format('MM-DD HH:mm:ss');

const COLORS: Record<TrunkState, string> = {
  sip_off: 'default',
  disabled: 'default',
  unregistered: 'warning',
  registering: 'processing',
  registered: 'success',
  failed: 'error',
  reachable: 'success',
  unreachable: 'error',
  unknown: 'default',
};

// The reason is what a user acts on (a wrong password, a firewall), so it is on the badge itself.
// sip_off's reason is the same for every trunk: the page says it once, the badge keeps it short.
const REASON_ON_BADGE = new Set<TrunkState>(['failed', 'unreachable', 'unregistered']);

function facts(status: TrunkStatus): string[] {
  const lines: string[] = [];
  if (status.detail) lines.push(status.detail);
  if (status.registeredAt) lines.push(`注册于 ${time(status.registeredAt)}`);
  if (status.optionsAt) {
    const answer = status.optionsStatus === 408 ? '无应答' : `应答 ${status.optionsStatus ?? '-'}`;
    const rtt = status.optionsRttMs === null ? '' : `，${status.optionsRttMs} ms`;
    lines.push(`最近探测 ${time(status.optionsAt)}：${answer}${rtt}`);
  }
  if (status.activeCalls !== null) lines.push(`当前通话 ${status.activeCalls} 路`);
  return lines;
}

/** 已注册 / 注册失败：原因 / 未启用 …, with what is known about the last registration and ping. */
export function IvrTrunkStatus({ status }: { status: TrunkStatus }) {
  const label = TRUNK_STATE_LABELS[status.state];
  const text = status.detail && REASON_ON_BADGE.has(status.state) ? `${label}：${status.detail}` : label;
  const details = facts(status);
  const tag = (
    <Tag color={COLORS[status.state]} className="!m-0 max-w-72 truncate align-middle">
      {text}
    </Tag>
  );
  return details.length ? (
    <Tooltip
      title={
        <div className="flex flex-col">
          {details.map((line) => (
            <span key={line}>{line}</span>
          ))}
        </div>
      }
    >
      {tag}
    </Tooltip>
  ) : (
    tag
  );
}
