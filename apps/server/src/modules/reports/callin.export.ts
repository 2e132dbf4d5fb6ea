import type { CallinReport, ReportRow } from '@callpilot/contracts';
import type { ReportSheet } from './report-file';
import { CHINA_OFFSET_MS } from './rollup-range';

const FIGURE_LABELS: Record<keyof CallinReport['figures'], string> = {
  offered: '来电量',
  answered: '接通量',
  assistantAnswered: '小助手接待量',
  transferred: '转人工量',
  abandonedRinging: '振铃放弃量',
  abandonedFlow: '流程中放弃量',
  overLimit: '超出并发量',
  answerRate: '接通率',
  avgWaitSeconds: '平均等待时长（秒）',
  maxWaitSeconds: '最长等待时长（秒）',
  avgTalkSeconds: '平均通话时长（秒）',
  maxTalkSeconds: '最长通话时长（秒）',
};

const TREND_COLUMNS: [string, string][] = [
  ['offered', '来电量'],
  ['answered', '接通量'],
  ['assistantAnswered', '小助手接待量'],
  ['transferred', '转人工量'],
  ['abandoned', '放弃量'],
  ['overLimit', '超出并发量'],
  ['answerRate', '接通率'],
];

const ROW_COLUMNS: [string, string][] = [
  ['offered', '来电量'],
  ['answered', '接通量'],
  ['assistantAnswered', '小助手接待量'],
  ['transferred', '转人工量'],
  ['abandonedRinging', '振铃放弃量'],
  ['abandonedFlow', '流程中放弃量'],
  ['overLimit', '超出并发量'],
  ['answerRate', '接通率'],
  ['avgWaitSeconds', '平均等待时长（秒）'],
  ['avgTalkSeconds', '平均通话时长（秒）'],
];

const round = (n: number) => Math.round(n * 100) / 100;
const rate = (key: string, n: number) => (key === 'answerRate' ? `${round(n * 100)}%` : round(n));

const chinaBucket = (iso: string, granularity: 'hour' | 'day') => {
  const text = new Date(Date.parse(iso) + CHINA_OFFSET_MS).toISOString();
  return granularity === 'hour' ? `${text.slice(0, 10)} ${text.slice(11, 16)}` : text.slice(0, 10);
};

/** The report as tables: figures, trend, by number, by flow (the export's worksheets, CSV's sections). */
export function callinSheets(report: CallinReport): ReportSheet[] {
  const breakdown = (name: string, first: string, rows: ReportRow[]): ReportSheet => ({
    name,
    header: [first, ...ROW_COLUMNS.map(([, title]) => title)],
    rows: rows.map((r) => [r.label, ...ROW_COLUMNS.map(([key]) => rate(key, r.values[key] ?? 0))]),
  });
  return [
    {
      name: '指标',
      header: [
        '指标',
        `本期（${report.range.from} 至 ${report.range.to}）`,
        `上期（${report.range.previousFrom} 至 ${report.range.previousTo}）`,
      ],
      rows: (Object.keys(FIGURE_LABELS) as (keyof CallinReport['figures'])[]).map((key) => [
        FIGURE_LABELS[key],
        rate(key, report.figures[key].value),
        rate(key, report.figures[key].previous),
      ]),
    },
    {
      name: '趋势',
      header: ['时间', ...TREND_COLUMNS.map(([, title]) => title)],
      rows: report.trend.points.map((p) => [
        chinaBucket(p.at, report.trend.granularity),
        ...TREND_COLUMNS.map(([key]) => rate(key, p.values[key] ?? 0)),
      ]),
    },
    breakdown('按号码', '号码', report.byNumber),
    breakdown('按流程', '流程', report.byFlow),
  ];
}
