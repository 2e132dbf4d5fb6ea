import ApiOutlined from '@ant-design/icons/ApiOutlined';
import BarChartOutlined from '@ant-design/icons/BarChartOutlined';
import BookOutlined from '@ant-design/icons/BookOutlined';
import BranchesOutlined from '@ant-design/icons/BranchesOutlined';
import HomeOutlined from '@ant-design/icons/HomeOutlined';
import MessageOutlined from '@ant-design/icons/MessageOutlined';
import PhoneOutlined from '@ant-design/icons/PhoneOutlined';
import RobotOutlined from '@ant-design/icons/RobotOutlined';
import SendOutlined from '@ant-design/icons/SendOutlined';
import UserOutlined from '@ant-design/icons/UserOutlined';
import type { ComponentType } from 'react';
import { paths } from './paths';

/** The balance-limited features of the spec; a gated section's create actions need its feature. */
export type Feature = 'assistant' | 'knowledge' | 'ttsClone' | 'concurrentCallin' | 'concurrentCallout';

export type SectionKey =
  | 'dashboard'
  | 'callRecord'
  | 'callTask'
  | 'ivr'
  | 'assistant'
  | 'knowledge'
  | 'dataReport'
  | 'sms'
  | 'developerOptions'
  | 'accountInfo';

export type Section = {
  key: SectionKey;
  label: string;
  /** The sidebar link, and the prefix of every route of the section (the active rule). */
  url: string;
  /** Sidebar group title; empty for the unnamed top group. */
  group: '' | '通话' | '其他';
  icon: ComponentType;
  /** The balance limit this section's create actions depend on, if any. */
  feature?: Feature;
  /** Route patterns of the section's pages; they all share the section's one lazy chunk. */
  routes: string[];
  /** Where the bare section url redirects to, when it is not a page itself. */
  redirectTo?: string;
};

// The one table of the authenticated shell: the sidebar renders it and the router registers its
// routes, so the two cannot disagree.
export const sections: Section[] = [
  {
    key: 'dashboard',
    label: '首页',
    url: paths.dashboard,
    group: '',
    icon: HomeOutlined,
    routes: [paths.dashboard],
  },
  {
    key: 'callRecord',
    label: '通话记录',
    url: paths.callRecord,
    group: '通话',
    icon: PhoneOutlined,
    routes: ['/call-record/list', '/call-record/detail/:id'],
    redirectTo: paths.callRecordList,
  },
  {
    key: 'callTask',
    label: '呼出任务',
    url: paths.callTask,
    group: '通话',
    icon: SendOutlined,
    feature: 'concurrentCallout',
    routes: [
      '/call-task/list',
      '/call-task/add',
      '/call-task/task-detail/:id',
      '/call-task/task-detail-list',
    ],
    redirectTo: paths.callTaskList,
  },
  {
    key: 'ivr',
    label: '通话流程',
    url: paths.ivr,
    group: '通话',
    icon: BranchesOutlined,
    routes: ['/ivr/*'],
  },
  {
    key: 'assistant',
    label: '智能小助手',
    url: paths.assistant,
    group: '其他',
    icon: RobotOutlined,
    feature: 'assistant',
    // Static segments outrank the :editType parameter, whatever the order here.
    routes: [
      '/assistant/list',
      '/assistant/template',
      '/assistant/prompt-edit',
      '/assistant/speech',
      '/assistant/:editType',
    ],
    redirectTo: paths.assistantList,
  },
  {
    key: 'knowledge',
    label: '知识库',
    url: paths.knowledge,
    group: '其他',
    icon: BookOutlined,
    feature: 'knowledge',
    routes: ['/knowledge/*'],
  },
  {
    key: 'dataReport',
    label: '数据统计',
    url: paths.dataReport,
    group: '其他',
    icon: BarChartOutlined,
    routes: ['/data-report/callin', '/data-report/assistant', '/data-report/knowledge'],
    redirectTo: paths.dataReportCallin,
  },
  { key: 'sms', label: '短信管理', url: paths.sms, group: '其他', icon: MessageOutlined, routes: ['/sms/*'] },
  {
    key: 'developerOptions',
    label: '开发者选项',
    url: paths.developerOptions,
    group: '其他',
    icon: ApiOutlined,
    routes: ['/developer-options/*'],
    redirectTo: paths.developerKeys,
  },
  {
    key: 'accountInfo',
    label: '账户信息',
    url: paths.accountInfo,
    group: '其他',
    icon: UserOutlined,
    routes: [paths.accountInfo],
  },
];

export type NavGroup = { title: Section['group']; items: Section[] };

/** The sidebar's groups, in the order their first section appears in the table. */
export const navGroups: NavGroup[] = sections.reduce<NavGroup[]>((groups, section) => {
  const group = groups.find((candidate) => candidate.title === section.group);
  if (group) group.items.push(section);
  else groups.push({ title: section.group, items: [section] });
  return groups;
}, []);

/** The spec's active rule: the path starts with the item url, and the path is not /settings. */
export function isNavItemActive(pathname: string, url: string): boolean {
  if (pathname === paths.settings || pathname.startsWith(`${paths.settings}/`)) return false;
  return pathname.startsWith(url);
}
