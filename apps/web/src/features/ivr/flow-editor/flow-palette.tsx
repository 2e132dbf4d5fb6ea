import { FLOW_NODE_LABELS } from '@callpilot/contracts';
import { NODE_META, PALETTE_DRAG_TYPE, PALETTE_TYPES } from './node-meta';
import { useAddNodeAtCenter } from './use-canvas-actions';

/** The node types to add: drag one onto the canvas, or click it to add it in the middle of the view. */
export function FlowPalette() {
  const addAtCenter = useAddNodeAtCenter();
  return (
    <nav
      aria-label="节点库"
      className="flex h-full flex-col overflow-y-auto border-r border-gray-200 bg-white"
    >
      <div className="px-3 pt-3 pb-2 text-xs text-gray-500">拖到画布上，或点击添加</div>
      <ul className="flex flex-col gap-1 px-2 pb-3">
        {PALETTE_TYPES.map((type) => {
          const meta = NODE_META[type];
          return (
            <li key={type}>
              <button
                type="button"
                draggable
                title={meta.description}
                aria-label={`添加${FLOW_NODE_LABELS[type]}`}
                onDragStart={(event) => {
                  event.dataTransfer.setData(PALETTE_DRAG_TYPE, type);
                  event.dataTransfer.effectAllowed = 'move';
                }}
                onClick={() => addAtCenter(type)}
                className="flex w-full cursor-grab items-start gap-2 rounded-md border border-transparent px-2 py-1.5 text-left hover:border-gray-200 hover:bg-gray-50 active:cursor-grabbing"
              >
                <span className="mt-0.5 text-base" style={{ color: meta.color }}>
                  {meta.icon}
                </span>
                <span className="min-w-0">
                  <span className="block text-sm text-gray-900">{FLOW_NODE_LABELS[type]}</span>
                  <span className="block text-xs leading-4 text-gray-500">{meta.description}</span>
                </span>
              </button>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
