/**
 * `npm run -s verity -- users …`: people from the command line, for a
 * deployment's first admin and for scripts. The same use cases as the
 * console's /admin/people, recorded in the audit log as `system:cli`.
 *
 *   users create <username> --role <role> [--display-name <name>] [--password-stdin] [--json]
 *   users list [--json]
 *   users role <username> <role>
 *   users disable <username>
 *   users enable <username>
 *   users reset-password <username> [--json]
 *
 * Without --password-stdin an initial password is generated and printed
 * once (only its hash is stored), and the person must replace it at their
 * first sign-in; with it, the password is the first line of standard input
 * (a pipe, never an argument: arguments are visible to every user of the
 * machine) and stays theirs. reset-password prints a new one-time password
 * once, ends the person's sessions, and has it replaced at the next sign-in.
 */
import { parseArgs } from "node:util";
import { AppError } from "@/lib/core/errors";
import type { Db } from "@/lib/db/client";
import { personRoles, type PersonRole } from "@/lib/model/people/person-fields";
import { getPerson, listPeople, type PersonRow } from "@/lib/stores/users";
import { changePersonRole } from "@/lib/use-cases/people/change-person-role";
import { createPerson } from "@/lib/use-cases/people/create-person";
import { disablePerson } from "@/lib/use-cases/people/disable-person";
import { enablePerson } from "@/lib/use-cases/people/enable-person";
import { resetPersonPassword } from "@/lib/use-cases/people/reset-person-password";
import { cliActor, requireArg, usageFailure, UsageError, withCliDatabase } from "@/programs/cli/cli-database";

const usage = `usage: npm run -s verity -- users <command>
  create <username> --role <${personRoles.join("|")}> [--display-name <name>] [--password-stdin] [--json]
  list [--json]
  role <username> <role>
  disable <username>
  enable <username>
  reset-password <username> [--json]`;

export async function runUsersCommand(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        role: { type: "string" },
        "display-name": { type: "string" },
        "password-stdin": { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
    });
  } catch (error) {
    return usageFailure(error, usage);
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  try {
    switch (command) {
      case "create": {
        const username = requireArg(rest[0], "<username>");
        const role = requireArg(values.role, "--role");
        const password = values["password-stdin"] ? await readPasswordFromStdin() : undefined;
        return await withCliDatabase(async ({ db }) => {
          const { person, initialPassword } = await createPerson(
            db,
            { username, display_name: values["display-name"] ?? username, role: role as PersonRole, password },
            cliActor,
            "cli",
          );
          if (values.json)
            console.log(JSON.stringify({ person: personJson(person), initial_password: initialPassword }));
          else {
            console.log(`created ${person.username} (${person.role}), id ${person.id}`);
            if (initialPassword)
              console.log(
                `initial password (shown once; hand it over privately, they choose their own at first sign-in): ${initialPassword}`,
              );
          }
          return 0;
        });
      }
      case "list":
        return await withCliDatabase(async ({ db }) => {
          const people = await listPeople(db);
          if (values.json) console.log(JSON.stringify(people.map(personJson)));
          else
            for (const p of people)
              console.log(
                `${p.username.padEnd(20)} ${p.role.padEnd(9)} ${p.disabledAt ? "disabled" : "active  "} ${p.displayName}${p.passwordMustChange ? " (one-time password not yet replaced)" : ""}`,
              );
          return 0;
        });
      case "role": {
        const username = requireArg(rest[0], "<username>");
        const role = requireArg(rest[1], "<role>");
        return await withCliDatabase(async ({ db }) => {
          const person = await changePersonRole(
            db,
            (await personOrThrow(db, username)).id,
            role as PersonRole,
            cliActor,
          );
          console.log(`${person.username} is now ${person.role}; their open sessions have ended`);
          return 0;
        });
      }
      case "disable":
      case "enable": {
        const username = requireArg(rest[0], "<username>");
        return await withCliDatabase(async ({ db }) => {
          const id = (await personOrThrow(db, username)).id;
          const person =
            command === "disable" ? await disablePerson(db, id, cliActor) : await enablePerson(db, id, cliActor);
          console.log(
            command === "disable"
              ? `${person.username} is disabled: sign-in refused, open sessions ended`
              : `${person.username} is enabled again`,
          );
          return 0;
        });
      }
      case "reset-password": {
        const username = requireArg(rest[0], "<username>");
        return await withCliDatabase(async ({ db }) => {
          const { person, oneTimePassword, sessionsEnded } = await resetPersonPassword(
            db,
            (await personOrThrow(db, username)).id,
            cliActor,
            "cli",
          );
          if (values.json)
            console.log(
              JSON.stringify({
                person: personJson(person),
                one_time_password: oneTimePassword,
                sessions_ended: sessionsEnded,
              }),
            );
          else {
            console.log(`${person.username} has a new password; ${sessionsEnded} open session(s) ended`);
            console.log(
              `one-time password (shown once; hand it over privately, they choose their own at next sign-in): ${oneTimePassword}`,
            );
          }
          return 0;
        });
      }
      default:
        throw new UsageError(command ? `unknown command "users ${command}"` : "missing a command");
    }
  } catch (error) {
    return usageFailure(error, usage);
  }
}

async function personOrThrow(db: Db, username: string): Promise<PersonRow> {
  const person = await getPerson(db, { username: username.trim().toLowerCase() });
  if (!person) throw new AppError("not_found", `No person named ${username}.`);
  return person;
}

function personJson(p: PersonRow) {
  return {
    id: p.id,
    username: p.username,
    display_name: p.displayName,
    role: p.role,
    disabled_at: p.disabledAt?.toISOString() ?? null,
    created_at: p.createdAt.toISOString(),
    password_must_change: p.passwordMustChange,
  };
}

async function readPasswordFromStdin(): Promise<string> {
  if (process.stdin.isTTY)
    throw new UsageError(
      "--password-stdin reads a pipe: printf '%s' \"$PASSWORD\" | npm run -s verity -- users create …",
    );
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  // The first line: `echo` and here-strings end it with a newline that is not part of the password.
  return text.split(/\r?\n/)[0] ?? "";
}
