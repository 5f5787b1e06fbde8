import type { Metadata } from "next";
import { authorizePage } from "@/lib/adapters/auth/session";
import { getDb } from "@/lib/db/client";
import { listPeople } from "@/lib/stores/users";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { PeopleView } from "@/components/people/people-view";

export const metadata: Metadata = { title: "People" };

export default async function PeoplePage() {
  const access = await authorizePage("people:manage", "/admin/people");
  if (!access.ok)
    return <ForbiddenNotice reason={`${access.reason} Only administrators create people and change who may act.`} />;
  return <PeopleView people={await listPeople(getDb())} me={access.principal.id} />;
}
