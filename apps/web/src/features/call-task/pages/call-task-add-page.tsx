import type { TaskDetail } from '@callpilot/contracts';
import { Alert, Button, Steps } from 'antd';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { toast } from 'sonner';
import { FeatureUnavailableAlert } from '@/components/feature-unavailable-alert';
import { useFeatureAvailable } from '@/hooks/use-feature-available';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useCallTask } from '../api/get-call-task';
import { useSaveCallTask } from '../api/save-call-task';
import { useTaskVariables } from '../api/use-task-variables';
import { canEditTask } from '../components/call-task-actions';
import { CallTaskImport } from '../components/call-task-import';
import { CallTaskPreflight } from '../components/call-task-preflight';
import { CallTaskSettingsForm } from '../components/call-task-settings-form';
import { callTaskListBackPath, taskDetailPath, taskEditPath } from '../utils/call-task-paths';

const STEP_TITLES = ['基本设置', '导入联系人', '预检并启动'];

/**
 * The wizard. The task's id and the step live in the URL, so a reload (or the back button) lands
 * on the same draft and step instead of creating a second task.
 */
export function CallTaskAddPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const navigate = useNavigate();
  const [searchParams] = useSearchParams();
  const taskId = searchParams.get('id') ?? undefined;
  const requestedStep = Number(searchParams.get('step') ?? 0);
  const step = taskId && requestedStep >= 0 && requestedStep <= 2 ? Math.floor(requestedStep) : 0;
  const available = useFeatureAvailable('concurrentCallout');
  const task = useCallTask(projectId, taskId);
  const save = useSaveCallTask(projectId, taskId);

  const goTo = (id: string, next: number) => navigate(taskEditPath(id, next), { replace: true });

  const header = (
    <header className="flex flex-wrap items-center justify-between gap-4">
      <div>
        <h1 className="text-2xl font-semibold text-gray-900">{taskId ? '编辑呼出任务' : '新建呼出任务'}</h1>
        {task.data && <p className="mt-1 text-sm text-gray-500">{task.data.name}</p>}
      </div>
      <Link to={taskId ? taskDetailPath(taskId) : callTaskListBackPath}>返回</Link>
    </header>
  );

  if (taskId && task.isPending) {
    return (
      <main className="flex flex-col gap-6 p-6">
        {header}
        <p className="text-sm text-gray-500">加载中...</p>
      </main>
    );
  }
  if (taskId && !task.data) {
    return (
      <main className="flex flex-col gap-6 p-6">
        {header}
        <Alert type="error" showIcon title="任务加载失败" />
      </main>
    );
  }
  if (task.data && !canEditTask(task.data.state)) {
    return (
      <main className="flex flex-col gap-6 p-6">
        {header}
        <Alert type="warning" showIcon title="只有草稿、待开始或已暂停的任务可以修改设置或导入联系人" />
      </main>
    );
  }

  return (
    <main className="flex flex-col gap-6 p-6">
      {header}
      {!taskId && <FeatureUnavailableAlert feature="concurrentCallout" />}
      <section className="flex flex-col gap-6 rounded-lg border border-gray-200 bg-white p-6">
        <Steps
          current={step}
          items={STEP_TITLES.map((title, index) => ({
            title,
            // Later steps need the saved draft; earlier ones can always be revisited.
            ...(taskId && index !== step ? { onClick: () => goTo(taskId, index) } : {}),
          }))}
        />
        {step === 0 && (
          <CallTaskSettingsForm
            // A fresh form per task: its initial values are read once.
            key={task.data?.id ?? 'new'}
            projectId={projectId}
            {...(task.data ? { initial: task.data.settings } : {})}
            saving={save.isPending}
            submitText="保存并下一步"
            submitDisabled={!taskId && !available}
            onSubmit={(settings) =>
              save.mutate(settings, {
                onSuccess: (saved) => {
                  toast.success(taskId ? '设置已保存' : '草稿已创建');
                  goTo(saved.id, 1);
                },
              })
            }
          />
        )}
        {step === 1 && task.data && <ImportStep projectId={projectId} task={task.data} onStep={goTo} />}
        {step === 2 && task.data && (
          <CallTaskPreflight
            projectId={projectId}
            task={task.data}
            onDone={(done) => navigate(taskDetailPath(done.id))}
          />
        )}
      </section>
    </main>
  );
}

function ImportStep({
  projectId,
  task,
  onStep,
}: {
  projectId: string;
  task: TaskDetail;
  onStep: (id: string, step: number) => void;
}) {
  const variables = useTaskVariables(projectId, task.assistantId, task.assistantVersion);
  return (
    <div className="flex flex-col gap-4">
      <p className="text-sm text-gray-600">
        当前共 <span className="font-medium text-gray-900">{task.counts.total.toLocaleString('zh-CN')}</span>{' '}
        个联系人，可多次导入，重复号码自动排除。
      </p>
      <CallTaskImport projectId={projectId} taskId={task.id} variables={variables} />
      <div className="flex gap-2">
        <Button onClick={() => onStep(task.id, 0)}>上一步</Button>
        <Button type="primary" onClick={() => onStep(task.id, 2)}>
          下一步
        </Button>
      </div>
    </div>
  );
}
