import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { getConsoleSession, loginPath, consoleDb } from "@/lib/adapters/auth/session";
import { getPerson } from "@/lib/stores/users";
import { AccountView } from "@/components/account/account-view";

export const metadata: Metadata = { title: "Your account" };

/**
 * Every signed-in person's own account: the only console page open to one
 * who still holds a one-time password (authorizePage sends them here).
 */
export default async function AccountPage() {
  const session = await getConsoleSession();
  if (!session) redirect(loginPath("/account"));
  const person = await getPerson(await consoleDb(), { id: session.principal.id });
  if (!person) redirect(loginPath("/account"));
  return <AccountView person={person} identity={session.principal.identity} />;
}
