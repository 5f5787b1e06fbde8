import type { Db } from "@/lib/db/client";
import { AppError } from "@/lib/core/errors";
import type { AuditActor } from "@/lib/model/audit/audit-chain";
import { toolNames } from "@/lib/model/executions/tools";
import { validateWorkflowDefinition, type Problem } from "@/lib/model/workflows/validate-definition";
import { listToolNames } from "@/lib/stores/tool-registry";
import { insertWorkflowVersion, type PublishOutcome } from "@/lib/stores/workflow-registry";

/**
 * Publishes a workflow definition: validated as a document (every problem at
 * its JSON path, a 422), then written immutably under its digest with its
 * audit entry in one transaction. The same name, version and content again
 * is a replay (the first publication answered again); other content under a
 * published version is a 409 naming the digest it holds; a version not above
 * the newest is a 422 at `$.version`. Who may publish is the caller's check
 * (requireRegistryAuthority: an admin, or a token with the publish scope).
 */
export async function publishWorkflow(db: Db, document: unknown, actor: AuditActor): Promise<PublishOutcome> {
  // The tools a state may name: the shipped ones and every registered one, retired included
  // (a retired tool still names a real tool; recording an intent for it is refused elsewhere).
  const knownTools = [...new Set([...toolNames, ...(await listToolNames(db))])].sort();
  const checked = validateWorkflowDefinition(document, { knownTools });
  if (!checked.ok) throw definitionInvalid(checked.problems);
  const definition = checked.definition;
  return db.$transaction((tx) => insertWorkflowVersion(tx, definition, actor));
}

function definitionInvalid(problems: Problem[]): AppError {
  return new AppError(
    "definition_invalid",
    `The definition has ${problems.length} problem${problems.length === 1 ? "" : "s"}: ${problems
      .map((p) => `${p.path}: ${p.message}`)
      .join("; ")}`,
    { problems, errors: problems.map((p) => ({ field: p.path, message: p.message })) },
  );
}
