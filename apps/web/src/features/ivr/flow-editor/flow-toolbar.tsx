import {
  ArrowLeftOutlined,
  CloudUploadOutlined,
  ExperimentOutlined,
  HistoryOutlined,
  LayoutOutlined,
  PhoneOutlined,
  RedoOutlined,
  SaveOutlined,
  UndoOutlined,
} from '@ant-design/icons';
import { FLOW_STATUS_LABELS, type FlowDetail } from '@callpilot/contracts';
import { Badge, Button, Divider, Input, Tag, Tooltip } from 'antd';
import type { ReactNode } from 'react';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { FlowNodeSearch } from './flow-node-search';
import { selectCanRedo, selectCanUndo, selectDirty, useFlowEditorStore } from './store';

const MOD = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform) ? '⌘' : 'Ctrl+';

export function flowStatusTag(flow: Pick<FlowDetail, 'status' | 'publishedVersion'>) {
  if (flow.status === 'published') return <Tag color="green">已发布 v{flow.publishedVersion}</Tag>;
  if (flow.status === 'changed') return <Tag color="orange">{FLOW_STATUS_LABELS.changed}</Tag>;
  return <Tag>{FLOW_STATUS_LABELS.draft}</Tag>;
}

/** The editor's top bar: where you are, the flow's name and status, editing commands and the tools. */
export function FlowToolbar({
  flow,
  saving,
  onSave,
  onAutoLayout,
  onPublish,
  onSimulate,
  simulating,
  onTestCall,
  onVersions,
  stats,
  publishLabel = '发布',
}: {
  flow: FlowDetail;
  saving: boolean;
  onSave: () => void;
  onAutoLayout: () => void;
  onPublish: () => void;
  onSimulate: () => void;
  simulating: boolean;
  onTestCall: () => void;
  onVersions: () => void;
  /** The statistics control (flow-tools). */
  stats: ReactNode;
  /** 提交审核 while the project reviews a member's publish first. */
  publishLabel?: string;
}) {
  const name = useFlowEditorStore((s) => s.name);
  const setName = useFlowEditorStore((s) => s.setName);
  const dirty = useFlowEditorStore(selectDirty);
  const canUndo = useFlowEditorStore(selectCanUndo);
  const canRedo = useFlowEditorStore(selectCanRedo);
  const undo = useFlowEditorStore((s) => s.undo);
  const redo = useFlowEditorStore((s) => s.redo);
  const nameInvalid = name.trim() === '';
  return (
    <header className="flex flex-wrap items-center gap-2 border-b border-gray-200 bg-white px-3 py-2">
      <Link to={paths.ivrFlows} aria-label="返回流程列表" className="text-gray-600 hover:text-blue-600">
        <ArrowLeftOutlined />
      </Link>
      <Input
        aria-label="流程名称"
        className="!w-52"
        value={name}
        maxLength={40}
        status={nameInvalid ? 'error' : undefined}
        placeholder="请输入流程名称"
        onChange={(event) => setName(event.target.value)}
      />
      {flowStatusTag(flow)}
      {dirty && <span className="text-xs text-amber-600">未保存</span>}
      <Divider orientation="vertical" />
      <Tooltip title={`撤销（${MOD}Z）`}>
        <Button aria-label="撤销" icon={<UndoOutlined />} disabled={!canUndo} onClick={undo} />
      </Tooltip>
      <Tooltip title={`重做（${MOD}Shift+Z）`}>
        <Button aria-label="重做" icon={<RedoOutlined />} disabled={!canRedo} onClick={redo} />
      </Tooltip>
      <Button icon={<LayoutOutlined />} onClick={onAutoLayout}>
        自动布局
      </Button>
      <FlowNodeSearch />
      <div className="ml-auto flex flex-wrap items-center gap-2">
        {stats}
        <Button
          icon={<ExperimentOutlined />}
          type={simulating ? 'primary' : 'default'}
          ghost={simulating}
          onClick={onSimulate}
        >
          模拟
        </Button>
        <Button icon={<PhoneOutlined />} onClick={onTestCall}>
          模拟来电
        </Button>
        <Button icon={<HistoryOutlined />} onClick={onVersions}>
          版本
        </Button>
        <Tooltip title={`${MOD}S`}>
          <Badge dot={dirty} offset={[-4, 4]}>
            <Button icon={<SaveOutlined />} loading={saving} onClick={onSave}>
              保存
            </Button>
          </Badge>
        </Tooltip>
        <Button type="primary" icon={<CloudUploadOutlined />} onClick={onPublish}>
          {publishLabel}
        </Button>
      </div>
    </header>
  );
}
