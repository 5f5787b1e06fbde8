import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { inboxHref, parseInboxQuery } from "@/lib/model/inbox/inbox-items";
import { loadInbox } from "@/lib/adapters/console/inbox/inbox";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { InboxView } from "@/components/inbox/inbox-view";

export const metadata: Metadata = { title: "Inbox" };

export default async function InboxPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const query = parseInboxQuery(await searchParams);
  const access = await authorizePage("inbox:read", inboxHref(query));
  if (!access.ok) return <ForbiddenNotice reason={access.reason} />;
  return (
    <InboxView data={await loadInbox(await consoleDb(), access.principal, query)} viewer={access.principal.identity} />
  );
}
