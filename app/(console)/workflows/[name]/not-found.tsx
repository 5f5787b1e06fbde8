import Link from "next/link";

export default function WorkflowNotFound() {
  return (
    <div className="empty-state" role="alert">
      <h1 className="empty-state__title">No such workflow version</h1>
      <div className="empty-state__body">
        <p>
          The registry has no workflow or version by that name. It may have been mistyped, or the link came from another
          Verity installation.
        </p>
        <p>
          <Link href="/workflows" className="button">
            Back to the workflows
          </Link>
        </p>
      </div>
    </div>
  );
}
