"use client";

import { usePathname } from "next/navigation";
import { useEffect, useRef, useState, type ReactNode } from "react";

/**
 * The header's sections and account on a narrow screen: a disclosure behind
 * a "Menu" button (aria-expanded), closed by Escape (focus back on the
 * button), by a click or focus outside it, and by following a link.
 * On a wide screen the CSS hides the button and always shows the contents,
 * whatever this state says.
 */
export function HeaderMenu({ children }: { children: ReactNode }) {
  const pathname = usePathname();
  // Open on the page where it was opened: a navigation closes it without an effect to reset it.
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  const button = useRef<HTMLButtonElement>(null);
  const menu = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== "Escape") return;
      setOpenOn(null);
      button.current?.focus();
    };
    const onPointer = (event: PointerEvent) => {
      const target = event.target as Node;
      if (!menu.current?.contains(target) && !button.current?.contains(target)) setOpenOn(null);
    };
    document.addEventListener("keydown", onKey);
    document.addEventListener("pointerdown", onPointer);
    return () => {
      document.removeEventListener("keydown", onKey);
      document.removeEventListener("pointerdown", onPointer);
    };
  }, [open]);

  return (
    <>
      <button
        ref={button}
        type="button"
        className="app-header__toggle"
        aria-expanded={open}
        aria-controls="app-header-menu"
        onClick={() => setOpenOn(open ? null : pathname)}
      >
        <span className="app-header__toggle-icon" aria-hidden="true" />
        Menu
      </button>
      <div
        ref={menu}
        id="app-header-menu"
        className="app-header__menu"
        data-open={open}
        onClick={(event) => {
          // A link followed closes it, the current page's own link (no navigation) included.
          if ((event.target as Element).closest("a")) setOpenOn(null);
        }}
        onBlur={(event) => {
          // Tabbing past the last item leaves the menu: close it rather than leave it over the page.
          const next = event.relatedTarget as Node | null;
          if (next && !menu.current?.contains(next) && !button.current?.contains(next)) setOpenOn(null);
        }}
      >
        {children}
      </div>
    </>
  );
}
