import { SMS_MESSAGE_STATUS_LABELS, SMS_TEMPLATE_TYPE_LABELS, type SmsMessage } from '@callpilot/contracts';
import { Alert, Button, Descriptions, Drawer, Spin, Timeline } from 'antd';
import { useSmsMessage } from '../api/get-sms-message';
import { formatSmsMessageTime, smsFailureText } from '../utils/sms-format';
import { SmsMessageStatusTag } from './sms-message-status-tag';
import { SmsMessageOrigin } from './sms-record-links';

const DOT: Partial<Record<SmsMessage['status'], string>> = {
  delivered: 'green',
  failed: 'red',
  blocked: 'red',
  waiting: 'gray',
  queued: 'gray',
};

/** One message: the full text as sent and every step it went through, each with its reason. */
export function SmsMessageDrawer({
  projectId,
  message,
  onClose,
}: {
  projectId: string;
  /** The list's row, shown at once; the record is re-read so a newer receipt shows too. */
  message: SmsMessage;
  onClose: () => void;
}) {
  const fresh = useSmsMessage(projectId, message.id);
  const m = fresh.data ?? message;
  const failure = smsFailureText(m);
  return (
    <Drawer open title="短信详情" size={560} onClose={onClose}>
      <div className="flex flex-col gap-5">
        {fresh.isError && (
          <Alert
            type="warning"
            showIcon
            title="最新状态加载失败，显示的是列表中的状态"
            action={
              <Button size="small" onClick={() => void fresh.refetch()}>
                重试
              </Button>
            }
          />
        )}
        <Descriptions column={1} size="small" bordered>
          <Descriptions.Item label="手机号">{m.phone}</Descriptions.Item>
          <Descriptions.Item label="状态">
            <SmsMessageStatusTag status={m.status} />
          </Descriptions.Item>
          {failure && (
            <Descriptions.Item label={m.status === 'blocked' ? '未发送原因' : '失败原因'}>
              {failure}
            </Descriptions.Item>
          )}
          <Descriptions.Item label="签名">{`【${m.signatureName}】`}</Descriptions.Item>
          <Descriptions.Item label="模板">{`${m.templateName}（${SMS_TEMPLATE_TYPE_LABELS[m.templateType]}）`}</Descriptions.Item>
          <Descriptions.Item label="计费条数">{m.parts}</Descriptions.Item>
          <Descriptions.Item label="来源">
            <SmsMessageOrigin message={m} />
          </Descriptions.Item>
          <Descriptions.Item label="创建时间">{formatSmsMessageTime(m.createdAt)}</Descriptions.Item>
          {m.status === 'waiting' && (
            <Descriptions.Item label="预计发送">{formatSmsMessageTime(m.sendAfter)}</Descriptions.Item>
          )}
          {m.providerMessageId && (
            <Descriptions.Item label="回执编号">{m.providerMessageId}</Descriptions.Item>
          )}
        </Descriptions>
        <section aria-label="短信内容">
          <h3 className="mb-2 text-sm font-medium text-gray-900">内容</h3>
          <p className="whitespace-pre-wrap break-all rounded-md bg-gray-50 p-3 text-sm text-gray-800">
            {m.content}
          </p>
        </section>
        <section aria-label="状态时间线">
          <h3 className="mb-3 text-sm font-medium text-gray-900">状态时间线</h3>
          {fresh.isPending && m.timeline.length === 0 ? (
            <Spin />
          ) : m.timeline.length === 0 ? (
            <p className="text-sm text-gray-500">暂无状态记录</p>
          ) : (
            <Timeline
              items={m.timeline.map((entry, index) => ({
                key: `${entry.status}-${index}`,
                color: DOT[entry.status] ?? 'blue',
                title: formatSmsMessageTime(entry.at),
                content: (
                  <div>
                    <div className="font-medium">{SMS_MESSAGE_STATUS_LABELS[entry.status]}</div>
                    {entry.detail && <div className="text-sm text-gray-500">{entry.detail}</div>}
                  </div>
                ),
              }))}
            />
          )}
        </section>
      </div>
    </Drawer>
  );
}
