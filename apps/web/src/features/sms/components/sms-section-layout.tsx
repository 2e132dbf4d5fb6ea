import type { ReactNode } from 'react';
import { SmsTabs } from './sms-tabs';

/** The section's heading and tabs above each page. */
export function SmsSectionLayout({ children }: { children: ReactNode }) {
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">短信管理</h1>
      <SmsTabs />
      {children}
    </main>
  );
}
