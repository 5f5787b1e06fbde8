import NextAuth from "next-auth";
import { getAuthOptions } from "@/lib/adapters/auth/next-auth-options";

type Context = { params: Promise<{ nextauth: string[] }> };

// The options are built per call (cached after the first) so that nothing
// reads the auth secret while `next build` evaluates this module.
function handler(request: Request, context: Context): Promise<Response> {
  return NextAuth(request as never, context as never, getAuthOptions()) as Promise<Response>;
}

export { handler as GET, handler as POST };
