/**
 * What the workflows pages show about the registry, apart from how it is
 * loaded (workflow-pages.ts), so client components can take these types.
 */
export interface WorkflowVersionSummary {
  name: string;
  version: number;
  title: string;
  digest: string;
  /** The identity that published it; for a built-in version, the system that registered it at start. */
  publishedBy: string;
  publishedAt: Date;
  /** Shipped with Verity rather than published. */
  builtIn: boolean;
  /** Tasks pinned to this version's digest, in any state. */
  taskCount: number;
  /** The newest version: what new tasks are created with. */
  current: boolean;
}

export interface WorkflowSummary {
  name: string;
  /** The current version's title and description. */
  title: string;
  description: string;
  /** Newest first. */
  versions: WorkflowVersionSummary[];
}
