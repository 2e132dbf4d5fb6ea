import { flowNodeOutputs, flowNodeTitle, SYSTEM_FLOW_VARIABLES } from '@callpilot/contracts';
import { useMemo } from 'react';
import { useFlowEditorStore } from './store';

export type FlowVariableOption = { name: string; label: string; group: 'system' | 'flow' };

/** Every variable a text may use: the system's, then those the flow's nodes set. */
export function useFlowVariables(): FlowVariableOption[] {
  const nodes = useFlowEditorStore((s) => s.graph.nodes);
  return useMemo(() => {
    const options: FlowVariableOption[] = SYSTEM_FLOW_VARIABLES.map((v) => ({
      name: v.name,
      label: v.label,
      group: 'system',
    }));
    const seen = new Set(options.map((o) => o.name));
    for (const node of nodes)
      for (const name of flowNodeOutputs(node)) {
        if (!name || seen.has(name)) continue;
        seen.add(name);
        options.push({ name, label: `由「${flowNodeTitle(node)}」设置`, group: 'flow' });
      }
    return options;
  }, [nodes]);
}
