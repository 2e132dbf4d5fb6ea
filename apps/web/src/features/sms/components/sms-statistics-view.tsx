import type { SmsCounts, SmsStatistics } from '@callpilot/contracts';
import { Table, type TableColumnsType } from 'antd';
import { useMemo } from 'react';
import { DrillChart } from '@/components/drill-chart';
import { formatPercent } from '@/lib/format';

/** 成功率: delivered of what was handed to the carriers; '-' before anything was sent. */
export const deliveryRate = (c: SmsCounts) => (c.sent > 0 ? c.delivered / c.sent : null);
const n = (value: number) => value.toLocaleString('zh-CN');

const CARDS: { label: string; hint: string; value: (c: SmsCounts) => string }[] = [
  { label: '发送', hint: '已交给短信服务商的条数', value: (c) => n(c.sent) },
  { label: '成功', hint: '运营商回执为成功', value: (c) => n(c.delivered) },
  { label: '失败', hint: '运营商回执为失败', value: (c) => n(c.failed) },
  { label: '发送中', hint: '已提交，尚无回执', value: (c) => n(c.pending) },
  { label: '未发送', hint: '免打扰、超出每日上限等，未交给服务商', value: (c) => n(c.blocked) },
  { label: '计费条数', hint: '已发送短信按长度拆分后的条数', value: (c) => n(c.parts) },
  { label: '成功率', hint: '成功 / 发送', value: (c) => formatPercent(deliveryRate(c)) },
];

export function SmsStatisticsCards({ totals }: { totals: SmsCounts }) {
  return (
    <ul aria-label="短信统计合计" className="grid grid-cols-2 gap-3 sm:grid-cols-4 xl:grid-cols-7">
      {CARDS.map((card) => (
        <li key={card.label} className="rounded-lg border border-gray-200 bg-white p-4" title={card.hint}>
          <div className="text-sm text-gray-500">{card.label}</div>
          <div className="mt-1 text-2xl font-semibold text-gray-900">{card.value(totals)}</div>
        </li>
      ))}
    </ul>
  );
}

export function SmsStatisticsChart({ byDay }: { byDay: SmsStatistics['byDay'] }) {
  const option = useMemo(
    () => ({
      tooltip: { trigger: 'axis' },
      legend: { data: ['发送', '成功', '失败'], top: 0 },
      grid: { left: 48, right: 16, top: 32, bottom: 24 },
      xAxis: { type: 'category', data: byDay.map((d) => d.day.slice(5)) },
      yAxis: { type: 'value', minInterval: 1 },
      series: [
        { name: '发送', type: 'bar', data: byDay.map((d) => d.sent) },
        { name: '成功', type: 'bar', data: byDay.map((d) => d.delivered) },
        { name: '失败', type: 'bar', data: byDay.map((d) => d.failed) },
      ],
    }),
    [byDay],
  );
  return (
    <section aria-label="逐日趋势" className="rounded-lg border border-gray-200 bg-white p-5">
      <h3 className="mb-2 text-base font-medium text-gray-900">逐日趋势</h3>
      <DrillChart option={option} label="每日发送、成功与失败条数" height={260} />
    </section>
  );
}

type TemplateRow = SmsStatistics['byTemplate'][number];
const templateColumns: TableColumnsType<TemplateRow> = [
  { title: '模板', dataIndex: 'templateName' },
  { title: '发送', dataIndex: 'sent', align: 'right', render: n },
  { title: '成功', dataIndex: 'delivered', align: 'right', render: n },
  { title: '失败', dataIndex: 'failed', align: 'right', render: n },
  { title: '发送中', dataIndex: 'pending', align: 'right', render: n },
  { title: '未发送', dataIndex: 'blocked', align: 'right', render: n },
  { title: '计费条数', dataIndex: 'parts', align: 'right', render: n },
  { title: '成功率', key: 'rate', align: 'right', render: (_, row) => formatPercent(deliveryRate(row)) },
];

export function SmsTemplateStatisticsTable({ rows }: { rows: SmsStatistics['byTemplate'] }) {
  return (
    <section aria-label="按模板统计" className="rounded-lg border border-gray-200 bg-white p-5">
      <h3 className="mb-3 text-base font-medium text-gray-900">按模板</h3>
      <Table<TemplateRow>
        rowKey={(row) => `${row.templateId ?? ''}:${row.templateName}`}
        size="small"
        columns={templateColumns}
        dataSource={rows}
        pagination={false}
      />
    </section>
  );
}

type ReasonRow = SmsStatistics['failureReasons'][number];
const reasonColumns: TableColumnsType<ReasonRow> = [
  { title: '错误码', dataIndex: 'code', render: (code: string) => code || '-' },
  { title: '失败原因', dataIndex: 'message', render: (message: string) => message || '-' },
  { title: '条数', dataIndex: 'count', align: 'right', render: n },
];

export function SmsFailureReasonsTable({ rows }: { rows: SmsStatistics['failureReasons'] }) {
  return (
    <section aria-label="失败原因" className="rounded-lg border border-gray-200 bg-white p-5">
      <h3 className="mb-3 text-base font-medium text-gray-900">失败原因（前 10）</h3>
      <Table<ReasonRow>
        rowKey={(row) => `${row.code}:${row.message}`}
        size="small"
        columns={reasonColumns}
        dataSource={rows}
        pagination={false}
        locale={{ emptyText: '所选范围内没有失败的短信' }}
      />
    </section>
  );
}
