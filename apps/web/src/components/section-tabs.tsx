import { NavLink } from 'react-router';
import { cn } from '@/lib/utils';

export interface SectionTab {
  to: string;
  label: string;
}

/**
 * A section's pages as links rather than antd Tabs: a new browser tab works, and the URL says
 * which page is open.
 */
export function SectionTabs({ label, tabs }: { label: string; tabs: readonly SectionTab[] }) {
  return (
    <nav aria-label={label} className="flex gap-6 border-b border-gray-200">
      {tabs.map((tab) => (
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
