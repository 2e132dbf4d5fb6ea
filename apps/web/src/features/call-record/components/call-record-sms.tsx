import { SMS_MESSAGE_STATUS_LABELS } from '@callpilot/contracts';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { chinaTime } from '@/lib/format';
import { useCallSms } from '../api/get-call-sms';

/** The SMS this call triggered, linking to 发送记录 filtered by the call; nothing when there are none. */
export function CallRecordSms({ projectId, callId }: { projectId: string; callId: string }) {
  const sms = useCallSms(projectId, callId);
  const items = sms.data?.items ?? [];
  if (items.length === 0) return null;
  return (
    <section
      aria-label="通话短信"
      className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-4"
    >
      <div className="flex items-center justify-between">
        <h2 className="text-base font-semibold text-gray-900">通话短信</h2>
        <Link to={`${paths.smsRecord}?callId=${encodeURIComponent(callId)}`}>
          {sms.data && sms.data.total > items.length ? `查看全部 ${sms.data.total} 条` : '在发送记录中查看'}
        </Link>
      </div>
      <ul className="flex flex-col gap-2">
        {items.map((m) => (
          <li key={m.id} className="text-sm">
            <div className="flex justify-between gap-2 text-gray-500">
              <span>{`${m.phone} · ${m.templateName}`}</span>
              <span>{`${SMS_MESSAGE_STATUS_LABELS[m.status]} · ${chinaTime(m.createdAt).format('HH:mm:ss')}`}</span>
            </div>
            <p className="line-clamp-2 break-all text-gray-800">{m.content}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}
