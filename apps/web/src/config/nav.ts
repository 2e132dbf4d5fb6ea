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

/** The balance-limited features of the spec; a gated item's create actions need its feature. */
export type Feature = 'assistant' | 'knowledge' | 'ttsClone' | 'concurrentCallin' | 'concurrentCallout';

export type NavItem = {
  label: string;
  url: string;
  icon: ComponentType;
  /** The balance limit this section depends on, if any. */
  feature?: Feature;
};

export type NavGroup = {
  /** Empty for the unnamed top group. */
  title: string;
  items: NavItem[];
};

// The one table the sidebar renders; the router registers a route for every url here.
export const navGroups: NavGroup[] = [
  { title: '', items: [{ label: '首页', url: paths.dashboard, icon: HomeOutlined }] },
  {
    title: '通话',
    items: [
      { label: '通话记录', url: paths.callRecord, icon: PhoneOutlined },
      { label: '呼出任务', url: paths.callTask, icon: SendOutlined, feature: 'concurrentCallout' },
      { label: '通话流程', url: paths.ivr, icon: BranchesOutlined },
    ],
  },
  {
    title: '其他',
    items: [
      { label: '智能小助手', url: paths.assistant, icon: RobotOutlined, feature: 'assistant' },
      { label: '知识库', url: paths.knowledge, icon: BookOutlined, feature: 'knowledge' },
      { label: '数据统计', url: paths.dataReport, icon: BarChartOutlined },
      { label: '短信管理', url: paths.sms, icon: MessageOutlined },
      { label: '开发者选项', url: paths.developerOptions, icon: ApiOutlined },
      { label: '账户信息', url: paths.accountInfo, icon: UserOutlined },
    ],
  },
];

/** The spec's active rule: the path starts with the item url, and the path is not /settings. */
export function isNavItemActive(pathname: string, url: string): boolean {
  if (pathname === paths.settings || pathname.startsWith(`${paths.settings}/`)) return false;
  return pathname.startsWith(url);
}
