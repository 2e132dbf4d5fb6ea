import { Navigate, Route, Routes } from 'react-router';
import { paths } from '@/config/paths';
import { SmsSectionLayout } from '../components/sms-section-layout';
import { SmsComingSoonPage } from './sms-coming-soon-page';
import { SmsOptOutPage } from './sms-opt-out-page';
import { SmsSendPage } from './sms-send-page';
import { SmsSettingsPage } from './sms-settings-page';
import { SmsSignaturePage } from './sms-signature-page';
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
        <Route
          path="record"
          element={
            <SmsComingSoonPage title="发送记录" description="查看每条短信的发送结果、运营商回执和用户回复" />
          }
        />
        <Route
          path="statistics"
          element={<SmsComingSoonPage title="数据统计" description="按日统计发送量、成功率和计费条数" />}
        />
        <Route path="opt-outs" element={<SmsOptOutPage />} />
        <Route path="settings" element={<SmsSettingsPage />} />
        <Route path="*" element={<Navigate to={paths.smsSignature} replace />} />
      </Routes>
    </SmsSectionLayout>
  );
}
