import { SMS_STATISTICS_MAX_DAYS, type SmsStatisticsQuery } from '@callpilot/contracts';
import { Alert, Button, DatePicker, Empty, Select, Spin } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useState } from 'react';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { chinaTime } from '@/lib/format';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useSmsStatistics } from '../api/get-sms-statistics';
import { useSmsTemplates } from '../api/get-sms-templates';
import {
  SmsFailureReasonsTable,
  SmsStatisticsCards,
  SmsStatisticsChart,
  SmsTemplateStatisticsTable,
} from '../components/sms-statistics-view';

const DAY = 'YYYY-MM-DD';

/** The last 7 China days, today included. */
export function lastWeekDays(now = new Date()): { from: string; to: string } {
  const today = chinaTime(now);
  return { from: today.subtract(6, 'day').format(DAY), to: today.format(DAY) };
}

export function SmsStatisticsPage() {
  const projectId = useUserStore(selectCurrentProjectId);
  const [query, setQuery] = useState<SmsStatisticsQuery>(() => lastWeekDays());
  const statistics = useSmsStatistics(projectId, query);
  const templates = useSmsTemplates(projectId, { page: 1, pageSize: 100 });
  const data = statistics.data;
  // Every record of the range has a template row, whatever its status: none means nothing at all.
  const empty = data?.byTemplate.length === 0;

  const changeRange = (range: [Dayjs | null, Dayjs | null] | null) => {
    const [start, end] = range ?? [];
    if (!start || !end) return setQuery((q) => ({ ...q, ...lastWeekDays() }));
    setQuery((q) => ({ ...q, from: start.format(DAY), to: end.format(DAY) }));
  };

  return (
    <>
      <header className="flex flex-wrap items-end justify-between gap-4">
        <div>
          <h2 className="text-lg font-semibold text-gray-900">数据统计</h2>
          <p className="mt-1 max-w-3xl text-sm text-gray-500">
            按北京时间的自然日统计，范围最长 {SMS_STATISTICS_MAX_DAYS}{' '}
            天。发送指已交给短信服务商的条数，成功率 = 成功 / 发送。
          </p>
        </div>
        <div className="flex flex-wrap items-center gap-3">
          <DatePicker.RangePicker
            aria-label="统计日期"
            allowClear={false}
            value={[dayjs(query.from), dayjs(query.to)]}
            disabledDate={(day, { from }) =>
              Boolean(from && Math.abs(day.diff(from, 'day')) >= SMS_STATISTICS_MAX_DAYS)
            }
            onChange={changeRange}
          />
          <Select
            aria-label="模板"
            allowClear
            placeholder="全部模板"
            className="min-w-44"
            showSearch={{ optionFilterProp: 'label' }}
            loading={templates.isPending && Boolean(projectId)}
            options={(templates.data?.items ?? []).map((t) => ({ value: t.id, label: t.name }))}
            value={query.templateId}
            onChange={(templateId?: string) =>
              setQuery(({ templateId: _old, ...q }) => (templateId ? { ...q, templateId } : q))
            }
          />
        </div>
      </header>
      {statistics.isError && (
        <Alert
          type="error"
          showIcon
          title="统计数据加载失败"
          action={
            <Button size="small" onClick={() => void statistics.refetch()}>
              重试
            </Button>
          }
        />
      )}
      {!data ? (
        statistics.isPending && (
          <div className="flex justify-center py-16">
            <Spin />
          </div>
        )
      ) : empty ? (
        <section className="rounded-lg border border-gray-200 bg-white p-10">
          <Empty
            description={
              <span>
                所选范围内没有短信。发送后在这里按天查看发送量、成功率和计费条数，可前往
                <Link to={paths.smsSend}>发送短信</Link>。
              </span>
            }
          />
        </section>
      ) : (
        <div className="flex flex-col gap-4">
          <SmsStatisticsCards totals={data.totals} />
          <SmsStatisticsChart byDay={data.byDay} />
          <div className="grid gap-4 xl:grid-cols-2">
            <SmsTemplateStatisticsTable rows={data.byTemplate} />
            <SmsFailureReasonsTable rows={data.failureReasons} />
          </div>
        </div>
      )}
    </>
  );
}
