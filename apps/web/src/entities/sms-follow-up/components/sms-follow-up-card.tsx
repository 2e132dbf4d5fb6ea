import { INTENT_GRADE_LABELS, type SmsFollowUpRule } from '@callpilot/contracts';
import { Alert, Button, Card, Empty, Popconfirm, Skeleton, Switch, Tag, Tooltip } from 'antd';
import { useState } from 'react';
import { toast } from 'sonner';
import { useDeleteSmsFollowUpRule } from '../api/delete-sms-follow-up-rule';
import { useSmsFollowUpRules } from '../api/get-sms-follow-up-rules';
import { useSaveSmsFollowUpRule } from '../api/save-sms-follow-up-rule';
import type { SmsRuleOwner } from '../api/sms-follow-up-query-keys';
import { SmsFollowUpRuleDialog } from './sms-follow-up-rule-dialog';

const triggerText = (rule: SmsFollowUpRule) =>
  rule.trigger === 'requested'
    ? '助手请求发送时'
    : `意向等级为 ${rule.grades.map((g) => `${g}（${INTENT_GRADE_LABELS[g]}）`).join('、')} 时`;

/** 跟进短信: the SMS rules of an assistant or a task, sent after its calls through 短信管理. */
export function SmsFollowUpCard({
  projectId,
  owner,
  variableNames,
}: {
  projectId: string;
  owner: SmsRuleOwner;
  variableNames: string[];
}) {
  const rules = useSmsFollowUpRules(projectId, owner);
  const save = useSaveSmsFollowUpRule(projectId);
  const remove = useDeleteSmsFollowUpRule(projectId, owner);
  // One typed value for the open dialog: a new rule, or the rule being edited.
  const [dialog, setDialog] = useState<{ rule?: SmsFollowUpRule } | null>(null);

  const toggle = (rule: SmsFollowUpRule, enabled: boolean) =>
    save.mutate(
      {
        id: rule.id,
        body: {
          ownerType: rule.ownerType,
          ownerId: rule.ownerId,
          trigger: rule.trigger,
          grades: rule.grades,
          signatureId: rule.signatureId,
          templateId: rule.templateId,
          variableMap: rule.variableMap,
          enabled,
        },
      },
      { onError: (err) => toast.error(err.message) },
    );

  return (
    <Card
      title="跟进短信"
      extra={
        <Button type="primary" onClick={() => setDialog({})}>
          添加规则
        </Button>
      }
    >
      {rules.isPending ? (
        <Skeleton active />
      ) : rules.isError ? (
        <Alert type="error" showIcon title="跟进短信规则加载失败" description={rules.error.message} />
      ) : rules.data.length === 0 ? (
        <Empty description="还没有跟进短信规则：通话结束后可按意向等级，或在助手请求时，用已审核的模板给客户发短信" />
      ) : (
        <ul aria-label="跟进短信规则" className="flex flex-col divide-y divide-gray-100">
          {rules.data.map((rule) => (
            <li key={rule.id} className="flex flex-wrap items-center gap-3 py-3">
              <div className="flex min-w-0 flex-1 flex-col gap-1">
                <span className="text-sm">{triggerText(rule)}</span>
                <span className="text-xs text-gray-500">
                  {rule.signatureName ? `【${rule.signatureName}】` : ''}
                  {rule.templateName || '（模板已删除）'}
                </span>
                {rule.problem && (
                  <Tag color="warning" className="w-fit">
                    {rule.problem}
                  </Tag>
                )}
              </div>
              <Tooltip title={rule.enabled ? '已启用' : '已停用'}>
                <Switch
                  aria-label="启用"
                  checked={rule.enabled}
                  loading={save.isPending && save.variables?.id === rule.id}
                  onChange={(checked) => toggle(rule, checked)}
                />
              </Tooltip>
              <Button type="link" onClick={() => setDialog({ rule })}>
                编辑
              </Button>
              <Popconfirm
                title="删除这条跟进短信规则？"
                okText="删除"
                cancelText="取消"
                onConfirm={() => remove.mutateAsync(rule.id)}
              >
                <Button type="link" danger>
                  删除
                </Button>
              </Popconfirm>
            </li>
          ))}
        </ul>
      )}
      {dialog && (
        <SmsFollowUpRuleDialog
          open
          projectId={projectId}
          owner={owner}
          rule={dialog.rule}
          variableNames={variableNames}
          onClose={() => setDialog(null)}
        />
      )}
    </Card>
  );
}
