import { Navigate, useLocation, useParams } from 'react-router';
import { AssistantEditorPage, type EditType } from './assistant-editor-page';
import { AssistantListPage } from './assistant-list-page';
import { AssistantPromptEditPage } from './assistant-prompt-edit-page';
import { AssistantSpeechPage } from './assistant-speech-page';
import { AssistantTemplatePage } from './assistant-template-page';

const EDIT_TYPES: readonly string[] = ['create', 'edit', 'copy'] satisfies EditType[];

/** The section's one lazy chunk: every /assistant/... route renders this and it picks the page. */
export function AssistantSection() {
  const { pathname } = useLocation();
  const { editType } = useParams();

  if (pathname === '/assistant/list') return <AssistantListPage />;
  if (pathname === '/assistant/template') return <AssistantTemplatePage />;
  if (pathname === '/assistant/prompt-edit') return <AssistantPromptEditPage />;
  if (pathname === '/assistant/speech') return <AssistantSpeechPage />;
  if (editType && EDIT_TYPES.includes(editType)) {
    // Keyed so create → edit (after the first save) is a fresh editor, not a reused one.
    return <AssistantEditorPage key={editType} editType={editType as EditType} />;
  }
  return <Navigate to="/assistant/list" replace />;
}
