import { Link, useParams } from 'react-router';
import { paths } from '@/config/paths';

/** Placeholder until the flow editor (branch flow-editor) replaces this file. */
export function IvrFlowEditorPage() {
  const { flowId } = useParams();
  return (
    <main className="flex flex-col gap-4 p-6">
      <h1 className="text-2xl font-semibold text-gray-900">编辑流程</h1>
      <p className="text-sm text-gray-500">流程 {flowId}</p>
      <Link to={paths.ivrFlows}>返回流程列表</Link>
    </main>
  );
}
