import {
  KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS,
  KNOWLEDGE_MAX_SIMILAR_QUESTIONS,
  type KnowledgeSegment,
  knowledgeSegmentUpdateRequest,
} from '@callpilot/contracts';
import type { FormRule } from 'antd';
import { Form, Input, Modal } from 'antd';
import { toast } from 'sonner';
import { zodRule } from '@/lib/form-rules';
import { useUpdateKnowledgeSegment } from '../api/update-knowledge-segment';

const fields = knowledgeSegmentUpdateRequest.shape;

type FormValues = { content?: string; question?: string; answer?: string; similarQuestions?: string };

/** The similar questions typed one a line: trimmed, without blank lines or repeats. */
export function similarQuestionLines(text: string | undefined): string[] {
  return [
    ...new Set(
      (text ?? '')
        .split(/\r?\n/)
        .map((line) => line.trim())
        .filter(Boolean),
    ),
  ];
}

// The contract checks the list the lines make, so the form says what the server would.
const similarQuestionsRule: FormRule = {
  validator: async (_, value: string | undefined) => {
    const result = fields.similarQuestions.unwrap().safeParse(similarQuestionLines(value));
    if (!result.success) throw new Error(result.error.issues[0]?.message ?? '相似问格式不正确');
  },
};

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
      ? {
          question: values.question?.trim(),
          answer: values.answer?.trim(),
          similarQuestions: similarQuestionLines(values.similarQuestions),
        }
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
            ? {
                question: segment.question ?? '',
                similarQuestions: segment.similarQuestions.join('\n'),
                answer: segment.answer ?? '',
              }
            : { content: segment.content }
        }
        onFinish={submit}
      >
        {isPair ? (
          <>
            <Form.Item label="问题" name="question" rules={[zodRule(fields.question.unwrap())]}>
              <Input.TextArea rows={2} maxLength={500} showCount />
            </Form.Item>
            <Form.Item
              label="相似问"
              name="similarQuestions"
              rules={[similarQuestionsRule]}
              extra={`来电者换个说法提问时也能命中这条问答。每行一个，最多 ${KNOWLEDGE_MAX_SIMILAR_QUESTIONS} 个，每个不超过 ${KNOWLEDGE_MAX_SIMILAR_QUESTION_CHARS} 个字符`}
            >
              <Input.TextArea
                autoSize={{ minRows: 3, maxRows: 8 }}
                placeholder={'例如：\n装宽带要等几天\n宽带多久能装好'}
              />
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
