import { type FlowNode, type FlowNodeOf, type FlowNodeType, flowNode } from '@callpilot/contracts';
import { Form, Input, InputNumber, Switch } from 'antd';
import { type ReactNode, useId, useMemo } from 'react';
import { useFlowEditorStore } from '../store';
import { TemplateInput } from '../template-input';

/** Field errors of a node by path inside the node ('name', 'options.0.key'), in the contracts' Chinese. */
export type FieldErrors = Readonly<Record<string, string>>;

/**
 * The contracts' own schema judges every field, so the panel says exactly what saving would
 * refuse, under the field it is about.
 */
export function useNodeFieldErrors(node: FlowNode): FieldErrors {
  return useMemo(() => {
    const result = flowNode.safeParse(node);
    if (result.success) return {};
    const errors: Record<string, string> = {};
    for (const issue of result.error.issues) {
      const path = (issue.path[0] === 'data' ? issue.path.slice(1) : issue.path).join('.');
      errors[path] ??= issue.message;
    }
    return errors;
  }, [node]);
}

export type NodeFormProps<T extends FlowNodeType> = {
  node: FlowNodeOf<T>;
  errors: FieldErrors;
  /**
   * Changes some of the node's settings. `typingKey` names the field being typed in: keystrokes in
   * one field in a row are one undo step.
   */
  set: (patch: Partial<FlowNodeOf<T>['data']>, typingKey?: string) => void;
};

export function useNodeSetter<T extends FlowNodeType>(node: FlowNodeOf<T>): NodeFormProps<T>['set'] {
  const updateNode = useFlowEditorStore((s) => s.updateNode);
  return (patch, typingKey) =>
    updateNode(
      node.id,
      (current) => ({ ...current, data: { ...current.data, ...patch } }) as FlowNode,
      typingKey,
    );
}

/** A labelled field with its error (or a hint) underneath; `children` gets the id the label points at. */
export function Field({
  label,
  error,
  extra,
  children,
}: {
  label: ReactNode;
  error?: string;
  extra?: ReactNode;
  children: (id: string) => ReactNode;
}) {
  const id = useId();
  return (
    <Form.Item
      label={label}
      htmlFor={id}
      validateStatus={error ? 'error' : undefined}
      help={error}
      className="!mb-3"
    >
      {children(id)}
      {/* Not Form.Item's `extra`: antd measures that box on every render, a forced layout of the whole canvas. */}
      {extra && !error && <div className="mt-1 text-xs leading-5 text-gray-500">{extra}</div>}
    </Form.Item>
  );
}

export function TextField({
  label,
  value,
  onChange,
  error,
  extra,
  placeholder,
  maxLength,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  extra?: ReactNode;
  placeholder?: string;
  maxLength?: number;
}) {
  return (
    <Field label={label} error={error} extra={extra}>
      {(id) => (
        <Input
          id={id}
          value={value}
          placeholder={placeholder}
          maxLength={maxLength}
          status={error ? 'error' : undefined}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </Field>
  );
}

export function TemplateField({
  label,
  value,
  onChange,
  error,
  extra,
  placeholder,
  maxLength,
  multiline = true,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  error?: string;
  extra?: ReactNode;
  placeholder?: string;
  maxLength?: number;
  multiline?: boolean;
}) {
  return (
    <Field label={label} error={error} extra={extra}>
      {(id) => (
        <TemplateInput
          id={id}
          value={value}
          onChange={onChange}
          multiline={multiline}
          placeholder={placeholder}
          maxLength={maxLength}
          invalid={Boolean(error)}
        />
      )}
    </Field>
  );
}

export function NumberField({
  label,
  value,
  onChange,
  error,
  min,
  max,
  unit,
  extra,
}: {
  label: string;
  value: number;
  onChange: (value: number) => void;
  error?: string;
  min: number;
  max: number;
  unit?: string;
  extra?: ReactNode;
}) {
  return (
    <Field label={label} error={error} extra={extra}>
      {(id) => (
        <InputNumber
          id={id}
          value={value}
          min={min}
          max={max}
          precision={0}
          suffix={unit}
          className="!w-full"
          status={error ? 'error' : undefined}
          // An emptied box keeps the last number: the settings are never blank.
          onChange={(next) => {
            if (typeof next === 'number') onChange(next);
          }}
        />
      )}
    </Field>
  );
}

export function SwitchField({
  label,
  checked,
  onChange,
  extra,
}: {
  label: string;
  checked: boolean;
  onChange: (checked: boolean) => void;
  extra?: ReactNode;
}) {
  return (
    <Field label={label} extra={extra}>
      {(id) => <Switch id={id} checked={checked} onChange={onChange} />}
    </Field>
  );
}

/** A short id for a new option, branch or intent, unique among `taken` (the contracts allow 1-24 chars). */
export function newLocalId(prefix: string, taken: readonly string[]): string {
  for (let n = taken.length + 1; ; n++) {
    const id = `${prefix}${n}`;
    if (!taken.includes(id)) return id;
  }
}
