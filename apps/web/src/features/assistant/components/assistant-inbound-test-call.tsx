import type { AssistantDetail } from '@callpilot/contracts';
import { Empty, Skeleton } from 'antd';
import { Link } from 'react-router';
import { paths } from '@/config/paths';
import { InboundTestCallDialog } from '@/entities/call/components/inbound-test-call-dialog';
import { useProjectNumbers } from '@/entities/project-number/api/get-project-numbers';

/**
 * 模拟来电 from the editor: a simulated caller dials one of the numbers bound to this assistant, so
 * the call is answered exactly as a real caller's would be (by the published version).
 */
export function AssistantInboundTestCall({
  open,
  onClose,
  projectId,
  assistant,
}: {
  open: boolean;
  onClose: () => void;
  projectId: string;
  assistant: AssistantDetail;
}) {
  // Asked when the dialog opens: a number may have been bound in another tab since.
  const numbers = useProjectNumbers(projectId, { enabled: open });
  const bound = (numbers.data ?? [])
    .filter((number) => number.inboundAssistantId === assistant.id)
    .map(({ number, label, inboundAssistantName }) => ({
      number,
      label,
      assistantName: inboundAssistantName,
    }));

  const published = assistant.publishedVersion !== null;
  const empty = numbers.isPending ? (
    <Skeleton active paragraph={{ rows: 2 }} />
  ) : (
    <Empty
      image={Empty.PRESENTED_IMAGE_SIMPLE}
      description={
        published
          ? '还没有号码绑定到这个小助手，来电无法接入。'
          : '这个小助手还未发布：发布后，才能在号码管理中把号码绑定给它接听来电。'
      }
    >
      <Link to={paths.ivrNumbers}>前往号码管理</Link>
    </Empty>
  );

  return (
    <InboundTestCallDialog
      open={open}
      onClose={onClose}
      projectId={projectId}
      numbers={bound}
      empty={empty}
      note={
        published &&
        `来电由已发布的 v${assistant.publishedVersion} 接听${assistant.hasUnpublishedChanges ? '，未发布的修改不生效' : ''}。`
      }
    />
  );
}
