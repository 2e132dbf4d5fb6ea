import { Navigate, Route, Routes } from 'react-router';
import { paths } from '@/config/paths';
import { ApiDocsPage } from './api-docs-page';
import { ApiKeysPage } from './api-keys-page';
import { WebhookEndpointPage } from './webhook-endpoint-page';
import { WebhooksPage } from './webhooks-page';

/** Everything under /developer-options; the bare section and unknown paths open the keys. */
export function DeveloperSection() {
  return (
    <Routes>
      <Route index element={<Navigate to={paths.developerKeys} replace />} />
      <Route path="keys" element={<ApiKeysPage />} />
      <Route path="webhooks" element={<WebhooksPage />} />
      <Route path="webhooks/:endpointId" element={<WebhookEndpointPage />} />
      <Route path="docs" element={<ApiDocsPage />} />
      <Route path="*" element={<Navigate to={paths.developerKeys} replace />} />
    </Routes>
  );
}
