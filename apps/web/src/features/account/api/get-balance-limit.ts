// The shell loads the same limits for feature gating; one query key keeps them in step.
export * from '@/lib/api/get-balance-limit';
