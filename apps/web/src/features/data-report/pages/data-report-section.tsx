import { lazy, Suspense } from 'react';
import { useLocation } from 'react-router';
import { RouteFallback } from '@/components/route-fallback';
import { DATA_REPORT_PATHS } from '../components/data-report-tabs';
import { CallinReportPage } from './callin-report-page';

// The other two reports load when opened: most visits look at inbound calls only.
const AssistantReportPage = lazy(async () => ({
  default: (await import('./assistant-report-page')).AssistantReportPage,
}));
const KnowledgeReportPage = lazy(async () => ({
  default: (await import('./knowledge-report-page')).KnowledgeReportPage,
}));

/**
 * The three reports. The router lists their exact paths (config/nav.ts), so the page is chosen by
 * pathname rather than by nested routes.
 */
export function DataReportSection() {
  const { pathname } = useLocation();
  return (
    <Suspense fallback={<RouteFallback />}>
      {pathname === DATA_REPORT_PATHS.assistant ? (
        <AssistantReportPage />
      ) : pathname === DATA_REPORT_PATHS.knowledge ? (
        <KnowledgeReportPage />
      ) : (
        <CallinReportPage />
      )}
    </Suspense>
  );
}
