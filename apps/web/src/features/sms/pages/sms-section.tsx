import { Navigate, Route, Routes } from 'react-router';
import { paths } from '@/config/paths';
import { SmsSectionLayout } from '../components/sms-section-layout';
import { SmsComingSoonPage } from './sms-coming-soon-page';
import { SmsRecordPage } from './sms-record-page';
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
        <Route
          path="send"
          element={
            <SmsComingSoonPage
              title="发送短信"
              description="选择已通过的签名和模板，填写变量后向单个号码或号码列表发送，推广短信只在允许的时段发出"
            />
          }
        />
        <Route path="record" element={<SmsRecordPage />} />
        <Route path="statistics" element={<SmsStatisticsPage />} />
        <Route path="*" element={<Navigate to={paths.smsSignature} replace />} />
      </Routes>
    </SmsSectionLayout>
  );
}
