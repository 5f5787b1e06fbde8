import { redirect } from "next/navigation";
import { workflowAnchor } from "@/lib/adapters/console/workflows/workflow-href";
import { nameFromParam } from "@/lib/adapters/console/workflows/workflow-pages";

type Props = { params: Promise<{ name: string }> };

/** A workflow's own address is its entry in the registry, where its versions are listed. */
export default async function WorkflowPage({ params }: Props) {
  const name = nameFromParam((await params).name);
  redirect(name ? `/workflows#${workflowAnchor(name)}` : "/workflows");
}
