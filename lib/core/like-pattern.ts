/**
 * LIKE's wildcards and its escape character (backslash, PostgreSQL's
 * default), made literal: what a person typed is matched as text, so
 * "task_" does not match "taskX" and "%" does not match everything.
 */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, "\\$&");
}
