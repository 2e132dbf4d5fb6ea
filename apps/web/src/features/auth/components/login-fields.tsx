import { type ComponentProps, type ReactNode, useId, useState } from 'react';

// /login is the first page a visitor loads, so it is drawn without antd (a 100 KB download):
// plain elements styled to match antd's controls. The other identity pages use antd as usual.

const FIELD =
  'h-8 w-full rounded-md border bg-white px-3 text-sm text-gray-900 outline-none transition-colors placeholder:text-gray-400 focus:border-[#4D8EFF] focus:ring-2 focus:ring-[#4D8EFF]/20 disabled:cursor-not-allowed disabled:bg-gray-50 disabled:text-gray-400';

/** A field's error, or undefined when it is valid. */
export type Rule = (value: string) => string | undefined;

/** The first broken rule's message, in order (required first), as antd's Form reports one. */
export const check = (value: string, rules: Rule[]) => {
  for (const rule of rules) {
    const message = rule(value);
    if (message) return message;
  }
  return undefined;
};

/**
 * Form state with antd's timing: a field is checked on submit, and re-checked as it is typed
 * once it has shown an error.
 */
export function useLoginForm<K extends string>(rules: Record<K, Rule[]>) {
  const keys = Object.keys(rules) as K[];
  const [values, setValues] = useState(
    () => Object.fromEntries(keys.map((k) => [k, ''])) as Record<K, string>,
  );
  const [errors, setErrors] = useState<Partial<Record<K, string>>>({});
  const set = (key: K, value: string) => {
    setValues((v) => ({ ...v, [key]: value }));
    if (errors[key] !== undefined) setErrors((e) => ({ ...e, [key]: check(value, rules[key]) }));
  };
  /** Checks the given fields (all by default) and shows their errors; true when all pass. */
  const validate = (only: K[] = keys) => {
    const found = Object.fromEntries(only.map((k) => [k, check(values[k], rules[k])])) as Partial<
      Record<K, string>
    >;
    setErrors((e) => ({ ...e, ...found }));
    return only.every((k) => found[k] === undefined);
  };
  return { values, errors, set, validate };
}

export function Field({
  label,
  error,
  children,
}: {
  label: string;
  error?: string;
  children: (props: { id: string; invalid: boolean; describedBy?: string }) => ReactNode;
}) {
  const id = useId();
  const errorId = `${id}-error`;
  return (
    <div className="mb-6">
      <label htmlFor={id} className="mb-2 block text-sm text-gray-900">
        {label}
      </label>
      {children({ id, invalid: error !== undefined, describedBy: error ? errorId : undefined })}
      {error && (
        <div id={errorId} role="alert" className="mt-1 text-sm text-[#FF5656]">
          {error}
        </div>
      )}
    </div>
  );
}

export function TextInput({
  invalid,
  className = '',
  ...props
}: ComponentProps<'input'> & { invalid?: boolean }) {
  return (
    <input
      aria-invalid={invalid || undefined}
      className={`${FIELD} ${invalid ? 'border-[#FF5656]' : 'border-gray-300 hover:border-[#4D8EFF]'} ${className}`}
      {...props}
    />
  );
}

/** A password input with a show/hide toggle, as antd's Input.Password. */
export function PasswordInput(props: ComponentProps<'input'> & { invalid?: boolean }) {
  const [shown, setShown] = useState(false);
  return (
    <div className="relative">
      <TextInput {...props} type={shown ? 'text' : 'password'} className="pr-9" />
      <button
        type="button"
        aria-label={shown ? '隐藏' : '显示'}
        aria-pressed={shown}
        disabled={props.disabled}
        onClick={() => setShown((s) => !s)}
        className="absolute inset-y-0 right-0 flex w-9 cursor-pointer items-center justify-center text-gray-400 hover:text-gray-600 disabled:cursor-not-allowed"
      >
        <svg
          viewBox="0 0 24 24"
          width="16"
          height="16"
          fill="none"
          stroke="currentColor"
          strokeWidth="2"
          aria-hidden
        >
          <path d="M2 12s3.6-7 10-7 10 7 10 7-3.6 7-10 7S2 12 2 12z" />
          <circle cx="12" cy="12" r="3" />
          {!shown && <path d="M4 4l16 16" />}
        </svg>
      </button>
    </div>
  );
}

export function ActionButton({
  primary = false,
  block = false,
  loading = false,
  disabled,
  className = '',
  children,
  ...props
}: ComponentProps<'button'> & { primary?: boolean; block?: boolean; loading?: boolean }) {
  const look = primary
    ? 'border-[#4D8EFF] bg-[#4D8EFF] text-white hover:bg-[#6FA5FF] disabled:border-gray-300 disabled:bg-gray-100 disabled:text-gray-400'
    : 'border-gray-300 bg-white text-gray-900 hover:border-[#4D8EFF] hover:text-[#4D8EFF] disabled:bg-gray-50 disabled:text-gray-400 disabled:hover:border-gray-300';
  return (
    <button
      type="button"
      disabled={disabled || loading}
      aria-busy={loading || undefined}
      className={`inline-flex h-8 cursor-pointer items-center justify-center gap-2 rounded-md border px-4 text-sm transition-colors disabled:cursor-not-allowed ${look} ${block ? 'w-full' : ''} ${className}`}
      {...props}
    >
      {loading && (
        <span
          aria-hidden
          className="size-3.5 animate-spin rounded-full border-2 border-current border-t-transparent"
        />
      )}
      {children}
    </button>
  );
}
