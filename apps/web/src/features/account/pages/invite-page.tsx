import { ROLE_LABELS } from '@callpilot/contracts';
import { Button, Result, Spin } from 'antd';
import dayjs from 'dayjs';
import { Link, useNavigate, useParams } from 'react-router';
import { loginHref, paths, signupHref } from '@/config/paths';
import { getToken } from '@/lib/auth-token';
import { RequestError } from '@/lib/request';
import { useAcceptInvitation, useInvitationPreview } from '../api/get-invitation-preview';

const CLOSED: Record<'expired' | 'accepted' | 'revoked', { title: string; text: string }> = {
  expired: { title: '邀请已过期', text: '邀请链接的有效期为 7 天，请联系项目管理员重新邀请。' },
  accepted: { title: '邀请已被使用', text: '每个邀请链接只能使用一次。如已加入，请直接登录。' },
  revoked: { title: '邀请已被撤销', text: '项目管理员撤销了这个邀请，如有需要请联系其重新邀请。' },
};

/** /invite/:token: open to anyone holding the link; accepting needs the invited e-mail's account. */
export function InvitePage() {
  const { token = '' } = useParams();
  const navigate = useNavigate();
  const preview = useInvitationPreview(token);
  const accept = useAcceptInvitation(token);
  const loggedIn = Boolean(getToken());
  const here = `/invite/${token}`;

  let body: React.ReactNode;
  if (preview.isPending) {
    body = <Spin />;
  } else if (!preview.data) {
    body = (
      <Result status="warning" title="邀请链接无效" subTitle="请确认链接完整，或联系项目管理员重新邀请。" />
    );
  } else if (preview.data.status !== 'pending') {
    const closed = CLOSED[preview.data.status];
    body = <Result status="warning" title={closed.title} subTitle={closed.text} />;
  } else if (accept.isSuccess) {
    body = (
      <Result
        status="success"
        title={`已加入项目「${accept.data.projectName}」`}
        subTitle={`你的角色：${ROLE_LABELS[accept.data.role]}`}
        extra={
          <Button type="primary" onClick={() => navigate(paths.dashboard, { replace: true })}>
            进入控制台
          </Button>
        }
      />
    );
  } else {
    const inv = preview.data;
    const failed =
      accept.error instanceof RequestError ? accept.error.message : accept.error ? '接受邀请失败' : '';
    body = (
      <Result
        status="info"
        title={`${inv.invitedBy} 邀请你加入项目「${inv.projectName}」`}
        subTitle={
          <span className="flex flex-col gap-1">
            <span>角色：{ROLE_LABELS[inv.role]}</span>
            <span>受邀邮箱：{inv.email}</span>
            <span>有效期至：{dayjs(inv.expiresAt).format('YYYY-MM-DD HH:mm')}</span>
            {failed && (
              <span role="alert" className="text-red-600">
                {failed}
              </span>
            )}
          </span>
        }
        extra={
          loggedIn ? (
            <Button type="primary" loading={accept.isPending} onClick={() => accept.mutate()}>
              接受邀请
            </Button>
          ) : (
            <span className="flex flex-col items-center gap-2">
              <Link to={loginHref(here)}>
                <Button type="primary">登录后接受</Button>
              </Link>
              <span className="text-sm text-gray-500">
                还没有账号？用受邀邮箱<Link to={signupHref(here)}>注册</Link>
                后回到这里接受邀请，无需创建项目。
              </span>
            </span>
          )
        }
      />
    );
  }

  return <main className="flex min-h-screen items-center justify-center bg-gray-50 p-6">{body}</main>;
}
