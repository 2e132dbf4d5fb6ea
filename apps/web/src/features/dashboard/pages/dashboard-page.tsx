import { type CallSummary, type DashboardTask, TASK_STATE_LABELS } from '@callpilot/contracts';
import { Button, Empty, Progress } from 'antd';
import { Link } from 'react-router';
import { CallDetailLink } from '@/entities/call/components/call-detail-link';
import { CallEndReason } from '@/entities/call/components/call-end-reason';
import { CallGradeTag } from '@/entities/call/components/call-grade-tag';
import { formatShortCallTime, formatTalkTime } from '@/entities/call/utils/call-format';
import { CALL_RECORD_LIST_PATH } from '@/entities/call/utils/call-paths';
import { useCurrentUser } from '@/lib/api/get-current-user';
import { chinaTime, formatPercent } from '@/lib/format';
import { selectCurrentProjectId, useUserStore } from '@/stores/user-store';
import { useDashboard } from '../api/get-dashboard';
import { useLatestCalls } from '../api/get-latest-calls';
import { DashboardAttentionList } from '../components/dashboard-attention';
import { TodayFigures, WeekFigures } from '../components/dashboard-figures';
import { DashboardLimits } from '../components/dashboard-limits';
import { DashboardTrend } from '../components/dashboard-trend';
import { formatFinish } from '../utils/dashboard-format';

function taskLine(task: DashboardTask): string {
  if (task.waitingUntil)
    return `呼叫时段外，${chinaTime(task.waitingUntil).format('MM-DD HH:mm')} 继续 · ${formatFinish(task.expectedFinishAt)}`;
  return `${task.activeCalls} 通进行中 · 接通率 ${formatPercent(task.answerRate)} · ${formatFinish(task.expectedFinishAt)}`;
}

function RunningTasks({ tasks }: { tasks: DashboardTask[] }) {
  return (
    <section aria-label="进行中的任务" className="rounded-lg border border-gray-200 bg-white p-5">
      <div className="mb-4 flex items-center justify-between">
        <h2 className="text-base font-medium text-gray-900">进行中的任务</h2>
        <Link to="/call-task/list" className="text-sm">
          全部任务
        </Link>
      </div>
      {tasks.length === 0 ? (
        <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description="暂无进行中的任务">
          <Link to="/call-task/add">新建呼出任务</Link>
        </Empty>
      ) : (
        <ul className="flex flex-col gap-3">
          {tasks.map((task) => (
            <li key={task.id} className="flex flex-col gap-1">
              <div className="flex items-center justify-between gap-2 text-sm">
                <Link to={`/call-task/task-detail/${encodeURIComponent(task.id)}`} className="font-medium">
                  {task.name}
                </Link>
                <span className="text-gray-500">
                  {TASK_STATE_LABELS[task.state]} · {task.counts.finished}/{task.counts.total}
                </span>
              </div>
              <Progress
                percent={Math.round(task.progress * 100)}
                size="small"
                status="active"
                aria-label={`${task.name} 进度`}
              />
              <span className="text-xs text-gray-500">{taskLine(task)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function LatestCalls({ calls }: { calls: CallSummary[] }) {
  return (
    <section aria-label="最近通话" className="rounded-lg border border-gray-200 bg-white p-5">
      <div className="mb-4 flex items-center justify-between">
        <h2 className="text-base font-medium text-gray-900">最近通话</h2>
        <Link to={CALL_RECORD_LIST_PATH} className="text-sm">
          全部通话记录
        </Link>
      </div>
      {calls.length === 0 ? (
        <Empty
          image={Empty.PRESENTED_IMAGE_SIMPLE}
          description="暂无通话：任务开始呼叫或小助手测试通话后会显示在这里"
        />
      ) : (
        <ul className="flex flex-col divide-y divide-gray-100">
          {calls.map((call) => (
            <li key={call.id} className="flex flex-wrap items-center justify-between gap-2 py-2 text-sm">
              <CallDetailLink callId={call.id}>
                {call.calleeNumber || call.callerNumber || '-'}
                {call.contactName ? ` ${call.contactName}` : ''}
              </CallDetailLink>
              <span className="flex items-center gap-3 text-gray-500">
                {call.taskName && <span>{call.taskName}</span>}
                <CallEndReason call={call} />
                <span>{formatTalkTime(call.talkSeconds)}</span>
                {call.intentGrade && <CallGradeTag grade={call.intentGrade} compact />}
                <span>{formatShortCallTime(call.startedAt)}</span>
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function DashboardPage() {
  const currentUser = useCurrentUser();
  const projectId = useUserStore(selectCurrentProjectId);
  const summary = useDashboard(projectId);
  const latest = useLatestCalls(projectId);

  const user = currentUser.data;
  const currentProject = user?.projects[0];
  const data = summary.data;
  const isNewProject = Boolean(data && data.last7Days.calls === 0 && data.runningTasks.length === 0);

  return (
    <main className="mx-auto flex max-w-6xl flex-col gap-6 p-6">
      <header className="flex items-start justify-between gap-4">
        <div>
          <h1 className="text-2xl font-semibold text-gray-900">首页</h1>
          {user && (
            <>
              <p className="mt-1 text-gray-700">欢迎，{user.displayName}</p>
              <p className="mt-1 text-sm text-gray-500">当前项目：{currentProject?.name ?? '暂无项目'}</p>
            </>
          )}
        </div>
        {summary.data && (
          <span className="text-xs text-gray-400">
            更新于 {chinaTime(summary.data.at).format('HH:mm:ss')}，每分钟自动刷新
          </span>
        )}
      </header>

      {currentUser.isError && (
        <div className="flex items-center gap-3 text-sm text-gray-600">
          <span>用户信息加载失败</span>
          <Button size="small" onClick={() => currentUser.refetch()}>
            重试
          </Button>
        </div>
      )}
      {projectId && summary.isPending && <p className="text-sm text-gray-500">加载中...</p>}
      {summary.isError && (
        <div className="flex items-center gap-3 text-sm text-gray-600">
          <span>概况加载失败</span>
          <Button size="small" onClick={() => summary.refetch()}>
            重试
          </Button>
        </div>
      )}
      {data && (
        <>
          {isNewProject && (
            <section className="rounded-lg border border-dashed border-gray-300 bg-white px-6 py-5 text-sm text-gray-600">
              还没有通话。先在「智能小助手」中发布一个小助手，再
              <Link to="/call-task/add">新建呼出任务</Link>
              导入联系人开始呼叫，这里会显示今日与近 7 日的通话概况。
            </section>
          )}
          <DashboardAttentionList items={data.attention} />
          <TodayFigures
            today={data.today}
            yesterday={data.yesterdaySameTime}
            weekAverage={data.weekAverageSameTime}
          />
          <div className="grid grid-cols-1 gap-4 lg:grid-cols-3">
            <div className="lg:col-span-2">
              <DashboardTrend trend={data.trend} />
            </div>
            <div className="flex flex-col gap-4">
              <WeekFigures figures={data.last7Days} />
              <DashboardLimits limits={data.limits} />
            </div>
          </div>
          <div className="grid grid-cols-1 gap-4 lg:grid-cols-2">
            <RunningTasks tasks={data.runningTasks} />
            <LatestCalls calls={latest.data?.items ?? []} />
          </div>
        </>
      )}
    </main>
  );
}
