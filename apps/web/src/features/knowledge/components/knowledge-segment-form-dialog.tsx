import { type KnowledgeSegment, knowledgeSegmentUpdateRequest } from '@callpilot/contracts';
import { Form, Input, Modal } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useUpdateKnowledgeSegment } from '../api/update-knowledge-segment';

const fields = knowledgeSegmentUpdateRequest.shape;

type FormValues = { content?: string; question?: string; answer?: string };

export function KnowledgeSegmentFormDialog({
  projectId,
  segment,
  onClose,
}: {
  projectId: string;
  segment: KnowledgeSegment;
  onClose: () => void;
}) {
  const [form] = Form.useForm<FormValues>();
  const isPair = segment.question !== null;
  const update = useUpdateKnowledgeSegment(projectId, segment.knowledgeBaseId, {
    onSuccess: () => {
      toast.success('分段已保存');
      onClose();
    },
  });

  const submit = (values: FormValues) => {
    // A pair stays a pair: question and answer are edited, never merged into free text.
    const body = isPair
      ? { question: values.question?.trim(), answer: values.answer?.trim() }
      : { content: values.content?.trim() };
    update.mutate({ segmentId: segment.id, body });
  };

  return (
    <Modal
      open
      title={`编辑分段 #${segment.position}`}
      okText="保存"
      onOk={() => form.submit()}
      onCancel={onClose}
      confirmLoading={update.isPending}
      destroyOnHidden
      mask={{ closable: false }}
      width={640}
    >
      <Form<FormValues>
        form={form}
        name="knowledge-segment"
        layout="vertical"
        requiredMark={false}
        disabled={update.isPending}
        initialValues={
          isPair
            ? { question: segment.question ?? '', answer: segment.answer ?? '' }
            : { content: segment.content }
        }
        onFinish={submit}
      >
        {isPair ? (
          <>
            <Form.Item label="问题" name="question" rules={[zodRule(fields.question.unwrap())]}>
              <Input.TextArea rows={2} maxLength={500} showCount />
            </Form.Item>
            <Form.Item label="答案" name="answer" rules={[zodRule(fields.answer.unwrap())]}>
              <Input.TextArea rows={6} maxLength={4000} showCount />
            </Form.Item>
          </>
        ) : (
          <Form.Item label="分段内容" name="content" rules={[zodRule(fields.content.unwrap())]}>
            <Input.TextArea rows={10} maxLength={4000} showCount />
          </Form.Item>
        )}
      </Form>
    </Modal>
  );
}
