import { SectionTabs } from '@/components/section-tabs';
import { paths } from '@/config/paths';

const TABS = [
  { to: paths.developerKeys, label: 'API 密钥' },
  { to: paths.developerWebhooks, label: 'Webhooks' },
  { to: paths.developerDocs, label: 'API 文档' },
];

export function DeveloperTabs() {
  return <SectionTabs label="开发者选项导航" tabs={TABS} />;
}
