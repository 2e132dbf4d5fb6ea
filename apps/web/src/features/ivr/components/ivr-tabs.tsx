import { SectionTabs } from '@/components/section-tabs';
import { paths } from '@/config/paths';

const TABS = [
  { to: paths.ivrFlows, label: '通话流程' },
  { to: paths.ivrNumbers, label: '号码管理' },
  { to: paths.ivrTrunks, label: '线路管理' },
];

export function IvrTabs() {
  return <SectionTabs label="通话流程导航" tabs={TABS} />;
}
