import type { KnowledgeGapResolveRequest, KnowledgeGapTopic } from '@callpilot/contracts';
import { Form, Input, Modal } from 'antd';
import { useEffect } from 'react';
import { toast } from 'sonner';
import { useResolveKnowledgeGap } from '../api/resolve-knowledge-gap';

/** Which fix is open, for which topic. */
export type GapDialog = { as: 'similar' | 'pair'; topic: KnowledgeGapTopic };

type Values = { question: string; answer?: string };

/**
 * 添加为相似问 puts the caller's question under the closest existing pair (suggested, editable);
 * 新建问答对 writes a new pair. Either way the topic is resolved and leaves the list.
 */
export function KnowledgeGapDialog({
  projectId,
  dialog,
  onClose,
}: {
  projectId: string;
  dialog: GapDialog | null;
  onClose: () => void;
}) {
  const [form] = Form.useForm<Values>();
  const resolve = useResolveKnowledgeGap(projectId);
  const topic = dialog?.topic;

  useEffect(() => {
    if (dialog) form.setFieldsValue({ question: dialog.topic.question, answer: '' });
  }, [dialog, form]);

  const submit = (values: Values) => {
    if (!dialog || !topic) return;
    // The knowledge report's part names the pair inside its document (segmentId); a server
    // without it reads documentId as the pair.
    const segmentId = (topic.suggestedPair as { segmentId?: string } | null)?.segmentId;
    const request: KnowledgeGapResolveRequest | null =
      dialog.as === 'similar'
        ? topic.suggestedPair
          ? {
              as: 'similar',
              topicId: topic.id,
              documentId: topic.suggestedPair.documentId,
              ...(segmentId ? { segmentId } : {}),
              question: values.question.trim(),
            }
          : null
        : {
            as: 'pair',
            topicId: topic.id,
            knowledgeBaseId: topic.knowledgeBaseId,
            question: values.question.trim(),
            answer: (values.answer ?? '').trim(),
          };
    if (!request) return;
    resolve.mutate(request, {
      onSuccess: () => {
        toast.success(dialog.as === 'similar' ? '已添加为相似问' : '已新建问答对');
        onClose();
      },
    });
  };

  return (
    <Modal
      open={dialog !== null}
      title={dialog?.as === 'similar' ? '添加为相似问' : '新建问答对'}
      okText="保存"
      cancelText="取消"
      confirmLoading={resolve.isPending}
      onOk={() => form.submit()}
      onCancel={onClose}
      destroyOnHidden
    >
      {dialog?.as === 'similar' && topic?.suggestedPair ? (
        <p className="mb-3 text-sm text-gray-600">
          添加到问答对「{topic.suggestedPair.question}」（相似度 {Math.round(topic.suggestedPair.score * 100)}
          %）
        </p>
      ) : topic ? (
        <p className="mb-3 text-sm text-gray-600">添加到知识库「{topic.knowledgeBaseName}」</p>
      ) : null}
      <Form form={form} layout="vertical" onFinish={submit} preserve={false}>
        <Form.Item
          name="question"
          label={dialog?.as === 'similar' ? '相似问' : '问题'}
          rules={[
            { required: true, whitespace: true, message: '请输入问题' },
            { max: 200, message: '问题不能超过 200 个字' },
          ]}
        >
          <Input />
        </Form.Item>
        {dialog?.as === 'pair' ? (
          <Form.Item
            name="answer"
            label="答案"
            rules={[
              { required: true, whitespace: true, message: '请输入答案' },
              { max: 2000, message: '答案不能超过 2000 个字' },
            ]}
          >
            <Input.TextArea rows={4} />
          </Form.Item>
        ) : null}
      </Form>
    </Modal>
  );
}
