import { describe, expect, it } from "vitest";
import { shortcutAction, type ShortcutKey } from "@/lib/adapters/console/search/shortcuts";

const key = (k: string, mods: Partial<ShortcutKey> = {}): ShortcutKey => ({
  key: k,
  ctrlKey: false,
  metaKey: false,
  altKey: false,
  ...mods,
});
const idle = { typing: false, afterG: false, dialogOpen: false };

describe("keyboard shortcuts", () => {
  it("opens the search with / and Ctrl/⌘K, the help with ?", () => {
    expect(shortcutAction(key("/"), idle)).toEqual({ kind: "search" });
    expect(shortcutAction(key("k", { ctrlKey: true }), idle)).toEqual({ kind: "search" });
    expect(shortcutAction(key("K", { metaKey: true }), idle)).toEqual({ kind: "search" });
    expect(shortcutAction(key("?"), idle)).toEqual({ kind: "help" });
  });

  it("goes to a section with g then a letter, and only right after g", () => {
    expect(shortcutAction(key("g"), idle)).toEqual({ kind: "g" });
    const afterG = { ...idle, afterG: true };
    expect(shortcutAction(key("d"), afterG)).toEqual({ kind: "go", href: "/dashboard" });
    expect(shortcutAction(key("t"), afterG)).toEqual({ kind: "go", href: "/tasks" });
    expect(shortcutAction(key("r"), afterG)).toEqual({ kind: "go", href: "/reviews" });
    expect(shortcutAction(key("i"), afterG)).toEqual({ kind: "go", href: "/inbox" });
    expect(shortcutAction(key("d"), idle)).toBeNull();
    expect(shortcutAction(key("x"), afterG)).toBeNull();
  });

  it("never fires while the person types in a field or a dialog is open, but for Ctrl/⌘K", () => {
    const typing = { ...idle, typing: true };
    for (const k of ["/", "?", "g"]) expect(shortcutAction(key(k), typing)).toBeNull();
    expect(shortcutAction(key("d"), { ...typing, afterG: true })).toBeNull();
    expect(shortcutAction(key("/"), { ...idle, dialogOpen: true })).toBeNull();
    expect(shortcutAction(key("k", { ctrlKey: true }), typing)).toEqual({ kind: "search" });
    // A browser's own chords are left alone.
    expect(shortcutAction(key("g", { ctrlKey: true }), idle)).toBeNull();
    expect(shortcutAction(key("/", { defaultPrevented: true }), idle)).toBeNull();
  });
});
