import type { SmsMessage, SmsMessageList } from '@callpilot/contracts';
import { Button, Empty, Table, type TableColumnsType, Typography } from 'antd';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { formatSmsMessageTime, smsFailureText } from '../utils/sms-format';
import { SmsMessageStatusTag } from './sms-message-status-tag';
import { SmsMessageOrigin } from './sms-record-links';

type Props = {
  data: SmsMessageList | undefined;
  loading: boolean;
  page: number;
  pageSize: number;
  filtered: boolean;
  onPageChange: (page: number) => void;
  onOpen: (message: SmsMessage) => void;
};

export function SmsRecordTable({ data, loading, page, pageSize, filtered, onPageChange, onOpen }: Props) {
  const columns: TableColumnsType<SmsMessage> = [
    {
      title: '时间',
      dataIndex: 'createdAt',
      width: 170,
      render: (at: string, message) => (
        <Button type="link" size="small" className="!px-0" onClick={() => onOpen(message)}>
          {formatSmsMessageTime(at)}
        </Button>
      ),
    },
    { title: '手机号', dataIndex: 'phone', width: 130 },
    { title: '模板', dataIndex: 'templateName', width: 140, ellipsis: true },
    {
      title: '内容',
      dataIndex: 'content',
      ellipsis: true,
      render: (content: string) => (
        <Typography.Text ellipsis={{ tooltip: content }} className="max-w-80">
          {content}
        </Typography.Text>
      ),
    },
    { title: '计费条数', dataIndex: 'parts', width: 90, align: 'right' },
    {
      title: '状态',
      dataIndex: 'status',
      width: 120,
      render: (status: SmsMessage['status']) => <SmsMessageStatusTag status={status} />,
    },
    {
      title: '失败原因',
      key: 'failure',
      width: 180,
      ellipsis: true,
      render: (_, message) => smsFailureText(message) || '-',
    },
    {
      title: '来源',
      key: 'source',
      width: 160,
      render: (_, message) => <SmsMessageOrigin message={message} />,
    },
  ];

  const total = data?.total ?? 0;
  return (
    <Table<SmsMessage>
      rowKey="id"
      size="middle"
      columns={columns}
      dataSource={data?.items ?? []}
      loading={loading}
      scroll={{ x: 1100 }}
      locale={{
        emptyText: filtered ? (
          <Empty description="没有符合条件的短信，请调整筛选条件" />
        ) : (
          <Empty
            description={
              <span>
                还没有发送过短信。在<Link to={paths.smsSend}>发送短信</Link>
                中选择已通过的签名和模板发送，或为助手、任务设置通话后的跟进短信。
              </span>
            }
          />
        ),
      }}
      pagination={{
        current: page,
        pageSize,
        total,
        showSizeChanger: false,
        showTotal: (shown) =>
          data?.totalCapped ? `超过 ${shown.toLocaleString('zh-CN')} 条，请缩小筛选范围` : `共 ${shown} 条`,
        onChange: onPageChange,
      }}
    />
  );
}
