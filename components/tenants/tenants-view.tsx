import type { TenantView } from "@/lib/stores/tenants";
import { RelativeTime } from "@/components/relative-time";
import { OnboardTenantForm, TenantStatusControl } from "@/components/tenants/tenants-forms";
import "@/components/people/people.css";
import "@/components/tenants/tenants.css";
import { TableWrap } from "@/components/table-wrap";

/** /platform/tenants: the register, and a platform admin's controls over it. */
export function TenantsView({
  tenants,
  ownTenantId,
}: {
  tenants: Array<TenantView & { people: number }>;
  ownTenantId: string;
}) {
  return (
    <div className="tenants-page">
      <header className="page-header">
        <div className="page-header__row">
          <h1>Tenants</h1>
        </div>
        <p className="lede">
          Each tenant&apos;s people, agents, tasks and audit chain are its own: PostgreSQL&apos;s row-level security
          keeps every other tenant&apos;s rows out of its reach. Open a tenant with its first admin, who then manages
          its people and agents. A suspended tenant&apos;s people and agents are refused everything until it is
          reactivated; its data stays. Each change is recorded in the tenant&apos;s own audit chain.
        </p>
      </header>

      <section className="card" aria-labelledby="tenants-open-title">
        <h2 id="tenants-open-title">Open a tenant</h2>
        <OnboardTenantForm />
      </section>

      <section className="card" aria-labelledby="tenants-list-title">
        <h2 id="tenants-list-title">Every tenant ({tenants.length})</h2>
        {/* A focusable region: with only the person's own tenant listed, no row has a button to reach the box by. */}
        <TableWrap label="Every tenant">
          <table className="table" data-testid="tenants">
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">People</th>
                <th scope="col">Created</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {tenants.map((t) => (
                <tr key={t.id} data-tenant={t.id}>
                  <td>
                    <code>{t.id}</code>
                    {t.id === ownTenantId ? <span className="subtle"> (yours)</span> : null}
                  </td>
                  <td>{t.name}</td>
                  <td data-testid="tenant-status">
                    {t.status === "suspended" && t.suspended_at ? (
                      <>
                        suspended <RelativeTime value={new Date(t.suspended_at)} />
                      </>
                    ) : (
                      t.status
                    )}
                  </td>
                  <td>
                    {t.people}
                    {t.people === 0 ? (
                      <span className="people-note">no admin yet: open it again with the same id</span>
                    ) : null}
                  </td>
                  <td>
                    <RelativeTime value={new Date(t.created_at)} />
                  </td>
                  <td>
                    {t.status === "deleted" ? (
                      <span className="subtle">Deleted: its keys are destroyed, nothing to change.</span>
                    ) : t.id === ownTenantId && t.status === "active" ? (
                      <span className="subtle">Your own tenant is suspended from the CLI only.</span>
                    ) : (
                      <TenantStatusControl key={`${t.id}:${t.status}`} tenantId={t.id} status={t.status} />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      </section>
    </div>
  );
}
