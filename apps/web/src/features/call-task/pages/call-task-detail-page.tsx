import type { TaskDetail, TaskEvent } from '@callpilot/contracts';
import { useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Modal, Tabs } from 'antd';
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { SmsFollowUpCard } from '@/entities/sms-follow-up/components/sms-follow-up-card';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { taskKeys } from '../api/call-task-query-keys';
import { useCallTask } from '../api/get-call-task';
import { useTaskEvents } from '../api/subscribe-task-events';
import { useTaskVariables } from '../api/use-task-variables';
import { CallTaskActions, canImportContacts } from '../components/call-task-actions';
import { CallTaskContactsTable } from '../components/call-task-contacts-table';
import { CallTaskImport } from '../components/call-task-import';
import { CallTaskSettingsSummary } from '../components/call-task-settings-summary';
import { CallTaskStateTag } from '../components/call-task-state-tag';
import { CallTaskStats } from '../components/call-task-stats';
import { waitingText } from '../utils/call-task-format';
import { callTaskListBackPath, taskCallsPath, taskDetailPath, taskEditPath } from '../utils/call-task-paths';

/** Live counts land at once; the contacts table and the estimate follow at most this often. */
export const CONTACTS_REFRESH_MS = 2000;
export const DETAIL_REFRESH_MS = 15_000;

export function CallTaskDetailPage() {
  const projectId = useUserStore(selectCurrentProjectId) ?? '';
  const { id = '' } = useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const task = useCallTask(projectId, id);
  const [importing, setImporting] = useState(false);
  const variables = useTaskVariables(projectId, task.data?.assistantId, task.data?.assistantVersion);

  const contactsTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  // The page has just loaded the detail; the first events need not fetch it again.
  const lastDetailFetch = useRef(Date.now());
  useEffect(
    () => () => {
      clearTimeout(contactsTimer.current);
    },
    [],
  );

  const onEvent = (event: TaskEvent) => {
    if (event.type !== 'task' || event.task.id !== id) return;
    queryClient.setQueryData<TaskDetail>(taskKeys.detail(projectId, id), (current) =>
      current ? { ...current, ...event.task } : current,
    );
    if (!contactsTimer.current) {
      contactsTimer.current = setTimeout(() => {
        contactsTimer.current = undefined;
        void queryClient.invalidateQueries({ queryKey: taskKeys.contacts(projectId, id) });
      }, CONTACTS_REFRESH_MS);
    }
    // The event carries counts but not the estimate, which the server derives from recent calls.
    const now = Date.now();
    if (now - lastDetailFetch.current > DETAIL_REFRESH_MS) {
      lastDetailFetch.current = now;
      void queryClient.invalidateQueries({ queryKey: taskKeys.detail(projectId, id), exact: true });
    }
  };
  const state = task.data?.state;
  // Finished tasks do not change any more; no stream to keep open for them.
  useTaskEvents(projectId, {
    taskId: id,
    enabled: Boolean(state) && state !== 'completed' && state !== 'stopped',
    onEvent,
  });

  if (task.isPending) {
    return (
      <main className="p-6">
        <p className="text-sm text-gray-500">加载中...</p>
      </main>
    );
  }
  if (!task.data) {
    return (
      <main className="flex flex-col gap-4 p-6">
        <Alert type="error" showIcon title="任务不存在或加载失败" />
        <Link to={callTaskListBackPath}>返回任务列表</Link>
      </main>
    );
  }

  const detail = task.data;
  return (
    <main className="flex flex-col gap-6 p-6">
      <header className="flex flex-wrap items-start justify-between gap-4">
        <div className="flex flex-col gap-1">
          <Link to={callTaskListBackPath} className="text-sm">
            ← 返回任务列表
          </Link>
          <div className="flex items-center gap-3">
            <h1 className="text-2xl font-semibold text-gray-900">{detail.name}</h1>
            <CallTaskStateTag state={detail.state} />
          </div>
          {detail.waitingUntil && detail.state !== 'completed' && detail.state !== 'stopped' && (
            <p className="text-sm text-[#d48806]">{waitingText(detail.waitingUntil)}</p>
          )}
        </div>
        <CallTaskActions
          projectId={projectId}
          task={detail}
          variant="button"
          onEdit={() => navigate(taskEditPath(detail.id))}
          onCopied={(copy) => navigate(taskDetailPath(copy.id))}
          onDeleted={() => navigate(callTaskListBackPath)}
        />
      </header>

      <CallTaskStats task={detail} />

      <section className="rounded-lg border border-gray-200 bg-white p-6">
        <Tabs
          items={[
            {
              key: 'contacts',
              label: '联系人',
              children: (
                <div className="flex flex-col gap-3">
                  <div className="flex flex-wrap justify-end gap-3">
                    {canImportContacts(detail.state) && (
                      <Button onClick={() => setImporting(true)}>导入联系人</Button>
                    )}
                    <Link to={taskCallsPath(detail.id)}>查看通话记录</Link>
                  </div>
                  <CallTaskContactsTable projectId={projectId} taskId={detail.id} />
                </div>
              ),
            },
            { key: 'settings', label: '任务设置', children: <CallTaskSettingsSummary task={detail} /> },
            {
              key: 'sms',
              label: '跟进短信',
              children: (
                <SmsFollowUpCard
                  projectId={projectId}
                  owner={{ ownerType: 'task', ownerId: detail.id }}
                  variableNames={variables}
                />
              ),
            },
          ]}
        />
      </section>

      <Modal
        title="导入联系人"
        open={importing}
        width={860}
        footer={null}
        destroyOnHidden
        onCancel={() => setImporting(false)}
      >
        <CallTaskImport projectId={projectId} taskId={detail.id} variables={variables} />
      </Modal>
    </main>
  );
}
