import { SectionTabs } from '@/components/section-tabs';
import { paths } from '@/config/paths';

const TABS = [
  { to: paths.smsSignature, label: '签名管理' },
  { to: paths.smsTemplate, label: '模板管理' },
  { to: paths.smsSend, label: '发送短信' },
  { to: paths.smsRecord, label: '发送记录' },
  { to: paths.smsStatistics, label: '数据统计' },
  { to: paths.smsOptOut, label: '免打扰' },
  { to: paths.smsSettings, label: '设置' },
];

export function SmsTabs() {
  return <SectionTabs label="短信管理导航" tabs={TABS} />;
}
