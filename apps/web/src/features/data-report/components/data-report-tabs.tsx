import { useSearchParams } from 'react-router';
import { SectionTabs } from '@/components/section-tabs';

export const DATA_REPORT_PATHS = {
  callin: '/data-report/callin',
  assistant: '/data-report/assistant',
  knowledge: '/data-report/knowledge',
} as const;

const TABS = [
  { to: DATA_REPORT_PATHS.callin, label: '呼入统计' },
  { to: DATA_REPORT_PATHS.assistant, label: '小助手统计' },
  { to: DATA_REPORT_PATHS.knowledge, label: '知识库统计' },
];

// The range carries over from one report to the next; the other filters belong to their page.
const SHARED_KEYS = ['from', 'to', 'granularity'];

export function DataReportTabs() {
  const [search] = useSearchParams();
  const shared = new URLSearchParams();
  for (const key of SHARED_KEYS) {
    const value = search.get(key);
    if (value) shared.set(key, value);
  }
  const suffix = shared.size > 0 ? `?${shared.toString()}` : '';
  return <SectionTabs label="数据统计导航" tabs={TABS.map((tab) => ({ ...tab, to: tab.to + suffix }))} />;
}
