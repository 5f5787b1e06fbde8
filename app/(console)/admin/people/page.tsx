import type { Metadata } from "next";
import { authorizePage, consoleDb } from "@/lib/adapters/auth/session";
import { listPeople } from "@/lib/stores/users";
import { ForbiddenNotice } from "@/components/forbidden-notice";
import { PeopleView } from "@/components/people/people-view";

export const metadata: Metadata = { title: "People" };

export default async function PeoplePage() {
  const access = await authorizePage("people:manage", "/admin/people");
  if (!access.ok)
    return <ForbiddenNotice reason={`${access.reason} Only administrators create people and change who may act.`} />;
  return <PeopleView people={await listPeople(await consoleDb())} me={access.principal.id} />;
}
