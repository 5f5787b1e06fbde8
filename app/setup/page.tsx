import type { Metadata } from "next";
import Link from "next/link";
import { isFirstAdminSetupOpen } from "@/lib/use-cases/people/complete-first-admin-setup";
import { SetupForm } from "@/app/setup/setup-form";
import "@/components/people/people.css";
import { getDb } from "@/lib/db/client";

export const metadata: Metadata = { title: "First admin", referrer: "no-referrer" };

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

/**
 * The page the start's one-time link opens (scripts/start.ts): the first
 * admin of a deployment with no accounts. The token in the link is the only
 * credential; without a working one the page says why and offers nothing.
 */
// The first admin is the first tenant's: there is no one signed in yet to say otherwise.
export default async function SetupPage({ searchParams }: Props) {
  const query = await searchParams;
  const token = typeof query.token === "string" ? query.token : "";
  const open = token !== "" && (await isFirstAdminSetupOpen(getDb(), token));
  return (
    <main id="main" className="setup-page" tabIndex={-1}>
      <h1>Set up Verity</h1>
      {open ? (
        <>
          <p className="lede">
            This deployment has no accounts yet. Create its first admin; the link then stops working. Everyone else is
            created by an admin under People.
          </p>
          <SetupForm token={token} />
        </>
      ) : (
        <div className="notice notice--warning" role="alert">
          <p>
            This setup link does not work: it is used up or expired, or this deployment has accounts already. If nobody
            has an account, restart Verity for a new link, or run{" "}
            <code>npm run -s verity -- users create &lt;username&gt; --role admin</code> on the server.
          </p>
          <p>
            <Link href="/login">Sign in</Link>
          </p>
        </div>
      )}
    </main>
  );
}
