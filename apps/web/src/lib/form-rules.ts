import type { FormRule } from 'antd';
import type { RuleObject } from 'antd/es/form';

// Structural, so the web app needs no direct dependency on zod: the contracts package brings it.
type Schema = {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: { message: string }[] } };
};

/**
 * Validates an antd field with the contract's own schema, so the form says exactly what the server
 * would answer. An empty field is checked as absent, which yields the schema's "请输入…" message.
 */
export function zodRule(schema: Schema): FormRule {
  return {
    validator: async (_, value: unknown) => {
      const result = schema.safeParse(value === '' ? undefined : value);
      if (!result.success) throw new Error(result.error.issues[0]?.message ?? '格式不正确');
    },
  };
}

/** "确认密码" must repeat the field named `passwordField`. */
export function sameAsRule(
  passwordField: string,
): (form: { getFieldValue: (name: string) => unknown }) => RuleObject {
  return ({ getFieldValue }) => ({
    validator: async (_, value: unknown) => {
      if (!value) throw new Error('请再次输入密码');
      if (value !== getFieldValue(passwordField)) throw new Error('两次输入的密码不一致');
    },
  });
}
