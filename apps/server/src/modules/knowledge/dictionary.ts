/**
 * The built-in 口语词典: what callers say (variants) and the word knowledge bases are written in
 * (standard). Placeholder: the lead's dictionary replaces this file at merge; a project's own
 * entries (terms.service.ts) extend it.
 */
export const BUILTIN_TERMS: { standard: string; variants: string[] }[] = [];
