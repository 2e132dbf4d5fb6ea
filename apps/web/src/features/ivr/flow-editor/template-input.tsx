import { Button, Dropdown, Input } from 'antd';
import { type KeyboardEvent, type SyntheticEvent, useId, useLayoutEffect, useRef, useState } from 'react';
import { cn } from '@/lib/utils';
import { type FlowVariableOption, useFlowVariables } from './use-flow-variables';

/** `{{` and what follows it, right before the caret: the variable being typed. */
const OPEN_REFERENCE = /\{\{\s*([\p{L}\p{N}_.]*)$/u;

type Typing = { start: number; end: number; text: string };

/**
 * A text that may hold `{{variables}}`: typing `{{` offers the system and flow variables (arrow
 * keys, Enter or a click to insert), and 插入变量 inserts one at the caret.
 */
export function TemplateInput({
  id,
  value,
  onChange,
  multiline = false,
  rows = 2,
  placeholder,
  maxLength,
  invalid,
}: {
  id?: string;
  value: string;
  onChange: (value: string) => void;
  multiline?: boolean;
  rows?: number;
  placeholder?: string;
  maxLength?: number;
  invalid?: boolean;
}) {
  const fallbackId = useId();
  const inputId = id ?? fallbackId;
  const listId = `${inputId}-variables`;
  const variables = useFlowVariables();
  const [typing, setTyping] = useState<Typing | null>(null);
  const [active, setActive] = useState(0);
  const caret = useRef<number | null>(null);
  const pendingCaret = useRef<number | null>(null);

  const element = () => document.getElementById(inputId) as HTMLInputElement | HTMLTextAreaElement | null;

  const query = typing?.text.toLowerCase() ?? '';
  const matches = typing
    ? variables.filter((v) => v.name.toLowerCase().includes(query) || v.label.includes(typing.text))
    : [];
  const open = typing !== null && matches.length > 0;

  // After an insertion the caret goes right behind the inserted variable, ready to type on.
  useLayoutEffect(() => {
    if (pendingCaret.current === null) return;
    const target = element();
    const at = pendingCaret.current;
    pendingCaret.current = null;
    if (!target) return;
    target.focus();
    target.setSelectionRange(at, at);
  });

  const measure = (target: HTMLInputElement | HTMLTextAreaElement) => {
    const at = target.selectionStart ?? target.value.length;
    caret.current = at;
    const match = OPEN_REFERENCE.exec(target.value.slice(0, at));
    setTyping(match ? { start: match.index, end: at, text: match[1] ?? '' } : null);
    setActive(0);
  };

  const insert = (name: string, at: Typing | null) => {
    const start = at?.start ?? caret.current ?? value.length;
    const end = at?.end ?? start;
    let rest = value.slice(end);
    // The closing braces may already be there (typed, or left from an earlier variable name).
    if (at && rest.startsWith('}}')) rest = rest.slice(2);
    const token = `{{${name}}}`;
    onChange(`${value.slice(0, start)}${token}${rest}`);
    pendingCaret.current = start + token.length;
    caret.current = start + token.length;
    setTyping(null);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    if (!open) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((current) => (current + step + matches.length) % matches.length);
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      event.preventDefault();
      const chosen = matches[active];
      if (chosen) insert(chosen.name, typing);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      setTyping(null);
    }
  };

  const common = {
    id: inputId,
    value,
    placeholder,
    maxLength,
    status: invalid ? ('error' as const) : undefined,
    role: 'combobox',
    'aria-expanded': open,
    'aria-controls': open ? listId : undefined,
    'aria-autocomplete': 'list' as const,
    onChange: (event: { target: HTMLInputElement | HTMLTextAreaElement }) => {
      onChange(event.target.value);
      measure(event.target);
    },
    onKeyDown,
    onKeyUp: (event: KeyboardEvent<HTMLInputElement | HTMLTextAreaElement>) => {
      if (!['ArrowDown', 'ArrowUp', 'Enter', 'Tab', 'Escape'].includes(event.key))
        measure(event.currentTarget);
    },
    onClick: (event: SyntheticEvent<HTMLInputElement | HTMLTextAreaElement>) => measure(event.currentTarget),
    onBlur: () => setTyping(null),
  };

  const groups: { key: FlowVariableOption['group']; label: string }[] = [
    { key: 'system', label: '系统变量' },
    { key: 'flow', label: '流程变量' },
  ];
  const menuItems = groups
    .map((group) => ({
      type: 'group' as const,
      key: group.key,
      label: group.label,
      children: variables
        .filter((v) => v.group === group.key)
        .map((v) => ({ key: v.name, label: `{{${v.name}}} ${v.label}` })),
    }))
    .filter((group) => group.children.length > 0);

  return (
    <div className="relative">
      {multiline ? (
        <Input.TextArea {...common} autoSize={{ minRows: rows, maxRows: 8 }} />
      ) : (
        <Input {...common} />
      )}
      {open && (
        <div
          id={listId}
          role="listbox"
          aria-label="可插入的变量"
          className="absolute top-full right-0 left-0 z-20 mt-1 max-h-56 overflow-y-auto rounded-md border border-gray-200 bg-white py-1 shadow-lg"
        >
          {matches.map((variable, index) => (
            <div
              key={variable.name}
              role="option"
              tabIndex={-1}
              aria-selected={index === active}
              // Keep the focus (and the caret) in the text while choosing.
              onMouseDown={(event) => event.preventDefault()}
              onClick={() => insert(variable.name, typing)}
              onKeyDown={() => {}}
              className={cn(
                'flex cursor-pointer items-baseline gap-2 px-3 py-1 text-sm',
                index === active ? 'bg-blue-50' : 'hover:bg-gray-50',
              )}
            >
              <span className="font-mono text-gray-900">{`{{${variable.name}}}`}</span>
              <span className="truncate text-xs text-gray-500">{variable.label}</span>
            </div>
          ))}
        </div>
      )}
      <div className="mt-1 flex justify-end">
        <Dropdown
          trigger={['click']}
          menu={{ items: menuItems, onClick: ({ key }) => insert(key, null) }}
          // The list is long; it scrolls rather than running off the screen.
          popupRender={(menu) => <div className="max-h-72 overflow-y-auto rounded-lg shadow-lg">{menu}</div>}
        >
          <Button size="small" type="link" className="!px-0">
            插入变量
          </Button>
        </Dropdown>
      </div>
    </div>
  );
}
