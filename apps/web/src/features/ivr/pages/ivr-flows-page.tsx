import { Empty } from 'antd';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { IvrTabs } from '../components/ivr-tabs';

/**
 * The flow editor is not built yet. Rather than a blank placeholder, say what works today: a
 * number bound to an assistant answers its inbound calls without a flow.
 */
export function IvrFlowsPage() {
  return (
    <main className="flex flex-col gap-6 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">通话流程</h1>
      <IvrTabs />
      <section className="rounded-lg border border-gray-200 bg-white py-12">
        <Empty
          description={
            <div className="flex flex-col gap-1">
              <span>流程编辑即将上线</span>
              <span className="text-sm text-gray-500">目前可在号码管理中把号码绑定到智能小助手接听来电</span>
            </div>
          }
        >
          <Link to={paths.ivrNumbers}>前往号码管理</Link>
        </Empty>
      </section>
    </main>
  );
}
