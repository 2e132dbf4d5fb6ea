import { SectionPlaceholder } from '@/components/section-placeholder';

// Its own lazy chunk until the section's feature lands.
export function IvrPage() {
  return <SectionPlaceholder section="ivr" />;
}
