import DeleteOutlined from '@ant-design/icons/DeleteOutlined';
import { assistantVariable } from '@callpilot/contracts';
import { Button, Form, Input, Switch } from 'antd';
import { zodRule } from '@/lib/form-rules';

const nameRule = zodRule(assistantVariable.shape.name);

/** The per-contact values the prompt and opening line use as {{变量}}; samples feed previews only. */
export function AssistantVariableTable() {
  return (
    <Form.List name={['config', 'variables']}>
      {(fields, { add, remove }) => (
        <div className="flex flex-col gap-2">
          {fields.length > 0 && (
            <div className="grid grid-cols-[1fr_1fr_72px_40px] gap-2 text-xs text-gray-500">
              <span>变量名</span>
              <span>示例值</span>
              <span>必填</span>
              <span />
            </div>
          )}
          {fields.map((field, index) => (
            <div key={field.key} className="grid grid-cols-[1fr_1fr_72px_40px] items-start gap-2">
              <Form.Item name={[field.name, 'name']} rules={[nameRule]} className="mb-0">
                <Input aria-label={`变量 ${index + 1} 名称`} placeholder="如：客户姓名" />
              </Form.Item>
              <Form.Item name={[field.name, 'sample']} className="mb-0">
                <Input aria-label={`变量 ${index + 1} 示例值`} placeholder="如：张先生" />
              </Form.Item>
              <Form.Item name={[field.name, 'required']} valuePropName="checked" className="mb-0">
                <Switch aria-label={`变量 ${index + 1} 必填`} size="small" />
              </Form.Item>
              <Button
                type="text"
                aria-label={`删除变量 ${index + 1}`}
                icon={<DeleteOutlined />}
                onClick={() => remove(field.name)}
              />
            </div>
          ))}
          <Button
            type="dashed"
            disabled={fields.length >= 20}
            onClick={() => add({ name: '', sample: '', required: false })}
          >
            添加变量
          </Button>
        </div>
      )}
    </Form.List>
  );
}
