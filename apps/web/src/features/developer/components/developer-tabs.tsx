import { NavLink } from 'react-router';
import { paths } from '@/config/paths';
import { cn } from '@/lib/utils';

const TABS = [
  { to: paths.developerKeys, label: 'API 密钥' },
  { to: paths.developerWebhooks, label: 'Webhooks' },
  { to: paths.developerDocs, label: 'API 文档' },
];

/** The section's pages as links: a new tab works, and the URL says which page is open. */
export function DeveloperTabs() {
  return (
    <nav aria-label="开发者选项导航" className="flex gap-6 border-b border-gray-200">
      {TABS.map((tab) => (
        <NavLink
          key={tab.to}
          to={tab.to}
          className={({ isActive }) =>
            cn(
              '-mb-px border-b-2 px-1 pb-2 text-sm',
              isActive
                ? 'border-[#4D8EFF] font-medium text-[#4D8EFF]'
                : 'border-transparent text-gray-600 hover:text-gray-900',
            )
          }
        >
          {tab.label}
        </NavLink>
      ))}
    </nav>
  );
}
