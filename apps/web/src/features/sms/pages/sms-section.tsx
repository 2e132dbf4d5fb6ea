import { Navigate, Route, Routes } from 'react-router';
import { paths } from '@/config/paths';
import { SmsSectionLayout } from '../components/sms-section-layout';
import { SmsOptOutPage } from './sms-opt-out-page';
import { SmsRecordPage } from './sms-record-page';
import { SmsSendPage } from './sms-send-page';
import { SmsSettingsPage } from './sms-settings-page';
import { SmsSignaturePage } from './sms-signature-page';
import { SmsStatisticsPage } from './sms-statistics-page';
import { SmsTemplatePage } from './sms-template-page';

/** Everything under /sms; the bare section and unknown paths open the signatures. */
export function SmsSection() {
  return (
    <SmsSectionLayout>
      <Routes>
        <Route index element={<Navigate to={paths.smsSignature} replace />} />
        <Route path="signature" element={<SmsSignaturePage />} />
        <Route path="template" element={<SmsTemplatePage />} />
        <Route path="send" element={<SmsSendPage />} />
        <Route path="record" element={<SmsRecordPage />} />
        <Route path="statistics" element={<SmsStatisticsPage />} />
        <Route path="opt-outs" element={<SmsOptOutPage />} />
        <Route path="settings" element={<SmsSettingsPage />} />
        <Route path="*" element={<Navigate to={paths.smsSignature} replace />} />
      </Routes>
    </SmsSectionLayout>
  );
}
