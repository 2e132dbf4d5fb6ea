import WarningFilled from '@ant-design/icons/WarningFilled';
import { Alert, AlertTitle } from '@/components/ui/alert';
import type { Feature } from '@/config/nav';
import { useFeatureAvailable } from '@/hooks/use-feature-available';

export const FEATURE_UNAVAILABLE_TEXT = '该功能未开通，请联系销售开通';

/**
 * Shown above a section whose balance limit is 0. The section stays readable (existing data is
 * not hidden); its create actions read `useFeatureAvailable` and disable themselves.
 */
export function FeatureUnavailableAlert({ feature }: { feature: Feature }) {
  const available = useFeatureAvailable(feature);
  if (available) return null;
  return (
    <Alert variant="warning">
      <WarningFilled aria-hidden="true" />
      <AlertTitle>{FEATURE_UNAVAILABLE_TEXT}</AlertTitle>
    </Alert>
  );
}
