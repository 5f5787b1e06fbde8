import type { PersonRow } from "@/lib/stores/users";
import { RelativeTime } from "@/components/relative-time";
import { CreatePersonForm, PersonControls } from "@/components/people/people-forms";
import "@/components/people/people.css";

/** /admin/people: everyone with an account, and the admin's controls over who may act. */
export function PeopleView({ people, me }: { people: PersonRow[]; me: string }) {
  return (
    <div className="people-page">
      <header className="page-header">
        <div className="page-header__row">
          <h1>People</h1>
        </div>
        <p className="lede">
          Who may sign in to the console, and with which role. A role change or a disable takes effect at once: the
          person&apos;s open sessions end on their next request. A password reset issues a one-time password, shown
          once, which the person must replace when they sign in. Every change is recorded in the audit log. Agents have
          tokens, not accounts.
        </p>
      </header>

      <section className="card" aria-labelledby="people-create-title">
        <h2 id="people-create-title">Create a person</h2>
        <CreatePersonForm />
      </section>

      <section className="card" aria-labelledby="people-list-title">
        <h2 id="people-list-title">Everyone ({people.length})</h2>
        <div className="table-wrap">
          <table className="table" data-testid="people">
            <thead>
              <tr>
                <th scope="col">Username</th>
                <th scope="col">Name</th>
                <th scope="col">Role</th>
                <th scope="col">Status</th>
                <th scope="col">Created</th>
                <th scope="col">Change</th>
              </tr>
            </thead>
            <tbody>
              {people.map((p) => (
                <tr key={p.id} data-username={p.username}>
                  <td>
                    <code>{p.username}</code>
                    {p.id === me ? <span className="subtle"> (you)</span> : null}
                  </td>
                  <td>{p.displayName}</td>
                  <td>{p.role}</td>
                  <td>
                    {p.disabledAt ? (
                      <>
                        disabled <RelativeTime value={p.disabledAt} />
                      </>
                    ) : (
                      "active"
                    )}
                    {!p.hasPassword ? (
                      <span className="people-note">single sign-on only</span>
                    ) : p.passwordMustChange ? (
                      <span className="people-note">one-time password, not yet replaced</span>
                    ) : null}
                  </td>
                  <td>
                    <RelativeTime value={p.createdAt} />
                  </td>
                  <td>
                    <PersonControls
                      key={`${p.id}:${p.role}:${p.disabledAt ? "off" : "on"}`}
                      userId={p.id}
                      username={p.username}
                      role={p.role}
                      disabled={p.disabledAt !== null}
                      canResetPassword={p.hasPassword && p.id !== me}
                    />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </section>
    </div>
  );
}
