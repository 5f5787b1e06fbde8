/**
 * The console's keyboard shortcuts as a pure decision (docs/search.md): the
 * key event, whether the person is typing in a field, whether `g` was just
 * pressed, in; what to do, out. components/search/header-tools.tsx listens;
 * this decides, so the rules are tested without a browser.
 */

export const goShortcuts = [
  { key: "d", href: "/dashboard", label: "the dashboard" },
  { key: "t", href: "/tasks", label: "tasks" },
  { key: "r", href: "/reviews", label: "the review queue" },
  { key: "i", href: "/inbox", label: "the inbox" },
] as const;

export type ShortcutAction = { kind: "search" } | { kind: "help" } | { kind: "g" } | { kind: "go"; href: string };

export interface ShortcutKey {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  altKey: boolean;
  defaultPrevented?: boolean;
}

/** Whether a key pressed there is text being typed: inputs, text areas, selects, anything editable. */
export function isTypingTarget(target: EventTarget | null): boolean {
  if (!target || typeof (target as Element).closest !== "function") return false;
  const element = target as HTMLElement;
  if (element.isContentEditable) return true;
  const field = element.closest("input, textarea, select, [contenteditable='true']");
  if (!field) return false;
  // A checkbox or a button-like input takes no text.
  return !(field instanceof HTMLInputElement) || !/^(checkbox|radio|button|submit|reset)$/.test(field.type);
}

export function shortcutAction(
  event: ShortcutKey,
  context: { typing: boolean; afterG: boolean; dialogOpen: boolean },
): ShortcutAction | null {
  if (event.defaultPrevented) return null;
  // Ctrl/⌘K opens the search from anywhere, a field included (as in most consoles): it types nothing.
  if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") return { kind: "search" };
  if (context.typing || context.dialogOpen || event.ctrlKey || event.metaKey || event.altKey) return null;
  if (context.afterG) {
    const go = goShortcuts.find((g) => g.key === event.key);
    if (go) return { kind: "go", href: go.href };
  }
  switch (event.key) {
    case "/":
      return { kind: "search" };
    case "?":
      return { kind: "help" };
    case "g":
      return { kind: "g" };
    default:
      return null;
  }
}
