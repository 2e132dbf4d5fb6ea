import { Segmented } from 'antd';
import { useSearchParams } from 'react-router';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { SmsBatchSend } from '../components/sms-batch-send';
import { SmsBatchTable } from '../components/sms-batch-table';
import { SmsSingleSend } from '../components/sms-single-send';

type Mode = 'single' | 'batch';

/** 发送短信: one number, or a list; which one is in the URL so a reload stays on it. */
export function SmsSendPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const [searchParams, setSearchParams] = useSearchParams();
  const mode: Mode = searchParams.get('mode') === 'batch' ? 'batch' : 'single';

  return (
    <>
      <header>
        <h2 className="text-lg font-semibold text-gray-900">发送短信</h2>
        <p className="mt-1 max-w-3xl text-sm text-gray-500">
          选择已通过审核的签名和模板，向单个号码发送，或上传号码文件批量发送。免打扰名单中的号码和超过每日上限的号码不会发送；推广短信只在
          8:00–20:00（北京时间）发出，其余时间提交的会等待到 8:00。
        </p>
      </header>
      <Segmented<Mode>
        className="self-start"
        value={mode}
        options={[
          { value: 'single', label: '单条发送' },
          { value: 'batch', label: '批量发送' },
        ]}
        onChange={(next) => setSearchParams(next === 'batch' ? { mode: 'batch' } : {}, { replace: true })}
      />
      <section className="rounded-lg border border-gray-200 bg-white p-6">
        {mode === 'single' ? <SmsSingleSend projectId={projectId} /> : <SmsBatchSend projectId={projectId} />}
      </section>
      {mode === 'batch' && (
        <section className="flex flex-col gap-3 rounded-lg border border-gray-200 bg-white p-6">
          <h3 className="text-base font-medium text-gray-900">最近的批量发送</h3>
          <SmsBatchTable projectId={projectId} />
        </section>
      )}
    </>
  );
}
