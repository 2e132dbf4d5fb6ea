import { SectionPlaceholder } from '@/components/section-placeholder';

// Its own lazy chunk until the section's feature lands.
export function DataReportPage() {
  return <SectionPlaceholder section="dataReport" />;
}
