import type { OpenTaskContactsRequest, OpenTaskContactsResult } from '@callpilot/contracts';
import { eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/client';
import { taskContacts } from '../../db/schema';
import { classify } from '../tasks/import-classify';
import {
  assertImportable,
  loadTask,
  type StoredImport,
  taskAssistantVariables,
} from '../tasks/import-records';
import { insertContacts } from '../tasks/import-staging';

/** Column names no assistant variable can take (variable names are letters, digits and _). */
const PHONE_COLUMN = '#phone';
const NAME_COLUMN = '#name';

/**
 * Adds contacts to a task as a contact import does, in one transaction: the same states allow it
 * (草稿、待开始、已暂停), the same classification refuses rows (invalid number or missing required
 * variable, duplicate of an earlier row or of the task's contacts, on the do-not-call list), and
 * the accepted rows go in a few thousand per statement. Refused rows are answered, not stored
 * (they have no file to download them from). Rows are numbered after the task's last one, so the
 * contact list keeps the order in which they were added.
 */
export async function addTaskContacts(
  db: Database,
  projectId: string,
  taskId: string,
  request: OpenTaskContactsRequest,
): Promise<OpenTaskContactsResult> {
  return db.transaction(async (tx) => {
    const task = await loadTask(tx, projectId, taskId, true);
    assertImportable(task);
    const variables = await taskAssistantVariables(tx, task);
    const names = variables.map((variable) => variable.name);
    // The rows as a sheet with one column per variable, so the import's own classifier judges them.
    const stored: StoredImport = {
      headers: [PHONE_COLUMN, NAME_COLUMN, ...names],
      rows: request.contacts.map((contact, index) => [
        index,
        [contact.phone, contact.name, ...names.map((name) => contact.variables[name] ?? '')],
      ]),
      mapping: { phone: PHONE_COLUMN, name: NAME_COLUMN, variables: {} },
    };
    const mapping = {
      phone: PHONE_COLUMN,
      name: NAME_COLUMN,
      variables: Object.fromEntries(names.map((name) => [name, name])),
    };
    const { accepted, rejects } = await classify(
      tx,
      projectId,
      taskId,
      stored,
      mapping,
      variables,
      (earlier) => `与 contacts[${earlier}] 号码重复`,
    );
    const [last] = await tx
      .select({ n: sql<number>`coalesce(max(${taskContacts.rowNumber}), 0)::int` })
      .from(taskContacts)
      .where(eq(taskContacts.taskId, taskId));
    const base = (last?.n ?? 0) + 1;
    await insertContacts(
      tx,
      projectId,
      taskId,
      accepted.map((contact) => ({ ...contact, n: base + contact.n })),
    );
    return {
      accepted: accepted.length,
      rejected: rejects.map((reject) => ({
        index: reject.n,
        phone: reject.phone,
        reason: reject.kind,
        message: reject.reason,
      })),
    };
  });
}
