import Link from "next/link";

export default function NotFound() {
  return (
    <main id="main" className="page" tabIndex={-1}>
      <div className="empty-state">
        <h1 className="empty-state__title">Page not found</h1>
        <div className="empty-state__body">
          <p>There is nothing at this address.</p>
          <p>
            <Link href="/tasks" className="button">
              Go to the task list
            </Link>
          </p>
        </div>
      </div>
    </main>
  );
}
