import { redirect } from "next/navigation";

/** The console starts at the task list; /tasks sends anyone signed out to /login. */
export default function Home(): never {
  redirect("/tasks");
}
